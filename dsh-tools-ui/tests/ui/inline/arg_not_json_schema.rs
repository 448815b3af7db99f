// an inline argument whose type is not `JsonSchema` is one error at the type
use dsh_tools::{tool, ToolError};
use serde::Deserialize;

#[derive(Deserialize)]
struct Opaque;

/// Uses.
#[tool]
async fn consume(
    /// the thing
    thing: Opaque,
) -> Result<String, ToolError> {
    let _ = thing;
    Ok(String::new())
}

fn main() {}

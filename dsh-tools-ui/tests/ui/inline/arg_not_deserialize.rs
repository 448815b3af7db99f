// an inline argument whose type is not `Deserialize` is an error at the type
use dsh_tools::{tool, ToolError};
use schemars::JsonSchema;

#[derive(JsonSchema)]
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

// in the inline form an `impl Trait` argument is an error
use dsh_tools::{tool, ToolError};

/// Greets.
#[tool]
async fn greet(
    /// who
    name: impl Into<String>,
) -> Result<String, ToolError> {
    Ok(name.into())
}

fn main() {}

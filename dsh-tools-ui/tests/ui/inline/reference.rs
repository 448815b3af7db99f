// in the inline form a borrowed argument is an error
use dsh_tools::{tool, ToolError};

/// Greets.
#[tool]
async fn greet(
    /// who
    name: &str,
) -> Result<String, ToolError> {
    Ok(format!("hello {name}"))
}

fn main() {}

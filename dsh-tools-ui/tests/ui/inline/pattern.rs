// in the inline form a destructuring pattern is an error
use dsh_tools::{tool, ToolError};

/// Adds.
#[tool]
async fn add(
    /// both terms
    (a, b): (i64, i64),
) -> Result<i64, ToolError> {
    Ok(a + b)
}

fn main() {}

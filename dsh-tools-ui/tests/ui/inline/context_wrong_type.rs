// in the inline form a last undocumented parameter must be the context
use dsh_tools::{tool, ToolError};

/// Adds.
#[tool]
async fn add(
    /// first term
    a: i64,
    b: i64,
) -> Result<i64, ToolError> {
    Ok(a + b)
}

fn main() {}

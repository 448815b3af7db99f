// in the inline form an undocumented parameter before the last is an error
use dsh_tools::{tool, ToolError};

/// Adds.
#[tool]
async fn add(
    /// first term
    a: i64,
    b: i64,
    /// third term
    c: i64,
) -> Result<i64, ToolError> {
    Ok(a + b + c)
}

fn main() {}

// the state parameter comes first
use dsh_tools::{tool, State, ToolError};

#[derive(Clone)]
struct Db;

/// Adds.
#[tool]
async fn add(
    /// a term
    a: i64,
    State(_db): State<Db>,
) -> Result<i64, ToolError> {
    Ok(a)
}

fn main() {}

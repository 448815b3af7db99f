// a generic function is rejected: schemas need concrete types
use dsh_tools::{tool, ToolError};

/// Reads.
#[tool]
async fn read<T: Default>() -> Result<String, ToolError> {
    let _ = T::default();
    Ok(String::new())
}

fn main() {}

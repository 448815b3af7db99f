// a grace period needs a timeout to follow
use dsh_tools::{tool, ToolError};

/// Reads.
#[tool(timeout_grace_ms = 100)]
async fn read() -> Result<String, ToolError> {
    Ok(String::new())
}

fn main() {}

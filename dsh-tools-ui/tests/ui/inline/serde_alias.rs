// a serde alias on an inline argument is dead: refused when the macro expands
use dsh_tools::{tool, ToolError};

/// Reads.
#[tool]
async fn read(
    /// The path
    #[serde(default, alias = "file")]
    path: String,
) -> Result<String, ToolError> {
    Ok(path)
}

fn main() {}

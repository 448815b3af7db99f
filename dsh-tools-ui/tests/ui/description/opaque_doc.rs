// a doc attribute that is not a string literal cannot be the description: the error says so
use dsh_tools::{tool, ToolError};

#[doc = concat!("Reads", " a file.")]
#[tool]
async fn read(
    /// the path
    path: String,
) -> Result<String, ToolError> {
    Ok(path)
}

fn main() {}

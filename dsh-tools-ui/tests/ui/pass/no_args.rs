// a function without parameters is a tool without arguments
use dsh_tools::{tool, Tool, ToolError};

/// The current answer.
#[tool]
async fn answer() -> Result<u32, ToolError> {
    Ok(42)
}

fn main() {
    let parameters = Answer.definition().parameters().clone();
    assert_eq!(parameters["type"], "object");
}

// `run_code` is the Code Mode transport's name: the registry would refuse it
use dsh_tools::{tool, ToolError};

/// Runs code.
#[tool]
async fn run_code() -> Result<String, ToolError> {
    Ok(String::new())
}

/// Also runs code.
#[tool(name = "run_code")]
async fn execute() -> Result<String, ToolError> {
    Ok(String::new())
}

fn main() {}

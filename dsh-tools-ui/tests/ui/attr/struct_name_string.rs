// `struct_name` takes a type name, not a string
use dsh_tools::{tool, ToolError};

/// Pings.
#[tool(struct_name = "PingTool")]
async fn ping() -> Result<String, ToolError> {
    Ok("pong".into())
}

fn main() {}

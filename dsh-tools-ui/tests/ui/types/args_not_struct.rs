// a context-only function is an error: the first parameter is the arguments
use dsh_tools::{tool, ToolError, ToolRunContext};
use schemars::JsonSchema;
use serde::Deserialize;

#[derive(Deserialize, JsonSchema)]
struct Args {
    /// A path
    path: String,
}

/// Reads a file.
#[tool]
async fn read(ctx: ToolRunContext) -> Result<String, ToolError> {
    let _ = ctx;
    Ok(String::new())
}

fn main() {}

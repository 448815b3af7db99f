// `description` takes a string literal
use dsh_tools::{tool, ToolError, ToolRunContext};
use schemars::JsonSchema;
use serde::Deserialize;

#[derive(Deserialize, JsonSchema)]
struct Args {
    /// A path
    path: String,
}

/// Reads a file.
#[tool(description = 5)]
async fn read(args: Args, _ctx: ToolRunContext) -> Result<String, ToolError> {
    Ok(args.path)
}

fn main() {}

// `present_result` names a function; a closure is an error
use dsh_tools::{tool, ToolError, ToolRunContext};
use schemars::JsonSchema;
use serde::Deserialize;

#[derive(Deserialize, JsonSchema)]
struct Args {
    /// A path
    path: String,
}

/// Reads a file.
#[tool(present_result = |_, _| None)]
async fn read(args: Args, _ctx: ToolRunContext) -> Result<String, ToolError> {
    Ok(args.path)
}

fn main() {}

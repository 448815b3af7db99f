// `task` names one of the three supports
use dsh_tools::{tool, ToolError, ToolRunContext};
use schemars::JsonSchema;
use serde::Deserialize;

#[derive(Deserialize, JsonSchema)]
struct Args {
    /// A path
    path: String,
}

/// Builds.
#[tool(task = "sometimes")]
async fn build(args: Args, _ctx: ToolRunContext) -> Result<String, ToolError> {
    Ok(args.path)
}

fn main() {}

// a classifier that does not exist is an error at its path
use dsh_tools::{tool, ToolError, ToolRunContext};
use schemars::JsonSchema;
use serde::Deserialize;

#[derive(Deserialize, JsonSchema)]
struct Args {
    /// A path
    path: String,
}

/// Reads a file.
#[tool(concurrency_safe = no_such_classifier)]
async fn read(args: Args, _ctx: ToolRunContext) -> Result<String, ToolError> {
    Ok(args.path)
}

fn main() {}

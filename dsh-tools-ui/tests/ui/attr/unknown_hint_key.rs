// a misspelt hint key suggests the nearest key, `read_only`
use dsh_tools::{tool, ToolError, ToolRunContext};
use schemars::JsonSchema;
use serde::Deserialize;

#[derive(Deserialize, JsonSchema)]
struct Args {
    /// A path
    path: String,
}

/// Reads a file.
#[tool(readonly)]
async fn read(args: Args, _ctx: ToolRunContext) -> Result<String, ToolError> {
    Ok(args.path)
}

fn main() {}

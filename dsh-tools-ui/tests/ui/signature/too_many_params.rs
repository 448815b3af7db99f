// three undocumented parameters are an error on the extra one
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
async fn read(args: Args, _ctx: ToolRunContext, extra: u8) -> Result<String, ToolError> {
    let _ = extra;
    Ok(args.path)
}

fn main() {}

// every mistake in one function is reported in one compile
use dsh_tools::{tool, ToolError, ToolRunContext};
use schemars::JsonSchema;
use serde::Deserialize;

#[derive(Deserialize, JsonSchema)]
struct Args {
    /// A path
    path: String,
}

#[tool(timeout = 5, name = "a b", name = "c", timeout_ms = 0)]
fn read(args: Args, _ctx: ToolRunContext, extra: u8) -> Result<String, ToolError> {
    let _ = extra;
    Ok(args.path)
}

fn main() {}

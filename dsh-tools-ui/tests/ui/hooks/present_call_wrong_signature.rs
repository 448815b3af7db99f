// a call presenter with the wrong signature is an error at its path
use dsh_tools::{tool, ToolError};
use schemars::JsonSchema;
use serde::Deserialize;

#[derive(Deserialize, JsonSchema)]
struct Args {
    /// A path
    path: String,
}

fn present(_: &serde_json::Value) -> bool {
    true
}

/// Reads.
#[tool(present_call = present)]
async fn read(args: Args) -> Result<String, ToolError> {
    Ok(args.path)
}

fn main() {}

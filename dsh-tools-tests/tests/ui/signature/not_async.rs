// a sync function is rejected: a tool body is `async`
use dsh_tools::{tool, ToolError};
use schemars::JsonSchema;
use serde::Deserialize;

#[derive(Deserialize, JsonSchema)]
struct Args {
    /// A path
    path: String,
}

/// Reads a file.
#[tool]
fn read(args: Args) -> Result<String, ToolError> {
    Ok(args.path)
}

fn main() {}

// an `unsafe fn` is rejected
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
async unsafe fn read(args: Args) -> Result<String, ToolError> {
    Ok(args.path)
}

fn main() {}

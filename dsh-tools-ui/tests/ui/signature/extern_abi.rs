// an `extern` function is rejected
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
async extern "C" fn read(args: Args) -> Result<String, ToolError> {
    Ok(args.path)
}

fn main() {}

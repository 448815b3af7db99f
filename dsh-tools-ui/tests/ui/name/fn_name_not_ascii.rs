// a default name from a non-ASCII function name is rejected
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
async fn lecture_données(args: Args) -> Result<String, ToolError> {
    Ok(args.path)
}

fn main() {}

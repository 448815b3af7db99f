// a second parameter that is not the context is an error at its type
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
async fn read(args: Args, count: u32) -> Result<String, ToolError> {
    let _ = count;
    Ok(args.path)
}

fn main() {}

// a finalizer with the wrong signature is an error at its path
use dsh_tools::{tool, ToolError};
use schemars::JsonSchema;
use serde::Deserialize;

#[derive(Deserialize, JsonSchema)]
struct Args {
    /// A path
    path: String,
}

fn finalize() {}

/// Reads.
#[tool(finalize_content = finalize)]
async fn read(args: Args) -> Result<String, ToolError> {
    Ok(args.path)
}

fn main() {}

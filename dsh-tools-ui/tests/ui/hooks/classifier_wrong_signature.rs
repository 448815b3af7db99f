// a classifier with the wrong signature is an error at its path
use dsh_tools::{tool, ToolError};
use schemars::JsonSchema;
use serde::Deserialize;

#[derive(Deserialize, JsonSchema)]
struct Args {
    /// A path
    path: String,
}

fn classify(_: &str) -> bool {
    true
}

/// Reads.
#[tool(concurrency_safe = classify)]
async fn read(args: Args) -> Result<String, ToolError> {
    Ok(args.path)
}

fn main() {}

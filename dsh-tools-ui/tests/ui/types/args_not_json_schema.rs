// an arguments type without `JsonSchema` is an error at the type
use dsh_tools::{tool, ToolError};
use serde::Deserialize;

#[derive(Deserialize)]
struct Args {
    path: String,
}

/// Reads.
#[tool]
async fn read(args: Args) -> Result<String, ToolError> {
    Ok(args.path)
}

fn main() {}

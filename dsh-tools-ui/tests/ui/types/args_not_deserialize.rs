// an arguments type without `Deserialize` is an error at the type
use dsh_tools::{tool, ToolError};
use schemars::JsonSchema;

#[derive(JsonSchema)]
struct Args {
    path: String,
}

/// Reads.
#[tool]
async fn read(args: Args) -> Result<String, ToolError> {
    Ok(args.path)
}

fn main() {}

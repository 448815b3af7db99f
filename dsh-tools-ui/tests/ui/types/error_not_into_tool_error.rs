// an error type without `Into<ToolError>` is an error at the return type
use dsh_tools::tool;
use schemars::JsonSchema;
use serde::Deserialize;

#[derive(Deserialize, JsonSchema)]
struct Args {
    /// A path
    path: String,
}

struct MyError;

/// Reads.
#[tool]
async fn read(args: Args) -> Result<String, MyError> {
    Ok(args.path)
}

fn main() {}

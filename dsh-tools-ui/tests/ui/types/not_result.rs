// a return type that is not `Result` is an error at the return type
use dsh_tools::tool;
use schemars::JsonSchema;
use serde::Deserialize;

#[derive(Deserialize, JsonSchema)]
struct Args {
    /// A path
    path: String,
}

/// Reads a file.
#[tool]
async fn read(args: Args) -> String {
    args.path
}

fn main() {}

// a function without a return type is rejected
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
async fn read(args: Args) {
    let _ = args;
}

fn main() {}

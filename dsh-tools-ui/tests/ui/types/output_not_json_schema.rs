// an output type without `JsonSchema` is an error at the return type
use dsh_tools::{tool, ToolError};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[derive(Deserialize, JsonSchema)]
struct Args {
    /// A path
    path: String,
}

#[derive(Serialize)]
struct Out {
    text: String,
}

/// Reads.
#[tool]
async fn read(args: Args) -> Result<Out, ToolError> {
    Ok(Out { text: args.path })
}

fn main() {}

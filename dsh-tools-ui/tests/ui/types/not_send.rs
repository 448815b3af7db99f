// a body whose future is not `Send` is an error at the function
use dsh_tools::{tool, ToolError};
use schemars::JsonSchema;
use serde::Deserialize;

#[derive(Deserialize, JsonSchema)]
struct Args {
    /// A path
    path: String,
}

/// Reads.
#[tool]
async fn read(args: Args) -> Result<String, ToolError> {
    let shared = std::rc::Rc::new(args.path);
    tokio::task::yield_now().await;
    Ok((*shared).clone())
}

fn main() {}

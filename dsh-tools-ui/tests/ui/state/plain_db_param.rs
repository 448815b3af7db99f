// host state passed as a plain parameter: the message names `State(db): State<Db>`
use dsh_tools::{tool, ToolError};
use schemars::JsonSchema;
use serde::Deserialize;

#[derive(Deserialize, JsonSchema)]
struct Args {
    /// The key
    key: String,
}

struct Db;

/// Looks a key up.
#[tool]
async fn lookup(args: Args, db: Db) -> Result<String, ToolError> {
    let _ = db;
    Ok(args.key)
}

fn main() {}

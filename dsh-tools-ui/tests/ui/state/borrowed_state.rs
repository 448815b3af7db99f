// state cannot borrow: the message names `State<Arc<T>>`
use dsh_tools::{tool, State, ToolError};

struct Db;

/// Pings.
#[tool]
async fn ping(State(_db): State<&Db>) -> Result<String, ToolError> {
    Ok("pong".into())
}

fn main() {}

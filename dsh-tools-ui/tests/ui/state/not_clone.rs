// each call gets a clone of the state: it must be `Clone`
use dsh_tools::{tool, State, ToolError};

struct Db;

/// Pings the database.
#[tool]
async fn ping(State(_db): State<Db>) -> Result<String, ToolError> {
    Ok("pong".into())
}

fn main() {}

// a tool with state has no unit value: registering it without its state does not compile
use dsh_tools::{tool, Registry, State, ToolError};

#[derive(Clone)]
struct Db;

/// Pings the database.
#[tool]
async fn ping(State(_db): State<Db>) -> Result<String, ToolError> {
    Ok("pong".into())
}

fn main() {
    let registry = Registry::new();
    registry.register(Ping).unwrap().keep();
}

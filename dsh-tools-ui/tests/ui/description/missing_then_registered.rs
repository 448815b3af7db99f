// a mistake in `#[tool]` is one error: the tool's type is still declared, so registering it (or
// building its definition) does not add "cannot find value `ReadFile`" errors
use dsh_tools::{tool, Registry, Tool, ToolError};
use schemars::JsonSchema;
use serde::Deserialize;

#[derive(Deserialize, JsonSchema)]
struct Args {
    /// A path
    path: String,
}

#[tool]
async fn read_file(args: Args) -> Result<String, ToolError> {
    Ok(args.path)
}

fn main() {
    let registry = Registry::new();
    registry.register(ReadFile).unwrap().keep();
    registry.scope("agent").register_tool(ReadFile).unwrap().keep();
    let _definition = ReadFile.definition();
    let _still_callable = read_file(Args { path: String::new() });
}

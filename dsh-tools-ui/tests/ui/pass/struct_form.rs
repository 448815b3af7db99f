// the struct form: an arguments struct, the context, timeout and concurrency keys
use dsh_tools::{tool, Registry, Tool, ToolError, ToolRunContext};
use schemars::JsonSchema;
use serde::Deserialize;
use std::time::Duration;

#[derive(Deserialize, JsonSchema)]
struct ReadFileArgs {
    /// Absolute file path
    path: String,
    /// First line to read, 1-based
    offset: Option<u64>,
    limit: Option<u64>,
}

/// Read a file from disk.
#[tool(timeout_ms = 30_000, concurrency_safe)]
async fn read_file(args: ReadFileArgs, ctx: ToolRunContext) -> Result<String, ToolError> {
    if ctx.is_cancelled() {
        return Err(ToolError::aborted());
    }
    Ok(format!("{} {:?} {:?}", args.path, args.offset, args.limit))
}

fn main() {
    let registry = Registry::new();
    registry.register(ReadFile.definition()).unwrap().keep();
    let definition = ReadFile.definition();
    assert_eq!(definition.name(), "read_file");
    assert_eq!(definition.description(), "Read a file from disk.");
    assert_eq!(definition.timeout_duration(), Some(Duration::from_secs(30)));
    assert!(definition.classifier().is_some());
}

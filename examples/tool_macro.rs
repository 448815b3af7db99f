//! `#[tool]` from the author's side: an ordinary `async fn` becomes a typed tool whose schema,
//! validator, decode and output declaration come from its Rust types.
//!
//! Run it with `cargo run --example tool_macro`.

use dsh_tools::{ToolError, ToolRunContext, tool};
use schemars::JsonSchema;
use serde::Deserialize;

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
    let path = args.path.clone();
    let read = tokio::task::spawn_blocking(move || std::fs::read_to_string(path));
    let text = tokio::select! {
        text = read => text.map_err(|e| ToolError::new(e.to_string()))??,
        () = ctx.signal().cancelled() => return Err(ToolError::aborted()),
    };
    let offset = args.offset.unwrap_or(1).max(1) as usize - 1;
    let limit = args.limit.map_or(usize::MAX, |l| l as usize);
    Ok(text
        .lines()
        .skip(offset)
        .take(limit)
        .collect::<Vec<_>>()
        .join("\n"))
}

/// Add two numbers.
#[tool]
async fn add(
    /// first term
    a: i64,
    /// second term
    b: i64,
) -> Result<i64, ToolError> {
    Ok(a + b)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    use dsh_tools::{CancellationToken, Registry, Tool, ToolExecutionInput};
    use serde_json::json;

    let registry = Registry::new();
    registry.register(ReadFile)?; // the generated type is the fn name in UpperCamelCase
    registry.register(Add)?;

    println!(
        "{}",
        serde_json::to_string_pretty(&ReadFile.definition().parameters())?
    );
    println!(
        "{}",
        serde_json::to_string_pretty(&Add.definition().parameters())?
    );

    let runtime = tokio::runtime::Runtime::new()?;
    let path = std::env::temp_dir().join("dsh_tools_tool_macro.txt");
    std::fs::write(&path, "one\ntwo\nthree\n")?;
    let calls = [
        ("read_file", json!({"path": path, "offset": 2, "limit": 1})),
        ("add", json!({"a": 2, "b": 3})),
        ("add", json!({"a": "2", "c": 1})),
    ];
    for (i, (name, args)) in calls.into_iter().enumerate() {
        let call =
            ToolExecutionInput::new(format!("call_{i}"), name, args, CancellationToken::new());
        let result = runtime.block_on(registry.execute(call));
        println!("{name}: {}", result.text());
    }
    // The function stays callable as written.
    assert_eq!(runtime.block_on(add(1, 2))?, 3);
    Ok(())
}

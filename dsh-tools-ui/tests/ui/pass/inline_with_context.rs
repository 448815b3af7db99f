// in the inline form a last undocumented parameter is the context; `Option` arguments are optional
use dsh_tools::{tool, Tool, ToolError, ToolRunContext};

/// Repeats a word.
#[tool(concurrency_safe)]
async fn repeat(
    /// the word
    word: String,
    /// how often (default 2)
    times: Option<usize>,
    ctx: ToolRunContext,
) -> Result<String, ToolError> {
    let _ = ctx.execution().call_id();
    Ok(word.repeat(times.unwrap_or(2)))
}

fn main() {
    let definition = Repeat.definition();
    assert_eq!(definition.parameters()["required"], serde_json::json!(["word"]));
}

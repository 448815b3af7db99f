// every key at once, the behaviour hints both as bare flags and as `= bool`
use dsh_tools::present::{ResultSummary, ToolCallView, ToolResultView};
use dsh_tools::{
    tool, ContentBlock, Tool, ToolError, ToolExecution, ToolExecutionResult, ToolHints,
    text_content,
};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

#[derive(Deserialize, JsonSchema)]
struct Args {
    /// The command
    command: String,
}

fn read_only(args: &Args) -> bool {
    args.command.starts_with("ls")
}

fn render(_args: &Value, value: &Value) -> Vec<ContentBlock> {
    text_content(format!("ran: {value}"))
}

fn present_call(_args: &Value) -> Option<ToolCallView> {
    None
}

fn present_result(_args: &Value, _result: &ResultSummary) -> Option<ToolResultView> {
    None
}

fn finalize(_exec: &ToolExecution, _result: &ToolExecutionResult) -> Option<Vec<ContentBlock>> {
    None
}

/// Not this description.
#[tool(
    name = "shell-run",
    title = "Run a shell command",
    description = "Runs a shell command.",
    timeout_ms = 1,
    concurrency_safe = read_only,
    read_only = false,
    destructive,
    idempotent = false,
    open_world,
    render = render,
    present_call = present_call,
    present_result = present_result,
    finalize_content = finalize,
)]
async fn run(args: Args) -> Result<String, ToolError> {
    Ok(args.command)
}

fn main() {
    let definition = Run.definition();
    assert_eq!(definition.name(), "shell-run");
    assert_eq!(definition.description(), "Runs a shell command.");
    assert_eq!(definition.tool_title(), Some("Run a shell command"));
    assert_eq!(
        definition.tool_hints(),
        ToolHints::new()
            .read_only(false)
            .destructive(true)
            .idempotent(false)
            .open_world(true)
    );
    let classify = definition.classifier().unwrap();
    assert!(classify(&serde_json::json!({"command": "ls -l"})));
    assert!(!classify(&serde_json::json!({"command": "rm -rf /"})));
    assert!(!classify(&serde_json::json!({"cmd": "ls"})));
    assert!(definition.call_presenter().is_some());
    assert!(definition.result_presenter().is_some());
}

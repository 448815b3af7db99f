// an inline tool's classifier names the generated arguments as `<Tool as dsh_tools::Tool>::Args`
use dsh_tools::{tool, Tool, ToolError};

fn small(args: &<Scale as Tool>::Args) -> bool {
    args.factor < 10
}

/// Scales.
#[tool(concurrency_safe = small)]
async fn scale(
    /// the factor
    factor: u32,
) -> Result<u32, ToolError> {
    Ok(factor * 2)
}

fn main() {
    let classify = Scale.definition().classifier().cloned().unwrap();
    assert!(classify(&serde_json::json!({"factor": 3})));
    assert!(!classify(&serde_json::json!({"factor": 30})));
    assert!(!classify(&serde_json::json!({"factor": "3"})));
}

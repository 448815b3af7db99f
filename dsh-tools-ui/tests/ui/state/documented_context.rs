// a doc comment on the context: one error saying the context is never documented
use dsh_tools::{tool, ToolError, ToolRunContext};

/// Reads.
#[tool]
async fn read(
    /// The path
    path: String,
    /// The context
    ctx: ToolRunContext,
) -> Result<String, ToolError> {
    let _ = ctx;
    Ok(path)
}

fn main() {}

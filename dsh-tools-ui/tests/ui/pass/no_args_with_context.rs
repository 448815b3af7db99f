// a tool without arguments takes `NoArgs` to get its context
use dsh_tools::{tool, NoArgs, Tool, ToolError, ToolRunContext};

/// Whether the call was cancelled.
#[tool]
async fn cancelled(_: NoArgs, ctx: ToolRunContext) -> Result<bool, ToolError> {
    Ok(ctx.is_cancelled())
}

fn main() {
    assert!(Cancelled.try_definition().is_ok());
}

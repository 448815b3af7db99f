// `crate = path` lets a crate that re-exports dsh_tools use the macro through its path (hints too)
mod my_framework {
    pub use dsh_tools;
}

use my_framework::dsh_tools::{tool, Tool, ToolError, ToolHints};

/// Echoes.
#[tool(crate = my_framework::dsh_tools, title = "Echo", read_only)]
async fn echo(
    /// the text
    text: String,
) -> Result<String, ToolError> {
    Ok(text)
}

fn main() {
    let definition = Echo.definition();
    assert_eq!(definition.name(), "echo");
    assert_eq!(definition.tool_title(), Some("Echo"));
    assert_eq!(definition.tool_hints(), ToolHints::new().read_only(true));
}

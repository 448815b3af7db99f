// `crate = path` lets a crate that re-exports dsh_tools use the macro through its own path
mod my_framework {
    pub use dsh_tools;
}

use my_framework::dsh_tools::{tool, Tool, ToolError};

/// Echoes.
#[tool(crate = my_framework::dsh_tools)]
async fn echo(
    /// the text
    text: String,
) -> Result<String, ToolError> {
    Ok(text)
}

fn main() {
    assert_eq!(Echo.definition().name(), "echo");
}

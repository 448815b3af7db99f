// several tools in one module, with the same parameter names, do not collide
use dsh_tools::{tool, ToolError};

/// One.
#[tool]
async fn one(
    /// x
    x: u8,
) -> Result<u8, ToolError> {
    Ok(x)
}

/// Two.
#[tool]
async fn two(
    /// x
    x: u8,
) -> Result<u8, ToolError> {
    Ok(x * 2)
}

fn main() {
    let registry = dsh_tools::Registry::new();
    registry.register(One).unwrap().keep();
    registry.register(Two).unwrap().keep();
}

// the inline form: documented parameters become the arguments
use dsh_tools::{tool, Registry, ToolError};

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

fn main() {
    let registry = Registry::new();
    registry.register(Add).unwrap().keep();
    let _still_callable = add(1, 2);
}

// a tool defined inside a function body works like one at module level
use dsh_tools::{Registry, ToolError, tool};

fn main() {
    /// Doubles.
    #[tool(name = "double")]
    async fn twice(
        /// the number
        n: i32,
    ) -> Result<i32, ToolError> {
        Ok(n * 2)
    }

    let registry = Registry::new();
    registry.register_tool(Twice).unwrap().keep();
}

// public tools in a module with `missing_docs` denied, used and registered from outside
#![deny(missing_docs)]
//! A crate of tools.

/// Tools.
pub mod tools {
    use dsh_tools::{tool, ToolError};

    /// Adds.
    #[tool]
    pub async fn add(
        /// first term
        a: i64,
        /// second term
        b: i64,
    ) -> Result<i64, ToolError> {
        Ok(a + b)
    }

    /// Arguments of `neg`.
    #[derive(serde::Deserialize, schemars::JsonSchema)]
    pub struct NegArgs {
        /// the number
        pub n: i64,
    }

    /// Negates.
    #[tool]
    pub async fn neg(args: NegArgs) -> Result<i64, ToolError> {
        Ok(-args.n)
    }
}

fn main() {
    let registry = dsh_tools::Registry::new();
    registry.register_tool(tools::Add).unwrap().keep();
    registry.register_tool(tools::Neg).unwrap().keep();
    registry.scope("agent").register_tool(tools::Add).unwrap().keep();
}

// `#[tool]`'s generated code is spanned at the author's tokens (so incremental builds reuse it);
// rustc lints it like the author's own code, so it must pass the strict ones too. Every form:
// inline with and without a context, struct form, keys, state.
#![deny(
    warnings,
    missing_docs,
    unreachable_pub,
    unused_qualifications,
    unused_results,
    unused_lifetimes,
    single_use_lifetimes,
    let_underscore_drop,
    trivial_casts,
    trivial_numeric_casts,
    unused_import_braces,
    elided_lifetimes_in_paths,
    missing_debug_implementations,
    variant_size_differences
)]
//! Tools under strict lints.

use dsh_tools::{State, ToolError, ToolRunContext, tool};
use std::sync::Arc;

/// Adds.
#[tool(timeout_ms = 50, concurrency_safe)]
async fn add(
    /// first term
    a: f64,
    /// second term
    b: f64,
) -> Result<f64, ToolError> {
    Ok(a + b)
}

/// Reports the call id.
#[tool]
pub(crate) async fn call_id(
    /// ignored
    _x: Option<u8>,
    ctx: ToolRunContext,
) -> Result<String, ToolError> {
    Ok(ctx.execution().call_id().to_owned())
}

/// Arguments of `neg`.
#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
pub struct NegArgs {
    /// the number
    pub n: i64,
}

/// Negates.
#[tool(name = "negate")]
pub async fn neg(args: NegArgs) -> Result<i64, ToolError> {
    Ok(-args.n)
}

/// Counts with host state.
#[tool]
async fn count(
    State(start): State<Arc<u64>>,
    /// how many
    n: u64,
) -> Result<u64, ToolError> {
    Ok(*start + n)
}

fn main() {
    let registry = dsh_tools::Registry::new();
    registry.register_tool(Add).unwrap().keep();
    registry.register_tool(CallId).unwrap().keep();
    registry.register_tool(Neg).unwrap().keep();
    registry
        .register_tool(Count::with(Arc::new(1)))
        .unwrap()
        .keep();
}

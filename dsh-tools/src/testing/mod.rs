//! Helpers for tool authors' own tests: [`call`] a tool without a registry (or a [`Harness`] with
//! the tools it calls and its progress), an in-memory MCP round trip (`McpRoundTrip`, feature
//! `mcp`), check a type's
//! schema is portable ([`assert_portable`]) and, with feature `proptest`, fuzz a tool from its own
//! schema (`fuzz_tool`); a code runtime without an engine ([`FakeRuntime`]).

mod fake_runtime;
#[cfg(feature = "proptest")]
mod fuzz;
#[cfg(feature = "proptest")]
mod generate;
mod harness;
#[cfg(feature = "mcp")]
mod mcp;
pub use fake_runtime::{FAKE_BACKEND, FakeOutcome, FakeRun, FakeRuntime};
#[cfg(feature = "proptest")]
pub use fuzz::{
    FuzzConfig, FuzzFailure, FuzzReport, MAX_FUZZ_SCHEMA_DEPTH, MAX_FUZZ_VALUES, fuzz_tool,
    fuzz_tool_around,
};
pub use harness::Harness;
#[cfg(feature = "mcp")]
pub use mcp::McpRoundTrip;

use crate::provider::{Dialect, lint};
use crate::schema::bridge;

/// Panics, listing every issue per dialect and path, unless `Args`' parameters schema exports
/// to each of `dialects` without losing anything (no error, nothing moved into a description,
/// loosened or dropped; see [`provider::lint`](crate::provider::lint)).
///
/// ```
/// use dsh_tools::provider::{Dialect, Provider};
/// use dsh_tools::testing::assert_portable;
///
/// #[derive(serde::Deserialize, schemars::JsonSchema)]
/// struct ReadArgs {
///     /// File path
///     path: String,
///     /// First line, 1-based
///     offset: Option<u32>,
/// }
///
/// assert_portable::<ReadArgs>(&[
///     Dialect::new(Provider::OpenAiChat),
///     Dialect::new(Provider::Anthropic),
///     Dialect::new(Provider::Gemini),
/// ]);
/// ```
///
/// ```should_panic
/// # use dsh_tools::provider::{Dialect, Provider};
/// # use dsh_tools::testing::assert_portable;
/// #[derive(serde::Deserialize, schemars::JsonSchema)]
/// struct Env {
///     vars: std::collections::HashMap<String, String>,
/// }
/// // A map cannot be expressed in OpenAI's strict mode.
/// assert_portable::<Env>(&[Dialect::strict(Provider::OpenAiChat)]);
/// ```
#[track_caller]
pub fn assert_portable<Args: schemars::JsonSchema>(dialects: &[Dialect]) {
    let schema = match bridge::schema_for::<Args>() {
        Ok(schema) => schema,
        Err(e) => panic!(
            "`{}` has no schema in the subset: {e}",
            std::any::type_name::<Args>()
        ),
    };
    let mut report = Vec::new();
    for &dialect in dialects {
        for issue in lint(&schema, dialect) {
            report.push(format!("{dialect}: {}: {}", issue.path, issue.message));
        }
    }
    assert!(
        report.is_empty(),
        "`{}` is not portable:\n{}",
        std::any::type_name::<Args>(),
        report.join("\n")
    );
}

/// Runs `tool` once with `arguments`, as the registry would (validation, decode, body, output
/// check, rendering), without a registry of yours: the result the model would read.
///
/// ```
/// use dsh_tools::{tool, testing, ToolError};
/// use serde_json::json;
///
/// /// Adds two numbers.
/// #[tool]
/// async fn add(
///     /// a term
///     a: i64,
///     /// another
///     b: i64,
/// ) -> Result<i64, ToolError> {
///     Ok(a + b)
/// }
///
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// assert_eq!(testing::call(Add, json!({"a": 2, "b": 3})).await.text(), "5");
/// let bad = testing::call(Add, json!({"a": 2})).await;
/// assert_eq!(bad.code(), Some("INVALID_ARGS"));
/// # });
/// ```
pub async fn call(
    tool: impl Into<crate::ToolDefinition>,
    arguments: serde_json::Value,
) -> crate::ToolExecutionResult {
    let definition = tool.into();
    let name = definition.name().to_owned();
    let registry = crate::Registry::new();
    if let Err(e) = registry.register(definition) {
        return crate::ToolExecutionResult::failure(crate::ToolError::new(e.to_string()));
    }
    let input = crate::ToolExecutionInput::new(
        "test_call",
        name,
        arguments,
        crate::CancellationToken::new(),
    );
    registry.execute(input).await
}

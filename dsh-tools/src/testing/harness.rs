//! [`Harness`]: a tool under test with the other tools it calls, and its progress reports.

use crate::pipeline::{Progress, ProgressSink};
use crate::registry::RegistrationError;
use crate::{CancellationToken, Registry, ToolDefinition, ToolExecutionInput, ToolExecutionResult};
use std::sync::{Arc, Mutex, PoisonError};

/// A registry of the tools a test needs, calling them as the pipeline does and keeping every
/// progress report. For a tool that calls others (`ctx.nested(..)` through `ctx.registry()`),
/// register those too; [`call`](super::call) is the one-tool shorthand.
///
/// ```
/// use dsh_tools::testing::Harness;
/// use dsh_tools::{ToolError, ToolRunContext, tool};
/// use serde_json::json;
///
/// /// Doubles a number.
/// #[tool]
/// async fn double(/** The number */ n: i64) -> Result<i64, ToolError> {
///     Ok(n * 2)
/// }
///
/// /// Quadruples a number by asking `double` twice.
/// #[tool]
/// async fn quadruple(/** The number */ n: i64, ctx: ToolRunContext) -> Result<i64, ToolError> {
///     ctx.report_progress(1.0, Some(2.0), Some("halfway"));
///     let once = ctx.registry().execute(ctx.nested("d1", "double", json!({"n": n}))).await;
///     let once = once.value().and_then(|v| v.as_i64()).ok_or("double failed")?;
///     let twice = ctx.registry().execute(ctx.nested("d2", "double", json!({"n": once}))).await;
///     twice.value().and_then(|v| v.as_i64()).ok_or_else(|| "double failed".into())
/// }
///
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let harness = Harness::new(Quadruple)?.with(Double)?;
/// assert_eq!(harness.call("quadruple", json!({"n": 3})).await.text(), "12");
/// assert_eq!(harness.progress()[0].message.as_deref(), Some("halfway"));
/// # Ok::<(), dsh_tools::registry::RegistrationError>(())
/// # }).unwrap();
/// ```
#[derive(Clone, Debug)]
pub struct Harness {
    registry: Registry,
    progress: Arc<Mutex<Vec<Progress>>>,
}

impl Harness {
    /// A harness holding `tool`.
    pub fn new(tool: impl Into<ToolDefinition>) -> Result<Self, RegistrationError> {
        let harness = Self {
            registry: Registry::new(),
            progress: Arc::default(),
        };
        harness.with(tool)
    }

    /// The same harness with one more tool (one the tool under test calls).
    pub fn with(self, tool: impl Into<ToolDefinition>) -> Result<Self, RegistrationError> {
        self.registry.register(tool)?;
        Ok(self)
    }

    /// The registry, for hooks, guards or scopes a test adds.
    pub fn registry(&self) -> &Registry {
        &self.registry
    }

    /// Calls `name` with `arguments` through the whole pipeline, its progress reports kept.
    pub async fn call(&self, name: &str, arguments: serde_json::Value) -> ToolExecutionResult {
        let progress = Arc::clone(&self.progress);
        let sink = ProgressSink::new(move |p| {
            progress
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .push(p);
        });
        let input = ToolExecutionInput::new("test_call", name, arguments, CancellationToken::new())
            .progress(sink);
        self.registry.execute(input).await
    }

    /// Every progress report so far, of every call, in order.
    pub fn progress(&self) -> Vec<Progress> {
        self.progress
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }
}

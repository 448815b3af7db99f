//! Retries transient failures.

use crate::call::{
    BoxFuture, ExecuteCall, ExecuteNext, ExecuteWrapper, HookResult, ToolExecutionResult,
};
use crate::error::codes;
use std::sync::Arc;
use std::time::Duration;
use tracing::Instrument;

type Predicate = Arc<dyn Fn(&ToolExecutionResult) -> bool + Send + Sync>;

/// The retry wrapper: see [`retry`].
#[derive(Clone)]
pub struct Retry {
    attempts: u32,
    backoff: Duration,
    when: Predicate,
}

/// Whether a failure is worth another attempt by default: only one its tool marked so
/// ([`ToolError::transient`](crate::ToolError::transient), code `TRANSIENT`). A plain error
/// (`io::Error`, "division by zero") is final: retrying it would run the body again for the same
/// answer, or repeat a side effect. Widen it with [`Retry::when`].
pub fn is_transient(result: &ToolExecutionResult) -> bool {
    result.is_error() && result.code() == Some(codes::TRANSIENT)
}

/// A wrapper that runs the rest of the chain up to `attempts` times while the result is a
/// transient failure ([`is_transient`]: marked with `ToolError::transient`, or [`Retry::when`]), sleeping `backoff` between
/// attempts. It stops as soon as the caller cancels, returning the last result. Each attempt is
/// an `attempt {n}` span, a child of the call's, with `error.type` when it failed.
///
/// Attempts belong to one execution: contexts a failed attempt deferred and a turn conclusion
/// it marked stay with the call.
///
/// ```
/// use dsh_tools::{OutputDecl, Registry, ToolDefinition, ToolError, ToolExecutionInput, wrappers};
/// use serde_json::json;
/// use std::sync::atomic::{AtomicU32, Ordering};
/// use std::sync::Arc;
/// use tokio_util::sync::CancellationToken;
///
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let registry = Registry::new();
/// registry.on_execute(wrappers::retry(3));
/// let tries = Arc::new(AtomicU32::new(0));
/// let t = tries.clone();
/// registry.register(ToolDefinition::new("flaky", "fails twice", json!({}), OutputDecl::text(), move |_, _| {
///     let n = t.fetch_add(1, Ordering::SeqCst);
///     async move { if n < 2 { Err(ToolError::transient("busy")) } else { Ok(json!("done")) } }
/// })).unwrap();
/// let result = registry.execute(ToolExecutionInput::new("c1", "flaky", json!({}), CancellationToken::new())).await;
/// assert_eq!(result.text(), "done");
/// assert_eq!(tries.load(Ordering::SeqCst), 3);
/// # });
/// ```
pub fn retry(attempts: u32) -> Retry {
    Retry {
        attempts: attempts.max(1),
        backoff: Duration::ZERO,
        when: Arc::new(is_transient),
    }
}

impl Retry {
    /// Sleeps `backoff` between attempts (doubling each time).
    pub fn backoff(mut self, backoff: Duration) -> Self {
        self.backoff = backoff;
        self
    }

    /// Retries when `predicate` says so instead of [`is_transient`].
    pub fn when(
        mut self,
        predicate: impl Fn(&ToolExecutionResult) -> bool + Send + Sync + 'static,
    ) -> Self {
        self.when = Arc::new(predicate);
        self
    }
}

impl ExecuteWrapper for Retry {
    fn execute(
        &self,
        call: ExecuteCall,
        next: ExecuteNext,
    ) -> BoxFuture<HookResult<ToolExecutionResult>> {
        let policy = self.clone();
        Box::pin(async move {
            let mut delay = policy.backoff;
            let mut attempt = 1;
            loop {
                let result = if policy.attempts > 1 {
                    let span = crate::telemetry::attempt_span(attempt);
                    let result = next.clone().run().instrument(span.clone()).await?;
                    if result.is_error() && !span.is_disabled() {
                        span.record("error.type", crate::telemetry::error_type(&result));
                    }
                    result
                } else {
                    next.clone().run().await?
                };
                let caller = call.execution.signal();
                if attempt >= policy.attempts || caller.is_cancelled() || !(policy.when)(&result) {
                    return Ok(result);
                }
                if !delay.is_zero() {
                    tokio::select! {
                        _ = tokio::time::sleep(delay) => {}
                        _ = caller.cancelled() => return Ok(result),
                    }
                    delay = delay.saturating_mul(2);
                }
                attempt += 1;
            }
        })
    }
}

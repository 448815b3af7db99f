//! Enforces each definition's declared timeout (spec §4.2.6).

use crate::call::{
    BoxFuture, ExecuteCall, ExecuteNext, ExecuteWrapper, HookResult, ToolExecutionResult,
};
use crate::error::ToolError;
use crate::registry::{Inner, Registry};
use std::future::{Future, poll_fn};
use std::pin::pin;
use std::sync::{Arc, Weak};
use std::task::Poll;
use tokio_util::sync::CancellationToken;

/// The timeout wrapper: see [`timeout`].
pub struct Timeouts {
    registry: Weak<Inner>,
}

/// A wrapper that enforces the `timeout` each tool declares
/// ([`ToolDefinition::timeout`](crate::ToolDefinition::timeout)).
///
/// Declared timeouts are also enforced without this wrapper, at the body (see
/// [`ToolDefinition::timeout`](crate::ToolDefinition::timeout): there, a body that ignores its
/// signal is dropped after a grace period). Install the wrapper when wrappers outside it should
/// see the timeout as the result of `next`.
///
/// When the deadline passes it cancels the body's signal (only the body's: the caller's signal
/// is untouched), waits for the body to settle, and reports
/// `TOOL_TIMEOUT` (`tool call timed out after <ms>ms`) whatever came back. Tools without a
/// timeout run unchanged.
///
/// ```
/// use dsh_tools::{OutputDecl, Registry, ToolDefinition, ToolExecutionInput, wrappers};
/// use serde_json::json;
/// use std::time::Duration;
/// use tokio_util::sync::CancellationToken;
///
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let registry = Registry::new();
/// registry.on_execute(wrappers::timeout(&registry));
/// let slow = ToolDefinition::new("slow", "sleeps", json!({"type": "object"}), OutputDecl::text(), |_, ctx| async move {
///     ctx.signal().cancelled().await; // honours cancellation
///     Ok(json!("woke up"))
/// })
/// .timeout(Duration::from_millis(20));
/// registry.register(slow).unwrap();
/// let result = registry.execute(ToolExecutionInput::new("c1", "slow", json!({}), CancellationToken::new())).await;
/// assert_eq!(result.code(), Some("TOOL_TIMEOUT"));
/// assert_eq!(result.text(), "Error: tool call timed out after 20ms");
/// # });
/// ```
pub fn timeout(registry: &Registry) -> Timeouts {
    Timeouts {
        registry: Arc::downgrade(&registry.inner),
    }
}

impl ExecuteWrapper for Timeouts {
    fn execute(
        &self,
        call: ExecuteCall,
        next: ExecuteNext,
    ) -> BoxFuture<HookResult<ToolExecutionResult>> {
        let limit = self.registry.upgrade().and_then(|inner| {
            let registry = Registry { inner };
            let tool = registry.get(call.execution.name(), call.execution.agent())?;
            tool.definition().timeout_duration()
        });
        let Some(limit) = limit else {
            return next.run();
        };
        Box::pin(async move {
            let deadline = CancellationToken::new();
            let inner = next.run_with_signal(deadline.clone());
            // A body that blocks through the deadline is reported by the dispatch's own
            // deadline (the same declared timeout), once.
            let (result, fired) = until_settled(inner, tokio::time::sleep(limit), &deadline).await;
            if fired {
                Ok(ToolExecutionResult::failure(ToolError::timeout(limit)))
            } else {
                result
            }
        })
    }
}

/// Polls `work` to completion; if `timer` fires first, cancels `deadline` and keeps polling.
/// Returns the output and whether the timer fired.
pub(crate) async fn until_settled<F: Future, T: Future>(
    work: F,
    timer: T,
    deadline: &CancellationToken,
) -> (F::Output, bool) {
    let mut work = pin!(work);
    let mut timer = pin!(timer);
    let mut fired = false;
    poll_fn(|cx| {
        if let Poll::Ready(out) = work.as_mut().poll(cx) {
            return Poll::Ready((out, fired));
        }
        if !fired && timer.as_mut().poll(cx).is_ready() {
            fired = true;
            deadline.cancel();
            if let Poll::Ready(out) = work.as_mut().poll(cx) {
                return Poll::Ready((out, fired));
            }
        }
        Poll::Pending
    })
    .await
}

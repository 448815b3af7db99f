//! One `tracing` span per call.

use crate::call::{
    BoxFuture, ExecuteCall, ExecuteNext, ExecuteWrapper, HookResult, ToolExecutionResult,
};
use tracing::Instrument;

/// The tracing wrapper: see [`trace`].
#[derive(Clone, Copy, Debug, Default)]
pub struct Trace;

/// A wrapper that opens one `tool_call` span per call, with the fields `tool`, `call_id`,
/// `agent`, and, once the call settles, `outcome` (`success` / `error`) and `code` (the error
/// code of a routable failure).
pub fn trace() -> Trace {
    Trace
}

impl ExecuteWrapper for Trace {
    fn execute(
        &self,
        call: ExecuteCall,
        next: ExecuteNext,
    ) -> BoxFuture<HookResult<ToolExecutionResult>> {
        let exec = &call.execution;
        let span = tracing::info_span!(
            "tool_call",
            tool = %exec.name(),
            call_id = %exec.call_id(),
            agent = exec.agent().map(|a| a.as_str()).unwrap_or(""),
            outcome = tracing::field::Empty,
            code = tracing::field::Empty,
        );
        let inner = next.run().instrument(span.clone());
        Box::pin(async move {
            let result = inner.await;
            match &result {
                Ok(r) if !r.is_error() => {
                    span.record("outcome", "success");
                }
                Ok(r) => {
                    span.record("outcome", "error");
                    span.record("code", r.code().unwrap_or(""));
                }
                Err(e) => {
                    span.record("outcome", "error");
                    span.record("code", e.code().unwrap_or(""));
                }
            }
            result
        })
    }
}

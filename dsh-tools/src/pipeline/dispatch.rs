//! Stage 2's innermost step (spec §6.5 1a–g) and success construction (§6.6).

use crate::call::{
    Outcome, ResultData, Signal, ToolExecution, ToolExecutionResult, ToolRunContext,
};
use crate::content::{ContentBlock, UserMessage};
use crate::error::ToolError;
use crate::json::is_lossless;
use crate::registry::{PresentationMode, RUN_CODE, RegisteredTool, Registry};
use crate::schema::ToolOutputError;
use futures_util::FutureExt;
use serde_json::Value;
use std::future::{Future, poll_fn};
use std::panic::AssertUnwindSafe;
use std::pin::pin;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::task::Poll;
use tokio_util::sync::CancellationToken;

/// What the core dispatch needs; shared by every `ExecuteNext` of one call.
pub(crate) struct DispatchCtx {
    pub(crate) registry: Registry,
    pub(crate) execution: Arc<ToolExecution>,
    /// What the call resolved at creation, valid while the registry's generation is unchanged.
    pub(crate) executable: Option<Arc<RegisteredTool>>,
    pub(crate) generation: u64,
}

impl crate::call::Dispatch for DispatchCtx {
    fn execution(&self) -> &Arc<ToolExecution> {
        &self.execution
    }

    fn dispatch(
        self: Arc<Self>,
        signal: CancellationToken,
        replaced: bool,
    ) -> crate::call::BoxFuture<crate::call::HookResult<ToolExecutionResult>> {
        Box::pin(async move { Ok(core_dispatch(&self, signal, replaced).await) })
    }
}

/// Resolves the tool the way execution does: scope, restrictions and the Code Mode collapse.
pub(crate) fn resolve_executable(
    registry: &Registry,
    exec: &ToolExecution,
) -> Option<Arc<RegisteredTool>> {
    resolve_call(
        registry,
        &exec.name,
        exec.agent.as_ref(),
        exec.parent.is_some(),
    )
}

/// [`resolve_executable`] for a call of `name` by `agent`, `nested` when a parent call (a
/// `run_code` program) made it: the tool it runs, if the view has it and Code Mode does not
/// collapse it.
pub(crate) fn resolve_call(
    registry: &Registry,
    name: &str,
    agent: Option<&crate::call::AgentId>,
    nested: bool,
) -> Option<Arc<RegisteredTool>> {
    let state = registry.read();
    let tool = state.resolve(name, agent)?;
    let collapsed =
        !nested && name != RUN_CODE && state.effective_mode(agent) == PresentationMode::Code;
    (!collapsed).then(|| Arc::clone(tool))
}

/// The core dispatch: never fails, returns a canonical (tagged) result.
pub(crate) async fn core_dispatch(
    ctx: &DispatchCtx,
    installed: CancellationToken,
    replaced: bool,
) -> ToolExecutionResult {
    let exec = &ctx.execution;
    let tag = |r: ToolExecutionResult| r.tagged(exec.token);
    // The fused signal fired: the caller's or the wrapper's.
    let fused_aborted = || installed.is_cancelled() || (replaced && exec.signal.is_cancelled());
    if fused_aborted() {
        return tag(ToolExecutionResult::failure(
            ToolError::aborted_before_dispatch(),
        ));
    }
    // (c) Resolve now (what creation resolved, unless the registry changed since).
    let tool = if ctx.registry.generation() == ctx.generation {
        ctx.executable.clone()
    } else {
        resolve_executable(&ctx.registry, exec)
    };
    let Some(tool) = tool else {
        return tag(ToolExecutionResult::failure(ToolError::unknown_tool(
            &exec.name,
        )));
    };
    let Some(args) = exec.arguments.clone() else {
        return tag(ToolExecutionResult::failure(ToolError::new(
            "tool execution arguments must be losslessly JSON-serializable",
        )));
    };
    // (a) The body's signal, read-only: the caller's own, or a child of the installed token
    // when a wrapper replaced it (`relay` also cancels it when the caller's fires) or when a
    // declared timeout needs a signal of its own to cancel (never the caller's).
    let body_signal = if replaced || tool.definition.timeout.is_some() {
        installed.child_token()
    } else {
        installed.clone()
    };
    // (d) Invoke and await to settlement (dropped only past a declared timeout's grace).
    exec.run.body_invoked.store(true, Ordering::Release);
    // Each invocation attaches its own blocks: a retried body's earlier ones are gone.
    drop(exec.run.take_attached());
    let run = ToolRunContext {
        execution: Arc::clone(exec),
        signal: Signal::new(body_signal.clone()),
        host: Arc::clone(&ctx.registry.inner) as Arc<dyn std::any::Any + Send + Sync>,
    };
    let body = tool.definition.execute.clone();
    let outcome = match std::panic::catch_unwind(AssertUnwindSafe(|| body(args, run))) {
        Ok(fut) => {
            let fut = AssertUnwindSafe(fut).catch_unwind();
            let fut = async {
                if replaced {
                    relay(fut, exec.signal.token(), &body_signal).await
                } else {
                    fut.await
                }
            };
            let settled = match tool.definition.timeout {
                None => fut.await,
                Some(limit) => {
                    let grace = tool.definition.timeout_grace;
                    // Boxed: only a tool with a declared timeout pays for the deadline's
                    // future (0.9 KB), not every call's.
                    match Box::pin(with_deadline(fut, &exec.name, limit, grace, &body_signal)).await
                    {
                        Some(settled) => settled,
                        // The deadline passed: whatever came back (or nothing, past the grace),
                        // with any card its output drew.
                        None => {
                            drop(exec.run.take_presentation());
                            return tag(ToolExecutionResult::failure(ToolError::timeout(limit)));
                        }
                    }
                }
            };
            settled.unwrap_or_else(|payload| Err(ToolError::from_panic_payload(payload)))
        }
        Err(payload) => Err(ToolError::from_panic_payload(payload)),
    };
    // (e)/(f) Build the success, or the failure.
    let result = match outcome {
        Ok(value) => match build_success(&tool, exec, value, None) {
            // Checked on the sources too: a body that settles in the same poll as the
            // caller's abort never let `relay` cancel `body_signal` (spec §6.5 1e).
            Ok(success) if fused_aborted() => {
                ToolExecutionResult::failure(ToolError::aborted()).with_contexts_of(&success)
            }
            Ok(success) => success,
            Err(e) => ToolExecutionResult::failure(e),
        },
        Err(e) => ToolExecutionResult::failure(e),
    };
    tag(result)
}

/// Polls `body` until it settles; if `limit` passes first, cancels `signal` and polls on for at
/// most `grace`, then drops it. `None` when the deadline passed (settled late or dropped).
///
/// A Tokio runtime without timers (built without `enable_time`) cannot keep a deadline: the
/// body is then awaited as if it declared none, with a warning, instead of panicking.
async fn with_deadline<F: Future>(
    body: F,
    name: &str,
    limit: std::time::Duration,
    grace: std::time::Duration,
    signal: &CancellationToken,
) -> Option<F::Output> {
    let mut body = pin!(body);
    let Ok(deadline) = std::panic::catch_unwind(|| tokio::time::sleep(limit)) else {
        tracing::warn!(
            "a declared tool timeout needs a Tokio runtime with timers (`enable_time`); the call \
             runs without its deadline"
        );
        return Some(body.await);
    };
    let mut deadline = pin!(deadline);
    let due = std::time::Instant::now() + limit;
    let settled = poll_fn(|cx| {
        let poll_started = std::time::Instant::now();
        if let Poll::Ready(out) = body.as_mut().poll(cx) {
            // Only a poll that began before the deadline and ended past it blocked through it
            // (a body woken late by a busy executor, or settling in the deadline's own tick,
            // did not).
            let ended = std::time::Instant::now();
            if poll_started < due && ended > due {
                crate::definition::warn_blocked_past(name, limit, ended - due);
            }
            return Poll::Ready(Some(out));
        }
        match deadline.as_mut().poll(cx) {
            Poll::Ready(()) => Poll::Ready(None),
            Poll::Pending => Poll::Pending,
        }
    })
    .await;
    if settled.is_some() {
        return settled;
    }
    signal.cancel();
    // Awaited within the grace period, dropped after it; either way a timeout.
    let _ = tokio::time::timeout(grace, body.as_mut()).await;
    None
}

/// Polls `body` to completion; when the caller cancels first, cancels `fused` too.
async fn relay<F: Future>(
    body: F,
    caller: &CancellationToken,
    fused: &CancellationToken,
) -> F::Output {
    let mut body = pin!(body);
    let mut cancelled = pin!(caller.cancelled());
    let mut relayed = false;
    poll_fn(|cx| {
        if let Poll::Ready(out) = body.as_mut().poll(cx) {
            return Poll::Ready(out);
        }
        if !relayed && cancelled.as_mut().poll(cx).is_ready() {
            relayed = true;
            fused.cancel();
            // Cancelling wakes the body's waiters; poll once more for bodies that only check.
            if let Poll::Ready(out) = body.as_mut().poll(cx) {
                return Poll::Ready(out);
            }
        }
        Poll::Pending
    })
    .await
}

fn output_error(tool: &str, violation: String) -> ToolError {
    ToolOutputError::new(tool, vec![violation]).into()
}

fn panic_text(payload: Box<dyn std::any::Any + Send>) -> String {
    ToolError::from_panic_payload(payload).message().to_owned()
}

/// Success construction (spec §6.6): lossless → output schema → render → meta (top level) →
/// turn conclusion. Every failure is `INVALID_TOOL_OUTPUT`.
///
/// A value refused here is freed without recursion: a tool's output may be external JSON of any
/// depth, and serde_json's own `Drop` recurses once per level.
pub(crate) fn build_success(
    tool: &RegisteredTool,
    exec: &ToolExecution,
    value: Value,
    contexts: Option<Vec<UserMessage>>,
) -> Result<ToolExecutionResult, ToolError> {
    match checked_parts(tool, exec, &value) {
        Ok((content, meta)) => Ok(ToolExecutionResult::from_data(
            ResultData {
                outcome: Outcome::Success {
                    value: Arc::new(value),
                    concludes_turn: exec.run.concluded(),
                },
                content,
                meta,
                contexts,
            },
            None,
        )),
        Err(e) => {
            crate::json::free(value);
            for context in contexts.into_iter().flatten() {
                crate::json::free(context.source);
            }
            Err(e)
        }
    }
}

/// [`build_success`]'s checks on a borrowed value: the rendered content and the meta.
fn checked_parts(
    tool: &RegisteredTool,
    exec: &ToolExecution,
    value: &Value,
) -> Result<(Vec<ContentBlock>, Option<Value>), ToolError> {
    let name = &tool.definition.name;
    // A typed result card computed from the body's output: taken first, so that it is gone
    // whatever happens here, and a success rebuilt later (a wrapper's, a post-execute
    // replacement) never shows a card of another value (it gets the generic one).
    let computed = exec.run.take_presentation().filter(is_lossless);
    if !is_lossless(value) {
        return Err(output_error(name, "value is not lossless JSON".to_owned()));
    }
    tool.output.check(name, value)?;
    let empty = Value::Null;
    let args = exec.arguments.as_deref().unwrap_or(&empty);
    let render = &tool.definition.output.render;
    let mut content = std::panic::catch_unwind(AssertUnwindSafe(|| render(args, value)))
        .map_err(|p| output_error(name, format!("output.render failed: {}", panic_text(p))))?;
    content.extend(exec.run.take_attached());
    // The typed result card wins over a projection (only a top-level call gets either).
    let meta = match (&tool.definition.output.presentation_meta, exec.parent) {
        (_, None) if computed.is_some() => computed,
        (Some(project), None) => {
            let meta = std::panic::catch_unwind(AssertUnwindSafe(|| project(args, value)))
                .map_err(|p| {
                    output_error(
                        name,
                        format!("output.presentationMeta failed: {}", panic_text(p)),
                    )
                })?;
            if !is_lossless(&meta) {
                crate::json::free(meta);
                return Err(output_error(
                    name,
                    "output.presentationMeta returned non-lossless JSON".to_owned(),
                ));
            }
            Some(meta)
        }
        _ => None,
    };
    Ok((content, meta))
}

//! The execution pipeline (spec §6): every call runs
//! creation → pre-execute (allow / deny / ask → approval) → guards → around-dispatch wrappers →
//! body → success construction → post-execute → `finalize_content` → result observers.
//!
//! [`Registry::execute`] runs it all; the scheduler uses the same stages separately
//! (`prepare`, `dispatch`, `complete`) so that policy and commit stay in model order while
//! dispatches overlap.

mod approval;
mod deferred;
pub(crate) mod dispatch;
mod during;
mod program;
mod repair;

// The call layer's types, at their public paths.
pub use crate::call::{
    ApprovalAnswer, ApprovalPage, ApprovalStore, ApprovalStoreError, BoxFuture, Caller, Deferred,
    ExecuteWrapper, Guard, HookResult, InvalidCall, MatchRule, MemoryApprovalStore,
    PendingApproval, PendingProgram, PostExecuteHook, PreExecuteHook, Progress, ProgressSink,
    Repair, RepairHook, ReplayedCall, ResultObserver, ResumeError, ScopeRules,
};

use crate::call::{
    CallApproval, ExecuteNext, ExecutionToken, PostNext, PostToolDecision, PreNext,
    PreToolDecision, RunState, Signal, ToolExecution, ToolExecutionInput, ToolExecutionResult,
};
use crate::content::{ContentBlock, UserMessage};
use crate::definition::FinalizeFn;
use crate::error::ToolError;
use crate::json::is_lossless;
use crate::registry::{Admitted, PresentationMode, RUN_CODE, RegisteredTool, Registry};
use dispatch::{DispatchCtx, build_success, core_dispatch, resolve_executable};
use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use tracing::Instrument;

/// One call between stages.
pub(crate) struct Call {
    pub(crate) exec: Arc<ToolExecution>,
    finalizer: Option<FinalizeFn>,
    admitted: Arc<Admitted>,
    /// Snapshots taken at creation, valid while the registry's generation is unchanged.
    generation: u64,
    executable: Option<Arc<RegisteredTool>>,
    guards: Arc<[Arc<dyn Guard>]>,
    scope_checks: Arc<[Arc<crate::call::ScopeRules>]>,
    /// The repairs switched on when the call was made, and the host's repair hook.
    repairs: Arc<[crate::call::Repair]>,
    repair_hook: Option<crate::call::RepairHook>,
    /// The call's own approval channel (asked in place of the scope's service).
    approval: Option<CallApproval>,
    /// The `run_code` call whose deferred program made this call (its approval, if kept, is
    /// answered by resuming the program).
    program: Option<String>,
    /// When the call was made, for `gen_ai.execute_tool.duration`.
    #[cfg(feature = "otel")]
    clock: crate::telemetry::Clock,
    /// Whether the registry knew the tool's name when the call was made.
    #[cfg(feature = "otel")]
    known: bool,
}

impl Call {
    /// Runs the call with `arguments` in place of the model's (edited on approval, repaired),
    /// and tells the model so with `context`.
    pub(crate) fn replace_arguments(&mut self, arguments: serde_json::Value, context: UserMessage) {
        ToolExecution::replace_arguments(&mut self.exec, arguments);
        self.exec
            .run
            .deferred
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(context);
    }
}

/// A refused call, on to post-execute. A refusal keeps the contexts written so far: the model
/// learns its arguments were edited even when the edit is refused.
fn refused(call: Call, error: ToolError) -> Stage {
    let contexts = call.exec.run.take_deferred();
    let refused = failure(error);
    let refused = if contexts.is_empty() {
        refused
    } else {
        refused.set_contexts(contexts)
    };
    Stage::Post(call, refused)
}

/// Where a call goes after a stage.
pub(crate) enum Stage {
    /// On to dispatch.
    Dispatch(Call),
    /// On to post-execute with this result.
    Post(Call, ToolExecutionResult),
    /// Straight to finalization (post-execute skipped).
    Final(Call, ToolExecutionResult),
    /// Deferred: waiting for an answer (the call is gone; the approval holds what resuming
    /// needs).
    Pending(Box<PendingApproval>),
    /// Suspended by the call's own approval channel ([`Asked::Suspend`]): the call is gone,
    /// and nothing after pre-execute ran.
    Suspended,
}

impl Stage {
    /// The tool the call runs, while there is a call.
    pub(crate) fn tool(&self) -> Option<&Arc<RegisteredTool>> {
        match self {
            Stage::Dispatch(call) | Stage::Post(call, _) | Stage::Final(call, _) => {
                call.executable.as_ref()
            }
            Stage::Pending(_) | Stage::Suspended => None,
        }
    }
}

pub(super) fn failure(e: ToolError) -> ToolExecutionResult {
    ToolExecutionResult::failure(e)
}

/// The cancellation result that replaces a success (spec §8.3): `ABORTED` once the body was
/// invoked, else `ABORTED_BEFORE_DISPATCH`; contexts kept.
fn cancelled(call: &Call, result: ToolExecutionResult) -> ToolExecutionResult {
    if result.is_error() || !call.exec.signal.is_cancelled() {
        return result;
    }
    let error = if call.exec.run.body_invoked() {
        ToolError::aborted()
    } else {
        ToolError::aborted_before_dispatch()
    };
    failure(error).with_contexts_of(&result)
}

/// The deepest arguments a pending approval is kept with: stores serialize and read it back
/// with serde, which recurses (and serde_json stops at 128 levels, the record taking a few).
pub const MAX_PENDING_DEPTH: u32 = 120;

/// The message a block decision's failure carries (spec §6.7.1).
fn block_message(feedback: &[ContentBlock]) -> String {
    let parts: Vec<String> = feedback
        .iter()
        .map(|b| match b.as_text() {
            Some(t) => t.to_owned(),
            None => format!("[{} content]", b.kind()),
        })
        .collect();
    let joined = parts.join("\n");
    if joined.is_empty() {
        "tool result blocked by post-execute policy".to_owned()
    } else {
        joined
    }
}

impl Registry {
    /// Runs one call through the whole pipeline. Never fails: every failure is a result with
    /// `is_error` set and `Error: <message>` content.
    ///
    /// ```
    /// use dsh_tools::{OutputDecl, Registry, ToolDefinition, ToolExecutionInput};
    /// use serde_json::json;
    /// use tokio_util::sync::CancellationToken;
    ///
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// let registry = Registry::new();
    /// registry.register(ToolDefinition::new("echo", "echo", json!({"type": "object"}), OutputDecl::text(),
    ///     |args, _| async move { Ok(args["text"].clone()) })).unwrap();
    /// let input = ToolExecutionInput::new("c1", "echo", json!({"text": "hi"}), CancellationToken::new());
    /// let result = registry.execute(input).await;
    /// assert_eq!(result.text(), "hi");
    /// let missing = registry.execute(ToolExecutionInput::new("c2", "nope", json!({}), CancellationToken::new())).await;
    /// assert_eq!(missing.code(), Some("UNKNOWN_TOOL"));
    /// # });
    /// ```
    pub async fn execute(&self, input: ToolExecutionInput) -> ToolExecutionResult {
        let stage = match self.prepare(input).await {
            Stage::Dispatch(call) => self.dispatch(call).await,
            other => other,
        };
        // Without post-execute hooks, the "after post-execute" cancellation checkpoint coincides
        // with the one `dispatch` (or `prepare`) just passed: nothing runs in between.
        if let Stage::Post(call, result) = stage {
            if call.admitted.post.is_empty() {
                return self.finish(call, result);
            }
            return self.complete(Stage::Post(call, result)).await;
        }
        self.complete(stage).await
    }

    /// Stage 0 (spec §6.2): token, finalizer snapshot, argument snapshot, Code Mode collapse.
    fn create(&self, input: ToolExecutionInput) -> Stage {
        let token = ExecutionToken::mint();
        let state = self.read();
        let generation = self.generation();
        let visible = state.resolve(&input.name, input.agent.as_ref()).cloned();
        let chain = state.chain(input.agent.as_ref());
        let admitted = state.admitted(&chain);
        let guards = state.guards(&chain);
        let scope_checks = state.scope_checks();
        let repairs = state.repairs();
        let repair_hook = state.repair_hook.clone();
        let collapsed = visible.is_some()
            && input.parent.is_none()
            && input.name != RUN_CODE
            && state.effective_mode(input.agent.as_ref()) == PresentationMode::Code;
        drop(state);
        #[cfg(feature = "otel")]
        let known = visible.is_some();
        let span = crate::telemetry::tool_span(
            input.span_parent.as_ref(),
            &input.name,
            &input.call_id,
            visible.as_ref().map(|t| t.definition.description.as_str()),
        );
        crate::telemetry::record_arguments(&span, Some(&input.arguments));
        let arguments = if is_lossless(&input.arguments) {
            Some(Arc::new(input.arguments))
        } else {
            crate::json::free(input.arguments);
            None
        };
        let args_ok = arguments.is_some();
        let exec = Arc::new(ToolExecution {
            root_call_id: input.root_call_id,
            call_id: input.call_id,
            name: input.name,
            arguments,
            agent: input.agent,
            parent: input.parent,
            token,
            // Read-only: hooks and bodies observe the caller's signal but cannot cancel it
            // (spec §8.1).
            signal: Signal::new(input.signal),
            progress: input.progress,
            caller: input.caller,
            span,
            run: RunState::default(),
        });
        let mut call = Call {
            finalizer: visible
                .as_ref()
                .and_then(|t| t.definition.finalize_content.clone()),
            executable: if collapsed { None } else { visible },
            exec,
            admitted,
            generation,
            guards,
            scope_checks,
            repairs,
            repair_hook,
            approval: None,
            program: None,
            #[cfg(feature = "otel")]
            clock: crate::telemetry::Clock::start(),
            #[cfg(feature = "otel")]
            known,
        };
        if !args_ok {
            let e = ToolError::new("tool execution arguments must be losslessly JSON-serializable");
            return Stage::Final(call, failure(e));
        }
        if collapsed {
            if call.exec.signal.is_cancelled() {
                return Stage::Final(call, failure(ToolError::aborted_before_dispatch()));
            }
            call.finalizer = None;
            let name = &call.exec.name;
            let e = ToolError::coded(
                "ToolNotFoundError",
                crate::error::codes::UNKNOWN_TOOL,
                format!(
                    "unknown tool \"{name}\": only `run_code` is callable directly — call `{name}` from inside a `run_code` program instead"
                ),
            );
            return Stage::Final(call, failure(e));
        }
        Stage::Dispatch(call)
    }

    /// Stages 0–1 (spec §6.2–6.4): creation, pre-execute, approval, guards.
    pub(crate) async fn prepare(&self, input: ToolExecutionInput) -> Stage {
        self.prepare_as(input, false).await
    }

    /// [`prepare`](Self::prepare); with `defer`, an `ask` no grant answers is kept in the
    /// approval store and the call settles as [`Stage::Pending`].
    pub(crate) async fn prepare_as(&self, input: ToolExecutionInput, defer: bool) -> Stage {
        self.prepare_with(input, defer, None, None).await
    }

    /// [`prepare_as`](Self::prepare_as), deferring, for a call the deferred program of
    /// `run_code` call `program` made.
    pub(crate) async fn prepare_in_program(
        &self,
        input: ToolExecutionInput,
        program: String,
    ) -> Stage {
        self.prepare_with(input, true, None, Some(program)).await
    }

    /// [`prepare_as`](Self::prepare_as), with the call's own approval channel (asked in place
    /// of the scope's service; it may suspend the call: [`Stage::Suspended`]), and the program
    /// that made the call, if one did.
    pub(crate) async fn prepare_with(
        &self,
        input: ToolExecutionInput,
        defer: bool,
        approval: Option<CallApproval>,
        program: Option<String>,
    ) -> Stage {
        let mut call = match self.create(input) {
            Stage::Dispatch(call) => call,
            done => return done,
        };
        call.approval = approval;
        call.program = program;
        // Instrumented only when something records the span: a disabled one would still be
        // entered and left on every poll.
        if call.exec.span.is_disabled() {
            return self.pre_dispatch(call, defer).await;
        }
        let span = call.exec.span.clone();
        self.pre_dispatch(call, defer).instrument(span).await
    }

    /// Stage 1 for a created call, in its span.
    async fn pre_dispatch(&self, mut call: Call, defer: bool) -> Stage {
        if defer {
            call.exec.run.defer_asks();
        }
        if call.exec.signal.is_cancelled() {
            return Stage::Final(call, failure(ToolError::aborted_before_dispatch()));
        }
        // A caller the scope rules refuse is refused at the door: no hook decides (post-execute
        // hooks neither, as pre-execute never ran), and no person is asked to approve a call
        // that would be refused.
        if let Some(denied) = self.scope_denied(&call) {
            return Stage::Final(call, failure(denied));
        }
        if !call.repairs.is_empty() || call.repair_hook.is_some() {
            let repairs = Arc::clone(&call.repairs);
            let hook = call.repair_hook.clone();
            self.repair_arguments(&mut call, &repairs, hook.as_ref());
        }
        let decision = match self.pre_execute(&call).await {
            Ok(d) => d,
            Err(e) => return Stage::Final(call, failure(e)),
        };
        match decision {
            // Boxed: asking is the rare path, and its future (1.9 KB) would otherwise be part of
            // every call's, copied whole each time a call's future is boxed.
            PreToolDecision::Ask { reason } => {
                Box::pin(self.approve_to_stage(call, reason, defer)).await
            }
            other => self.admit(call, other),
        }
    }

    /// The pre-execute chain's decision for `call`.
    async fn pre_execute(&self, call: &Call) -> Result<PreToolDecision, ToolError> {
        if call.admitted.pre.is_empty() {
            return Ok(PreToolDecision::Allow);
        }
        PreNext {
            hooks: Arc::clone(&call.admitted.pre),
            index: 0,
            execution: Arc::clone(&call.exec),
        }
        .run()
        .await
    }

    /// After pre-execute and approval: a denial settles the call, an allowance goes through the
    /// guards (which only deny) to dispatch.
    pub(super) fn admit(&self, call: Call, decision: PreToolDecision) -> Stage {
        match decision {
            PreToolDecision::Deny { reason } => return refused(call, ToolError::new(reason)),
            // `approve` resolves every ask; kept as a denial so no path can skip policy.
            PreToolDecision::Ask { .. } => {
                let name = &call.exec.name;
                let e = ToolError::new(format!(
                    "tool \"{name}\" requires approval (not yet supported)"
                ));
                return Stage::Post(call, failure(e));
            }
            PreToolDecision::Allow => {}
        }
        // The scope rules again (they are checked before pre-execute too): a call resumed from
        // a deferred approval or a program's journal comes here without that first check.
        if let Some(denied) = self.scope_denied(&call) {
            return refused(call, denied);
        }
        let guards = if self.generation() == call.generation {
            Arc::clone(&call.guards)
        } else {
            let state = self.read();
            state.guards(&state.chain(call.exec.agent.as_ref()))
        };
        for guard in guards.iter() {
            match std::panic::catch_unwind(AssertUnwindSafe(|| guard.check(&call.exec))) {
                Ok(None) => {}
                Ok(Some(reason)) => return refused(call, ToolError::new(reason)),
                Err(payload) => {
                    return Stage::Final(call, failure(ToolError::from_panic_payload(payload)));
                }
            }
        }
        if call.exec.signal.is_cancelled() {
            return Stage::Post(call, failure(ToolError::aborted_before_dispatch()));
        }
        Stage::Dispatch(call)
    }

    /// Why the registry's scope rules deny `call`'s caller its tool, as a coded failure
    /// ([`SCOPE_DENIED`](crate::error::codes::SCOPE_DENIED)): what the caller's token lacks.
    fn scope_denied(&self, call: &Call) -> Option<ToolError> {
        let checks = if self.generation() == call.generation {
            Arc::clone(&call.scope_checks)
        } else {
            self.read().scope_checks()
        };
        checks.iter().find_map(|rules| {
            rules
                .check(call.exec.name(), call.exec.caller())
                .map(|reason| {
                    ToolError::coded("ScopeError", crate::error::codes::SCOPE_DENIED, reason)
                })
        })
    }

    /// Stage 2 (spec §6.5): wrappers around the core dispatch, then normalization, in the
    /// call's span.
    pub(crate) async fn dispatch(&self, call: Call) -> Stage {
        if call.exec.span.is_disabled() {
            return self.dispatch_in_span(call).await;
        }
        let span = call.exec.span.clone();
        self.dispatch_in_span(call).instrument(span).await
    }

    async fn dispatch_in_span(&self, call: Call) -> Stage {
        let ctx = DispatchCtx {
            registry: self.clone(),
            execution: Arc::clone(&call.exec),
            executable: call.executable.clone(),
            generation: call.generation,
        };
        let returned = if call.admitted.execute.is_empty() {
            Ok(core_dispatch(&ctx, call.exec.signal.token().clone(), false).await)
        } else {
            ExecuteNext {
                wrappers: Arc::clone(&call.admitted.execute),
                index: 0,
                ctx: Arc::new(ctx),
                signal: call.exec.signal.token().clone(),
                replaced: false,
            }
            .run()
            .await
        };
        let result = match returned {
            Ok(r) => r,
            Err(e) => return Stage::Final(call, failure(e)),
        };
        // Normalize: our canonical result, any failure, or a success to rebuild.
        let result = if result.origin() == Some(call.exec.token) || result.is_error() {
            result
        } else {
            let Some(tool) = resolve_executable(self, &call.exec) else {
                let e = ToolError::unknown_tool(&call.exec.name);
                return Stage::Final(call, failure(e));
            };
            let (value, contexts) = result.parts_to_rebuild();
            match build_success(&tool, &call.exec, value, contexts) {
                Ok(r) => r,
                Err(e) => return Stage::Final(call, failure(e)),
            }
        };
        let deferred = call.exec.run.take_deferred();
        let result = if deferred.is_empty() {
            result
        } else {
            let mut contexts = deferred;
            contexts.extend(result.contexts_vec());
            result.set_contexts(contexts)
        };
        let result = cancelled(&call, result);
        Stage::Post(call, result)
    }

    /// Stages 3–4 (spec §6.7–6.8, §6.11): post-execute for post-results, then finalization and
    /// the observers.
    pub(crate) async fn complete(&self, stage: Stage) -> ToolExecutionResult {
        let (call, result) = match stage {
            Stage::Post(call, result) => {
                let result = if call.exec.span.is_disabled() {
                    self.post_execute(&call, result).await
                } else {
                    let span = call.exec.span.clone();
                    self.post_execute(&call, result).instrument(span).await
                };
                (call, result)
            }
            Stage::Final(call, result) => (call, result),
            Stage::Dispatch(call) => {
                let e = ToolError::new("internal error: a call was completed before dispatch");
                (call, failure(e))
            }
            // Only the deferred entry points prepare with deferral, and they never complete a
            // pending call.
            Stage::Pending(pending) => {
                return failure(ToolError::new(format!(
                    "internal error: the call waiting for approval {} was completed",
                    pending.id
                )));
            }
            // Only `execute_or_suspend` gives calls a channel that suspends.
            Stage::Suspended => {
                return failure(ToolError::new(
                    "internal error: a call suspended for approval was completed",
                ));
            }
        };
        self.finish(call, result)
    }

    async fn post_execute(&self, call: &Call, result: ToolExecutionResult) -> ToolExecutionResult {
        if call.admitted.post.is_empty() {
            return cancelled(call, result);
        }
        let decision = PostNext {
            hooks: Arc::clone(&call.admitted.post),
            index: 0,
            execution: Arc::clone(&call.exec),
            result: result.clone(),
        }
        .run()
        .await;
        let applied = match decision {
            Err(e) => failure(e),
            Ok(PostToolDecision::Block {
                feedback,
                additional_contexts,
            }) => failure(ToolError::new(block_message(&feedback)))
                .with_content(feedback)
                .set_contexts(additional_contexts),
            Ok(PostToolDecision::Accept {
                content: Some(_),
                value: Some(_),
                ..
            }) => failure(ToolError::new(
                "tools/post-execute accept decision cannot replace both value and content",
            )),
            Ok(PostToolDecision::Accept {
                value: Some(value),
                additional_contexts,
                ..
            }) => {
                if result.is_error() {
                    failure(ToolError::new(
                        "tools/post-execute cannot replace the value of a failed result",
                    ))
                } else {
                    match resolve_executable(self, &call.exec) {
                        None => failure(ToolError::unknown_tool(&call.exec.name)),
                        Some(tool) => {
                            let mut contexts = result.contexts_vec();
                            contexts.extend(additional_contexts);
                            let contexts = (!contexts.is_empty()).then_some(contexts);
                            build_success(&tool, &call.exec, value, contexts)
                                .unwrap_or_else(failure)
                        }
                    }
                }
            }
            Ok(PostToolDecision::Accept {
                content,
                value: None,
                additional_contexts,
            }) => {
                let replaced = match content {
                    Some(content) => result.with_content(content),
                    None => result,
                };
                if additional_contexts.is_empty() {
                    replaced
                } else {
                    let mut contexts = replaced.contexts_vec();
                    contexts.extend(additional_contexts);
                    replaced.set_contexts(contexts)
                }
            }
        };
        cancelled(call, applied)
    }

    /// Stage 4 (spec §6.8): materialize, `finalize_content` once, observers.
    fn finish(&self, call: Call, result: ToolExecutionResult) -> ToolExecutionResult {
        let result = if result.is_lossless() {
            result
        } else {
            failure(ToolError::new(
                "tool result must be losslessly JSON-serializable",
            ))
        };
        let result = match &call.finalizer {
            None => result,
            Some(finalize) => {
                match std::panic::catch_unwind(AssertUnwindSafe(|| finalize(&call.exec, &result))) {
                    Ok(None) => result,
                    Ok(Some(content)) => result.with_content(content),
                    Err(payload) => failure(ToolError::from_panic_payload(payload)),
                }
            }
        };
        crate::telemetry::settle(&call.exec.span, &result);
        #[cfg(feature = "otel")]
        record_duration(&call, &result);
        for observer in call.admitted.result.iter() {
            let outcome = std::panic::catch_unwind(AssertUnwindSafe(|| {
                observer.observe(&call.exec, &result)
            }));
            let message = match outcome {
                Ok(Ok(())) => continue,
                Ok(Err(e)) => e.message().to_owned(),
                Err(payload) => ToolError::from_panic_payload(payload).message().to_owned(),
            };
            tracing::warn!(
                "tool \"{}\" ({}): tools/result observer failed: {message}",
                call.exec.name,
                call.exec.call_id
            );
        }
        result
    }
}

/// Records `gen_ai.execute_tool.duration` for a settled call: the tool's name only for a tool
/// the registry knew (a name the model made up is `_OTHER`, keeping the series bounded).
#[cfg(feature = "otel")]
fn record_duration(call: &Call, result: &ToolExecutionResult) {
    use crate::telemetry::{EXECUTE_TOOL, EXECUTE_TOOL_DURATION};
    use opentelemetry::KeyValue;
    let tool = if call.known {
        call.exec.name.clone()
    } else {
        "_OTHER".to_owned()
    };
    let mut attributes = vec![
        KeyValue::new("gen_ai.operation.name", EXECUTE_TOOL),
        KeyValue::new("gen_ai.tool.name", tool),
    ];
    if result.is_error() {
        attributes.push(KeyValue::new(
            "error.type",
            crate::telemetry::error_type(result).to_owned(),
        ));
    }
    crate::telemetry::record_duration(EXECUTE_TOOL_DURATION, call.clock, &attributes);
}

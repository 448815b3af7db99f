//! The execution pipeline (spec §6): every call runs
//! creation → pre-execute (allow / deny / ask → approval) → guards → around-dispatch wrappers →
//! body → success construction → post-execute → `finalize_content` → result observers.
//!
//! [`Registry::execute`] runs it all; the scheduler uses the same stages separately
//! (`prepare`, `dispatch`, `complete`) so that policy and commit stay in model order while
//! dispatches overlap.

mod deferred;
pub(crate) mod dispatch;
mod during;
mod program;

// The call layer's types, at their public paths.
pub use crate::call::{
    AgentId, ApprovalAnswer, ApprovalOutcome, ApprovalPage, ApprovalRequest, ApprovalService,
    ApprovalStore, ApprovalStoreError, ArgumentMatch, BoxFuture, Caller, Deferred, ExecuteCall,
    ExecuteNext, ExecuteWrapper, ExecutionToken, Grant, GrantDecision, GrantKey, GrantPolicy,
    Guard, HookResult, MatchRule, MemoryApprovalStore, PendingApproval, PendingProgram,
    PostExecuteHook, PostNext, PostToolDecision, PreExecuteHook, PreNext, PreToolDecision,
    Principal, Progress, ProgressSink, ReplayedCall, ResultObserver, ResumeError, ScopeRules,
    Signal, ToolExecution, ToolExecutionInput, ToolExecutionResult, ToolRunContext,
};

use crate::call::{Asked, CallApproval, CallAsk, RunState};
use crate::content::ContentBlock;
use crate::definition::FinalizeFn;
use crate::error::ToolError;
use crate::json::is_lossless;
use crate::registry::{Admitted, PresentationMode, RUN_CODE, RegisteredTool, Registry};
use dispatch::{DispatchCtx, build_success, core_dispatch, resolve_executable};
use std::panic::AssertUnwindSafe;
use std::sync::Arc;

/// One call between stages.
pub(crate) struct Call {
    pub(crate) exec: Arc<ToolExecution>,
    finalizer: Option<FinalizeFn>,
    admitted: Arc<Admitted>,
    /// Snapshots taken at creation, valid while the registry's generation is unchanged.
    generation: u64,
    executable: Option<Arc<RegisteredTool>>,
    guards: Arc<[Arc<dyn Guard>]>,
    /// The call's own approval channel (asked in place of the scope's service).
    approval: Option<CallApproval>,
    /// The `run_code` call whose deferred program made this call (its approval, if kept, is
    /// answered by resuming the program).
    program: Option<String>,
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

/// What [`Registry::approve`] decided.
enum Approval {
    /// A decision (`None`: cancelled after the caller aborted).
    Decided(Option<PreToolDecision>),
    /// Deferred: kept in the store.
    Pending(Box<PendingApproval>),
    /// Suspended by the call's own channel.
    Suspended,
}

fn failure(e: ToolError) -> ToolExecutionResult {
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

/// The longest reason a rejection passes on to the model, in characters.
const MAX_REJECTION_REASON: usize = 1_000;

/// The denial of an `ask` for a call without an agent.
fn no_agent(name: &str) -> PreToolDecision {
    PreToolDecision::deny(format!(
        "tool \"{name}\" requires approval, but the call has no agent to route it through"
    ))
}

/// The key an "always" answer to `call` is remembered under, and whether its tool takes edits.
fn grant_and_edits(call: &Call, agent: Option<&AgentId>) -> (Option<GrantKey>, bool) {
    let definition = call.executable.as_ref().map(|t| t.definition());
    let null = serde_json::Value::Null;
    let arguments = call.exec.arguments.as_deref().unwrap_or(&null);
    let grant = definition.and_then(|d| {
        d.grant_policy.key_for(
            &call.exec.name,
            agent,
            call.exec.caller.as_deref(),
            arguments,
        )
    });
    (grant, definition.is_some_and(|d| d.editable_arguments))
}

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
        let collapsed = visible.is_some()
            && input.parent.is_none()
            && input.name != RUN_CODE
            && state.effective_mode(input.agent.as_ref()) == PresentationMode::Code;
        drop(state);
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
            approval: None,
            program: None,
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
        if defer {
            call.exec
                .run
                .defers
                .store(true, std::sync::atomic::Ordering::Release);
        }
        if call.exec.signal.is_cancelled() {
            return Stage::Final(call, failure(ToolError::aborted_before_dispatch()));
        }
        let decision = match self.pre_execute(&call).await {
            Ok(d) => d,
            Err(e) => return Stage::Final(call, failure(e)),
        };
        let decision = match decision {
            PreToolDecision::Ask { reason } => match self.approve(&mut call, reason, defer).await {
                Ok(Approval::Decided(Some(d))) => d,
                Ok(Approval::Decided(None)) => {
                    return Stage::Post(call, failure(ToolError::aborted_before_dispatch()));
                }
                Ok(Approval::Pending(pending)) => return Stage::Pending(pending),
                Ok(Approval::Suspended) => return Stage::Suspended,
                Err(e) => return Stage::Final(call, failure(e)),
            },
            other => other,
        };
        self.admit(call, decision)
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
    fn admit(&self, call: Call, decision: PreToolDecision) -> Stage {
        // A refusal keeps the contexts written so far: the model learns its arguments were
        // edited even when the edit is refused.
        let refuse = |call: Call, reason: String| {
            let contexts = call.exec.run.take_deferred();
            let refused = failure(ToolError::new(reason));
            let refused = if contexts.is_empty() {
                refused
            } else {
                refused.set_contexts(contexts)
            };
            Stage::Post(call, refused)
        };
        match decision {
            PreToolDecision::Deny { reason } => return refuse(call, reason),
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
        let guards = if self.generation() == call.generation {
            Arc::clone(&call.guards)
        } else {
            let state = self.read();
            state.guards(&state.chain(call.exec.agent.as_ref()))
        };
        for guard in guards.iter() {
            match std::panic::catch_unwind(AssertUnwindSafe(|| guard.check(&call.exec))) {
                Ok(None) => {}
                Ok(Some(reason)) => return refuse(call, reason),
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

    /// Resolves an `ask` (spec §6.4): `Ok(Some(decision))`, `Ok(None)` for a cancelled
    /// approval after the caller aborted, or an error that ends the call. A remembered answer
    /// (a grant that covers the call) answers first; an edited-arguments answer replaces the
    /// call's arguments before the guards see them.
    async fn approve(
        &self,
        call: &mut Call,
        reason: Option<String>,
        defer: bool,
    ) -> Result<Approval, ToolError> {
        let name = call.exec.name.clone();
        let rejected = || PreToolDecision::deny(format!("the user rejected tool \"{name}\""));
        match self.remembered(call) {
            Some(GrantDecision::Allow) => {
                return Ok(Approval::Decided(Some(PreToolDecision::Allow)));
            }
            Some(GrantDecision::Reject) => return Ok(Approval::Decided(Some(rejected()))),
            None => {}
        }
        if let Some(approval) = call.approval.clone() {
            return self.ask_own_channel(call, approval, reason).await;
        }
        if defer {
            return self.defer(call, reason).await;
        }
        let Some(service) = call.admitted.approval.clone() else {
            let reason = reason.unwrap_or_else(|| {
                format!("tool \"{name}\" requires approval (not yet supported)")
            });
            return Ok(Approval::Decided(Some(PreToolDecision::Deny { reason })));
        };
        let Some(agent) = call.exec.agent.clone() else {
            return Ok(Approval::Decided(Some(no_agent(&name))));
        };
        let (grant, editable) = grant_and_edits(call, Some(&agent));
        let request = ApprovalRequest {
            agent,
            tool_name: name.clone(),
            call_id: call.exec.call_id.clone(),
            arguments: call.exec.arguments.clone(),
            reason,
            grant: grant.clone(),
            editable,
            signal: call.exec.signal.clone(),
        };
        let outcome = crate::call::contained(move || service.request(request)).await?;
        self.apply_outcome(call, outcome, grant, editable)
            .await
            .map(Approval::Decided)
    }

    /// Asks the call's own channel (the MCP server's elicitation): it may answer without an
    /// agent (the session is the route), or suspend the call.
    async fn ask_own_channel(
        &self,
        call: &mut Call,
        approval: CallApproval,
        reason: Option<String>,
    ) -> Result<Approval, ToolError> {
        let (grant, editable) = grant_and_edits(call, call.exec.agent.as_ref());
        // A remembered answer is kept for an agent; a call without one gets none (a key
        // without an agent would answer every agent's calls).
        let grant = grant.filter(|_| call.exec.agent.is_some());
        let ask = CallAsk {
            tool_name: call.exec.name.clone(),
            arguments: call.exec.arguments.clone(),
            reason,
            grant: grant.clone(),
            editable,
            signal: call.exec.signal.clone(),
        };
        match crate::call::contained(move || approval.0.ask(ask)).await? {
            Asked::Answer(outcome) => self
                .apply_outcome(call, outcome, grant, editable)
                .await
                .map(Approval::Decided),
            Asked::Suspend => Ok(Approval::Suspended),
        }
    }

    /// The grant that answers `call`, if any (none for a tool whose policy is
    /// [`GrantPolicy::Never`]: every call of it asks, whatever was granted).
    fn remembered(&self, call: &Call) -> Option<GrantDecision> {
        let never = call
            .executable
            .as_ref()
            .is_some_and(|t| t.definition().grant_policy == GrantPolicy::Never);
        if never {
            return None;
        }
        let null = serde_json::Value::Null;
        let arguments = call.exec.arguments.as_deref().unwrap_or(&null);
        self.inner.grants.answer(
            &call.exec.name,
            call.exec.agent.as_ref(),
            call.exec.caller.as_deref(),
            arguments,
        )
    }

    /// Keeps the call's `ask` in the approval store (deferred mode).
    async fn defer(&self, call: &Call, reason: Option<String>) -> Result<Approval, ToolError> {
        let name = &call.exec.name;
        let Some(agent) = call.exec.agent.clone() else {
            return Ok(Approval::Decided(Some(no_agent(name))));
        };
        let (grant, editable) = grant_and_edits(call, Some(&agent));
        let null = serde_json::Value::Null;
        let snapshot = call.exec.arguments.as_deref().unwrap_or(&null);
        if crate::json::deeper_than(snapshot, MAX_PENDING_DEPTH) {
            return Err(ToolError::coded(
                "ApprovalStoreError",
                "APPROVAL_NOT_KEPT",
                format!(
                    "tool \"{name}\" requires approval, and its arguments nest deeper than \
                     {MAX_PENDING_DEPTH} levels, more than a pending approval is kept with"
                ),
            ));
        }
        let pending = PendingApproval {
            id: crate::call::approval_id(),
            call_id: call.exec.call_id.clone(),
            root_call_id: call.exec.root_call_id.clone(),
            tool: name.clone(),
            arguments: call
                .exec
                .arguments
                .as_deref()
                .map(crate::json::clone_deep)
                .unwrap_or_default(),
            reason,
            agent,
            // Who, not what they may do: the answer brings the caller's current token.
            caller: call.exec.caller.as_deref().map(|c| {
                let mut who = Caller::new(c.subject());
                if let Some(issuer) = c.issuer_name() {
                    who = who.issuer(issuer);
                }
                if let Some(client) = c.client() {
                    who = who.client_id(client);
                }
                who
            }),
            grant,
            editable,
            asked_at_ms: crate::call::now_ms(),
            claimed: false,
            program: call.program.clone(),
        };
        let store = self.approval_store();
        match store.put(pending.clone()).await {
            Ok(()) => Ok(Approval::Pending(Box::new(pending))),
            Err(e) => {
                // The write may have happened with its answer lost: what the model is told
                // failed must not wait to be approved.
                if let Err(again) = store.remove(&pending.id).await {
                    tracing::warn!(
                        "approval {}: not kept ({e}), and its removal failed too: {again}",
                        pending.id
                    );
                }
                Err(ToolError::coded(
                    "ApprovalStoreError",
                    "APPROVAL_NOT_KEPT",
                    format!(
                        "tool \"{name}\" requires approval, and it could not be kept for later: {e}"
                    ),
                ))
            }
        }
    }

    /// Applies an approval service's (or a resumed approval's) answer to `call`.
    pub(crate) async fn apply_outcome(
        &self,
        call: &mut Call,
        outcome: ApprovalOutcome,
        grant: Option<GrantKey>,
        editable: bool,
    ) -> Result<Option<PreToolDecision>, ToolError> {
        let name = call.exec.name.clone();
        let rejected = || PreToolDecision::deny(format!("the user rejected tool \"{name}\""));
        let agent = call.exec.agent.clone();
        let remember = |key: Option<GrantKey>, decision: GrantDecision| {
            self.remember(&name, agent.as_ref(), grant.as_ref(), key, decision);
        };
        Ok(Some(match outcome {
            ApprovalOutcome::AllowedOnce => PreToolDecision::Allow,
            ApprovalOutcome::AllowedAlways(key) => {
                remember(key, GrantDecision::Allow);
                PreToolDecision::Allow
            }
            ApprovalOutcome::Rejected => rejected(),
            ApprovalOutcome::RejectedBecause(why) => {
                let why: String = why.chars().take(MAX_REJECTION_REASON).collect();
                let why = why.trim();
                if why.is_empty() {
                    rejected()
                } else {
                    PreToolDecision::deny(format!("the user rejected tool \"{name}\": {why}"))
                }
            }
            ApprovalOutcome::RejectedAlways(key) => {
                remember(key, GrantDecision::Reject);
                rejected()
            }
            ApprovalOutcome::AllowedWithArgs(edited) => {
                if !editable {
                    crate::json::free(edited);
                    return Ok(Some(PreToolDecision::deny(format!(
                        "the approval edited the arguments of tool \"{name}\", which does not \
                         accept edited arguments (ToolDefinition::editable_arguments)"
                    ))));
                }
                self.edit_arguments(call, edited)?;
                // The edit is a new call in all but name: pre-execute and the grants decide
                // again on it (a denial or a remembered rejection wins; an `ask` counts as
                // answered: this answer is about these arguments).
                if self.remembered(call) == Some(GrantDecision::Reject) {
                    return Ok(Some(rejected()));
                }
                match self.pre_execute(call).await? {
                    PreToolDecision::Deny { reason } => PreToolDecision::Deny { reason },
                    PreToolDecision::Allow | PreToolDecision::Ask { .. } => PreToolDecision::Allow,
                }
            }
            ApprovalOutcome::Cancelled if call.exec.signal.is_cancelled() => return Ok(None),
            ApprovalOutcome::Cancelled => {
                PreToolDecision::deny(format!("approval for tool \"{name}\" was cancelled"))
            }
            ApprovalOutcome::Unavailable => PreToolDecision::deny(format!(
                "tool \"{name}\" requires approval, but no approval channel is available"
            )),
        }))
    }

    /// Keeps an "always" answer to a call of `name` by `agent`: under `own` (the key the
    /// tool's policy gives) or a key the service chose. A chosen key is kept only for this
    /// tool, for this agent (or every agent), and never when `own` is `None` (a tool whose
    /// every call asks, a call lacking an argument the policy keys on, a call without an
    /// agent).
    pub(crate) fn remember(
        &self,
        name: &str,
        agent: Option<&AgentId>,
        own: Option<&GrantKey>,
        chosen: Option<GrantKey>,
        decision: GrantDecision,
    ) {
        let key = match (chosen, own) {
            (_, None) => None,
            (None, Some(own)) => Some(own.clone()),
            (Some(chosen), Some(_))
                if chosen.tool == name
                    && chosen.agent.as_ref().is_none_or(|a| agent == Some(a)) =>
            {
                Some(chosen)
            }
            (Some(chosen), Some(_)) => {
                tracing::warn!(
                    "the approval of tool \"{name}\" asked to remember an answer for tool \
                     {:?} and agent {:?}; kept for this call only",
                    chosen.tool,
                    chosen.agent.as_ref().map(ToString::to_string)
                );
                None
            }
        };
        match key {
            Some(key) => {
                self.grant(Grant { key, decision });
            }
            None => tracing::debug!("tool \"{name}\": the approval holds for this call only"),
        }
    }

    /// Runs `call` with the arguments an approval edited: lossless and valid against the
    /// tool's parameters (`INVALID_ARGS` saying the edit was invalid), and a context telling
    /// the model its arguments were edited.
    fn edit_arguments(&self, call: &mut Call, edited: serde_json::Value) -> Result<(), ToolError> {
        let invalid = |detail: String| {
            ToolError::coded(
                "ToolArgsError",
                crate::error::codes::INVALID_ARGS,
                format!("invalid arguments (edited on approval): {detail}"),
            )
        };
        if !is_lossless(&edited) {
            crate::json::free(edited);
            return Err(invalid(
                "the edited arguments are not lossless JSON".to_owned(),
            ));
        }
        if let Some(tool) = &call.executable {
            let definition = tool.definition();
            // A raw definition's parameters are compiled for the check (an edit is rare, and
            // human-paced); ones outside the subset are left to the body, as the model's are.
            let own;
            let compiled = match definition.args_validator() {
                Some(validator) => Some(validator.compiled()),
                None => {
                    own = crate::schema::CompiledSchema::compile(definition.parameters()).ok();
                    own.as_ref()
                }
            };
            if let Some(compiled) = compiled {
                let violations = compiled.validate_at(&edited, crate::schema::Root::Parameters);
                if !violations.is_empty() {
                    crate::json::free(edited);
                    return Err(invalid(violations.join("; ")));
                }
            }
        }
        let mut shown = crate::json::to_compact_string(&edited);
        if shown.len() > 2000 {
            let mut end = 2000;
            while !shown.is_char_boundary(end) {
                end -= 1;
            }
            shown.truncate(end);
            shown.push('…');
        }
        let name = &call.exec.name;
        let context = crate::content::UserMessage::new(
            format!("{}:edited-arguments", call.exec.call_id),
            vec![ContentBlock::text(format!(
                "The user approved this call of tool \"{name}\" with edited arguments: {shown}"
            ))],
            {
                // Built by hand: `json!` would serialize the edit recursively.
                let mut source = serde_json::Map::new();
                source.insert("kind".to_owned(), "approval".into());
                source.insert("tool".to_owned(), name.as_str().into());
                source.insert(
                    "editedArguments".to_owned(),
                    crate::json::clone_deep(&edited),
                );
                serde_json::Value::Object(source)
            },
        );
        ToolExecution::replace_arguments(&mut call.exec, edited);
        call.exec
            .run
            .deferred
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(context);
        Ok(())
    }

    /// Stage 2 (spec §6.5): wrappers around the core dispatch, then normalization.
    pub(crate) async fn dispatch(&self, call: Call) -> Stage {
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
                let result = self.post_execute(&call, result).await;
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

//! Deferred approvals in the pipeline: a call whose `ask` no grant answers is kept in the
//! approval store instead of waiting, and resumed later with its answer.

use super::{Stage, failure};
use crate::call::{
    ApprovalAnswer, ApprovalOutcome, ApprovalPage, ApprovalStoreError, Caller, Deferred,
    PendingApproval, ResumeError, ToolExecutionInput, ToolExecutionResult,
};
use crate::error::ToolError;
use crate::registry::Registry;
use std::sync::Arc;

impl Registry {
    /// Up to `limit` pending approvals after `cursor` (a page's `next`), oldest first.
    pub async fn pending_approvals(
        &self,
        cursor: Option<String>,
        limit: usize,
    ) -> Result<ApprovalPage, ApprovalStoreError> {
        self.approval_store().list(cursor, limit).await
    }

    /// Runs one call like [`execute`](Self::execute), except that an `ask` no grant answers
    /// does not wait for the approval service: it is kept in the [approval
    /// store](Self::set_approval_store) and the call settles as [`Deferred::Pending`], to be
    /// continued by [`resume`](Self::resume) whenever (and wherever) someone answers.
    ///
    /// ```
    /// use dsh_tools::pipeline::{ApprovalAnswer, Deferred};
    /// use dsh_tools::{ApprovalOutcome, OutputDecl, PreToolDecision, Registry, ToolDefinition, ToolExecutionInput};
    /// use serde_json::json;
    /// use tokio_util::sync::CancellationToken;
    ///
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// let registry = Registry::new();
    /// registry.register(ToolDefinition::new("rm", "removes", json!({"type": "object"}), OutputDecl::text(),
    ///     |_, _| async { Ok(json!("removed")) })).unwrap();
    /// registry.on_pre_execute(|_e, _next| async { Ok(PreToolDecision::ask(Some("destructive"))) }).keep();
    /// let input = ToolExecutionInput::new("c1", "rm", json!({"path": "a"}), CancellationToken::new()).agent("coder");
    /// let Deferred::Pending(pending) = registry.execute_deferred(input).await else { panic!() };
    /// // Later, maybe elsewhere (the approval is serializable):
    /// let answer = ApprovalAnswer::new(&pending.id, ApprovalOutcome::AllowedOnce, "coder");
    /// assert_eq!(registry.resume(answer.clone()).await.unwrap().text(), "removed");
    /// assert!(registry.resume(answer).await.is_err(), "never run twice");
    /// # });
    /// ```
    pub async fn execute_deferred(&self, input: ToolExecutionInput) -> Deferred {
        match self.prepare_as(input, true).await {
            Stage::Pending(pending) => Deferred::Pending(*pending),
            stage => self.run_prepared_deferred(stage).await,
        }
    }

    /// Runs one call like [`execute`](Self::execute), with its own approval channel; `None`
    /// when that channel suspended the call at its `ask` (nothing after pre-execute ran, no
    /// observer saw it). Only the MCP server gives calls such a channel.
    #[cfg(feature = "mcp")]
    pub(crate) async fn execute_or_suspend(
        &self,
        input: ToolExecutionInput,
        approval: crate::call::CallApproval,
    ) -> Option<ToolExecutionResult> {
        match self.prepare_with(input, false, Some(approval), None).await {
            Stage::Suspended => None,
            stage => Some(self.run_prepared(stage).await),
        }
    }

    /// Runs a prepared call to its result (what [`execute`](Self::execute) does after
    /// `prepare`).
    pub(crate) async fn run_prepared(&self, stage: Stage) -> ToolExecutionResult {
        let stage = match stage {
            Stage::Dispatch(call) => self.dispatch(call).await,
            other => other,
        };
        self.complete(stage).await
    }

    /// Continues the call waiting for `answer.approval_id` with `answer.outcome`, as if the
    /// approval service had given that answer at once: remembered answers are kept, edited
    /// arguments validated, then guards, wrappers, the body, post-execute,
    /// `finalize_content` and observers run. The call's pre-execute hooks do not run again
    /// (they asked).
    ///
    /// The answer must come for the approval's agent and, when its call had an authenticated
    /// caller, on behalf of the same principal. Each approval is answered once: the store
    /// claims it atomically before the call runs, so a second answer (here or on another
    /// instance) is [`ResumeError::AlreadyAnswered`] and the call never runs twice. A store
    /// that fails before the claim leaves the approval as it was; an answer whose signal fired
    /// before the claim is [`ResumeError::Cancelled`], the approval still pending. Once claimed,
    /// an approval is never run again, even if this future is dropped before the call settled
    /// (its record then stays, claimed, in the listing for an operator to see).
    ///
    /// The resumed call runs for the answer's caller (the same principal, with the scopes of
    /// its current token) and against the tool as it is registered now: whether it takes edits
    /// and which key an "always" answer is kept under are read from today's definition.
    pub async fn resume(&self, answer: ApprovalAnswer) -> Result<ToolExecutionResult, ResumeError> {
        match self.resume_as(answer, false).await? {
            Deferred::Settled(result) => Ok(result),
            // Only a deferring resume leaves a program waiting.
            other => Ok(ToolExecutionResult::failure(ToolError::new(format!(
                "internal error: an inline resume settled as {other:?}"
            )))),
        }
    }

    /// [`resume`](Self::resume) in deferred mode, as [`TurnScheduler::resume`] does: when the
    /// answered call is a `run_code` call, a call its program makes that asks does not wait
    /// either, and the call settles as [`Deferred::Program`] (answer it with
    /// [`resume_program`](Self::resume_program)).
    ///
    /// [`TurnScheduler::resume`]: crate::schedule::TurnScheduler::resume
    pub async fn resume_deferred(&self, answer: ApprovalAnswer) -> Result<Deferred, ResumeError> {
        self.resume_as(answer, true).await
    }

    async fn resume_as(
        &self,
        answer: ApprovalAnswer,
        defer: bool,
    ) -> Result<Deferred, ResumeError> {
        let pending = self.claim_answered(&answer, None).await?;
        let id = pending.id.clone();
        let caller = answer.caller.or(pending.caller.clone());
        let settled = self
            .continue_approved(pending, answer.outcome, caller, answer.signal, defer)
            .await;
        self.forget_claimed(&id).await;
        Ok(settled)
    }

    /// The checks of [`resume`](Self::resume) and the claim: the approval `answer` answers,
    /// claimed. `program` is the `run_code` call whose program the approval must belong to
    /// (`None`: to none).
    pub(crate) async fn claim_answered(
        &self,
        answer: &ApprovalAnswer,
        program: Option<&str>,
    ) -> Result<PendingApproval, ResumeError> {
        let id = answer.approval_id.clone();
        // Ours are 32 hex digits: anything else is unknown without asking the store.
        if id.len() != 32 || !id.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(ResumeError::Unknown(id));
        }
        let store = self.approval_store();
        let Some(found) = store.get(&id).await? else {
            return Err(ResumeError::Unknown(id));
        };
        match (found.program.as_deref(), program) {
            (Some(_), None) => return Err(ResumeError::InProgram(id)),
            (found, wanted) if found != wanted => return Err(ResumeError::Unknown(id)),
            _ => {}
        }
        if found.agent != answer.agent {
            return Err(ResumeError::WrongAgent {
                id,
                agent: answer.agent.to_string(),
            });
        }
        let same_caller = match (&found.caller, &answer.caller) {
            (None, _) => true,
            (Some(asked), Some(answering)) => asked.same_principal(answering),
            (Some(_), None) => false,
        };
        if !same_caller {
            return Err(ResumeError::WrongCaller(id));
        }
        if found.claimed {
            return Err(ResumeError::AlreadyAnswered(id));
        }
        if answer.signal.is_cancelled() {
            return Err(ResumeError::Cancelled(id));
        }
        let Some(pending) = store.claim(&id).await? else {
            return Err(ResumeError::AlreadyAnswered(id));
        };
        if pending.id != id || pending.agent != found.agent || pending.program != found.program {
            return Err(ResumeError::Store(ApprovalStoreError::Unavailable(
                format!("the store gave out another approval when {id} was claimed"),
            )));
        }
        Ok(pending)
    }

    /// Removes a claimed approval whose call settled (or never will run).
    pub(crate) async fn forget_claimed(&self, id: &str) {
        if let Err(e) = self.approval_store().remove(id).await {
            // Claimed, so never run again; left for an operator to see in the listing.
            tracing::warn!("approval {id}: its call settled, but the store kept it: {e}");
        }
    }

    async fn continue_approved(
        &self,
        pending: PendingApproval,
        outcome: ApprovalOutcome,
        caller: Option<Caller>,
        signal: tokio_util::sync::CancellationToken,
        defer: bool,
    ) -> Deferred {
        let PendingApproval {
            call_id,
            root_call_id,
            tool,
            arguments,
            agent,
            ..
        } = pending;
        let mut input =
            ToolExecutionInput::new(call_id, tool, arguments, signal).agent(agent.clone());
        input.caller = caller.map(Arc::new);
        if let Some(root) = root_call_id {
            input = input.root_call_id(root);
        }
        self.continue_claimed_as(agent, outcome, input, defer).await
    }

    /// Runs `input`, the call of a claimed approval asked for `agent`, with `outcome` as the
    /// answer to its `ask`: every stage after the approval (never pre-execute again: it asked).
    pub(crate) async fn continue_claimed(
        &self,
        agent: crate::call::AgentId,
        outcome: ApprovalOutcome,
        input: ToolExecutionInput,
    ) -> ToolExecutionResult {
        match self.continue_claimed_as(agent, outcome, input, false).await {
            Deferred::Settled(result) => result,
            other => ToolExecutionResult::failure(ToolError::new(format!(
                "internal error: an inline resume settled as {other:?}"
            ))),
        }
    }

    /// [`continue_claimed`](Self::continue_claimed); with `defer`, a `run_code` call's program
    /// defers its own asks (and may settle as [`Deferred::Program`]).
    async fn continue_claimed_as(
        &self,
        agent: crate::call::AgentId,
        outcome: ApprovalOutcome,
        input: ToolExecutionInput,
        defer: bool,
    ) -> Deferred {
        let mut call = match self.create(input) {
            Stage::Dispatch(call) => call,
            done => return Deferred::Settled(self.complete(done).await),
        };
        if defer {
            call.exec.run.defer_asks();
        }
        if call.exec.signal.is_cancelled() {
            let aborted = failure(ToolError::aborted_before_dispatch());
            return Deferred::Settled(self.complete(Stage::Final(call, aborted)).await);
        }
        // Today's definition decides what the answer may do.
        let (grant, editable) = super::approval::grant_and_edits(&call, Some(&agent));
        let stage = match self
            .apply_outcome(&mut call, outcome, grant, editable)
            .await
        {
            Ok(Some(decision)) => self.admit(call, decision),
            Ok(None) => Stage::Post(call, failure(ToolError::aborted_before_dispatch())),
            Err(e) => Stage::Final(call, failure(e)),
        };
        self.run_prepared_deferred(stage).await
    }
}

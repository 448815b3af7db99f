//! Code Mode in deferred mode: a `run_code` call whose program made a call that asks settles as
//! a [`PendingProgram`] (no post-execute, finalizer or observer sees the stopped run), and
//! [`Registry::resume_program`] runs the program again with the answer (the replay is
//! `run_code::replay`'s).

use super::{Stage, failure};
use crate::call::{
    ApprovalAnswer, Deferred, PendingProgram, PreToolDecision, ResumeError, RunState,
    ToolExecutionInput,
};
use crate::registry::{RUN_CODE, Registry};
use crate::run_code::replay::Replay;
use std::sync::Arc;

impl Registry {
    /// Dispatches a prepared call and settles it: as a [`PendingProgram`] when it is a
    /// `run_code` call whose program stopped at a call that asks, else to its result.
    pub(crate) async fn run_prepared_deferred(&self, stage: Stage) -> Deferred {
        let stage = match stage {
            Stage::Dispatch(call) => self.dispatch(call).await,
            other => other,
        };
        match Self::stopped_program(&stage) {
            Some(program) => Deferred::Program(program),
            None => Deferred::Settled(self.complete(stage).await),
        }
    }

    /// The program a dispatched `run_code` call left when it stopped, if it did.
    pub(crate) fn stopped_program(stage: &Stage) -> Option<PendingProgram> {
        match stage {
            Stage::Post(call, _) | Stage::Final(call, _) => {
                RunState::take::<PendingProgram>(&call.exec.run.stopped)
            }
            _ => None,
        }
    }

    /// Answers the approval a stopped `run_code` program waits for, and runs the program again
    /// (Code Mode, deferred mode): its calls before the waiting one are answered from
    /// [`PendingProgram::journal`] (never run again), the waiting call runs with the answer
    /// (as [`resume`](Self::resume) runs a call: grants kept, edits validated, guards, wrappers,
    /// body, post-execute, finalizer, observers), and the calls after it run as in any run.
    ///
    /// Settles as [`Deferred::Settled`] with the `run_code` result, or as
    /// [`Deferred::Program`] again when a later call asks. The `run_code` call's own
    /// pre-execute hooks do not run again (they allowed it), its guards do. The approval is
    /// claimed first, so a program is resumed once: a second answer is
    /// [`ResumeError::AlreadyAnswered`] before anything is replayed. A replay that makes
    /// another call than before (a program that reads the clock or draws random numbers) fails
    /// the `run_code` call with `CODE_RUN_FAILED`, saying which call differed; nothing after it
    /// runs, and the approved call never does.
    ///
    /// ```
    /// # #[cfg(feature = "quickjs")]
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// use dsh_tools::pipeline::{ApprovalAnswer, Deferred};
    /// use dsh_tools::{ApprovalOutcome, CancellationToken, OutputDecl, PreToolDecision, Registry};
    /// use dsh_tools::{ToolDefinition, ToolExecution, ToolExecutionInput};
    /// use serde_json::json;
    /// use std::sync::Arc;
    ///
    /// let registry = Registry::new();
    /// let echo = |name: &str| ToolDefinition::new(name, "echoes", json!({"type": "object"}),
    ///     OutputDecl::json(json!({})), |args, _| async move { Ok((*args).clone()) });
    /// registry.register(echo("read")).unwrap().keep();
    /// registry.register(echo("write")).unwrap().keep();
    /// registry.on_pre_execute(|e: Arc<ToolExecution>, _next| async move {
    ///     Ok(if e.name() == "write" { PreToolDecision::ask_user() } else { PreToolDecision::Allow })
    /// }).keep();
    /// let engine = dsh_tools::code::quickjs::QuickJsRuntime::new(Default::default()).unwrap();
    /// registry.set_code_runtime(engine);
    /// registry.set_presentation_mode(dsh_tools::PresentationMode::Code);
    ///
    /// let code = "const a = await tools.read({n: 1}); const b = await tools.write({n: 2}); return [a.n, b.n];";
    /// let input = ToolExecutionInput::new("c1", "run_code",
    ///     json!({"code": code, "description": "read then write"}), CancellationToken::new()).agent("coder");
    /// let Deferred::Program(program) = registry.execute_deferred(input).await else { panic!() };
    /// assert_eq!(program.approval.tool, "write");
    /// assert_eq!(program.journal.len(), 1, "the read ran, and is not run again");
    /// // Later, maybe in another process (the program is serializable):
    /// let answer = ApprovalAnswer::new(&program.approval.id, ApprovalOutcome::AllowedOnce, "coder");
    /// let Deferred::Settled(result) = registry.resume_program(program, answer).await.unwrap() else { panic!() };
    /// assert_eq!(result.value().unwrap()["result"], json!([1, 2]));
    /// # });
    /// ```
    pub async fn resume_program(
        &self,
        program: PendingProgram,
        answer: ApprovalAnswer,
    ) -> Result<Deferred, ResumeError> {
        if answer.approval_id != program.approval.id {
            return Err(ResumeError::Unknown(answer.approval_id));
        }
        let claimed = self.claim_answered(&answer, Some(&program.call_id)).await?;
        let id = claimed.id.clone();
        let agent = claimed.agent.clone();
        // The waiting call runs for whoever answered (as `resume` runs a call); the program
        // and its other calls for whoever made it: the same principal with their current
        // token, or nobody when nobody was (an answerer's scopes never reach calls they did
        // not see).
        let caller = answer.caller.clone().or_else(|| claimed.caller.clone());
        let program_caller = claimed.caller.as_ref().and(caller.clone());
        let mut input = ToolExecutionInput::new(
            program.call_id,
            RUN_CODE,
            program.arguments,
            answer.signal.clone(),
        )
        .agent(agent);
        input.caller = program_caller.map(Arc::new);
        if let Some(root) = program.root_call_id {
            input = input.root_call_id(root);
        }
        let replay = Replay {
            journal: program.journal,
            waiting: program.waiting,
            approval: claimed,
            outcome: answer.outcome,
            caller,
        };
        let settled = match self.create(input) {
            Stage::Dispatch(call) => {
                call.exec.run.defer_asks();
                RunState::put(&call.exec.run.replay, replay);
                if call.exec.signal.is_cancelled() {
                    let aborted = failure(crate::error::ToolError::aborted_before_dispatch());
                    Deferred::Settled(self.complete(Stage::Final(call, aborted)).await)
                } else {
                    let stage = self.admit(call, PreToolDecision::Allow);
                    self.run_prepared_deferred(stage).await
                }
            }
            done => Deferred::Settled(self.complete(done).await),
        };
        // The waiting call ran, or never will: its approval is done with.
        self.forget_claimed(&id).await;
        Ok(settled)
    }
}

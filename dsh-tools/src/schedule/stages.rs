//! The registry as a `run_code` run's stages (Code Mode spec §4.4): how the bridge classifies,
//! prepares, dispatches and commits a program's sub-calls through the pipeline.

use super::classify::ExecutionMode;
use crate::call::{AgentId, ToolExecutionInput, ToolExecutionResult};
use crate::pipeline::{PendingApproval, Stage};
use crate::registry::Registry;

/// The bridge of a `run_code` run schedules its sub-calls on the registry's stages (Code Mode
/// spec §4.4).
impl crate::run_code::lane::Stages for Registry {
    type Started = Stage;

    fn parallel(&self, input: &ToolExecutionInput) -> bool {
        self.mode_of(input) == ExecutionMode::Parallel
    }

    fn start(&self, input: ToolExecutionInput) -> crate::call::BoxFuture<Stage> {
        let registry = self.clone();
        Box::pin(async move { registry.prepare(input).await })
    }

    fn start_deferred(
        &self,
        input: ToolExecutionInput,
        program: String,
    ) -> crate::call::BoxFuture<Stage> {
        let registry = self.clone();
        Box::pin(async move { registry.prepare_in_program(input, program).await })
    }

    fn pending(started: Stage) -> Result<Box<PendingApproval>, Stage> {
        match started {
            Stage::Pending(approval) => Ok(approval),
            other => Err(other),
        }
    }

    fn resume_claimed(
        &self,
        agent: AgentId,
        outcome: crate::call::ApprovalOutcome,
        input: ToolExecutionInput,
    ) -> crate::call::BoxFuture<ToolExecutionResult> {
        let registry = self.clone();
        Box::pin(async move { registry.continue_claimed(agent, outcome, input).await })
    }

    fn dispatches(started: &Stage) -> bool {
        matches!(started, Stage::Dispatch(_))
    }

    fn dispatch(&self, started: Stage) -> crate::call::BoxFuture<Stage> {
        let registry = self.clone();
        Box::pin(async move {
            match started {
                Stage::Dispatch(call) => registry.dispatch(call).await,
                settled => settled,
            }
        })
    }

    fn commit(&self, started: Stage) -> crate::call::BoxFuture<ToolExecutionResult> {
        let registry = self.clone();
        Box::pin(async move { registry.complete(started).await })
    }

    fn record(&self, agent: &AgentId, record: &crate::code::CodeDispatchRecord) {
        self.record_code_dispatch(agent, record);
    }

    fn max_parallel(&self) -> usize {
        self.max_parallel_sub_calls()
    }

    fn placements(&self) -> std::sync::Arc<crate::run_code::placement::Placements> {
        std::sync::Arc::clone(&self.inner.placements)
    }

    fn program_view(
        &self,
        started: Option<&Stage>,
        name: &str,
        agent: Option<&AgentId>,
    ) -> Option<crate::definition::ProgramValueFn> {
        match started.and_then(Stage::tool) {
            Some(tool) => tool.definition().program_view().cloned(),
            None => self.get(name, agent)?.definition().program_view().cloned(),
        }
    }
}

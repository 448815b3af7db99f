//! A deferred turn: every call's result, pending approval, stopped program or task, in model
//! order; serializable, to be kept while a person decides or a task runs.

use crate::call::ToolExecutionResult;
use crate::pipeline::{Deferred, PendingApproval, PendingProgram, ResumeError};
use crate::task::TaskRecord;

/// One call of a deferred turn, in model order.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(tag = "state", rename_all = "camelCase")]
#[allow(clippy::large_enum_variant)]
pub enum TurnCall {
    /// It ran (or failed) to the end.
    Settled {
        /// Its result.
        result: ToolExecutionResult,
    },
    /// It waits for an answer.
    Pending {
        /// What it waits for.
        approval: PendingApproval,
    },
    /// A `run_code` call whose program waits for an answer (Code Mode): the approval is
    /// `program.approval`, and resuming runs the program again
    /// ([`Registry::resume_program`](crate::Registry::resume_program)).
    Program {
        /// The stopped program.
        program: PendingProgram,
    },
    /// It runs as a task ([`TurnScheduler::run_detached`]): collect its result with
    /// [`TurnScheduler::collect`] (or the scheduler's [`Tasks`](crate::task::Tasks)) once it
    /// has ended.
    ///
    /// [`TurnScheduler::run_detached`]: crate::schedule::TurnScheduler::run_detached
    /// [`TurnScheduler::collect`]: crate::schedule::TurnScheduler::collect
    Task {
        /// The task as started.
        task: TaskRecord,
    },
}

impl From<Deferred> for TurnCall {
    fn from(deferred: Deferred) -> Self {
        match deferred {
            Deferred::Settled(result) => Self::Settled { result },
            Deferred::Pending(approval) => Self::Pending { approval },
            Deferred::Program(program) => Self::Program { program },
        }
    }
}

/// A turn run with [`TurnScheduler::run_deferred`]: every call's result or pending approval,
/// in model order. Serializable, to be kept while a person decides.
///
/// [`TurnScheduler::run_deferred`]: crate::schedule::TurnScheduler::run_deferred
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct DeferredTurn {
    /// The calls, in model order.
    pub calls: Vec<TurnCall>,
}

impl DeferredTurn {
    /// The approvals still pending, in model order.
    pub fn pending(&self) -> impl Iterator<Item = &PendingApproval> {
        self.calls.iter().filter_map(|c| match c {
            TurnCall::Pending { approval } => Some(approval),
            TurnCall::Program { program } => Some(&program.approval),
            TurnCall::Settled { .. } | TurnCall::Task { .. } => None,
        })
    }

    /// The tasks still running (as last read), in model order.
    pub fn tasks(&self) -> impl Iterator<Item = &TaskRecord> {
        self.calls.iter().filter_map(|c| match c {
            TurnCall::Task { task } => Some(task),
            _ => None,
        })
    }

    /// Every call's result, in model order, once none is pending or running as a task.
    pub fn results(&self) -> Option<Vec<ToolExecutionResult>> {
        self.calls
            .iter()
            .map(|c| match c {
                TurnCall::Settled { result } => Some(result.clone()),
                TurnCall::Pending { .. } | TurnCall::Program { .. } | TurnCall::Task { .. } => None,
            })
            .collect()
    }
}

/// Why [`TurnScheduler::resume`] did not apply every answer, with the turn as far as it got.
///
/// [`TurnScheduler::resume`]: crate::schedule::TurnScheduler::resume
#[derive(Debug, thiserror::Error)]
#[error("{} answer(s) of the turn were not applied; the first: {}", errors.len(), errors.first().map(ToString::to_string).unwrap_or_default())]
pub struct TurnResumeError {
    /// The turn, with every answer that was applied.
    pub turn: DeferredTurn,
    /// One per answer not applied.
    pub errors: Vec<ResumeError>,
}

//! The call layer: the data and contracts of one tool call, below everything that runs one.
//!
//! What a call is ([`ToolExecutionInput`], [`ToolExecution`], its [`ExecutionToken`], its
//! [`Signal`]), what a body sees ([`ToolRunContext`]), what comes back
//! ([`ToolExecutionResult`]), the decisions hooks make, and the hook and guard traits. It
//! imports neither the registry nor the pipeline: [`definition`](crate::definition) builds on
//! it, the registry stores its hooks, and the pipeline runs a call through them. Every item is
//! re-exported from [`pipeline`](crate::pipeline), its public home.

mod approver;
mod caller;
mod decision;
mod execution;
mod future;
mod grant;
mod hooks;
mod pending;
mod repair;
mod result;
mod task;

#[cfg_attr(not(feature = "mcp"), allow(unused_imports))]
pub(crate) use approver::{Asked, CallApproval, CallApprover, CallAsk};
pub use caller::{Caller, ScopeRules};
pub use decision::{
    ApprovalOutcome, ApprovalRequest, ApprovalService, PostToolDecision, PreToolDecision,
};
pub(crate) use execution::RunState;
pub use execution::{
    AgentId, ExecutionToken, Progress, ProgressSink, Signal, ToolExecution, ToolExecutionInput,
    ToolRunContext,
};
pub use future::{BoxFuture, HookResult};
pub(crate) use grant::Grants;
pub use grant::{ArgumentMatch, Grant, GrantDecision, GrantKey, GrantPolicy, MatchRule, Principal};
pub(crate) use hooks::{Dispatch, DynPostHook, DynPreHook, contained};
pub use hooks::{
    ExecuteCall, ExecuteNext, ExecuteWrapper, Guard, PostExecuteHook, PostNext, PreExecuteHook,
    PreNext, ResultObserver,
};
pub use pending::{
    ApprovalAnswer, ApprovalPage, ApprovalStore, ApprovalStoreError, Deferred, MemoryApprovalStore,
    PendingApproval, PendingProgram, ReplayedCall, ResumeError,
};
pub(crate) use pending::{approval_id, now_ms};
pub use repair::{InvalidCall, Repair, RepairHook};
pub use result::ToolExecutionResult;
pub(crate) use result::{Outcome, ResultData};
pub use task::TaskSupport;

//! Concurrency classification and the turn scheduler (spec §7).
//!
//! One model turn's calls run in model order: consecutive calls the registry classifies as
//! [`ExecutionMode::Parallel`] form a group that runs in a rolling pool of bounded width; an
//! [`ExecutionMode::Exclusive`] call runs alone, a barrier between groups. Policy (`prepare`:
//! pre-execute, approval, guards) runs in model order; only dispatches overlap; results are
//! committed (post-execute, finalizer, observers) in model order.
//!
//! With [`Tasks`](crate::task::Tasks), [`TurnScheduler::run_detached`] leaves a parallel call
//! whose tool may run as a task running and goes on with the turn; an exclusive call waits for
//! the turn's tasks to end first (it runs alone, tasks included).

mod classify;
mod scheduler;
mod stages;
mod turn;

pub use classify::ExecutionMode;
pub use scheduler::TurnScheduler;
pub use turn::{DeferredTurn, TurnCall, TurnResumeError};

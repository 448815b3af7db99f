//! Long-running calls as tasks: started, left to run detached, polled and collected later.
//!
//! A build, a test suite, a crawl: a call that takes minutes should not hold its caller.
//! [`Tasks::start`] runs a call's policies first (pre-execute, approval, guards: a task never
//! starts unapproved), then keeps a [`TaskRecord`] in a [`TaskStore`] and runs the rest of the
//! pipeline (the body, post-execute, `finalize_content`, the observers, each once) detached,
//! with a cancellation of its own. Anyone holding the task's id and the same owner can
//! [`get`](Tasks::get) it, [`wait`](Tasks::wait) for it, [`cancel`](Tasks::cancel) it or
//! [`list`](Tasks::list) theirs. The MCP server answers `tasks/*` with it (feature `mcp`).
//!
//! ```
//! use dsh_tools::task::{Started, TaskStatus, TaskSupport, Tasks};
//! use dsh_tools::{CancellationToken, OutputDecl, Registry, ToolDefinition, ToolExecutionInput};
//! use serde_json::json;
//!
//! # tokio::runtime::Runtime::new().unwrap().block_on(async {
//! let registry = Registry::new();
//! registry.register(ToolDefinition::new("build", "Builds the project", json!({"type": "object"}),
//!     OutputDecl::text(), |_, _| async { Ok(json!("built")) })
//!     .task_support(TaskSupport::Optional)).unwrap();
//! let tasks = Tasks::new(&registry);
//! let input = ToolExecutionInput::new("c1", "build", json!({}), CancellationToken::new());
//! let Started::Task(task) = tasks.start(input, None).await else { panic!("not a task") };
//! assert_eq!(task.status, TaskStatus::Working);
//! let done = tasks.wait(&task.id, None, &CancellationToken::new()).await.unwrap();
//! assert_eq!(done.status, TaskStatus::Completed);
//! assert_eq!(done.result.unwrap().text(), "built");
//! # });
//! ```
//!
//! **Fleets.** With a shared store (`durable::RedisTaskStore`, feature `redis`) any instance
//! answers for any task; the body runs where it started. That instance renews the task's
//! lease while the body runs and reads cancellations asked elsewhere when it does; if it dies,
//! the lease passes and the next read settles the task `failed`, saying so: a task is never
//! `working` forever.

mod record;
mod run;
mod store;

pub use crate::call::TaskSupport;
pub use record::{TaskRecord, TaskStatus};
pub use run::{Started, TaskConfig, TaskError, Tasks};
pub use store::{MemoryTaskStore, TaskPage, TaskStore, TaskStoreError};

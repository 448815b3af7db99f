//! What a task is, as a store keeps it: its status, its progress, its result once settled.

use crate::call::{Progress, ToolExecutionResult};
use serde::{Deserialize, Serialize};

/// Where a task is in its life (MCP's task status). `completed`, `failed` and `cancelled` are
/// terminal: a task never leaves them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum TaskStatus {
    /// The body is running.
    Working,
    /// The task waits for input from its caller.
    InputRequired,
    /// The call settled; its result (a failure too: `is_error`) is in the record.
    Completed,
    /// The task ended without a result of its tool: the instance running it stopped, or its
    /// result could not be kept.
    Failed,
    /// The task was cancelled before it settled.
    Cancelled,
}

impl TaskStatus {
    /// Whether the task has ended (`completed`, `failed` or `cancelled`).
    pub fn is_terminal(self) -> bool {
        matches!(self, Self::Completed | Self::Failed | Self::Cancelled)
    }

    /// The name MCP gives it (`working`, `input_required`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Working => "working",
            Self::InputRequired => "input_required",
            Self::Completed => "completed",
            Self::Failed => "failed",
            Self::Cancelled => "cancelled",
        }
    }
}

/// One task as a [`TaskStore`](super::TaskStore) keeps it. Serializable: a store may keep it
/// as JSON.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct TaskRecord {
    /// The task's id (128 random bits as hex).
    pub id: String,
    /// The tool the task runs.
    pub tool: String,
    /// The model's (or client's) call id.
    pub call_id: String,
    /// Who started it (the caller's subject; `None`: an unauthenticated caller). Only the same
    /// owner sees the task.
    pub owner: Option<String>,
    /// Where the task is.
    pub status: TaskStatus,
    /// A line for a person about the status.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status_message: Option<String>,
    /// The body's latest progress report.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub progress: Option<Progress>,
    /// When the task was created, in milliseconds since the Unix epoch.
    pub created_at_ms: u64,
    /// When the record last changed, in milliseconds since the Unix epoch.
    pub updated_at_ms: u64,
    /// How long the task is kept once it has ended, in milliseconds (a running task is kept
    /// until it ends); `None`: until removed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttl_ms: Option<u64>,
    /// How often a caller should poll, in milliseconds.
    pub poll_interval_ms: u64,
    /// Until when the instance running the body vouches for it, in milliseconds since the Unix
    /// epoch. It renews the lease while the body runs; a working task whose lease passed is
    /// read as failed (its instance stopped).
    pub lease_until_ms: u64,
    /// The call's result, once settled (`completed`; the abort for `cancelled`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<ToolExecutionResult>,
    /// Incremented by every change: a store replaces a record only over the version it read.
    pub version: u64,
}

impl TaskRecord {
    /// When the record may be forgotten: `ttl_ms` after the task ended (its last change), so
    /// a task that ran longer than its TTL still leaves its result that long.
    pub fn expires_at_ms(&self) -> Option<u64> {
        if !self.status.is_terminal() {
            return None;
        }
        self.ttl_ms
            .map(|ttl| self.updated_at_ms.saturating_add(ttl))
    }

    /// Whether it may be forgotten at `now_ms`.
    pub fn is_expired(&self, now_ms: u64) -> bool {
        self.expires_at_ms().is_some_and(|at| at <= now_ms)
    }

    /// Whether `owner` may see it.
    pub fn is_owned_by(&self, owner: Option<&str>) -> bool {
        self.owner.as_deref() == owner
    }
}

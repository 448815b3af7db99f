//! A remote call the server answered with a task (the 2026-07-28 extension
//! `io.modelcontextprotocol/tasks`): polled with `tasks/get` at the server's interval (within
//! [`ImportLimits`]) until it ends, its status messages reported as the call's progress, its
//! questions (`input_required`) put to our person and answered with `tasks/update`, and
//! cancelled with `tasks/cancel` when our call is (its signal, or
//! [`task_timeout`](ImportLimits::task_timeout)).

use super::options::ImportLimits;
use crate::call::ToolRunContext;
use crate::error::ToolError;
use rmcp::model::{
    CallToolResult, CancelTaskParams, CreateTaskResult, ErrorData, GetTaskParams, TaskPayload,
    UpdateTaskParams,
};
use rmcp::service::ServiceError;
use rmcp::{Peer, RoleClient};
use serde_json::Value;
use std::time::Duration;

/// The most `input_required` rounds one task answers (as for a call's own rounds).
const MAX_ROUNDS: usize = rmcp::model::DEFAULT_MRTR_MAX_ROUNDS;

/// Waits for the remote task `created` of the call `run` on `peer`: its result (or the error
/// it failed with, as the server put it), or our own failure (cancelled, too long, the server
/// gone quiet).
pub(super) async fn await_task(
    peer: &Peer<RoleClient>,
    created: CreateTaskResult,
    run: &ToolRunContext,
    limits: &ImportLimits,
) -> Result<Result<CallToolResult, ServiceError>, ToolError> {
    let id = created.task.task_id.clone();
    // Until the task has ended, leaving (our signal, the deadline, an error) cancels it.
    let mut pending = Pending {
        peer: peer.clone(),
        id: Some(id.clone()),
    };
    let deadline = tokio::time::Instant::now() + limits.task_timeout;
    let mut interval = limits.poll_interval(created.task.poll_interval_ms);
    let mut said = created.task.status_message.clone();
    let mut reported = 0.0;
    let mut rounds = 0;
    loop {
        tokio::select! {
            () = tokio::time::sleep(interval) => {}
            () = run.signal().cancelled() => return Err(ToolError::aborted()),
            () = tokio::time::sleep_until(deadline) => return Err(too_long(limits)),
        }
        let read = tokio::select! {
            read = tokio::time::timeout(limits.request_timeout, peer.get_task(GetTaskParams::new(id.clone()))) => read,
            () = run.signal().cancelled() => return Err(ToolError::aborted()),
        };
        let got = match read {
            Ok(Ok(got)) => got,
            Ok(Err(e)) => return Ok(Err(e)),
            Err(_) => {
                return Err(ToolError::coded(
                    "McpError",
                    "MCP_TIMEOUT",
                    format!(
                        "the MCP server did not answer tasks/get within {:?} (ImportLimits::request_timeout)",
                        limits.request_timeout
                    ),
                ));
            }
        };
        let task = got.task;
        interval = limits.poll_interval(task.task.poll_interval_ms);
        if task.task.status_message.is_some() && task.task.status_message != said {
            said.clone_from(&task.task.status_message);
            reported += 1.0;
            run.report_progress(reported, None, said.as_deref());
        }
        match task.payload {
            TaskPayload::Working => {}
            TaskPayload::InputRequired { input_requests } => {
                rounds += 1;
                if rounds > MAX_ROUNDS {
                    return Err(ToolError::coded(
                        "McpError",
                        "MCP_PROTOCOL_ERROR",
                        format!(
                            "the MCP server's task asked for input more than {MAX_ROUNDS} times"
                        ),
                    ));
                }
                let responses = super::asks::respond_all(peer, input_requests, run).await?;
                let update = UpdateTaskParams::new(id.clone(), responses);
                if let Err(e) = peer.update_task(update).await {
                    return Ok(Err(e));
                }
                // The answer is taken up by the server: read again soon.
                interval = limits.poll_interval(Some(0));
            }
            TaskPayload::Completed { result } => {
                pending.id = None;
                return serde_json::from_value::<CallToolResult>(Value::Object(result))
                    .map(Ok)
                    .map_err(|e| {
                        ToolError::coded(
                            "McpError",
                            "MCP_PROTOCOL_ERROR",
                            format!("the MCP server's task result is no tools/call result: {e}"),
                        )
                    });
            }
            TaskPayload::Failed { error } => {
                pending.id = None;
                let error = serde_json::from_value::<ErrorData>(Value::Object(error))
                    .unwrap_or_else(|e| {
                        ErrorData::internal_error(
                            format!("the task failed with an error this client cannot read: {e}"),
                            None,
                        )
                    });
                return Ok(Err(ServiceError::McpError(error)));
            }
            TaskPayload::Cancelled => {
                pending.id = None;
                return Err(ToolError::coded(
                    "AbortError",
                    crate::error::codes::ABORTED,
                    "the MCP server cancelled the task this call ran as",
                ));
            }
            _ => {}
        }
    }
}

fn too_long(limits: &ImportLimits) -> ToolError {
    ToolError::coded(
        "McpError",
        "MCP_TIMEOUT",
        format!(
            "the MCP server's task did not end within {:?} (ImportLimits::task_timeout); it was cancelled",
            limits.task_timeout
        ),
    )
}

/// A remote task not seen to end: cancelled (`tasks/cancel`, in the background) when dropped.
struct Pending {
    peer: Peer<RoleClient>,
    id: Option<String>,
}

impl Drop for Pending {
    fn drop(&mut self) {
        let Some(id) = self.id.take() else {
            return;
        };
        let peer = self.peer.clone();
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn(async move {
                if let Err(e) = peer.cancel_task(CancelTaskParams::new(id.clone())).await {
                    tracing::debug!("MCP import: tasks/cancel of {id} failed: {e}");
                }
            });
        }
    }
}

impl ImportLimits {
    /// The wait before the next `tasks/get`: the server's interval (`None`: one second) within
    /// [`min_poll_interval`](Self::min_poll_interval) and
    /// [`max_poll_interval`](Self::max_poll_interval).
    pub(super) fn poll_interval(&self, server_ms: Option<u64>) -> Duration {
        let asked = server_ms.map_or(Duration::from_secs(1), Duration::from_millis);
        asked.clamp(
            self.min_poll_interval,
            self.max_poll_interval.max(self.min_poll_interval),
        )
    }
}

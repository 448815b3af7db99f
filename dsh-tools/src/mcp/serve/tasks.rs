//! MCP tasks on the server, as the 2026-07-28 extension `io.modelcontextprotocol/tasks`
//! (SEP-2663) defines them: a call of a tool that runs as a task
//! ([`TaskSupport`](crate::task::TaskSupport)), from a client that declared the extension on
//! that request, is answered `resultType: "task"`; `tasks/get` reads it (the result inline
//! once completed), `tasks/update` takes input (none is asked yet: acknowledged), and
//! `tasks/cancel` cancels it. A task is its caller's: another authorization subject gets
//! `-32602 unknown task`, as for an id that never was.

use crate::call::{AgentId, CallApproval, ToolExecutionInput, ToolExecutionResult};
use crate::mcp::map;
use crate::task::{Started, TaskError, TaskRecord, TaskStatus, TaskSupport, Tasks};
use rmcp::model::{
    CreateTaskResult, DetailedTask, ErrorData, GetTaskResult, JsonObject, Task, TaskPayload,
};
use serde_json::Value;

/// How a call is run.
pub(super) enum Route<'a> {
    /// In place, as always.
    InPlace,
    /// As a task of these tasks, kept `ttl` (2025-11-25: the `task` param's; `legacy`: a
    /// task is the answer even for a call that settles at once).
    Task {
        tasks: &'a Tasks,
        ttl: Option<std::time::Duration>,
        legacy: bool,
    },
}

/// What the request asked of tasks.
pub(super) enum Asked {
    /// 2026-07-28: whether the request declared the extension.
    Modern(bool),
    /// Below 2026-07-28: whether the call was task-augmented (2025-11-25), with its TTL.
    Legacy(Option<Option<std::time::Duration>>),
}

impl Asked {
    /// What the request `cx` (of 2026-07-28 when `modern`) asked; `task`: the 2025-11-25
    /// `task` param's TTL when it had one.
    pub(super) fn of(
        cx: &rmcp::service::RequestContext<rmcp::RoleServer>,
        modern: bool,
        task: Option<Option<std::time::Duration>>,
    ) -> Self {
        match modern {
            true => Self::Modern(cx.client_capabilities().is_some_and(|c| c.supports_tasks())),
            false => Self::Legacy(task),
        }
    }
}

/// What starting a call as a task gave.
pub(super) enum Begun {
    /// The task, for the client.
    Task(Box<CreateTaskResult>),
    /// The call settled without a task (refused, or its tool does not run as one); `None`:
    /// suspended for its approval.
    Settled(Option<ToolExecutionResult>),
}

/// How the call of `name` runs (as `agent` sees it).
///
/// 2026-07-28: as a task when its tool may and the request declared the extension; a tool
/// that runs only as a task refuses a request that did not (`-32021`, naming the capability).
/// 2025-11-25: as a task when the call was task-augmented; `-32601` for a task-augmented call
/// of a tool that never runs as one (the revision's SHOULD) and for a plain call of one that
/// runs only as one (its MUST).
pub(super) fn route<'a>(
    tasks: Option<&'a Tasks>,
    name: &str,
    agent: Option<&AgentId>,
    asked: Asked,
) -> Result<Route<'a>, ErrorData> {
    let Some(tasks) = tasks else {
        return Ok(Route::InPlace);
    };
    let support = tasks.support(name, agent);
    match asked {
        Asked::Modern(_) if !support.allows_task() => Ok(Route::InPlace),
        Asked::Modern(true) => Ok(Route::Task {
            tasks,
            ttl: None,
            legacy: false,
        }),
        Asked::Modern(false) if support == TaskSupport::Required => {
            Err(ErrorData::missing_required_client_capability(
                rmcp::model::ClientCapabilities::builder()
                    .enable_tasks()
                    .build(),
            ))
        }
        Asked::Modern(false) => Ok(Route::InPlace),
        Asked::Legacy(Some(_)) if !support.allows_task() => Err(ErrorData::new(
            rmcp::model::ErrorCode::METHOD_NOT_FOUND,
            format!("Method not found: tool {name} does not run as a task"),
            None,
        )),
        Asked::Legacy(Some(ttl)) => Ok(Route::Task {
            tasks,
            ttl,
            legacy: true,
        }),
        Asked::Legacy(None) if support == TaskSupport::Required => Err(ErrorData::new(
            rmcp::model::ErrorCode::METHOD_NOT_FOUND,
            format!(
                "Method not found: tool {name} runs only as a task (call it with a `task` param)"
            ),
            None,
        )),
        Asked::Legacy(None) => Ok(Route::InPlace),
    }
}

/// Starts `input` as a task of `tasks`, kept `ttl` after it ends. `legacy`: the 2025-11-25
/// request: progress goes on under its token after the answer, and a call that settles at once
/// is kept as a task that ended so (that revision answers a task-augmented call with a task).
pub(super) async fn begin(
    tasks: &Tasks,
    mut input: ToolExecutionInput,
    approval: Option<CallApproval>,
    ttl: Option<std::time::Duration>,
    legacy: Option<&rmcp::service::RequestContext<rmcp::RoleServer>>,
) -> Begun {
    if let Some(cx) = legacy
        && let Some(token) = cx.meta.get_progress_token()
    {
        input = input.progress(super::progress::detached(token, cx.peer.clone()));
    }
    let kept = legacy.map(|_| {
        (
            input.name.clone(),
            input.call_id.clone(),
            input.caller.as_ref().map(|c| c.subject().to_owned()),
        )
    });
    match tasks.start_with(input, ttl, approval).await {
        None => Begun::Settled(None),
        Some(Started::Settled(result)) => match kept {
            None => Begun::Settled(Some(result)),
            Some((tool, call_id, owner)) => {
                match tasks
                    .keep_settled(&tool, &call_id, owner, result.clone(), ttl)
                    .await
                {
                    Ok(task) => {
                        let mut handle = handle(&task);
                        // This revision reads a call that answered `isError: true` as failed.
                        if task
                            .result
                            .as_ref()
                            .is_some_and(ToolExecutionResult::is_error)
                        {
                            handle.status = rmcp::model::TaskStatus::Failed;
                        }
                        Begun::Task(Box::new(CreateTaskResult::new(handle)))
                    }
                    Err(e) => {
                        tracing::warn!("MCP: a settled call could not be kept as a task: {e}");
                        Begun::Settled(Some(result))
                    }
                }
            }
        },
        Some(Started::Task(task)) => Begun::Task(Box::new(CreateTaskResult::new(handle(&task)))),
    }
}

/// `tasks/get` of `owner`'s task `id`.
pub(super) async fn get(
    tasks: Option<&Tasks>,
    id: &str,
    owner: Option<&str>,
) -> Result<GetTaskResult, ErrorData> {
    let tasks = tasks.ok_or_else(|| unknown_task(id))?;
    let task = tasks.get(id, owner).await.map_err(|e| task_error(id, e))?;
    Ok(GetTaskResult::new(detailed(&task)))
}

/// `tasks/update`: no task asks for input yet, so responses are acknowledged and ignored
/// (the extension says unknown keys are ignored); an unknown task is an error.
pub(super) async fn update(
    tasks: Option<&Tasks>,
    id: &str,
    owner: Option<&str>,
) -> Result<(), ErrorData> {
    let tasks = tasks.ok_or_else(|| unknown_task(id))?;
    tasks.get(id, owner).await.map_err(|e| task_error(id, e))?;
    Ok(())
}

/// `tasks/cancel`: acknowledged once the task is cancelled or had ended already.
pub(super) async fn cancel(
    tasks: Option<&Tasks>,
    id: &str,
    owner: Option<&str>,
) -> Result<(), ErrorData> {
    let tasks = tasks.ok_or_else(|| unknown_task(id))?;
    match tasks.cancel(id, owner).await {
        Ok(_) | Err(TaskError::Ended(_)) => Ok(()),
        Err(e) => Err(task_error(id, e)),
    }
}

fn unknown_task(id: &str) -> ErrorData {
    let shown: String = id.chars().take(64).collect();
    ErrorData::invalid_params(format!("unknown task: {shown}"), None)
}

fn task_error(id: &str, e: TaskError) -> ErrorData {
    match e {
        TaskError::NotFound(_) => unknown_task(id),
        other => ErrorData::internal_error(other.to_string(), None),
    }
}

fn status(status: TaskStatus) -> rmcp::model::TaskStatus {
    use rmcp::model::TaskStatus as Wire;
    match status {
        TaskStatus::Working => Wire::Working,
        TaskStatus::InputRequired => Wire::InputRequired,
        TaskStatus::Completed => Wire::Completed,
        TaskStatus::Failed => Wire::Failed,
        TaskStatus::Cancelled => Wire::Cancelled,
    }
}

/// The task's handle: id, status, times, TTL, poll interval.
fn handle(task: &TaskRecord) -> Task {
    let mut handle = Task::new(
        &task.id,
        status(task.status),
        iso8601(task.created_at_ms),
        iso8601(task.updated_at_ms),
    )
    .with_poll_interval_ms(task.poll_interval_ms);
    if let Some(ttl) = task.ttl_ms {
        handle = handle.with_ttl_ms(ttl);
    }
    if let Some(message) = &task.status_message {
        handle = handle.with_status_message(message);
    }
    handle
}

/// The handle with what its status carries: the call's result once completed (as
/// `tools/call` would have answered it), the error once failed.
fn detailed(task: &TaskRecord) -> DetailedTask {
    let payload = match task.status {
        TaskStatus::Completed => {
            let result = task.result.clone().unwrap_or_else(|| {
                ToolExecutionResult::failure(crate::error::ToolError::new(
                    "the task completed without a result",
                ))
            });
            TaskPayload::Completed {
                result: object(&map::call_result(result, true)),
            }
        }
        TaskStatus::Failed => {
            let message = task
                .status_message
                .clone()
                .unwrap_or_else(|| "the task failed".to_owned());
            TaskPayload::Failed {
                error: object(&ErrorData::internal_error(message, None)),
            }
        }
        TaskStatus::Cancelled => TaskPayload::Cancelled,
        TaskStatus::InputRequired => TaskPayload::InputRequired {
            input_requests: Default::default(),
        },
        // `TaskStatus` is non-exhaustive to its users; here every status is known.
        _ => TaskPayload::Working,
    };
    DetailedTask::new(handle(task), payload)
}

fn object(value: &impl serde::Serialize) -> JsonObject {
    match serde_json::to_value(value) {
        Ok(serde_json::Value::Object(map)) => map,
        _ => JsonObject::new(),
    }
}

/// `ms` since the Unix epoch as ISO 8601 in UTC, to the millisecond
/// (`2026-12-06T03:18:12.000Z`): the civil date from days (Howard Hinnant's algorithm).
pub(super) fn iso8601(ms: u64) -> String {
    let secs = ms / 1000;
    let millis = ms % 1000;
    let days = i64::try_from(secs / 86_400).unwrap_or(i64::MAX / 2);
    let rem = secs % 86_400;
    let (hour, minute, second) = (rem / 3600, rem % 3600 / 60, rem % 60);
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!("{year:04}-{month:02}-{day:02}T{hour:02}:{minute:02}:{second:02}.{millis:03}Z")
}

/// [`listen_refusal`] over a message as bytes (read only when it names `taskIds`).
#[cfg(feature = "mcp-http")]
pub(crate) fn listen_refusal_bytes(message: &[u8]) -> Option<String> {
    if !message.windows(9).any(|w| w == b"\"taskIds\"") {
        return None;
    }
    let value = serde_json::from_slice::<Value>(message).ok()?;
    let id = serde_json::to_string(value.get("id")?).ok()?;
    listen_refusal(value.as_object()?, &id)
}

/// The answer to a 2026-07-28 `subscriptions/listen` that asks for task notifications
/// (`notifications.taskIds`) from a client whose request does not declare the extension: the
/// extension's `-32021` naming it (a MUST rmcp, which drops `taskIds`, cannot keep). `id`: the
/// request's id as JSON. `None` for any other message. A declaring client's listen goes on to
/// rmcp, whose acknowledgement names no task ids: this server sends no `notifications/tasks`
/// (a MAY), and its clients poll `tasks/get`.
pub(crate) fn listen_refusal(message: &serde_json::Map<String, Value>, id: &str) -> Option<String> {
    if message.get("method").and_then(Value::as_str) != Some("subscriptions/listen") {
        return None;
    }
    let params = message.get("params")?;
    let asks = params
        .get("notifications")
        .and_then(|n| n.get("taskIds"))
        .and_then(Value::as_array)
        .is_some_and(|ids| !ids.is_empty());
    let declared = params
        .get("_meta")
        .and_then(|m| m.get("io.modelcontextprotocol/clientCapabilities"))
        .and_then(|c| c.get("extensions"))
        .and_then(|e| e.get(rmcp::model::TASKS_EXTENSION_ID))
        .is_some();
    if !asks || declared {
        return None;
    }
    let error = ErrorData::missing_required_client_capability(
        rmcp::model::ClientCapabilities::builder()
            .enable_tasks()
            .build(),
    );
    let error = serde_json::to_string(&error).ok()?;
    Some(format!(
        "{{\"jsonrpc\":\"2.0\",\"id\":{id},\"error\":{error}}}\n"
    ))
}

#[cfg(test)]
mod tests {
    use super::iso8601;

    #[test]
    fn iso8601_is_the_civil_date() {
        assert_eq!(iso8601(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(iso8601(951_782_400_000), "2000-02-29T00:00:00.000Z");
        assert_eq!(iso8601(951_868_799_999), "2000-02-29T23:59:59.999Z");
        assert_eq!(iso8601(1_796_526_000_123), "2026-12-06T03:00:00.123Z");
        assert_eq!(iso8601(4_107_542_400_000), "2100-03-01T00:00:00.000Z");
    }

    #[test]
    fn a_listen_for_task_notifications_needs_the_extension() {
        let listen = |meta: serde_json::Value| {
            let message = serde_json::json!({"jsonrpc": "2.0", "id": 4, "method": "subscriptions/listen",
                "params": {"_meta": meta, "notifications": {"taskIds": ["t1"]}}});
            super::listen_refusal(message.as_object().unwrap(), "4")
        };
        let refused: serde_json::Value =
            serde_json::from_str(&listen(serde_json::json!({})).unwrap()).unwrap();
        assert_eq!(refused["id"], 4);
        assert_eq!(refused["error"]["code"], -32021);
        assert!(refused["error"]["data"]["requiredCapabilities"]["extensions"]
            ["io.modelcontextprotocol/tasks"].is_object(), "{refused}");
        let declared = serde_json::json!({"io.modelcontextprotocol/clientCapabilities":
            {"extensions": {"io.modelcontextprotocol/tasks": {}}}});
        assert_eq!(listen(declared), None);
        let other = serde_json::json!({"jsonrpc": "2.0", "id": 4, "method": "subscriptions/listen",
            "params": {"notifications": {"toolsListChanged": true}}});
        assert_eq!(super::listen_refusal(other.as_object().unwrap(), "4"), None);
    }
}

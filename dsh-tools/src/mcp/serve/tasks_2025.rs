//! MCP tasks as the 2025-11-25 revision defines them (experimental, `basic/utilities/tasks`),
//! for clients below 2026-07-28: the server declares `capabilities.tasks`, lists
//! `execution.taskSupport` on its tools, answers a task-augmented `tools/call` (one with a
//! `task` param) with `CreateTaskResult`, and serves `tasks/get`, `tasks/result` (blocking until
//! the task ends), `tasks/list` and `tasks/cancel`.
//!
//! rmcp 3.11 knows only the 2026-07-28 extension: it drops the `task` param and refuses
//! `tasks/get` and `tasks/cancel` below 2026-07-28. So the transports
//! ([`lines`](super::lines), [`http`](super::http)) hand such requests to rmcp under names of
//! our own ([`rename`]), which reach the server as custom requests ([`serve`]; a call goes on
//! to its `call_tool` marked [`Augmented`]), and
//! add the capability to the `initialize` answer ([`declare`]). A request carrying the
//! 2026-07-28 protocol version in its `_meta` is never renamed.
//!
//! Where this revision and the 2026-07-28 extension differ, the wire follows this revision: a
//! task whose tool answered `isError: true` reads `failed` (its result is still what
//! `tasks/result` answers), `ttl` is in `ttl` (kept at least that long from creation: a task is
//! kept its TTL after it ends), cancelling an ended task is `-32602`. A call refused before its
//! body would have run (a policy, the approval) is still answered with a task, one that ended
//! at once with the refusal as its result, since the client asked for a task.

use super::discovery::caller_of;
use crate::call::AgentId;
use crate::task::{TaskError, TaskRecord, TaskStatus, TaskSupport, Tasks};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CustomRequest, ErrorCode, ErrorData, ProtocolVersion,
};
use rmcp::service::RequestContext;
use rmcp::{RoleServer, ServerHandler};
use serde_json::{Map, Value, json};
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// The name a task-augmented `tools/call` reaches the server under.
pub(super) const CALL: &str = "dsh-tools/2025-11-25/tasks/call";
/// The name `tools/list` reaches the server under (its tools carry `execution`).
pub(super) const LIST_TOOLS: &str = "dsh-tools/2025-11-25/tools/list";
/// The name `tasks/get` reaches the server under.
pub(super) const GET: &str = "dsh-tools/2025-11-25/tasks/get";
/// The name `tasks/cancel` reaches the server under.
pub(super) const CANCEL: &str = "dsh-tools/2025-11-25/tasks/cancel";
/// `tasks/result` and `tasks/list`: rmcp does not know them, they arrive as they are.
pub(super) const RESULT: &str = "tasks/result";
/// See [`RESULT`].
pub(super) const LIST: &str = "tasks/list";

/// The `_meta` key a 2026-07-28 request names its protocol version under.
const PROTOCOL_VERSION_META: &str = "io.modelcontextprotocol/protocolVersion";
/// The `_meta` key `tasks/result` names its task under.
const RELATED_TASK: &str = "io.modelcontextprotocol/related-task";
/// The first revision whose tasks are the extension, not these.
const MODERN: &str = "2026-07-28";
/// Tasks per `tasks/list` page.
const PAGE: usize = 50;

/// Gives a request of a client below 2026-07-28 that rmcp would not serve as this revision
/// defines it the name it reaches the server under; `true` when it did. Only requests (with an
/// `id`) are renamed, and only ones without a 2026-07-28 protocol version in their `_meta`.
pub(crate) fn rename(message: &mut Map<String, Value>) -> bool {
    if !message.contains_key("id") {
        return false;
    }
    let params = message.get("params").and_then(Value::as_object);
    let modern = params
        .and_then(|p| p.get("_meta"))
        .and_then(|m| m.get(PROTOCOL_VERSION_META))
        .and_then(Value::as_str)
        .is_some_and(|v| v >= MODERN);
    if modern {
        return false;
    }
    let renamed = match message.get("method").and_then(Value::as_str) {
        Some("tools/call") if params.is_some_and(|p| p.contains_key("task")) => CALL,
        Some("tools/list") => LIST_TOOLS,
        Some("tasks/get") => GET,
        Some("tasks/cancel") => CANCEL,
        _ => return false,
    };
    message.insert("method".to_owned(), Value::from(renamed));
    true
}

/// [`rename`] over one JSON-RPC message as bytes: the message to send on instead, if renamed.
/// Cheap for the messages it leaves alone (no parse unless a renamed name could be in it).
#[cfg(feature = "mcp-http")]
pub(crate) fn rename_bytes(message: &[u8]) -> Option<Vec<u8>> {
    // `"task` is in every renamed message but `tools/list`: a `tools/call` without it is
    // passed on unread.
    if !contains(message, b"\"task") && !contains(message, b"\"tools/list\"") {
        return None;
    }
    let mut value = serde_json::from_slice::<Value>(message).ok()?;
    rename(value.as_object_mut()?).then(|| serde_json::to_vec(&value).ok())?
}

/// The `tasks` capability an `initialize` answer below 2026-07-28 declares; `list` only
/// where callers are told apart (`list`: the revision says a server that cannot identify
/// requestors should not offer it).
fn capability(list: bool) -> Value {
    let mut tasks = json!({"cancel": {}, "requests": {"tools": {"call": {}}}});
    if list {
        tasks["list"] = json!({});
    }
    tasks
}

/// Adds the `tasks` capability to `message` when it is the answer to an `initialize` below
/// 2026-07-28; `true` when it did.
pub(crate) fn declare(message: &mut Value, list: bool) -> bool {
    let Some(result) = message.get_mut("result").and_then(Value::as_object_mut) else {
        return false;
    };
    let legacy = result
        .get("protocolVersion")
        .and_then(Value::as_str)
        .is_some_and(|v| v < MODERN);
    if !legacy || !result.get("serverInfo").is_some_and(Value::is_object) {
        return false;
    }
    let Some(capabilities) = result
        .get_mut("capabilities")
        .and_then(Value::as_object_mut)
    else {
        return false;
    };
    capabilities.insert("tasks".to_owned(), capability(list));
    true
}

/// [`declare`] over bytes: one JSON message, or an SSE event whose `data:` lines are one
/// (how the Streamable HTTP transport frames it). The bytes to send instead, if changed.
pub(crate) fn declare_bytes(bytes: &[u8], list: bool) -> Option<Vec<u8>> {
    if !contains(bytes, b"\"serverInfo\"") {
        return None;
    }
    let text = std::str::from_utf8(bytes).ok()?;
    if text.trim_start().starts_with('{') {
        let mut value = serde_json::from_str::<Value>(text).ok()?;
        if !declare(&mut value, list) {
            return None;
        }
        let mut out = serde_json::to_vec(&value).ok()?;
        if text.ends_with('\n') {
            out.push(b'\n');
        }
        return Some(out);
    }
    let mut out = String::with_capacity(text.len() + 96);
    let mut changed = false;
    for line in text.split_inclusive('\n') {
        let data = line.strip_prefix("data:").map(str::trim);
        let patched = data
            .and_then(|d| serde_json::from_str::<Value>(d).ok())
            .and_then(|mut v| declare(&mut v, list).then_some(v))
            .and_then(|v| serde_json::to_string(&v).ok());
        match patched {
            Some(json) if !changed => {
                changed = true;
                out.push_str("data: ");
                out.push_str(&json);
                out.push('\n');
            }
            _ => out.push_str(line),
        }
    }
    changed.then(|| out.into_bytes())
}

/// [`declare_bytes`] over each frame of an HTTP answer (`list`: see [`declare`]).
#[cfg(feature = "mcp-http")]
pub(crate) fn declare_in(
    response: super::response::HttpResponse,
    list: bool,
) -> super::response::HttpResponse {
    use http_body_util::BodyExt;
    response.map(|body| {
        body.map_frame(move |frame| match frame.into_data() {
            Ok(data) => hyper::body::Frame::data(
                declare_bytes(&data, list).map_or(data, bytes::Bytes::from),
            ),
            Err(frame) => frame,
        })
        .boxed()
    })
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

/// Answers a request the transports renamed (and `tasks/result`, `tasks/list`), for a client
/// below 2026-07-28 of a server that serves tasks; anything else is `-32601`.
///
/// `view`: the server's tasks and the agent view its tools are seen as.
pub(super) async fn serve(
    server: &impl ServerHandler,
    view: Option<(&Tasks, Option<&AgentId>)>,
    request: CustomRequest,
    mut cx: RequestContext<RoleServer>,
) -> Result<Value, ErrorData> {
    let modern = cx
        .protocol_version()
        .is_some_and(|v| v >= ProtocolVersion::V_2026_07_28);
    let (Some((tasks, agent)), false) = (view, modern) else {
        return Err(method_not_found(&request.method));
    };
    let owner = caller_of(&cx).map(|c| c.subject().to_owned());
    let owner = owner.as_deref();
    let params = request.params;
    let invalid =
        |e: serde_json::Error| ErrorData::invalid_params(format!("Invalid params: {e}"), None);
    match request.method.as_str() {
        CALL => {
            let mut params = params.unwrap_or(Value::Null);
            let ttl = take_task_param(&mut params)?;
            let params =
                serde_json::from_value::<CallToolRequestParams>(params).map_err(invalid)?;
            cx.extensions.insert(Augmented(ttl));
            created(server.call_tool(params, cx).await?)
        }
        LIST_TOOLS => {
            let params = match params {
                None | Some(Value::Null) => None,
                Some(p) => Some(serde_json::from_value(p).map_err(invalid)?),
            };
            let list = server.list_tools(params, cx).await?;
            Ok(with_execution(list, |name| tasks.support(name, agent)))
        }
        GET => get(tasks, params.as_ref(), owner).await,
        RESULT => result(tasks, params.as_ref(), owner, &cx.ct).await,
        CANCEL => cancel(tasks, params.as_ref(), owner).await,
        // Over HTTP without authorization every caller is the same one: there is no list of
        // one's own to give (the revision: such a server should not offer it).
        LIST if owner.is_some() || !is_http(&cx) => list(tasks, params.as_ref(), owner).await,
        other => Err(method_not_found(other)),
    }
}

/// On a `tools/call`'s context: the call was task-augmented (2025-11-25), with this TTL.
#[derive(Clone, Copy, Debug)]
pub(super) struct Augmented(pub(super) Option<Duration>);

fn method_not_found(method: &str) -> ErrorData {
    let shown: String = method.chars().take(64).collect();
    ErrorData::new(
        ErrorCode::METHOD_NOT_FOUND,
        format!("Method not found: {shown}"),
        None,
    )
}

/// Whether the request came over HTTP.
fn is_http(cx: &RequestContext<RoleServer>) -> bool {
    #[cfg(feature = "mcp-http")]
    {
        cx.extensions.get::<hyper::http::request::Parts>().is_some()
    }
    #[cfg(not(feature = "mcp-http"))]
    {
        let _ = cx;
        false
    }
}

/// The `task` param of a task-augmented `tools/call`: its requested TTL. `params` loses it
/// (what is left is the call's own params).
fn take_task_param(params: &mut Value) -> Result<Option<Duration>, ErrorData> {
    let task = params
        .as_object_mut()
        .and_then(|p| p.remove("task"))
        .unwrap_or(Value::Null);
    match &task {
        Value::Object(meta) => match meta.get("ttl") {
            None | Some(Value::Null) => Ok(None),
            Some(ttl) => ttl
                .as_u64()
                .map(|ms| Some(Duration::from_millis(ms)))
                .ok_or_else(|| {
                    ErrorData::invalid_params(
                        "Invalid params: task.ttl must be a whole number of milliseconds",
                        None,
                    )
                }),
        },
        _ => Err(ErrorData::invalid_params(
            "Invalid params: task must be an object",
            None,
        )),
    }
}

/// The `tools/list` answer with each tool's `execution.taskSupport` (left out for tools that
/// never run as tasks, the revision's default).
fn with_execution(
    list: rmcp::model::ListToolsResult,
    support: impl Fn(&str) -> TaskSupport,
) -> Value {
    let mut list = rmcp::model::ServerResult::ListToolsResult(list);
    // What rmcp does to the `tools/list` it answers itself below 2026-07-28.
    list.strip_non_object_output_for_legacy_peer();
    let mut value = serde_json::to_value(list).unwrap_or_else(|_| json!({"tools": []}));
    if let Some(tools) = value.get_mut("tools").and_then(Value::as_array_mut) {
        for tool in tools {
            let Some(name) = tool.get("name").and_then(Value::as_str) else {
                continue;
            };
            let support = match support(name) {
                TaskSupport::Optional => "optional",
                TaskSupport::Required => "required",
                _ => continue,
            };
            tool["execution"] = json!({ "taskSupport": support });
        }
    }
    value
}

/// The `CreateTaskResult` for what the call gave: its task, nested under `task`.
fn created(response: CallToolResponse) -> Result<Value, ErrorData> {
    match response {
        CallToolResponse::Task(created) => {
            let mut answer = json!({ "task": wire_handle(&created.task) });
            if let Some(meta) = created.meta {
                answer["_meta"] = Value::Object(meta.0);
            }
            Ok(answer)
        }
        // Only a call that could not be kept as a task (the store failed) gets here: its
        // result, as `tools/call` would have answered it.
        CallToolResponse::Complete(result) => as_legacy(result),
        _ => Err(ErrorData::internal_error(
            "the call asked for input, which a 2025-11-25 task cannot",
            None,
        )),
    }
}

/// A call's result as rmcp answers `tools/call` below 2026-07-28 (structured content that is
/// no object moved into the content).
fn as_legacy(result: rmcp::model::CallToolResult) -> Result<Value, ErrorData> {
    let mut result = rmcp::model::ServerResult::CallToolResult(result);
    result.strip_non_object_output_for_legacy_peer();
    serde_json::to_value(result)
        .map_err(|e| ErrorData::internal_error(format!("the result: {e}"), None))
}

/// An rmcp 2026-07-28 task handle as this revision's `Task`.
fn wire_handle(task: &rmcp::model::Task) -> Value {
    let mut handle = json!({
        "taskId": task.task_id,
        "status": task.status,
        "createdAt": task.created_at,
        "lastUpdatedAt": task.last_updated_at,
        "ttl": task.ttl_ms,
    });
    if let Some(interval) = task.poll_interval_ms {
        handle["pollInterval"] = json!(interval);
    }
    if let Some(message) = &task.status_message {
        handle["statusMessage"] = json!(message);
    }
    handle
}

/// A task record as this revision's `Task` (a result with `isError: true` reads `failed`).
fn task_json(task: &TaskRecord) -> Value {
    let status = match task.status {
        TaskStatus::Completed if task.result.as_ref().is_some_and(|r| r.is_error()) => "failed",
        other => other.as_str(),
    };
    let mut handle = json!({
        "taskId": task.id,
        "status": status,
        "createdAt": super::tasks::iso8601(task.created_at_ms),
        "lastUpdatedAt": super::tasks::iso8601(task.updated_at_ms),
        "ttl": task.ttl_ms,
        "pollInterval": task.poll_interval_ms,
    });
    if let Some(message) = &task.status_message {
        handle["statusMessage"] = json!(message);
    }
    handle
}

/// The params' `taskId`.
fn task_id(params: Option<&Value>) -> Result<&str, ErrorData> {
    params
        .and_then(|p| p.get("taskId"))
        .and_then(Value::as_str)
        .ok_or_else(|| ErrorData::invalid_params("Invalid params: taskId must be a string", None))
}

fn not_found(e: TaskError) -> ErrorData {
    match e {
        TaskError::NotFound(_) => {
            ErrorData::invalid_params("Failed to retrieve task: Task not found", None)
        }
        other => ErrorData::internal_error(other.to_string(), None),
    }
}

/// `tasks/get`: the task, flat.
async fn get(
    tasks: &Tasks,
    params: Option<&Value>,
    owner: Option<&str>,
) -> Result<Value, ErrorData> {
    let task = tasks
        .get(task_id(params)?, owner)
        .await
        .map_err(not_found)?;
    Ok(task_json(&task))
}

/// `tasks/result`: once the task has ended (waiting while it works, until `signal`), what the
/// `tools/call` would have answered, naming the task in its `_meta`; a task that failed
/// without a result (its instance stopped) is the JSON-RPC error it failed with.
async fn result(
    tasks: &Tasks,
    params: Option<&Value>,
    owner: Option<&str>,
    signal: &CancellationToken,
) -> Result<Value, ErrorData> {
    let id = task_id(params)?;
    let task = tasks.wait(id, owner, signal).await.map_err(not_found)?;
    let Some(result) = task.result else {
        let message = task
            .status_message
            .unwrap_or_else(|| format!("the task ended {} without a result", task.status.as_str()));
        return Err(ErrorData::internal_error(message, None));
    };
    let mut answer = as_legacy(crate::mcp::map::call_result(result, false))?;
    let meta = answer
        .as_object_mut()
        .map(|a| a.entry("_meta").or_insert_with(|| json!({})));
    if let Some(Value::Object(meta)) = meta {
        meta.insert(RELATED_TASK.to_owned(), json!({ "taskId": task.id }));
    }
    Ok(answer)
}

/// `tasks/list`: the owner's tasks, a page at a time.
async fn list(
    tasks: &Tasks,
    params: Option<&Value>,
    owner: Option<&str>,
) -> Result<Value, ErrorData> {
    let cursor = match params.and_then(|p| p.get("cursor")) {
        None | Some(Value::Null) => None,
        Some(Value::String(c)) => Some(c.clone()),
        Some(_) => {
            return Err(ErrorData::invalid_params(
                "Invalid params: the cursor must be a string",
                None,
            ));
        }
    };
    let page = tasks.list(owner, cursor, PAGE).await.map_err(|e| match e {
        TaskError::Store(crate::task::TaskStoreError::BadCursor(c)) => {
            let shown: String = c.chars().take(64).collect();
            ErrorData::invalid_params(format!("Invalid params: unknown cursor {shown:?}"), None)
        }
        other => ErrorData::internal_error(other.to_string(), None),
    })?;
    let mut answer = json!({ "tasks": page.tasks.iter().map(task_json).collect::<Vec<_>>() });
    if let Some(next) = page.next {
        answer["nextCursor"] = json!(next);
    }
    Ok(answer)
}

/// `tasks/cancel`: the task, now `cancelled`; one that had ended is `-32602`.
async fn cancel(
    tasks: &Tasks,
    params: Option<&Value>,
    owner: Option<&str>,
) -> Result<Value, ErrorData> {
    match tasks.cancel(task_id(params)?, owner).await {
        Ok(task) => Ok(task_json(&task)),
        Err(TaskError::Ended(task)) => {
            let status = task_json(&task)["status"].clone();
            Err(ErrorData::invalid_params(
                format!(
                    "Cannot cancel task: already in terminal status {}",
                    status
                        .as_str()
                        .map_or_else(String::new, |s| format!("'{s}'"))
                ),
                None,
            ))
        }
        Err(e) => Err(not_found(e)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn renamed(message: Value) -> Option<String> {
        let mut message = message;
        rename(message.as_object_mut().unwrap())
            .then(|| message["method"].as_str().unwrap().to_owned())
    }

    #[test]
    fn only_legacy_task_requests_are_renamed() {
        let call = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": "t", "task": {"ttl": 5}}});
        assert_eq!(renamed(call).as_deref(), Some(CALL));
        let plain = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": "t"}});
        assert_eq!(renamed(plain), None);
        let get = json!({"jsonrpc": "2.0", "id": 2, "method": "tasks/get",
            "params": {"taskId": "x"}});
        assert_eq!(renamed(get).as_deref(), Some(GET));
        let modern = json!({"jsonrpc": "2.0", "id": 3, "method": "tasks/get",
            "params": {"taskId": "x", "_meta": {PROTOCOL_VERSION_META: "2026-07-28"}}});
        assert_eq!(renamed(modern), None);
        let notification = json!({"jsonrpc": "2.0", "method": "tasks/get"});
        assert_eq!(renamed(notification), None);
        assert_eq!(
            renamed(json!({"jsonrpc": "2.0", "id": 4, "method": "tools/list"})).as_deref(),
            Some(LIST_TOOLS)
        );
    }

    #[test]
    fn initialize_answers_below_2026_declare_tasks() {
        let answer = json!({"jsonrpc": "2.0", "id": 0, "result": {"protocolVersion": "2025-11-25",
            "capabilities": {"tools": {}}, "serverInfo": {"name": "s", "version": "1"}}});
        let line = serde_json::to_vec(&answer).unwrap();
        let patched: Value = serde_json::from_slice(&declare_bytes(&line, false).unwrap()).unwrap();
        assert_eq!(
            patched["result"]["capabilities"]["tasks"]["requests"]["tools"]["call"],
            json!({})
        );
        assert!(
            patched["result"]["capabilities"]["tasks"]
                .get("list")
                .is_none()
        );
        let sse = format!(
            "data: {}\nid: 0\n\n",
            serde_json::to_string(&answer).unwrap()
        );
        let patched = String::from_utf8(declare_bytes(sse.as_bytes(), true).unwrap()).unwrap();
        assert!(patched.ends_with("id: 0\n\n"), "{patched}");
        let data: Value = serde_json::from_str(
            patched
                .lines()
                .next()
                .unwrap()
                .strip_prefix("data: ")
                .unwrap(),
        )
        .unwrap();
        assert_eq!(data["result"]["capabilities"]["tasks"]["list"], json!({}));
        let modern = json!({"jsonrpc": "2.0", "id": 0, "result": {"protocolVersion": "2026-07-28",
            "capabilities": {}, "serverInfo": {"name": "s", "version": "1"}}});
        assert_eq!(
            declare_bytes(&serde_json::to_vec(&modern).unwrap(), true),
            None
        );
        let tool_result = json!({"jsonrpc": "2.0", "id": 5, "result": {"content": [],
            "structuredContent": {"serverInfo": {}, "protocolVersion": "2025-11-25", "capabilities": {}}}});
        assert_eq!(
            declare_bytes(&serde_json::to_vec(&tool_result).unwrap(), true),
            None
        );
    }

    #[test]
    fn the_task_param_is_checked() {
        let mut params = json!({"name": "t", "task": {"ttl": 60000}});
        assert_eq!(
            take_task_param(&mut params).unwrap(),
            Some(Duration::from_secs(60))
        );
        assert!(params.get("task").is_none());
        let mut params = json!({"name": "t", "task": {}});
        assert_eq!(take_task_param(&mut params).unwrap(), None);
        let mut params = json!({"name": "t", "task": {"ttl": -1}});
        assert!(take_task_param(&mut params).is_err());
        let mut params = json!({"name": "t", "task": 7});
        assert!(take_task_param(&mut params).is_err());
    }
}

//! MCP tasks on the server (issue 36, part 2, the 2026-07-28 extension): rmcp's client declares
//! the extension, gets a task for a tool that runs as one, polls `tasks/get` to the result,
//! cancels; another subject's task is unknown; a required tool refuses a client that cannot
//! take a task. And the 2025-11-25 revision's tasks, over JSON-RPC lines as that revision's text
//! writes them (the capability, `execution.taskSupport`, `tasks/get|result|list|cancel`).

use crate::support::Era;
use dsh_tools::mcp::McpServer;
use dsh_tools::mcp::rmcp::model::{
    CallToolRequestParams, CallToolResponse, CancelTaskParams, ClientCapabilities, ClientConfig,
    ErrorCode, GetTaskParams, Implementation, TaskPayload, TaskStatus, UpdateTaskParams,
};
use dsh_tools::mcp::rmcp::service::{ClientServiceExt, RunningService, ServiceError};
use dsh_tools::mcp::rmcp::{ClientHandler, RoleClient, ServiceExt};
use dsh_tools::task::{TaskSupport, Tasks};
use dsh_tools::{OutputDecl, Registry, ToolDefinition};
use serde_json::json;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::Notify;

#[derive(Clone)]
struct Client {
    tasks: bool,
}

impl ClientHandler for Client {
    fn get_info(&self) -> ClientConfig {
        let caps = if self.tasks {
            ClientCapabilities::builder().enable_tasks().build()
        } else {
            ClientCapabilities::default()
        };
        ClientConfig::new(caps, Implementation::new("tasks-client", "1"))
    }
}

async fn connect(server: &McpServer, era: Era, tasks: bool) -> RunningService<RoleClient, Client> {
    let (a, b) = tokio::io::duplex(1 << 20);
    let server = server.clone();
    tokio::spawn(async move {
        if let Ok(running) = server.serve(a).await {
            let _ = running.waiting().await;
        }
    });
    Client { tasks }
        .serve_with_lifecycle(b, era.lifecycle())
        .await
        .expect("client connects")
}

/// `build` (optional task: waits for `release`, then "built"; reports progress) and
/// `migrate` (required task, returns at once).
fn registry(release: Arc<Notify>) -> Registry {
    let registry = Registry::new();
    registry
        .register(
            ToolDefinition::new(
                "build",
                "Builds",
                json!({"type": "object"}),
                OutputDecl::text(),
                move |_, ctx| {
                    let release = release.clone();
                    async move {
                        ctx.report_progress(1.0, Some(2.0), Some("compiling"));
                        tokio::select! {
                            () = release.notified() => Ok(json!("built")),
                            () = ctx.signal().cancelled() => Err(dsh_tools::ToolError::aborted()),
                        }
                    }
                },
            )
            .task_support(TaskSupport::Optional),
        )
        .unwrap()
        .keep();
    registry
        .register(
            ToolDefinition::new(
                "migrate",
                "Migrates",
                json!({"type": "object"}),
                OutputDecl::text(),
                |_, _| async { Ok(json!("migrated")) },
            )
            .task_support(TaskSupport::Required),
        )
        .unwrap()
        .keep();
    registry
        .register(ToolDefinition::new(
            "build_now",
            "Builds in place",
            json!({"type": "object"}),
            OutputDecl::text(),
            |_, _| async { Ok(json!("built now")) },
        ))
        .unwrap()
        .keep();
    registry
}

async fn call(
    client: &RunningService<RoleClient, Client>,
    name: &'static str,
) -> Result<CallToolResponse, ServiceError> {
    client
        .call_tool_once(CallToolRequestParams::new(name))
        .await
}

async fn poll_to_end(
    client: &RunningService<RoleClient, Client>,
    id: &str,
) -> dsh_tools::mcp::rmcp::model::GetTaskResult {
    for _ in 0..300 {
        let got = client
            .peer()
            .get_task(GetTaskParams::new(id.to_owned()))
            .await
            .unwrap();
        if got.task.status().is_terminal() {
            return got;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("task {id} never ended");
}

#[tokio::test]
async fn a_modern_client_declaring_tasks_gets_a_task_polls_it_and_reads_the_result() {
    let release = Arc::new(Notify::new());
    let server = McpServer::new(registry(Arc::clone(&release)));
    let client = connect(&server, Era::Modern, true).await;
    let discovered = client.peer_info().expect("discovered");
    let value = serde_json::to_value(&discovered.capabilities).unwrap();
    assert!(
        value["extensions"]["io.modelcontextprotocol/tasks"].is_object(),
        "{value}"
    );
    let CallToolResponse::Task(created) = call(&client, "build").await.unwrap() else {
        panic!("not a task");
    };
    let id = created.task.task_id.clone();
    assert_eq!(created.task.status, TaskStatus::Working);
    assert_eq!(created.task.poll_interval_ms, Some(1000));
    assert!(
        created.task.created_at.ends_with('Z'),
        "{}",
        created.task.created_at
    );
    let wire = serde_json::to_value(&created).unwrap();
    assert_eq!(wire["resultType"], "task");
    let working = client
        .peer()
        .get_task(GetTaskParams::new(id.clone()))
        .await
        .unwrap();
    assert_eq!(working.task.status(), TaskStatus::Working);
    // Input for a task that asks none is acknowledged.
    client
        .peer()
        .update_task(UpdateTaskParams::new(id.clone(), Default::default()))
        .await
        .unwrap();
    release.notify_one();
    let done = poll_to_end(&client, &id).await;
    let TaskPayload::Completed { result } = &done.task.payload else {
        panic!("{:?}", done.task.payload);
    };
    assert_eq!(result["content"][0]["text"], "built");
    assert_eq!(result["isError"], false);
    // A plain call of the same tool from a client that did not declare tasks runs in place.
    let plain = connect(&server, Era::Modern, false).await;
    let answer = tokio::spawn(async move { call(&plain, "build").await });
    tokio::time::sleep(Duration::from_millis(50)).await;
    release.notify_one();
    let CallToolResponse::Complete(result) = answer.await.unwrap().unwrap() else {
        panic!("a client without tasks got something else than a result");
    };
    assert_eq!(
        serde_json::to_value(&result).unwrap()["content"][0]["text"],
        "built"
    );
}

#[tokio::test]
async fn cancelling_a_task_ends_it_cancelled_and_unknown_ids_are_invalid_params() {
    let release = Arc::new(Notify::new());
    let server = McpServer::new(registry(release));
    let client = connect(&server, Era::Modern, true).await;
    let CallToolResponse::Task(created) = call(&client, "build").await.unwrap() else {
        panic!("not a task");
    };
    let id = created.task.task_id.clone();
    client
        .peer()
        .cancel_task(CancelTaskParams::new(id.clone()))
        .await
        .unwrap();
    let read = poll_to_end(&client, &id).await;
    assert_eq!(read.task.status(), TaskStatus::Cancelled);
    // Cancelling again is acknowledged (it has ended).
    client
        .peer()
        .cancel_task(CancelTaskParams::new(id.clone()))
        .await
        .unwrap();
    for unknown in [
        client
            .peer()
            .get_task(GetTaskParams::new("nope".to_owned()))
            .await
            .map(drop),
        client
            .peer()
            .cancel_task(CancelTaskParams::new("nope".to_owned()))
            .await,
    ] {
        let Err(ServiceError::McpError(e)) = unknown else {
            panic!("{unknown:?}");
        };
        assert_eq!(e.code, ErrorCode::INVALID_PARAMS);
        assert!(e.message.contains("unknown task: nope"), "{}", e.message);
    }
}

#[tokio::test]
async fn a_required_task_refuses_a_plain_call_in_both_eras() {
    let server = McpServer::new(registry(Arc::new(Notify::new())));
    let client = connect(&server, Era::Modern, false).await;
    let Err(ServiceError::McpError(e)) = call(&client, "migrate").await else {
        panic!("a required task ran for a client that cannot take one");
    };
    assert_eq!(e.code.0, -32021, "{e:?}");
    // A client declaring tasks gets one and its result.
    let able = connect(&server, Era::Modern, true).await;
    let CallToolResponse::Task(created) = call(&able, "migrate").await.unwrap() else {
        panic!("not a task");
    };
    let done = poll_to_end(&able, &created.task.task_id).await;
    assert_eq!(done.task.status(), TaskStatus::Completed);
    // 2025-11-25 is not told of the extension; a plain call of a tool that runs only as a
    // task is `-32601` there (that revision's MUST).
    let legacy = connect(&server, Era::Legacy, true).await;
    let caps = serde_json::to_value(&legacy.peer_info().unwrap().capabilities).unwrap();
    assert!(caps.get("extensions").is_none(), "{caps}");
    let Err(ServiceError::McpError(e)) = call(&legacy, "migrate").await else {
        panic!("a legacy client ran a required task in place");
    };
    assert_eq!(e.code, ErrorCode::METHOD_NOT_FOUND, "{e:?}");
    let CallToolResponse::Complete(result) = call(&legacy, "build_now").await.unwrap() else {
        panic!("a legacy client got a task");
    };
    assert_eq!(
        serde_json::to_value(&result).unwrap()["content"][0]["text"],
        "built now"
    );
}

/// A client of 2025-11-25 speaking JSON-RPC lines to `serve_io`.
struct Lines {
    write: tokio::io::WriteHalf<tokio::io::DuplexStream>,
    read: tokio::io::Lines<tokio::io::BufReader<tokio::io::ReadHalf<tokio::io::DuplexStream>>>,
    /// Notifications read while waiting for answers.
    heard: Vec<serde_json::Value>,
}

impl Lines {
    async fn open(server: &McpServer) -> Self {
        use tokio::io::AsyncBufReadExt;
        let (ours, theirs) = tokio::io::duplex(1 << 20);
        let (read, write) = tokio::io::split(theirs);
        tokio::spawn(server.clone().serve_io(read, write));
        let (read, write) = tokio::io::split(ours);
        Self {
            write,
            read: tokio::io::BufReader::new(read).lines(),
            heard: Vec::new(),
        }
    }

    async fn send(&mut self, message: serde_json::Value) {
        use tokio::io::AsyncWriteExt;
        let mut line = serde_json::to_vec(&message).unwrap();
        line.push(b'\n');
        self.write.write_all(&line).await.unwrap();
    }

    /// The answer to request `id` (`result` or `error`), keeping notifications.
    async fn ask(&mut self, id: u64, method: &str, params: serde_json::Value) -> serde_json::Value {
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
            .await;
        loop {
            let line = tokio::time::timeout(Duration::from_secs(10), self.read.next_line())
                .await
                .expect("an answer within 10 s")
                .unwrap()
                .expect("the server is still there");
            let message: serde_json::Value = serde_json::from_str(&line).unwrap();
            if message["id"] == json!(id) {
                return message;
            }
            self.heard.push(message);
        }
    }
}

#[tokio::test]
async fn a_2025_11_25_client_gets_that_revisions_tasks_over_lines() {
    let release = Arc::new(Notify::new());
    let server = McpServer::new(registry(Arc::clone(&release)));
    let mut c = Lines::open(&server).await;
    let init = c
        .ask(
            0,
            "initialize",
            json!({"protocolVersion": "2025-11-25", "capabilities": {},
                "clientInfo": {"name": "raw", "version": "1"}}),
        )
        .await;
    let tasks = &init["result"]["capabilities"]["tasks"];
    assert_eq!(tasks["requests"]["tools"]["call"], json!({}), "{init}");
    assert_eq!((&tasks["list"], &tasks["cancel"]), (&json!({}), &json!({})));
    c.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        .await;
    let listed = c.ask(1, "tools/list", json!({})).await;
    let support = |name: &str| {
        listed["result"]["tools"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["name"] == name)
            .map(|t| t["execution"]["taskSupport"].clone())
    };
    assert_eq!(support("build"), Some(json!("optional")), "{listed}");
    assert_eq!(support("migrate"), Some(json!("required")));
    assert_eq!(support("build_now"), Some(serde_json::Value::Null));
    // A plain call of a required task, and a task of a tool that never runs as one: -32601.
    let plain = c.ask(2, "tools/call", json!({"name": "migrate"})).await;
    assert_eq!(plain["error"]["code"], -32601, "{plain}");
    let forbidden = c
        .ask(3, "tools/call", json!({"name": "build_now", "task": {}}))
        .await;
    assert_eq!(forbidden["error"]["code"], -32601, "{forbidden}");

    let created = c
        .ask(
            4,
            "tools/call",
            json!({"name": "build", "task": {"ttl": 5000}, "_meta": {"progressToken": "p1"}}),
        )
        .await;
    let task = &created["result"]["task"];
    assert_eq!(task["status"], "working", "{created}");
    assert_eq!(task["ttl"], 5000);
    assert_eq!(task["pollInterval"], 1000);
    let id = task["taskId"].as_str().unwrap().to_owned();
    let got = c.ask(5, "tasks/get", json!({"taskId": id})).await;
    assert_eq!(
        (&got["result"]["taskId"], &got["result"]["status"]),
        (&json!(id), &json!("working")),
        "{got}"
    );
    let listed = c.ask(6, "tasks/list", json!({})).await;
    assert_eq!(
        listed["result"]["tasks"][0]["taskId"],
        json!(id),
        "{listed}"
    );
    // Progress goes on under the request's token after the answer.
    assert!(
        c.heard.iter().any(
            |n| n["method"] == "notifications/progress" && n["params"]["progressToken"] == "p1"
        ),
        "{:?}",
        c.heard
    );
    release.notify_one();
    let result = c.ask(7, "tasks/result", json!({"taskId": id})).await;
    assert_eq!(result["result"]["content"][0]["text"], "built", "{result}");
    assert_eq!(
        result["result"]["_meta"]["io.modelcontextprotocol/related-task"]["taskId"],
        json!(id)
    );
    let ended = c.ask(8, "tasks/cancel", json!({"taskId": id})).await;
    assert_eq!(ended["error"]["code"], -32602, "{ended}");
    assert_eq!(
        ended["error"]["message"],
        "Cannot cancel task: already in terminal status 'completed'"
    );
    let unknown = c.ask(9, "tasks/get", json!({"taskId": "nope"})).await;
    assert_eq!(unknown["error"]["code"], -32602, "{unknown}");
    assert_eq!(
        unknown["error"]["message"],
        "Failed to retrieve task: Task not found"
    );
    // A second task, cancelled while it works.
    let second = c
        .ask(10, "tools/call", json!({"name": "build", "task": {}}))
        .await;
    let second = second["result"]["task"]["taskId"]
        .as_str()
        .unwrap()
        .to_owned();
    let cancelled = c.ask(11, "tasks/cancel", json!({"taskId": second})).await;
    assert_eq!(cancelled["result"]["status"], "cancelled", "{cancelled}");
}

#[tokio::test]
async fn a_server_without_task_tools_declares_no_tasks_until_told() {
    let registry = Registry::new();
    let server = McpServer::new(registry.clone());
    let client = connect(&server, Era::Modern, true).await;
    let caps = serde_json::to_value(&client.peer_info().unwrap().capabilities).unwrap();
    assert!(caps.get("extensions").is_none(), "{caps}");
    let Err(ServiceError::McpError(e)) = client
        .peer()
        .get_task(GetTaskParams::new("x".to_owned()))
        .await
    else {
        panic!("tasks/get answered without tasks");
    };
    assert_eq!(e.code, ErrorCode::METHOD_NOT_FOUND, "{e:?}");
    let told = McpServer::new(registry.clone()).tasks(Tasks::new(&registry));
    let client = connect(&told, Era::Modern, true).await;
    let caps = serde_json::to_value(&client.peer_info().unwrap().capabilities).unwrap();
    assert!(
        caps["extensions"]["io.modelcontextprotocol/tasks"].is_object(),
        "{caps}"
    );
}

/// The server's `build` imported over 2026-07-28, its tasks polled every 20 ms or so.
async fn imported(release: Arc<Notify>) -> (Registry, Tasks, dsh_tools::mcp::McpImport) {
    use dsh_tools::mcp::{ImportLimits, ImportOptions, McpImport};
    use dsh_tools::task::TaskConfig;
    let remote = registry(release);
    let tasks =
        Tasks::new(&remote).config(TaskConfig::new().poll_interval(Duration::from_millis(20)));
    let server = McpServer::new(remote.clone()).tasks(tasks.clone());
    let (a, b) = tokio::io::duplex(1 << 20);
    tokio::spawn(async move {
        if let Ok(running) = server.serve(a).await {
            let _ = running.waiting().await;
        }
    });
    let limits = ImportLimits::default()
        .poll_interval_within(Duration::from_millis(10), Duration::from_millis(50));
    let import = McpImport::with_limits(limits)
        .connect_with(b, Era::Modern.lifecycle())
        .await
        .unwrap();
    let local = Registry::new();
    let names = import
        .import_into(&local, ImportOptions::default())
        .await
        .unwrap();
    std::mem::forget(names);
    (local, tasks, import)
}

#[tokio::test]
async fn an_imported_tool_answered_with_a_task_is_polled_to_its_result_with_progress() {
    let release = Arc::new(Notify::new());
    let (local, tasks, _import) = imported(Arc::clone(&release)).await;
    let heard = Arc::new(std::sync::Mutex::new(Vec::<String>::new()));
    let sink = {
        let heard = Arc::clone(&heard);
        dsh_tools::pipeline::ProgressSink::new(move |p: dsh_tools::pipeline::Progress| {
            heard.lock().unwrap().extend(p.message);
        })
    };
    let input = dsh_tools::ToolExecutionInput::new(
        "c1",
        "build",
        json!({}),
        dsh_tools::CancellationToken::new(),
    )
    .progress(sink);
    let call = tokio::spawn({
        let local = local.clone();
        async move { local.execute(input).await }
    });
    // The remote task exists (the server answered with it) and works until released.
    let mut remote = Vec::new();
    for _ in 0..200 {
        remote = tasks.list(None, None, 10).await.unwrap().tasks;
        if !remote.is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(remote.len(), 1, "the server kept no task");
    assert!(!call.is_finished());
    // The status message (its progress) reaches the local call before it ends.
    for _ in 0..200 {
        if heard.lock().unwrap().iter().any(|m| m == "compiling") {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(*heard.lock().unwrap(), ["compiling"]);
    release.notify_one();
    let result = call.await.unwrap();
    assert!(!result.is_error(), "{result:?}");
    assert_eq!(result.text(), "built");
}

#[tokio::test]
async fn cancelling_an_imported_call_cancels_its_remote_task() {
    let (local, tasks, _import) = imported(Arc::new(Notify::new())).await;
    let signal = dsh_tools::CancellationToken::new();
    let input = dsh_tools::ToolExecutionInput::new("c1", "build", json!({}), signal.clone());
    let call = tokio::spawn({
        let local = local.clone();
        async move { local.execute(input).await }
    });
    let mut remote = Vec::new();
    for _ in 0..200 {
        remote = tasks.list(None, None, 10).await.unwrap().tasks;
        if !remote.is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let id = remote.first().expect("a remote task").id.clone();
    signal.cancel();
    let result = call.await.unwrap();
    assert_eq!(
        result.code(),
        Some(dsh_tools::error::codes::ABORTED),
        "{result:?}"
    );
    let mut status = None;
    for _ in 0..200 {
        status = Some(tasks.get(&id, None).await.unwrap().status);
        if status == Some(dsh_tools::task::TaskStatus::Cancelled) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(status, Some(dsh_tools::task::TaskStatus::Cancelled));
}

/// A `run_code` program calling the imported `build`, within `max_wall_ms`.
async fn program(local: &Registry, max_wall_ms: f64) -> dsh_tools::ToolExecutionResult {
    use dsh_tools::code::CodeRuntimeConfig;
    use dsh_tools::code::quickjs::QuickJsRuntime;
    let config = CodeRuntimeConfig {
        max_wall_ms,
        ..CodeRuntimeConfig::default()
    };
    local.set_presentation_mode(dsh_tools::registry::PresentationMode::Code);
    local.set_code_runtime(QuickJsRuntime::new(config).unwrap());
    let input = dsh_tools::ToolExecutionInput::new(
        "outer",
        "run_code",
        json!({"code": "const built = await tools.build({}); return {built};",
            "description": "builds"}),
        dsh_tools::CancellationToken::new(),
    );
    tokio::time::timeout(Duration::from_secs(30), local.execute(input))
        .await
        .expect("the run ended")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_code_mode_sub_call_that_becomes_a_remote_task_is_awaited_within_the_wall_budget() {
    let release = Arc::new(Notify::new());
    let (local, tasks, _import) = imported(Arc::clone(&release)).await;
    // Released while the program waits: the program reads the result as from any call.
    let releaser = tokio::spawn({
        let (release, tasks) = (Arc::clone(&release), tasks.clone());
        async move {
            for _ in 0..1000 {
                if !tasks.list(None, None, 10).await.unwrap().tasks.is_empty() {
                    release.notify_one();
                    return;
                }
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
        }
    });
    let result = program(&local, 20_000.0).await;
    releaser.abort();
    assert!(!result.is_error(), "{result:?}");
    assert!(result.text().contains("built"), "{}", result.text());
    // Never released: the wall budget ends the program, and the remote task is cancelled.
    let result = program(&local, 400.0).await;
    assert!(result.is_error(), "{result:?}");
    let mut cancelled = false;
    for _ in 0..300 {
        let all = tasks.list(None, None, 10).await.unwrap().tasks;
        if all.len() == 2 && all[1].status == dsh_tools::task::TaskStatus::Cancelled {
            cancelled = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert!(
        cancelled,
        "{:?}",
        tasks.list(None, None, 10).await.unwrap().tasks
    );
}

#[tokio::test]
async fn task_notifications_are_refused_without_the_extension_and_agreed_for_none_with_it() {
    let server = McpServer::new(registry(Arc::new(Notify::new())));
    let listen = |id: u64, caps: serde_json::Value| {
        json!({"jsonrpc": "2.0", "id": id, "method": "subscriptions/listen", "params": {
            "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": caps},
            "notifications": {"taskIds": ["t1"]}}})
    };
    let mut c = Lines::open(&server).await;
    let listen_without = listen(1, json!({}));
    let refused = c
        .ask(1, "subscriptions/listen", listen_without["params"].clone())
        .await;
    assert_eq!(refused["error"]["code"], -32021, "{refused}");
    assert!(
        refused["error"]["data"]["requiredCapabilities"]["extensions"]
            ["io.modelcontextprotocol/tasks"]
            .is_object(),
        "{refused}"
    );
    // Declared: the listen goes on, and its acknowledgement agrees to no task ids (this server
    // sends no notifications/tasks; its clients poll).
    c.send(listen(
        2,
        json!({"extensions": {"io.modelcontextprotocol/tasks": {}}}),
    ))
    .await;
    let acknowledged = loop {
        let line = tokio::time::timeout(Duration::from_secs(10), c.read.next_line())
            .await
            .expect("an acknowledgement within 10 s")
            .unwrap()
            .expect("the server is still there");
        let message: serde_json::Value = serde_json::from_str(&line).unwrap();
        assert!(message.get("error").is_none(), "{message}");
        if message["method"] == "notifications/subscriptions/acknowledged" {
            break message;
        }
    };
    assert!(
        acknowledged["params"]["notifications"]
            .get("taskIds")
            .is_none(),
        "{acknowledged}"
    );
}

//! Shared pieces of the MCP tests: test tools, a recording client, in-process connections.

#![allow(dead_code)]

use dsh_tools::mcp::McpServer;
use dsh_tools::mcp::rmcp::model::{
    CallToolRequestParams, CallToolResult, ProgressNotificationParam, ProtocolVersion,
};
use dsh_tools::mcp::rmcp::service::{
    ClientLifecycleMode, ClientServiceExt, NotificationContext, RunningService,
};
use dsh_tools::mcp::rmcp::{ClientHandler, RoleClient, ServiceExt};
use dsh_tools::{
    ContentBlock, OutputDecl, Registry, ToolDefinition, ToolError, ToolHints, ToolRunContext,
};
use serde_json::{Value, json};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// The two protocol eras rmcp serves from one handler.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Era {
    /// `initialize` handshake, negotiates 2025-11-25.
    Legacy,
    /// Stateless 2026-07-28 (`server/discover`, per-request `_meta`).
    Modern,
}

pub(crate) const ERAS: [Era; 2] = [Era::Legacy, Era::Modern];

impl Era {
    pub(crate) fn lifecycle(self) -> ClientLifecycleMode {
        match self {
            Era::Legacy => ClientLifecycleMode::Initialize,
            Era::Modern => ClientLifecycleMode::Discover {
                preferred_versions: vec![ProtocolVersion::LATEST],
            },
        }
    }
}

/// One progress notification: progress, total, message.
pub(crate) type ProgressSeen = (f64, Option<f64>, Option<String>);

/// A client that records what the server tells it.
#[derive(Clone, Default)]
pub(crate) struct Recorder {
    pub list_changed: Arc<AtomicUsize>,
    pub progress: Arc<Mutex<Vec<ProgressSeen>>>,
}

impl ClientHandler for Recorder {
    async fn on_tool_list_changed(&self, _cx: NotificationContext<RoleClient>) {
        self.list_changed.fetch_add(1, Ordering::SeqCst);
    }

    async fn on_progress(
        &self,
        p: ProgressNotificationParam,
        _cx: NotificationContext<RoleClient>,
    ) {
        self.progress
            .lock()
            .unwrap()
            .push((p.progress, p.total, p.message));
    }
}

pub(crate) type Client = RunningService<RoleClient, Recorder>;

/// Serves `server` on one end of an in-process pipe and connects a recording client to the
/// other, in `era`.
pub(crate) async fn connect(server: McpServer, era: Era) -> (Client, Recorder) {
    let (a, b) = tokio::io::duplex(1 << 20);
    tokio::spawn(async move {
        if let Ok(running) = server.serve(a).await {
            let _ = running.waiting().await;
        }
    });
    let recorder = Recorder::default();
    let client = recorder
        .clone()
        .serve_with_lifecycle(b, era.lifecycle())
        .await
        .expect("client connects");
    (client, recorder)
}

pub(crate) fn args(value: Value) -> serde_json::Map<String, Value> {
    match value {
        Value::Object(map) => map,
        other => panic!("not an object: {other}"),
    }
}

pub(crate) fn call(name: &str, arguments: Value) -> CallToolRequestParams {
    CallToolRequestParams::new(name.to_owned()).with_arguments(args(arguments))
}

pub(crate) fn texts(result: &CallToolResult) -> Vec<String> {
    result
        .content
        .iter()
        .filter_map(|b| b.as_text().map(|t| t.text.clone()))
        .collect()
}

/// Counts bodies that started, saw their signal fire, and settled.
#[derive(Default)]
pub(crate) struct Probe {
    pub started: AtomicUsize,
    pub cancelled: AtomicUsize,
    pub settled: AtomicUsize,
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
pub(crate) struct AddArgs {
    /// First term.
    pub a: i64,
    /// Second term.
    pub b: i64,
}

/// A registry with the tools every test uses.
pub(crate) fn registry(probe: &Arc<Probe>) -> Registry {
    let registry = Registry::new();
    let add = ToolDefinition::typed("add", "Add two numbers.", |a: AddArgs, _| async move {
        Ok::<_, ToolError>(a.a + a.b)
    })
    .unwrap()
    .title("Add")
    .hints(ToolHints::new().read_only(true).open_world(false));
    registry.register(add).unwrap().keep();
    let echo = ToolDefinition::new(
        "echo",
        "Echo the text back as an object.",
        json!({"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}),
        OutputDecl::json(json!({"type": "object", "properties": {"text": {"type": "string"}}})),
        |args, _| async move { Ok(json!({"text": args["text"]})) },
    );
    registry.register(echo).unwrap().keep();
    let blocks = ToolDefinition::new(
        "blocks",
        "An image and a reasoning block.",
        json!({"type": "object"}),
        OutputDecl::new(json!({}), |_, _| {
            vec![
                ContentBlock::new(
                    json!({"type": "image", "data": "aGk=", "mimeType": "image/png"}),
                )
                .unwrap(),
                ContentBlock::new(json!({"type": "reasoning", "text": "because"})).unwrap(),
            ]
        }),
        |_, _| async { Ok(json!(null)) },
    );
    registry.register(blocks).unwrap().keep();
    let fail = ToolDefinition::new(
        "fail",
        "Fails with a coded error.",
        json!({"type": "object"}),
        OutputDecl::text(),
        |_, _| async { Err(ToolError::coded("HarnessError", "ENOSPC", "disk full")) },
    );
    registry.register(fail).unwrap().keep();
    let p = Arc::clone(probe);
    let slow = ToolDefinition::new(
        "slow",
        "Waits for cancellation (or 30 s).",
        json!({"type": "object"}),
        OutputDecl::text(),
        move |_, ctx: ToolRunContext| {
            let p = Arc::clone(&p);
            async move {
                p.started.fetch_add(1, Ordering::SeqCst);
                tokio::select! {
                    () = ctx.signal().cancelled() => { p.cancelled.fetch_add(1, Ordering::SeqCst); }
                    () = tokio::time::sleep(Duration::from_secs(30)) => {}
                }
                // A started body settles even after the client went away.
                tokio::time::sleep(Duration::from_millis(20)).await;
                p.settled.fetch_add(1, Ordering::SeqCst);
                Ok(json!("done"))
            }
        },
    );
    registry.register(slow).unwrap().keep();
    let progress = ToolDefinition::new(
        "progress",
        "Reports progress three times.",
        json!({"type": "object"}),
        OutputDecl::text(),
        |_, ctx: ToolRunContext| async move {
            for i in 1..=3 {
                ctx.report_progress(f64::from(i), Some(3.0), Some(&format!("step {i}")));
                tokio::task::yield_now().await;
            }
            Ok(json!("finished"))
        },
    );
    registry.register(progress).unwrap().keep();
    registry
}

/// Waits (bounded) until `f` holds.
pub(crate) async fn eventually(what: &str, f: impl Fn() -> bool) {
    for _ in 0..500 {
        if f() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("timed out waiting until {what}");
}

/// Sessions in memory, shared by the server instances of one test, as a Redis or a database
/// would hold them for a fleet.
#[derive(Default)]
pub(crate) struct MemoryStore(pub Mutex<std::collections::HashMap<String, StoredSession>>);

type StoredSession =
    dsh_tools::mcp::rmcp::transport::streamable_http_server::session::store::SessionState;
type StoreError =
    dsh_tools::mcp::rmcp::transport::streamable_http_server::session::store::SessionStoreError;

#[async_trait::async_trait]
impl dsh_tools::mcp::rmcp::transport::streamable_http_server::session::store::SessionStore
    for MemoryStore
{
    async fn load(&self, id: &str) -> Result<Option<StoredSession>, StoreError> {
        Ok(self.0.lock().unwrap().get(id).cloned())
    }
    async fn store(&self, id: &str, state: &StoredSession) -> Result<(), StoreError> {
        self.0.lock().unwrap().insert(id.to_owned(), state.clone());
        Ok(())
    }
    async fn delete(&self, id: &str) -> Result<(), StoreError> {
        self.0.lock().unwrap().remove(id);
        Ok(())
    }
}

/// Writes `request` on a connection of its own and reads the answer to its end (the server
/// closes): the status, the head and the body.
pub(crate) fn exchange(addr: std::net::SocketAddr, request: &str) -> (u16, String, String) {
    use std::io::{Read, Write};
    let mut stream = std::net::TcpStream::connect(addr).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(20)))
        .unwrap();
    stream.write_all(request.as_bytes()).unwrap();
    let mut answer = Vec::new();
    let _ = stream.read_to_end(&mut answer);
    let answer = String::from_utf8_lossy(&answer).into_owned();
    let status = answer
        .split(' ')
        .nth(1)
        .and_then(|code| code.parse().ok())
        .unwrap_or(0);
    let (head, body) = answer.split_once("\r\n\r\n").unwrap_or((&answer, ""));
    (status, head.to_owned(), body.to_owned())
}

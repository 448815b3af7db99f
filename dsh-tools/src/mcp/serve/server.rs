//! `McpServer`: the handle that serves a [`Registry`]'s view over MCP: what its clones share
//! (the change signal, the legacy sessions told of changes, the view's MCP tools cached per
//! registry generation), its settings, and each session's own state. A `tools/call` is served
//! in `call`, rmcp's `ServerHandler` in `handler`.

use super::discovery::{self, Listed, Lister, Session};
use super::elicit::ServerApprovals;
use crate::call::AgentId;
use crate::mcp::map;
use crate::registry::{ChangeEvent, Registry, ScopedRegistration};
use rmcp::model::{Implementation, ServerCapabilities, ServerConfig, Tool};
use rmcp::{Peer, RoleServer};
use serde_json::Value;
use std::fmt;
use std::sync::{Arc, Mutex, Weak};
use tokio::sync::watch;

/// Serves a [`Registry`]'s tools over MCP (an rmcp [`ServerHandler`](rmcp::ServerHandler)).
///
/// One server exposes one view: the global tools, or an agent scope's (shadowing and
/// restrictions applied, in the order [`Registry::schemas`] gives). Every `tools/call` runs
/// through the registry's whole pipeline, with the request's cancellation token as the call's
/// signal and its progress token wired to [`report_progress`](crate::ToolRunContext::report_progress).
/// Registry changes are announced as `notifications/tools/list_changed`, in both protocol eras.
///
/// The server is a cheap `Clone` handle: clones share one change listener, which is removed
/// when the last clone is dropped, and one session's state (what its searches loaded under
/// [progressive discovery](Self::progressive_discovery)): the transports give each connection
/// its own ([`for_session`](Self::for_session)); do the same when serving through rmcp
/// yourself.
///
/// ```no_run
/// use dsh_tools::{Registry, mcp::McpServer};
/// # async fn run(registry: Registry) -> Result<(), Box<dyn std::error::Error>> {
/// McpServer::new(registry).serve_stdio().await?;
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct McpServer {
    pub(super) registry: Registry,
    pub(super) agent: Option<AgentId>,
    pub(super) info: Arc<ServerConfig>,
    /// `info.server_info` as JSON, for the `_meta` of 2026-07-28 results (made once, not per
    /// call).
    pub(super) info_meta: Arc<Value>,
    pub(super) shared: Arc<Shared>,
    pub(super) approvals: ServerApprovals,
    /// Progressive discovery: deferred tools are listed once a session's search loads them.
    pub(super) discovery: bool,
    /// The `ttlMs` of a 2026-07-28 listing.
    pub(super) list_ttl_ms: u64,
    /// What this session's searches loaded (each session gets its own: see
    /// [`for_session`](Self::for_session)).
    pub(super) session: Arc<Session>,
    /// The calls that run as tasks (see [`tasks`](Self::tasks)).
    pub(super) tasks: Option<crate::task::Tasks>,
}

/// What every clone shares: the change signal, the legacy sessions to notify, the tool cache.
pub(super) struct Shared {
    /// Bumped on every registry change that may alter this server's view.
    pub(super) changes: watch::Sender<u64>,
    /// Sessions below 2026-07-28 (they get the legacy notification).
    pub(super) legacy_peers: Mutex<Vec<Peer<RoleServer>>>,
    /// Whether the legacy forwarder task was started.
    pub(super) forwarder: std::sync::Once,
    /// The MCP tools of the current registry generation, each with whether it is deferred.
    pub(super) tools: Mutex<Option<(u64, Arc<Vec<Listed>>)>>,
    /// Keeps the registry's change listener; dropped with the last clone.
    pub(super) _listener: ScopedRegistration,
}

impl fmt::Debug for McpServer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("McpServer")
            .field("agent", &self.agent)
            .field("server_info", &self.info.server_info)
            .finish_non_exhaustive()
    }
}

impl McpServer {
    /// A server of `registry`'s global tools, introducing itself as `dsh-tools` with this
    /// crate's version.
    pub fn new(registry: Registry) -> Self {
        Self::build(registry, None)
    }

    /// A server of `agent`'s scope: its tools, restrictions and hooks, and calls made as
    /// `agent` (so `ask` decisions reach the registry's approval service).
    pub fn for_agent(registry: Registry, agent: impl Into<AgentId>) -> Self {
        Self::build(registry, Some(agent.into()))
    }

    fn build(registry: Registry, agent: Option<AgentId>) -> Self {
        let (changes, _) = watch::channel(0u64);
        let shared = Arc::new_cyclic(|weak: &Weak<Shared>| {
            let weak = weak.clone();
            let scoped = agent.is_some();
            let listener = registry.on_change(move |event: &ChangeEvent| {
                let global = match event {
                    ChangeEvent::ToolRegistered { agent, .. }
                    | ChangeEvent::ToolRemoved { agent, .. } => agent.is_none(),
                    _ => false,
                };
                // A scope's change never alters the global view.
                if (scoped || global)
                    && let Some(shared) = weak.upgrade()
                {
                    shared.changes.send_modify(|n| *n = n.wrapping_add(1));
                }
                Ok(())
            });
            Shared {
                changes,
                legacy_peers: Mutex::new(Vec::new()),
                forwarder: std::sync::Once::new(),
                tools: Mutex::new(None),
                _listener: listener.scoped(),
            }
        });
        // Tasks are served when a tool of the view runs as one (or `tasks` sets them).
        let tasks = registry
            .tools(agent.as_ref())
            .iter()
            .any(|t| t.definition.tool_task_support().allows_task())
            .then(|| crate::task::Tasks::new(&registry));
        let capabilities = ServerCapabilities::builder()
            .enable_tools()
            .enable_tool_list_changed()
            .build();
        let info = ServerConfig::new(capabilities).with_server_info(Implementation::new(
            env!("CARGO_PKG_NAME"),
            env!("CARGO_PKG_VERSION"),
        ));
        let server = Self {
            registry,
            agent,
            info_meta: Arc::new(to_meta(&info.server_info)),
            info: Arc::new(info),
            shared,
            approvals: ServerApprovals::new(),
            discovery: false,
            list_ttl_ms: 0,
            session: discovery::new_session(),
            tasks: None,
        };
        match tasks {
            Some(tasks) => server.tasks(tasks),
            None => server,
        }
    }

    /// Serves calls of tools that run as tasks ([`TaskSupport`](crate::task::TaskSupport)) as
    /// MCP tasks, kept by `tasks` (give every instance of a fleet the same store:
    /// `durable::RedisTaskStore`), and declares the 2026-07-28 extension
    /// `io.modelcontextprotocol/tasks`. A server whose view has such a tool when it is made
    /// serves them with tasks in memory without this call.
    ///
    /// A task is answered to a 2026-07-28 request that declares the extension; a tool that runs
    /// only as a task (`Required`) refuses a request that does not (`-32021`). Clients of
    /// 2025-11-25 get that revision's experimental tasks (`capabilities.tasks`,
    /// `execution.taskSupport`, a `tools/call` with a `task` param answered `CreateTaskResult`,
    /// `tasks/get|result|list|cancel`) over [`serve_io`](Self::serve_io),
    /// [`serve_stdio`](Self::serve_stdio) and the HTTP service (the transports hand rmcp those
    /// requests under names of their own; a server run with rmcp's own `serve` does not).
    ///
    /// ```
    /// use dsh_tools::task::Tasks;
    /// use dsh_tools::{Registry, mcp::McpServer};
    /// let registry = Registry::new();
    /// let server = McpServer::new(registry.clone()).tasks(Tasks::new(&registry));
    /// # let _ = server;
    /// ```
    pub fn tasks(mut self, tasks: crate::task::Tasks) -> Self {
        Arc::make_mut(&mut self.info)
            .capabilities
            .extensions
            .get_or_insert_with(Default::default)
            .insert(
                rmcp::model::TASKS_EXTENSION_ID.to_owned(),
                rmcp::model::JsonObject::new(),
            );
        self.tasks = Some(tasks);
        self
    }

    /// Progressive discovery (off by default): where the view defers tools, `tools/list`
    /// holds the tools that are not deferred and `tool_search`, and a tool a session's search
    /// finds is listed for that session from then on, announced to it alone by
    /// `notifications/tools/list_changed` (2025-11-25 and earlier: stateful sessions). A
    /// 2026-07-28 request has no session and its list may not vary by connection: the list
    /// stays as it is and `tool_search`'s result carries the found tools' input schemas, so
    /// the model calls them by name. A deferred tool is callable whether or not it is listed
    /// (as the providers' own deferral allows).
    ///
    /// What a session loaded lives in this process: a fleet session restored on another
    /// instance lists the tools that are not deferred again (the found ones stay callable).
    ///
    /// Every listing leaves out what the caller's [scope rules](crate::Registry::scope_rules)
    /// forbid it, with or without this option. Under `code` presentation the one tool listed
    /// is `run_code`, whose description carries the SDK text of the view's tools, the same for
    /// every caller: the rules still refuse a program's calls the caller may not make.
    ///
    /// ```
    /// use dsh_tools::{Registry, mcp::McpServer};
    /// let server = McpServer::new(Registry::new()).progressive_discovery(true);
    /// # let _ = server;
    /// ```
    pub fn progressive_discovery(mut self, on: bool) -> Self {
        self.discovery = on;
        self
    }

    /// How long a 2026-07-28 client may cache the tool list (`ttlMs`; default 0: ask again
    /// each time, or follow `notifications/tools/list_changed`). Its `cacheScope` is `public`
    /// unless the list depends on who asks (scope rules, or an authenticated caller):
    /// `private`.
    pub fn list_ttl(mut self, ttl: std::time::Duration) -> Self {
        self.list_ttl_ms = u64::try_from(ttl.as_millis()).unwrap_or(u64::MAX);
        self
    }

    /// This server for a new session: the same registry, view and settings, with nothing
    /// loaded by searches yet. The transports call it once per session; a server handed to
    /// rmcp directly is one session.
    pub fn for_session(&self) -> Self {
        Self {
            session: discovery::new_session(),
            ..self.clone()
        }
    }

    /// How this server lists `all` for this session.
    pub(super) fn lister<'a>(&'a self, all: &'a [Listed]) -> Lister<'a> {
        Lister {
            all,
            discovery: self.discovery,
            session: &self.session,
            ttl_ms: self.list_ttl_ms,
        }
    }

    /// How `ask` decisions reach the client's user ([`ServerApprovals`]; on by default, with
    /// a key for this process).
    pub fn approvals(mut self, approvals: ServerApprovals) -> Self {
        self.approvals = approvals;
        self
    }

    /// Introduces the server as `name` / `version` instead of this crate.
    pub fn server_info(mut self, name: impl Into<String>, version: impl Into<String>) -> Self {
        let info = Implementation::new(name, version);
        self.info_meta = Arc::new(to_meta(&info));
        Arc::make_mut(&mut self.info).server_info = info;
        self
    }

    /// Instructions the client may show the model.
    pub fn instructions(mut self, instructions: impl Into<String>) -> Self {
        Arc::make_mut(&mut self.info).instructions = Some(instructions.into());
        self
    }

    /// The registry served.
    pub fn registry(&self) -> &Registry {
        &self.registry
    }

    /// Code Mode over MCP: MCP has no system prompt, so `run_code`'s description carries the
    /// prompt sections (the SDK text of the view's tools) after its own text; it follows every
    /// change of the tools with the listing (`tools/list_changed`).
    fn with_sdk(&self, tool: &mut Tool) {
        match self.registry.code_prompt(self.agent.as_ref()) {
            Ok(prompt) if !prompt.is_empty() => {
                let own = tool.description.as_deref().unwrap_or_default();
                tool.description = Some(format!("{own}\n\n{prompt}").into());
            }
            Ok(_) => {}
            Err(e) => tracing::warn!("MCP: run_code is listed without its SDK text: {e}"),
        }
    }

    /// The MCP tools of the current view, each with whether it is deferred, `tool_search`
    /// among them where the view defers any (cached per registry generation).
    pub(crate) fn mcp_tools_marked(&self) -> Arc<Vec<Listed>> {
        let generation = self.registry.generation();
        let mut cache = self.shared.tools.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((g, tools)) = &*cache
            && *g == generation
        {
            return Arc::clone(tools);
        }
        let tools: Vec<Listed> = self
            .registry
            .deferral_view(self.agent.as_ref())
            .iter()
            .filter_map(|(t, deferred)| match map::tool(t) {
                Ok(mut tool) => {
                    if t.name() == crate::code::RUN_CODE {
                        self.with_sdk(&mut tool);
                    }
                    if !map::is_conventional_name(t.name()) {
                        tracing::warn!(
                            "MCP: tool name {:?} is outside 1-128 characters of [A-Za-z0-9_.-]; some clients reject it",
                            t.name()
                        );
                    }
                    Some((tool, *deferred))
                }
                Err(why) => {
                    tracing::warn!("MCP: tool {:?} is not listed: {why}", t.name());
                    None
                }
            })
            .collect();
        let tools = Arc::new(tools);
        *cache = Some((generation, Arc::clone(&tools)));
        tools
    }

    /// Starts (once) the task that tells legacy sessions of changes.
    pub(super) fn start_forwarder(&self) {
        self.shared.forwarder.call_once(|| {
            let weak = Arc::downgrade(&self.shared);
            let mut changes = self.shared.changes.subscribe();
            tokio::spawn(async move {
                while changes.changed().await.is_ok() {
                    let Some(shared) = weak.upgrade() else { return };
                    let peers: Vec<Peer<RoleServer>> = shared
                        .legacy_peers
                        .lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .clone();
                    drop(shared);
                    let mut failed = false;
                    for peer in &peers {
                        failed |= peer.notify_tool_list_changed().await.is_err();
                    }
                    if !failed {
                        continue;
                    }
                    let Some(shared) = weak.upgrade() else { return };
                    let mut list = shared
                        .legacy_peers
                        .lock()
                        .unwrap_or_else(|e| e.into_inner());
                    list.retain(|p| !p.is_transport_closed());
                }
            });
        });
    }

    /// The tasks calls run as (the transports then serve the 2025-11-25 tasks too), and the
    /// view whose tools these are.
    pub(super) fn task_view(&self) -> Option<(&crate::task::Tasks, Option<&AgentId>)> {
        self.tasks.as_ref().map(|t| (t, self.agent.as_ref()))
    }

    /// Adds `_meta["io.modelcontextprotocol/serverInfo"]`, which 2026-07-28 results should
    /// carry (a stateless client learns who answered from each result).
    pub(super) fn stamp(&self, meta: &mut Option<rmcp::model::MetaObject>) {
        if self.info_meta.is_null() {
            return;
        }
        meta.get_or_insert_with(Default::default)
            .0
            .insert(SERVER_INFO_META.to_owned(), (*self.info_meta).clone());
    }
}

/// The server's `Implementation` as JSON (`null` if it could not be written, then left out).
fn to_meta(info: &Implementation) -> Value {
    serde_json::to_value(info).unwrap_or(Value::Null)
}

/// The `_meta` key naming the server on 2026-07-28 results.
pub const SERVER_INFO_META: &str = "io.modelcontextprotocol/serverInfo";

/// Why serving stopped with an error: the handshake failed, or the session's task did.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ServeError {
    /// The client's `initialize` never came, was not one, or the transport closed first.
    #[error("MCP server: {0}")]
    Handshake(#[source] Box<rmcp::service::ServerInitializeError>),
    /// The running session's task ended abnormally (it panicked or was cancelled).
    #[error("MCP server: {0}")]
    Session(#[source] tokio::task::JoinError),
}

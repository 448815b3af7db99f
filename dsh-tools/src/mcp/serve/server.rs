//! `McpServer`: an rmcp `ServerHandler` over a [`Registry`].

use super::discovery::{self, Listed, Lister, Session, caller_of};
use super::elicit::{self, ServerApprovals};
use super::progress;
use super::tasks::{self, Asked, Begun, Route};
use super::tasks_2025;
use crate::call::{AgentId, ToolExecutionInput, ToolExecutionResult};
use crate::mcp::map;
use crate::registry::{ChangeEvent, Registry, ScopedRegistration};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, ErrorData, Implementation, ListToolsResult,
    PaginatedRequestParams, ProtocolVersion, ServerCapabilities, ServerConfig, SubscriptionFilter,
    Tool,
};
use rmcp::service::{RequestContext, SubscriptionContext};
use rmcp::{Peer, RoleServer, ServerHandler};
use serde_json::Value;
use std::fmt;
use std::sync::{Arc, Mutex, Weak};
use tokio::sync::watch;
use tracing::Instrument;

/// Serves a [`Registry`]'s tools over MCP (an rmcp [`ServerHandler`]).
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
    registry: Registry,
    agent: Option<AgentId>,
    info: Arc<ServerConfig>,
    /// `info.server_info` as JSON, for the `_meta` of 2026-07-28 results (made once, not per
    /// call).
    info_meta: Arc<Value>,
    shared: Arc<Shared>,
    approvals: ServerApprovals,
    /// Progressive discovery: deferred tools are listed once a session's search loads them.
    discovery: bool,
    /// The `ttlMs` of a 2026-07-28 listing.
    list_ttl_ms: u64,
    /// What this session's searches loaded (each session gets its own: see
    /// [`for_session`](Self::for_session)).
    session: Arc<Session>,
    /// The calls that run as tasks (see [`tasks`](Self::tasks)).
    tasks: Option<crate::task::Tasks>,
}

/// What every clone shares: the change signal, the legacy sessions to notify, the tool cache.
struct Shared {
    /// Bumped on every registry change that may alter this server's view.
    changes: watch::Sender<u64>,
    /// Sessions below 2026-07-28 (they get the legacy notification).
    legacy_peers: Mutex<Vec<Peer<RoleServer>>>,
    /// Whether the legacy forwarder task was started.
    forwarder: std::sync::Once,
    /// The MCP tools of the current registry generation, each with whether it is deferred.
    tools: Mutex<Option<(u64, Arc<Vec<Listed>>)>>,
    /// Keeps the registry's change listener; dropped with the last clone.
    _listener: ScopedRegistration,
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
    fn lister<'a>(&'a self, all: &'a [Listed]) -> Lister<'a> {
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
    fn start_forwarder(&self) {
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

    /// `tools/call`; `task`: a 2025-11-25 task-augmented call's requested TTL.
    async fn call(
        &self,
        request: CallToolRequestParams,
        cx: RequestContext<RoleServer>,
        task: Option<Option<std::time::Duration>>,
    ) -> Result<CallToolResponse, ErrorData> {
        let name = request.name;
        if self.registry.get(&name, self.agent.as_ref()).is_none() {
            return Err(unknown_tool(&name));
        }
        let arguments = request
            .arguments
            .map_or_else(|| Value::Object(serde_json::Map::new()), Value::Object);
        let caller = caller_of(&cx);
        let modern = cx
            .protocol_version()
            .is_some_and(|v| v >= ProtocolVersion::V_2026_07_28);
        let elicit =
            self.approvals.is_enabled() && elicit::can_elicit(cx.client_capabilities().as_ref());
        // A 2026-07-28 retry answers the approval it was asked: its state must be ours, for
        // this very call, and new.
        let rounds = if elicit && modern {
            let bind = elicit::CallContext {
                server: &self.info.server_info.name,
                tool: &name,
                arguments: &arguments,
                caller: caller.as_deref(),
                view: self.agent.as_ref().map(AgentId::as_str),
            };
            Some(self.approvals.rounds(
                request.request_state.as_deref(),
                request.input_responses,
                &bind,
            )?)
        } else {
            None
        };
        let mut input =
            ToolExecutionInput::new(format!("mcp-{}", cx.id), &*name, arguments, cx.ct.clone());
        if let Some(agent) = &self.agent {
            input = input.agent(agent.clone());
        }
        input.caller = caller.clone();
        let approval = match &rounds {
            Some(rounds) => Some(rounds.channel()),
            None if elicit => Some(crate::call::CallApproval(Arc::new(elicit::Elicit {
                peer: cx.peer.clone(),
                server: self.info.server_info.name.clone(),
                timeout: self.approvals.timeout,
            }))),
            None => None,
        };
        let asked = Asked::of(&cx, modern, task);
        let route = tasks::route(self.tasks.as_ref(), &name, self.agent.as_ref(), asked)?;
        let result = match route {
            Route::Task { tasks, ttl, legacy } => {
                match tasks::begin(tasks, input, approval, ttl, legacy.then_some(&cx)).await {
                    Begun::Task(mut task) => {
                        if !legacy {
                            self.stamp(&mut task.meta);
                        }
                        return Ok(CallToolResponse::Task(*task));
                    }
                    Begun::Settled(result) => result,
                }
            }
            Route::InPlace => match cx.meta.get_progress_token() {
                None => self.execute(input, approval).await,
                Some(token) => {
                    progress::forwarding(input, token, &cx.peer, |input| {
                        self.execute(input, approval)
                    })
                    .await
                }
            },
        };
        let Some(result) = result else {
            // Suspended at its `ask`: the client's user answers, the client retries.
            // The state binds the arguments the call was asked with: the request's own (no
            // stage before pre-execute changes them), so the retry's digest is the same.
            let ask = rounds.as_ref().and_then(|r| r.take_ask());
            let Some((ask, arguments)) = ask.and_then(|a| a.arguments.clone().map(|v| (a, v)))
            else {
                return Err(ErrorData::internal_error(
                    "a call suspended for approval without asking",
                    None,
                ));
            };
            let bind = elicit::CallContext {
                server: &self.info.server_info.name,
                tool: &name,
                arguments: &arguments,
                caller: caller.as_deref(),
                view: self.agent.as_ref().map(AgentId::as_str),
            };
            let asked = self.approvals.input_required(&ask, &bind);
            return match asked {
                Ok(mut asked) => {
                    self.stamp(&mut asked.meta);
                    Ok(asked.into())
                }
                Err(e) => {
                    let failed = ToolExecutionResult::failure(e);
                    let mut result = map::call_result(failed, modern);
                    if modern {
                        self.stamp(&mut result.meta);
                    }
                    Ok(result.into())
                }
            };
        };
        // The tool went away during the call (a remote failure carrying that code is a result).
        if result.code() == Some(crate::error::codes::UNKNOWN_TOOL)
            && self.registry.get(&name, self.agent.as_ref()).is_none()
        {
            return Err(unknown_tool(&name));
        }
        let structured_any = modern;
        let mut result = map::call_result(result, structured_any);
        if name == crate::registry::TOOL_SEARCH
            && self
                .lister(&self.mcp_tools_marked())
                .after_search(&mut result, modern)
            && let Err(e) = cx.peer.notify_tool_list_changed().await
        {
            tracing::debug!("MCP: tools/list_changed not sent to the session: {e}");
        }
        if structured_any {
            self.stamp(&mut result.meta);
        }
        Ok(result.into())
    }

    /// Runs a call through the registry, with the client's user as its approval channel when
    /// there is one; `None` when that channel suspended it (a 2026-07-28 first round).
    async fn execute(
        &self,
        input: ToolExecutionInput,
        approval: Option<crate::call::CallApproval>,
    ) -> Option<ToolExecutionResult> {
        match approval {
            Some(approval) => self.registry.execute_or_suspend(input, approval).await,
            None => Some(self.registry.execute(input).await),
        }
    }

    /// The tasks calls run as (the transports then serve the 2025-11-25 tasks too), and the
    /// view whose tools these are.
    pub(super) fn task_view(&self) -> Option<(&crate::task::Tasks, Option<&AgentId>)> {
        self.tasks.as_ref().map(|t| (t, self.agent.as_ref()))
    }

    /// Adds `_meta["io.modelcontextprotocol/serverInfo"]`, which 2026-07-28 results should
    /// carry (a stateless client learns who answered from each result).
    fn stamp(&self, meta: &mut Option<rmcp::model::MetaObject>) {
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

fn unknown_tool(name: &str) -> ErrorData {
    ErrorData::invalid_params(format!("Unknown tool: {name}"), None)
}

/// Why serving stopped with an error (the transport failed or the handshake did).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("MCP server: {0}")]
pub struct ServeError(pub(crate) String);

impl ServerHandler for McpServer {
    fn get_info(&self) -> ServerConfig {
        (*self.info).clone()
    }

    async fn list_tools(
        &self,
        request: Option<PaginatedRequestParams>,
        cx: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        // Every tool is on the first page, which has no next cursor: any cursor is not ours.
        if let Some(cursor) = request.and_then(|r| r.cursor) {
            let shown: String = cursor.chars().take(64).collect();
            return Err(ErrorData::invalid_params(
                format!(
                    "Invalid params: unknown cursor {shown:?} (this server lists every tool on one page)"
                ),
                None,
            ));
        }
        let modern = cx
            .protocol_version()
            .is_some_and(|v| v >= ProtocolVersion::V_2026_07_28);
        let all = self.mcp_tools_marked();
        let rules = self.registry.visibility_rules();
        let mut list = self
            .lister(&all)
            .listing(&rules, caller_of(&cx).as_deref(), modern);
        if modern {
            self.stamp(&mut list.meta);
        }
        Ok(list)
    }

    /// Any tool of the view, listed or not (a deferred tool is callable).
    fn get_tool(&self, name: &str) -> Option<Tool> {
        self.mcp_tools_marked()
            .iter()
            .find(|(t, _)| t.name == name)
            .map(|(t, _)| t.clone())
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        cx: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        // Boxed: the call's future (the whole pipeline's state, several KiB) would otherwise
        // sit inline in rmcp's per-request task, which tokio copies on spawn and completion.
        let task = cx.extensions.get::<tasks_2025::Augmented>().map(|a| a.0);
        let span = super::trace::server_span(&request.name, &cx);
        #[cfg(feature = "otel")]
        let metric = super::trace::Metric::start(
            &request.name,
            self.registry
                .get(&request.name, self.agent.as_ref())
                .is_some(),
            &cx,
        );
        let answer = Box::pin(self.call(request, cx, task))
            .instrument(span.clone())
            .await;
        super::trace::settle(&span, &answer);
        #[cfg(feature = "otel")]
        metric.settle(&answer);
        answer
    }

    /// A legacy session is told of changes from its `initialize` on (not from
    /// `notifications/initialized`): in a fleet sharing a session store, the instance that
    /// answered `initialize` may never see the notification (it lands on another instance),
    /// yet the client's `GET` stream may open on it; an instance restoring the session from
    /// the store replays `initialize` too.
    async fn initialize(
        &self,
        request: rmcp::model::InitializeRequestParams,
        cx: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::InitializeResult, ErrorData> {
        cx.peer.set_peer_info(request.clone());
        let mut answer = self.negotiate_initialize(&request)?;
        // Such a session is not told of the 2026-07-28 extension (its own revision's tasks
        // capability is added by the transport: see `tasks_2025`).
        if let Some(extensions) = answer.capabilities.extensions.as_mut() {
            extensions.remove(rmcp::model::TASKS_EXTENSION_ID);
            if extensions.is_empty() {
                answer.capabilities.extensions = None;
            }
        }
        let mut peers = self
            .shared
            .legacy_peers
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        // Sessions that ended since the last change are dropped here too, so the list stays
        // as long as the number of live sessions.
        peers.retain(|p| !p.is_transport_closed());
        peers.push(cx.peer.clone());
        drop(peers);
        self.start_forwarder();
        Ok(answer)
    }

    /// The 2025-11-25 tasks (`serve/tasks_2025.rs`): the transports hand these requests over
    /// under names of their own.
    async fn on_custom_request(
        &self,
        request: rmcp::model::CustomRequest,
        cx: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::CustomResult, ErrorData> {
        tasks_2025::serve(self, self.task_view(), request, cx)
            .await
            .map(rmcp::model::CustomResult::new)
    }

    async fn get_task(
        &self,
        request: rmcp::model::GetTaskParams,
        cx: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::GetTaskResult, ErrorData> {
        let owner = caller_of(&cx).map(|c| c.subject().to_owned());
        tasks::get(self.tasks.as_ref(), &request.task_id, owner.as_deref()).await
    }

    async fn update_task(
        &self,
        request: rmcp::model::UpdateTaskParams,
        cx: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let owner = caller_of(&cx).map(|c| c.subject().to_owned());
        tasks::update(self.tasks.as_ref(), &request.task_id, owner.as_deref()).await
    }

    async fn cancel_task(
        &self,
        request: rmcp::model::CancelTaskParams,
        cx: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let owner = caller_of(&cx).map(|c| c.subject().to_owned());
        tasks::cancel(self.tasks.as_ref(), &request.task_id, owner.as_deref()).await
    }

    fn accepted_subscription_filter(
        &self,
        _requested: &SubscriptionFilter,
    ) -> Option<SubscriptionFilter> {
        Some(SubscriptionFilter::builder().tools_list_changed().build())
    }

    async fn listen(&self, cx: SubscriptionContext) -> Result<(), ErrorData> {
        let mut changes = self.shared.changes.subscribe();
        loop {
            tokio::select! {
                () = cx.cancelled() => return Ok(()),
                changed = changes.changed() => {
                    if changed.is_err() || cx.sink().notify_tool_list_changed().await.is_err() {
                        return Ok(());
                    }
                }
            }
        }
    }
}

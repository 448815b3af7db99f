//! `McpImport`: a remote MCP server's tools as ordinary definitions in a registry.

use super::{inbound, map};
use crate::call::{AgentId, ToolRunContext};
use crate::definition::{OutputDecl, ToolDefinition};
use crate::error::ToolError;
use crate::registry::{Registry, ScopedRegistration};
use crate::schema::{CompiledSchema, Root, ToolArgsError, bridge};
use rmcp::model::{CallToolRequestParams, PaginatedRequestParams, SubscriptionFilter, Tool};
use rmcp::service::{
    ClientLifecycleMode, ClientServiceExt, NotificationContext, RunningService, ServiceError,
};
use rmcp::{ClientHandler, Peer, RoleClient};
use serde_json::Value;
use std::collections::{HashMap, HashSet};
use std::fmt;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::watch;

/// What to do with a remote tool's `inputSchema`, which may use any JSON Schema 2020-12
/// keyword.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum SchemaPolicy {
    /// Convert it into the subset ([`bridge::from_foreign`]: annotation-only keywords dropped,
    /// `anyOf [T, null]` made a `oneOf`, local `$ref`s inlined) and validate every call locally,
    /// with our paths, before any round trip. A schema that does not convert is passed through
    /// (reported in [`ImportedTools::passed_through`]).
    #[default]
    Convert,
    /// Show the model the remote schema as it is; the remote server validates.
    PassThrough,
    /// Convert, and skip tools whose schema does not convert (reported in
    /// [`ImportedTools::skipped`]): for hosts whose model dialects need the subset.
    Reject,
}

/// How remote tools are registered.
#[derive(Clone, Debug, Default)]
pub struct ImportOptions {
    /// Prepended to every remote name (`"github_"`): the spec asks aggregators to disambiguate.
    pub prefix: Option<String>,
    /// The agent scope to register in (default: the global layer).
    pub scope: Option<AgentId>,
    /// The input-schema policy.
    pub schemas: SchemaPolicy,
    /// Whether an imported tool a provider dialect cannot express fails
    /// [`Registry::provider_tools`](crate::Registry::provider_tools) for every tool. Off by
    /// default: such a tool is left out of that export and reported in
    /// [`ProviderTools::skipped`](crate::provider::ProviderTools::skipped), so one remote schema
    /// cannot stop a host from sending any tools to its model.
    pub require_export: bool,
}

impl ImportOptions {
    /// Prefixes every remote name with `prefix`.
    pub fn prefix(mut self, prefix: impl Into<String>) -> Self {
        self.prefix = Some(prefix.into());
        self
    }

    /// Registers in `agent`'s scope.
    pub fn scope(mut self, agent: impl Into<AgentId>) -> Self {
        self.scope = Some(agent.into());
        self
    }

    /// Sets the schema policy.
    pub fn schemas(mut self, policy: SchemaPolicy) -> Self {
        self.schemas = policy;
        self
    }

    /// Sets [`require_export`](Self::require_export).
    pub fn require_export(mut self, require: bool) -> Self {
        self.require_export = require;
        self
    }
}

/// Why connecting or listing failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ImportError {
    /// The child process could not be started.
    #[error("cannot start the MCP server process: {0}")]
    Spawn(#[source] std::io::Error),
    /// The handshake failed.
    #[error("cannot connect to the MCP server: {0}")]
    Connect(String),
    /// A request to the server failed.
    #[error("MCP request failed: {0}")]
    Request(#[from] ServiceError),
    /// The server did not answer within the [`Limits`] timeout.
    #[error("the MCP server did not answer {what} within {after:?}")]
    Timeout {
        /// What was asked (`the handshake`, `tools/list`).
        what: &'static str,
        /// The timeout.
        after: Duration,
    },
    /// The server's tool list is larger than the [`Limits`] allow.
    #[error("the MCP server's tool list is too large: {0}")]
    TooLarge(String),
}

/// How long an import waits and how much it accepts from a server it does not control. The MCP
/// lifecycle asks every request to time out; a server's list can be as long as it likes.
///
/// ```
/// use dsh_tools::mcp::Limits;
/// use std::time::Duration;
///
/// let limits = Limits::default().call_timeout(Duration::from_secs(30)).max_tools(500);
/// assert_eq!(limits.handshake_timeout, Duration::from_secs(30));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Limits {
    /// The `initialize` handshake (or the 2026 discovery): 30 s.
    pub handshake_timeout: Duration,
    /// Each `tools/list` page and the `subscriptions/listen` request: 30 s.
    pub request_timeout: Duration,
    /// Each `tools/call`: 300 s. A call past it fails with `MCP_TIMEOUT` (and the server is sent
    /// `notifications/cancelled`); a tool's own `timeout_ms` or a timeout wrapper may cut it
    /// shorter.
    pub call_timeout: Duration,
    /// Pages of `tools/list` read per listing: 100. A cursor the server already gave ends the
    /// listing early.
    pub max_pages: usize,
    /// Tools accepted per listing: 10,000.
    pub max_tools: usize,
    /// The longest message read from a child process: 16 MiB (rmcp's own limit). A longer answer
    /// fails its request with `MCP_TRANSPORT_ERROR` instead of leaving it waiting.
    pub max_message_bytes: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            handshake_timeout: Duration::from_secs(30),
            request_timeout: Duration::from_secs(30),
            call_timeout: Duration::from_secs(300),
            max_pages: 100,
            max_tools: 10_000,
            max_message_bytes: inbound::MAX_LINE,
        }
    }
}

impl Limits {
    /// Sets [`handshake_timeout`](Self::handshake_timeout).
    pub fn handshake_timeout(mut self, timeout: Duration) -> Self {
        self.handshake_timeout = timeout;
        self
    }

    /// Sets [`request_timeout`](Self::request_timeout).
    pub fn request_timeout(mut self, timeout: Duration) -> Self {
        self.request_timeout = timeout;
        self
    }

    /// Sets [`call_timeout`](Self::call_timeout).
    pub fn call_timeout(mut self, timeout: Duration) -> Self {
        self.call_timeout = timeout;
        self
    }

    /// Sets [`max_pages`](Self::max_pages).
    pub fn max_pages(mut self, pages: usize) -> Self {
        self.max_pages = pages;
        self
    }

    /// Sets [`max_tools`](Self::max_tools).
    pub fn max_tools(mut self, tools: usize) -> Self {
        self.max_tools = tools;
        self
    }

    /// Sets [`max_message_bytes`](Self::max_message_bytes).
    pub fn max_message_bytes(mut self, bytes: usize) -> Self {
        self.max_message_bytes = bytes;
        self
    }
}

/// Connects with explicit [`Limits`] ([`McpImport::with_limits`]).
#[derive(Clone, Copy, Debug, Default)]
pub struct Connector {
    limits: Limits,
}

impl Connector {
    /// [`McpImport::connect_stdio`] with these limits.
    pub async fn connect_stdio(
        self,
        mut command: tokio::process::Command,
    ) -> Result<McpImport, ImportError> {
        command
            .kill_on_drop(true)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped());
        let mut child = command.spawn().map_err(ImportError::Spawn)?;
        let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
            return Err(ImportError::Spawn(std::io::Error::other(
                "the child's standard input and output are not piped",
            )));
        };
        if let Some(stderr) = child.stderr.take() {
            tokio::spawn(async move {
                use tokio::io::AsyncBufReadExt;
                let mut lines = tokio::io::BufReader::new(stderr).lines();
                while let Ok(Some(line)) = lines.next_line().await {
                    tracing::info!(target: "dsh_tools::mcp::child", "{}", line.escape_debug());
                }
            });
        }
        let mut import = self
            .connect_io(stdout, stdin, ClientLifecycleMode::Initialize)
            .await?;
        import.child = Some(child);
        Ok(import)
    }

    /// Speaks newline-delimited JSON-RPC over a byte stream (a child's pipes, a socket), as
    /// `connect_stdio` does: an answer that could not be decoded (longer than
    /// [`Limits::max_message_bytes`], or nested past serde_json's 128 levels) fails its request
    /// with `MCP_TRANSPORT_ERROR` at once instead of leaving it pending.
    pub async fn connect_io<R, W>(
        self,
        reader: R,
        writer: W,
        lifecycle: ClientLifecycleMode,
    ) -> Result<McpImport, ImportError>
    where
        R: tokio::io::AsyncRead + Send + Unpin + 'static,
        W: tokio::io::AsyncWrite + Send + Unpin + 'static,
    {
        // rmcp reads the server's output through the filter, which answers for it what it
        // cannot decode.
        let (filtered, sink) = tokio::io::duplex(64 * 1024);
        let max = self.limits.max_message_bytes.min(inbound::MAX_LINE - 1);
        tokio::spawn(inbound::filter(reader, sink, max));
        self.connect_with((filtered, writer), lifecycle).await
    }

    /// [`McpImport::connect_http`] with these limits.
    #[cfg(feature = "mcp-http")]
    pub async fn connect_http(self, url: &str) -> Result<McpImport, ImportError> {
        let transport = rmcp::transport::StreamableHttpClientTransport::from_uri(url.to_owned());
        self.connect(transport).await
    }

    /// [`McpImport::connect`] with these limits.
    pub async fn connect<T, E, A>(self, transport: T) -> Result<McpImport, ImportError>
    where
        T: rmcp::transport::IntoTransport<RoleClient, E, A>,
        E: std::error::Error + Send + Sync + 'static,
    {
        let auto = ClientLifecycleMode::Auto {
            preferred_versions: vec![rmcp::model::ProtocolVersion::LATEST],
            legacy_version: None,
        };
        self.connect_with(transport, auto).await
    }

    /// [`McpImport::connect_with`] with these limits.
    pub async fn connect_with<T, E, A>(
        self,
        transport: T,
        lifecycle: ClientLifecycleMode,
    ) -> Result<McpImport, ImportError>
    where
        T: rmcp::transport::IntoTransport<RoleClient, E, A>,
        E: std::error::Error + Send + Sync + 'static,
    {
        let (changed, _) = watch::channel(0u64);
        let changed = Arc::new(changed);
        let client = ImportClient {
            changed: Arc::clone(&changed),
        };
        let limits = self.limits;
        let service = tokio::time::timeout(
            limits.handshake_timeout,
            client.serve_with_lifecycle(transport, lifecycle),
        )
        .await
        .map_err(|_| ImportError::Timeout {
            what: "the handshake",
            after: limits.handshake_timeout,
        })?
        .map_err(|e| ImportError::Connect(e.to_string()))?;
        let mut import = McpImport {
            service,
            changed,
            listener: None,
            limits,
            child: None,
        };
        import.listen_for_changes().await;
        Ok(import)
    }
}

/// The client side of one connection: tells the importers when the remote list changes.
#[derive(Clone)]
struct ImportClient {
    changed: Arc<watch::Sender<u64>>,
}

impl ClientHandler for ImportClient {
    async fn on_tool_list_changed(&self, _cx: NotificationContext<RoleClient>) {
        self.changed.send_modify(|n| *n = n.wrapping_add(1));
    }
}

/// A connection to an MCP server whose tools can be imported into registries.
///
/// A remote tool's `title` and annotations become the definition's title and
/// [`ToolHints`](crate::ToolHints), as *untrusted* hints: MCP asks clients to treat annotations
/// from servers they do not trust as claims, never as guarantees (a tool claiming `read_only`
/// may still write). Policies and approvals should not rely on them for remote tools.
///
/// ```no_run
/// use dsh_tools::Registry;
/// use dsh_tools::mcp::{ImportOptions, McpImport};
///
/// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
/// let registry = Registry::new();
/// let mut command = tokio::process::Command::new("my-mcp-server");
/// command.arg("--stdio");
/// let server = McpImport::connect_stdio(command).await?;
/// let imported = server.import_into(&registry, ImportOptions::default().prefix("remote_")).await?;
/// println!("imported {:?}, collisions {:?}", imported.names(), imported.collisions());
/// // The tools stay registered (and follow the server's list_changed) while `imported` lives.
/// # Ok(()) }
/// ```
pub struct McpImport {
    service: RunningService<RoleClient, ImportClient>,
    changed: Arc<watch::Sender<u64>>,
    listener: Option<tokio::task::JoinHandle<()>>,
    limits: Limits,
    /// The server process of [`connect_stdio`](Self::connect_stdio), killed on drop.
    child: Option<tokio::process::Child>,
}

impl fmt::Debug for McpImport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("McpImport")
            .field("server", &self.service.peer().peer_info())
            .finish_non_exhaustive()
    }
}

impl Drop for McpImport {
    fn drop(&mut self) {
        if let Some(task) = self.listener.take() {
            task.abort();
        }
    }
}

impl McpImport {
    /// Starts `command` and speaks MCP over its standard input and output (the `initialize`
    /// handshake first, which every server version understands), with the default [`Limits`].
    /// The child's standard error goes to `tracing` (target `dsh_tools::mcp::child`), never to
    /// our standard output; the child is killed when the connection is dropped.
    pub async fn connect_stdio(command: tokio::process::Command) -> Result<Self, ImportError> {
        Connector::default().connect_stdio(command).await
    }

    /// Connects with explicit [`Limits`]:
    /// `McpImport::with_limits(limits).connect_stdio(command).await`.
    pub fn with_limits(limits: Limits) -> Connector {
        Connector { limits }
    }

    /// The limits this connection applies.
    pub fn limits(&self) -> Limits {
        self.limits
    }

    /// Connects over the streamable HTTP transport to `url` (plain `http://`; for TLS, enable
    /// rmcp's `reqwest` feature and build the transport yourself), negotiating 2026-07-28 when
    /// the server has it and the handshake otherwise.
    #[cfg(feature = "mcp-http")]
    pub async fn connect_http(url: &str) -> Result<Self, ImportError> {
        Connector::default().connect_http(url).await
    }

    /// Connects over any rmcp client transport (`tokio::io::duplex` halves, a TCP stream, …),
    /// negotiating the newest protocol both sides have.
    pub async fn connect<T, E, A>(transport: T) -> Result<Self, ImportError>
    where
        T: rmcp::transport::IntoTransport<RoleClient, E, A>,
        E: std::error::Error + Send + Sync + 'static,
    {
        Connector::default().connect(transport).await
    }

    /// Connects with an explicit lifecycle (`ClientLifecycleMode::Initialize` forces the
    /// legacy handshake).
    pub async fn connect_with<T, E, A>(
        transport: T,
        lifecycle: ClientLifecycleMode,
    ) -> Result<Self, ImportError>
    where
        T: rmcp::transport::IntoTransport<RoleClient, E, A>,
        E: std::error::Error + Send + Sync + 'static,
    {
        Connector::default()
            .connect_with(transport, lifecycle)
            .await
    }

    /// In the 2026-07-28 era, changes arrive only inside `subscriptions/listen`.
    async fn listen_for_changes(&mut self) {
        let modern = self
            .peer()
            .peer_info()
            .is_some_and(|i| i.protocol_version >= rmcp::model::ProtocolVersion::V_2026_07_28);
        if !modern {
            return;
        }
        let filter = SubscriptionFilter::builder().tools_list_changed().build();
        let listen = tokio::time::timeout(self.limits.request_timeout, self.peer().listen(filter));
        let Ok(Ok(mut subscription)) = listen.await else {
            tracing::debug!("MCP import: the server offers no subscriptions/listen");
            return;
        };
        let changed = Arc::clone(&self.changed);
        self.listener = Some(tokio::spawn(async move {
            while let Ok(Some(notification)) = subscription.next().await {
                if matches!(
                    notification,
                    rmcp::model::ServerNotification::ToolListChangedNotification(_)
                ) {
                    changed.send_modify(|n| *n = n.wrapping_add(1));
                }
            }
        }));
    }

    /// The rmcp peer (for requests this module does not wrap).
    pub fn peer(&self) -> &Peer<RoleClient> {
        self.service.peer()
    }

    /// The remote server's tools, every page (within the [`Limits`]: each page within the
    /// request timeout, at most `max_pages` pages and `max_tools` tools; a cursor the server
    /// already gave ends the listing).
    pub async fn list_tools(&self) -> Result<Vec<Tool>, ImportError> {
        list_all(self.peer(), &self.limits).await
    }

    /// Registers every remote tool in `registry` and keeps them in step with the server's
    /// `tools/list_changed` for as long as the returned handle lives (dropping it unregisters
    /// them).
    ///
    /// A name already visible where a tool would be registered is a collision: the remote tool
    /// is skipped and reported, never shadowing the local one.
    ///
    /// The imported tools call through this connection: keep the `McpImport` alive while they
    /// are used (once it is dropped, their calls fail with `MCP_TRANSPORT_ERROR`).
    pub async fn import_into(
        &self,
        registry: &Registry,
        options: ImportOptions,
    ) -> Result<ImportedTools, ImportError> {
        // Subscribed before listing, so a change between the two is not missed.
        let mut changes = self.changed.subscribe();
        let tools = self.list_tools().await?;
        let state = Arc::new(Mutex::new(SyncState::default()));
        let ctx = SyncCtx {
            registry: registry.clone(),
            options: Arc::new(options),
            peer: self.peer().clone(),
            limits: self.limits,
        };
        sync(&ctx, &state, tools);
        let task_state = Arc::clone(&state);
        let task = tokio::spawn(async move {
            while changes.changed().await.is_ok() {
                match list_all(&ctx.peer, &ctx.limits).await {
                    Ok(tools) => sync(&ctx, &task_state, tools),
                    Err(e) => tracing::warn!("MCP import: re-listing after list_changed: {e}"),
                }
            }
        });
        Ok(ImportedTools {
            state,
            task,
            registry: registry.clone(),
        })
    }
}

/// The tools one [`McpImport::import_into`] registered. Dropping it unregisters them and stops
/// following the server's changes.
pub struct ImportedTools {
    state: Arc<Mutex<SyncState>>,
    task: tokio::task::JoinHandle<()>,
    registry: Registry,
}

impl fmt::Debug for ImportedTools {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ImportedTools")
            .field("names", &self.names())
            .field("collisions", &self.collisions())
            .finish_non_exhaustive()
    }
}

impl Drop for ImportedTools {
    fn drop(&mut self) {
        self.task.abort();
        // The aborted task still holds the state until the runtime drops it: unregister now.
        let live = std::mem::take(&mut self.state.lock().unwrap_or_else(|e| e.into_inner()).live);
        let registrations = live.into_values().filter_map(|(_, r)| r.into_inner());
        self.registry.dispose_all(registrations);
    }
}

impl ImportedTools {
    fn with<R>(&self, f: impl FnOnce(&SyncState) -> R) -> R {
        f(&self.state.lock().unwrap_or_else(|e| e.into_inner()))
    }

    /// The local names registered, in the server's order.
    pub fn names(&self) -> Vec<String> {
        self.with(|s| s.order.clone())
    }

    /// Remote tools not registered because their local name was already taken.
    pub fn collisions(&self) -> Vec<String> {
        self.with(|s| s.collisions.clone())
    }

    /// Tools whose schema did not convert and was passed through (name, why).
    pub fn passed_through(&self) -> Vec<(String, String)> {
        self.with(|s| s.passed_through.clone())
    }

    /// Tools not registered for another reason (name, why): a name that is empty, longer than
    /// 128 characters or holds control or bidirectional-override characters (shown escaped), a
    /// name the server listed twice, a schema rejected by [`SchemaPolicy::Reject`], an invalid
    /// output schema, a failing change listener.
    pub fn skipped(&self) -> Vec<(String, String)> {
        self.with(|s| s.skipped.clone())
    }
}

#[derive(Default)]
struct SyncState {
    /// Remote name → (the remote tool as JSON, to notice changes; the registration).
    live: HashMap<String, (Value, ScopedRegistration)>,
    order: Vec<String>,
    collisions: Vec<String>,
    passed_through: Vec<(String, String)>,
    skipped: Vec<(String, String)>,
}

struct SyncCtx {
    registry: Registry,
    options: Arc<ImportOptions>,
    peer: Peer<RoleClient>,
    limits: Limits,
}

/// Every page of `tools/list`, within `limits`.
async fn list_all(peer: &Peer<RoleClient>, limits: &Limits) -> Result<Vec<Tool>, ImportError> {
    let mut tools = Vec::new();
    let mut cursors = HashSet::new();
    let mut params: Option<PaginatedRequestParams> = None;
    for _ in 0..limits.max_pages {
        let page = tokio::time::timeout(limits.request_timeout, peer.list_tools(params.take()))
            .await
            .map_err(|_| ImportError::Timeout {
                what: "tools/list",
                after: limits.request_timeout,
            })??;
        if tools.len() + page.tools.len() > limits.max_tools {
            return Err(ImportError::TooLarge(format!(
                "more than {} tools (Limits::max_tools)",
                limits.max_tools
            )));
        }
        tools.extend(page.tools);
        match page.next_cursor {
            None => return Ok(tools),
            Some(cursor) if !cursors.insert(cursor.clone()) => {
                tracing::warn!(
                    "MCP import: the server repeated the cursor {:?}; the listing ends there",
                    cursor.escape_debug().to_string()
                );
                return Ok(tools);
            }
            Some(cursor) => {
                params = Some(PaginatedRequestParams::default().with_cursor(Some(cursor)))
            }
        }
    }
    Err(ImportError::TooLarge(format!(
        "more than {} pages (Limits::max_pages)",
        limits.max_pages
    )))
}

/// Why a remote tool's name is not registered, if it is not: one a terminal, a log or a model
/// would show as something else.
fn hostile_name(name: &str) -> Option<&'static str> {
    if name.is_empty() {
        return Some("the name is empty");
    }
    if name.chars().count() > 128 {
        return Some("the name is longer than 128 characters");
    }
    let invisible = |c: char| {
        c.is_control()
            || matches!(c, '\u{200b}'..='\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2060}'..='\u{2069}' | '\u{feff}' | '\u{061c}')
    };
    name.contains(invisible)
        .then_some("the name holds control, invisible or bidirectional-override characters")
}

/// Brings the registrations in line with `tools`: unchanged tools stay, changed ones are
/// replaced in place (a call in between never sees `UNKNOWN_TOOL`), removed ones go in one pass.
fn sync(ctx: &SyncCtx, state: &Mutex<SyncState>, tools: Vec<Tool>) {
    let mut state = state.lock().unwrap_or_else(|e| e.into_inner());
    state.order.clear();
    state.collisions.clear();
    state.passed_through.clear();
    state.skipped.clear();
    let prefix = ctx.options.prefix.as_deref().unwrap_or("");
    // The tools to keep, de-duplicated (the first of a name wins) and with printable names.
    let mut seen = HashSet::new();
    let mut wanted = Vec::with_capacity(tools.len());
    for tool in tools {
        let remote = tool.name.to_string();
        if let Some(why) = hostile_name(&remote) {
            let shown: String = remote
                .chars()
                .take(64)
                .collect::<String>()
                .escape_debug()
                .to_string();
            tracing::warn!("MCP import: the remote tool \"{shown}\" is skipped: {why}");
            state.skipped.push((shown, why.to_owned()));
            continue;
        }
        if !seen.insert(remote.clone()) {
            state.skipped.push((
                format!("{prefix}{remote}"),
                "the server listed this name more than once; the first is registered".to_owned(),
            ));
            continue;
        }
        let fingerprint = serde_json::to_value(&tool).unwrap_or(Value::Null);
        wanted.push((remote, tool, fingerprint));
    }
    let gone: Vec<String> = state
        .live
        .keys()
        .filter(|name| !seen.contains(name.as_str()))
        .cloned()
        .collect();
    let removed = gone
        .iter()
        .filter_map(|name| state.live.remove(name))
        .filter_map(|(_, registration)| registration.into_inner());
    ctx.registry.dispose_all(removed.collect::<Vec<_>>());
    for (remote, tool, fingerprint) in wanted {
        let local = format!("{prefix}{remote}");
        let previous = state.live.remove(&remote);
        if let Some((old, registration)) = previous {
            if old == fingerprint {
                state.live.insert(remote, (old, registration));
                state.order.push(local);
                continue;
            }
            // Changed: replace it where it stands.
            let outcome = definition(ctx, &local, tool, &mut state).and_then(|d| {
                let old = registration
                    .into_inner()
                    .ok_or_else(|| "the registration is gone".to_owned())?;
                ctx.registry.replace_tool(old, d).map_err(|e| e.to_string())
            });
            match outcome {
                Ok(registration) => {
                    state
                        .live
                        .insert(remote, (fingerprint, registration.scoped()));
                    state.order.push(local);
                }
                Err(why) => state.skipped.push((local, why)),
            }
            continue;
        }
        if ctx
            .registry
            .get(&local, ctx.options.scope.as_ref())
            .is_some()
        {
            tracing::warn!(
                "MCP import: {local:?} is already registered; the remote tool is skipped"
            );
            state.collisions.push(local);
            continue;
        }
        let definition = match definition(ctx, &local, tool, &mut state) {
            Ok(d) => d,
            Err(why) => {
                state.skipped.push((local, why));
                continue;
            }
        };
        let registered = match &ctx.options.scope {
            Some(agent) => ctx.registry.scope(agent.clone()).register(definition),
            None => ctx.registry.register(definition),
        };
        match registered {
            Ok(registration) => {
                state
                    .live
                    .insert(remote, (fingerprint, registration.scoped()));
                state.order.push(local);
            }
            Err(e) => state.skipped.push((local, e.to_string())),
        }
    }
}

/// A remote tool as a definition whose body calls it.
fn definition(
    ctx: &SyncCtx,
    local: &str,
    tool: Tool,
    state: &mut SyncState,
) -> Result<ToolDefinition, String> {
    let raw = Value::Object((*tool.input_schema).clone());
    let (parameters, compiled) = match ctx.options.schemas {
        SchemaPolicy::PassThrough => (raw, None),
        policy => match bridge::from_foreign(&raw) {
            Ok(converted) => match CompiledSchema::compile(&converted) {
                Ok(compiled) => (converted, Some(Arc::new(compiled))),
                Err(e) => return Err(format!("its converted schema does not compile: {e}")),
            },
            Err(e) if policy == SchemaPolicy::Reject => return Err(e.to_string()),
            Err(e) => {
                state.passed_through.push((local.to_owned(), e.to_string()));
                (raw, None)
            }
        },
    };
    let structured = tool
        .output_schema
        .as_ref()
        .and_then(|s| bridge::from_foreign(&Value::Object((**s).clone())).ok())
        .unwrap_or_else(|| serde_json::json!({}));
    let output = OutputDecl::new(map::remote_output_schema(structured), |_, value| {
        map::remote_content(value)
    });
    let remote = tool.name.to_string();
    let peer = ctx.peer.clone();
    let timeout = ctx.limits.call_timeout;
    let mut definition = ToolDefinition::new(
        local,
        tool.description.as_deref().unwrap_or_default(),
        parameters,
        output,
        move |args: Arc<Value>, run: ToolRunContext| {
            let call = Remote {
                peer: peer.clone(),
                name: remote.clone(),
                compiled: compiled.clone(),
                timeout,
            };
            call.run(args, run)
        },
    )
    .hints(map::hints(tool.annotations.as_ref()))
    .skip_unexportable(!ctx.options.require_export);
    let title = tool
        .title
        .clone()
        .or_else(|| tool.annotations.as_ref().and_then(|a| a.title.clone()));
    if let Some(title) = title {
        definition = definition.title(title);
    }
    Ok(definition)
}

/// One remote tool's call target.
struct Remote {
    peer: Peer<RoleClient>,
    name: String,
    compiled: Option<Arc<CompiledSchema>>,
    timeout: Duration,
}

impl Remote {
    /// One remote call: local validation (when the schema converted), then `tools/call`,
    /// dropped (which sends `notifications/cancelled`) when our signal fires or the call timeout
    /// passes.
    async fn run(self, args: Arc<Value>, run: ToolRunContext) -> Result<Value, ToolError> {
        if let Some(compiled) = &self.compiled {
            let violations = compiled.validate_at(&args, Root::Parameters);
            if !violations.is_empty() {
                return Err(ToolArgsError::new(violations).into());
            }
        }
        let Some(arguments) = map::arguments(&args) else {
            return Err(ToolError::coded(
                "ToolArgsError",
                crate::error::codes::INVALID_ARGS,
                "invalid arguments: MCP tool arguments must be an object",
            ));
        };
        drop(args);
        let request = CallToolRequestParams::new(self.name).with_arguments(arguments);
        let result = tokio::select! {
            result = tokio::time::timeout(self.timeout, self.peer.call_tool(request)) => result,
            () = run.signal().cancelled() => return Err(ToolError::aborted()),
        };
        let Ok(result) = result else {
            return Err(ToolError::coded(
                "McpError",
                "MCP_TIMEOUT",
                format!(
                    "the MCP server did not answer tools/call within {:?} (Limits::call_timeout)",
                    self.timeout
                ),
            ));
        };
        match result {
            Ok(result) if result.is_error == Some(true) => Err(map::remote_error(&result)),
            Ok(result) => Ok(map::remote_value(result)),
            Err(ServiceError::McpError(e)) if e.code.0 == inbound::UNDECODABLE => Err(
                ToolError::coded("McpError", "MCP_TRANSPORT_ERROR", e.message.to_string()),
            ),
            Err(ServiceError::McpError(e)) => Err(ToolError::coded(
                "McpError",
                "MCP_PROTOCOL_ERROR",
                format!("{}: {}", e.code.0, e.message),
            )),
            Err(e) => Err(ToolError::coded(
                "McpError",
                "MCP_TRANSPORT_ERROR",
                e.to_string(),
            )),
        }
    }
}

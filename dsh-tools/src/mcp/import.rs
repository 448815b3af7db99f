//! `McpImport`: a remote MCP server's tools as ordinary definitions in a registry.

use super::map;
use crate::definition::{OutputDecl, ToolDefinition};
use crate::error::ToolError;
use crate::pipeline::{AgentId, ToolRunContext};
use crate::registry::{Registry, ScopedRegistration};
use crate::schema::{CompiledSchema, Root, ToolArgsError, bridge};
use rmcp::model::{CallToolRequestParams, SubscriptionFilter, Tool};
use rmcp::service::{
    ClientLifecycleMode, ClientServiceExt, NotificationContext, RunningService, ServiceError,
};
use rmcp::{ClientHandler, Peer, RoleClient};
use serde_json::Value;
use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, Mutex};
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
    /// handshake first, which every server version understands). The child's standard error
    /// goes to `tracing` (target `dsh_tools::mcp::child`), never to our standard output; the
    /// child is killed when the connection is dropped.
    pub async fn connect_stdio(mut command: tokio::process::Command) -> Result<Self, ImportError> {
        command.kill_on_drop(true);
        let (transport, stderr) = rmcp::transport::TokioChildProcess::builder(command)
            .stderr(std::process::Stdio::piped())
            .spawn()
            .map_err(ImportError::Spawn)?;
        if let Some(stderr) = stderr {
            tokio::spawn(async move {
                use tokio::io::AsyncBufReadExt;
                let mut lines = tokio::io::BufReader::new(stderr).lines();
                while let Ok(Some(line)) = lines.next_line().await {
                    tracing::info!(target: "dsh_tools::mcp::child", "{line}");
                }
            });
        }
        Self::connect_with(transport, ClientLifecycleMode::Initialize).await
    }

    /// Connects over the streamable HTTP transport to `url` (plain `http://`; for TLS, enable
    /// rmcp's `reqwest` feature and build the transport yourself), negotiating 2026-07-28 when
    /// the server has it and the handshake otherwise.
    #[cfg(feature = "mcp-http")]
    pub async fn connect_http(url: &str) -> Result<Self, ImportError> {
        let transport = rmcp::transport::StreamableHttpClientTransport::from_uri(url.to_owned());
        Self::connect(transport).await
    }

    /// Connects over any rmcp client transport (`tokio::io::duplex` halves, a TCP stream, …),
    /// negotiating the newest protocol both sides have.
    pub async fn connect<T, E, A>(transport: T) -> Result<Self, ImportError>
    where
        T: rmcp::transport::IntoTransport<RoleClient, E, A>,
        E: std::error::Error + Send + Sync + 'static,
    {
        let auto = ClientLifecycleMode::Auto {
            preferred_versions: vec![rmcp::model::ProtocolVersion::LATEST],
            legacy_version: None,
        };
        Self::connect_with(transport, auto).await
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
        let (changed, _) = watch::channel(0u64);
        let changed = Arc::new(changed);
        let client = ImportClient {
            changed: Arc::clone(&changed),
        };
        let service = client
            .serve_with_lifecycle(transport, lifecycle)
            .await
            .map_err(|e| ImportError::Connect(e.to_string()))?;
        let mut import = Self {
            service,
            changed,
            listener: None,
        };
        import.listen_for_changes().await;
        Ok(import)
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
        let Ok(mut subscription) = self.peer().listen(filter).await else {
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

    /// The remote server's tools, every page.
    pub async fn list_tools(&self) -> Result<Vec<Tool>, ImportError> {
        Ok(self.peer().list_all_tools().await?)
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
        };
        sync(&ctx, &state, tools);
        let task_state = Arc::clone(&state);
        let task = tokio::spawn(async move {
            while changes.changed().await.is_ok() {
                match ctx.peer.list_all_tools().await {
                    Ok(tools) => sync(&ctx, &task_state, tools),
                    Err(e) => tracing::warn!("MCP import: re-listing after list_changed: {e}"),
                }
            }
        });
        Ok(ImportedTools { state, task })
    }
}

/// The tools one [`McpImport::import_into`] registered. Dropping it unregisters them and stops
/// following the server's changes.
pub struct ImportedTools {
    state: Arc<Mutex<SyncState>>,
    task: tokio::task::JoinHandle<()>,
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
        drop(live);
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

    /// Tools not registered for another reason (name, why): a schema rejected by
    /// [`SchemaPolicy::Reject`], an invalid output schema, a failing change listener.
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
}

/// Brings the registrations in line with `tools`.
fn sync(ctx: &SyncCtx, state: &Mutex<SyncState>, tools: Vec<Tool>) {
    let mut state = state.lock().unwrap_or_else(|e| e.into_inner());
    let fingerprints: Vec<Value> = tools
        .iter()
        .map(|t| serde_json::to_value(t).unwrap_or(Value::Null))
        .collect();
    let wanted: HashMap<&str, &Value> = tools
        .iter()
        .zip(&fingerprints)
        .map(|(t, f)| (t.name.as_ref(), f))
        .collect();
    // Removed or changed tools go first, so a changed one can be registered again.
    let stale: Vec<String> = state
        .live
        .iter()
        .filter(|(name, (fp, _))| wanted.get(name.as_str()) != Some(&fp))
        .map(|(name, _)| name.clone())
        .collect();
    for name in stale {
        state.live.remove(&name);
    }
    state.order.clear();
    state.collisions.clear();
    state.passed_through.clear();
    state.skipped.clear();
    let prefix = ctx.options.prefix.as_deref().unwrap_or("");
    for (tool, fingerprint) in tools.into_iter().zip(fingerprints) {
        let remote = tool.name.to_string();
        let local = format!("{prefix}{remote}");
        if state.live.contains_key(&remote) {
            state.order.push(local);
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
    let mut definition = ToolDefinition::new(
        local,
        tool.description.as_deref().unwrap_or_default(),
        parameters,
        output,
        move |args: Arc<Value>, run: ToolRunContext| {
            call_remote(peer.clone(), remote.clone(), compiled.clone(), args, run)
        },
    )
    .hints(map::hints(tool.annotations.as_ref()));
    let title = tool
        .title
        .clone()
        .or_else(|| tool.annotations.as_ref().and_then(|a| a.title.clone()));
    if let Some(title) = title {
        definition = definition.title(title);
    }
    Ok(definition)
}

/// One remote call: local validation (when the schema converted), then `tools/call`, dropped
/// (which sends `notifications/cancelled`) when our signal fires.
async fn call_remote(
    peer: Peer<RoleClient>,
    name: String,
    compiled: Option<Arc<CompiledSchema>>,
    args: Arc<Value>,
    run: ToolRunContext,
) -> Result<Value, ToolError> {
    if let Some(compiled) = &compiled {
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
    let request = CallToolRequestParams::new(name).with_arguments(arguments);
    let result = tokio::select! {
        result = peer.call_tool(request) => result,
        () = run.signal().cancelled() => return Err(ToolError::aborted()),
    };
    match result {
        Ok(result) if result.is_error == Some(true) => Err(map::remote_error(&result)),
        Ok(result) => Ok(map::remote_value(result)),
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

//! `McpImport`: a remote MCP server's tools as ordinary definitions in a registry.

use super::asks::InFlight;
use super::filter;
use super::options::{ImportError, ImportLimits, ImportOptions};
use super::sync::{SyncCtx, SyncState, list_all, sync};
use crate::mcp::wire;
use crate::registry::Registry;
use rmcp::model::{SubscriptionFilter, Tool};
use rmcp::service::{ClientLifecycleMode, ClientServiceExt, NotificationContext, RunningService};
use rmcp::{ClientHandler, Peer, RoleClient};
use std::fmt;
use std::sync::{Arc, Mutex};
use tokio::sync::watch;

/// Connects with explicit [`ImportLimits`] ([`McpImport::with_limits`]).
#[derive(Clone, Copy, Debug, Default)]
pub struct Connector {
    limits: ImportLimits,
}

impl Connector {
    /// [`McpImport::connect_stdio`] with these limits.
    pub async fn connect_stdio(
        self,
        command: tokio::process::Command,
    ) -> Result<McpImport, ImportError> {
        self.connect_stdio_with(command, ClientLifecycleMode::Initialize)
            .await
    }

    /// [`connect_stdio`](Self::connect_stdio) in the era `lifecycle` chooses: the
    /// `initialize` handshake, or 2026-07-28 (`ClientLifecycleMode::Discover`), which a child
    /// that is a 2026-07-28 server speaks over its pipes as well.
    pub async fn connect_stdio_with(
        self,
        mut command: tokio::process::Command,
        lifecycle: ClientLifecycleMode,
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
            tokio::spawn(forward_stderr(stderr, |line| {
                tracing::info!(target: "dsh_tools::mcp::child", "{line}");
            }));
        }
        let mut import = self.connect_io(stdout, stdin, lifecycle).await?;
        import.child = Some(child);
        Ok(import)
    }

    /// Speaks newline-delimited JSON-RPC over a byte stream (a child's pipes, a socket), as
    /// `connect_stdio` does: an answer that could not be decoded (longer than
    /// [`ImportLimits::max_message_bytes`], or nested past serde_json's 128 levels) fails its request
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
        let max = self.limits.max_message_bytes.min(wire::MAX_LINE - 1);
        tokio::spawn(filter::filter(reader, sink, max));
        self.connect_with((filtered, writer), lifecycle).await
    }

    /// [`McpImport::connect_http`] with these limits.
    #[cfg(feature = "mcp-http")]
    pub async fn connect_http(self, url: &str) -> Result<McpImport, ImportError> {
        let transport = rmcp::transport::StreamableHttpClientTransport::from_uri(url.to_owned());
        self.connect(transport).await
    }

    /// [`connect_http`](Self::connect_http), sending `Authorization: Bearer <token>` on every
    /// request (a server with `Authorization` (feature `mcp-auth`) needs one). The token
    /// is for this server alone: never hand a token issued for one server to another.
    #[cfg(feature = "mcp-http")]
    pub async fn connect_http_bearer(
        self,
        url: &str,
        token: &str,
    ) -> Result<McpImport, ImportError> {
        use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
        let mut config = StreamableHttpClientTransportConfig::with_uri(url.to_owned());
        config.auth_header = Some(token.to_owned());
        let transport = rmcp::transport::StreamableHttpClientTransport::from_config(config);
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
        let in_flight = InFlight::default();
        let client = ImportClient {
            changed: Arc::clone(&changed),
            in_flight: in_flight.clone(),
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
        // "If the client does not support the version in the server's response, it SHOULD
        // disconnect" (the MCP lifecycle); rmcp keeps any string.
        if let Some(info) = service.peer().peer_info()
            && !rmcp::model::ProtocolVersion::KNOWN_VERSIONS.contains(&info.protocol_version)
        {
            let known: Vec<String> = rmcp::model::ProtocolVersion::KNOWN_VERSIONS
                .iter()
                .map(ToString::to_string)
                .collect();
            let version = info.protocol_version.to_string();
            let shown = version
                .chars()
                .take(64)
                .collect::<String>()
                .escape_debug()
                .to_string();
            drop(service.cancel().await);
            return Err(ImportError::Connect(format!(
                "the server answered protocol version \"{shown}\", which this client does not \
                 speak (known: {})",
                known.join(", ")
            )));
        }
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

/// The client side of one connection: tells the importers when the remote list changes, and
/// puts the server's questions (form elicitation) to our person.
#[derive(Clone)]
struct ImportClient {
    changed: Arc<watch::Sender<u64>>,
    in_flight: InFlight,
}

impl ClientHandler for ImportClient {
    async fn on_tool_list_changed(&self, _cx: NotificationContext<RoleClient>) {
        self.changed.send_modify(|n| *n = n.wrapping_add(1));
    }

    async fn on_progress(
        &self,
        param: rmcp::model::ProgressNotificationParam,
        _cx: NotificationContext<RoleClient>,
    ) {
        self.in_flight.progress(param);
    }

    fn get_info(&self) -> rmcp::model::ClientConfig {
        let mut info = rmcp::model::ClientConfig::default();
        info.capabilities.elicitation = Some(
            rmcp::model::ElicitationCapability::new()
                .with_form(rmcp::model::FormElicitationCapability::default()),
        );
        // A call the server answers with a task is awaited (`task.rs`).
        info.capabilities
            .extensions
            .get_or_insert_with(Default::default)
            .insert(
                rmcp::model::TASKS_EXTENSION_ID.to_owned(),
                rmcp::model::JsonObject::new(),
            );
        info
    }

    async fn create_elicitation(
        &self,
        request: rmcp::model::ElicitRequestParams,
        cx: rmcp::service::RequestContext<RoleClient>,
    ) -> Result<rmcp::model::ElicitResult, rmcp::ErrorData> {
        let server = cx
            .peer
            .peer_info()
            .and_then(|i| i.server_info.as_ref().map(|s| s.name.clone()))
            .unwrap_or_default();
        Ok(self.in_flight.answer_legacy(&server, &request).await)
    }
}

/// A connection to an MCP server whose tools can be imported into registries.
///
/// A remote tool's `title` and annotations become the definition's title and
/// [`ToolHints`](crate::ToolHints), as *untrusted* hints: MCP asks clients to treat annotations
/// from servers they do not trust as claims, never as guarantees (a tool claiming `read_only`
/// may still write). Policies and approvals should not rely on them for remote tools, and
/// imported calls run one at a time unless [`ImportOptions::trust_hints`] lets a server's
/// read-only tools overlap.
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
    limits: ImportLimits,
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
    /// handshake first, which every server version understands), with the default [`ImportLimits`].
    /// The child's standard error goes to `tracing` (target `dsh_tools::mcp::child`), never to
    /// our standard output; the child is killed when the connection is dropped.
    pub async fn connect_stdio(command: tokio::process::Command) -> Result<Self, ImportError> {
        Connector::default().connect_stdio(command).await
    }

    /// Connects with explicit [`ImportLimits`]:
    /// `McpImport::with_limits(limits).connect_stdio(command).await`.
    pub fn with_limits(limits: ImportLimits) -> Connector {
        Connector { limits }
    }

    /// The limits this connection applies.
    pub fn limits(&self) -> ImportLimits {
        self.limits
    }

    /// Connects over the streamable HTTP transport to `url` (plain `http://`; for TLS, enable
    /// rmcp's `reqwest` feature and build the transport yourself), negotiating 2026-07-28 when
    /// the server has it and the handshake otherwise.
    ///
    /// Unlike [`connect_stdio`](Self::connect_stdio) and [`connect_io`](Connector::connect_io),
    /// answers are decoded by rmcp's HTTP client as they come: one it cannot decode (a lone
    /// surrogate, a string id for a numeric request) is not refused at once, and its call ends
    /// at [`ImportLimits::call_timeout`].
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

    /// The remote server's tools, every page (within the [`ImportLimits`]: each page within the
    /// request timeout, at most `max_pages` pages and `max_tools` tools; a cursor the server
    /// already gave ends the listing).
    ///
    /// An entry that is not a tool (no `inputSchema`, say) is left out with a warning in the
    /// log; [`import_into`](Self::import_into) reports each in
    /// [`ImportedTools::skipped`].
    pub async fn list_tools(&self) -> Result<Vec<Tool>, ImportError> {
        Ok(list_all(self.peer(), &self.limits).await?.tools)
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
        let tools = list_all(self.peer(), &self.limits).await?;
        let state = Arc::new(Mutex::new(SyncState::default()));
        let ctx = SyncCtx {
            registry: registry.clone(),
            options: Arc::new(options),
            peer: self.peer().clone(),
            limits: self.limits,
            in_flight: self.service.service().in_flight.clone(),
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

/// The longest line of a child's standard error that is forwarded whole; a longer one is cut
/// to its first [`wire::PREFIX`](crate::mcp::wire::PREFIX) bytes.
pub(crate) const MAX_STDERR_LINE: usize = 64 * 1024;

/// Reads a child's standard error to its end, in bounded chunks, and hands each line to `log`
/// decoded lossily and escaped (control and bidirectional characters shown as escapes). A line
/// without a newline costs at most [`MAX_STDERR_LINE`] bytes however long it is, bytes that are
/// not UTF-8 are replaced, and the pipe stays open until the child closes it: a child whose log
/// write met a closed pipe would die of `EPIPE`.
pub(crate) async fn forward_stderr<R>(stderr: R, mut log: impl FnMut(&str))
where
    R: tokio::io::AsyncRead + Unpin,
{
    let mut reader = tokio::io::BufReader::with_capacity(8 * 1024, stderr);
    let mut line = Vec::new();
    loop {
        let Some(oversized) = wire::read_line(&mut reader, &mut line, MAX_STDERR_LINE).await else {
            // A dying child's last words often lack a newline: `read_line` leaves them in
            // `line` at the end of input.
            if !line.is_empty() {
                log(&String::from_utf8_lossy(&line).escape_debug().to_string());
            }
            return;
        };
        let text = String::from_utf8_lossy(&line);
        let shown = text.escape_debug();
        if oversized {
            log(&format!(
                "{shown}… (a line longer than {MAX_STDERR_LINE} bytes, cut)"
            ));
        } else {
            log(&shown.to_string());
        }
        if line.capacity() > 2 * MAX_STDERR_LINE {
            line = Vec::new();
        }
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

    /// What Code Mode's SDK leaves out of the tools' schemas (local name, what): keywords the
    /// subset has no word for and nodes it cannot convert, which the SDK shows as accepting
    /// anything. The calls are still checked against the schema as the server wrote it (by the
    /// server, or locally when it converted exactly).
    pub fn sdk_dropped(&self) -> Vec<(String, crate::code::Dropped)> {
        self.with(|s| s.sdk_dropped.clone())
    }

    /// Tools not registered for another reason (name, why): an entry of the listing that is not
    /// a tool (no `inputSchema`, say; named `#<position>` when it has no string name), a name
    /// that is empty, longer than 128 characters or holds control, invisible, line-separator or
    /// bidirectional-override characters (shown escaped), a name the server listed twice, a schema rejected by [`SchemaPolicy::Reject`](crate::mcp::SchemaPolicy::Reject), an invalid
    /// output schema, a failing change listener.
    pub fn skipped(&self) -> Vec<(String, String)> {
        self.with(|s| s.skipped.clone())
    }
}

#[cfg(test)]
mod tests {
    use super::{MAX_STDERR_LINE, forward_stderr};

    #[tokio::test]
    async fn stderr_is_forwarded_by_bounded_lossy_lines_to_its_end() {
        let mut input = b"caf\xe9 latin-1\n".to_vec();
        input.extend(std::iter::repeat_n(b'x', 40 << 20)); // 40 MiB without a newline
        input.extend(b"\n\x1b[2Jafter\n");
        input.extend(b"unterminated last line"); // a dying child's last words
        let mut lines = Vec::new();
        forward_stderr(&input[..], |line| lines.push(line.to_owned())).await;
        assert_eq!(
            lines.len(),
            4,
            "{:?}",
            lines.iter().map(|l| l.len()).collect::<Vec<_>>()
        );
        assert_eq!(lines[3], "unterminated last line");
        assert_eq!(lines[0], "caf\u{fffd} latin-1");
        assert!(lines[1].len() < MAX_STDERR_LINE, "{}", lines[1].len());
        assert!(
            lines[1].ends_with("cut)"),
            "{}",
            &lines[1][lines[1].len() - 60..]
        );
        assert_eq!(lines[2], "\\u{1b}[2Jafter");
    }
}

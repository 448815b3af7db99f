//! How an import is set up and bounded: the schema policy, the registration options, the
//! limits a server we do not control is held to, and why connecting or listing failed.

use crate::call::AgentId;
use crate::mcp::wire;
use rmcp::service::ServiceError;
use std::time::Duration;

/// What to do with a remote tool's `inputSchema`, which may use any JSON Schema 2020-12
/// keyword.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum SchemaPolicy {
    /// Convert it into the subset ([`bridge::from_foreign`](crate::schema::bridge::from_foreign): annotation-only keywords dropped,
    /// `anyOf [T, null]` made a `oneOf`, local `$ref`s inlined) and validate every call locally,
    /// with our paths, before any round trip. A schema that does not convert is passed through
    /// (reported in [`ImportedTools::passed_through`](crate::mcp::ImportedTools::passed_through)).
    #[default]
    Convert,
    /// Show the model the remote schema as it is; the remote server validates.
    PassThrough,
    /// Convert, and skip tools whose schema does not convert (reported in
    /// [`ImportedTools::skipped`](crate::mcp::ImportedTools::skipped)): for hosts whose model dialects need the subset.
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
    /// [`ProviderExport::provider_tools`](crate::provider::ProviderExport::provider_tools) for every tool. Off by
    /// default: such a tool is left out of that export and reported in
    /// [`ProviderTools::skipped`](crate::provider::ProviderTools::skipped), so one remote schema
    /// cannot stop a host from sending any tools to its model.
    pub require_export: bool,
    /// Whether a remote tool that says it is read-only (`readOnlyHint: true`) may run beside
    /// other such calls (a `run_code` program's `Promise.all`, a turn's parallel calls). Off by
    /// default: MCP asks clients to treat a server's annotations as claims, and a call that is
    /// wrongly read-only could race another. Turn it on for servers you trust.
    pub trust_hints: bool,
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

    /// Sets [`trust_hints`](Self::trust_hints).
    pub fn trust_hints(mut self, trust: bool) -> Self {
        self.trust_hints = trust;
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
    /// The server did not answer within the [`ImportLimits`] timeout.
    #[error("the MCP server did not answer {what} within {after:?}")]
    Timeout {
        /// What was asked (`the handshake`, `tools/list`).
        what: &'static str,
        /// The timeout.
        after: Duration,
    },
    /// The server's tool list is larger than the [`ImportLimits`] allow.
    #[error("the MCP server's tool list is too large: {0}")]
    TooLarge(String),
}

/// How long an import waits and how much it accepts from a server it does not control. The MCP
/// lifecycle asks every request to time out; a server's list can be as long as it likes.
///
/// ```
/// use dsh_tools::mcp::ImportLimits;
/// use std::time::Duration;
///
/// let limits = ImportLimits::default().call_timeout(Duration::from_secs(30)).max_tools(500);
/// assert_eq!(limits.handshake_timeout, Duration::from_secs(30));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct ImportLimits {
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
    /// How long a call the server answered with a task (2026-07-28) is awaited: one hour.
    /// Past it the task is cancelled (`tasks/cancel`) and the call fails with `MCP_TIMEOUT`;
    /// [`call_timeout`](Self::call_timeout) bounds only the answer that created it.
    pub task_timeout: Duration,
    /// The shortest wait between two `tasks/get` of a task, whatever the server's
    /// `pollIntervalMs`: 100 ms.
    pub min_poll_interval: Duration,
    /// The longest wait between two `tasks/get`: 10 s.
    pub max_poll_interval: Duration,
}

impl Default for ImportLimits {
    fn default() -> Self {
        Self {
            handshake_timeout: Duration::from_secs(30),
            request_timeout: Duration::from_secs(30),
            call_timeout: Duration::from_secs(300),
            max_pages: 100,
            max_tools: 10_000,
            max_message_bytes: wire::MAX_LINE,
            task_timeout: Duration::from_secs(3600),
            min_poll_interval: Duration::from_millis(100),
            max_poll_interval: Duration::from_secs(10),
        }
    }
}

impl ImportLimits {
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

    /// Sets [`task_timeout`](Self::task_timeout).
    pub fn task_timeout(mut self, timeout: Duration) -> Self {
        self.task_timeout = timeout;
        self
    }

    /// Sets [`min_poll_interval`](Self::min_poll_interval) and
    /// [`max_poll_interval`](Self::max_poll_interval).
    pub fn poll_interval_within(mut self, min: Duration, max: Duration) -> Self {
        self.min_poll_interval = min;
        self.max_poll_interval = max;
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

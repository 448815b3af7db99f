//! MCP (the Model Context Protocol) for a [`Registry`](crate::Registry): serve its tools to any
//! MCP client, and import any MCP server's tools into it. Feature `mcp` (stdio, child
//! processes); feature `mcp-http` adds the streamable HTTP server and client, `mcp-auth` its
//! authorization (`Authorization`) and `mcp-redis` a session store in Redis
//! (`RedisSessionStore`).
//!
//! Built on [`rmcp`] 3.11 without its macros; both protocol eras are served by one handler (the
//! `initialize` handshake up to 2025-11-25, stateless 2026-07-28 requests).
//!
//! # Serving
//!
//! ```no_run
//! use dsh_tools::{Registry, ToolError, mcp::McpServer, tool};
//!
//! /// Echo the text back.
//! #[tool]
//! async fn echo(
//!     /// What to echo.
//!     text: String,
//! ) -> Result<String, ToolError> {
//!     Ok(text)
//! }
//!
//! #[tokio::main]
//! async fn main() -> Result<(), Box<dyn std::error::Error>> {
//!     let registry = Registry::new();
//!     registry.register(Echo)?;
//!     McpServer::new(registry).serve_stdio().await?;
//!     Ok(())
//! }
//! ```
//!
//! | dsh-tools | MCP |
//! |---|---|
//! | the served view (global, or [`McpServer::for_agent`]) | `tools/list`, in [`Registry::schemas`](crate::Registry::schemas) order |
//! | Code Mode (the view presents `code`) | only `run_code` is listed (under `both`: the tools and `run_code`); MCP has no system prompt, so `run_code`'s `description` is its own text followed by [`Registry::code_prompt`](crate::Registry::code_prompt) (the `run_code`-only rule and the SDK of the tools a program can call), refreshed with every listing |
//! | `name`, `description`, `title` | `name`, `description`, `title` |
//! | `parameters` | `inputSchema` (a schema without `type` gets `"type": "object"`: MCP arguments are always objects; a schema of another type is not listed, with a warning) |
//! | output schema | `outputSchema` (rmcp drops roots other than `"type": "object"` for peers before 2026-07-28) |
//! | [`ToolHints`](crate::ToolHints) | `annotations` (`readOnlyHint`, `destructiveHint`, `idempotentHint`, `openWorldHint`; only the hints the tool set) |
//! | a success's value | `structuredContent`; for peers before 2026-07-28 only when it is an object (the content already carries it) |
//! | content blocks | `content`; a block type MCP does not know becomes a text block of its JSON |
//! | a failure | `isError: true`, content `Error: <message>`, `_meta["dev.dsh-tools/error"] = {name, code}` when the error has them |
//! | `UNKNOWN_TOOL` | JSON-RPC error `-32602 Unknown tool: <name>` |
//! | the server's name and version | `serverInfo` of the handshake; on 2026-07-28 `tools/list` and `tools/call` results also `_meta["io.modelcontextprotocol/serverInfo"]` |
//! | presentation meta, additional contexts, concludes-turn | `_meta["dev.dsh-tools/presentation"]`, `["dev.dsh-tools/additionalContexts"]`, `["dev.dsh-tools/concludesTurn"]` |
//! | the call's signal | the request's cancellation token (`notifications/cancelled`, a closed transport, a dropped 2026 HTTP stream); a started body is still awaited |
//! | [`report_progress`](crate::ToolRunContext::report_progress) | `notifications/progress` with the request's progress token, in order, all before the response |
//! | [`Registry::on_change`](crate::Registry::on_change) | `notifications/tools/list_changed`: to each legacy session, and inside 2026 `subscriptions/listen` |
//! | `ask` decisions | put to the client's user when the client declared form elicitation ([`ServerApprovals`], on by default): 2025-11-25 sessions get `elicitation/create` while the call waits (bounded, cancellable); 2026-07-28 requests get an `input_required` result with one form and a sealed `requestState` bound to the tool, the arguments, the caller and the view, answerable once per process, and the client's retry is answered by the form; a remembered answer is offered only by [`McpServer::for_agent`] (kept as the agent's grant). A client that cannot elicit: the registry's approval service (for [`McpServer::for_agent`]), or a denial |
//! | the approval form | `approve` (boolean, required), `remember` (where a grant can be kept), `reason` (read by the model on a refusal), `arguments` (JSON text, for tools with [`editable_arguments`](crate::ToolDefinition::editable_arguments)); decline → `the user rejected tool "<name>"`, cancel → `approval for tool "<name>" was cancelled` |
//! | a bearer token (HTTP with `Authorization`, feature `mcp-auth`) | the call's [`Caller`](crate::pipeline::Caller): guards and hooks decide on its scopes ([`ScopeRules`](crate::pipeline::ScopeRules)); see `Authorization` |
//!
//! # Importing
//!
//! See [`McpImport`]: a remote server's tools become ordinary [`ToolDefinition`](crate::ToolDefinition)s
//! in a registry, with our validation, hooks and cancellation around each remote call.
//!
//! The remote server is not trusted: every request has a timeout ([`ImportLimits`]), listings are
//! capped, an answer rmcp cannot decode fails its call at once (`MCP_TRANSPORT_ERROR`), names a
//! terminal would misread are skipped, and a remote failure's code is taken as the remote
//! tool's own code, except `INVALID_ARGS` (honoured) and the codes that are facts about our side
//! of the call (`TRANSIENT`, `ABORTED_BEFORE_DISPATCH`, `ABORTED`, `TOOL_TIMEOUT`,
//! `UNKNOWN_TOOL`, `INVALID_TOOL_OUTPUT`, `UNSUPPORTED_SCHEMA`, `MCP_*`), which arrive as
//! `REMOTE_<code>` so that no policy (retry, above all) acts on a server's claim. A code or
//! name that is not a short identifier becomes `MCP_TOOL_ERROR`.
//!
//! A remote server that asks during a call (form elicitation: `elicitation/create` in
//! 2025-11-25, an `input_required` result in 2026-07-28) is answered by *our* person: the
//! question goes to the calling scope's approval service (never to grants: a question asked
//! during a call may be about anything)
//! ([`ToolRunContext::request_approval`](crate::ToolRunContext::request_approval), so through
//! the ACP bridge when that is where the person is), and a yes accepts the form, a no declines
//! it. Only forms an approval can fill are asked (each required field a boolean, set to `true`,
//! or one with a default); others, URL elicitation, sampling and roots are answered `cancel`.
//! A 2025-11-25 question names no call, so it is asked only while exactly one call of that
//! connection is under way (otherwise `cancel`). A remote `notifications/progress` reaches the
//! call's [`report_progress`](crate::ToolRunContext::report_progress) (finite numbers only,
//! the message escaped and cut).

mod import;
mod map;
mod serve;
mod wire;

pub use import::connect::{Connector, ImportedTools, McpImport};
pub use import::options::{ImportError, ImportLimits, ImportOptions, SchemaPolicy};
/// The key set a [`JwtVerifier`] checks tokens with (from `jsonwebtoken`, re-exported so no
/// dependency of your own has to match ours): `serde_json::from_str::<JwkSet>(jwks_json)`.
#[cfg(feature = "mcp-auth")]
pub use jsonwebtoken::jwk::{Jwk, JwkSet};
pub use map::{
    CONCLUDES_TURN_META, CONTEXTS_META, ERROR_META, MAX_ARGUMENT_DEPTH, MAX_MESSAGE_BYTES,
    MAX_RESULT_DEPTH, PRESENTATION_META,
};
#[cfg(feature = "mcp-auth")]
pub use serve::auth::{
    Authorization, InvalidResource, PROTECTED_RESOURCE_PATH, TokenRejection, TokenVerifier,
};
pub use serve::elicit::{APPROVAL_INPUT_KEY, ApprovalsConfigError, ServerApprovals};
#[cfg(feature = "mcp-http")]
pub use serve::http::{HttpConfig, MCP_PATH, McpHttpService};
#[cfg(feature = "mcp-auth")]
pub use serve::jwt::JwtVerifier;
pub use serve::lines::MAX_IN_FLIGHT;
#[cfg(feature = "mcp-http")]
pub use serve::listener::HttpServer;
pub use serve::progress::MAX_PENDING_PROGRESS;
#[cfg(feature = "mcp-redis")]
pub use serve::redis::RedisSessionStore;
#[cfg(feature = "mcp-http")]
pub use serve::response::HttpResponse;
pub use serve::server::{McpServer, SERVER_INFO_META, ServeError};

/// rmcp, re-exported for transports and client code (its version is pinned by this crate).
pub use rmcp;

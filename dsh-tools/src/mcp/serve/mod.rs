//! Serving a registry over MCP: the server (`server`: the handle, its settings and shared
//! state; `call`: a `tools/call` served; `handler`: rmcp's `ServerHandler`), what a client is
//! listed (`discovery`: scope rules, progressive discovery, cache hints), stdio lines (`lines`),
//! streamable HTTP (`http`: the tower service; `listener`: the TCP listener), its authorization (`auth`: the resource-server policy; `jwt`: the JWT
//! verifier it asks), approvals put to the client's user (`elicit`), a session store in
//! Redis (`redis`), and calls run as tasks (`tasks`: the 2026-07-28 extension; `tasks_2025`:
//! the 2025-11-25 revision's), and the spans and metrics of the calls it serves (`trace`).

#[cfg(feature = "mcp-auth")]
pub(super) mod auth;
pub(super) mod call;
pub(super) mod discovery;
pub(super) mod elicit;
pub(super) mod handler;
#[cfg(feature = "mcp-http")]
pub(super) mod http;
#[cfg(feature = "mcp-auth")]
pub(super) mod jwt;
pub(super) mod lines;
#[cfg(feature = "mcp-http")]
pub(super) mod listener;
pub(super) mod progress;
#[cfg(feature = "mcp-redis")]
pub(super) mod redis;
#[cfg(feature = "mcp-http")]
pub(super) mod response;
pub(super) mod server;
pub(super) mod tasks;
pub(super) mod tasks_2025;
pub(super) mod trace;

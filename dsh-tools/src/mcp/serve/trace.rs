//! The MCP server's `tools/call {tool}` spans (kind server) and
//! `mcp.server.operation.duration`, in the conventions' names (`telemetry`).

use crate::telemetry::{TARGET, TOOLS_CALL};
use rmcp::model::{CallToolResponse, ErrorData};
use rmcp::service::{RequestContext, RoleServer};
use tracing::Span;

/// The longest tool name a span or metric records as given: a client may send any name.
const MAX_NAME: usize = 256;

/// Opens the server span of a `tools/call`: its parent is the trace context of the request's
/// `params._meta` (`traceparent`, with feature `otel`), else the current span.
pub(super) fn server_span(tool: &str, cx: &RequestContext<RoleServer>) -> Span {
    let tool = bounded(tool);
    let version = cx.protocol_version();
    let span = tracing::info_span!(
        target: TARGET,
        "tools/call",
        "otel.name" = %format_args!("{TOOLS_CALL} {tool}"),
        "otel.kind" = "server",
        "otel.status_code" = tracing::field::Empty,
        "mcp.method.name" = TOOLS_CALL,
        "gen_ai.operation.name" = crate::telemetry::EXECUTE_TOOL,
        "gen_ai.tool.name" = tool,
        "jsonrpc.request.id" = %cx.id,
        "mcp.protocol.version" = version.as_ref().map(|v| v.as_str()),
        "mcp.session.id" = session_id(cx),
        "network.transport" = transport(cx),
        "error.type" = tracing::field::Empty,
        "rpc.response.status_code" = tracing::field::Empty,
    );
    #[cfg(feature = "otel")]
    crate::telemetry::adopt(&span, Some(&cx.meta.0.0));
    span
}

/// A tool name as spans and metrics record it: cut to [`MAX_NAME`] bytes.
fn bounded(tool: &str) -> &str {
    if tool.len() <= MAX_NAME {
        return tool;
    }
    let mut cut = MAX_NAME;
    while !tool.is_char_boundary(cut) {
        cut -= 1;
    }
    &tool[..cut]
}

/// `network.transport`: `tcp` for a request that came over HTTP, else `pipe` (stdio).
fn transport(cx: &RequestContext<RoleServer>) -> &'static str {
    if session_header(cx).is_some() || over_http(cx) {
        "tcp"
    } else {
        "pipe"
    }
}

#[cfg(feature = "mcp-http")]
fn over_http(cx: &RequestContext<RoleServer>) -> bool {
    cx.extensions.get::<hyper::http::request::Parts>().is_some()
}

#[cfg(not(feature = "mcp-http"))]
fn over_http(_: &RequestContext<RoleServer>) -> bool {
    false
}

/// The HTTP request's `Mcp-Session-Id`, when it carried one (a stdio session has no id).
fn session_id(cx: &RequestContext<RoleServer>) -> Option<&str> {
    session_header(cx).map(bounded)
}

#[cfg(feature = "mcp-http")]
fn session_header(cx: &RequestContext<RoleServer>) -> Option<&str> {
    cx.extensions
        .get::<hyper::http::request::Parts>()?
        .headers
        .get("mcp-session-id")?
        .to_str()
        .ok()
}

#[cfg(not(feature = "mcp-http"))]
fn session_header(_: &RequestContext<RoleServer>) -> Option<&str> {
    None
}

/// What a `tools/call` answered, for `error.type`: a JSON-RPC error's code, `tool_error` for a
/// result with `isError`, nothing for a success (or a task, which settles later).
pub(super) fn error_type(answer: &Result<CallToolResponse, ErrorData>) -> Option<String> {
    match answer {
        Err(e) => Some(e.code.0.to_string()),
        Ok(CallToolResponse::Complete(r)) if r.is_error == Some(true) => {
            Some(crate::telemetry::TOOL_ERROR.to_owned())
        }
        Ok(_) => None,
    }
}

/// Records how the request settled on its span.
pub(super) fn settle(span: &Span, answer: &Result<CallToolResponse, ErrorData>) {
    if span.is_disabled() {
        return;
    }
    if let Some(kind) = error_type(answer) {
        span.record("error.type", kind.as_str());
        span.record("otel.status_code", "ERROR");
    }
    if let Err(e) = answer {
        span.record("rpc.response.status_code", e.code.0.to_string().as_str());
    }
}

/// What `mcp.server.operation.duration` records of a request, taken before it runs.
#[cfg(feature = "otel")]
pub(super) struct Metric {
    since: crate::telemetry::Clock,
    attributes: Vec<opentelemetry::KeyValue>,
}

/// The protocol revisions a metric names without copying the string.
#[cfg(feature = "otel")]
const KNOWN_VERSIONS: [&str; 5] = [
    "2026-07-28",
    "2025-11-25",
    "2025-06-18",
    "2025-03-26",
    "2024-11-05",
];

#[cfg(feature = "otel")]
impl Metric {
    /// The request's attributes: the tool's name only for a tool the server serves (any other
    /// name a client sends is `_OTHER`, keeping the series bounded).
    pub(super) fn start(tool: &str, known: bool, cx: &RequestContext<RoleServer>) -> Self {
        use opentelemetry::KeyValue;
        // Sized for every attribute `settle` may add: one allocation, no growth.
        let mut attributes = Vec::with_capacity(6);
        attributes.extend([
            KeyValue::new("mcp.method.name", TOOLS_CALL),
            KeyValue::new("gen_ai.operation.name", crate::telemetry::EXECUTE_TOOL),
            KeyValue::new(
                "gen_ai.tool.name",
                if known {
                    tool.to_owned()
                } else {
                    "_OTHER".to_owned()
                },
            ),
            KeyValue::new("network.transport", transport(cx)),
        ]);
        if let Some(version) = cx.protocol_version() {
            // A revision this crate knows by its static name (no copy); any other, copied.
            let known = KNOWN_VERSIONS.iter().find(|v| **v == version.as_str());
            attributes.push(match known {
                Some(v) => KeyValue::new("mcp.protocol.version", *v),
                None => KeyValue::new("mcp.protocol.version", version.as_str().to_owned()),
            });
        }
        Self {
            since: crate::telemetry::Clock::start(),
            attributes,
        }
    }

    /// Records the duration, with `error.type` when the request failed.
    pub(super) fn settle(mut self, answer: &Result<CallToolResponse, ErrorData>) {
        if let Some(kind) = error_type(answer) {
            self.attributes
                .push(opentelemetry::KeyValue::new("error.type", kind));
        }
        crate::telemetry::record_duration(
            crate::telemetry::MCP_SERVER_DURATION,
            self.since,
            &self.attributes,
        );
    }
}

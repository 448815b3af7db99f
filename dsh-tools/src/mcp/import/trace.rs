//! An imported tool's `tools/call {tool}` client spans (the remote call, a child of the
//! imported tool's `execute_tool` span) and `mcp.client.operation.duration`; with feature
//! `otel`, the span's W3C trace context goes in the request's `params._meta`.

use crate::telemetry::{EXECUTE_TOOL, TARGET, TOOLS_CALL};
use rmcp::model::{CallToolRequestParams, CallToolResponse};
use rmcp::service::ServiceError;
use tracing::Span;

/// Opens the client span of one `tools/call` to the server (kind client), and writes its trace
/// context into `params._meta`.
pub(super) fn client_span(params: &mut CallToolRequestParams, protocol: Option<&str>) -> Span {
    let tool = params.name.as_ref();
    let span = tracing::info_span!(
        target: TARGET,
        "tools/call",
        "otel.name" = %format_args!("{TOOLS_CALL} {tool}"),
        "otel.kind" = "client",
        "otel.status_code" = tracing::field::Empty,
        "mcp.method.name" = TOOLS_CALL,
        "gen_ai.operation.name" = EXECUTE_TOOL,
        "gen_ai.tool.name" = tool,
        "jsonrpc.request.id" = tracing::field::Empty,
        "mcp.protocol.version" = protocol,
        "error.type" = tracing::field::Empty,
        "rpc.response.status_code" = tracing::field::Empty,
    );
    #[cfg(feature = "otel")]
    if !span.is_disabled() {
        let meta = params.meta.get_or_insert_with(Default::default);
        crate::telemetry::inject_context(&span, &mut meta.0.0);
    }
    #[cfg(not(feature = "otel"))]
    let _ = &params.meta;
    span
}

/// `error.type` of an answer: a JSON-RPC error's code, `tool_error` for a result with
/// `isError`, the transport's failure otherwise.
fn error_type(answer: &Result<CallToolResponse, ServiceError>) -> Option<String> {
    match answer {
        Ok(CallToolResponse::Complete(r)) if r.is_error == Some(true) => {
            Some(crate::telemetry::TOOL_ERROR.to_owned())
        }
        Ok(_) => None,
        Err(ServiceError::McpError(e)) => Some(e.code.0.to_string()),
        Err(ServiceError::Timeout { .. }) => Some("timeout".to_owned()),
        Err(_) => Some("transport_error".to_owned()),
    }
}

/// Records how the request settled on its span.
pub(super) fn settle(span: &Span, answer: &Result<CallToolResponse, ServiceError>) {
    if span.is_disabled() {
        return;
    }
    if let Some(kind) = error_type(answer) {
        span.record("error.type", kind.as_str());
        span.record("otel.status_code", "ERROR");
    }
    if let Err(ServiceError::McpError(e)) = answer {
        span.record("rpc.response.status_code", e.code.0.to_string().as_str());
    }
}

/// `mcp.client.operation.duration` of one request (the tool is one the server listed, so its
/// name is bounded by the import).
#[cfg(feature = "otel")]
pub(super) fn record(
    since: crate::telemetry::Clock,
    tool: &str,
    protocol: Option<&str>,
    answer: &Result<CallToolResponse, ServiceError>,
) {
    use opentelemetry::KeyValue;
    let mut attributes = vec![
        KeyValue::new("mcp.method.name", TOOLS_CALL),
        KeyValue::new("gen_ai.operation.name", EXECUTE_TOOL),
        KeyValue::new("gen_ai.tool.name", tool.to_owned()),
    ];
    if let Some(protocol) = protocol {
        attributes.push(KeyValue::new("mcp.protocol.version", protocol.to_owned()));
    }
    if let Some(kind) = error_type(answer) {
        attributes.push(KeyValue::new("error.type", kind));
    }
    crate::telemetry::record_duration(crate::telemetry::MCP_CLIENT_DURATION, since, &attributes);
}

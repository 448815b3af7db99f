//! Traces and metrics in the OpenTelemetry GenAI and MCP semantic conventions.
//!
//! The pipeline itself opens the spans, on [`tracing`]: a host that adds
//! [`tracing-opentelemetry`](https://docs.rs/tracing-opentelemetry) gets spans named and
//! attributed as the conventions ([`SEMCONV_VERSION`]) name them, with no code of its own, and a
//! host with no subscriber pays one check per span.
//!
//! - **`execute_tool {gen_ai.tool.name}`** (kind internal), one per call, with
//!   `gen_ai.operation.name`, `gen_ai.tool.name`, `gen_ai.tool.call.id`, `gen_ai.tool.type`,
//!   `gen_ai.tool.description`, and on a failure `error.type` (the failure's code, such as
//!   `INVALID_ARGS`, else `tool_error`) with the error status. Arguments and results
//!   (`gen_ai.tool.call.arguments`, `gen_ai.tool.call.result`) only when [`capture_content`]
//!   is on, cut to a bound. Its parent is the current span where the call was made, or the
//!   span a caller names ([`ToolExecutionInput::span_parent`](crate::ToolExecutionInput)).
//! - Its children: **`approval {tool}`** while an approval is asked (a span, not an event: a
//!   person's answer takes seconds to days, and the wait is the time an operator looks for; it
//!   carries `dsh_tools.approval.outcome`), **`attempt {n}`** for each try of
//!   [`wrappers::retry`](crate::wrappers::retry), the calls a body makes with
//!   [`ToolRunContext::nested`](crate::ToolRunContext::nested), every sub-call of a `run_code`
//!   program, and an imported MCP tool's client span.
//! - With feature `mcp`: **`tools/call {tool}`** spans, kind server around the pipeline in
//!   `mcp::McpServer` (parent taken from `params._meta.traceparent`, in both
//!   protocol eras, with feature `otel`) and kind client in an imported tool (which sends its
//!   `traceparent`), with `mcp.method.name`, `gen_ai.tool.name`, `gen_ai.operation.name`,
//!   `jsonrpc.request.id`, `mcp.protocol.version`, `mcp.session.id` (over HTTP),
//!   `network.transport` and `error.type`.
//!
//! Feature `otel` adds W3C trace context across MCP (it needs the OpenTelemetry context
//! `tracing-opentelemetry` keeps) and the duration histograms `gen_ai.execute_tool.duration`,
//! `mcp.server.operation.duration` and `mcp.client.operation.duration` on OpenTelemetry's
//! metrics API (attributes: operation, tool and method names, `error.type`; never argument
//! values). Feature `otlp` adds `init_from_env`: the standard `OTEL_*` variables, OTLP over
//! http/protobuf, flushed when its guard drops.
//!
//! ```
//! use dsh_tools::{CancellationToken, OutputDecl, Registry, ToolDefinition, ToolExecutionInput};
//! use serde_json::json;
//!
//! # tokio::runtime::Runtime::new().unwrap().block_on(async {
//! let registry = Registry::new();
//! registry.register(ToolDefinition::new("echo", "Echo the text.", json!({"type": "object"}),
//!     OutputDecl::text(), |args, _| async move { Ok(args["text"].clone()) })).unwrap();
//! // With a subscriber installed (tracing-opentelemetry's layer, or any other), this call is an
//! // `execute_tool echo` span; with none, the same call, and nothing recorded.
//! let result = registry.execute(ToolExecutionInput::new("c1", "echo", json!({"text": "hi"}),
//!     CancellationToken::new())).await;
//! assert_eq!(result.text(), "hi");
//! # });
//! ```

mod capture;
#[cfg(feature = "otel")]
mod metrics;
mod names;
#[cfg(feature = "otlp")]
mod otlp;
#[cfg(feature = "otel")]
mod propagation;
mod span;

pub use capture::{DEFAULT_CAPTURE_LIMIT, capture_content, capture_limit, set_capture_limit};
#[cfg(feature = "otel")]
pub(crate) use metrics::{Clock, record_duration};
pub use names::{
    EXECUTE_TOOL, EXECUTE_TOOL_DURATION, MCP_CLIENT_DURATION, MCP_SERVER_DURATION, SEMCONV_VERSION,
    TARGET, TOOL_ERROR, TOOLS_CALL,
};
#[cfg(feature = "otlp")]
pub use otlp::{InitError, OtlpGuard, init_from_env};
#[cfg(all(feature = "otel", feature = "mcp"))]
pub(crate) use propagation::adopt;
#[cfg(feature = "otel")]
pub use propagation::{extract_context, inject_context};
pub(crate) use span::{
    approval_span, attempt_span, error_type, record_arguments, settle, tool_span,
};

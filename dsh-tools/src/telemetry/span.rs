//! The spans the pipeline opens: `execute_tool {tool}` per call, `approval {tool}` while a
//! person decides, `attempt {n}` per retry.

use super::capture::capture_limit;
use super::names::{EXECUTE_TOOL, TARGET, TOOL_ERROR};
use crate::call::ToolExecutionResult;
use serde_json::Value;
use tracing::Span;

/// Opens a call's `execute_tool {tool}` span (kind internal), a child of `parent` when given,
/// else of the current span. With no subscriber interested, nothing is formatted and the span
/// is disabled.
pub(crate) fn tool_span(
    parent: Option<&Span>,
    name: &str,
    call_id: &str,
    description: Option<&str>,
) -> Span {
    macro_rules! open {
        ($($parent:tt)*) => {
            tracing::info_span!(
                target: TARGET,
                $($parent)*
                "execute_tool",
                "otel.name" = %format_args!("{EXECUTE_TOOL} {name}"),
                "otel.kind" = "internal",
                "otel.status_code" = tracing::field::Empty,
                "gen_ai.operation.name" = EXECUTE_TOOL,
                "gen_ai.tool.name" = name,
                "gen_ai.tool.call.id" = call_id,
                "gen_ai.tool.type" = "function",
                "gen_ai.tool.description" = description,
                "gen_ai.tool.call.arguments" = tracing::field::Empty,
                "gen_ai.tool.call.result" = tracing::field::Empty,
                "error.type" = tracing::field::Empty,
            )
        };
    }
    // A disabled parent (a call no subscriber records) is no parent: the current span is.
    match parent.filter(|p| !p.is_disabled()) {
        Some(parent) => open!(parent: parent,),
        None => open!(),
    }
}

/// Records the arguments a call runs with, when content is captured.
pub(crate) fn record_arguments(span: &Span, arguments: Option<&Value>) {
    if span.is_disabled() {
        return;
    }
    if let (Some(limit), Some(arguments)) = (capture_limit(), arguments) {
        let text = crate::json::compact_prefix(arguments, limit);
        span.record("gen_ai.tool.call.arguments", text.as_str());
    }
}

/// Records how a call settled: `error.type` (the failure's code, else `tool_error`) and the
/// error status for a failure, the result when content is captured.
pub(crate) fn settle(span: &Span, result: &ToolExecutionResult) {
    if span.is_disabled() {
        return;
    }
    if result.is_error() {
        span.record("error.type", error_type(result));
        span.record("otel.status_code", "ERROR");
    }
    if let Some(limit) = capture_limit() {
        let text = match result.value() {
            Some(value) => crate::json::compact_prefix(value, limit),
            None => crate::json::compact_prefix(&Value::String(result.text()), limit),
        };
        span.record("gen_ai.tool.call.result", text.as_str());
    }
}

/// `error.type` of a failed result: its code, else `tool_error`.
pub(crate) fn error_type(result: &ToolExecutionResult) -> &str {
    result.code().unwrap_or(TOOL_ERROR)
}

/// Opens the span of an approval wait, a child of the call's: `approval {tool}`.
pub(crate) fn approval_span(call: &Span, name: &str) -> Span {
    tracing::info_span!(
        target: TARGET,
        parent: call,
        "approval",
        "otel.name" = %format_args!("approval {name}"),
        "otel.kind" = "internal",
        "gen_ai.tool.name" = name,
        "dsh_tools.approval.outcome" = tracing::field::Empty,
    )
}

/// Opens the span of one attempt of a retried call, a child of the current span (the call's).
pub(crate) fn attempt_span(attempt: u32) -> Span {
    tracing::info_span!(
        target: TARGET,
        "attempt",
        "otel.name" = %format_args!("attempt {attempt}"),
        "otel.kind" = "internal",
        "dsh_tools.attempt" = attempt,
        "error.type" = tracing::field::Empty,
    )
}

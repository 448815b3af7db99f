//! W3C trace context in MCP's `params._meta` (SEP-414; normative from MCP 2026-07-28): the
//! `traceparent`, `tracestate` and `baggage` keys, read by the server and written by the
//! importer (feature `otel`).
//!
//! Always W3C Trace Context and Baggage, whatever global propagator the host installed: that is
//! the format MCP names.

use opentelemetry::propagation::{
    Extractor, Injector, TextMapCompositePropagator, TextMapPropagator,
};
use opentelemetry_sdk::propagation::{BaggagePropagator, TraceContextPropagator};
use serde_json::{Map, Value};
use std::sync::OnceLock;
use tracing_opentelemetry::OpenTelemetrySpanExt;

fn propagator() -> &'static TextMapCompositePropagator {
    static P: OnceLock<TextMapCompositePropagator> = OnceLock::new();
    P.get_or_init(|| {
        TextMapCompositePropagator::new(vec![
            Box::new(TraceContextPropagator::new()),
            Box::new(BaggagePropagator::new()),
        ])
    })
}

/// The longest value of a trace context key that is read: W3C's `tracestate` and `baggage`
/// stay far below it; anything longer is ignored, not parsed.
const MAX_VALUE: usize = 8192;

struct Meta<'a>(&'a Map<String, Value>);

impl Extractor for Meta<'_> {
    fn get(&self, key: &str) -> Option<&str> {
        self.0.get(key)?.as_str().filter(|v| v.len() <= MAX_VALUE)
    }

    fn keys(&self) -> Vec<&str> {
        ["traceparent", "tracestate", "baggage"]
            .into_iter()
            .filter(|k| self.0.contains_key(*k))
            .collect()
    }
}

struct MetaMut<'a>(&'a mut Map<String, Value>);

impl Injector for MetaMut<'_> {
    fn set(&mut self, key: &str, value: String) {
        self.0.insert(key.to_owned(), Value::String(value));
    }
}

/// The trace context a request's `_meta` carries (an empty context when it carries none, or
/// one that does not parse).
///
/// ```
/// use opentelemetry::trace::TraceContextExt;
/// use serde_json::json;
///
/// let meta = json!({"traceparent": "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"});
/// let cx = dsh_tools::telemetry::extract_context(meta.as_object().unwrap());
/// assert_eq!(cx.span().span_context().trace_id().to_string(), "0af7651916cd43dd8448eb211c80319c");
/// ```
pub fn extract_context(meta: &Map<String, Value>) -> opentelemetry::Context {
    propagator().extract(&Meta(meta))
}

/// Writes `span`'s trace context into a request's `_meta` (nothing when the span is not
/// recorded by `tracing-opentelemetry`).
pub fn inject_context(span: &tracing::Span, meta: &mut Map<String, Value>) {
    let cx = span.context();
    propagator().inject_context(&cx, &mut MetaMut(meta));
}

/// Makes `span` a child of the trace context in `meta`, when it carries one (the MCP server).
#[cfg(feature = "mcp")]
pub(crate) fn adopt(span: &tracing::Span, meta: Option<&Map<String, Value>>) {
    use opentelemetry::trace::TraceContextExt;
    let Some(meta) = meta else { return };
    if span.is_disabled() || !meta.contains_key("traceparent") {
        return;
    }
    let cx = extract_context(meta);
    if cx.span().span_context().is_valid() {
        let _ = span.set_parent(cx);
    }
}

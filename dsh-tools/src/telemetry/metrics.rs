//! The duration histograms, on OpenTelemetry's metrics API (feature `otel`).
//!
//! Why OpenTelemetry's API and not the `metrics` facade: the conventions give each histogram a
//! unit and explicit bucket boundaries, which the API carries to any exporter and the facade has
//! no words for; and the spans already need OpenTelemetry's context for trace propagation, so
//! the facade would be a second dependency doing less. With no meter provider installed, the
//! global one is a no-op.

use super::names::{EXECUTE_TOOL_DURATION, MCP_CLIENT_DURATION, MCP_SERVER_DURATION};
use opentelemetry::KeyValue;
use opentelemetry::metrics::Histogram;
use std::sync::OnceLock;
use std::time::Instant;

/// When an operation began.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Clock(Instant);

impl Clock {
    pub(crate) fn start() -> Self {
        Self(Instant::now())
    }
}

/// The GenAI conventions' advice for `gen_ai.*` durations, in seconds.
const GEN_AI_BOUNDARIES: [f64; 14] = [
    0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92,
];
/// The MCP conventions' advice for `mcp.*.operation.duration`, in seconds.
const MCP_BOUNDARIES: [f64; 14] = [
    0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0,
];

fn histogram(name: &'static str) -> &'static Histogram<f64> {
    static TOOL: OnceLock<Histogram<f64>> = OnceLock::new();
    static SERVER: OnceLock<Histogram<f64>> = OnceLock::new();
    static CLIENT: OnceLock<Histogram<f64>> = OnceLock::new();
    let (cell, description, boundaries): (_, _, &[f64]) = match name {
        EXECUTE_TOOL_DURATION => (&TOOL, "Duration of tool execution", &GEN_AI_BOUNDARIES),
        MCP_SERVER_DURATION => (
            &SERVER,
            "The duration of the MCP request or notification as observed on the receiver",
            &MCP_BOUNDARIES,
        ),
        _ => (
            &CLIENT,
            "The duration of the MCP request or notification as observed on the sender",
            &MCP_BOUNDARIES,
        ),
    };
    cell.get_or_init(|| {
        opentelemetry::global::meter("dsh-tools")
            .f64_histogram(name)
            .with_unit("s")
            .with_description(description)
            .with_boundaries(boundaries.to_vec())
            .build()
    })
}

/// Records the seconds since `since` on histogram `name` (one of the duration names) with
/// `attributes`. The instruments are made on first use from the global meter provider: install
/// it before the first call (`init_from_env`, feature `otlp`, does).
pub(crate) fn record_duration(name: &'static str, since: Clock, attributes: &[KeyValue]) {
    debug_assert!(matches!(
        name,
        EXECUTE_TOOL_DURATION | MCP_SERVER_DURATION | MCP_CLIENT_DURATION
    ));
    histogram(name).record(since.0.elapsed().as_secs_f64(), attributes);
}

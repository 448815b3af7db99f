//! OTLP export from the standard `OTEL_*` variables (feature `otlp`).

use opentelemetry_otlp::{Protocol, WithExportConfig};
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::metrics::SdkMeterProvider;
use opentelemetry_sdk::trace::SdkTracerProvider;
use tracing_subscriber::Layer as _;
use tracing_subscriber::layer::SubscriberExt;

/// The error of [`init_from_env`].
pub type InitError = Box<dyn std::error::Error + Send + Sync>;

/// Keeps the exporters [`init_from_env`] installed; dropping it (or [`shutdown`](Self::shutdown))
/// flushes every span and metric not yet sent, so a process that ends by returning from `main`
/// loses nothing.
#[must_use = "dropping the guard flushes and stops the export"]
#[derive(Debug, Default)]
pub struct OtlpGuard {
    tracer: Option<SdkTracerProvider>,
    meter: Option<SdkMeterProvider>,
}

impl OtlpGuard {
    /// Whether spans are exported (an endpoint variable was set).
    pub fn is_exporting(&self) -> bool {
        self.tracer.is_some()
    }

    /// Flushes and stops the export now.
    pub fn shutdown(mut self) {
        self.stop();
    }

    fn stop(&mut self) {
        if let Some(tracer) = self.tracer.take()
            && let Err(e) = tracer.shutdown()
        {
            eprintln!("dsh-tools: OTLP trace export did not flush: {e}");
        }
        if let Some(meter) = self.meter.take()
            && let Err(e) = meter.shutdown()
        {
            eprintln!("dsh-tools: OTLP metric export did not flush: {e}");
        }
    }
}

impl Drop for OtlpGuard {
    fn drop(&mut self) {
        self.stop();
    }
}

fn set(name: &str) -> bool {
    std::env::var_os(name).is_some_and(|v| !v.is_empty())
}

/// Exports traces (and metrics) over OTLP http/protobuf when `OTEL_EXPORTER_OTLP_ENDPOINT` or
/// `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` is set, and does nothing at all otherwise (no
/// subscriber, no thread: a process without the variable is as fast as one without the
/// feature).
///
/// When exporting, it installs a global `tracing` subscriber with `tracing-opentelemetry`'s
/// layer (the spans of the `dsh_tools` crate and every `info` span or above), the SDK's tracer
/// and meter providers as OpenTelemetry's globals, and reads the standard variables:
/// `OTEL_SERVICE_NAME` (else `default_service`), `OTEL_RESOURCE_ATTRIBUTES`, the endpoint and
/// header variables, and `OTEL_METRICS_EXPORTER=none` to send no metrics (for a backend that
/// takes only traces). Call it once, early in `main`, and keep the guard until `main` returns.
///
/// ```no_run
/// # fn main() -> Result<(), dsh_tools::telemetry::InitError> {
/// let _telemetry = dsh_tools::telemetry::init_from_env("my-agent")?;
/// // … run the agent; the guard flushes when it drops.
/// # Ok(()) }
/// ```
pub fn init_from_env(default_service: &str) -> Result<OtlpGuard, InitError> {
    if !set("OTEL_EXPORTER_OTLP_ENDPOINT") && !set("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") {
        return Ok(OtlpGuard::default());
    }
    let mut resource = Resource::builder();
    if !set("OTEL_SERVICE_NAME") {
        let named = std::env::var("OTEL_RESOURCE_ATTRIBUTES").is_ok_and(|a| {
            a.split(',')
                .any(|kv| kv.trim_start().starts_with("service.name="))
        });
        if !named {
            resource = resource.with_service_name(default_service.to_owned());
        }
    }
    let resource = resource.build();
    let spans = opentelemetry_otlp::SpanExporter::builder()
        .with_http()
        .with_protocol(Protocol::HttpBinary)
        .build()?;
    let tracer = SdkTracerProvider::builder()
        .with_batch_exporter(spans)
        .with_resource(resource.clone())
        .build();
    let meter = if std::env::var("OTEL_METRICS_EXPORTER").is_ok_and(|v| v.trim() == "none") {
        None
    } else {
        let metrics = opentelemetry_otlp::MetricExporter::builder()
            .with_http()
            .with_protocol(Protocol::HttpBinary)
            .build()?;
        Some(
            SdkMeterProvider::builder()
                .with_periodic_exporter(metrics)
                .with_resource(resource)
                .build(),
        )
    };
    use opentelemetry::trace::TracerProvider as _;
    let layer = tracing_opentelemetry::layer().with_tracer(tracer.tracer("dsh-tools"));
    let filter = tracing_subscriber::filter::Targets::new().with_default(tracing::Level::INFO);
    let subscriber = tracing_subscriber::registry().with(layer.with_filter(filter));
    tracing::subscriber::set_global_default(subscriber)?;
    opentelemetry::global::set_tracer_provider(tracer.clone());
    if let Some(meter) = &meter {
        opentelemetry::global::set_meter_provider(meter.clone());
    }
    Ok(OtlpGuard {
        tracer: Some(tracer),
        meter,
    })
}

//! Traces and metrics as an OpenTelemetry backend sees them: the pipeline's spans, exported
//! through `tracing-opentelemetry` into the SDK's in-memory exporter, checked for the names,
//! kinds, parents and attributes of the GenAI and MCP semantic conventions; the whole tree
//! (approval, retries, nested calls, `run_code` sub-calls, an imported tool's client span and
//! the server span it propagates to, in both MCP eras); content capture; the duration
//! histograms.

#[path = "../common/mcp.rs"]
mod support;

use dsh_tools::mcp::rmcp::ServiceExt;
use dsh_tools::mcp::{ImportOptions, ImportedTools, McpImport, McpServer};
use dsh_tools::{
    ApprovalOutcome, CancellationToken, OutputDecl, PreToolDecision, Registry, ToolDefinition,
    ToolError, ToolExecutionInput, telemetry, wrappers,
};
use opentelemetry::trace::{SpanId, SpanKind, Status, TraceId, TracerProvider as _};
use opentelemetry::{KeyValue, Value as OtelValue};
use opentelemetry_sdk::metrics::data::{AggregatedMetrics, MetricData};
use opentelemetry_sdk::metrics::{InMemoryMetricExporter, PeriodicReader, SdkMeterProvider};
use opentelemetry_sdk::trace::{InMemorySpanExporter, SdkTracerProvider, SpanData};
use serde_json::{Value, json};
use std::sync::OnceLock;
use support::{ERAS, Era};
use tracing::Instrument;
use tracing_opentelemetry::OpenTelemetrySpanExt;
use tracing_subscriber::layer::SubscriberExt;

struct Backend {
    spans: InMemorySpanExporter,
    metrics: InMemoryMetricExporter,
    meter: SdkMeterProvider,
}

/// The process's one subscriber and providers (global: the QuickJS engine and the MCP server
/// run calls on threads and tasks of their own). Each test reads only its own trace.
fn backend() -> &'static Backend {
    static BACKEND: OnceLock<Backend> = OnceLock::new();
    BACKEND.get_or_init(|| {
        let spans = InMemorySpanExporter::default();
        let tracer = SdkTracerProvider::builder()
            .with_simple_exporter(spans.clone())
            .build();
        let subscriber = tracing_subscriber::registry()
            .with(tracing_opentelemetry::layer().with_tracer(tracer.tracer("test")));
        tracing::subscriber::set_global_default(subscriber).unwrap();
        let metrics = InMemoryMetricExporter::default();
        let meter = SdkMeterProvider::builder()
            .with_reader(PeriodicReader::builder(metrics.clone()).build())
            .build();
        opentelemetry::global::set_meter_provider(meter.clone());
        Backend {
            spans,
            metrics,
            meter,
        }
    })
}

/// Content capture is process-wide: the tests that read or switch it take turns.
async fn capture_lock() -> tokio::sync::MutexGuard<'static, ()> {
    static LOCK: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());
    LOCK.lock().await
}

/// A root span for one test: everything the test does runs in it.
fn root(name: &str) -> (tracing::Span, TraceId) {
    backend();
    let span = tracing::info_span!("test", "otel.name" = name);
    let trace = span.context().span().span_context().trace_id();
    (span, trace)
}

use opentelemetry::trace::TraceContextExt;

/// The spans of `trace` finished so far.
fn spans_of(trace: TraceId) -> Vec<SpanData> {
    backend()
        .spans
        .get_finished_spans()
        .unwrap()
        .into_iter()
        .filter(|s| s.span_context.trace_id() == trace)
        .collect()
}

fn named<'a>(spans: &'a [SpanData], name: &str) -> Vec<&'a SpanData> {
    spans.iter().filter(|s| s.name == name).collect()
}

fn one<'a>(spans: &'a [SpanData], name: &str) -> &'a SpanData {
    let found = named(spans, name);
    let names: Vec<_> = spans.iter().map(|s| s.name.to_string()).collect();
    assert_eq!(found.len(), 1, "one span {name:?} among {names:?}");
    found[0]
}

fn attr(span: &SpanData, key: &str) -> Option<String> {
    span.attributes
        .iter()
        .find(|kv| kv.key.as_str() == key)
        .map(|kv| match &kv.value {
            OtelValue::String(s) => s.to_string(),
            other => other.to_string(),
        })
}

fn id(span: &SpanData) -> SpanId {
    span.span_context.span_id()
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct EchoArgs {
    text: String,
}

fn echo() -> ToolDefinition {
    ToolDefinition::typed("echo", "Echo the text.", |args: EchoArgs, _| async move {
        Ok::<_, ToolError>(args.text)
    })
    .unwrap()
}

fn call(id: &str, name: &str, args: Value) -> ToolExecutionInput {
    ToolExecutionInput::new(id, name, args, CancellationToken::new())
}

#[tokio::test]
async fn a_call_is_an_execute_tool_span_with_the_conventions_attributes() {
    let _capture = capture_lock().await;
    let registry = Registry::new();
    registry.register(echo()).unwrap().keep();
    let (root, trace) = root("attributes");
    let ok = registry
        .execute(call("call_7", "echo", json!({"text": "secret"})))
        .instrument(root.clone())
        .await;
    assert_eq!(ok.text(), "secret");
    let bad = registry
        .execute(call("call_8", "echo", json!({"txt": 1})))
        .instrument(root.clone())
        .await;
    assert_eq!(bad.code(), Some("INVALID_ARGS"));
    drop(root);
    let spans = spans_of(trace);
    let test = one(&spans, "attributes");
    let calls = named(&spans, "execute_tool echo");
    assert_eq!(calls.len(), 2);
    for span in &calls {
        assert_eq!(span.span_kind, SpanKind::Internal);
        assert_eq!(span.parent_span_id, id(test));
        assert_eq!(
            attr(span, "gen_ai.operation.name").as_deref(),
            Some("execute_tool")
        );
        assert_eq!(attr(span, "gen_ai.tool.name").as_deref(), Some("echo"));
        assert_eq!(attr(span, "gen_ai.tool.type").as_deref(), Some("function"));
        assert_eq!(
            attr(span, "gen_ai.tool.description").as_deref(),
            Some("Echo the text.")
        );
        // Content is off by default: neither the arguments nor the result is recorded.
        assert_eq!(attr(span, "gen_ai.tool.call.arguments"), None);
        assert_eq!(attr(span, "gen_ai.tool.call.result"), None);
        // The bridge's own field names never reach the backend as attributes.
        assert_eq!(attr(span, "otel.name"), None);
    }
    let ok = calls
        .iter()
        .find(|s| attr(s, "gen_ai.tool.call.id").as_deref() == Some("call_7"))
        .unwrap();
    assert_eq!(attr(ok, "error.type"), None);
    assert_eq!(ok.status, Status::Unset);
    let bad = calls
        .iter()
        .find(|s| attr(s, "gen_ai.tool.call.id").as_deref() == Some("call_8"))
        .unwrap();
    assert_eq!(attr(bad, "error.type").as_deref(), Some("INVALID_ARGS"));
    assert!(
        matches!(bad.status, Status::Error { .. }),
        "{:?}",
        bad.status
    );
}

#[tokio::test]
async fn an_uncoded_failure_is_a_tool_error() {
    let registry = Registry::new();
    registry
        .register(ToolDefinition::new(
            "boom",
            "Fails.",
            json!({}),
            OutputDecl::text(),
            |_, _| async { Err::<Value, _>(ToolError::new("no")) },
        ))
        .unwrap()
        .keep();
    let (root, trace) = root("uncoded");
    registry
        .execute(call("c", "boom", json!({})))
        .instrument(root.clone())
        .await;
    drop(root);
    let spans = spans_of(trace);
    assert_eq!(
        attr(one(&spans, "execute_tool boom"), "error.type").as_deref(),
        Some("tool_error")
    );
}

#[tokio::test]
async fn captured_content_is_recorded_cut_to_its_bound() {
    let _capture = capture_lock().await;
    let registry = Registry::new();
    registry.register(echo()).unwrap().keep();
    let (root, trace) = root("capture");
    telemetry::set_capture_limit(Some(64));
    let long = "x".repeat(10_000);
    registry
        .execute(call("c1", "echo", json!({"text": "short"})))
        .instrument(root.clone())
        .await;
    registry
        .execute(call("c2", "echo", json!({"text": long})))
        .instrument(root.clone())
        .await;
    telemetry::capture_content(false);
    drop(root);
    let spans = spans_of(trace);
    let by_id = |id: &str| {
        named(&spans, "execute_tool echo")
            .into_iter()
            .find(|s| attr(s, "gen_ai.tool.call.id").as_deref() == Some(id))
            .unwrap()
            .clone()
    };
    let short = by_id("c1");
    assert_eq!(
        attr(&short, "gen_ai.tool.call.arguments").as_deref(),
        Some(r#"{"text":"short"}"#)
    );
    assert_eq!(
        attr(&short, "gen_ai.tool.call.result").as_deref(),
        Some(r#""short""#)
    );
    let cut = by_id("c2");
    let arguments = attr(&cut, "gen_ai.tool.call.arguments").unwrap();
    assert!(
        arguments.starts_with(r#"{"text":"xxx"#) && arguments.ends_with('…'),
        "{arguments}"
    );
    assert!(arguments.len() <= 64 + '…'.len_utf8());
    let result = attr(&cut, "gen_ai.tool.call.result").unwrap();
    assert!(result.len() <= 64 + '…'.len_utf8() && result.ends_with('…'));
}

#[tokio::test]
async fn approvals_retries_and_nested_calls_are_children_of_the_call() {
    let registry = Registry::new();
    registry.register(echo()).unwrap().keep();
    let tries = std::sync::Arc::new(std::sync::atomic::AtomicU32::new(0));
    let t = tries.clone();
    registry
        .register(ToolDefinition::new(
            "flaky",
            "Fails once.",
            json!({}),
            OutputDecl::text(),
            move |_, _| {
                let n = t.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                async move {
                    if n == 0 {
                        Err(ToolError::transient("busy"))
                    } else {
                        Ok(json!("done"))
                    }
                }
            },
        ))
        .unwrap()
        .keep();
    registry
        .register(ToolDefinition::new(
            "outer",
            "Calls echo.",
            json!({}),
            OutputDecl::text(),
            |_, ctx| async move {
                let input = ctx.nested("inner_1", "echo", json!({"text": "deep"}));
                let registry = ctx.registry();
                Ok(json!(registry.execute(input).await.text()))
            },
        ))
        .unwrap()
        .keep();
    registry.on_execute(wrappers::retry(3));
    registry.on_pre_execute(|exec, next| async move {
        if exec.name() == "echo" && exec.parent().is_none() {
            return Ok(PreToolDecision::ask_user());
        }
        next.run().await
    });
    registry.set_approval_service(|_| async { Ok(ApprovalOutcome::AllowedOnce) });
    let (root, trace) = root("tree");
    let approved = registry
        .execute(call("a", "echo", json!({"text": "hi"})).agent("main"))
        .instrument(root.clone())
        .await;
    assert_eq!(approved.text(), "hi");
    let retried = registry
        .execute(call("r", "flaky", json!({})))
        .instrument(root.clone())
        .await;
    assert_eq!(retried.text(), "done");
    let nested = registry
        .execute(call("n", "outer", json!({})))
        .instrument(root.clone())
        .await;
    assert_eq!(nested.text(), "deep");
    drop(root);
    let spans = spans_of(trace);

    let echo_calls = named(&spans, "execute_tool echo");
    let asked = echo_calls
        .iter()
        .find(|s| attr(s, "gen_ai.tool.call.id").as_deref() == Some("a"))
        .unwrap();
    let approval = one(&spans, "approval echo");
    assert_eq!(approval.parent_span_id, id(asked));
    assert_eq!(
        attr(approval, "dsh_tools.approval.outcome").as_deref(),
        Some("allowed")
    );
    // Every call is retried by the wrapper: one attempt span per try, children of the call.
    let flaky = one(&spans, "execute_tool flaky");
    let attempts: Vec<_> = spans
        .iter()
        .filter(|s| s.parent_span_id == id(flaky) && s.name.starts_with("attempt "))
        .collect();
    assert_eq!(attempts.len(), 2, "{attempts:?}");
    let first = attempts.iter().find(|s| s.name == "attempt 1").unwrap();
    assert_eq!(attr(first, "error.type").as_deref(), Some("TRANSIENT"));
    let outer = one(&spans, "execute_tool outer");
    let inner = echo_calls
        .iter()
        .find(|s| attr(s, "gen_ai.tool.call.id").as_deref() == Some("inner_1"))
        .unwrap();
    let outer_attempt = spans
        .iter()
        .find(|s| s.parent_span_id == id(outer) && s.name == "attempt 1")
        .unwrap();
    // The nested call is the outer call's child (by its span, past the attempt it ran in).
    assert_eq!(
        inner.parent_span_id,
        id(outer),
        "not under {:?}",
        id(outer_attempt)
    );
}

#[tokio::test]
async fn a_programs_sub_calls_are_children_of_run_code() {
    let registry = Registry::new();
    registry.register(echo()).unwrap().keep();
    registry.set_code_runtime(
        dsh_tools::code::quickjs::QuickJsRuntime::new(Default::default()).unwrap(),
    );
    registry.set_presentation_mode(dsh_tools::registry::PresentationMode::Code);
    let (root, trace) = root("program");
    let program = "const [a, b] = await Promise.all([tools.echo({text: 'a'}), tools.echo({text: 'b'})]); return a + b";
    let result = registry
        .execute(call(
            "call_p",
            "run_code",
            json!({"code": program, "description": "Two echoes"}),
        ))
        .instrument(root.clone())
        .await;
    assert!(!result.is_error(), "{}", result.text());
    drop(root);
    let spans = spans_of(trace);
    let run_code = one(&spans, "execute_tool run_code");
    let subs = named(&spans, "execute_tool echo");
    assert_eq!(subs.len(), 2);
    for sub in subs {
        assert_eq!(sub.parent_span_id, id(run_code));
        assert!(
            attr(sub, "gen_ai.tool.call.id")
                .unwrap()
                .starts_with("call_p:code:")
        );
    }
}

/// Serves `remote` in a task of its own (where no span is current, so a server span's parent
/// can only come from the request's `_meta.traceparent`) and imports its tools, named with
/// `prefix`, into a fresh local registry, in `era`. Keep all three while calling.
async fn imported(
    remote: Registry,
    era: Era,
    prefix: &str,
) -> (McpImport, Registry, ImportedTools) {
    let (a, b) = tokio::io::duplex(1 << 20);
    let server = McpServer::new(remote);
    tokio::spawn(async move {
        if let Ok(running) = server.serve(a).await {
            let _ = running.waiting().await;
        }
    });
    let import = McpImport::connect_with(b, era.lifecycle()).await.unwrap();
    let local = Registry::new();
    let tools = import
        .import_into(&local, ImportOptions::default().prefix(prefix))
        .await
        .unwrap();
    (import, local, tools)
}

/// The spans of `trace`, once `count` of them are named `name` (the server's end in its own
/// task), or after two seconds.
async fn spans_once(trace: TraceId, name: &str, count: usize) -> Vec<SpanData> {
    let mut spans = spans_of(trace);
    for _ in 0..200 {
        if named(&spans, name).len() == count {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        spans = spans_of(trace);
    }
    spans
}

#[tokio::test]
async fn an_imported_tool_carries_its_trace_to_the_server_in_both_eras() {
    for era in ERAS {
        let remote = Registry::new();
        remote.register(echo()).unwrap().keep();
        let (_import, local, _tools) = imported(remote, era, "r_").await;
        let (root, trace) = root(&format!("import {era:?}"));
        let ok = local
            .execute(call("c1", "r_echo", json!({"text": "there"})))
            .instrument(root.clone())
            .await;
        assert_eq!(ok.text(), "there");
        let bad = local
            .execute(call("c2", "r_echo", json!({"text": 5})))
            .instrument(root.clone())
            .await;
        assert!(bad.is_error());
        drop(root);
        let spans = spans_once(trace, "execute_tool echo", 1).await;
        let local_call = named(&spans, "execute_tool r_echo");
        assert_eq!(local_call.len(), 2, "{era:?}");
        let sent = named(&spans, "tools/call echo");
        let clients: Vec<_> = sent
            .iter()
            .filter(|s| s.span_kind == SpanKind::Client)
            .collect();
        let servers: Vec<_> = sent
            .iter()
            .filter(|s| s.span_kind == SpanKind::Server)
            .collect();
        assert_eq!(
            clients.len(),
            1,
            "{era:?}: local validation refuses the bad call"
        );
        assert_eq!(servers.len(), 1, "{era:?}");
        let (client, server) = (clients[0], servers[0]);
        let ok_call = local_call
            .iter()
            .find(|s| attr(s, "gen_ai.tool.call.id").as_deref() == Some("c1"))
            .unwrap();
        assert_eq!(client.parent_span_id, id(ok_call));
        assert_eq!(
            server.parent_span_id,
            id(client),
            "{era:?}: the server adopts the traceparent"
        );
        for span in [client, server] {
            assert_eq!(attr(span, "mcp.method.name").as_deref(), Some("tools/call"));
            assert_eq!(attr(span, "gen_ai.tool.name").as_deref(), Some("echo"));
            assert_eq!(
                attr(span, "gen_ai.operation.name").as_deref(),
                Some("execute_tool")
            );
            assert!(
                attr(span, "jsonrpc.request.id").is_some(),
                "{era:?} {}",
                span.name
            );
            assert!(
                attr(span, "mcp.protocol.version").is_some(),
                "{era:?} {}",
                span.name
            );
        }
        assert_eq!(attr(server, "network.transport").as_deref(), Some("pipe"));
        let remote_call = one(&spans, "execute_tool echo");
        assert_eq!(remote_call.parent_span_id, id(server));
        let refused = local_call
            .iter()
            .find(|s| attr(s, "gen_ai.tool.call.id").as_deref() == Some("c2"))
            .unwrap();
        assert_eq!(attr(refused, "error.type").as_deref(), Some("INVALID_ARGS"));
    }
}

#[tokio::test]
async fn an_mcp_servers_error_answers_are_error_typed() {
    let remote = Registry::new();
    remote
        .register(ToolDefinition::new(
            "boom",
            "Fails.",
            json!({}),
            OutputDecl::text(),
            |_, _| async { Err::<Value, _>(ToolError::new("no")) },
        ))
        .unwrap()
        .keep();
    let (_import, local, _tools) = imported(remote, Era::Modern, "").await;
    let (root, trace) = root("server errors");
    let failed = local
        .execute(call("c", "boom", json!({})))
        .instrument(root.clone())
        .await;
    assert!(failed.is_error());
    drop(root);
    let spans = spans_once(trace, "tools/call boom", 2).await;
    for span in named(&spans, "tools/call boom") {
        assert_eq!(
            attr(span, "error.type").as_deref(),
            Some("tool_error"),
            "{:?}",
            span.span_kind
        );
        assert!(matches!(span.status, Status::Error { .. }));
    }
}

/// The data points of histogram `name` whose attributes include all of `with`.
fn histogram_points(name: &str, with: &[KeyValue]) -> Vec<(Vec<KeyValue>, u64)> {
    let backend = backend();
    backend.meter.force_flush().unwrap();
    let exported = backend.metrics.get_finished_metrics().unwrap();
    let Some(last) = exported.last() else {
        return Vec::new();
    };
    let mut points = Vec::new();
    for scope in last.scope_metrics() {
        for metric in scope.metrics().filter(|m| m.name() == name) {
            assert_eq!(metric.unit(), "s");
            let AggregatedMetrics::F64(MetricData::Histogram(h)) = metric.data() else {
                panic!("{name} is not an f64 histogram");
            };
            for point in h.data_points() {
                let attributes: Vec<KeyValue> = point.attributes().cloned().collect();
                if with.iter().all(|kv| attributes.contains(kv)) {
                    points.push((attributes, point.count()));
                }
            }
        }
    }
    points
}

#[tokio::test]
async fn durations_are_histograms_with_bounded_attributes() {
    backend();
    let registry = Registry::new();
    registry
        .register(ToolDefinition::new(
            "metered_tool",
            "Counted.",
            json!({}),
            OutputDecl::text(),
            |_, _| async { Ok(json!("ok")) },
        ))
        .unwrap()
        .keep();
    registry
        .execute(call("m1", "metered_tool", json!({})))
        .await;
    registry
        .execute(call("m2", "metered_tool", json!({})))
        .await;
    // A name the model made up is `_OTHER`: the series stay as many as the tools.
    let made_up = registry
        .execute(call("m3", "made_up_name_1234", json!({})))
        .await;
    assert_eq!(made_up.code(), Some("UNKNOWN_TOOL"));
    let points = histogram_points(
        telemetry::EXECUTE_TOOL_DURATION,
        &[KeyValue::new("gen_ai.tool.name", "metered_tool")],
    );
    assert_eq!(points.len(), 1, "{points:?}");
    assert!(points[0].1 >= 2);
    assert!(
        points[0]
            .0
            .contains(&KeyValue::new("gen_ai.operation.name", "execute_tool"))
    );
    let other = histogram_points(
        telemetry::EXECUTE_TOOL_DURATION,
        &[
            KeyValue::new("gen_ai.tool.name", "_OTHER"),
            KeyValue::new("error.type", "UNKNOWN_TOOL"),
        ],
    );
    assert!(!other.is_empty());
    let all = histogram_points(telemetry::EXECUTE_TOOL_DURATION, &[]);
    assert!(
        all.iter().all(|(attributes, _)| !attributes
            .iter()
            .any(|kv| kv.value.as_str().contains("made_up_name"))),
        "{all:?}"
    );

    // The server's and the client's, through an import.
    let remote = Registry::new();
    remote
        .register(ToolDefinition::new(
            "metered_remote",
            "Counted.",
            json!({}),
            OutputDecl::text(),
            |_, _| async { Ok(json!("ok")) },
        ))
        .unwrap()
        .keep();
    let (_import, local, _tools) = imported(remote, Era::Legacy, "").await;
    local.execute(call("x", "metered_remote", json!({}))).await;
    let tool = KeyValue::new("gen_ai.tool.name", "metered_remote");
    let method = KeyValue::new("mcp.method.name", "tools/call");
    let mut server_points = Vec::new();
    for _ in 0..200 {
        server_points = histogram_points(
            telemetry::MCP_SERVER_DURATION,
            &[tool.clone(), method.clone()],
        );
        if !server_points.is_empty() {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    assert_eq!(server_points.len(), 1, "{server_points:?}");
    assert!(
        server_points[0]
            .0
            .contains(&KeyValue::new("network.transport", "pipe"))
    );
    let client_points = histogram_points(telemetry::MCP_CLIENT_DURATION, &[tool, method]);
    assert_eq!(client_points.len(), 1, "{client_points:?}");
}

#[test]
fn trace_context_is_read_from_meta_and_bounded() {
    let meta = json!({"traceparent": "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"});
    let cx = telemetry::extract_context(meta.as_object().unwrap());
    assert_eq!(
        cx.span().span_context().span_id().to_string(),
        "b7ad6b7169203331"
    );
    for hostile in [
        json!({"traceparent": 5}),
        json!({"traceparent": "x".repeat(100_000)}),
        json!({"traceparent": "00-zz-yy-01"}),
    ] {
        let cx = telemetry::extract_context(hostile.as_object().unwrap());
        assert!(!cx.span().span_context().is_valid());
    }
}

//! Progress reports: delivered in order to the caller's sink, a no-op without one, inherited by
//! nested calls built with `ToolRunContext::nested`, and a panicking sink is contained.

use dsh_tools::pipeline::{Progress, ProgressSink};
use dsh_tools::{CancellationToken, OutputDecl, Registry, ToolDefinition, ToolExecutionInput};
use serde_json::json;
use std::sync::{Arc, Mutex};

fn registry() -> Registry {
    let registry = Registry::new();
    let inner = ToolDefinition::new(
        "inner",
        "reports twice",
        json!({"type": "object"}),
        OutputDecl::text(),
        |_, ctx| async move {
            ctx.report_progress(1.0, Some(2.0), Some("inner 1"));
            ctx.report_progress(2.0, Some(2.0), None);
            Ok(json!("inner done"))
        },
    );
    let outer = ToolDefinition::new(
        "outer",
        "reports, then calls inner",
        json!({"type": "object"}),
        OutputDecl::text(),
        |_, ctx| async move {
            ctx.report_progress(0.0, None, Some("outer start"));
            let nested = ctx.nested("n1", "inner", json!({}));
            assert_eq!(nested.parent, Some(ctx.execution().token()));
            assert_eq!(nested.root_call_id.as_deref(), Some("c1"));
            let result = ctx.registry().execute(nested).await;
            ctx.report_progress(10.0, None, None);
            Ok(json!(result.text()))
        },
    );
    registry.register(inner).unwrap().keep();
    registry.register(outer).unwrap().keep();
    registry
}

fn recording() -> (ProgressSink, Arc<Mutex<Vec<Progress>>>) {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let s = Arc::clone(&seen);
    (ProgressSink::new(move |p| s.lock().unwrap().push(p)), seen)
}

#[tokio::test]
async fn nested_calls_report_to_the_callers_sink_in_order() {
    let registry = registry();
    let (sink, seen) = recording();
    let input =
        ToolExecutionInput::new("c1", "outer", json!({}), CancellationToken::new()).progress(sink);
    let result = registry.execute(input).await;
    assert_eq!(result.text(), "inner done");
    let seen: Vec<(f64, Option<f64>, Option<String>)> = seen
        .lock()
        .unwrap()
        .iter()
        .map(|p| (p.progress, p.total, p.message.clone()))
        .collect();
    assert_eq!(
        seen,
        [
            (0.0, None, Some("outer start".to_owned())),
            (1.0, Some(2.0), Some("inner 1".to_owned())),
            (2.0, Some(2.0), None),
            (10.0, None, None),
        ]
    );
}

#[tokio::test]
async fn without_a_sink_reports_go_nowhere() {
    let registry = registry();
    let input = ToolExecutionInput::new("c1", "outer", json!({}), CancellationToken::new());
    assert_eq!(registry.execute(input).await.text(), "inner done");
}

#[tokio::test]
async fn a_panicking_sink_does_not_fail_the_call() {
    let registry = registry();
    let sink = ProgressSink::new(|_| panic!("sink broke"));
    let input =
        ToolExecutionInput::new("c1", "inner", json!({}), CancellationToken::new()).progress(sink);
    let result = registry.execute(input).await;
    assert!(!result.is_error(), "{}", result.text());
    assert_eq!(result.text(), "inner done");
}

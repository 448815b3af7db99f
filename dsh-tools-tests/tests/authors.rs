//! Tool authors, round 2 (issue #9): retries only what is marked transient, registrations kept
//! unless disposed.

use dsh_tools::{
    CancellationToken, OutputDecl, Registry, ToolDefinition, ToolError, ToolExecutionInput,
    wrappers,
};
use serde_json::json;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};

fn failing(name: &str, error: fn() -> ToolError, tries: Arc<AtomicU32>) -> ToolDefinition {
    ToolDefinition::new(name, "fails", json!({}), OutputDecl::text(), move |_, _| {
        tries.fetch_add(1, Ordering::SeqCst);
        async move { Err::<serde_json::Value, _>(error()) }
    })
}

#[tokio::test]
async fn retry_runs_again_only_what_the_tool_marked_transient() {
    let registry = Registry::new();
    registry.on_execute(wrappers::retry(3));
    let plain = Arc::new(AtomicU32::new(0));
    let io = Arc::new(AtomicU32::new(0));
    let transient = Arc::new(AtomicU32::new(0));
    registry
        .register(failing(
            "divide",
            || ToolError::new("division by zero"),
            plain.clone(),
        ))
        .unwrap();
    registry
        .register(failing(
            "read",
            || ToolError::from_error(&std::io::Error::other("no such file")),
            io.clone(),
        ))
        .unwrap();
    registry
        .register(failing(
            "fetch",
            || ToolError::transient("rate limited"),
            transient.clone(),
        ))
        .unwrap();
    for name in ["divide", "read", "fetch"] {
        let input = ToolExecutionInput::new("c", name, json!({}), CancellationToken::new());
        assert!(registry.execute(input).await.is_error());
    }
    assert_eq!(plain.load(Ordering::SeqCst), 1, "a plain error is final");
    assert_eq!(io.load(Ordering::SeqCst), 1, "an io::Error is final");
    assert_eq!(
        transient.load(Ordering::SeqCst),
        3,
        "a transient error is retried"
    );
}

#[test]
fn an_ignored_registration_keeps_the_tool_and_dispose_removes_it() {
    let registry = Registry::new();
    let tool = |name: &str| {
        ToolDefinition::new(name, "d", json!({}), OutputDecl::text(), |_, _| async {
            Ok(json!("ok"))
        })
    };
    // What rustc's `let _ = ...` help used to lose.
    let _ = registry.register(tool("a"));
    registry.register(tool("b")).unwrap();
    let c = registry.register(tool("c")).unwrap();
    let names = |r: &Registry| -> Vec<String> {
        r.schemas(None)
            .unwrap()
            .into_iter()
            .map(|s| s.name)
            .collect()
    };
    assert_eq!(names(&registry), ["a", "b", "c"]);
    c.dispose();
    assert_eq!(names(&registry), ["a", "b"]);
    // Hooks follow the same rule: a dropped handle keeps the wrapper.
    registry.on_execute(wrappers::retry(2));
}

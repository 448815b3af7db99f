//! Generated tools through a registry: validation, decode, output checks, rendering, keys.

use super::tools::*;
use dsh_tools::registry::RegistrationError;
use dsh_tools::schedule::ExecutionMode;
use dsh_tools::{
    CancellationToken, Registry, Tool, ToolDefinition, ToolExecutionInput, ToolExecutionResult,
    wrappers,
};
use serde_json::{Value, json};
use std::time::Duration;

fn registry() -> Registry {
    let registry = Registry::new();
    registry.register(ReadFile.definition()).unwrap().keep();
    registry.register(Add).unwrap().keep();
    registry.register_tool(Search).unwrap().keep();
    registry.register_tool(Wait).unwrap().keep();
    registry.register_tool(NotANumber).unwrap().keep();
    registry.register_tool(Cancelled).unwrap().keep();
    registry.register_tool(Write).unwrap().keep();
    registry.register_tool(Measure).unwrap().keep();
    registry.on_execute(wrappers::timeout(&registry)).keep();
    registry
}

pub(crate) async fn call(registry: &Registry, name: &str, args: Value) -> ToolExecutionResult {
    let input = ToolExecutionInput::new("call_1", name, args, CancellationToken::new());
    registry.execute(input).await
}

#[tokio::test]
async fn struct_form_validates_decodes_and_runs() {
    let registry = registry();
    let ok = call(&registry, "read_file", json!({"path": "/a", "offset": 3})).await;
    assert_eq!(ok.text(), "/a from 3 (all lines)");
    let bad = call(&registry, "read_file", json!({"offset": -1, "limit": "x"})).await;
    assert_eq!(bad.code(), Some("INVALID_ARGS"));
    assert_eq!(
        bad.text(),
        "Error: invalid arguments: missing required property \"path\"; \"offset\" must match \
         exactly one oneOf branch (matched 0): \"offset\" must be >= 0 (or null); \"limit\" \
         must match exactly one oneOf branch (matched 0): \"limit\" must be an integer (or null)"
    );
}

#[tokio::test]
async fn inline_form_reports_every_violation_with_paths() {
    let registry = registry();
    assert_eq!(
        call(&registry, "add", json!({"a": 2, "b": 3})).await.text(),
        "5"
    );
    // 2.0 is an integer to the validator, and it decodes.
    assert_eq!(
        call(&registry, "add", json!({"a": 2.0, "b": 3}))
            .await
            .text(),
        "5"
    );
    let bad = call(&registry, "add", json!({"a": "2", "c": 1})).await;
    assert_eq!(bad.code(), Some("INVALID_ARGS"));
    assert_eq!(
        bad.text(),
        "Error: invalid arguments: missing required property \"b\"; \"a\" must be an integer; \
         \"c\" is not a declared property (additionalProperties: false): the declared \
         properties are \"a\", \"b\""
    );
    let nested = json!({"pattern": "x", "paths": ["a", 3], "labels": {"k": 1}});
    let nested = call(&registry, "grep", nested).await;
    assert_eq!(
        nested.text(),
        "Error: invalid arguments: \"paths[1]\" must be a string; \"labels.k\" must be a boolean"
    );
}

#[tokio::test]
async fn outputs_are_declared_validated_and_rendered() {
    let registry = registry();
    let found = call(
        &registry,
        "grep",
        json!({"pattern": "fn", "paths": ["a", "b"], "max": 1}),
    )
    .await;
    assert!(!found.is_error());
    assert_eq!(
        found.value(),
        Some(&json!({"matches": ["a:fn"], "truncated": true}))
    );
    assert_eq!(found.text(), r#"{"matches":["a:fn"],"truncated":true}"#);
    let nan = call(&registry, "not_a_number", json!({})).await;
    assert_eq!(nan.code(), Some("INVALID_TOOL_OUTPUT"), "{}", nan.text());
    let shouted = call(&registry, "write", json!({"text": "hi"})).await;
    assert_eq!(shouted.text(), "HI");
    assert_eq!(shouted.value(), Some(&json!("hi")));
}

#[tokio::test]
async fn errors_convert_into_tool_errors() {
    let registry = registry();
    let full = call(&registry, "write", json!({"text": ""})).await;
    assert_eq!(full.code(), Some("ENOSPC"));
    assert_eq!(full.text(), "Error: disk full");
}

#[tokio::test]
async fn timeout_ms_is_enforced_by_the_timeout_wrapper() {
    let registry = registry();
    assert_eq!(
        call(&registry, "wait", json!({"ms": 1})).await.text(),
        "done"
    );
    let slow = call(&registry, "wait", json!({"ms": 5_000})).await;
    assert_eq!(slow.code(), Some("TOOL_TIMEOUT"));
    assert_eq!(
        Wait.definition().timeout_duration(),
        Some(Duration::from_millis(20))
    );
}

#[tokio::test]
async fn the_context_is_passed_through() {
    let registry = registry();
    assert_eq!(
        call(&registry, "cancelled", json!({})).await.text(),
        "false"
    );
    let extra = call(&registry, "cancelled", json!({"x": 1})).await;
    assert_eq!(extra.code(), Some("INVALID_ARGS"));
}

#[test]
fn concurrency_keys_classify_calls() {
    let registry = registry();
    let mode = |name: &str, args: Value| registry.execution_mode(name, &args, None, None);
    assert_eq!(
        mode("read_file", json!({"path": "/a"})),
        ExecutionMode::Parallel
    );
    assert_eq!(
        mode("add", json!({"a": 1, "b": 2})),
        ExecutionMode::Exclusive
    );
    let fast = json!({"pattern": "x", "paths": [], "mode": "fast"});
    let thorough = json!({"pattern": "x", "paths": [], "mode": "thorough"});
    assert_eq!(mode("grep", fast), ExecutionMode::Parallel);
    assert_eq!(mode("grep", thorough), ExecutionMode::Exclusive);
    assert_eq!(
        mode("grep", json!({"mode": "fast"})),
        ExecutionMode::Exclusive
    );
}

#[test]
fn names_descriptions_and_presenters() {
    let grep = Search.definition();
    assert_eq!(grep.name(), "grep");
    assert_eq!(grep.description(), "Search files for a pattern.");
    assert_eq!(
        Cancelled.definition().description(),
        "Reports cancellation."
    );
    let write = Write.definition();
    assert!(write.call_presenter().is_some() && write.result_presenter().is_some());
    // `task = "required"` and the default.
    use dsh_tools::task::TaskSupport;
    assert_eq!(Wait.definition().tool_task_support(), TaskSupport::Required);
    assert_eq!(Wait.task_support(), TaskSupport::Required);
    assert_eq!(write.tool_task_support(), TaskSupport::Forbidden);
    assert!(Add.definition().call_presenter().is_none());
}

#[test]
fn schemas_are_computed_once_per_tool() {
    let (a, b) = (Add.definition(), ToolDefinition::from(Add));
    assert!(std::ptr::eq(a.parameters(), b.parameters()));
}

#[test]
fn unbridgeable_types_fail_at_registration_not_at_compile_time() {
    let registry = Registry::new();
    let Err(RegistrationError::Schema { name, error }) = registry.register_tool(Unbridgeable)
    else {
        panic!("a tuple field has no schema in the subset");
    };
    assert_eq!(name, "unbridgeable");
    assert!(error.to_string().contains("prefixItems"), "{error}");
    assert!(Unbridgeable.try_definition().is_err());
    let Err(RegistrationError::Schema { error, .. }) = registry.register_tool(ScalarArgs) else {
        panic!("string arguments are not an object");
    };
    assert!(error.to_string().contains("must be an object"), "{error}");
}

#[tokio::test]
async fn the_function_stays_callable() {
    assert_eq!(add(2, 2).await, Ok(4));
    assert!(
        search(SearchArgs {
            pattern: "p".into(),
            paths: vec![],
            mode: None,
            max: None,
            labels: Default::default(),
        })
        .await
        .is_ok()
    );
}

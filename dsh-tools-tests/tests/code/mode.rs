//! `run_code` on a registry: presence by presentation mode, the missing-runtime failure, one
//! program's binding calls going through the whole pipeline (ids, parent, policy), and the
//! outcomes the model reads. The engine is `testing::FakeRuntime`: the "program" is a closure.

use dsh_tools::code::FailureKind;
use dsh_tools::provider::ProviderExport;
use dsh_tools::registry::PresentationMode;
use dsh_tools::testing::{FakeOutcome, FakeRuntime};
use dsh_tools::{
    CancellationToken, OutputDecl, PreToolDecision, Registry, ToolDefinition, ToolExecution,
    ToolExecutionInput, ToolExecutionResult,
};
use serde_json::{Value, json};
use std::sync::{Arc, Mutex};

fn registry() -> Registry {
    let registry = Registry::new();
    let add = ToolDefinition::new(
        "add",
        "Add two numbers.",
        json!({"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
               "required": ["a", "b"]}),
        OutputDecl::json(json!({"type": "integer"})),
        |args, _| async move {
            Ok(json!(
                args["a"].as_i64().unwrap() + args["b"].as_i64().unwrap()
            ))
        },
    );
    let write = ToolDefinition::new(
        "write",
        "Write a file.",
        json!({"type": "object"}),
        OutputDecl::text(),
        |_, _| async { Ok(json!("written")) },
    );
    registry.register(add).unwrap().keep();
    registry.register(write).unwrap().keep();
    registry
}

async fn run_code(registry: &Registry, args: Value) -> ToolExecutionResult {
    let input = ToolExecutionInput::new("outer", "run_code", args, CancellationToken::new());
    registry.execute(input).await
}

fn program() -> Value {
    json!({"code": "…", "description": "Add, then write"})
}

/// A fake program: calls `tools.add` and `tools.write`, logs what each gave, returns the sum.
fn adder() -> FakeRuntime {
    FakeRuntime::new(|_, run| async move {
        let sum = run.call("tools", "add", json!({"a": 2, "b": 3})).await;
        let wrote = run.call("tools", "write", json!({})).await;
        run.log(format!("write: {wrote:?}"));
        match sum {
            Ok(sum) => FakeOutcome::Return(Some(sum)),
            Err(e) => FakeOutcome::Throw(e),
        }
    })
}

#[tokio::test]
async fn run_code_is_presented_only_in_code_and_both_modes() {
    let registry = registry();
    let names = |r: &Registry| -> Vec<String> {
        r.schemas(None)
            .unwrap()
            .into_iter()
            .map(|s| s.name)
            .collect()
    };
    assert_eq!(names(&registry), ["add", "write"]);
    let native = run_code(&registry, program()).await;
    assert_eq!(
        native.code(),
        Some("UNKNOWN_TOOL"),
        "native scopes cannot dispatch it"
    );

    registry.set_presentation_mode(PresentationMode::Both);
    let error = registry.schemas(None).unwrap_err().to_string();
    assert!(
        error.starts_with("dsh-tools: mode \"both\" requires a code runtime"),
        "{error}"
    );
    let missing = run_code(&registry, program()).await;
    assert!(
        missing.text().contains("requires a code runtime"),
        "{}",
        missing.text()
    );
    assert_eq!(
        missing.code(),
        None,
        "no info on the missing-runtime failure"
    );

    registry.set_code_runtime(adder());
    assert_eq!(names(&registry), ["add", "write", "run_code"]);
    let schema = registry.schemas(None).unwrap().pop().unwrap();
    assert_eq!(
        schema.parameters["required"],
        json!(["code", "description"])
    );
    // A scope declaring native does not present it, whatever the registry's default.
    let scope = registry.scope("N");
    scope.present_as(PresentationMode::Native).unwrap();
    let agent = dsh_tools::AgentId::new("N");
    assert!(registry.get("run_code", Some(&agent)).is_none());
}

#[tokio::test]
async fn every_binding_call_is_a_nested_call_through_the_whole_pipeline() {
    let registry = registry();
    registry.set_presentation_mode(PresentationMode::Code);
    registry.set_code_runtime(adder());
    // Policy: writing is denied. Code Mode must not be a way around it.
    registry
        .on_pre_execute(|exec, next| async move {
            if exec.name() == "write" {
                return Ok(PreToolDecision::deny("writes are not allowed here"));
            }
            next.run().await
        })
        .keep();
    let seen: Arc<Mutex<Vec<(String, bool)>>> = Arc::default();
    let outer_token = Arc::new(Mutex::new(None));
    let (s, t) = (Arc::clone(&seen), Arc::clone(&outer_token));
    registry
        .on_result(move |e: &ToolExecution, _r: &ToolExecutionResult| {
            if e.name() == "run_code" {
                *t.lock().unwrap() = Some(e.token());
            }
            s.lock()
                .unwrap()
                .push((e.call_id().to_owned(), e.parent().is_some()));
            Ok(())
        })
        .keep();
    let result = run_code(&registry, program()).await;
    assert!(!result.is_error(), "{}", result.text());
    assert_eq!(
        result.value(),
        Some(&json!({"logs": [r#"write: Err("writes are not allowed here")"#], "result": 5}))
    );
    assert_eq!(
        result.text(),
        "write: Err(\"writes are not allowed here\")\n5"
    );
    let seen = seen.lock().unwrap().clone();
    assert_eq!(
        seen,
        [
            ("outer:code:1".to_owned(), true),
            ("outer:code:2".to_owned(), true),
            ("outer".to_owned(), false)
        ],
        "sub-calls numbered from 1 under the outer id, each with a parent"
    );
    // Direct calls to other tools stay collapsed under `code`.
    let direct = registry
        .execute(ToolExecutionInput::new(
            "d",
            "add",
            json!({"a": 1, "b": 1}),
            CancellationToken::new(),
        ))
        .await;
    assert_eq!(direct.code(), Some("UNKNOWN_TOOL"));
}

#[tokio::test]
async fn outcomes_read_as_the_spec_says() {
    let registry = registry();
    registry.set_presentation_mode(PresentationMode::Code);
    // A failed run: CODE_RUN_FAILED with the captured output.
    registry.set_code_runtime(FakeRuntime::new(|_, run| async move {
        run.log("got this far");
        FakeOutcome::Fail(
            FailureKind::Timeout,
            "compute budget exhausted (300ms busy)".into(),
        )
    }));
    let failed = run_code(&registry, program()).await;
    assert_eq!(failed.code(), Some("CODE_RUN_FAILED"));
    assert_eq!(
        failed.text(),
        "Error: code run failed (timeout): compute budget exhausted (300ms busy)\nCaptured output:\ngot this far"
    );
    // A blank description fails before the runtime is asked.
    let blank = run_code(
        &registry,
        json!({"code": "return 1", "description": " \u{a0}\n"}),
    )
    .await;
    assert_eq!(
        blank.text(),
        "Error: invalid description: expected a non-empty string"
    );
    assert_eq!(blank.code(), None);
    // Missing arguments are INVALID_ARGS from the ordinary path.
    let missing = run_code(&registry, json!({"code": "return 1"})).await;
    assert_eq!(missing.code(), Some("INVALID_ARGS"));
    assert!(
        missing
            .text()
            .contains("missing required property \"description\"")
    );
    // A program with no output.
    registry.set_code_runtime(FakeRuntime::new(|_, _| async { FakeOutcome::Return(None) }));
    let quiet = run_code(&registry, program()).await;
    assert_eq!(quiet.text(), "(run_code completed with no output)");
    assert_eq!(quiet.value(), Some(&json!({"logs": []})));
    // The call card: generic, titled by the description, the code as raw input.
    let card = registry.present_call(
        "run_code",
        &json!({"code": "return 1", "description": "One"}),
        None,
    );
    assert_eq!(
        serde_json::to_value(&card).unwrap(),
        json!({"card": "generic", "title": "One", "kind": "execute", "rawInput": "return 1"})
    );
}

#[tokio::test]
async fn the_wire_lists_only_run_code_under_code() {
    use dsh_tools::provider::{Dialect, Provider};
    let registry = registry();
    let native = registry
        .provider_tools(None, Dialect::new(Provider::Anthropic))
        .unwrap();
    assert_eq!(native.system_prompt(), "", "native: nothing to add");
    registry.set_presentation_mode(PresentationMode::Code);
    let error = registry
        .provider_tools(None, Dialect::new(Provider::Anthropic))
        .unwrap_err()
        .to_string();
    assert!(error.contains("requires a code runtime"), "{error}");
    registry.set_code_runtime(adder());
    let names = |r: &Registry| -> Vec<String> {
        r.provider_tools(None, Dialect::new(Provider::Anthropic))
            .unwrap()
            .tools()
            .iter()
            .map(|t| t.name().to_owned())
            .collect()
    };
    registry.set_presentation_mode(PresentationMode::Both);
    assert_eq!(names(&registry), ["add", "write", "run_code"]);
    registry.set_presentation_mode(PresentationMode::Code);
    assert_eq!(names(&registry), ["run_code"]);
    // The system prompt that goes with them: Code Mode's sections.
    let exported = registry
        .provider_tools(None, Dialect::new(Provider::Anthropic))
        .unwrap();
    assert_eq!(
        exported.system_prompt(),
        registry.code_prompt(None).unwrap()
    );
    assert!(exported.system_prompt().contains("declare const tools"));
    // The bridge still binds every visible tool (schemas and tools list them all).
    let listed: Vec<String> = registry
        .schemas(None)
        .unwrap()
        .into_iter()
        .map(|s| s.name)
        .collect();
    assert_eq!(listed, ["add", "write", "run_code"]);
    let wire: Vec<String> = registry
        .wire_tools(None)
        .iter()
        .map(|t| t.name().to_owned())
        .collect();
    assert_eq!(wire, ["run_code"]);
}

#[tokio::test]
async fn a_binding_called_after_the_run_settled_is_not_dispatched() {
    let registry = registry();
    registry.set_presentation_mode(PresentationMode::Code);
    let late: Arc<Mutex<Option<Result<Value, String>>>> = Arc::default();
    let slot = Arc::clone(&late);
    registry.set_code_runtime(FakeRuntime::new(move |_, run| {
        let slot = Arc::clone(&slot);
        async move {
            // A call left running when the program returns (a forgotten promise).
            tokio::spawn(async move {
                tokio::time::sleep(std::time::Duration::from_millis(50)).await;
                let outcome = run.call("tools", "add", json!({"a": 1, "b": 1})).await;
                *slot.lock().unwrap() = Some(outcome);
            });
            FakeOutcome::Return(None)
        }
    }));
    let result = run_code(&registry, program()).await;
    assert!(!result.is_error(), "{}", result.text());
    for _ in 0..100 {
        if late.lock().unwrap().is_some() {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    assert_eq!(
        late.lock().unwrap().clone(),
        Some(Err(
            "run_code run is over (run_code settled); add not dispatched".to_owned()
        ))
    );
}

//! The Code Mode bridge scenarios of `conformance/code-mode/bridge.md`, sections A–E (assembly,
//! the `run_code` tool, the bridge, the scheduler, settlement), one named test each, on the
//! scripted runtime `testing::FakeRuntime`. Sections F–H run programs on a real engine
//! (`quickjs.rs`).
//!
//! Skipped by name, with the reason:
//! - CM050's "missing argument" case: a host function always receives a JSON value; an absent
//!   argument (`undefined`) is refused by the engine before the bridge (`quickjs.rs`).
//! - CM078's `-1`, `1.5` and NaN: `set_max_parallel_sub_calls` takes a `usize`; only `0` is
//!   representable and refused.

use dsh_tools::code::{
    CodeDispatchKind, CodeDispatchRecord, FailureKind, RUN_CODE_DESCRIPTION, run_code_parameters,
};
use dsh_tools::registry::{PresentationMode, Restriction};
use dsh_tools::testing::{FakeOutcome, FakeRun, FakeRuntime};
use dsh_tools::{
    AgentId, CancellationToken, ContentBlock, OutputDecl, PostToolDecision, PreToolDecision,
    Registry, ToolDefinition, ToolExecution, ToolExecutionInput, ToolExecutionResult, UserMessage,
};
use serde_json::{Value, json};
use std::collections::HashSet;
use std::future::Future;
use std::sync::{Arc, Mutex};
use std::time::Duration;

type Shared<T> = Arc<Mutex<T>>;

fn registry(mode: PresentationMode) -> Registry {
    let registry = Registry::new();
    registry.set_presentation_mode(mode);
    registry
}

/// The runtime plays `script`.
fn script<F, Fut>(registry: &Registry, f: F)
where
    F: Fn(FakeRun) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = FakeOutcome> + Send + 'static,
{
    registry.set_code_runtime(FakeRuntime::new(move |_request, run| f(run)));
}

/// `echo(name)`: records its arguments, returns `<name>:<value>`.
fn echo(registry: &Registry, name: &str) -> Shared<Vec<Value>> {
    let seen: Shared<Vec<Value>> = Arc::default();
    let (s, n) = (Arc::clone(&seen), name.to_owned());
    let definition = ToolDefinition::new(
        name,
        format!("Echo tool {name}."),
        json!({"type": "object", "properties": {"value": {"type": "string"}}, "required": ["value"]}),
        OutputDecl::json(json!({"type": "string"})),
        move |args: Arc<Value>, _| {
            let (s, n) = (Arc::clone(&s), n.clone());
            async move {
                s.lock().unwrap().push((*args).clone());
                Ok(json!(format!(
                    "{n}:{}",
                    args["value"].as_str().unwrap_or("")
                )))
            }
        },
    );
    registry.register(definition).unwrap().keep();
    seen
}

/// Gates for `gated` tools: bodies wait until their id (or everything) is released, or their
/// signal fires.
#[derive(Default)]
struct Gates {
    released: HashSet<String>,
    all: bool,
    running: usize,
    pending: usize,
    peak: usize,
    trace: Vec<String>,
}

async fn until(mut cond: impl FnMut() -> bool) {
    for _ in 0..10_000 {
        if cond() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
    panic!("condition not reached within 10 s");
}

fn gated(registry: &Registry, name: &str, safe: bool, gates: &Shared<Gates>) {
    let (g, n) = (Arc::clone(gates), name.to_owned());
    let definition = ToolDefinition::new(
        name,
        "gated",
        json!({"type": "object", "properties": {"id": {"type": "string"}}, "required": ["id"]}),
        OutputDecl::json(json!({"type": "string"})),
        move |args: Arc<Value>, ctx| {
            let (g, n) = (Arc::clone(&g), n.clone());
            async move {
                let id = args["id"].as_str().unwrap_or("").to_owned();
                {
                    let mut g = g.lock().unwrap();
                    g.trace.push(format!("start:{id}"));
                    g.running += 1;
                    g.pending += 1;
                    g.peak = g.peak.max(g.running);
                }
                let open = || {
                    let g = g.lock().unwrap();
                    g.all || g.released.contains(&id)
                };
                while !open() && !ctx.is_cancelled() {
                    tokio::time::sleep(Duration::from_millis(1)).await;
                }
                let mut g = g.lock().unwrap();
                g.pending -= 1;
                g.running -= 1;
                g.trace.push(format!("end:{id}"));
                Ok(json!(format!("{n}:{id}")))
            }
        },
    )
    .concurrency_safe(move |_| safe);
    registry.register(definition).unwrap().keep();
}

fn release(gates: &Shared<Gates>, id: &str) {
    gates.lock().unwrap().released.insert(id.to_owned());
}

fn pending(gates: &Shared<Gates>) -> usize {
    gates.lock().unwrap().pending
}

fn trace(gates: &Shared<Gates>) -> Vec<String> {
    gates.lock().unwrap().trace.clone()
}

/// Every record, in order.
fn records(registry: &Registry) -> Shared<Vec<(String, CodeDispatchRecord)>> {
    let seen: Shared<Vec<(String, CodeDispatchRecord)>> = Arc::default();
    let s = Arc::clone(&seen);
    registry
        .on_code_dispatch(move |agent: &AgentId, record: &CodeDispatchRecord| {
            s.lock()
                .unwrap()
                .push((agent.as_str().to_owned(), record.clone()));
        })
        .keep();
    seen
}

fn ids(records: &Shared<Vec<(String, CodeDispatchRecord)>>, kind: CodeDispatchKind) -> Vec<String> {
    records
        .lock()
        .unwrap()
        .iter()
        .filter(|(_, r)| r.kind == kind)
        .map(|(_, r)| r.sub_call_id.clone())
        .collect()
}

fn input(code: &str, agent: Option<&str>, signal: CancellationToken) -> ToolExecutionInput {
    let args = json!({"code": code, "description": "Run the test program"});
    let input = ToolExecutionInput::new("call-1", "run_code", args, signal);
    match agent {
        Some(a) => input.agent(a),
        None => input,
    }
}

async fn run(registry: &Registry, agent: Option<&str>) -> ToolExecutionResult {
    registry
        .execute(input("program", agent, CancellationToken::new()))
        .await
}

fn wire(registry: &Registry, agent: Option<&str>) -> Vec<String> {
    let agent = agent.map(AgentId::new);
    registry
        .wire_tools(agent.as_ref())
        .iter()
        .map(|t| t.name().to_owned())
        .collect()
}

fn sdk(registry: &Registry, agent: Option<&str>) -> String {
    let agent = agent.map(AgentId::new);
    registry
        .code_prompt_sections(agent.as_ref())
        .unwrap()
        .into_iter()
        .find(|s| s.id == "tools:sdk")
        .map(|s| s.text)
        .unwrap_or_default()
}

fn noop_runtime(registry: &Registry) {
    script(registry, |_| async { FakeOutcome::Return(None) });
}

/// The binding names the runtime received, sorted and joined with `,`.
fn names_script(registry: &Registry) {
    registry.set_code_runtime(FakeRuntime::new(|request, _run| async move {
        let mut names: Vec<String> = request.bindings[0]
            .functions
            .iter()
            .map(|(n, _)| n.clone())
            .collect();
        names.sort();
        FakeOutcome::Return(Some(json!(names.join(","))))
    }));
}

// ---------------------------------------------------------------- A. Presentation and assembly

#[test]
fn cm001_native_mode_needs_no_runtime() {
    let registry = registry(PresentationMode::Native);
    echo(&registry, "echo");
    assert_eq!(wire(&registry, None), ["echo"]);
    assert_eq!(registry.code_prompt_sections(None).unwrap(), []);
}

#[test]
fn cm002_code_mode_collapses_the_wire() {
    let registry = registry(PresentationMode::Code);
    echo(&registry, "echo");
    noop_runtime(&registry);
    assert_eq!(wire(&registry, None), ["run_code"]);
    let text = sdk(&registry, None);
    assert!(text.contains("declare const tools: {"), "{text}");
    assert!(text.contains("  echo: {"), "{text}");
    assert!(!text.contains("run_code:"), "{text}");
}

#[test]
fn cm003_the_collapse_statement_precedes_tool_guidance() {
    let registry = registry(PresentationMode::Code);
    echo(&registry, "echo");
    noop_runtime(&registry);
    let sections = registry.code_prompt_sections(None).unwrap();
    let order: Vec<(&str, u32)> = sections.iter().map(|s| (s.id, s.order)).collect();
    // `tools:overlap` is ours (issue 39.5): after the spec's two, in the tool-guidance band.
    assert_eq!(
        order,
        [
            ("tools:code-only", 99),
            ("tools:sdk", 150),
            ("tools:overlap", 152)
        ]
    );
    assert!(sections[0].order < 100, "before the per-tool guidance band");
    assert_eq!(
        sections[0].text,
        "`run_code` is the only tool you can call directly — a tool call naming any other tool fails. Reach every tool the SDK declares below from inside the program."
    );
    let prompt = registry.code_prompt(None).unwrap();
    assert_eq!(
        prompt,
        format!(
            "{}\n\n{}\n\n{}",
            sections[0].text, sections[1].text, sections[2].text
        )
    );
}

#[tokio::test]
async fn cm005_run_code_is_never_bound_even_under_both() {
    let registry = registry(PresentationMode::Both);
    echo(&registry, "echo");
    registry.set_code_runtime(FakeRuntime::new(|request, run| async move {
        let ns = &request.bindings[0];
        assert_eq!(ns.global, "tools");
        let class = ns.error_class.clone().unwrap();
        assert_eq!(
            (class.name.as_str(), class.member_name_property.as_str()),
            ("ToolCallError", "toolName")
        );
        let names: Vec<&str> = ns.functions.iter().map(|(n, _)| n.as_str()).collect();
        let run_code = run.call("tools", "run_code", json!({})).await;
        FakeOutcome::Return(Some(json!({"names": names, "runCode": run_code.err()})))
    }));
    let result = run(&registry, None).await;
    assert!(!result.is_error(), "{}", result.text());
    assert_eq!(
        result.value().unwrap()["result"],
        json!({"names": ["echo"], "runCode": "tools.run_code is not a tool; tools has echo"})
    );
}

#[tokio::test]
async fn cm006_restrictions_shape_bindings_not_the_transport_allow() {
    for mode in [PresentationMode::Code, PresentationMode::Both] {
        let registry = registry(mode);
        echo(&registry, "echo");
        echo(&registry, "secret");
        names_script(&registry);
        let scope = registry.scope("A");
        let restriction = scope.restrict(Restriction::allow(["echo"])).unwrap();
        let expected: &[&str] = if mode == PresentationMode::Code {
            &["run_code"]
        } else {
            &["echo", "run_code"]
        };
        assert_eq!(wire(&registry, Some("A")), expected);
        let text = sdk(&registry, Some("A"));
        assert!(
            text.contains("  echo: {") && !text.contains("secret:"),
            "{text}"
        );
        assert_eq!(run(&registry, Some("A")).await.text(), "echo");
        restriction.dispose();
        if mode == PresentationMode::Both {
            assert_eq!(wire(&registry, Some("A")), ["echo", "secret", "run_code"]);
        }
    }
}

#[tokio::test]
async fn cm007_restrictions_deny() {
    let registry = registry(PresentationMode::Code);
    echo(&registry, "denied");
    echo(&registry, "kept");
    names_script(&registry);
    registry
        .scope("A")
        .restrict(Restriction::deny(["denied"]))
        .unwrap()
        .keep();
    let text = sdk(&registry, Some("A"));
    assert!(
        text.contains("  kept: {") && !text.contains("denied:"),
        "{text}"
    );
    assert_eq!(run(&registry, Some("A")).await.text(), "kept");
}

#[test]
fn cm009_sdk_text_is_stable() {
    let one = registry(PresentationMode::Code);
    echo(&one, "echo");
    echo(&one, "alpha");
    noop_runtime(&one);
    let other = registry(PresentationMode::Code);
    echo(&other, "alpha");
    echo(&other, "echo");
    noop_runtime(&other);
    assert_eq!(sdk(&one, None), sdk(&one, None));
    assert_eq!(sdk(&one, None), sdk(&other, None));
}

#[test]
fn cm010_missing_runtime_fails_assembly() {
    let registry = registry(PresentationMode::Code);
    echo(&registry, "echo");
    let error = registry.code_prompt_sections(None).unwrap_err().to_string();
    assert!(
        error.starts_with("dsh-tools: mode \"code\" requires a code runtime"),
        "{error}"
    );
    assert_eq!(registry.code_prompt(None).unwrap_err().to_string(), error);
    assert_eq!(registry.schemas(None).unwrap_err().to_string(), error);
}

#[test]
fn cm012_without_a_runtime_the_definition_has_the_typescript_flavor() {
    let registry = registry(PresentationMode::Code);
    let tool = registry
        .get("run_code", None)
        .expect("presented under code");
    assert_eq!(tool.definition().description(), RUN_CODE_DESCRIPTION);
    assert_eq!(tool.definition().parameters(), &run_code_parameters());
}

#[test]
fn cm013_the_wire_schema_of_run_code() {
    let registry = registry(PresentationMode::Code);
    echo(&registry, "echo");
    noop_runtime(&registry);
    let schemas = registry.schemas(None).unwrap();
    let wire: Vec<&str> = schemas.iter().map(|s| s.name.as_str()).collect();
    assert!(wire.contains(&"run_code"));
    let schema = schemas.iter().find(|s| s.name == "run_code").unwrap();
    assert_eq!(
        serde_json::to_value(schema).unwrap(),
        json!({"name": "run_code", "description": RUN_CODE_DESCRIPTION, "parameters": run_code_parameters()})
    );
}

#[tokio::test]
async fn cm014_a_model_direct_native_call_under_code_is_unknown() {
    let registry = registry(PresentationMode::Code);
    let seen = echo(&registry, "write");
    noop_runtime(&registry);
    let call = |name: &str| {
        ToolExecutionInput::new(
            "call-1",
            name,
            json!({"value": "hello"}),
            CancellationToken::new(),
        )
    };
    let result = registry.execute(call("write")).await;
    let message = "unknown tool \"write\": only `run_code` is callable directly — call `write` from inside a `run_code` program instead";
    assert_eq!(result.code(), Some("UNKNOWN_TOOL"));
    assert_eq!(result.error().unwrap().message(), message);
    assert_eq!(result.text(), format!("Error: {message}"));
    assert!(seen.lock().unwrap().is_empty());
    let nope = registry.execute(call("nope")).await;
    assert_eq!(nope.error().unwrap().message(), "unknown tool \"nope\"");
    assert_eq!(
        registry.execution_mode("write", &json!({}), None, None),
        dsh_tools::schedule::ExecutionMode::Exclusive
    );
}

#[tokio::test]
async fn cm016_per_agent_code_mode_under_a_native_deployment() {
    let registry = registry(PresentationMode::Native);
    let seen = echo(&registry, "echo");
    noop_runtime(&registry);
    registry
        .scope("A")
        .present_as(PresentationMode::Code)
        .unwrap();
    assert_eq!(wire(&registry, Some("A")), ["run_code"]);
    assert!(sdk(&registry, Some("A")).contains("  echo: {"));
    let direct =
        ToolExecutionInput::new("c", "echo", json!({"value": "x"}), CancellationToken::new());
    assert_eq!(
        registry.execute(direct.agent("A")).await.code(),
        Some("UNKNOWN_TOOL")
    );
    assert!(seen.lock().unwrap().is_empty(), "the body never ran");
    assert_eq!(wire(&registry, None), ["echo"]);
    assert!(registry.code_prompt_sections(None).unwrap().is_empty());
    let direct =
        ToolExecutionInput::new("c", "echo", json!({"value": "x"}), CancellationToken::new());
    assert!(!registry.execute(direct).await.is_error());
}

#[test]
fn cm018_opting_out_of_a_code_deployment() {
    let registry = registry(PresentationMode::Code);
    echo(&registry, "echo");
    noop_runtime(&registry);
    registry
        .scope("A")
        .present_as(PresentationMode::Native)
        .unwrap();
    assert_eq!(wire(&registry, Some("A")), ["echo"]);
    assert_eq!(sdk(&registry, Some("A")), "");
    assert!(registry.get("run_code", Some(&AgentId::new("A"))).is_none());
}

// ---------------------------------------------------------------- B. The run_code tool

fn counting_runtime(registry: &Registry) -> Shared<usize> {
    let calls: Shared<usize> = Arc::default();
    let c = Arc::clone(&calls);
    script(registry, move |_| {
        *c.lock().unwrap() += 1;
        async { FakeOutcome::Return(Some(json!(1))) }
    });
    calls
}

#[tokio::test]
async fn cm020_a_missing_description_is_invalid_args() {
    let registry = registry(PresentationMode::Code);
    let calls = counting_runtime(&registry);
    let args = json!({"code": "return 1"});
    let result = registry
        .execute(ToolExecutionInput::new(
            "call-1",
            "run_code",
            args,
            CancellationToken::new(),
        ))
        .await;
    assert_eq!(result.code(), Some("INVALID_ARGS"));
    assert_eq!(
        result.text(),
        "Error: invalid arguments: missing required property \"description\""
    );
    assert_eq!(*calls.lock().unwrap(), 0);
}

#[tokio::test]
async fn cm021_a_blank_description_is_refused() {
    let registry = registry(PresentationMode::Code);
    let calls = counting_runtime(&registry);
    let args = json!({"code": "return 1", "description": "   "});
    let result = registry
        .execute(ToolExecutionInput::new(
            "call-1",
            "run_code",
            args,
            CancellationToken::new(),
        ))
        .await;
    assert_eq!(
        result.text(),
        "Error: invalid description: expected a non-empty string"
    );
    assert_eq!(result.code(), None);
    assert_eq!(*calls.lock().unwrap(), 0);
}

#[tokio::test]
async fn cm023_a_missing_runtime_at_execution_is_a_failure_without_info() {
    let registry = registry(PresentationMode::Code);
    let result = run(&registry, None).await;
    assert!(result.is_error());
    assert_eq!(result.code(), None);
    assert!(
        result
            .text()
            .starts_with("Error: dsh-tools: mode \"code\" requires a code runtime"),
        "{}",
        result.text()
    );
}

#[tokio::test]
async fn cm025_canonical_value_and_text() {
    let registry = registry(PresentationMode::Code);
    let seen = echo(&registry, "echo");
    script(&registry, |run| async move {
        let first = run
            .call("tools", "echo", json!({"value": "one"}))
            .await
            .unwrap();
        let second = run
            .call("tools", "echo", json!({"value": "two"}))
            .await
            .unwrap();
        run.log(format!("saw {}", first.as_str().unwrap()));
        FakeOutcome::Return(Some(second))
    });
    let result = run(&registry, Some("main")).await;
    assert_eq!(
        result.value(),
        Some(&json!({"logs": ["saw echo:one"], "result": "echo:two"}))
    );
    assert_eq!(result.text(), "saw echo:one\necho:two");
    assert_eq!(result.meta(), None);
    assert_eq!(
        *seen.lock().unwrap(),
        [json!({"value": "one"}), json!({"value": "two"})]
    );
}

#[tokio::test]
async fn cm026_absent_and_null_results() {
    let registry = registry(PresentationMode::Code);
    script(&registry, |_| async { FakeOutcome::Return(None) });
    let absent = run(&registry, None).await;
    assert_eq!(absent.value(), Some(&json!({"logs": []})));
    assert_eq!(absent.text(), "(run_code completed with no output)");
    script(&registry, |_| async {
        FakeOutcome::Return(Some(Value::Null))
    });
    let null = run(&registry, None).await;
    assert_eq!(null.value(), Some(&json!({"logs": [], "result": null})));
    assert_eq!(null.text(), "null");
}

#[tokio::test]
async fn cm027_failure_text_and_code() {
    let registry = registry(PresentationMode::Code);
    script(&registry, |run| async move {
        run.log("got this far");
        FakeOutcome::Fail(
            FailureKind::Timeout,
            "compute budget exhausted (300ms busy)".into(),
        )
    });
    let result = run(&registry, None).await;
    assert!(result.is_error());
    assert_eq!(result.code(), Some("CODE_RUN_FAILED"));
    assert_eq!(
        result.error().unwrap().info().unwrap().name,
        "CodeRunFailedError"
    );
    assert_eq!(
        result.text(),
        "Error: code run failed (timeout): compute budget exhausted (300ms busy)\nCaptured output:\ngot this far"
    );
}

#[test]
fn cm030_the_call_card() {
    let registry = registry(PresentationMode::Code);
    let tool = registry.get("run_code", None).unwrap();
    let present = tool.definition().call_presenter().unwrap();
    let card = present(&json!({"code": "return 1", "description": "Return the constant one"}))
        .expect("a card");
    assert_eq!(
        serde_json::to_value(&card).unwrap(),
        json!({"card": "generic", "title": "Return the constant one", "kind": "execute", "rawInput": "return 1"})
    );
    assert!(present(&json!({"code": "return 1"})).is_none());
    assert!(tool.definition().result_presenter().is_none());
}

#[tokio::test]
async fn cm031_a_post_execute_content_replacement_stays() {
    let registry = registry(PresentationMode::Code);
    script(&registry, |run| async move {
        run.log("printed");
        FakeOutcome::Return(Some(json!("returned")))
    });
    let preview = "HEAD\n\n(Omitted 100 bytes.)\n\nTAIL";
    registry
        .on_post_execute(move |exec: Arc<ToolExecution>, _result, next| async move {
            if exec.name() == "run_code" {
                return Ok(PostToolDecision::replace_content(vec![ContentBlock::text(
                    preview,
                )]));
            }
            next.run().await
        })
        .keep();
    let result = run(&registry, None).await;
    assert_eq!(result.text(), preview);
}

// ---------------------------------------------------------------- C. The bridge

/// A program's calls are made on its outer call's behalf: scope guards see that caller, so a
/// program cannot reach a tool its caller's token does not cover.
#[tokio::test]
async fn sub_calls_carry_the_outer_caller_through_scope_guards() {
    use dsh_tools::pipeline::{Caller, ScopeRules};
    let registry = registry(PresentationMode::Code);
    echo(&registry, "read");
    let written = echo(&registry, "write");
    registry
        .guard(ScopeRules::new().tool("write", ["notes:write"]).guard())
        .keep();
    script(&registry, |run| async move {
        let read = run.call("tools", "read", json!({"value": "a"})).await;
        let write = run.call("tools", "write", json!({"value": "b"})).await;
        FakeOutcome::Return(Some(json!([format!("{read:?}"), format!("{write:?}")])))
    });
    let as_reader = input("program", None, CancellationToken::new())
        .caller(Caller::new("alice").scopes(["notes:read"]));
    let result = registry.execute(as_reader).await;
    assert_eq!(
        result.value().map(|v| &v["result"]),
        Some(&json!([
            "Ok(String(\"read:a\"))",
            "Err(\"tool \\\"write\\\" needs the scope \\\"notes:write\\\" that the caller's token was not granted\")"
        ])),
        "{}",
        result.text()
    );
    assert!(
        written.lock().unwrap().is_empty(),
        "the guarded body never ran"
    );
    let as_writer = input("program", None, CancellationToken::new())
        .caller(Caller::new("bob").scopes(["notes:write"]));
    registry.execute(as_writer).await;
    assert_eq!(*written.lock().unwrap(), [json!({"value": "b"})]);
}

#[tokio::test]
async fn cm040_the_request_shape() {
    let registry = registry(PresentationMode::Code);
    echo(&registry, "zeta");
    echo(&registry, "alpha");
    registry.set_code_runtime(FakeRuntime::new(|request, _| async move {
        let ns = &request.bindings;
        FakeOutcome::Return(Some(json!({
            "namespaces": ns.len(),
            "global": ns[0].global,
            "names": ns[0].functions.iter().map(|(n, _)| n.clone()).collect::<Vec<_>>(),
            "program": request.program,
            "signal": request.signal.is_some(),
        })))
    }));
    let args = json!({"code": "the program text", "description": "d"});
    let result = registry
        .execute(ToolExecutionInput::new(
            "call-1",
            "run_code",
            args,
            CancellationToken::new(),
        ))
        .await;
    assert_eq!(
        result.value().unwrap()["result"],
        json!({"namespaces": 1, "global": "tools", "names": ["zeta", "alpha"],
               "program": "the program text", "signal": true})
    );
}

fn two_echoes(registry: &Registry) {
    script(registry, |run| async move {
        let first = run
            .call("tools", "echo", json!({"value": "one"}))
            .await
            .unwrap();
        let second = run
            .call("tools", "echo", json!({"value": "two"}))
            .await
            .unwrap();
        run.log(format!("saw {}", first.as_str().unwrap()));
        FakeOutcome::Return(Some(second))
    });
}

#[tokio::test]
async fn cm043_records() {
    let registry = registry(PresentationMode::Code);
    echo(&registry, "echo");
    two_echoes(&registry);
    let seen = records(&registry);
    let result = run(&registry, Some("main")).await;
    assert!(!result.is_error());
    let seen = seen.lock().unwrap();
    let rows: Vec<(String, &str, Value)> = seen
        .iter()
        .map(|(agent, r)| {
            (
                agent.clone(),
                r.kind.record_type(),
                serde_json::to_value(r).unwrap(),
            )
        })
        .collect();
    let data = |n: u32, v: &str| {
        json!({"rootCallId": "call-1", "parentCallId": "call-1", "subCallId": format!("call-1:code:{n}"),
               "name": "echo", "arguments": {"value": v}})
    };
    let settle = |n: u32, v: &str| {
        let mut d = data(n, v);
        d["isError"] = json!(false);
        d["content"] = json!([{"type": "text", "text": format!("echo:{v}")}]);
        d
    };
    assert_eq!(
        rows,
        [
            ("main".into(), "tool/code-dispatch-start", data(1, "one")),
            ("main".into(), "tool/code-dispatch", settle(1, "one")),
            ("main".into(), "tool/code-dispatch-start", data(2, "two")),
            ("main".into(), "tool/code-dispatch", settle(2, "two")),
        ]
    );
}

#[tokio::test]
async fn cm044_no_agent_no_records() {
    let registry = registry(PresentationMode::Code);
    let seen = echo(&registry, "echo");
    script(&registry, |run| async move {
        FakeOutcome::Return(run.call("tools", "echo", json!({"value": "x"})).await.ok())
    });
    let recorded = records(&registry);
    let result = run(&registry, None).await;
    assert_eq!(result.text(), "echo:x");
    assert_eq!(*seen.lock().unwrap(), [json!({"value": "x"})]);
    assert!(recorded.lock().unwrap().is_empty());
}

/// A script that calls `tools.<name>(args)` and returns `<prefix><message>` of its rejection.
fn catching(registry: &Registry, name: &'static str, args: Value, prefix: &'static str) {
    script(registry, move |run| {
        let args = args.clone();
        async move {
            match run.call("tools", name, args).await {
                Ok(v) => FakeOutcome::Return(Some(v)),
                Err(message) => FakeOutcome::Return(Some(json!(format!("{prefix}{message}")))),
            }
        }
    });
}

#[tokio::test]
async fn cm045_a_tool_failure_reaches_the_program_as_its_message() {
    let registry = registry(PresentationMode::Code);
    let fail = ToolDefinition::new(
        "fail",
        "fails",
        json!({"type": "object"}),
        OutputDecl::text(),
        |_, _| async { Err(dsh_tools::ToolError::new("deliberate failure")) },
    );
    registry.register(fail).unwrap().keep();
    catching(&registry, "fail", json!({}), "caught: ");
    assert_eq!(
        run(&registry, None).await.text(),
        "caught: deliberate failure"
    );
}

#[tokio::test]
async fn cm046_a_pre_execute_deny_reaches_the_program() {
    let registry = registry(PresentationMode::Code);
    let seen = echo(&registry, "echo");
    registry
        .on_pre_execute(|exec: Arc<ToolExecution>, next| async move {
            if exec.name() == "echo" {
                return Ok(PreToolDecision::deny("not on my watch"));
            }
            next.run().await
        })
        .keep();
    catching(&registry, "echo", json!({"value": "x"}), "denied: ");
    assert_eq!(run(&registry, None).await.text(), "denied: not on my watch");
    assert!(seen.lock().unwrap().is_empty());
}

#[tokio::test]
async fn cm048_a_tool_unregistered_mid_run_is_unknown() {
    let registry = registry(PresentationMode::Code);
    let ran: Shared<bool> = Arc::default();
    let r = Arc::clone(&ran);
    let ephemeral = ToolDefinition::new(
        "ephemeral",
        "e",
        json!({"type": "object"}),
        OutputDecl::text(),
        move |_, _| {
            *r.lock().unwrap() = true;
            async { Ok(json!("ran")) }
        },
    );
    let handle: Shared<Option<dsh_tools::registry::Registration>> =
        Arc::new(Mutex::new(Some(registry.register(ephemeral).unwrap())));
    let h = Arc::clone(&handle);
    script(&registry, move |run| {
        let h = Arc::clone(&h);
        async move {
            if let Some(registration) = h.lock().unwrap().take() {
                registration.dispose();
            }
            let message = run.call("tools", "ephemeral", json!({})).await.unwrap_err();
            FakeOutcome::Return(Some(json!(message)))
        }
    });
    let result = run(&registry, None).await;
    assert_eq!(
        result.value().unwrap()["result"],
        json!("unknown tool \"ephemeral\"")
    );
    assert!(!*ran.lock().unwrap());
}

#[tokio::test]
async fn cm049_schema_invalid_arguments_are_dispatched() {
    let registry = registry(PresentationMode::Code);
    #[derive(serde::Deserialize, schemars::JsonSchema)]
    struct EchoArgs {
        value: String,
    }
    let echo_at = ToolDefinition::typed("echo", "Echo.", |args: EchoArgs, ctx| async move {
        Ok::<_, dsh_tools::ToolError>(format!("{}@{}", args.value, ctx.execution().call_id()))
    })
    .unwrap();
    registry.register(echo_at).unwrap().keep();
    script(&registry, |run| async move {
        for args in [json!("str"), json!({})] {
            if let Err(message) = run.call("tools", "echo", args).await {
                run.log(message);
            }
        }
        FakeOutcome::Return(run.call("tools", "echo", json!({"value": "ok"})).await.ok())
    });
    let recorded = records(&registry);
    let result = run(&registry, Some("main")).await;
    assert_eq!(
        result.value(),
        Some(&json!({"logs": [
            "invalid arguments: \"arguments\" must be an object",
            "invalid arguments: missing required property \"value\""
        ], "result": "ok@call-1:code:3"}))
    );
    let recorded = recorded.lock().unwrap();
    let failed: Vec<(&str, Option<bool>, String)> = recorded
        .iter()
        .filter(|(_, r)| r.kind == CodeDispatchKind::Settle)
        .map(|(_, r)| {
            let text = r.content.as_ref().unwrap()[0]
                .as_text()
                .unwrap_or("")
                .to_owned();
            (r.sub_call_id.as_str(), r.is_error, text)
        })
        .collect();
    assert_eq!(failed[0].0, "call-1:code:1");
    assert_eq!(failed[0].1, Some(true));
    assert!(
        failed[0].2.starts_with("Error: invalid arguments: "),
        "{}",
        failed[0].2
    );
    assert_eq!((failed[1].0, failed[1].1), ("call-1:code:2", Some(true)));
    assert_eq!((failed[2].0, failed[2].1), ("call-1:code:3", Some(false)));
}

#[tokio::test]
async fn cm050_non_lossless_arguments_are_refused_at_the_bridge() {
    let registry = registry(PresentationMode::Code);
    let seen = echo(&registry, "echo");
    registry.set_code_runtime(FakeRuntime::new(|request, _| async move {
        // Call the host function directly: a runtime that skipped its own check.
        let host = Arc::clone(&request.bindings[0].functions[0].1);
        let mut messages = Vec::new();
        for bad in [json!({"value": -0.0}), json!([-0.0])] {
            messages.push(host(bad).await.unwrap_err());
        }
        FakeOutcome::Return(Some(json!(messages)))
    }));
    let recorded = records(&registry);
    let result = run(&registry, Some("main")).await;
    let message =
        "tool arguments must be lossless JSON (call the tool with an arguments object, e.g. `{}`)";
    assert_eq!(result.value().unwrap()["result"], json!([message, message]));
    assert!(seen.lock().unwrap().is_empty());
    assert!(recorded.lock().unwrap().is_empty());
}

#[tokio::test]
async fn cm052_the_recorded_copy_is_independent_of_the_dispatched_one() {
    let registry = registry(PresentationMode::Code);
    let mutator = ToolDefinition::new(
        "mutator",
        "m",
        json!({"type": "object", "properties": {"list": {"type": "array"}}, "required": ["list"]}),
        OutputDecl::text(),
        |args: Arc<Value>, _| async move {
            let mut owned = (*args).clone();
            owned["list"][1] = json!("mutated");
            Ok(json!("done"))
        },
    );
    registry.register(mutator).unwrap().keep();
    catching(&registry, "mutator", json!({"list": ["original"]}), "");
    let recorded = records(&registry);
    run(&registry, Some("main")).await;
    let recorded = recorded.lock().unwrap();
    let settle = &recorded
        .iter()
        .find(|(_, r)| r.kind == CodeDispatchKind::Settle)
        .unwrap()
        .1;
    assert_eq!(settle.arguments, json!({"list": ["original"]}));
}

#[tokio::test]
async fn cm054_a_tool_named_proto_is_an_ordinary_binding() {
    let registry = registry(PresentationMode::Code);
    for name in ["__proto__", "constructor"] {
        let tool = ToolDefinition::new(
            name,
            "p",
            json!({"type": "object"}),
            OutputDecl::text(),
            move |_, _| async move { Ok(json!(format!("{name}-tool-ok"))) },
        );
        registry.register(tool).unwrap().keep();
    }
    script(&registry, |run| async move {
        let a = run.call("tools", "__proto__", json!({})).await.unwrap();
        let b = run.call("tools", "constructor", json!({})).await.unwrap();
        FakeOutcome::Return(Some(json!([a, b])))
    });
    assert_eq!(
        run(&registry, None).await.value().unwrap()["result"],
        json!(["__proto__-tool-ok", "constructor-tool-ok"])
    );
}

fn context_for(exec: &ToolExecution) -> UserMessage {
    UserMessage::new(
        format!("ctx-{}", exec.call_id()),
        vec![ContentBlock::text(format!(
            "context for {}",
            exec.call_id()
        ))],
        json!({"kind": "plugin", "plugin": "test"}),
    )
}

#[tokio::test]
async fn cm055_additional_contexts_in_order() {
    let registry = registry(PresentationMode::Code);
    echo(&registry, "echo");
    two_echoes(&registry);
    registry
        .on_post_execute(|exec: Arc<ToolExecution>, _result, next| async move {
            if exec.name() == "echo" {
                return Ok(PostToolDecision::accept().with_contexts([context_for(&exec)]));
            }
            next.run().await
        })
        .keep();
    let result = run(&registry, None).await;
    let contexts = result.additional_contexts().unwrap();
    let texts: Vec<&str> = contexts
        .iter()
        .map(|m| m.content[0].as_text().unwrap())
        .collect();
    assert_eq!(
        texts,
        ["context for call-1:code:1", "context for call-1:code:2"]
    );
    assert!(
        contexts
            .iter()
            .all(|m| m.source == json!({"kind": "plugin", "plugin": "test"}))
    );
}

fn image_tool(registry: &Registry) {
    let tool = ToolDefinition::new(
        "image_result",
        "an image",
        json!({"type": "object"}),
        OutputDecl::new(json!({"type": "string"}), |_, _| {
            vec![ContentBlock::image("AA==", "image/png").unwrap()]
        }),
        |_, _| async { Ok(json!("img")) },
    );
    registry.register(tool).unwrap().keep();
    catching(registry, "image_result", json!({}), "");
}

#[tokio::test]
async fn cm056_a_successful_image_is_handed_to_the_outer_call() {
    let registry = registry(PresentationMode::Code);
    image_tool(&registry);
    let result = run(&registry, None).await;
    assert!(!result.is_error(), "{}", result.text());
    let contexts = result.additional_contexts().expect("the image message");
    assert_eq!(contexts.len(), 1);
    assert_eq!(contexts[0].content.len(), 1);
    assert_eq!(contexts[0].content[0].kind(), "image");
    assert_eq!(
        contexts[0].source,
        json!({"kind": "plugin", "plugin": "tools-code-mode"})
    );
}

#[tokio::test]
async fn cm057_images_removed_by_policy_are_not_deferred() {
    for replace in [false, true] {
        let registry = registry(PresentationMode::Code);
        image_tool(&registry);
        registry
            .on_post_execute(move |exec: Arc<ToolExecution>, _result, next| async move {
                if exec.name() != "image_result" {
                    return next.run().await;
                }
                Ok(if replace {
                    PostToolDecision::replace_content(vec![ContentBlock::text("replaced")])
                } else {
                    PostToolDecision::block(vec![ContentBlock::text("blocked")])
                })
            })
            .keep();
        let result = run(&registry, None).await;
        assert!(result.additional_contexts().is_none(), "replace: {replace}");
    }
}

#[tokio::test]
async fn cm059_record_content_is_complete() {
    let registry = registry(PresentationMode::Code);
    let long = "x".repeat(300);
    let l = long.clone();
    let mixed = ToolDefinition::new(
        "mixed",
        "m",
        json!({"type": "object"}),
        OutputDecl::new(json!({"type": "string"}), move |_, _| {
            vec![
                ContentBlock::text(l.clone()),
                serde_json::from_value(json!({"type": "reasoning", "text": "internal"})).unwrap(),
            ]
        }),
        |_, _| async { Ok(json!("mixed-value")) },
    );
    registry.register(mixed).unwrap().keep();
    catching(&registry, "mixed", json!({}), "");
    let recorded = records(&registry);
    let result = run(&registry, Some("main")).await;
    assert_eq!(result.text(), "mixed-value");
    let recorded = recorded.lock().unwrap();
    let settle = &recorded
        .iter()
        .find(|(_, r)| r.kind == CodeDispatchKind::Settle)
        .unwrap()
        .1;
    assert_eq!(
        serde_json::to_value(settle.content.as_ref().unwrap()).unwrap(),
        json!([{"type": "text", "text": long}, {"type": "reasoning", "text": "internal"}])
    );
}

#[tokio::test]
async fn cm061_the_parent_token_is_opaque() {
    let registry = registry(PresentationMode::Code);
    echo(&registry, "echo");
    catching(&registry, "echo", json!({"value": "v"}), "");
    registry
        .on_execute(
            |call: dsh_tools::ExecuteCall, next: dsh_tools::ExecuteNext| async move {
                if call.execution.name() == "run_code" {
                    let swapped = CancellationToken::new();
                    return next.run_with_signal(swapped).await;
                }
                next.run().await
            },
        )
        .keep();
    let parents: Shared<Vec<(String, bool)>> = Arc::default();
    let p = Arc::clone(&parents);
    registry
        .on_result(move |exec: &ToolExecution, result: &ToolExecutionResult| {
            assert!(result.meta().is_none());
            p.lock()
                .unwrap()
                .push((exec.call_id().to_owned(), exec.parent().is_some()));
            Ok(())
        })
        .keep();
    let result = run(&registry, None).await;
    assert_eq!(result.text(), "echo:v");
    assert_eq!(
        *parents.lock().unwrap(),
        [
            ("call-1:code:1".to_owned(), true),
            ("call-1".to_owned(), false)
        ]
    );
}

// ---------------------------------------------------------------- D. The scheduler

/// Submits `calls` (`(tool, id)`) at once, each as its own task; returns their handles.
fn submit_all(
    run: &FakeRun,
    calls: &[(&'static str, &'static str)],
) -> Vec<tokio::task::JoinHandle<Result<Value, String>>> {
    calls
        .iter()
        .map(|&(tool, id)| {
            let run = run.clone();
            tokio::spawn(async move { run.call("tools", tool, json!({"id": id})).await })
        })
        .collect()
}

async fn joined(handles: Vec<tokio::task::JoinHandle<Result<Value, String>>>) -> Vec<String> {
    let mut out = Vec::new();
    for h in handles {
        out.push(match h.await.unwrap() {
            Ok(v) => v.as_str().unwrap_or("").to_owned(),
            Err(e) => format!("error: {e}"),
        });
    }
    out
}

#[tokio::test]
async fn cm070_safe_calls_overlap() {
    let registry = registry(PresentationMode::Code);
    let gates: Shared<Gates> = Arc::default();
    gated(&registry, "safe_read", true, &gates);
    let g = Arc::clone(&gates);
    script(&registry, move |run| {
        let g = Arc::clone(&g);
        async move {
            let handles = submit_all(
                &run,
                &[("safe_read", "a"), ("safe_read", "b"), ("safe_read", "c")],
            );
            until(|| pending(&g) == 3).await;
            g.lock().unwrap().all = true;
            FakeOutcome::Return(Some(json!(joined(handles).await.join(","))))
        }
    });
    let recorded = records(&registry);
    let result = run(&registry, Some("main")).await;
    assert_eq!(result.text(), "safe_read:a,safe_read:b,safe_read:c");
    assert_eq!(gates.lock().unwrap().peak, 3);
    let expected = ["call-1:code:1", "call-1:code:2", "call-1:code:3"];
    assert_eq!(ids(&recorded, CodeDispatchKind::Start), expected);
    assert_eq!(ids(&recorded, CodeDispatchKind::Settle), expected);
}

#[tokio::test]
async fn cm072_post_execute_and_contexts_in_submission_order() {
    let registry = registry(PresentationMode::Code);
    let gates: Shared<Gates> = Arc::default();
    gated(&registry, "safe_read", true, &gates);
    let g = Arc::clone(&gates);
    registry
        .on_post_execute(move |exec: Arc<ToolExecution>, _result, next| {
            let g = Arc::clone(&g);
            async move {
                if exec.name() != "safe_read" {
                    return next.run().await;
                }
                g.lock()
                    .unwrap()
                    .trace
                    .push(format!("post:{}", exec.call_id()));
                let context = UserMessage::new(
                    "c",
                    vec![ContentBlock::text(format!("ctx:{}", exec.call_id()))],
                    json!({"kind": "plugin", "plugin": "test"}),
                );
                Ok(PostToolDecision::accept().with_contexts([context]))
            }
        })
        .keep();
    let g = Arc::clone(&gates);
    script(&registry, move |run| {
        let g = Arc::clone(&g);
        async move {
            let handles = submit_all(&run, &[("safe_read", "a"), ("safe_read", "b")]);
            until(|| pending(&g) == 2).await;
            release(&g, "b");
            until(|| trace(&g).contains(&"end:b".to_owned())).await;
            g.lock().unwrap().trace.push("released-b".into());
            tokio::time::sleep(Duration::from_millis(30)).await;
            release(&g, "a");
            FakeOutcome::Return(Some(json!(joined(handles).await.join(","))))
        }
    });
    let result = run(&registry, None).await;
    assert_eq!(
        trace(&gates),
        [
            "start:a",
            "start:b",
            "end:b",
            "released-b",
            "end:a",
            "post:call-1:code:1",
            "post:call-1:code:2"
        ]
    );
    let texts: Vec<&str> = result
        .additional_contexts()
        .unwrap()
        .iter()
        .map(|m| m.content[0].as_text().unwrap())
        .collect();
    assert_eq!(texts, ["ctx:call-1:code:1", "ctx:call-1:code:2"]);
}

#[tokio::test]
async fn cm073_exclusive_calls_serialize() {
    let registry = registry(PresentationMode::Code);
    let active: Shared<(usize, Vec<String>)> = Arc::default();
    let a = Arc::clone(&active);
    let probe = ToolDefinition::new(
        "probe",
        "p",
        json!({"type": "object"}),
        OutputDecl::json(json!({"type": "string"})),
        move |args: Arc<Value>, _| {
            let a = Arc::clone(&a);
            async move {
                let id = args["id"].as_str().unwrap_or("").to_owned();
                {
                    let mut a = a.lock().unwrap();
                    assert_eq!(a.0, 0, "another probe body is active");
                    a.0 += 1;
                    a.1.push(format!("enter {id}"));
                }
                tokio::time::sleep(Duration::from_millis(20)).await;
                let mut a = a.lock().unwrap();
                a.0 -= 1;
                a.1.push(format!("exit {id}"));
                Ok(json!(id))
            }
        },
    );
    registry.register(probe).unwrap().keep();
    script(&registry, |run| async move {
        let handles = submit_all(&run, &[("probe", "a"), ("probe", "b"), ("probe", "c")]);
        FakeOutcome::Return(Some(json!(joined(handles).await.join(","))))
    });
    let result = run(&registry, None).await;
    assert_eq!(result.text(), "a,b,c");
    assert_eq!(
        active.lock().unwrap().1,
        [
            "enter a", "exit a", "enter b", "exit b", "enter c", "exit c"
        ]
    );
}

#[tokio::test]
async fn cm074_an_exclusive_call_is_a_barrier() {
    let registry = registry(PresentationMode::Code);
    let gates: Shared<Gates> = Arc::default();
    gated(&registry, "safe_read", true, &gates);
    gated(&registry, "writer", false, &gates);
    let g = Arc::clone(&gates);
    script(&registry, move |run| {
        let g = Arc::clone(&g);
        async move {
            let handles = submit_all(
                &run,
                &[
                    ("safe_read", "r1"),
                    ("safe_read", "r2"),
                    ("writer", "w"),
                    ("safe_read", "r3"),
                ],
            );
            until(|| pending(&g) == 2).await;
            tokio::time::sleep(Duration::from_millis(20)).await;
            assert_eq!(trace(&g), ["start:r1", "start:r2"], "the writer waits");
            release(&g, "r1");
            release(&g, "r2");
            until(|| trace(&g).contains(&"start:w".to_owned())).await;
            tokio::time::sleep(Duration::from_millis(20)).await;
            assert!(
                !trace(&g).contains(&"start:r3".to_owned()),
                "r3 waits for the writer"
            );
            assert_eq!(pending(&g), 1, "the writer runs alone");
            release(&g, "w");
            until(|| trace(&g).contains(&"start:r3".to_owned())).await;
            release(&g, "r3");
            FakeOutcome::Return(Some(json!(joined(handles).await.join(","))))
        }
    });
    let result = run(&registry, None).await;
    assert_eq!(
        result.text(),
        "safe_read:r1,safe_read:r2,writer:w,safe_read:r3"
    );
    let t = trace(&gates);
    let at = |s: &str| t.iter().position(|x| x == s).unwrap();
    assert!(at("end:w") < at("start:r3") && at("end:r1") < at("start:w"));
}

#[tokio::test]
async fn cm077_max_parallel_sub_calls_caps_the_pool() {
    let registry = registry(PresentationMode::Code);
    registry.set_max_parallel_sub_calls(2).unwrap();
    let gates: Shared<Gates> = Arc::default();
    gated(&registry, "safe_read", true, &gates);
    let g = Arc::clone(&gates);
    script(&registry, move |run| {
        let g = Arc::clone(&g);
        async move {
            let handles = submit_all(
                &run,
                &[("safe_read", "a"), ("safe_read", "b"), ("safe_read", "c")],
            );
            until(|| pending(&g) == 2).await;
            tokio::time::sleep(Duration::from_millis(20)).await;
            assert_eq!(pending(&g), 2);
            release(&g, "a");
            until(|| trace(&g).contains(&"start:c".to_owned())).await;
            assert_eq!(pending(&g), 2);
            g.lock().unwrap().all = true;
            FakeOutcome::Return(Some(json!(joined(handles).await.join(","))))
        }
    });
    let result = run(&registry, None).await;
    assert!(!result.is_error(), "{}", result.text());
    assert_eq!(gates.lock().unwrap().peak, 2);
}

#[test]
fn cm078_max_parallel_sub_calls_is_validated() {
    let registry = Registry::new();
    assert_eq!(registry.max_parallel_sub_calls(), 10);
    assert_eq!(
        registry
            .set_max_parallel_sub_calls(0)
            .unwrap_err()
            .to_string(),
        "maxParallelSubCalls must be a positive integer"
    );
    for ok in [1, 10, 100] {
        registry.set_max_parallel_sub_calls(ok).unwrap();
        assert_eq!(registry.max_parallel_sub_calls(), ok);
    }
}

// ---------------------------------------------------------------- E. Settlement and cancellation

#[tokio::test]
async fn cm090_queued_calls_are_abandoned_at_settlement() {
    let registry = registry(PresentationMode::Code);
    let gates: Shared<Gates> = Arc::default();
    gated(&registry, "writer", false, &gates);
    let messages: Shared<Vec<tokio::task::JoinHandle<Result<Value, String>>>> = Arc::default();
    let (g, m) = (Arc::clone(&gates), Arc::clone(&messages));
    script(&registry, move |run| {
        let (g, m) = (Arc::clone(&g), Arc::clone(&m));
        async move {
            let handles = submit_all(&run, &[("writer", "w1"), ("writer", "w2")]);
            m.lock().unwrap().extend(handles);
            until(|| pending(&g) == 1).await;
            FakeOutcome::Throw("program failed with a queued call".into())
        }
    });
    let recorded = records(&registry);
    let result = run(&registry, Some("main")).await;
    assert_eq!(
        result.text(),
        "Error: code run failed (exception): program failed with a queued call"
    );
    assert_eq!(ids(&recorded, CodeDispatchKind::Start), ["call-1:code:1"]);
    assert_eq!(ids(&recorded, CodeDispatchKind::Settle), ["call-1:code:1"]);
    let handles = std::mem::take(&mut *messages.lock().unwrap());
    let answers = joined(handles).await;
    assert_eq!(
        answers[1],
        "error: run_code run is over (run_code settled); writer tool call abandoned"
    );
    assert_eq!(
        answers[0],
        "error: run_code run is over (run_code settled); writer result discarded"
    );
}

#[tokio::test]
async fn cm094_an_outer_abort_mid_run() {
    let registry = registry(PresentationMode::Code);
    let saw: Shared<Vec<String>> = Arc::default();
    let s = Arc::clone(&saw);
    let slow = ToolDefinition::new(
        "slow",
        "s",
        json!({"type": "object", "properties": {"id": {"type": "string"}}, "required": ["id"]}),
        OutputDecl::text(),
        move |args: Arc<Value>, ctx| {
            let s = Arc::clone(&s);
            async move {
                let id = args["id"].as_str().unwrap_or("").to_owned();
                s.lock().unwrap().push(id.clone());
                tokio::select! {
                    () = tokio::time::sleep(Duration::from_millis(500)) => {}
                    () = ctx.signal().cancelled() => s.lock().unwrap().push("sawAbort".into()),
                }
                Ok(json!(id))
            }
        },
    );
    registry.register(slow).unwrap().keep();
    let outer = CancellationToken::new();
    let messages: Shared<Vec<tokio::task::JoinHandle<Result<Value, String>>>> = Arc::default();
    let (m, o) = (Arc::clone(&messages), outer.clone());
    script(&registry, move |run| {
        let (m, o) = (Arc::clone(&m), o.clone());
        async move {
            let handles = submit_all(&run, &[("slow", "first"), ("slow", "second")]);
            m.lock().unwrap().extend(handles);
            tokio::time::sleep(Duration::from_millis(50)).await;
            o.cancel();
            // The runtime stops the program at the signal; this is never reached.
            tokio::time::sleep(Duration::from_secs(10)).await;
            FakeOutcome::Return(None)
        }
    });
    let result = registry.execute(input("program", None, outer)).await;
    assert_eq!(result.code(), Some("CODE_RUN_FAILED"));
    assert_eq!(
        result.text(),
        "Error: code run failed (abort): AbortError: This operation was aborted"
    );
    assert_eq!(*saw.lock().unwrap(), ["first", "sawAbort"]);
    let handles = std::mem::take(&mut *messages.lock().unwrap());
    assert_eq!(
        joined(handles).await,
        [
            "error: run_code run is over (AbortError: This operation was aborted); slow result discarded",
            "error: run_code run is over (AbortError: This operation was aborted); slow tool call abandoned",
        ]
    );
}

#[tokio::test]
async fn cm096_a_pre_aborted_outer_call_never_reaches_the_runtime() {
    let registry = registry(PresentationMode::Code);
    let seen = echo(&registry, "echo");
    let calls = counting_runtime(&registry);
    let signal = CancellationToken::new();
    signal.cancel();
    let result = registry.execute(input("program", None, signal)).await;
    assert_eq!(result.text(), "Error: tool call aborted before dispatch");
    assert_eq!(result.code(), Some("ABORTED_BEFORE_DISPATCH"));
    assert_eq!(result.error().unwrap().info().unwrap().name, "AbortError");
    assert_eq!(*calls.lock().unwrap(), 0);
    assert!(seen.lock().unwrap().is_empty());
}

#[tokio::test]
async fn a_program_that_does_not_await_still_has_every_started_call_committed() {
    // Spec §4.5.3: calls a program fired and forgot are drained before the outer result.
    let registry = registry(PresentationMode::Code);
    let gates: Shared<Gates> = Arc::default();
    gated(&registry, "safe_read", true, &gates);
    let g = Arc::clone(&gates);
    script(&registry, move |run| {
        let g = Arc::clone(&g);
        async move {
            drop(submit_all(&run, &[("safe_read", "a"), ("safe_read", "b")]));
            until(|| pending(&g) == 2).await;
            g.lock().unwrap().all = true;
            FakeOutcome::Return(Some(json!("left early")))
        }
    });
    let recorded = records(&registry);
    let result = run(&registry, Some("main")).await;
    assert_eq!(result.text(), "left early");
    assert_eq!(
        ids(&recorded, CodeDispatchKind::Settle),
        ["call-1:code:1", "call-1:code:2"]
    );
}

#[tokio::test]
async fn a_sub_call_that_concludes_the_turn_concludes_the_outer_call() {
    let registry = registry(PresentationMode::Code);
    let done = ToolDefinition::new(
        "finish",
        "f",
        json!({"type": "object"}),
        OutputDecl::text(),
        |_, ctx| async move {
            ctx.conclude_turn();
            Ok(json!("finished"))
        },
    );
    registry.register(done).unwrap().keep();
    catching(&registry, "finish", json!({}), "");
    let result = run(&registry, None).await;
    assert_eq!(result.text(), "finished");
    assert!(result.concludes_turn());
}

/// A runtime whose language has no `run_code` flavor.
struct RubyRuntime;

impl dsh_tools::code::CodeRuntime for RubyRuntime {
    fn language(&self) -> &str {
        "ruby"
    }
    fn isolation(&self) -> &str {
        "none (test double)"
    }
    fn run(
        &self,
        _request: dsh_tools::code::CodeRequest,
    ) -> dsh_tools::pipeline::BoxFuture<
        Result<dsh_tools::code::CodeResult, dsh_tools::code::SeamError>,
    > {
        Box::pin(async { Err(dsh_tools::code::SeamError::backend("test", "never run")) })
    }
}

#[test]
fn projecting_run_code_for_a_language_without_a_flavor_fails() {
    // Spec §2.2.3: the schema is projected by the runtime's language, read at projection.
    let registry = registry(PresentationMode::Code);
    echo(&registry, "echo");
    registry.set_code_runtime(RubyRuntime);
    let error = registry.schemas(None).unwrap_err().to_string();
    assert_eq!(
        error,
        "dsh-tools: no run_code schema flavor registered for runtime language \"ruby\" (known: \"typescript\")"
    );
    // Native scopes project no run_code: nothing to flavor.
    let native = registry.scope("n");
    native.present_as(PresentationMode::Native).unwrap();
    assert!(registry.schemas(Some(&AgentId::new("n"))).is_ok());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_queued_call_is_classified_when_it_may_start() {
    // Spec §4.4.2: "classify it *now*". `reader` is parallel while the flag is down and
    // exclusive once `flip` (exclusive) raised it. Queued behind `flip`, it must start as
    // exclusive, so `other` (always parallel) cannot overlap it.
    use std::sync::atomic::{AtomicBool, Ordering};
    let registry = registry(PresentationMode::Code);
    let flag = Arc::new(AtomicBool::new(false));
    let other_started = Arc::new(AtomicBool::new(false));
    let f = Arc::clone(&flag);
    registry
        .register(ToolDefinition::new(
            "flip",
            "raises the flag",
            json!({"type": "object"}),
            OutputDecl::text(),
            move |_, _| {
                let f = Arc::clone(&f);
                async move {
                    tokio::time::sleep(Duration::from_millis(20)).await;
                    f.store(true, Ordering::SeqCst);
                    Ok(json!("flipped"))
                }
            },
        ))
        .unwrap()
        .keep();
    let (f, seen) = (Arc::clone(&flag), Arc::clone(&other_started));
    registry
        .register(
            ToolDefinition::new(
                "reader",
                "reads",
                json!({"type": "object"}),
                OutputDecl::text(),
                move |_, _| {
                    let seen = Arc::clone(&seen);
                    async move {
                        for _ in 0..30 {
                            if seen.load(Ordering::SeqCst) {
                                return Ok(json!("overlapped"));
                            }
                            tokio::time::sleep(Duration::from_millis(10)).await;
                        }
                        Ok(json!("alone"))
                    }
                },
            )
            .concurrency_safe(move |_| !f.load(Ordering::SeqCst)),
        )
        .unwrap()
        .keep();
    let started = Arc::clone(&other_started);
    registry
        .register(
            ToolDefinition::new(
                "other",
                "marks its start",
                json!({"type": "object"}),
                OutputDecl::text(),
                move |_, _| {
                    started.store(true, Ordering::SeqCst);
                    async { Ok(json!("other")) }
                },
            )
            .concurrency_safe(|_| true),
        )
        .unwrap()
        .keep();
    script(&registry, |run| async move {
        let (a, b, c) = tokio::join!(
            run.call("tools", "flip", json!({})),
            run.call("tools", "reader", json!({})),
            run.call("tools", "other", json!({})),
        );
        FakeOutcome::Return(Some(json!([a.unwrap(), b.unwrap(), c.unwrap()])))
    });
    let result = run(&registry, None).await;
    assert!(!result.is_error(), "{}", result.text());
    assert_eq!(
        result.value().unwrap()["result"],
        json!(["flipped", "alone", "other"])
    );
}

/// A runtime that makes one binding call, holds its future once it is ready without taking the
/// value (the program has not received it), reports what was recorded by then, then takes it.
struct HoldingRuntime {
    before: Shared<Vec<String>>,
    records: Shared<Vec<(String, CodeDispatchRecord)>>,
}

impl dsh_tools::code::CodeRuntime for HoldingRuntime {
    fn language(&self) -> &str {
        "typescript"
    }
    fn isolation(&self) -> &str {
        "none (test double)"
    }
    fn run(
        &self,
        request: dsh_tools::code::CodeRequest,
    ) -> dsh_tools::pipeline::BoxFuture<
        Result<dsh_tools::code::CodeResult, dsh_tools::code::SeamError>,
    > {
        let (before, records) = (Arc::clone(&self.before), Arc::clone(&self.records));
        Box::pin(async move {
            let host = Arc::clone(&request.bindings[0].functions[0].1);
            let mut call = host(json!({"value": "v"}));
            // Ready, but the value not yet taken: the lane committed; the program has nothing.
            let mut polled = None;
            for _ in 0..200 {
                if let std::task::Poll::Ready(out) = poll_once(&mut call) {
                    polled = Some(out);
                    break;
                }
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
            // The value is in hand only now; the future (the runtime's hold on the call) goes
            // next: until then, nothing may be recorded as settled.
            tokio::time::sleep(Duration::from_millis(50)).await;
            let settled_early = ids(&records, CodeDispatchKind::Settle);
            before.lock().unwrap().extend(settled_early);
            drop(call);
            let value = polled
                .expect("the call settled")
                .map_err(|message| dsh_tools::code::SeamError::backend("test", message))?;
            Ok(dsh_tools::code::CodeResult {
                logs: Vec::new(),
                value: Some(value),
                error: None,
            })
        })
    }
}

/// Polls `fut` once with a no-op waker (the caller polls again on its own schedule).
fn poll_once<T>(fut: &mut dsh_tools::pipeline::BoxFuture<T>) -> std::task::Poll<T> {
    let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
    fut.as_mut().poll(&mut cx)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_settle_record_waits_until_the_program_has_the_value() {
    // Spec §4.8.1 / §4.10.1: "the program receives the value → tool/code-dispatch".
    let registry = registry(PresentationMode::Code);
    echo(&registry, "echo");
    let records = records(&registry);
    let before: Shared<Vec<String>> = Arc::default();
    registry.set_code_runtime(HoldingRuntime {
        before: Arc::clone(&before),
        records: Arc::clone(&records),
    });
    let result = run(&registry, Some("a")).await;
    assert!(!result.is_error(), "{}", result.text());
    assert!(
        before.lock().unwrap().is_empty(),
        "settle records written before the program had its value: {:?}",
        before.lock().unwrap()
    );
    assert_eq!(
        ids(&records, CodeDispatchKind::Settle).len(),
        1,
        "written after it"
    );
}

/// A runtime that keeps its binding call's future past the end of its run.
struct LeakingRuntime(Shared<Vec<dsh_tools::pipeline::BoxFuture<Result<Value, String>>>>);

impl dsh_tools::code::CodeRuntime for LeakingRuntime {
    fn language(&self) -> &str {
        "typescript"
    }
    fn isolation(&self) -> &str {
        "none (test double)"
    }
    fn run(
        &self,
        request: dsh_tools::code::CodeRequest,
    ) -> dsh_tools::pipeline::BoxFuture<
        Result<dsh_tools::code::CodeResult, dsh_tools::code::SeamError>,
    > {
        let kept = Arc::clone(&self.0);
        Box::pin(async move {
            let host = Arc::clone(&request.bindings[0].functions[0].1);
            let mut call = host(json!({"value": "v"}));
            let mut done = false;
            for _ in 0..200 {
                if poll_once(&mut call).is_ready() {
                    done = true;
                    break;
                }
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
            assert!(done, "the call settled");
            kept.lock().unwrap().push(call);
            Ok(dsh_tools::code::CodeResult {
                logs: Vec::new(),
                value: None,
                error: None,
            })
        })
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_binding_future_kept_past_the_run_does_not_hold_the_outer_result() {
    let registry = registry(PresentationMode::Code);
    echo(&registry, "echo");
    let records = records(&registry);
    let kept: Shared<Vec<_>> = Arc::default();
    registry.set_code_runtime(LeakingRuntime(Arc::clone(&kept)));
    let result = tokio::time::timeout(Duration::from_secs(30), run(&registry, Some("a")))
        .await
        .expect("the outer result does not wait for a leaked future");
    assert!(!result.is_error(), "{}", result.text());
    assert_eq!(
        ids(&records, CodeDispatchKind::Settle).len(),
        1,
        "written at the drain"
    );
    assert_eq!(kept.lock().unwrap().len(), 1);
}

/// Issue 39.5: the instructions say read-only calls MAY overlap; the `tools:overlap` section
/// says which of the declared tools' calls can (those with a concurrency classifier), so the
/// prompt promises nothing the scheduler does not do. Registration order does not matter.
#[test]
fn the_prompt_names_the_tools_whose_calls_overlap() {
    let registry = registry(PresentationMode::Code);
    noop_runtime(&registry);
    echo(&registry, "write");
    let safe = |name: &str| {
        ToolDefinition::new(
            name,
            "Reads.",
            json!({"type": "object"}),
            OutputDecl::json(json!({})),
            |_, _| async { Ok(json!(null)) },
        )
        .concurrency_safe(|_| true)
    };
    registry.register(safe("stat")).unwrap();
    registry.register(safe("read")).unwrap();
    let overlap = |registry: &Registry| {
        registry
            .code_prompt_sections(None)
            .unwrap()
            .into_iter()
            .find(|s| s.id == "tools:overlap")
            .map(|s| s.text)
    };
    assert_eq!(
        overlap(&registry).unwrap(),
        "Every tool above may overlap under `Promise.all` but these, whose calls run alone, in submission order: `write`."
    );
    echo(&registry, "append");
    echo(&registry, "delete");
    assert_eq!(
        overlap(&registry).unwrap(),
        "Of the tools above, only these may overlap under `Promise.all`: `read`, `stat`. Every other call runs alone, in submission order."
    );
    let alone = registry_with(&["b", "a"]);
    assert_eq!(
        overlap(&alone).unwrap(),
        "No tool above overlaps: every call runs alone, in submission order, also under `Promise.all`."
    );
}

fn registry_with(names: &[&str]) -> Registry {
    let registry = registry(PresentationMode::Code);
    noop_runtime(&registry);
    for name in names {
        echo(&registry, name);
    }
    registry
}

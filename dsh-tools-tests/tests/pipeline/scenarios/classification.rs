//! K. Concurrency classification (spec §7.1): `Registry::execution_mode`.

use super::support::*;
use dsh_tools::schedule::ExecutionMode::{Exclusive, Parallel};
use dsh_tools::schema::dsl::compile_parameter_spec;
use dsh_tools::schema::{CompiledSchema, Root};
use dsh_tools::*;
use serde_json::{Value, json};

fn mode(registry: &Registry, name: &str, args: Value) -> dsh_tools::schedule::ExecutionMode {
    registry.execution_mode(name, &args, None, None)
}

#[test]
fn scenario_114_classifier_true_is_parallel() {
    let registry = Registry::new();
    keep(&registry, raw("t").concurrency_safe(|_| true));
    assert_eq!(mode(&registry, "t", json!({})), Parallel);
}

#[test]
fn scenario_115_no_classifier_is_exclusive() {
    let registry = Registry::new();
    keep(&registry, raw("t"));
    assert_eq!(mode(&registry, "t", json!({})), Exclusive);
}

#[tokio::test]
async fn scenario_116_unknown_tool_is_exclusive() {
    let registry = Registry::new();
    assert_eq!(mode(&registry, "nope", json!({})), Exclusive);
    // Hidden and collapsed tools resolve like execution does: exclusive.
    keep(&registry, raw("t").concurrency_safe(|_| true));
    let a = registry.scope("A");
    a.restrict(Restriction::deny(["t"])).unwrap().keep();
    let agent = AgentId::new("A");
    assert_eq!(
        registry.execution_mode("t", &json!({}), Some(&agent), None),
        Exclusive
    );
    let code = registry.scope("C");
    code.present_as(PresentationMode::Code).unwrap();
    let c = AgentId::new("C");
    assert_eq!(
        registry.execution_mode("t", &json!({}), Some(&c), None),
        Exclusive
    );
    // … unless the call is nested (it has a parent), as execution would.
    let parent = Seen::new();
    let p = parent.clone();
    registry
        .on_result(move |e: &ToolExecution, _r: &ToolExecutionResult| {
            p.put(e.token());
            Ok(())
        })
        .keep();
    exec(&registry, call("t", json!({}))).await;
    assert_eq!(
        registry.execution_mode("t", &json!({}), Some(&c), Some(parent.only())),
        Parallel
    );
}

#[test]
fn scenario_117_classifier_reads_the_arguments() {
    let registry = Registry::new();
    keep(
        &registry,
        define_tool(
            "io",
            "reads or writes",
            json!({"mode": {"type": "string", "required": true}}),
            OutputDecl::text(),
            |_, _| async { Ok(json!("")) },
        )
        .concurrency_safe(|args| args["mode"] == "read"),
    );
    assert_eq!(mode(&registry, "io", json!({"mode": "read"})), Parallel);
    assert_eq!(mode(&registry, "io", json!({"mode": "write"})), Exclusive);
}

#[test]
fn scenario_118_define_tool_classifier_soft_validates() {
    // defineTool's classifier wrapper answers `false` for invalid arguments (spec §1.4.4).
    let spec = json!({"mode": {"type": "string", "required": true}});
    let schema = CompiledSchema::compile(&compile_parameter_spec(&spec).unwrap()).unwrap();
    let registry = Registry::new();
    keep(
        &registry,
        define_tool("io", "classified", spec, OutputDecl::text(), |_, _| async {
            Ok(json!(""))
        })
        .concurrency_safe(move |args| schema.validate_at(args, Root::Parameters).is_empty()),
    );
    assert_eq!(mode(&registry, "io", json!({})), Exclusive);
    assert_eq!(mode(&registry, "io", json!({"mode": "read"})), Parallel);
}

#[test]
fn scenario_119_panicking_classifier_is_exclusive() {
    let registry = Registry::new();
    keep(
        &registry,
        raw("t").concurrency_safe(|_| panic!("classifier exploded")),
    );
    assert_eq!(mode(&registry, "t", json!({})), Exclusive);
}

#[test]
fn scenario_121_classifier_gets_the_raw_arguments() {
    let registry = Registry::new();
    let seen = Seen::new();
    let s = seen.clone();
    keep(
        &registry,
        raw("t").concurrency_safe(move |args| {
            s.put(args.clone());
            true
        }),
    );
    assert_eq!(mode(&registry, "t", json!({"anything": 1})), Parallel);
    // Not a lossless snapshot: even arguments execution would reject reach the classifier.
    let raw_args = json!({"n": negative_zero()});
    assert_eq!(mode(&registry, "t", raw_args.clone()), Parallel);
    let seen = seen.all();
    assert_eq!(seen[0], json!({"anything": 1}));
    assert!(seen[1]["n"].as_f64().unwrap().is_sign_negative());
}

#[test]
fn scenario_122_schemas_never_contain_the_classifier() {
    let registry = Registry::new();
    keep(&registry, raw("t").concurrency_safe(|_| true));
    let projected = serde_json::to_value(registry.schemas(None).unwrap()).unwrap();
    assert_eq!(
        projected,
        json!([{"name": "t", "description": "raw t",
                "parameters": {"type": "object", "properties": {}}}])
    );
}

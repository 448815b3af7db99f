//! A. Registration and `schemas()` (spec §4, §5.5).

use super::support::*;
use dsh_tools::json::drop_deep;
use dsh_tools::registry::RegistrationError;
use dsh_tools::*;
use serde_json::{Map, Value, json};
use std::sync::Arc;
use std::time::Duration;

fn schemas_json(registry: &Registry, agent: Option<&AgentId>) -> Value {
    serde_json::to_value(registry.schemas(agent).expect("projects")).unwrap()
}

fn names(registry: &Registry, agent: Option<&AgentId>) -> Vec<String> {
    registry
        .schemas(agent)
        .expect("projects")
        .into_iter()
        .map(|s| s.name)
        .collect()
}

const RESERVED: &str = "tool name \"run_code\" is reserved for the Code Mode presentation \
                        transport and cannot be registered or shadowed";

#[test]
fn scenario_001_register_and_project() {
    let registry = Registry::new();
    keep(&registry, echo());
    assert_eq!(
        schemas_json(&registry, None),
        json!([{
            "name": "echo",
            "description": "echo arguments back",
            "parameters": {"type": "object", "properties": {"text": {"type": "string"}}}
        }])
    );
}

#[test]
fn scenario_002_allow_list_projection() {
    let registry = Registry::new();
    let full = fixture("full", |_, _| async { Ok(json!([])) })
        .finalize_content(|_, _| None)
        .present_call(Arc::new(|_: &Value| None))
        .present_result(Arc::new(|_: &Value, _: &_| None))
        .timeout(Duration::from_millis(5000))
        .concurrency_safe(|_| true);
    keep(&registry, full);
    keep(&registry, echo());
    let projected = schemas_json(&registry, None);
    for entry in projected.as_array().unwrap() {
        let keys: Vec<&String> = entry.as_object().unwrap().keys().collect();
        assert_eq!(keys, ["name", "description", "parameters"]);
    }
    assert_eq!(
        projected[0],
        json!({"name": "full", "description": "fixture full", "parameters": {"type": "object"}})
    );
}

#[test]
fn scenario_003_detached_snapshot() {
    let registry = Registry::new();
    keep(&registry, echo());
    let mut first = registry.schemas(None).unwrap();
    first[0].parameters["properties"]["text"] = json!({"type": "number"});
    first[0].parameters["properties"]["extra"] = json!({});
    first[0].description = "mutated".to_owned();
    assert_eq!(
        schemas_json(&registry, None),
        json!([{
            "name": "echo",
            "description": "echo arguments back",
            "parameters": {"type": "object", "properties": {"text": {"type": "string"}}}
        }])
    );
    // The registry keeps the definition itself (spec §4.2.5), untouched too.
    let stored = registry.get("echo", None).unwrap();
    assert_eq!(
        stored.parameters()["properties"],
        json!({"text": {"type": "string"}})
    );
}

/// `{oneOf: [<prev>, {type:'null'}]}` wrapped `depth` times around `{type:'string'}`.
fn one_of_chain(depth: usize) -> Value {
    let mut cur = json!({"type": "string"});
    for _ in 0..depth {
        let mut map = Map::new();
        map.insert(
            "oneOf".to_owned(),
            Value::Array(vec![cur, json!({"type": "null"})]),
        );
        cur = Value::Object(map);
    }
    cur
}

/// The number of `oneOf` layers above the leaf, and the leaf (iteratively).
fn one_of_layers(mut value: &Value) -> (usize, &Value) {
    let mut layers = 0;
    while let Some(branches) = value.get("oneOf") {
        assert_eq!(branches[1], json!({"type": "null"}));
        value = &branches[0];
        layers += 1;
    }
    (layers, value)
}

#[test]
fn scenario_004_deep_parameters() {
    const DEPTH: usize = 5000;
    let run = || {
        let registry = Registry::new();
        let mut parameters = json!({"type": "object", "properties": {}});
        parameters["properties"]["nested"] = one_of_chain(DEPTH);
        let tool = ToolDefinition::new(
            "deep",
            "deep parameters",
            parameters,
            OutputDecl::text(),
            |_, _| async { Ok(json!("")) },
        );
        registry.register(tool).unwrap().keep();
        let mut projected = registry.schemas(None).expect("projects");
        let parameters = std::mem::take(&mut projected[0].parameters);
        assert_eq!(parameters["type"], "object");
        let (layers, leaf) = one_of_layers(&parameters["properties"]["nested"]);
        assert_eq!(layers, DEPTH);
        assert_eq!(leaf, &json!({"type": "string"}));
        drop_deep(parameters);
        // The registry (and its copy of the parameters) is dropped here, on an ordinary
        // 2 MiB stack: it must not recurse once per level either.
    };
    let registry = Registry::new();
    keep(&registry, echo());
    let bad = ToolDefinition::new(
        "bad-params",
        "not lossless",
        json!({"type": "object", "properties": {"n": {"type": "number", "default": -0.0}}}),
        OutputDecl::text(),
        |_, _| async { Ok(json!("")) },
    );
    keep(&registry, bad);
    assert_eq!(
        registry.schemas(None).unwrap_err().to_string(),
        "tool \"bad-params\" parameters must be lossless JSON before schema projection"
    );
    std::thread::Builder::new()
        .stack_size(2 << 20)
        .spawn(run)
        .unwrap()
        .join()
        .unwrap();
}

#[test]
fn scenario_007_timeout_validation() {
    let registry = Registry::new();
    let err = registry
        .register(raw("zero-timeout").timeout(Duration::ZERO))
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "tool \"zero-timeout\" timeoutMs must be a positive finite number"
    );
    assert!(matches!(err, RegistrationError::Timeout { .. }));
    // Fractions are accepted.
    keep(
        &registry,
        raw("half-ms").timeout(Duration::from_micros(500)),
    );
    assert_eq!(
        registry.get("half-ms", None).unwrap().timeout_duration(),
        Some(Duration::from_micros(500))
    );
    // Declared and undeclared timeouts read back as such.
    keep(&registry, raw("slow").timeout(Duration::from_millis(30000)));
    assert_eq!(
        registry.get("slow", None).unwrap().timeout_duration(),
        Some(Duration::from_millis(30000))
    );
    keep(&registry, raw("plain"));
    assert_eq!(
        registry.get("plain", None).unwrap().timeout_duration(),
        None
    );
    assert_eq!(names(&registry, None), ["half-ms", "slow", "plain"]);
}

#[test]
fn scenario_008_check_order_at_registration() {
    let registry = Registry::new();
    let run_code = |schema: Value, timeout: Duration| {
        ToolDefinition::new(
            "run_code",
            "reserved",
            json!({"type": "object"}),
            OutputDecl::json(schema),
            |_, _| async { Ok(json!("")) },
        )
        .timeout(timeout)
    };
    let err = registry
        .register(run_code(json!({"type": "weird"}), Duration::ZERO))
        .unwrap_err();
    assert!(
        err.to_string()
            .starts_with("unsupported JSON schema: schema.type must be one of "),
        "{err}"
    );
    let err = registry
        .register(run_code(json!({"type": "string"}), Duration::ZERO))
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "tool \"run_code\" timeoutMs must be a positive finite number"
    );
    let err = registry
        .register(run_code(json!({"type": "string"}), Duration::from_secs(1)))
        .unwrap_err();
    assert_eq!(err.to_string(), RESERVED);
    assert!(names(&registry, None).is_empty());
}

#[test]
fn scenario_009_duplicates_and_disposal() {
    let registry = Registry::new();
    keep(&registry, echo());
    let err = registry.register(echo()).unwrap_err();
    assert_eq!(
        err.to_string(),
        // The spec's text names TypeScript's `agent.ctx`; ours names what a Rust author writes
        // (issue 22 item 10: a deliberate difference; the prefix is the spec's).
        "tool \"echo\" is already registered (for a per-agent variant, register it in that \
         agent's scope: `registry.scope(agent).register(..)`; for a second instance, give it \
         another name: `.named(\"...\")`)"
    );
    // Dropping the disposer keeps the tool (as the spec's ignored disposer does); a scoped
    // handle undoes it when dropped.
    let plugin = registry.register(raw("scoped")).unwrap().scoped();
    assert_eq!(names(&registry, None), ["echo", "scoped"]);
    drop(plugin);
    assert_eq!(names(&registry, None), ["echo"]);
    let ignored = registry.register(raw("kept")).unwrap();
    drop(ignored);
    assert_eq!(names(&registry, None), ["echo", "kept"]);
    let disposer = registry.register(raw("scoped")).unwrap();
    assert_eq!(names(&registry, None), ["echo", "kept", "scoped"]);
    disposer.dispose();
    assert_eq!(names(&registry, None), ["echo", "kept"]);
    // The name is free again after disposal.
    keep(&registry, raw("scoped"));
    assert_eq!(names(&registry, None), ["echo", "kept", "scoped"]);
    // Scoped duplicates.
    let a = registry.scope("A");
    a.register(raw("y")).unwrap().keep();
    let err = a.register(raw("y")).unwrap_err();
    assert_eq!(
        err.to_string(),
        "tool \"y\" is already registered in this scope"
    );
    // A scoped registration of a global name is shadowing, not a duplicate.
    a.register(raw_reply("echo", "scoped echo")).unwrap().keep();
}

#[test]
fn scenario_011_reserved_transport() {
    for mode in [
        PresentationMode::Native,
        PresentationMode::Code,
        PresentationMode::Both,
    ] {
        let registry = Registry::new();
        registry.set_presentation_mode(mode);
        keep(&registry, raw("read"));
        let err = registry.register(raw("run_code")).unwrap_err();
        assert_eq!(err.to_string(), RESERVED, "{mode:?}");
        let a = registry.scope("A");
        let err = a.register(raw("run_code")).unwrap_err();
        assert_eq!(err.to_string(), RESERVED, "{mode:?}");
        let reserved = "tools.restrict() cannot name reserved Code Mode presentation transport \
                        \"run_code\"; restrict end-capability tools instead";
        let err = a.restrict(Restriction::allow(["run_code"])).unwrap_err();
        assert_eq!(err.to_string(), reserved);
        let err = a.restrict(Restriction::deny(["run_code"])).unwrap_err();
        assert_eq!(err.to_string(), reserved);
    }
}

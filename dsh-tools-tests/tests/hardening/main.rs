//! Model- and remote-controlled JSON at every public entry outside the schema core: 100,000
//! levels of nesting on a 2 MiB stack (a tokio worker's), and panics whose payloads panic again.
//! A stack overflow aborts the whole test binary, so a regression shows as a crash here.

use dsh_tools::json::drop_deep;
use dsh_tools::{
    CancellationToken, OutputDecl, Registry, ToolDefinition, ToolError, ToolExecutionInput,
    ToolExecutionResult,
};
use serde_json::{Value, json};

mod outputs;
mod small_stack;
#[path = "../common/stack.rs"]
mod stack;
#[cfg(all(unix, feature = "workspace"))]
mod workspace;
use stack::{deep_array, on_worker_stack};

const DEPTH: usize = 100_000;

/// `{key: value}` (`json!` would serialize `value` recursively).
fn object(key: &str, value: Value) -> Value {
    let mut map = serde_json::Map::new();
    map.insert(key.to_owned(), value);
    Value::Object(map)
}

fn input(name: &str, arguments: Value) -> ToolExecutionInput {
    ToolExecutionInput::new("c1", name, arguments, CancellationToken::new())
}

/// A panic payload whose own `Drop` panics.
struct Grenade;

impl Drop for Grenade {
    fn drop(&mut self) {
        panic!("the payload's drop panics too");
    }
}

#[test]
fn a_panic_payload_whose_drop_panics_stays_inside_execute() {
    on_worker_stack(|| async {
        let registry = Registry::new();
        let tool = ToolDefinition::new(
            "grenade",
            "panics with a payload that panics when dropped",
            json!({"type": "object"}),
            OutputDecl::text(),
            |_, _| async { std::panic::panic_any(Grenade) },
        );
        registry.register(tool).unwrap().keep();
        let result = registry.execute(input("grenade", json!({}))).await;
        assert!(result.is_error());
        assert_eq!(result.text(), "Error: <unprintable thrown value>");
    });
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Anything {
    value: Value,
}

#[test]
fn a_typed_tool_with_a_value_field_survives_deep_arguments() {
    on_worker_stack(|| async {
        let registry = Registry::new();
        let tool = ToolDefinition::typed("any", "takes any JSON", |a: Anything, _| async move {
            // The author's own value: freed without recursion, as the docs ask.
            drop_deep(a.value);
            Ok::<_, ToolError>("ok")
        })
        .unwrap();
        registry.register(tool).unwrap().keep();
        let result = registry
            .execute(input("any", object("value", deep_array(DEPTH))))
            .await;
        assert!(result.is_error(), "{}", result.text());
        assert_eq!(result.code(), Some("INVALID_ARGS"));
        assert!(result.text().contains("deeper than"), "{}", result.text());
        // Within the limit it decodes.
        let ok = registry
            .execute(input("any", object("value", deep_array(100))))
            .await;
        assert_eq!(ok.text(), "ok");
    });
}

#[test]
fn present_call_and_present_result_survive_deep_arguments() {
    on_worker_stack(|| async {
        let registry = Registry::new();
        let tool = ToolDefinition::new(
            "raw",
            "no presenter",
            json!({"type": "object"}),
            OutputDecl::text(),
            |_, _| async { Ok(json!("ok")) },
        );
        registry.register(tool).unwrap().keep();
        let args = object("deep", deep_array(DEPTH));
        let view = registry.present_call("raw", &args, None);
        // The generic card's raw input is cut off: it serializes with serde's recursion.
        let text = serde_json::to_string(&view).unwrap();
        assert!(text.contains("…"), "{}", &text[..200.min(text.len())]);
        drop(view);
        drop_deep(args);
    });
}

#[test]
fn a_tool_returning_deep_json_builds_copies_and_drops_its_result() {
    on_worker_stack(|| async {
        let registry = Registry::new();
        let tool = ToolDefinition::new(
            "deep",
            "returns deep JSON",
            json!({"type": "object"}),
            OutputDecl::json(json!({})),
            |_, _| async { Ok(deep_array(50_000)) },
        );
        registry.register(tool).unwrap().keep();
        let result = registry.execute(input("deep", json!({}))).await;
        assert!(!result.is_error(), "{}", result.text());
        assert_eq!(result.value().map(|v| v.is_array()), Some(true));
        // A wrapper's copies: shared value, deep meta and contexts copied without recursion.
        let copy: ToolExecutionResult = result.clone();
        let note = dsh_tools::UserMessage::new("m1", Vec::new(), deep_array(DEPTH));
        let edited = copy
            .with_meta(Some(deep_array(DEPTH)))
            .with_additional_contexts(vec![note]);
        let again = edited.with_content(Vec::new());
        assert!(again.meta().is_some());
        drop(again);
        drop(edited);
        drop(copy);
        drop(result);
    });
}

#[test]
fn a_parent_chain_of_30000_scopes_resolves_and_cycles_stop() {
    let registry = Registry::new();
    let tool = ToolDefinition::new(
        "ping",
        "answers pong",
        json!({"type": "object"}),
        OutputDecl::text(),
        |_, _| async { Ok(json!("pong")) },
    );
    registry.register(tool).unwrap().keep();
    for i in 1..30_000 {
        let _ = registry.child_scope(format!("a{i}").as_str(), format!("a{}", i - 1).as_str());
    }
    // A cycle at the top of the chain: a0's parent is the deepest scope.
    let _ = registry.child_scope("a0", "a29999");
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let result = rt.block_on(registry.execute(input("ping", json!({})).agent("a29999")));
    assert_eq!(result.text(), "pong");
    assert_eq!(registry.schemas(Some(&"a15000".into())).unwrap().len(), 1);
}

#[test]
fn many_required_properties_compile_and_report_within_bounds() {
    let mut properties = serde_json::Map::new();
    let mut required = Vec::new();
    for i in 0..200_000 {
        properties.insert(format!("p{i}"), json!({"type": "integer"}));
        required.push(json!(format!("p{i}")));
    }
    let schema = json!({"type": "object", "properties": properties, "required": required});
    let compiled = dsh_tools::schema::CompiledSchema::compile(&schema).unwrap();
    let violations = compiled.validate_at(&json!({}), dsh_tools::schema::Root::Parameters);
    assert_eq!(
        violations.len(),
        dsh_tools::schema::MAX_LISTED_VIOLATIONS + 1
    );
    assert_eq!(violations[0], r#"missing required property "p0""#);
    drop_deep(schema);
}

// ---- patterns: what the model and the schema's author control ----

use dsh_tools::schema::{CompiledSchema, MAX_REGEX_WORK, Root};

fn string_with_pattern(pattern: &str) -> CompiledSchema {
    CompiledSchema::compile(&json!({
        "type": "object",
        "properties": {"s": {"type": "string", "pattern": pattern}, "n": {"type": "integer"}}
    }))
    .unwrap()
}

#[test]
fn a_word_boundary_pattern_on_non_ascii_text_runs_within_budget() {
    // Unicode `\b` sent 8 MB of `é` to the slow engine (13 s). With ECMA-262's ASCII `\b`, the
    // check runs (it is not cut by the work budget) and reports an ordinary mismatch.
    let schema = string_with_pattern(r"(?:\w|\b){20}y");
    let value = json!({"s": "é".repeat(500_000)});
    assert_eq!(
        schema.validate_at(&value, Root::Parameters),
        [r#""s" must match pattern "(?:\\w|\\b){20}y""#]
    );
}

#[test]
fn a_long_string_is_matched_once_across_fast_path_probe_and_collector() {
    // 3 MiB against a small pattern costs 3 Mi of the 4 Mi units: a second run in the collector
    // (or a branch probe) would not fit and would show as "not checked".
    let long = "a".repeat(3 << 20);
    const { assert!(3 << 20 < MAX_REGEX_WORK && 6 << 20 > MAX_REGEX_WORK) };
    let schema = string_with_pattern("^a+$");
    let value = json!({"s": long, "n": "x"});
    assert_eq!(
        schema.validate_at(&value, Root::Parameters),
        [r#""n" must be an integer"#]
    );
    let in_one_of = CompiledSchema::compile(&json!({
        "oneOf": [
            {"type": "object", "properties": {"s": {"type": "string", "pattern": "^a+$"}, "k": {"const": 1, "type": "integer"}}, "required": ["k"]},
            {"type": "object", "properties": {"s": {"type": "string", "pattern": "^a+$"}, "k": {"const": 2, "type": "integer"}}, "required": ["k"]}
        ]
    }))
    .unwrap();
    let violations =
        in_one_of.validate_at(&json!({"s": "a".repeat(3 << 20), "k": 3}), Root::Parameters);
    assert!(
        violations.iter().all(|v| !v.contains("not checked")),
        "{violations:?}"
    );
}

#[test]
fn regex_work_per_validation_is_bounded_and_reported() {
    let schema = string_with_pattern("^a+$");
    let value = json!({"s": "a".repeat((MAX_REGEX_WORK as usize) + 1)});
    assert_eq!(
        schema.validate_at(&value, Root::Parameters),
        [r#""s" must match pattern "^a+$" (not checked: over the regex work limit)"#]
    );
    assert!(!schema.is_valid(&value));
    // A new validation has a fresh budget.
    assert!(schema.is_valid(&json!({"s": "aaa"})));
}

#[test]
fn two_thousand_patterns_compile_small_and_the_total_is_bounded() {
    let mut properties = serde_json::Map::new();
    for i in 0..2000 {
        properties.insert(
            format!("p{i}"),
            json!({"type": "string", "pattern": format!(r"\w{{20}}{i}")}),
        );
    }
    let schema = json!({"type": "object", "properties": properties});
    let compiled = CompiledSchema::compile(&schema).unwrap();
    let value = json!({"p7": "a".repeat(20) + "7", "p8": "short"});
    assert_eq!(
        compiled.validate_at(&value, Root::Parameters),
        [r#""p8" must match pattern "\\w{20}8""#]
    );
    // Patterns near the per-pattern limit: the schema's total is reached after a few, and each
    // pattern past it is listed without being built.
    let mut big = serde_json::Map::new();
    for i in 0..40 {
        big.insert(
            format!("p{i}"),
            json!({"type": "string", "pattern": format!(r"\pL{{20}}{i}")}),
        );
    }
    let err = CompiledSchema::compile(&json!({"type": "object", "properties": big})).unwrap_err();
    let over: Vec<_> = err
        .violations()
        .iter()
        .filter(|v| {
            v.ends_with("is over the limit on compiled patterns per schema (16 MiB together)")
        })
        .collect();
    assert!(
        !over.is_empty() && over.len() < 40,
        "{:?}",
        err.violations()
    );
    assert!(over[0].starts_with("schema.properties.p"), "{over:?}");
}

// ---- the schemars bridge: shared subtypes ----

#[allow(dead_code)]
#[derive(schemars::JsonSchema)]
struct Leaf {
    x: u8,
}

macro_rules! doubled {
    ($($name:ident($inner:ident)),*) => {$(
        #[allow(dead_code)]
        #[derive(schemars::JsonSchema)]
        struct $name {
            a: $inner,
            b: $inner,
        }
    )*};
}

doubled!(
    D1(Leaf),
    D2(D1),
    D3(D2),
    D4(D3),
    D5(D4),
    D6(D5),
    D7(D6),
    D8(D7),
    D9(D8),
    D10(D9),
    D11(D10),
    D12(D11),
    D13(D12),
    D14(D13),
    D15(D14),
    D16(D15),
    D17(D16),
    D18(D17),
    D19(D18),
    D20(D19),
    D21(D20),
    D22(D21),
    D23(D22),
    D24(D23),
    D30(D24)
);

#[test]
fn a_type_whose_inlined_schema_is_exponential_fails_fast_at_the_node_limit() {
    // D30 names 31 types; inlined, its schema would have 2^30 nodes. The bridge inlines `$ref`s
    // itself and stops at `MAX_NODES`, so this takes memory proportional to the limit.
    for err in [
        dsh_tools::schema::bridge::schema_for::<D30>().unwrap_err(),
        dsh_tools::schema::bridge::schema_for::<D20>().unwrap_err(),
    ] {
        assert!(
            err.to_string().contains(&format!(
                "more than {} nodes once every $ref is inlined",
                dsh_tools::schema::bridge::MAX_NODES
            )),
            "{err}"
        );
    }
    // Sharing below the limit still bridges, inlined.
    let ok = dsh_tools::schema::bridge::schema_for::<D10>().unwrap();
    assert!(!ok.to_string().contains("$ref"));
    assert_eq!(ok["properties"]["a"]["properties"]["b"]["type"], "object");
}

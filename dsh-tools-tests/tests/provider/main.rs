//! Provider dialects: golden exports of the example tools in every dialect, the transforms and
//! their errors, reversible strict mode (a property test over the bench schemas and random
//! values), parse / format round trips with malformed calls, and streamed replies assembled.

#[allow(dead_code, unreachable_pub)]
#[path = "../common/tools.rs"]
mod tools;

mod exports;

use dsh_tools::provider::ProviderExport;
use dsh_tools::provider::{
    ChangeKind, Dialect, Provider, export_parameters, format_results, lint, restore_arguments,
};
use dsh_tools::schema::CompiledSchema;
use dsh_tools::{
    CancellationToken, ContentBlock, OutputDecl, Registry, Tool, ToolDefinition, ToolError,
    ToolExecutionResult, UserMessage,
};
use proptest::prelude::*;
use serde_json::{Map, Value, json};
use tools::*;

#[path = "../common/strict.rs"]
mod strict;

mod stream;
use strict::to_strict;

/// Every dialect: each provider's default and, where it has one, its strict mode.
fn dialects() -> Vec<Dialect> {
    let mut all = Vec::new();
    for p in Provider::ALL {
        all.push(Dialect::new(p));
        if p.has_strict() {
            all.push(Dialect::strict(p));
        }
    }
    all
}

fn example_registry() -> Registry {
    let registry = Registry::new();
    registry.register(ReadFile).unwrap().keep();
    registry.register(Add).unwrap().keep();
    registry.register(Search).unwrap().keep();
    registry.register(Wait).unwrap().keep();
    registry.register(Measure).unwrap().keep();
    registry
}

#[test]
fn golden_exports_of_the_example_tools() {
    let definitions = [
        ReadFile.definition(),
        Add.definition(),
        Search.definition(),
        Wait.definition(),
        Measure.definition(),
    ];
    for dialect in dialects() {
        let mut golden = Map::new();
        for definition in &definitions {
            let registry = Registry::new();
            registry.register(definition.clone()).unwrap().keep();
            let export = match registry.provider_tools(None, dialect) {
                Ok(tools) => json!({
                    "request": tools.request_fields(),
                    "changes": tools.tools()[0].changes(),
                }),
                // `grep` takes a map, which strict modes cannot express: the error is golden too.
                Err(e) => json!({"error": e.to_string()}),
            };
            golden.insert(definition.name().to_owned(), export);
        }
        let name = dialect.name().replace(" (strict)", "-strict");
        insta::assert_json_snapshot!(name, golden);
    }
}

#[test]
fn strict_openai_closes_every_object_and_makes_optional_fields_nullable() {
    let schema = json!({"type": "object", "properties": {
        "path": {"type": "string"},
        "offset": {"oneOf": [{"type": "integer", "minimum": 0}, {"type": "null"}]},
        "limit": {"type": "integer", "minimum": 1},
        "inner": {"type": "object", "properties": {"deep": {"type": "boolean"}}}
    }, "required": ["path"]});
    let (out, changes) = export_parameters(&schema, Dialect::strict(Provider::OpenAiChat)).unwrap();
    assert_eq!(out["required"], json!(["path", "offset", "limit", "inner"]));
    assert_eq!(out["additionalProperties"], json!(false));
    // `inner` was optional: now nullable, and closed inside.
    let inner = &out["properties"]["inner"]["anyOf"][0];
    assert_eq!(inner["additionalProperties"], json!(false));
    assert_eq!(inner["required"], json!(["deep"]));
    assert_eq!(
        out["properties"]["limit"],
        json!({"anyOf": [{"type": "integer", "minimum": 1}, {"type": "null"}]})
    );
    assert_eq!(
        out["properties"]["offset"],
        json!({"anyOf": [{"type": "integer", "minimum": 0}, {"type": "null"}]}),
        "already nullable: only `oneOf` → `anyOf`"
    );
    assert!(changes.iter().any(|c| c.kind == ChangeKind::Closed));
    // A null for a field that was optional means absent; a null that was always allowed stays.
    let mut args = json!({"path": "a", "offset": null, "limit": null, "inner": {"deep": null}});
    restore_arguments(&schema, Dialect::strict(Provider::OpenAiChat), &mut args).unwrap();
    assert_eq!(args, json!({"path": "a", "offset": null, "inner": {}}));
}

#[test]
fn what_a_dialect_cannot_express_is_an_error_naming_the_path_and_the_fix() {
    let union_root = json!({"oneOf": [
        {"type": "object", "properties": {"op": {"const": "a"}}, "required": ["op"]},
        {"type": "object", "properties": {"op": {"const": "b"}}, "required": ["op"]}]});
    let problems = export_parameters(&union_root, Dialect::new(Provider::Anthropic)).unwrap_err();
    assert_eq!(problems[0].path, "#");
    assert!(
        problems[0].message.contains("wrap it in a property"),
        "{}",
        problems[0].message
    );
    assert!(export_parameters(&union_root, Dialect::new(Provider::OpenAiChat)).is_ok());

    let map = json!({"type": "object", "properties": {
        "env": {"type": "object", "additionalProperties": {"type": "string"}}}});
    let problems = export_parameters(&map, Dialect::strict(Provider::OpenAiChat)).unwrap_err();
    assert_eq!(problems[0].path, "#/properties/env");
    assert!(problems[0].message.contains("{key, value}"));
    assert!(export_parameters(&map, Dialect::new(Provider::Gemini)).is_ok());

    // Eleven levels of objects: over OpenAI strict's ten.
    let mut deep = json!({"type": "object", "properties": {}});
    for _ in 0..10 {
        deep = json!({"type": "object", "properties": {"x": deep}});
    }
    let problems = export_parameters(&deep, Dialect::strict(Provider::OpenAiChat)).unwrap_err();
    assert!(
        problems[0].message.contains("allows 10"),
        "{}",
        problems[0].message
    );
    assert!(export_parameters(&deep, Dialect::new(Provider::OpenAiChat)).is_ok());

    // Far deeper than any provider: an error, not a stack overflow.
    let mut hostile = json!({"type": "string"});
    for _ in 0..1_000 {
        hostile = json!({"type": "array", "items": hostile});
    }
    let root = json!({"type": "object", "properties": {"x": hostile}});
    assert!(export_parameters(&root, Dialect::new(Provider::Gemini)).is_err());
}

#[test]
fn constraints_outside_the_grammar_move_into_the_description_and_are_still_enforced() {
    let schema = json!({"type": "object", "properties": {
        "name": {"type": "string", "description": "Who", "minLength": 1, "maxLength": 8}},
        "required": ["name"]});
    let (out, _) = export_parameters(&schema, Dialect::strict(Provider::Anthropic)).unwrap();
    assert_eq!(
        out["properties"]["name"],
        json!({"type": "string", "description": "Who (minLength: 1, maxLength: 8)"})
    );
    let issues = lint(&schema, Dialect::strict(Provider::Anthropic));
    let moved: Vec<&str> = issues
        .iter()
        .filter(|i| i.path == "#/properties/name")
        .map(|i| i.message.as_str())
        .collect();
    assert_eq!(moved.len(), 2, "{issues:?}");
    assert!(moved[0].contains("minLength") && moved[1].contains("maxLength"));
    assert_eq!(
        issues.len(),
        2,
        "the strict closure is not an issue: {issues:?}"
    );
    // The check is the original schema's.
    let registry = Registry::new();
    let tool = ToolDefinition::typed("greet", "Greet.", |a: NameArgs, _| async move {
        Ok::<_, ToolError>(a.name)
    })
    .unwrap();
    registry.register(tool).unwrap().keep();
    let tools = registry
        .provider_tools(None, Dialect::strict(Provider::Anthropic))
        .unwrap();
    let reply = json!({"content": [{"type": "tool_use", "id": "t1", "name": "greet",
        "input": {"name": "far too long a name"}}]});
    let calls = tools.parse_calls(&reply).unwrap();
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let result = rt.block_on(calls[0].execute(&registry, CancellationToken::new()));
    assert_eq!(result.code(), Some("INVALID_ARGS"));
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct NameArgs {
    #[schemars(length(min = 1, max = 8))]
    name: String,
}

#[test]
fn gemini_openapi_spells_nullable_types_and_enums_its_way() {
    let schema = json!({"type": "object", "properties": {
        "mode": {"oneOf": [{"type": "string", "enum": ["a", "b"]}, {"type": "null"}]},
        "level": {"type": "integer", "enum": [1, 2]},
        "tag": {"const": "x", "type": "string"}
    }, "additionalProperties": false});
    let (out, changes) = export_parameters(&schema, Dialect::new(Provider::GeminiOpenApi)).unwrap();
    assert_eq!(
        out,
        json!({"type": "OBJECT", "properties": {
            "mode": {"type": "STRING", "enum": ["a", "b"], "format": "enum", "nullable": true},
            "level": {"type": "INTEGER", "description": "(one of: [1,2])"},
            "tag": {"type": "STRING", "enum": ["x"], "format": "enum"}
        }})
    );
    assert!(changes.iter().any(|c| c.kind == ChangeKind::Loosened));
}

#[test]
fn names_are_mapped_to_the_provider_rule_and_back() {
    let registry = Registry::new();
    let tool = |name: &str| {
        ToolDefinition::new(
            name,
            "t",
            json!({"type": "object"}),
            OutputDecl::text(),
            |_, _| async { Ok(json!("ok")) },
        )
    };
    registry.register(tool("fs.read")).unwrap().keep();
    registry.register(tool("fs_read")).unwrap().keep();
    let tools = registry
        .provider_tools(None, Dialect::new(Provider::OpenAiChat))
        .unwrap();
    let names: Vec<&str> = tools.tools().iter().map(|t| t.provider_name()).collect();
    // A name that fits keeps it, whatever was registered first; only the mapped one gets a
    // suffix (issue 18, item 20: `fs_read` used to become `fs_read_2` after `fs.read`).
    assert_eq!(names, ["fs_read_2", "fs_read"]);
    let reply = json!({"choices": [{"message": {"tool_calls": [
        {"id": "c1", "type": "function", "function": {"name": "fs_read", "arguments": "{}"}},
        {"id": "c2", "type": "function", "function": {"name": "fs_read_2", "arguments": "{}"}}]}}]});
    let calls = tools.parse_calls(&reply).unwrap();
    assert_eq!(calls[0].name(), "fs_read");
    assert_eq!(calls[1].name(), "fs.read");
    // Gemini allows dots.
    let gemini = registry
        .provider_tools(None, Dialect::new(Provider::Gemini))
        .unwrap();
    assert_eq!(gemini.tools()[0].provider_name(), "fs.read");
}

#[test]
fn provider_names_stay_stable_within_a_conversation() {
    let registry = Registry::new();
    let tool = |name: &str| {
        ToolDefinition::new(
            name,
            "t",
            json!({"type": "object"}),
            OutputDecl::text(),
            |_, _| async { Ok(json!("ok")) },
        )
    };
    let dotted = registry.register(tool("a.b")).unwrap();
    let dialect = Dialect::new(Provider::OpenAiChat);
    let first = registry.provider_tools(None, dialect).unwrap();
    assert_eq!(first.tools()[0].provider_name(), "a_b");
    // Our own `a_b` arrives mid-conversation: `a_b` keeps meaning `a.b`.
    registry.register(tool("a_b")).unwrap().keep();
    let second = first.refresh(&registry).unwrap();
    assert_eq!(second.by_provider_name("a_b").unwrap().name(), "a.b");
    assert_eq!(second.by_provider_name("a_b_2").unwrap().name(), "a_b");
    // `a.b` leaves: its name is not handed to another tool while the conversation lasts.
    dotted.dispose();
    let third = second.refresh(&registry).unwrap();
    assert!(third.by_provider_name("a_b").is_none());
    assert_eq!(third.by_provider_name("a_b_2").unwrap().name(), "a_b");
    let reply = json!({"choices": [{"message": {"tool_calls": [
        {"id": "c1", "type": "function", "function": {"name": "a_b", "arguments": "{}"}}]}}]});
    let calls = third.parse_calls(&reply).unwrap();
    assert_ne!(
        calls[0].name(),
        "a_b",
        "a stale name never runs another tool"
    );
    // A new conversation starts afresh: names that fit are their own.
    let fresh = registry.provider_tools(None, dialect).unwrap();
    assert_eq!(fresh.tools()[0].provider_name(), "a_b");
}

/// Replies of each provider with two calls: a valid one and one whose arguments are broken.
fn replies() -> Vec<(Dialect, Value)> {
    vec![
        (
            Dialect::new(Provider::OpenAiChat),
            json!({"choices": [{"message": {"role": "assistant", "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "add", "arguments": "{\"a\": 2, \"b\": 3}"}},
                {"id": "c2", "type": "function", "function": {"name": "add", "arguments": "{\"a\": 2,"}}]}}]}),
        ),
        (
            Dialect::new(Provider::DeepSeek),
            json!({"choices": [{"message": {"tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "add", "arguments": "{\"a\": 2, \"b\": 3}"}},
                {"id": "c2", "type": "function", "function": {"name": "add", "arguments": "[1, 2]"}}]}}]}),
        ),
        (
            Dialect::new(Provider::OpenAiResponses),
            json!({"output": [{"type": "reasoning", "summary": []},
                {"type": "function_call", "call_id": "c1", "name": "add", "arguments": "{\"a\": 2, \"b\": 3}"},
                {"type": "function_call", "call_id": "c2", "name": "add", "arguments": "not json"}]}),
        ),
        (
            Dialect::new(Provider::Anthropic),
            json!({"content": [{"type": "text", "text": "adding"},
                {"type": "tool_use", "id": "c1", "name": "add", "input": {"a": 2, "b": 3}},
                {"type": "tool_use", "id": "c2", "name": "add", "input": "a string"}]}),
        ),
        (
            Dialect::new(Provider::Gemini),
            json!({"candidates": [{"content": {"role": "model", "parts": [
                {"functionCall": {"name": "add", "args": {"a": 2, "b": 3}}},
                {"functionCall": {"name": "add", "args": 7}}]}}]}),
        ),
    ]
}

#[test]
fn every_provider_parses_calls_in_order_and_broken_arguments_become_invalid_args() {
    let registry = example_registry();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    for (dialect, reply) in replies() {
        let tools = registry.provider_tools(None, dialect).unwrap();
        let calls = tools.parse_calls(&reply).unwrap();
        assert_eq!(calls.len(), 2, "{dialect}");
        assert_eq!(
            calls[0].arguments(),
            Some(&json!({"a": 2, "b": 3})),
            "{dialect}"
        );
        let bad = calls[1].error().expect("broken arguments are an error");
        assert!(calls[1].raw_arguments().is_some(), "{dialect}");
        assert_eq!(calls[0].raw_arguments(), None);
        assert_eq!(bad.code(), Some("INVALID_ARGS"), "{dialect}");
        assert!(
            bad.message().starts_with("invalid arguments: "),
            "{dialect}: {bad}"
        );
        let results: Vec<ToolExecutionResult> = calls
            .iter()
            .map(|c| rt.block_on(c.execute(&registry, CancellationToken::new())))
            .collect();
        assert_eq!(results[0].text(), "5");
        assert!(results[1].is_error());
        let pairs: Vec<_> = calls.iter().zip(&results).collect();
        let messages = format_results(dialect, &pairs);
        let text = serde_json::to_string(&messages).unwrap();
        assert!(text.contains("invalid arguments"), "{dialect}: {text}");
        match dialect.provider() {
            Provider::OpenAiChat | Provider::DeepSeek => {
                assert_eq!(
                    messages[0],
                    json!({"role": "tool", "tool_call_id": "c1", "content": "5"})
                );
            }
            Provider::OpenAiResponses => {
                assert_eq!(
                    messages[0],
                    json!({"type": "function_call_output", "call_id": "c1", "output": "5"})
                );
            }
            Provider::Anthropic => {
                assert_eq!(messages.len(), 1);
                assert_eq!(messages[0]["content"][1]["is_error"], json!(true));
                assert_eq!(messages[0]["content"][0]["tool_use_id"], json!("c1"));
            }
            Provider::Gemini | Provider::GeminiOpenApi => {
                assert_eq!(
                    messages[0]["parts"][0],
                    json!({"functionResponse": {"name": "add", "response": {"output": "5"}}})
                );
                assert!(
                    messages[0]["parts"][1]["functionResponse"]["response"]["error"].is_string()
                );
            }
            _ => unreachable!(),
        }
    }
}

#[test]
fn a_reply_that_is_not_the_providers_shape_is_an_error_and_one_without_calls_gives_none() {
    let registry = example_registry();
    let tools = registry
        .provider_tools(None, Dialect::new(Provider::Anthropic))
        .unwrap();
    assert!(tools.parse_calls(&json!({"content": "x"})).is_err());
    assert!(
        tools
            .parse_calls(&json!({"content": [{"type": "text", "text": "hi"}]}))
            .unwrap()
            .is_empty()
    );
    let openai = registry
        .provider_tools(None, Dialect::new(Provider::OpenAiChat))
        .unwrap();
    assert!(
        openai
            .parse_calls(&json!({"choices": [{"message": {"content": "hi"}}]}))
            .unwrap()
            .is_empty()
    );
    // 100,000 levels inside an arguments string: refused as JSON, no overflow.
    let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
    let reply = json!({"choices": [{"message": {"tool_calls": [
        {"id": "c1", "type": "function", "function": {"name": "add", "arguments": deep}}]}}]});
    let calls = openai.parse_calls(&reply).unwrap();
    assert_eq!(calls[0].error().unwrap().code(), Some("INVALID_ARGS"));
}

#[test]
fn additional_contexts_follow_all_results_and_images_reach_anthropic() {
    let registry = example_registry();
    let anthropic = registry
        .provider_tools(None, Dialect::new(Provider::Anthropic))
        .unwrap();
    let reply = json!({"content": [
        {"type": "tool_use", "id": "c1", "name": "add", "input": {"a": 1, "b": 1}},
        {"type": "tool_use", "id": "c2", "name": "add", "input": {"a": 1, "b": 2}}]});
    let calls = anthropic.parse_calls(&reply).unwrap();
    let note = UserMessage::new("m1", vec![ContentBlock::text("fyi")], Value::Null);
    let first = ToolExecutionResult::success(json!(2))
        .with_content(vec![
            ContentBlock::new(json!({"type": "image", "data": "aGk=", "mimeType": "image/png"}))
                .unwrap(),
        ])
        .with_additional_contexts(vec![note]);
    let second = ToolExecutionResult::success(json!(3)).with_content(vec![ContentBlock::text("3")]);
    let messages = format_results(
        anthropic.dialect(),
        &[(&calls[0], &first), (&calls[1], &second)],
    );
    let content = messages[0]["content"].as_array().unwrap();
    assert_eq!(content.len(), 3);
    assert_eq!(
        content[0]["content"][0]["source"]["media_type"],
        "image/png"
    );
    assert_eq!(content[1]["tool_use_id"], "c2");
    assert_eq!(content[2], json!({"type": "text", "text": "fyi"}));
    let openai = registry
        .provider_tools(None, Dialect::new(Provider::OpenAiChat))
        .unwrap();
    let messages = format_results(
        openai.dialect(),
        &[(&calls[0], &first), (&calls[1], &second)],
    );
    assert_eq!(messages.len(), 3);
    assert_eq!(messages[2], json!({"role": "user", "content": "fyi"}));
}

// ---- reversible strict mode ----

fn bench_schema(name: &str) -> Value {
    let text = match name {
        "small" => include_str!("../../../dsh-tools/benches/data/small.schema.json"),
        "medium" => include_str!("../../../dsh-tools/benches/data/medium.schema.json"),
        _ => include_str!("../../../dsh-tools/benches/data/large.schema.json"),
    };
    serde_json::from_str(text).unwrap()
}

fn bench_value(name: &str) -> Value {
    let text = match name {
        "small" => include_str!("../../../dsh-tools/benches/data/small.json"),
        "medium" => include_str!("../../../dsh-tools/benches/data/medium.json"),
        _ => include_str!("../../../dsh-tools/benches/data/large.json"),
    };
    serde_json::from_str(text).unwrap()
}

/// Drops optional properties at random (keeping the value valid for the original).
fn thin(schema: &Value, value: &mut Value, coin: &mut impl FnMut() -> bool) {
    match (schema, value) {
        (Value::Object(s), Value::Object(v)) if s.contains_key("properties") => {
            let required: Vec<&str> = s
                .get("required")
                .and_then(Value::as_array)
                .map(|r| r.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            let props = s["properties"].as_object().unwrap();
            v.retain(|k, _| required.contains(&k.as_str()) || !props.contains_key(k) || coin());
            for (k, child) in v.iter_mut() {
                if let Some(sub) = props.get(k) {
                    thin(sub, child, coin);
                }
            }
        }
        (Value::Object(s), Value::Array(items)) if s.contains_key("items") => {
            for i in items {
                thin(&s["items"], i, coin);
            }
        }
        _ => {}
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    /// For the bench schemas: any valid value, thinned at random, sent the strict way, is valid
    /// for the exported schema (checked by the `jsonschema` crate) and maps back to itself.
    #[test]
    fn strict_mode_round_trips(seed in any::<u64>(), which in 0usize..3) {
        let name = ["small", "medium", "large"][which];
        let schema = bench_schema(name);
        let original = CompiledSchema::compile(&schema).unwrap();
        let mut value = bench_value(name);
        let mut state = seed;
        let mut coin = move || { state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407); state >> 63 == 1 };
        thin(&schema, &mut value, &mut coin);
        prop_assert!(original.is_valid(&value));
        for provider in [Provider::OpenAiChat, Provider::OpenAiResponses, Provider::DeepSeek] {
            let dialect = Dialect::strict(provider);
            let (exported, _) = export_parameters(&schema, dialect).unwrap();
            let validator = jsonschema::validator_for(&exported).unwrap();
            let sent = to_strict(&schema, &value);
            prop_assert!(validator.is_valid(&sent), "{dialect}: {sent}");
            let mut back = sent.clone();
            restore_arguments(&schema, dialect, &mut back).unwrap();
            prop_assert_eq!(&back, &value);
            prop_assert!(original.is_valid(&back));
        }
    }
}

#[test]
fn parsed_calls_run_as_the_agent_the_tools_were_exported_for() {
    let registry = example_registry();
    let scope = registry.scope("agent-1");
    scope
        .restrict(dsh_tools::Restriction::deny(["add"]))
        .unwrap()
        .keep();
    scope
        .register(ToolDefinition::new(
            "own",
            "the agent's own tool",
            json!({"type": "object"}),
            OutputDecl::text(),
            |_, _| async { Ok(json!("mine")) },
        ))
        .unwrap()
        .keep();
    let agent = dsh_tools::AgentId::new("agent-1");
    let tools = registry
        .provider_tools(Some(&agent), Dialect::new(Provider::OpenAiChat))
        .unwrap();
    assert_eq!(tools.agent(), Some(&agent));
    assert!(
        tools.by_provider_name("add").is_none(),
        "restricted: not exported"
    );
    // The model calls the agent's own tool, and a restricted one by name anyway.
    let reply = json!({"choices": [{"message": {"role": "assistant", "tool_calls": [
        {"id": "c1", "type": "function", "function": {"name": "own", "arguments": "{}"}},
        {"id": "c2", "type": "function", "function": {"name": "add", "arguments": "{\"a\": 1, \"b\": 2}"}}]}}]});
    let calls = tools.parse_calls(&reply).unwrap();
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let own = rt.block_on(calls[0].execute(&registry, CancellationToken::new()));
    assert_eq!(own.text(), "mine");
    let denied = rt.block_on(calls[1].execute(&registry, CancellationToken::new()));
    assert_eq!(denied.code(), Some("UNKNOWN_TOOL"), "{}", denied.text());
}

#[test]
fn boolean_schemas_are_refused_by_strict_dialects() {
    let schema = json!({"type": "object", "properties": {"any": true}});
    let problems = export_parameters(&schema, Dialect::strict(Provider::OpenAiChat)).unwrap_err();
    assert_eq!(problems[0].path, "#/properties/any");
    assert!(export_parameters(&schema, Dialect::new(Provider::OpenAiChat)).is_ok());
}

#[test]
fn a_reply_that_repeats_a_call_id_runs_the_first_call_only() {
    let registry = Registry::new();
    registry
        .register(ToolDefinition::new(
            "t",
            "t",
            json!({"type": "object"}),
            OutputDecl::text(),
            |_, _| async { Ok(json!("ok")) },
        ))
        .unwrap()
        .keep();
    let dialect = Dialect::new(Provider::OpenAiChat);
    let tools = registry.provider_tools(None, dialect).unwrap();
    let reply = json!({"choices": [{"message": {"tool_calls": [
        {"id": "c1", "type": "function", "function": {"name": "t", "arguments": "{}"}},
        {"id": "c1", "type": "function", "function": {"name": "t", "arguments": "{\"again\":1}"}}]}}]});
    let calls = tools.parse_calls(&reply).unwrap();
    assert_eq!(calls.len(), 2);
    assert!(calls[0].arguments().is_some());
    assert_ne!(
        calls[0].call_id(),
        calls[1].call_id(),
        "our ids stay unique"
    );
    let error = calls[1].error().expect("the repeat is not run");
    assert_eq!(error.code(), Some("INVALID_ARGS"));
    assert!(
        error
            .message()
            .contains("more than one call with the id \"c1\""),
        "{error}"
    );
    assert_eq!(calls[1].provider_call_id(), Some("c1"));
    let failed = calls[1]
        .clone()
        .into_input(dsh_tools::CancellationToken::new())
        .unwrap_err();
    let ok = dsh_tools::ToolExecutionResult::success(json!("ok"));
    let messages = format_results(dialect, &[(&calls[0], &ok), (&calls[1], &failed)]);
    assert_eq!(messages[0]["tool_call_id"], "c1");
    assert_eq!(
        messages[1]["tool_call_id"], "c1",
        "the result answers the provider's id"
    );
}

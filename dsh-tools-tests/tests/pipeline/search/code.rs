//! Code Mode with deferred tools: the SDK names them without declaring them, and a program
//! finds them with `tools.$search`, reads one with `tools.$describe`, and calls it.

use super::tool;
use dsh_tools::code::CodeRuntimeConfig;
use dsh_tools::code::quickjs::QuickJsRuntime;
use dsh_tools::definition::Namespace;
use dsh_tools::pipeline::{Caller, ScopeRules};
use dsh_tools::registry::{DeferRule, PresentationMode};
use dsh_tools::*;
use serde_json::json;

fn registry() -> Registry {
    let registry = Registry::new();
    registry.set_code_runtime(QuickJsRuntime::new(CodeRuntimeConfig::default()).unwrap());
    registry.set_presentation_mode(PresentationMode::Code);
    registry
        .register(tool("read_file", "Read a file"))
        .unwrap()
        .keep();
    let slack = Namespace::new("slack", "Messages and channels in Slack");
    let post = ToolDefinition::new(
        "post_message",
        "Post a message to a channel",
        json!({"type": "object", "properties": {
            "channel": {"type": "string", "description": "Where to post"},
            "text": {"type": "string"}}, "required": ["channel", "text"], "additionalProperties": false}),
        OutputDecl::json(json!({"type": "string"})),
        |args, _| async move {
            Ok(json!(format!(
                "posted to {}",
                args["channel"].as_str().unwrap()
            )))
        },
    );
    registry
        .register(post.namespace(slack.clone()))
        .unwrap()
        .keep();
    registry
        .register(tool("archive_channel", "Archive a channel").namespace(slack))
        .unwrap()
        .keep();
    registry.defer_loading(DeferRule::namespace("slack"));
    registry
}

async fn run(registry: &Registry, code: &str, caller: Option<Caller>) -> ToolExecutionResult {
    let mut input = ToolExecutionInput::new(
        "c1",
        "run_code",
        json!({"code": code, "description": "find and call"}),
        CancellationToken::new(),
    );
    if let Some(caller) = caller {
        input = input.caller(caller);
    }
    registry.execute(input).await
}

#[test]
fn the_sdk_names_deferred_tools_without_declaring_them() {
    let registry = registry();
    let prompt = registry.code_prompt(None).unwrap();
    assert!(
        prompt.contains("  read_file: Record<string, JsonValue>;"),
        "{prompt}"
    );
    assert!(!prompt.contains("post_message: {"), "{prompt}");
    assert!(
        prompt.contains(
            "- slack (\"Messages and channels in Slack\"): post_message, archive_channel"
        ),
        "{prompt}"
    );
    assert!(prompt.contains("$search(query: string | { query: string; limit?: number })"));
    // Without deferral the prompt has no such section.
    let plain = Registry::new();
    plain.set_code_runtime(QuickJsRuntime::new(CodeRuntimeConfig::default()).unwrap());
    plain.set_presentation_mode(PresentationMode::Code);
    plain
        .register(tool("read_file", "Read a file"))
        .unwrap()
        .keep();
    assert!(!plain.code_prompt(None).unwrap().contains("$search"));
}

#[tokio::test]
async fn a_program_searches_describes_and_calls() {
    let registry = registry();
    let result = run(
        &registry,
        r#"const found = await tools.$search("post a message in slack");
           const shown = await tools.$describe(found[0].name);
           const sent = await tools[found[0].name]({channel: "general", text: "hi"});
           return {first: found[0], shown, sent};"#,
        None,
    )
    .await;
    assert!(!result.is_error(), "{}", result.text());
    let value: serde_json::Value = serde_json::from_str(&result.text()).unwrap();
    assert_eq!(value["first"]["name"], "post_message");
    assert_eq!(value["first"]["namespace"], "slack");
    assert_eq!(value["sent"], "posted to general");
    let shown = value["shown"].as_str().unwrap();
    assert!(
        shown.starts_with("/** Post a message to a channel */\npost_message(args: {"),
        "{shown}"
    );
    assert!(shown.contains("/** Where to post */"), "{shown}");
    assert!(shown.ends_with("}): Promise<string>;"), "{shown}");
}

#[tokio::test]
async fn bad_member_calls_reject_with_the_reason() {
    let registry = registry();
    let result = run(
        &registry,
        r#"const out = [];
           for (const arg of [3, {query: 1}, {query: "x", limit: 0}, {query: "x", limit: 51}]) {
             try { await tools.$search(arg); } catch (e) { out.push(e.message); }
           }
           try { await tools.$describe("nope"); } catch (e) { out.push(e.message); }
           try { await tools.$describe("run_code"); } catch (e) { out.push(e.message); }
           const many = await tools.$search({query: "channel", limit: 50});
           return {out, many: many.length};"#,
        None,
    )
    .await;
    let value: serde_json::Value = serde_json::from_str(&result.text()).unwrap();
    let out: Vec<&str> = value["out"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m.as_str().unwrap())
        .collect();
    assert_eq!(out.len(), 6, "{out:?}");
    assert!(
        out[0].contains("tools.$search takes a query string or {query, limit}"),
        "{out:?}"
    );
    assert!(out[1].contains("\"query\" must be a string"), "{out:?}");
    assert!(
        out[2].contains("\"limit\" must be an integer from 1 to 50"),
        "{out:?}"
    );
    assert!(
        out[3].contains("\"limit\" must be an integer from 1 to 50"),
        "{out:?}"
    );
    assert!(out[4].contains("no tool named \"nope\""), "{out:?}");
    assert!(out[5].contains("no tool named \"run_code\""), "{out:?}");
    assert_eq!(value["many"], 2);
}

#[tokio::test]
async fn members_hide_what_the_caller_may_not_call() {
    let registry = registry();
    registry
        .scope_rules(ScopeRules::new().tool("archive_channel", ["slack:admin"]))
        .keep();
    let user = Caller::new("u").scopes(["slack:write"]);
    let result = run(
        &registry,
        r#"const found = await tools.$search({query: "channel", limit: 10});
           let described = "";
           try { described = await tools.$describe("archive_channel"); } catch (e) { described = e.message; }
           return {names: found.map(t => t.name), described};"#,
        Some(user),
    )
    .await;
    let value: serde_json::Value = serde_json::from_str(&result.text()).unwrap();
    assert_eq!(value["names"], json!(["post_message"]));
    assert!(
        value["described"]
            .as_str()
            .unwrap()
            .contains("no tool named"),
        "{value}"
    );
}

#[test]
fn the_member_names_are_reserved() {
    let registry = Registry::new();
    for name in ["$search", "$describe"] {
        let error = registry.register(tool(name, "mine")).unwrap_err();
        assert_eq!(
            error.to_string(),
            format!(
                "tool name \"{name}\" is reserved for the search of deferred tools and cannot be registered or shadowed"
            )
        );
    }
}

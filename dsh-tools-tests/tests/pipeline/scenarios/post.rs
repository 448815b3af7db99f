//! F. Post-execute decisions (spec §6.7).

use super::support::*;
use dsh_tools::schema::dsl::compile_value_spec;
use dsh_tools::*;
use serde_json::{Value, json};

fn deciding(registry: &Registry, decision: PostToolDecision) {
    registry
        .on_post_execute(move |_e, _r, _next: PostNext| {
            let decision = decision.clone();
            async move { Ok(decision) }
        })
        .keep();
}

fn throws_x() -> ToolDefinition {
    ToolDefinition::new(
        "throws",
        "fails",
        json!({"type": "object"}),
        OutputDecl::text(),
        |_, _| async { Err(ToolError::new("x")) },
    )
}

#[tokio::test]
async fn scenario_062_replace_content() {
    let registry = Registry::new();
    keep(&registry, echo());
    deciding(
        &registry,
        PostToolDecision::replace_content(blocks("rewritten")),
    );
    let r = exec(&registry, call("echo", json!({"text": "hi"}))).await;
    assert_eq!(
        to_json(&r),
        json!({"content": t("rewritten"), "isError": false, "value": "hi"})
    );
}

fn projected() -> ToolDefinition {
    let schema = compile_value_spec(&json!({
        "type": "object",
        "additionalProperties": false,
        "properties": {"text": {"type": "string", "required": true}}
    }))
    .unwrap();
    let output = OutputDecl::new(schema, |_, v: &Value| {
        blocks(&format!("render:{}", v["text"].as_str().unwrap()))
    })
    .presentation_meta(|_, v| json!({"projected": v["text"]}));
    define_tool("projected", "projects", json!({}), output, |_, _| async {
        Ok(json!({"text": "body"}))
    })
}

#[tokio::test]
async fn scenario_063_content_vs_value_replacement() {
    let registry = Registry::new();
    keep(&registry, projected());
    let content = deciding_once(
        &registry,
        PostToolDecision::replace_content(blocks("policy content")),
    );
    let r = exec(&registry, call("projected", json!({}))).await;
    assert_eq!(
        to_json(&r),
        json!({"isError": false, "value": {"text": "body"}, "content": t("policy content"),
               "meta": {"projected": "body"}})
    );
    content.dispose();
    let context = um_from("value context", "test");
    let _value = deciding_once(
        &registry,
        PostToolDecision::replace_value(json!({"text": "policy value"}))
            .with_contexts([context.clone()]),
    );
    let r = exec(&registry, call("projected", json!({}))).await;
    assert_eq!(
        to_json(&r),
        json!({
            "isError": false,
            "value": {"text": "policy value"},
            "content": t("render:policy value"),
            "meta": {"projected": "policy value"},
            "additionalContexts": [{"id": context.id, "role": "user", "content": t("value context"),
                                    "source": {"kind": "plugin", "plugin": "test"}}]
        })
    );
}

fn deciding_once(registry: &Registry, decision: PostToolDecision) -> Registration {
    registry.on_post_execute(move |_e, _r, _next: PostNext| {
        let decision = decision.clone();
        async move { Ok(decision) }
    })
}

#[tokio::test]
async fn scenario_064_both_replacements_and_invalid_replacement() {
    let registry = Registry::new();
    keep(&registry, echo());
    let both = deciding_once(
        &registry,
        PostToolDecision::Accept {
            content: Some(blocks("c")),
            value: Some(json!("v")),
            additional_contexts: Vec::new(),
        },
    );
    let r = exec(&registry, call("echo", json!({"text": "hi"}))).await;
    assert_eq!(
        to_json(&r),
        plain_failure("tools/post-execute accept decision cannot replace both value and content")
    );
    both.dispose();
    deciding(&registry, PostToolDecision::replace_value(json!(1)));
    let r = exec(&registry, call("echo", json!({"text": "hi"}))).await;
    assert_eq!(
        to_json(&r),
        coded_failure(
            "tool \"echo\" returned invalid output: \"value\" must be a string",
            "ToolOutputError",
            "INVALID_TOOL_OUTPUT"
        )
    );
    assert!(to_json(&r).get("value").is_none());
}

#[tokio::test]
async fn scenario_066_value_replacement_without_contexts() {
    let registry = Registry::new();
    keep(&registry, echo());
    deciding(
        &registry,
        PostToolDecision::replace_value(json!("replacement")),
    );
    let r = exec(&registry, call("echo", json!({"text": "hi"}))).await;
    assert_eq!(
        to_json(&r),
        json!({"isError": false, "value": "replacement", "content": t("replacement")})
    );
}

#[tokio::test]
async fn scenario_067_block_message_derivation() {
    let block = |v: Value| ContentBlock::new(v).unwrap();
    let image = block(json!({"type": "image", "data": "AAAA", "mimeType": "image/png"}));
    let default = "tool result blocked by post-execute policy";
    let cases = [
        (vec![], default),
        (
            vec![block(
                json!({"type": "reasoning", "text": "private rationale"}),
            )],
            "[reasoning content]",
        ),
        (
            vec![ContentBlock::text("a"), image, ContentBlock::text("b")],
            "a\n[image content]\nb",
        ),
        (blocks(""), default),
    ];
    for (feedback, message) in cases {
        let registry = Registry::new();
        keep(&registry, echo());
        deciding(&registry, PostToolDecision::block(feedback.clone()));
        let r = exec(&registry, call("echo", json!({"text": "hi"}))).await;
        assert_eq!(
            to_json(&r),
            json!({"content": feedback, "isError": true, "error": {"message": message}})
        );
    }
}

#[tokio::test]
async fn scenario_068_non_json_block_feedback() {
    // Content blocks are lossless by construction …
    assert!(ContentBlock::new(json!({"type": "text", "text": "x", "n": -0.0})).is_err());
    // … the other feedback part a hook authors, a context's source, is checked at the finish.
    let registry = Registry::new();
    keep(&registry, echo());
    let bad = UserMessage::new("m", blocks("why"), json!({"kind": "plugin", "n": -0.0}));
    deciding(
        &registry,
        PostToolDecision::block(blocks("no")).with_contexts([bad]),
    );
    let r = exec(&registry, call("echo", json!({"text": "hi"}))).await;
    assert_eq!(
        to_json(&r),
        plain_failure("tool result must be losslessly JSON-serializable")
    );
}

#[tokio::test]
async fn scenario_069_value_replacement_on_a_failure() {
    let message = "tools/post-execute cannot replace the value of a failed result";
    let registry = Registry::new();
    keep(&registry, throws_x());
    deciding(
        &registry,
        PostToolDecision::replace_value(json!("replacement")),
    );
    let r = exec(&registry, call("throws", json!({}))).await;
    assert_eq!(to_json(&r), plain_failure(message));
    // Same on a denial.
    let registry = Registry::new();
    keep(&registry, echo());
    registry
        .on_pre_execute(|_e, _n: PreNext| async { Ok(PreToolDecision::deny("no")) })
        .keep();
    deciding(
        &registry,
        PostToolDecision::replace_value(json!("replacement")),
    );
    let r = exec(&registry, call("echo", json!({"text": "hi"}))).await;
    assert_eq!(to_json(&r), plain_failure(message));
}

#[tokio::test]
async fn scenario_071_post_throws() {
    for panics in [false, true] {
        let registry = Registry::new();
        keep(&registry, echo());
        registry
            .on_post_execute(move |_e, _r, _next: PostNext| async move {
                if panics {
                    panic!("post hook broke");
                }
                Err::<PostToolDecision, _>(ToolError::new("post hook broke"))
            })
            .keep();
        let r = exec(&registry, call("echo", json!({"text": "hi"}))).await;
        assert_eq!(to_json(&r), plain_failure("post hook broke"));
    }
}

#[tokio::test]
async fn scenario_072_content_replacement_cannot_revive_a_failure() {
    let registry = Registry::new();
    keep(&registry, throws_x());
    deciding(
        &registry,
        PostToolDecision::replace_content(blocks("softened")),
    );
    let r = exec(&registry, call("throws", json!({}))).await;
    assert_eq!(
        to_json(&r),
        json!({"isError": true, "error": {"message": "x"}, "content": t("softened")})
    );
}

//! G. Contexts and turn conclusion (spec §6.12).

use super::support::*;
use dsh_tools::*;
use serde_json::json;
use std::sync::Arc;

fn um_json(message: &UserMessage) -> serde_json::Value {
    serde_json::to_value(message).unwrap()
}

#[tokio::test]
async fn scenario_073_post_contexts_ride_on_the_result() {
    let registry = Registry::new();
    keep(&registry, echo());
    let fyi = um_from("fyi", "test");
    let accept = {
        let fyi = fyi.clone();
        registry.on_post_execute(move |_e, _r, _n: PostNext| {
            let fyi = fyi.clone();
            async move { Ok(PostToolDecision::accept().with_contexts([fyi])) }
        })
    };
    let r = exec(&registry, call("echo", json!({"text": "hi"}))).await;
    assert_eq!(
        to_json(&r),
        json!({"content": t("hi"), "isError": false, "value": "hi",
               "additionalContexts": [um_json(&fyi)]})
    );
    assert_eq!(
        to_json(&r)["additionalContexts"][0]["source"],
        json!({"kind": "plugin", "plugin": "test"})
    );
    accept.dispose();
    let why = um_from("why it was rejected", "test");
    let w = why.clone();
    registry
        .on_post_execute(move |_e, _r, _n: PostNext| {
            let w = w.clone();
            async move { Ok(PostToolDecision::block(blocks("rejected")).with_contexts([w])) }
        })
        .keep();
    let r = exec(&registry, call("echo", json!({"text": "hi"}))).await;
    assert_eq!(
        to_json(&r),
        json!({"content": t("rejected"), "isError": true, "error": {"message": "rejected"},
               "additionalContexts": [um_json(&why)]})
    );
}

fn deferring(name: &str, tags: &'static [&'static str]) -> ToolDefinition {
    fixture(name, move |_, ctx: ToolRunContext| async move {
        for tag in tags {
            ctx.defer_context(um(tag));
        }
        Ok(json!([{"type": "text", "text": "done"}]))
    })
}

#[tokio::test]
async fn scenario_074_context_ordering() {
    let registry = Registry::new();
    keep(&registry, deferring("t", &["nested-1", "nested-2"]));
    registry
        .on_execute(|_c, next: ExecuteNext| async move {
            let r = next.run().await?;
            let mut contexts = r.additional_contexts().unwrap_or_default().to_vec();
            contexts.push(um("wrapper"));
            Ok(r.with_additional_contexts(contexts))
        })
        .keep();
    let seen = Seen::new();
    let s = seen.clone();
    registry
        .on_post_execute(move |_e, r: ToolExecutionResult, next: PostNext| {
            s.put(context_sources(&r));
            async move { Ok(next.run().await?.with_contexts_first(vec![um("post")])) }
        })
        .keep();
    let r = exec(&registry, call("t", json!({}))).await;
    assert!(!r.is_error());
    assert_eq!(
        context_sources(&r),
        ["nested-1", "nested-2", "wrapper", "post"]
    );
    assert_eq!(seen.only(), ["nested-1", "nested-2", "wrapper"]);
}

#[tokio::test]
async fn scenario_076_late_failures_drop_contexts() {
    // (a) A wrapper that throws after the body deferred a context.
    let registry = Registry::new();
    keep(&registry, deferring("t", &["d1"]));
    registry
        .on_execute(|_c, next: ExecuteNext| async move {
            next.run().await?;
            Err::<ToolExecutionResult, _>(ToolError::new("late wrapper failure"))
        })
        .keep();
    let r = exec(&registry, call("t", json!({}))).await;
    assert_eq!(to_json(&r), plain_failure("late wrapper failure"));

    // (b) A post-execute listener that throws.
    let registry = Registry::new();
    keep(&registry, deferring("t", &["d1"]));
    registry
        .on_post_execute(|_e, _r, _n: PostNext| async {
            Err::<PostToolDecision, _>(ToolError::new("post failure"))
        })
        .keep();
    let r = exec(&registry, call("t", json!({}))).await;
    assert_eq!(to_json(&r), plain_failure("post failure"));

    // (c) A post-execute value replacement the output schema rejects.
    let registry = Registry::new();
    keep(&registry, deferring("t", &["d1"]));
    registry
        .on_post_execute(|_e, _r, _n: PostNext| async {
            Ok(PostToolDecision::replace_value(json!("not content")))
        })
        .keep();
    let r = exec(&registry, call("t", json!({}))).await;
    assert_eq!(
        to_json(&r),
        coded_failure(
            "tool \"t\" returned invalid output: \"value\" must be an array",
            "ToolOutputError",
            "INVALID_TOOL_OUTPUT"
        )
    );

    // A render failure (and a body failure) keep the deferred context.
    let registry = Registry::new();
    let render_fails = ToolDefinition::new(
        "render-fails",
        "defers, then its render panics",
        json!({"type": "object"}),
        OutputDecl::new(json!({"type": "string"}), |_, _| panic!("render broke")),
        |_, ctx: ToolRunContext| async move {
            ctx.defer_context(um("d1"));
            Ok(json!("v"))
        },
    );
    keep(&registry, render_fails);
    let body_fails = ToolDefinition::new(
        "body-fails",
        "defers, then fails",
        json!({"type": "object"}),
        OutputDecl::text(),
        |_, ctx: ToolRunContext| async move {
            ctx.defer_context(um("d1"));
            Err(ToolError::new("body failure"))
        },
    );
    keep(&registry, body_fails);
    let r = exec(&registry, call("render-fails", json!({}))).await;
    assert_eq!(r.code(), Some("INVALID_TOOL_OUTPUT"));
    assert_eq!(context_sources(&r), ["d1"]);
    let r = exec(&registry, call("body-fails", json!({}))).await;
    assert_eq!(
        to_json(&r),
        with(
            plain_failure("body failure"),
            "additionalContexts",
            json!([um_json(&um("d1"))])
        )
    );
}

fn terminal_nested(throws: bool) -> ToolDefinition {
    ToolDefinition::new(
        "terminal-nested",
        "concludes the turn",
        json!({"type": "object"}),
        OutputDecl::text(),
        move |_, ctx: ToolRunContext| async move {
            ctx.conclude_turn();
            if throws {
                return Err(ToolError::new("concluded, then failed"));
            }
            Ok(json!("terminal"))
        },
    )
}

fn composite() -> ToolDefinition {
    ToolDefinition::new(
        "composite",
        "dispatches terminal-nested",
        json!({"type": "object"}),
        OutputDecl::text(),
        |_, ctx: ToolRunContext| async move {
            let input = ToolExecutionInput::new(
                "c1.1",
                "terminal-nested",
                json!({}),
                ctx.signal().child_token(),
            )
            .parent(ctx.execution().token());
            let nested = ctx.registry().execute(input).await;
            if nested.concludes_turn() {
                ctx.conclude_turn();
            }
            Ok(json!(nested.text()))
        },
    )
}

fn block_nested(registry: &Registry) -> Registration {
    registry.on_post_execute(|e: Arc<ToolExecution>, _r, next: PostNext| async move {
        if e.name() == "terminal-nested" {
            Ok(PostToolDecision::block(blocks("blocked")))
        } else {
            next.run().await
        }
    })
}

#[tokio::test]
async fn scenario_077_conclude_turn_through_a_composite() {
    let registry = Registry::new();
    keep(&registry, terminal_nested(false));
    keep(&registry, composite());
    let blocker = block_nested(&registry);
    let r = exec(&registry, call("composite", json!({}))).await;
    assert_eq!(
        to_json(&r),
        json!({"content": t("blocked"), "isError": false, "value": "blocked"})
    );
    blocker.dispose();
    let r = exec(&registry, call("composite", json!({}))).await;
    assert_eq!(
        to_json(&r),
        json!({"content": t("terminal"), "isError": false, "value": "terminal",
               "concludesTurn": true})
    );
    // Content replacement keeps the marker; value replacement re-reads it.
    let replace = registry.on_post_execute(|_e, _r, _n: PostNext| async {
        Ok(PostToolDecision::replace_content(blocks("replaced")))
    });
    let r = exec(&registry, call("terminal-nested", json!({}))).await;
    assert_eq!(
        to_json(&r),
        json!({"content": t("replaced"), "isError": false, "value": "terminal",
               "concludesTurn": true})
    );
    replace.dispose();
    let _value = registry.on_post_execute(|_e, _r, _n: PostNext| async {
        Ok(PostToolDecision::replace_value(json!("other")))
    });
    let r = exec(&registry, call("terminal-nested", json!({}))).await;
    assert_eq!(
        to_json(&r),
        json!({"content": t("other"), "isError": false, "value": "other",
               "concludesTurn": true})
    );
    // A body that concludes and then fails has no marker.
    let registry = Registry::new();
    keep(&registry, terminal_nested(true));
    let r = exec(&registry, call("terminal-nested", json!({}))).await;
    assert_eq!(to_json(&r), plain_failure("concluded, then failed"));
}

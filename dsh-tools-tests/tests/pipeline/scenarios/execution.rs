//! B. Basic execution and failure normalization (spec §6.5, §6.6, §6.9).

use super::support::*;
use dsh_tools::*;
use serde_json::{Value, json};
use std::sync::Arc;

#[tokio::test]
async fn scenario_012_success() {
    let registry = Registry::new();
    let trace = Trace::new();
    keep(&registry, traced_echo(&trace));
    trace_all(&registry, &trace);
    let observed = Seen::new();
    let o = observed.clone();
    registry
        .on_result(move |_e: &ToolExecution, r: &ToolExecutionResult| {
            o.put(r.clone());
            Ok(())
        })
        .keep();
    let r = exec(&registry, call("echo", json!({"text": "hi"}))).await;
    assert_eq!(
        to_json(&r),
        json!({"content": t("hi"), "isError": false, "value": "hi"})
    );
    assert_eq!(observed.only(), r);
    assert_eq!(
        trace.get(),
        [
            "pre",
            "guard",
            "around:before",
            "body",
            "around:after",
            "post:ok",
            "result:ok"
        ]
    );
}

#[tokio::test]
async fn scenario_013_hook_order_pre_post() {
    let registry = Registry::new();
    keep(&registry, echo());
    let trace = Trace::new();
    let tr = trace.clone();
    registry
        .on_pre_execute(move |_e, next: PreNext| {
            let tr = tr.clone();
            async move {
                tr.push("pre:before");
                let d = next.run().await;
                tr.push("pre:after");
                d
            }
        })
        .keep();
    let tr = trace.clone();
    registry
        .on_post_execute(move |_e, _r, next: PostNext| {
            let tr = tr.clone();
            async move {
                tr.push("post:before");
                let d = next.run().await;
                tr.push("post:after");
                d
            }
        })
        .keep();
    let r = exec(&registry, call("echo", json!({"text": "hi"}))).await;
    assert!(!r.is_error());
    assert_eq!(
        trace.get(),
        ["pre:before", "pre:after", "post:before", "post:after"]
    );
}

#[tokio::test]
async fn scenario_014_hook_order_around() {
    let registry = Registry::new();
    let trace = Trace::new();
    let tr = trace.clone();
    keep(
        &registry,
        fixture("traced", move |args, _| {
            tr.push("dispatch");
            let text = args["text"].clone();
            async move { Ok(json!([{"type": "text", "text": text}])) }
        }),
    );
    let tr = trace.clone();
    registry
        .on_pre_execute(move |_e, next: PreNext| {
            tr.push("pre");
            next.run()
        })
        .keep();
    let tr = trace.clone();
    registry
        .on_execute(move |_c, next: ExecuteNext| {
            let tr = tr.clone();
            async move {
                tr.push("execute:before");
                let r = next.run().await;
                tr.push("execute:after");
                r
            }
        })
        .keep();
    let tr = trace.clone();
    registry
        .on_post_execute(move |_e, _r, next: PostNext| {
            tr.push("post");
            next.run()
        })
        .keep();
    let r = exec(&registry, call("traced", json!({"text": "hi"}))).await;
    assert_eq!(
        to_json(&r),
        json!({"content": t("hi"), "isError": false, "value": [{"type": "text", "text": "hi"}]})
    );
    assert_eq!(
        trace.get(),
        ["pre", "execute:before", "dispatch", "execute:after", "post"]
    );
}

#[tokio::test]
async fn scenario_016_nested_calls_get_no_meta() {
    let registry = Registry::new();
    keep(
        &registry,
        returning(
            "card",
            OutputDecl::text().presentation_meta(|_, _| json!({"card": true})),
            json!(""),
        ),
    );
    let tokens = Seen::new();
    let tk = tokens.clone();
    registry
        .on_result(move |e: &ToolExecution, _r: &ToolExecutionResult| {
            tk.put(e.token());
            Ok(())
        })
        .keep();
    let direct = exec(&registry, call("card", json!({}))).await;
    assert_eq!(
        to_json(&direct),
        json!({"content": t(""), "isError": false, "value": "", "meta": {"card": true}})
    );
    let parent = tokens.only();
    let nested = exec(&registry, call("card", json!({})).parent(parent)).await;
    assert_eq!(
        to_json(&nested),
        json!({"content": t(""), "isError": false, "value": ""})
    );
}

#[tokio::test]
async fn scenario_017_unknown_tool() {
    let registry = Registry::new();
    let finalized = Counter::new();
    let f = finalized.clone();
    keep(
        &registry,
        raw("other").finalize_content(move |_, _| {
            f.bump();
            None
        }),
    );
    let trace = Trace::new();
    trace_all(&registry, &trace);
    let r = exec(&registry, call("nope", json!({}))).await;
    assert_eq!(
        to_json(&r),
        coded_failure("unknown tool \"nope\"", "ToolNotFoundError", "UNKNOWN_TOOL")
    );
    assert_eq!(
        trace.get(),
        [
            "pre",
            "guard",
            "around:before",
            "around:after",
            "post:UNKNOWN_TOOL",
            "result:UNKNOWN_TOOL"
        ]
    );
    assert_eq!(finalized.get(), 0);
}

#[tokio::test]
async fn scenario_018_throwing_body() {
    let registry = Registry::new();
    let failing = |name: &str| {
        ToolDefinition::new(
            name,
            "fails",
            json!({"type": "object"}),
            OutputDecl::text(),
            |_, _| async { Err(ToolError::new("exploded")) },
        )
    };
    keep(&registry, failing("throws"));
    // The Rust analogue of a thrown value: a panic (spec §6.9.3).
    keep(
        &registry,
        ToolDefinition::new(
            "panics",
            "panics",
            json!({"type": "object"}),
            OutputDecl::text(),
            |_, _| async { panic!("exploded") },
        ),
    );
    keep(
        &registry,
        ToolDefinition::new(
            "panics-sync",
            "panics before returning a future",
            json!({"type": "object"}),
            OutputDecl::text(),
            |_, _| -> std::future::Ready<Result<Value, ToolError>> { panic!("exploded") },
        ),
    );
    for name in ["throws", "panics", "panics-sync"] {
        let r = exec(&registry, call(name, json!({}))).await;
        assert_eq!(to_json(&r), plain_failure("exploded"), "{name}");
    }
}

#[tokio::test]
async fn scenario_019_harness_error_body() {
    let registry = Registry::new();
    keep(
        &registry,
        ToolDefinition::new(
            "disk",
            "fails with a code",
            json!({"type": "object"}),
            OutputDecl::text(),
            |_, _| async { Err(ToolError::coded("HarnessError", "ENOSPC", "disk full")) },
        ),
    );
    keep(
        &registry,
        ToolDefinition::new(
            "plain",
            "fails without one",
            json!({"type": "object"}),
            OutputDecl::text(),
            |_, _| async { Err(ToolError::new("just a message")) },
        ),
    );
    let r = exec(&registry, call("disk", json!({}))).await;
    assert_eq!(
        to_json(&r),
        coded_failure("disk full", "HarnessError", "ENOSPC")
    );
    let r = exec(&registry, call("plain", json!({}))).await;
    assert_eq!(to_json(&r), plain_failure("just a message"));
}

fn reader(trace: Option<Trace>) -> ToolDefinition {
    define_tool_traced(
        trace,
        "reader",
        "reads a path",
        json!({"path": {"type": "string", "required": true}}),
        content_output(),
        |args, _| async move {
            let path = args["path"].as_str().unwrap_or_default().to_owned();
            Ok(json!([{"type": "text", "text": format!("read {path}")}]))
        },
    )
}

#[tokio::test]
async fn scenario_021_define_tool_invalid_arguments() {
    let registry = Registry::new();
    let trace = Trace::new();
    keep(&registry, reader(Some(trace.clone())));
    trace_all(&registry, &trace);
    let r = exec(&registry, call("reader", json!({}))).await;
    assert_eq!(
        to_json(&r),
        coded_failure(
            "invalid arguments: missing required property \"path\"",
            "ToolArgsError",
            "INVALID_ARGS"
        )
    );
    assert_eq!(
        trace.get(),
        [
            "pre",
            "guard",
            "around:before",
            "body",
            "around:after",
            "post:INVALID_ARGS",
            "result:INVALID_ARGS"
        ]
    );
}

#[tokio::test]
async fn scenario_022_define_tool_valid_arguments() {
    let registry = Registry::new();
    keep(&registry, reader(None));
    let r = exec(&registry, call("reader", json!({"path": "/x"}))).await;
    assert_eq!(
        to_json(&r),
        json!({"content": t("read /x"), "isError": false,
               "value": [{"type": "text", "text": "read /x"}]})
    );
}

#[tokio::test]
async fn scenario_023_raw_tools_are_not_validated() {
    let registry = Registry::new();
    let seen = Seen::new();
    let s = seen.clone();
    keep(
        &registry,
        ToolDefinition::new(
            "raw",
            "validates nothing",
            json!({"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}),
            OutputDecl::text(),
            move |args: Arc<Value>, _| {
                s.put((*args).clone());
                async { Ok(json!("ran:raw")) }
            },
        ),
    );
    let r = exec(&registry, call("raw", json!({}))).await;
    assert_eq!(
        to_json(&r),
        json!({"content": t("ran:raw"), "isError": false, "value": "ran:raw"})
    );
    assert_eq!(seen.only(), json!({}));
}

#[tokio::test]
async fn scenario_024_loop_argument_parsing_feeds_the_registry() {
    let registry = Registry::new();
    keep(&registry, reader(None));
    // The agent loop passes arguments that failed JSON parsing on as the raw string (§7.2).
    let unparsed = "{\"path\": \"/x\"";
    assert!(serde_json::from_str::<Value>(unparsed).is_err());
    let r = exec(&registry, call("reader", json!(unparsed))).await;
    assert_eq!(
        to_json(&r),
        coded_failure(
            "invalid arguments: \"arguments\" must be an object",
            "ToolArgsError",
            "INVALID_ARGS"
        )
    );
}

fn output_failure(tool: &str, violation: &str) -> Value {
    coded_failure(
        &format!("tool \"{tool}\" returned invalid output: {violation}"),
        "ToolOutputError",
        "INVALID_TOOL_OUTPUT",
    )
}

#[tokio::test]
async fn scenario_026_body_value_not_lossless() {
    // Rust analogue of a throwing snapshot getter: the one non-lossless `Value`, `-0`.
    let registry = Registry::new();
    keep(
        &registry,
        returning(
            "neg",
            OutputDecl::json(json!({"type": "number"})),
            negative_zero(),
        ),
    );
    keep(
        &registry,
        returning(
            "nested-neg",
            OutputDecl::json(json!({"type": "object", "additionalProperties": true})),
            json!({"a": [1, {"b": -0.0}]}),
        ),
    );
    let r = exec(&registry, call("neg", json!({}))).await;
    assert_eq!(
        to_json(&r),
        output_failure("neg", "value is not lossless JSON")
    );
    let r = exec(&registry, call("nested-neg", json!({}))).await;
    assert_eq!(
        to_json(&r),
        output_failure("nested-neg", "value is not lossless JSON")
    );
}

#[tokio::test]
async fn scenario_027_throwing_projectors() {
    let registry = Registry::new();
    keep(
        &registry,
        returning(
            "render-throws",
            OutputDecl::new(json!({"type": "string"}), |_, _| {
                panic!("renderer exploded")
            }),
            json!("v"),
        ),
    );
    keep(
        &registry,
        returning(
            "meta-throws",
            OutputDecl::text().presentation_meta(|_, _| panic!("metadata exploded")),
            json!("v"),
        ),
    );
    let r = exec(&registry, call("render-throws", json!({}))).await;
    assert_eq!(
        to_json(&r),
        output_failure("render-throws", "output.render failed: renderer exploded")
    );
    assert_eq!(r.value(), None);
    let r = exec(&registry, call("meta-throws", json!({}))).await;
    assert_eq!(
        to_json(&r),
        output_failure(
            "meta-throws",
            "output.presentationMeta failed: metadata exploded"
        )
    );
    assert_eq!(r.value(), None);
}

#[tokio::test]
async fn scenario_028_non_json_metadata() {
    let registry = Registry::new();
    keep(
        &registry,
        returning(
            "bad-meta",
            OutputDecl::text().presentation_meta(|_, _| json!({"score": -0.0})),
            json!("v"),
        ),
    );
    let observed = Seen::new();
    let o = observed.clone();
    registry
        .on_result(move |_e: &ToolExecution, r: &ToolExecutionResult| {
            o.put(r.is_error());
            Ok(())
        })
        .keep();
    let r = exec(&registry, call("bad-meta", json!({}))).await;
    assert!(r.is_error());
    assert!(r.text().starts_with("Error:"), "{}", r.text());
    assert_eq!(r.code(), Some("INVALID_TOOL_OUTPUT"));
    assert_eq!(
        to_json(&r),
        output_failure(
            "bad-meta",
            "output.presentationMeta returned non-lossless JSON"
        )
    );
    assert_eq!(observed.all(), [true]);
}

#[tokio::test]
async fn scenario_029_meta_failure_reaches_the_finalizer_once() {
    let registry = Registry::new();
    let finalized = Counter::new();
    let f = finalized.clone();
    let long = "metadata exploded ".repeat(20);
    keep(
        &registry,
        returning(
            "throwing-meta",
            OutputDecl::text().presentation_meta(move |_, _| panic!("{long}")),
            json!("v"),
        )
        .finalize_content(move |_, r| {
            f.bump();
            let truncated = r
                .content()
                .iter()
                .map(|b| match b.as_text() {
                    Some(text) => ContentBlock::text(text.chars().take(32).collect::<String>()),
                    None => b.clone(),
                })
                .collect();
            Some(truncated)
        }),
    );
    let r = exec(&registry, call("throwing-meta", json!({}))).await;
    let text = r.text();
    assert!(text.starts_with("Error: tool \"throwing-meta\""), "{text}");
    assert_eq!(text.chars().count(), 32);
    assert_eq!(r.code(), Some("INVALID_TOOL_OUTPUT"));
    assert_eq!(finalized.get(), 1);
}

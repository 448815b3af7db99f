//! E. Around-dispatch wrappers (`tools/execute`, spec §6.5).

use super::support::*;
use dsh_tools::*;
use serde_json::json;
use std::sync::{Arc, Mutex};

fn failing(name: &str, error: ToolError) -> ToolDefinition {
    ToolDefinition::new(
        name,
        "fails",
        json!({"type": "object"}),
        OutputDecl::text(),
        move |_, _| {
            let error = error.clone();
            async move { Err(error) }
        },
    )
}

fn post_log(registry: &Registry) -> Seen<ToolExecutionResult> {
    let seen = Seen::new();
    let s = seen.clone();
    registry
        .on_post_execute(move |_e, r: ToolExecutionResult, next: PostNext| {
            s.put(r);
            next.run()
        })
        .keep();
    seen
}

#[tokio::test]
async fn scenario_051_wrapper_sees_normalized_failures() {
    let registry = Registry::new();
    keep(
        &registry,
        failing("t", ToolError::coded("HarnessError", "BOOM", "kaboom")),
    );
    let inner = Seen::new();
    let s = inner.clone();
    registry
        .on_execute(move |_c, next: ExecuteNext| {
            let s = s.clone();
            async move {
                let r = next.run().await;
                s.put(r.clone().map(|r| to_json(&r)));
                r
            }
        })
        .keep();
    let r = exec(&registry, call("t", json!({}))).await;
    let expected = coded_failure("kaboom", "HarnessError", "BOOM");
    assert_eq!(inner.only(), Ok(expected.clone()));
    assert_eq!(to_json(&r), expected);
}

#[tokio::test]
async fn scenario_052_thrown_tool_reaches_post_execute() {
    let registry = Registry::new();
    keep(&registry, failing("t", ToolError::new("exploded")));
    registry
        .on_execute(|_c, next: ExecuteNext| next.run())
        .keep();
    let posts = post_log(&registry);
    let r = exec(&registry, call("t", json!({}))).await;
    assert_eq!(to_json(&r), plain_failure("exploded"));
    assert!(posts.only().is_error());
}

#[tokio::test]
async fn scenario_053_immutable_outcomes() {
    // Results are immutable values: a wrapper can only build a modified copy, and a modified
    // success is re-rendered from its value; post-execute holds its own copy.
    let registry = Registry::new();
    keep(&registry, raw_reply("t", "original"));
    registry
        .on_execute(|_c, next: ExecuteNext| async move {
            let r = next.run().await?;
            Ok(r.with_content(blocks("tampered"))
                .with_meta(Some(json!({"forged": true}))))
        })
        .keep();
    let posts = post_log(&registry);
    let r = exec(&registry, call("t", json!({}))).await;
    let expected = json!({"content": t("original"), "isError": false, "value": "original"});
    assert_eq!(to_json(&r), expected);
    assert_eq!(to_json(&posts.only()), expected);
}

#[tokio::test]
async fn scenario_054_short_circuit_success_is_re_rendered() {
    let registry = Registry::new();
    let runs = Counter::new();
    keep(&registry, counted("t", &runs));
    let short = registry.on_execute(|_c, _next: ExecuteNext| async {
        Ok(ToolExecutionResult::success(json!("short-circuited"))
            .with_content(blocks("ignored authored content")))
    });
    let r = exec(&registry, call("t", json!({}))).await;
    assert_eq!(
        to_json(&r),
        json!({"content": t("short-circuited"), "isError": false, "value": "short-circuited"})
    );
    assert_eq!(runs.get(), 0);
    short.dispose();
    // A copy of the real success with other content is re-rendered too …
    let spread = registry.on_execute(|_c, next: ExecuteNext| async move {
        Ok(next.run().await?.with_content(blocks("swapped")))
    });
    let r = exec(&registry, call("t", json!({}))).await;
    assert_eq!(
        to_json(&r),
        json!({"content": t("ran:t"), "isError": false, "value": "ran:t"})
    );
    spread.dispose();
    // … and so is the canonical result of another call (a cache hit).
    let cached: Arc<Mutex<Option<ToolExecutionResult>>> = Arc::default();
    let c = Arc::clone(&cached);
    let cache = registry.on_execute(move |_c, next: ExecuteNext| {
        let c = Arc::clone(&c);
        async move {
            let hit = c.lock().unwrap().clone();
            match hit {
                Some(hit) => Ok(hit),
                None => {
                    let r = next.run().await?;
                    *c.lock().unwrap() = Some(r.clone());
                    Ok(r)
                }
            }
        }
    });
    let before = runs.get();
    exec(&registry, call("t", json!({}))).await;
    let r = exec(&registry, call("t", json!({}))).await;
    assert_eq!(
        to_json(&r),
        json!({"content": t("ran:t"), "isError": false, "value": "ran:t"})
    );
    assert_eq!(
        runs.get(),
        before + 1,
        "the second call was served from the cache"
    );
    cache.dispose();
    // … while the same on a failure keeps the wrapper's content.
    keep(&registry, failing("f", ToolError::new("x")));
    registry
        .on_execute(|_c, next: ExecuteNext| async move {
            Ok(next.run().await?.with_content(blocks("swapped")))
        })
        .keep();
    let r = exec(&registry, call("f", json!({}))).await;
    assert_eq!(
        to_json(&r),
        json!({"content": t("swapped"), "isError": true, "error": {"message": "x"}})
    );
}

#[tokio::test]
async fn scenario_056_wrapper_authored_success_contexts() {
    let registry = Registry::new();
    keep(&registry, echo());
    registry
        .on_execute(|_c, next: ExecuteNext| async move {
            let r = next.run().await?;
            Ok(r.with_additional_contexts(vec![um_from("from around dispatch", "test")]))
        })
        .keep();
    let r = exec(&registry, call("echo", json!({"text": "hi"}))).await;
    assert_eq!(
        to_json(&r),
        json!({
            "content": t("hi"), "isError": false, "value": "hi",
            "additionalContexts": [{"id": "m-from around dispatch", "role": "user",
                                    "content": t("from around dispatch"),
                                    "source": {"kind": "plugin", "plugin": "test"}}]
        })
    );
}

#[tokio::test]
async fn scenario_057_wrapper_throws() {
    let registry = Registry::new();
    keep(&registry, echo());
    registry
        .on_execute(|_c, _next: ExecuteNext| async {
            Err::<ToolExecutionResult, _>(ToolError::new("wrapper broke"))
        })
        .keep();
    let posts = post_log(&registry);
    let r = exec(&registry, call("echo", json!({"text": "hi"}))).await;
    assert_eq!(to_json(&r), plain_failure("wrapper broke"));
    assert!(posts.all().is_empty());
    // A panicking wrapper is the same failure.
    let registry = Registry::new();
    keep(&registry, echo());
    registry
        .on_execute(|_c, _next: ExecuteNext| async { panic!("wrapper broke") })
        .keep();
    let r = exec(&registry, call("echo", json!({"text": "hi"}))).await;
    assert_eq!(to_json(&r), plain_failure("wrapper broke"));
}

#[tokio::test]
async fn scenario_058_wrapper_authored_failure_kept_verbatim() {
    let registry = Registry::new();
    keep(&registry, echo());
    registry
        .on_execute(|_c, next: ExecuteNext| async move {
            next.run().await?;
            Ok(
                ToolExecutionResult::failure(ToolError::new("wrapped failure"))
                    .with_content(blocks("wrapper content"))
                    .with_meta(Some(json!({"wrapped": true})))
                    .with_additional_contexts(vec![um("w")]),
            )
        })
        .keep();
    let r = exec(&registry, call("echo", json!({"text": "hi"}))).await;
    assert_eq!(
        to_json(&r),
        json!({
            "content": t("wrapper content"),
            "isError": true,
            "error": {"message": "wrapped failure"},
            "meta": {"wrapped": true},
            "additionalContexts": [serde_json::to_value(um("w")).unwrap()]
        })
    );
}

#[tokio::test]
async fn scenario_059_wrapper_success_after_the_tool_disappeared() {
    let registry = Registry::new();
    let slot = Arc::new(Mutex::new(Some(registry.register(echo()).unwrap())));
    registry
        .on_execute(move |_c, _next: ExecuteNext| {
            if let Some(r) = slot.lock().unwrap().take() {
                r.dispose();
            }
            async { Ok(ToolExecutionResult::success(json!("replacement")).with_content(vec![])) }
        })
        .keep();
    let posts = post_log(&registry);
    let r = exec(&registry, call("echo", json!({"text": "hi"}))).await;
    assert_eq!(
        to_json(&r),
        coded_failure("unknown tool \"echo\"", "ToolNotFoundError", "UNKNOWN_TOOL")
    );
    assert!(posts.all().is_empty(), "final: post-execute skipped");
}

#[tokio::test]
async fn scenario_061_signal_restored_for_post() {
    let registry = Registry::new();
    keep(&registry, echo());
    let replacement = CancellationToken::new();
    let rep = replacement.clone();
    registry
        .on_execute(move |_c, next: ExecuteNext| next.run_with_signal(rep.clone()))
        .keep();
    let inner = Seen::new();
    let s = inner.clone();
    registry
        .on_execute(move |c: ExecuteCall, next: ExecuteNext| {
            s.put((c.signal.clone(), c.execution.signal().clone()));
            next.run()
        })
        .keep();
    let post = Seen::new();
    let p = post.clone();
    registry
        .on_post_execute(move |e: Arc<ToolExecution>, _r, next: PostNext| {
            p.put(e.signal().clone());
            next.run()
        })
        .keep();
    let caller = CancellationToken::new();
    let r = exec(&registry, call_with("echo", json!({"text": "hi"}), &caller)).await;
    assert_eq!(r.text(), "hi");
    let (installed, during) = inner.only();
    assert!(same_token(&installed, &replacement));
    let post_signal = post.only();
    assert!(fires_with(&post_signal, &caller));
    assert!(
        during.is_cancelled(),
        "the execution's signal is the caller's"
    );
}

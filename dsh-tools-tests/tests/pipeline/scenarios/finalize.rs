//! C. `finalizeContent` (spec §6.2.2, §6.8).

use super::support::*;
use dsh_tools::*;
use serde_json::json;
use std::sync::{Arc, Mutex};

#[tokio::test]
async fn scenario_031_identity_finalizer() {
    let registry = Registry::new();
    let finalized = Counter::new();
    let f = finalized.clone();
    keep(
        &registry,
        echo().finalize_content(move |_, _| {
            f.bump();
            None
        }),
    );
    let r = exec(&registry, call("echo", json!({}))).await;
    assert_eq!(
        to_json(&r),
        json!({"content": t(""), "isError": false, "value": ""})
    );
    assert_eq!(finalized.get(), 1);
}

#[tokio::test]
async fn scenario_032_snapshotted_at_call_start_runs_on_outer_failures() {
    let registry = Registry::new();
    let finalized = Counter::new();
    let f = finalized.clone();
    let bounded =
        fixture("bounded", |_, _| async { Ok(json!([])) }).finalize_content(move |e, r| {
            f.bump();
            assert_eq!(e.name(), "bounded");
            assert!(r.is_error());
            Some(blocks("bounded failure"))
        });
    let registration = Arc::new(Mutex::new(Some(registry.register(bounded).unwrap())));
    registry
        .on_pre_execute(move |_e, _next: PreNext| {
            // Unregister the tool mid-call, then fail.
            if let Some(r) = registration.lock().unwrap().take() {
                r.dispose();
            }
            async {
                Err::<PreToolDecision, _>(ToolError::coded(
                    "HarnessError",
                    "POLICY_FAILED",
                    "policy failed",
                ))
            }
        })
        .keep();
    let r = exec(&registry, call("bounded", json!({}))).await;
    assert_eq!(
        to_json(&r),
        json!({
            "content": t("bounded failure"),
            "isError": true,
            "error": {"message": "policy failed",
                      "info": {"name": "HarnessError", "code": "POLICY_FAILED"}}
        })
    );
    assert!(registry.get("bounded", None).is_none());
    assert_eq!(finalized.get(), 1);
}

#[tokio::test]
async fn scenario_033_finalizer_replaces_only_content() {
    let registry = Registry::new();
    let tool = ToolDefinition::new(
        "keeps",
        "success with meta and a deferred context",
        json!({"type": "object"}),
        OutputDecl::text().presentation_meta(|_, v| json!({"shown": v})),
        |_, ctx: ToolRunContext| async move {
            ctx.defer_context(um("d1"));
            Ok(json!("x"))
        },
    )
    .finalize_content(|_, r| {
        assert!(!r.is_error());
        Some(blocks("F"))
    });
    keep(&registry, tool);
    let r = exec(&registry, call("keeps", json!({}))).await;
    assert_eq!(
        to_json(&r),
        json!({
            "content": t("F"),
            "isError": false,
            "value": "x",
            "meta": {"shown": "x"},
            "additionalContexts": [{"id": "m-d1", "role": "user", "content": t("d1"),
                                    "source": {"kind": "plugin", "plugin": "d1"}}]
        })
    );
}

#[tokio::test]
async fn scenario_034_finalizer_on_argument_failure() {
    let registry = Registry::new();
    let finalized = Seen::new();
    let f = finalized.clone();
    keep(
        &registry,
        echo().finalize_content(move |e, r| {
            f.put((e.arguments().cloned(), r.text()));
            None
        }),
    );
    let message = "tool execution arguments must be losslessly JSON-serializable";
    let r = exec(
        &registry,
        call("echo", json!({"text": "hi", "n": negative_zero()})),
    )
    .await;
    assert_eq!(to_json(&r), plain_failure(message));
    assert_eq!(finalized.only(), (None, format!("Error: {message}")));
}

/// Spec §6.8.3: a panicking finalizer fails the call with its message and is not called again.
#[tokio::test]
async fn spec_6_8_panicking_finalizer() {
    let registry = Registry::new();
    let finalized = Counter::new();
    let f = finalized.clone();
    keep(
        &registry,
        echo().finalize_content(move |_, _| {
            f.bump();
            panic!("finalizer violated its total contract")
        }),
    );
    let r = exec(&registry, call("echo", json!({"text": "hi"}))).await;
    assert_eq!(
        to_json(&r),
        plain_failure("finalizer violated its total contract")
    );
    assert_eq!(finalized.get(), 1);
}

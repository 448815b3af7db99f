//! H. Cancellation (spec §8). Every "meanwhile, the caller aborts" is made deterministic: the
//! hook (or body) cancels a `reached` latch and then waits for the caller's abort.

use super::support::*;
use dsh_tools::*;
use serde_json::json;
use std::sync::Arc;

/// A pre-execute listener that waits for the caller's abort and then delegates.
fn pre_waits_then_delegates(registry: &Registry, reached: &CancellationToken) {
    let reached = reached.clone();
    registry
        .on_pre_execute(move |e: Arc<ToolExecution>, next: PreNext| {
            let reached = reached.clone();
            async move {
                reached.cancel();
                e.signal().cancelled().await;
                next.run().await
            }
        })
        .keep();
}

#[tokio::test]
async fn scenario_078_cancelled_while_pre_execute_awaits() {
    let registry = Registry::new();
    let trace = Trace::new();
    keep(&registry, traced_echo(&trace));
    trace_all(&registry, &trace);
    let reached = CancellationToken::new();
    pre_waits_then_delegates(&registry, &reached);
    let r = abort_at(&registry, call("echo", json!({"text": "hi"})), &reached).await;
    assert_eq!(to_json(&r), aborted_before_dispatch());
    assert_eq!(
        trace.get(),
        [
            "pre",
            "guard",
            "post:ABORTED_BEFORE_DISPATCH",
            "result:ABORTED_BEFORE_DISPATCH"
        ]
    );
}

#[tokio::test]
async fn scenario_079_guard_denial_beats_that_cancellation() {
    let registry = Registry::new();
    let runs = Counter::new();
    keep(&registry, counted("echo", &runs));
    let reached = CancellationToken::new();
    pre_waits_then_delegates(&registry, &reached);
    registry
        .guard(|_e: &ToolExecution| Some("guard says no".to_owned()))
        .keep();
    let r = abort_at(&registry, call("echo", json!({})), &reached).await;
    assert_eq!(to_json(&r), plain_failure("guard says no"));
    assert_eq!(runs.get(), 0);
    // A pre-execute denial that settles after the abort is kept as well (§6.3.5).
    let registry = Registry::new();
    keep(&registry, counted("echo", &runs));
    let reached = CancellationToken::new();
    let rc = reached.clone();
    registry
        .on_pre_execute(move |e: Arc<ToolExecution>, _next: PreNext| {
            let rc = rc.clone();
            async move {
                rc.cancel();
                e.signal().cancelled().await;
                Ok(PreToolDecision::deny("late denial"))
            }
        })
        .keep();
    let r = abort_at(&registry, call("echo", json!({})), &reached).await;
    assert_eq!(to_json(&r), plain_failure("late denial"));
    assert_eq!(runs.get(), 0);
}

#[tokio::test]
async fn scenario_081_pre_failure_settling_after_cancel_is_kept() {
    let registry = Registry::new();
    keep(&registry, echo());
    let reached = CancellationToken::new();
    let rc = reached.clone();
    registry
        .on_pre_execute(move |e: Arc<ToolExecution>, _next: PreNext| {
            let rc = rc.clone();
            async move {
                rc.cancel();
                e.signal().cancelled().await;
                Err::<PreToolDecision, _>(ToolError::new("gate interrupted"))
            }
        })
        .keep();
    let r = abort_at(&registry, call("echo", json!({})), &reached).await;
    assert_eq!(
        to_json(&r),
        json!({"content": t("Error: gate interrupted"), "isError": true,
               "error": {"message": "gate interrupted"}})
    );
}

/// A wrapper that waits for the caller's abort, then delegates with a fresh replacement signal.
fn wrapper_waits_then_replaces(registry: &Registry, reached: &CancellationToken) {
    let reached = reached.clone();
    registry
        .on_execute(move |c: ExecuteCall, next: ExecuteNext| {
            let reached = reached.clone();
            async move {
                reached.cancel();
                c.execution.signal().cancelled().await;
                next.run_with_signal(CancellationToken::new()).await
            }
        })
        .keep();
}

#[tokio::test]
async fn scenario_082_cancelled_while_a_wrapper_waits_before_next() {
    let registry = Registry::new();
    let runs = Counter::new();
    keep(&registry, counted("t", &runs));
    let reached = CancellationToken::new();
    wrapper_waits_then_replaces(&registry, &reached);
    let posts = Seen::new();
    let p = posts.clone();
    registry
        .on_post_execute(move |_e, r: ToolExecutionResult, next: PostNext| {
            p.put(code_of(&r));
            next.run()
        })
        .keep();
    let r = abort_at(&registry, call("t", json!({})), &reached).await;
    assert_eq!(to_json(&r), aborted_before_dispatch());
    assert_eq!(runs.get(), 0);
    // An unknown tool cancelled the same way reports the abort, not UNKNOWN_TOOL.
    let reached = CancellationToken::new();
    let registry2 = Registry::new();
    wrapper_waits_then_replaces(&registry2, &reached);
    let r = abort_at(&registry2, call("missing", json!({})), &reached).await;
    assert_eq!(to_json(&r), aborted_before_dispatch());
    assert_eq!(posts.all(), ["ABORTED_BEFORE_DISPATCH"]);
}

#[tokio::test]
async fn scenario_083_wrapper_supplies_an_aborted_signal() {
    let registry = Registry::new();
    let runs = Counter::new();
    keep(&registry, counted("t", &runs));
    registry
        .on_execute(|_c, next: ExecuteNext| {
            let aborted = CancellationToken::new();
            aborted.cancel();
            next.run_with_signal(aborted)
        })
        .keep();
    let caller = CancellationToken::new();
    let r = exec(&registry, call_with("t", json!({}), &caller)).await;
    assert_eq!(to_json(&r), aborted_before_dispatch());
    assert_eq!(runs.get(), 0);
    assert!(!caller.is_cancelled());
}

#[tokio::test]
async fn scenario_084_wrapper_short_circuit_overtaken() {
    let registry = Registry::new();
    let runs = Counter::new();
    keep(&registry, counted("t", &runs));
    let reached = CancellationToken::new();
    let rc = reached.clone();
    registry
        .on_execute(move |c: ExecuteCall, _next: ExecuteNext| {
            let rc = rc.clone();
            async move {
                rc.cancel();
                c.execution.signal().cancelled().await;
                Ok(ToolExecutionResult::success(json!("cached"))
                    .with_additional_contexts(vec![um("wrapper")]))
            }
        })
        .keep();
    let r = abort_at(&registry, call("t", json!({})), &reached).await;
    assert_eq!(
        to_json(&r),
        with(
            aborted_before_dispatch(),
            "additionalContexts",
            json!([serde_json::to_value(um("wrapper")).unwrap()])
        )
    );
    assert_eq!(runs.get(), 0);
}

#[tokio::test]
async fn scenario_086_late_post_success() {
    let registry = Registry::new();
    keep(
        &registry,
        ToolDefinition::new(
            "t",
            "defers a context",
            json!({"type": "object"}),
            OutputDecl::text(),
            |_, ctx: ToolRunContext| async move {
                ctx.defer_context(um("child"));
                Ok(json!("ok"))
            },
        ),
    );
    let reached = CancellationToken::new();
    let rc = reached.clone();
    registry
        .on_post_execute(move |e: Arc<ToolExecution>, _r, next: PostNext| {
            let rc = rc.clone();
            async move {
                let decision = next.run().await?;
                rc.cancel();
                e.signal().cancelled().await;
                Ok(decision.with_contexts([um("post")]))
            }
        })
        .keep();
    let r = abort_at(&registry, call("t", json!({})), &reached).await;
    assert_eq!(
        to_json(&r),
        with(
            aborted(),
            "additionalContexts",
            json!([
                serde_json::to_value(um("child")).unwrap(),
                serde_json::to_value(um("post")).unwrap()
            ])
        )
    );
}

#[tokio::test]
async fn scenario_087_failures_after_cancel_keep_their_codes() {
    // The wrapper fails after the abort (the body never ran).
    let registry = Registry::new();
    let runs = Counter::new();
    keep(&registry, counted("t", &runs));
    let reached = CancellationToken::new();
    let rc = reached.clone();
    registry
        .on_execute(move |c: ExecuteCall, _next: ExecuteNext| {
            let rc = rc.clone();
            async move {
                rc.cancel();
                c.execution.signal().cancelled().await;
                Err::<ToolExecutionResult, _>(ToolError::coded(
                    "HarnessError",
                    "WRAPPER_FAILURE",
                    "wrapper failed",
                ))
            }
        })
        .keep();
    let r = abort_at(&registry, call("t", json!({})), &reached).await;
    assert_eq!(
        to_json(&r),
        coded_failure("wrapper failed", "HarnessError", "WRAPPER_FAILURE")
    );
    assert_eq!(runs.get(), 0);

    // The body fails upon observing the abort.
    let registry = Registry::new();
    let reached = CancellationToken::new();
    let rc = reached.clone();
    keep(
        &registry,
        ToolDefinition::new(
            "t",
            "fails on abort",
            json!({"type": "object"}),
            OutputDecl::text(),
            move |_, ctx: ToolRunContext| {
                let rc = rc.clone();
                async move {
                    rc.cancel();
                    ctx.signal().cancelled().await;
                    Err(ToolError::coded(
                        "HarnessError",
                        "TOOL_FAILURE",
                        "tool failed",
                    ))
                }
            },
        ),
    );
    let r = abort_at(&registry, call("t", json!({})), &reached).await;
    assert_eq!(
        to_json(&r),
        coded_failure("tool failed", "HarnessError", "TOOL_FAILURE")
    );

    // Post-execute fails after the abort.
    let registry = Registry::new();
    keep(&registry, raw("t"));
    let reached = CancellationToken::new();
    let rc = reached.clone();
    registry
        .on_post_execute(move |e: Arc<ToolExecution>, _r, next: PostNext| {
            let rc = rc.clone();
            async move {
                next.run().await?;
                rc.cancel();
                e.signal().cancelled().await;
                Err::<PostToolDecision, _>(ToolError::coded(
                    "HarnessError",
                    "POST_FAILURE",
                    "post-policy failed",
                ))
            }
        })
        .keep();
    let r = abort_at(&registry, call("t", json!({})), &reached).await;
    assert_eq!(
        to_json(&r),
        coded_failure("post-policy failed", "HarnessError", "POST_FAILURE")
    );
}

/// A body that waits for its signal, records it, and then returns `stopped`.
fn stops_on_abort(reached: &CancellationToken, seen: &Seen<Signal>) -> ToolDefinition {
    let (rc, s) = (reached.clone(), seen.clone());
    ToolDefinition::new(
        "t",
        "stops when cancelled",
        json!({"type": "object"}),
        OutputDecl::text(),
        move |_, ctx: ToolRunContext| {
            let (rc, s) = (rc.clone(), s.clone());
            async move {
                s.put(ctx.signal().clone());
                rc.cancel();
                ctx.signal().cancelled().await;
                Ok(json!("stopped"))
            }
        },
    )
}

#[tokio::test]
async fn scenario_088_caller_abort_reaches_a_body_behind_a_wrapper_replacement() {
    let registry = Registry::new();
    let reached = CancellationToken::new();
    let body_signal = Seen::new();
    keep(&registry, stops_on_abort(&reached, &body_signal));
    let replacement = CancellationToken::new();
    let rep = replacement.clone();
    registry
        .on_execute(move |_c, next: ExecuteNext| next.run_with_signal(rep.clone()))
        .keep();
    let r = abort_at(&registry, call("t", json!({})), &reached).await;
    assert_eq!(to_json(&r), aborted());
    assert!(body_signal.only().is_cancelled());
    assert!(!replacement.is_cancelled());

    // The fused signal is aborted once the caller is, even when the body settles without
    // looking at it: the wrapper's `next()` already gets `ABORTED` (§6.5 1e).
    let registry = Registry::new();
    let reached = CancellationToken::new();
    let rc = reached.clone();
    keep(
        &registry,
        ToolDefinition::new(
            "t",
            "ignores its signal",
            json!({"type": "object"}),
            OutputDecl::text(),
            move |_, _ctx: ToolRunContext| {
                let rc = rc.clone();
                async move {
                    rc.cancel();
                    tokio::task::yield_now().await;
                    Ok(json!("finished anyway"))
                }
            },
        ),
    );
    let from_next = Seen::new();
    let s = from_next.clone();
    registry
        .on_execute(move |_c, next: ExecuteNext| {
            let s = s.clone();
            async move {
                let r = next.run_with_signal(CancellationToken::new()).await?;
                s.put(to_json(&r));
                Ok(r)
            }
        })
        .keep();
    let r = abort_at(&registry, call("t", json!({})), &reached).await;
    assert_eq!(to_json(&r), aborted());
    assert_eq!(from_next.only(), aborted());
}

#[tokio::test]
async fn scenario_089_wrapper_owned_abort_also_yields_aborted() {
    let registry = Registry::new();
    let reached = CancellationToken::new();
    let body_signal = Seen::new();
    keep(&registry, stops_on_abort(&reached, &body_signal));
    let rc = reached.clone();
    registry
        .on_execute(move |_c, next: ExecuteNext| {
            let rc = rc.clone();
            async move {
                let deadline = CancellationToken::new();
                let fire = deadline.clone();
                let (r, ()) = tokio::join!(next.run_with_signal(deadline), async {
                    rc.cancelled().await;
                    fire.cancel();
                });
                r
            }
        })
        .keep();
    let posts = Seen::new();
    let p = posts.clone();
    registry
        .on_post_execute(move |_e, r: ToolExecutionResult, next: PostNext| {
            p.put(code_of(&r));
            next.run()
        })
        .keep();
    let caller = CancellationToken::new();
    let r = exec(&registry, call_with("t", json!({}), &caller)).await;
    assert_eq!(to_json(&r), aborted());
    assert_eq!(posts.all(), ["ABORTED"]);
    assert!(!caller.is_cancelled());
    // The caller aborts while a body runs, and the body still returns a success.
    let registry = Registry::new();
    let reached = CancellationToken::new();
    keep(&registry, stops_on_abort(&reached, &Seen::new()));
    let r = abort_at(&registry, call("t", json!({})), &reached).await;
    assert_eq!(to_json(&r), aborted());
}

#[tokio::test]
async fn scenario_091_pre_aborted_entry() {
    let registry = Registry::new();
    let body = Counter::new();
    keep(&registry, counted("t", &body));
    let phases = Trace::new();
    let tr = phases.clone();
    registry
        .on_pre_execute(move |_e, next: PreNext| {
            tr.push("pre");
            next.run()
        })
        .keep();
    let tr = phases.clone();
    registry
        .on_execute(move |_c, next: ExecuteNext| {
            tr.push("around");
            next.run()
        })
        .keep();
    let tr = phases.clone();
    registry
        .on_post_execute(move |_e, _r, next: PostNext| {
            tr.push("post");
            next.run()
        })
        .keep();
    let observed = Seen::new();
    let o = observed.clone();
    registry
        .on_result(move |e: &ToolExecution, r: &ToolExecutionResult| {
            o.put((
                r.clone(),
                e.token(),
                e.arguments().cloned(),
                e.signal().is_cancelled(),
                e.root_call_id().to_owned(),
            ));
            Ok(())
        })
        .keep();
    let caller = CancellationToken::new();
    caller.cancel();
    let r = exec(
        &registry,
        call_with("t", json!({"nested": {"value": 1}}), &caller),
    )
    .await;
    assert_eq!(to_json(&r), aborted_before_dispatch());
    assert!(phases.get().is_empty());
    assert_eq!(body.get(), 0);
    let (result, token, arguments, cancelled, root) = observed.only();
    assert_eq!(result, r);
    assert_eq!(arguments, Some(json!({"nested": {"value": 1}})));
    assert!(cancelled, "the observed signal is the caller's");
    assert_eq!(root, "c1");
    // A fresh token: another execution gets another one.
    exec(&registry, call_with("t", json!({}), &caller)).await;
    assert_ne!(observed.all()[1].1, token);
}

#[tokio::test]
async fn scenario_092_argument_failure_beats_pre_abort() {
    let registry = Registry::new();
    let observed = Counter::new();
    let o = observed.clone();
    registry
        .on_result(move |e: &ToolExecution, _r: &ToolExecutionResult| {
            assert!(e.arguments().is_none());
            o.bump();
            Ok(())
        })
        .keep();
    let caller = CancellationToken::new();
    caller.cancel();
    let r = exec(
        &registry,
        call_with("missing", json!({"invalid": negative_zero()}), &caller),
    )
    .await;
    assert_eq!(
        to_json(&r),
        plain_failure("tool execution arguments must be losslessly JSON-serializable")
    );
    assert_eq!(observed.get(), 1);
}

/// Spec §8.1: bodies and non-wrapper hooks see the caller's signal read-only. A Rust
/// `CancellationToken` can cancel itself, so the pipeline hands out tokens derived from the
/// caller's: they fire when it fires, and cancelling them never reaches the caller.
#[tokio::test]
async fn spec_8_1_bodies_and_hooks_cannot_cancel_the_caller() {
    let cancel_in = |stage: &'static str| {
        let registry = Registry::new();
        // A read-only `Signal` has no `cancel`: the most a hook can do is cancel a child token,
        // which must not reach the caller.
        let hit = move |here: &str, signal: &Signal| {
            if here == stage {
                signal.child_token().cancel();
            }
        };
        keep(
            &registry,
            ToolDefinition::new(
                "t",
                "cancels its signal",
                json!({"type": "object"}),
                OutputDecl::text(),
                move |_, ctx: ToolRunContext| {
                    hit("body", ctx.signal());
                    async { Ok(json!("ok")) }
                },
            ),
        );
        registry
            .on_pre_execute(move |e: Arc<ToolExecution>, next: PreNext| {
                hit("pre", e.signal());
                async move {
                    next.run().await?;
                    Ok(PreToolDecision::ask(None::<String>))
                }
            })
            .keep();
        registry.set_approval_service(move |req: ApprovalRequest| {
            hit("approval", &req.signal);
            async { Ok(ApprovalOutcome::AllowedOnce) }
        });
        registry
            .guard(move |e: &ToolExecution| {
                hit("guard", e.signal());
                None
            })
            .keep();
        registry
            .on_post_execute(move |e: Arc<ToolExecution>, _r, next: PostNext| {
                hit("post", e.signal());
                next.run()
            })
            .keep();
        registry
            .on_result(move |e: &ToolExecution, _r: &ToolExecutionResult| {
                hit("result", e.signal());
                Ok(())
            })
            .keep();
        registry
    };
    for stage in ["body", "pre", "approval", "guard", "post", "result"] {
        let registry = cancel_in(stage);
        let caller = CancellationToken::new();
        exec(&registry, call_with("t", json!({}), &caller).agent("A")).await;
        assert!(
            !caller.is_cancelled(),
            "{stage} cancelled the caller's signal"
        );
        // A sibling call sharing the caller's signal is unaffected.
        let sibling = Registry::new();
        keep(&sibling, raw("t"));
        let r = exec(&sibling, call_with("t", json!({}), &caller)).await;
        assert_eq!(r.text(), "ran:t", "{stage}");
    }
}

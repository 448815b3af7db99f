//! D/E. Pre-execute decisions, approval and guards (spec §5.6, §6.3, §6.4).

use super::support::*;
use dsh_tools::*;
use serde_json::json;
use std::sync::{Arc, Mutex};

fn deciding(registry: &Registry, decision: PreToolDecision) {
    registry
        .on_pre_execute(move |_e, _next: PreNext| {
            let decision = decision.clone();
            async move { Ok(decision) }
        })
        .keep();
}

fn count_posts(registry: &Registry) -> Seen<String> {
    let seen = Seen::new();
    let s = seen.clone();
    registry
        .on_post_execute(move |_e, r: ToolExecutionResult, next: PostNext| {
            s.put(r.text());
            next.run()
        })
        .keep();
    seen
}

/// An approval service that logs each request to `trace` as `ask` and answers `outcome`.
fn approving(
    registry: &Registry,
    trace: &Trace,
    outcome: ApprovalOutcome,
) -> Seen<ApprovalRequest> {
    let requests = Seen::new();
    let (rq, tr) = (requests.clone(), trace.clone());
    registry.set_approval_service(move |req: ApprovalRequest| {
        tr.push("ask");
        rq.put(req);
        let outcome = outcome.clone();
        async move { Ok(outcome) }
    });
    requests
}

#[tokio::test]
async fn scenario_036_deny() {
    let registry = Registry::new();
    let trace = Trace::new();
    keep(&registry, traced_echo(&trace));
    trace_all(&registry, &trace);
    deciding(&registry, PreToolDecision::deny("denied by policy"));
    let posts = count_posts(&registry);
    let r = exec(&registry, call("echo", json!({"text": "hi"}))).await;
    assert_eq!(to_json(&r), plain_failure("denied by policy"));
    assert_eq!(r.content()[0].as_text(), Some("Error: denied by policy"));
    // No guard, wrapper or body; post-execute still runs and sees the denial.
    assert_eq!(trace.get(), ["pre", "post:error", "result:error"]);
    assert_eq!(posts.all(), ["Error: denied by policy"]);
}

#[tokio::test]
async fn scenario_037_deny_skips_around_dispatch() {
    let registry = Registry::new();
    keep(&registry, echo());
    deciding(&registry, PreToolDecision::deny("nope"));
    let entered = Counter::new();
    let e = entered.clone();
    registry
        .on_execute(move |_c, next: ExecuteNext| {
            e.bump();
            next.run()
        })
        .keep();
    let r = exec(&registry, call("echo", json!({"text": "hi"}))).await;
    assert_eq!(r.text(), "Error: nope");
    assert_eq!(entered.get(), 0);
}

#[tokio::test]
async fn scenario_038_ask_without_approval_service() {
    for (reason, text) in [
        (Some("needs approval"), "Error: needs approval"),
        (
            None,
            "Error: tool \"echo\" requires approval (not yet supported)",
        ),
    ] {
        let registry = Registry::new();
        keep(&registry, echo());
        deciding(&registry, PreToolDecision::ask(reason));
        let posts = count_posts(&registry);
        let r = exec(&registry, call("echo", json!({"text": "hi"})).agent("A")).await;
        assert_eq!(to_json(&r), plain_failure(&text["Error: ".len()..]));
        assert_eq!(posts.all(), [text]);
    }
}

#[tokio::test]
async fn scenario_039_ask_allowed_once() {
    let registry = Registry::new();
    let trace = Trace::new();
    keep(&registry, traced_echo(&trace));
    trace_all(&registry, &trace);
    deciding(&registry, PreToolDecision::ask(Some("hook wants a human")));
    let requests = approving(&registry, &trace, ApprovalOutcome::AllowedOnce);
    let caller = CancellationToken::new();
    let r = exec(
        &registry,
        call_with("echo", json!({"text": "hi"}), &caller).agent("A"),
    )
    .await;
    assert_eq!(
        to_json(&r),
        json!({"content": t("hi"), "isError": false, "value": "hi"})
    );
    let request = requests.only();
    assert_eq!(request.agent, AgentId::new("A"));
    assert_eq!(request.tool_name, "echo");
    assert_eq!(request.call_id, "c1");
    assert_eq!(request.reason.as_deref(), Some("hook wants a human"));
    assert!(fires_with(&request.signal, &caller));
    assert_eq!(
        trace.get(),
        [
            "pre",
            "ask",
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
async fn scenario_041_ask_without_agent() {
    let registry = Registry::new();
    keep(&registry, echo());
    deciding(&registry, PreToolDecision::ask(Some("why")));
    let trace = Trace::new();
    let requests = approving(&registry, &trace, ApprovalOutcome::AllowedOnce);
    let r = exec(&registry, call("echo", json!({"text": "hi"}))).await;
    assert_eq!(
        to_json(&r),
        plain_failure(
            "tool \"echo\" requires approval, but the call has no agent to route it through"
        )
    );
    assert!(requests.all().is_empty());
}

#[tokio::test]
async fn scenario_042_failing_approval_service() {
    // A rogue outcome string cannot be represented (closed enum); a failing service can.
    for panics in [false, true] {
        let registry = Registry::new();
        keep(&registry, echo());
        deciding(&registry, PreToolDecision::ask(None::<String>));
        registry.set_approval_service(move |_req: ApprovalRequest| async move {
            if panics {
                panic!("approval exploded");
            }
            Err(ToolError::new("approval exploded"))
        });
        let posts = count_posts(&registry);
        let r = exec(&registry, call("echo", json!({"text": "hi"})).agent("A")).await;
        assert_eq!(to_json(&r), plain_failure("approval exploded"));
        // Final: post-execute does not run.
        assert!(posts.all().is_empty());
    }
}

/// An approval service that waits for the caller to abort, then answers `outcome`. `reached`
/// is cancelled once the request is pending.
fn approving_after_abort(
    registry: &Registry,
    reached: &CancellationToken,
    outcome: ApprovalOutcome,
) {
    let reached = reached.clone();
    registry.set_approval_service(move |req: ApprovalRequest| {
        let reached = reached.clone();
        let outcome = outcome.clone();
        async move {
            reached.cancel();
            req.signal.cancelled().await;
            Ok(outcome)
        }
    });
}

#[tokio::test]
async fn scenario_043_caller_cancels_during_approval() {
    for guard_denies in [false, true] {
        let registry = Registry::new();
        let runs = Counter::new();
        keep(&registry, counted("echo", &runs));
        deciding(&registry, PreToolDecision::ask(None::<String>));
        let reached = CancellationToken::new();
        approving_after_abort(&registry, &reached, ApprovalOutcome::AllowedOnce);
        let guards = Counter::new();
        let g = guards.clone();
        registry
            .guard(move |_e: &ToolExecution| {
                g.bump();
                guard_denies.then(|| "guard says no".to_owned())
            })
            .keep();
        let posts = count_posts(&registry);
        let r = abort_at(&registry, call("echo", json!({})).agent("A"), &reached).await;
        if guard_denies {
            assert_eq!(to_json(&r), plain_failure("guard says no"));
        } else {
            assert_eq!(to_json(&r), aborted_before_dispatch());
        }
        assert_eq!(guards.get(), 1, "guards run before the cancellation check");
        assert_eq!(runs.get(), 0);
        assert_eq!(posts.all().len(), 1);
    }
}

#[tokio::test]
async fn scenario_044_approval_outcome_and_caller_abort() {
    use ApprovalOutcome::*;
    let cases = [
        (Cancelled, aborted_before_dispatch()),
        (Rejected, plain_failure("the user rejected tool \"echo\"")),
        (
            Unavailable,
            plain_failure("tool \"echo\" requires approval, but no approval channel is available"),
        ),
    ];
    for (outcome, expected) in cases {
        let registry = Registry::new();
        let runs = Counter::new();
        keep(&registry, counted("echo", &runs));
        deciding(&registry, PreToolDecision::ask(None::<String>));
        let reached = CancellationToken::new();
        approving_after_abort(&registry, &reached, outcome.clone());
        let posts = count_posts(&registry);
        let r = abort_at(&registry, call("echo", json!({})).agent("A"), &reached).await;
        assert_eq!(to_json(&r), expected, "{outcome:?}");
        assert_eq!(posts.all().len(), 1, "post-execute runs ({outcome:?})");
        assert_eq!(runs.get(), 0);
    }
    // Without the abort, every outcome keeps its own meaning (§6.4.1).
    let cases = [
        (AllowedOnce, None),
        (Rejected, Some("the user rejected tool \"echo\"")),
        (Cancelled, Some("approval for tool \"echo\" was cancelled")),
        (
            Unavailable,
            Some("tool \"echo\" requires approval, but no approval channel is available"),
        ),
    ];
    for (outcome, denial) in cases {
        let registry = Registry::new();
        keep(&registry, raw("echo"));
        deciding(&registry, PreToolDecision::ask(None::<String>));
        approving(&registry, &Trace::new(), outcome);
        let r = exec(&registry, call("echo", json!({})).agent("A")).await;
        match denial {
            None => assert_eq!(r.text(), "ran:echo"),
            Some(message) => assert_eq!(to_json(&r), plain_failure(message)),
        }
    }
}

#[tokio::test]
async fn scenario_046_guard_after_an_overriding_allow() {
    let registry = Registry::new();
    let runs = Counter::new();
    keep(&registry, counted("t", &runs));
    let a = registry.scope("A");
    let calls = Counter::new();
    let c = calls.clone();
    let terminal = Arc::new(move |e: &ToolExecution| {
        c.bump();
        assert_eq!(e.arguments(), Some(&json!({})));
        Some("terminal policy".to_owned())
    });
    let g = Arc::clone(&terminal);
    let first = a.guard(move |e: &ToolExecution| g(e));
    let g = Arc::clone(&terminal);
    a.guard(move |e: &ToolExecution| g(e)).keep();
    a.on_pre_execute_first(|_e, _next: PreNext| async { Ok(PreToolDecision::Allow) })
        .keep();
    let r = exec(&registry, call("t", json!({})).agent("A")).await;
    assert_eq!(to_json(&r), plain_failure("terminal policy"));
    assert_eq!(calls.get(), 1, "the first reason wins");
    let r = exec(&registry, call("t", json!({})).agent("B")).await;
    assert_eq!(r.text(), "ran:t");
    assert_eq!(runs.get(), 1);
    // Lifting one registration leaves the other.
    first.dispose();
    let r = exec(&registry, call("t", json!({})).agent("A")).await;
    assert_eq!(r.text(), "Error: terminal policy");
    // Disposing the scope lifts its guards.
    a.dispose();
    let r = exec(&registry, call("t", json!({})).agent("A")).await;
    assert_eq!(r.text(), "ran:t");
    assert_eq!(runs.get(), 2);
}

#[tokio::test]
async fn scenario_047_global_guards_compose() {
    let registry = Registry::new();
    let runs = Counter::new();
    keep(&registry, counted("t", &runs));
    registry.guard(|_e: &ToolExecution| None).keep();
    registry
        .guard(|_e: &ToolExecution| Some("global denial".to_owned()))
        .keep();
    let r = exec(&registry, call("t", json!({}))).await;
    assert_eq!(to_json(&r), plain_failure("global denial"));
    assert_eq!(runs.get(), 0);
    // Any reason denies, the empty string included (§5.6.1).
    let registry = Registry::new();
    keep(&registry, counted("t", &runs));
    registry
        .guard(|_e: &ToolExecution| Some(String::new()))
        .keep();
    let r = exec(&registry, call("t", json!({}))).await;
    assert_eq!(to_json(&r), plain_failure(""));
    assert_eq!(runs.get(), 0);
}

fn traced_guard(
    trace: &Trace,
    label: &'static str,
    denies: bool,
) -> impl dsh_tools::pipeline::Guard {
    let trace = trace.clone();
    move |_e: &ToolExecution| {
        trace.push(label);
        denies.then(|| format!("{label} denies"))
    }
}

#[tokio::test]
async fn scenario_048_guard_order() {
    let registry = Registry::new();
    keep(&registry, raw("t"));
    let trace = Trace::new();
    let a = registry.scope("A");
    registry
        .guard(traced_guard(&trace, "global1", false))
        .keep();
    a.guard(traced_guard(&trace, "scoped1", false)).keep();
    a.guard(traced_guard(&trace, "scoped2", true)).keep();
    registry
        .guard(traced_guard(&trace, "global2", false))
        .keep();
    let r = exec(&registry, call("t", json!({})).agent("A")).await;
    assert_eq!(to_json(&r), plain_failure("scoped2 denies"));
    assert_eq!(trace.take(), ["global1", "global2", "scoped1", "scoped2"]);
    let r = exec(&registry, call("t", json!({}))).await;
    assert_eq!(r.text(), "ran:t");
    assert_eq!(trace.take(), ["global1", "global2"]);
    // A descendant's call runs its ancestors' guards too, farthest ancestor first (§5.6.2).
    let registry = Registry::new();
    keep(&registry, raw("t"));
    let child = registry.child_scope("child", "parent");
    child.guard(traced_guard(&trace, "child", false)).keep();
    registry
        .scope("parent")
        .guard(traced_guard(&trace, "parent", false))
        .keep();
    registry.guard(traced_guard(&trace, "global", false)).keep();
    let r = exec(&registry, call("t", json!({})).agent("child")).await;
    assert_eq!(r.text(), "ran:t");
    assert_eq!(trace.take(), ["global", "parent", "child"]);
    let r = exec(&registry, call("t", json!({})).agent("parent")).await;
    assert_eq!(r.text(), "ran:t");
    assert_eq!(trace.take(), ["global", "parent"]);
}

#[tokio::test]
async fn scenario_049_guard_table_snapshot() {
    // Rust snapshots the guard table when evaluation starts (spec §5.6.4 allows it): a guard
    // registered during evaluation applies from the next call on.
    let registry = Registry::new();
    keep(&registry, raw("t"));
    let trace = Trace::new();
    let (tr, reg) = (trace.clone(), registry.clone());
    let armed = Arc::new(Mutex::new(true));
    registry
        .guard(move |_e: &ToolExecution| {
            tr.push("first");
            if std::mem::take(&mut *armed.lock().unwrap()) {
                let tr = tr.clone();
                reg.guard(move |_e: &ToolExecution| {
                    tr.push("late");
                    Some("late denial".to_owned())
                })
                .keep();
            }
            None
        })
        .keep();
    let r = exec(&registry, call("t", json!({}))).await;
    assert_eq!(r.text(), "ran:t");
    assert_eq!(trace.take(), ["first"]);
    let r = exec(&registry, call("t", json!({}))).await;
    assert_eq!(to_json(&r), plain_failure("late denial"));
    assert_eq!(trace.take(), ["first", "late"]);

    // A scoped guard that lifts itself and registers a replacement.
    let registry = Registry::new();
    keep(&registry, raw("t"));
    let a = registry.scope("A");
    let slot: Arc<Mutex<Option<Registration>>> = Arc::default();
    let (tr, s, scope) = (trace.clone(), Arc::clone(&slot), a.clone());
    let own = a.guard(move |_e: &ToolExecution| {
        tr.push("first");
        if let Some(r) = s.lock().unwrap().take() {
            r.dispose();
        }
        let tr = tr.clone();
        scope
            .guard(move |_e: &ToolExecution| {
                tr.push("replacement");
                Some("replacement denial".to_owned())
            })
            .keep();
        None
    });
    *slot.lock().unwrap() = Some(own);
    let r = exec(&registry, call("t", json!({})).agent("A")).await;
    assert_eq!(r.text(), "ran:t");
    assert_eq!(trace.take(), ["first"]);
    let r = exec(&registry, call("t", json!({})).agent("A")).await;
    assert_eq!(to_json(&r), plain_failure("replacement denial"));
    assert_eq!(trace.take(), ["replacement"]);
}

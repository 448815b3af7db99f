//! Property tests of the pipeline's policy and cancellation rules (spec §5.6, §6.3, §8):
//!
//! 1. For any registration order of pre-execute listeners (allow / deny / ask / pass /
//!    override-to-allow, appended or prepended, global or scoped) and guards, the outcome is the
//!    one the spec's waterfall, approval and guard rules give, and a guard's denial is never
//!    turned into an allow.
//! 2. For any cancellation point (before the call, during pre-execute, in a wrapper before or
//!    after `next`, during the body, during post-execute), the outcome code follows §8's table,
//!    and a body that started always settled before `execute` returned.

use crate::support;

use dsh_tools::*;
use proptest::prelude::*;
use serde_json::json;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use support::*;

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .unwrap()
}

// ---------------------------------------------------------------------------------------------
// 1. Guards are monotonic
// ---------------------------------------------------------------------------------------------

#[derive(Clone, Copy, Debug)]
enum Listener {
    /// Short-circuits with `allow`.
    Allow,
    /// Short-circuits with `deny`.
    Deny,
    /// Short-circuits with `ask`.
    Ask,
    /// Delegates.
    Pass,
    /// Delegates, then answers `allow` whatever the inner listeners decided.
    Override,
}

#[derive(Clone, Copy, Debug)]
enum Registered {
    Listener {
        kind: Listener,
        scoped: bool,
        prepend: bool,
    },
    Guard {
        scoped: bool,
        denies: bool,
    },
}

fn registered() -> impl Strategy<Value = Registered> {
    let listener = prop_oneof![
        Just(Listener::Allow),
        Just(Listener::Deny),
        Just(Listener::Ask),
        Just(Listener::Pass),
        Just(Listener::Override),
    ];
    prop_oneof![
        (listener, any::<bool>(), any::<bool>()).prop_map(|(kind, scoped, prepend)| {
            Registered::Listener {
                kind,
                scoped,
                prepend,
            }
        }),
        (any::<bool>(), any::<bool>())
            .prop_map(|(scoped, denies)| Registered::Guard { scoped, denies }),
    ]
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Decision {
    Allow,
    Deny(usize),
    Ask(usize),
}

/// The spec's outcome: `Ok(())` for a dispatched call, `Err(reason)` for a denial.
fn oracle(
    plan: &[Registered],
    agent: bool,
    approval: Option<ApprovalOutcome>,
) -> Result<(), String> {
    // The admitted listeners, outermost first.
    let mut chain: Vec<(usize, Listener)> = Vec::new();
    for (i, r) in plan.iter().enumerate() {
        if let Registered::Listener {
            kind,
            scoped,
            prepend,
        } = *r
        {
            if scoped && !agent {
                continue;
            }
            if prepend {
                chain.insert(0, (i, kind));
            } else {
                chain.push((i, kind));
            }
        }
    }
    fn run(chain: &[(usize, Listener)]) -> Decision {
        match chain.first() {
            None => Decision::Allow,
            Some(&(i, kind)) => match kind {
                Listener::Allow => Decision::Allow,
                Listener::Deny => Decision::Deny(i),
                Listener::Ask => Decision::Ask(i),
                Listener::Pass => run(&chain[1..]),
                Listener::Override => {
                    run(&chain[1..]);
                    Decision::Allow
                }
            },
        }
    }
    let allowed = match run(&chain) {
        Decision::Allow => true,
        Decision::Deny(i) => return Err(format!("deny#{i}")),
        Decision::Ask(i) => match (approval, agent) {
            (None, _) => return Err(format!("ask#{i}")),
            (Some(_), false) => {
                return Err(
                    "tool \"t\" requires approval, but the call has no agent to route \
                            it through"
                        .to_owned(),
                );
            }
            (Some(ApprovalOutcome::AllowedOnce | ApprovalOutcome::AllowedAlways(_)), true) => true,
            (Some(_), true) => return Err("the user rejected tool \"t\"".to_owned()),
        },
    };
    assert!(allowed);
    // Global guards first, then the agent's, each in registration order.
    let global = plan.iter().enumerate().filter_map(|(i, r)| match *r {
        Registered::Guard {
            scoped: false,
            denies,
        } => Some((i, denies)),
        _ => None,
    });
    let scoped = plan.iter().enumerate().filter_map(|(i, r)| match *r {
        Registered::Guard {
            scoped: true,
            denies,
        } if agent => Some((i, denies)),
        _ => None,
    });
    match global.chain(scoped).find(|&(_, denies)| denies) {
        Some((i, _)) => Err(format!("guard#{i}")),
        None => Ok(()),
    }
}

fn build(plan: &[Registered], approval: Option<ApprovalOutcome>) -> Registry {
    let registry = Registry::new();
    keep(&registry, raw("t"));
    let a = registry.scope("A");
    if let Some(outcome) = approval {
        registry.set_approval_service(move |_req: ApprovalRequest| {
            let outcome = outcome.clone();
            async move { Ok(outcome) }
        });
    }
    for (i, r) in plan.iter().enumerate() {
        match *r {
            Registered::Listener {
                kind,
                scoped,
                prepend,
            } => {
                let hook = move |_e: Arc<ToolExecution>, next: PreNext| async move {
                    match kind {
                        Listener::Allow => Ok(PreToolDecision::Allow),
                        Listener::Deny => Ok(PreToolDecision::deny(format!("deny#{i}"))),
                        Listener::Ask => Ok(PreToolDecision::ask(Some(format!("ask#{i}")))),
                        Listener::Pass => next.run().await,
                        Listener::Override => {
                            next.run().await?;
                            Ok(PreToolDecision::Allow)
                        }
                    }
                };
                let registration = match (scoped, prepend) {
                    (false, false) => registry.on_pre_execute(hook),
                    (false, true) => registry.on_pre_execute_first(hook),
                    (true, false) => a.on_pre_execute(hook),
                    (true, true) => a.on_pre_execute_first(hook),
                };
                registration.keep();
            }
            Registered::Guard { scoped, denies } => {
                let guard = move |_e: &ToolExecution| denies.then(|| format!("guard#{i}"));
                if scoped {
                    a.guard(guard).keep();
                } else {
                    registry.guard(guard).keep();
                }
            }
        }
    }
    registry
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn guard_denials_are_never_turned_into_an_allow(
        plan in prop::collection::vec(registered(), 0..10),
        agent in any::<bool>(),
        approval in prop_oneof![
            Just(None),
            Just(Some(ApprovalOutcome::AllowedOnce)),
            Just(Some(ApprovalOutcome::Rejected)),
            Just(Some(ApprovalOutcome::AllowedAlways(None))),
            Just(Some(ApprovalOutcome::RejectedAlways(None))),
        ],
    ) {
        let registry = build(&plan, approval.clone());
        let input = if agent { call("t", json!({})).agent("A") } else { call("t", json!({})) };
        let result = runtime().block_on(exec(&registry, input));
        let expected = oracle(&plan, agent, approval);
        match &expected {
            Ok(()) => prop_assert_eq!(result.text(), "ran:t"),
            Err(reason) => prop_assert_eq!(to_json(&result), plain_failure(reason)),
        }
        // The property itself, stated directly: when an admitted guard denies and the
        // waterfall allowed the call, the call fails with a guard's reason.
        if expected.as_ref().is_err_and(|r| r.starts_with("guard#")) {
            prop_assert!(result.is_error());
            prop_assert!(result.text().starts_with("Error: guard#"));
        }
    }
}

// ---------------------------------------------------------------------------------------------
// 2. Cancellation outcomes and body quiescence
// ---------------------------------------------------------------------------------------------

#[derive(Clone, Copy, Debug, PartialEq)]
enum Point {
    Never,
    BeforeCall,
    DuringPre,
    WrapperBeforeNext,
    WrapperAfterNext,
    DuringBody,
    DuringPost,
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Body {
    /// Returns a success.
    Succeeds,
    /// Fails with `TOOL_FAILURE`.
    Fails,
}

#[derive(Debug, Default)]
struct BodyFlags {
    started: AtomicBool,
    settled: AtomicBool,
}

/// Cancels `reached` and waits for the caller's abort when `here` is the scenario's point.
async fn checkpoint(point: Point, here: Point, reached: &CancellationToken, caller: &Signal) {
    if point == here {
        reached.cancel();
        caller.cancelled().await;
    }
}

struct Case {
    point: Point,
    body: Body,
    replaces_signal: bool,
    body_yields: usize,
}

fn cancellation_registry(
    case: &Case,
    reached: &CancellationToken,
    flags: &Arc<BodyFlags>,
) -> Registry {
    let registry = Registry::new();
    let (point, body, yields) = (case.point, case.body, case.body_yields);
    let (rc, fl) = (reached.clone(), Arc::clone(flags));
    keep(
        &registry,
        ToolDefinition::new(
            "t",
            "cancellable",
            json!({"type": "object"}),
            OutputDecl::text(),
            move |_, ctx: ToolRunContext| {
                let (rc, fl) = (rc.clone(), Arc::clone(&fl));
                async move {
                    fl.started.store(true, Ordering::SeqCst);
                    for _ in 0..yields {
                        tokio::task::yield_now().await;
                    }
                    checkpoint(point, Point::DuringBody, &rc, ctx.signal()).await;
                    for _ in 0..yields {
                        tokio::task::yield_now().await;
                    }
                    fl.settled.store(true, Ordering::SeqCst);
                    match body {
                        Body::Succeeds => Ok(json!("done")),
                        Body::Fails => Err(ToolError::coded(
                            "HarnessError",
                            "TOOL_FAILURE",
                            "tool failed",
                        )),
                    }
                }
            },
        ),
    );
    let rc = reached.clone();
    registry
        .on_pre_execute(move |e: Arc<ToolExecution>, next: PreNext| {
            let rc = rc.clone();
            async move {
                checkpoint(point, Point::DuringPre, &rc, e.signal()).await;
                next.run().await
            }
        })
        .keep();
    let (rc, replaces) = (reached.clone(), case.replaces_signal);
    registry
        .on_execute(move |c: ExecuteCall, next: ExecuteNext| {
            let rc = rc.clone();
            async move {
                let caller = c.execution.signal();
                checkpoint(point, Point::WrapperBeforeNext, &rc, caller).await;
                let r = if replaces {
                    next.run_with_signal(CancellationToken::new()).await
                } else {
                    next.run().await
                };
                checkpoint(point, Point::WrapperAfterNext, &rc, caller).await;
                r
            }
        })
        .keep();
    let rc = reached.clone();
    registry
        .on_post_execute(move |e: Arc<ToolExecution>, _r, next: PostNext| {
            let rc = rc.clone();
            async move {
                let d = next.run().await;
                checkpoint(point, Point::DuringPost, &rc, e.signal()).await;
                d
            }
        })
        .keep();
    registry
}

/// §8's table: the code, and whether the body is invoked.
fn expected(point: Point, body: Body) -> (&'static str, bool) {
    match point {
        Point::BeforeCall | Point::DuringPre | Point::WrapperBeforeNext => {
            ("ABORTED_BEFORE_DISPATCH", false)
        }
        Point::Never => match body {
            Body::Succeeds => ("ok", true),
            Body::Fails => ("TOOL_FAILURE", true),
        },
        Point::WrapperAfterNext | Point::DuringBody | Point::DuringPost => match body {
            // Cancellation only ever replaces a success (§8.3).
            Body::Succeeds => ("ABORTED", true),
            Body::Fails => ("TOOL_FAILURE", true),
        },
    }
}

fn point() -> impl Strategy<Value = Point> {
    prop_oneof![
        Just(Point::Never),
        Just(Point::BeforeCall),
        Just(Point::DuringPre),
        Just(Point::WrapperBeforeNext),
        Just(Point::WrapperAfterNext),
        Just(Point::DuringBody),
        Just(Point::DuringPost),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn cancellation_follows_the_table_and_bodies_settle(
        point in point(),
        body in prop_oneof![Just(Body::Succeeds), Just(Body::Fails)],
        replaces_signal in any::<bool>(),
        body_yields in 0usize..4,
        abort_yields in 0usize..4,
    ) {
        let case = Case { point, body, replaces_signal, body_yields };
        let reached = CancellationToken::new();
        let flags = Arc::new(BodyFlags::default());
        let registry = cancellation_registry(&case, &reached, &flags);
        let caller = CancellationToken::new();
        if point == Point::BeforeCall {
            caller.cancel();
        }
        let observed = Counter::new();
        let o = observed.clone();
        registry
            .on_result(move |_e: &ToolExecution, _r: &ToolExecutionResult| {
                o.bump();
                Ok(())
            })
            .keep();
        let input = call_with("t", json!({}), &caller);
        let result = runtime().block_on(async {
            let (r, ()) = tokio::join!(exec(&registry, input), async {
                if point == Point::Never || point == Point::BeforeCall {
                    return;
                }
                reached.cancelled().await;
                for _ in 0..abort_yields {
                    tokio::task::yield_now().await;
                }
                caller.cancel();
            });
            r
        });
        let (code, invoked) = expected(point, body);
        prop_assert_eq!(code_of(&result), code);
        prop_assert_eq!(flags.started.load(Ordering::SeqCst), invoked);
        // Quiescence: a started body settled before `execute` returned (§8.5).
        prop_assert_eq!(
            flags.settled.load(Ordering::SeqCst),
            flags.started.load(Ordering::SeqCst)
        );
        prop_assert_eq!(observed.get(), 1);
        match code {
            "ABORTED" => prop_assert_eq!(to_json(&result), aborted()),
            "ABORTED_BEFORE_DISPATCH" => prop_assert_eq!(to_json(&result), aborted_before_dispatch()),
            _ => {}
        }
    }
}

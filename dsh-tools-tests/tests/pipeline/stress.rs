//! Stress: 10,000 calls across 100 tasks on a multi-threaded runtime, with hooks that deny,
//! ask, short-circuit, replace signals, fail and panic at random, hooks registered and lifted
//! while calls run, and cancellations at random points. Nothing panics out of `execute`, and
//! every call gets exactly one result notification: none lost, none duplicated.

use crate::support;

use dsh_tools::*;
use serde_json::{Value, json};
use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use support::*;

const TASKS: usize = 100;
const CALLS_PER_TASK: usize = 100;

/// splitmix64: a deterministic per-call source of choices.
fn mix(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^ (x >> 31)
}

/// The per-call choice `salt` in `0..n`, read back from the call's arguments.
fn roll(args: Option<&Value>, salt: u64, n: u64) -> u64 {
    let seed = args.and_then(|a| a["seed"].as_u64()).unwrap_or(0);
    mix(seed ^ mix(salt)) % n
}

/// Panics raised on purpose carry this prefix and are not printed.
const QUIET: &str = "stress: ";

fn quiet_panics() {
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let payload = info.payload();
        let message = payload
            .downcast_ref::<&str>()
            .copied()
            .or_else(|| payload.downcast_ref::<String>().map(String::as_str));
        if !message.is_some_and(|m| m.starts_with(QUIET)) {
            default(info);
        }
    }));
}

#[derive(Default)]
struct BodyStats {
    started: AtomicUsize,
    settled: AtomicUsize,
}

fn install(registry: &Registry, stats: &Arc<BodyStats>) {
    let st = Arc::clone(stats);
    keep(
        registry,
        ToolDefinition::new(
            "work",
            "does random things",
            json!({"type": "object"}),
            OutputDecl::text(),
            move |args: Arc<Value>, ctx: ToolRunContext| {
                let st = Arc::clone(&st);
                async move {
                    st.started.fetch_add(1, Ordering::SeqCst);
                    for _ in 0..roll(Some(&*args), 1, 4) {
                        tokio::task::yield_now().await;
                    }
                    if args["waits"] == true {
                        ctx.signal().cancelled().await;
                    }
                    if roll(Some(&*args), 2, 8) == 0 {
                        ctx.defer_context(um("deferred"));
                    }
                    st.settled.fetch_add(1, Ordering::SeqCst);
                    match roll(Some(&*args), 3, 10) {
                        0 => panic!("{QUIET}body"),
                        1 => Err(ToolError::coded(
                            "HarnessError",
                            "TOOL_FAILURE",
                            "tool failed",
                        )),
                        2 => Ok(json!(7)),
                        _ => Ok(json!("done")),
                    }
                }
            },
        ),
    );
    keep(registry, raw("other"));
    registry.set_approval_service(|req: ApprovalRequest| async move {
        tokio::task::yield_now().await;
        Ok(match req.call_id.len() % 3 {
            0 => ApprovalOutcome::AllowedOnce,
            1 => ApprovalOutcome::Rejected,
            _ => ApprovalOutcome::Cancelled,
        })
    });
    registry
        .on_pre_execute(|e: Arc<ToolExecution>, next: PreNext| async move {
            match roll(e.arguments(), 10, 16) {
                0 => Ok(PreToolDecision::deny("pre says no")),
                1 => Ok(PreToolDecision::ask(Some("pre asks"))),
                2 => Err(ToolError::new("pre failed")),
                3 => panic!("{QUIET}pre"),
                4 => {
                    tokio::task::yield_now().await;
                    next.run().await
                }
                _ => next.run().await,
            }
        })
        .keep();
    registry
        .guard(|e: &ToolExecution| {
            (roll(e.arguments(), 11, 20) == 0).then(|| "guard says no".to_owned())
        })
        .keep();
    registry
        .scope("A")
        .guard(|e: &ToolExecution| {
            (roll(e.arguments(), 12, 20) == 0).then(|| "scoped guard says no".to_owned())
        })
        .keep();
    registry
        .on_execute(|c: ExecuteCall, next: ExecuteNext| async move {
            match roll(c.execution.arguments(), 20, 16) {
                0 => Ok(ToolExecutionResult::success(json!("short-circuited"))),
                1 => Err(ToolError::new("wrapper failed")),
                2 => panic!("{QUIET}wrapper"),
                3 | 4 => next.run_with_signal(CancellationToken::new()).await,
                5 => {
                    let r = next.run().await?;
                    Ok(r.with_content(blocks("swapped")))
                }
                6 => {
                    let deadline = CancellationToken::new();
                    deadline.cancel();
                    next.run_with_signal(deadline).await
                }
                _ => next.run().await,
            }
        })
        .keep();
    registry
        .on_post_execute(|e: Arc<ToolExecution>, _r, next: PostNext| async move {
            match roll(e.arguments(), 30, 16) {
                0 => Ok(PostToolDecision::block(blocks("blocked"))),
                1 => Ok(PostToolDecision::replace_value(json!("replaced"))),
                2 => Ok(PostToolDecision::replace_content(blocks("rewritten"))),
                3 => Err(ToolError::new("post failed")),
                4 => panic!("{QUIET}post"),
                _ => next.run().await,
            }
        })
        .keep();
}

/// Registers and lifts hooks until `stop` fires.
async fn churn(registry: Registry, stop: CancellationToken) {
    let mut round = 0_u64;
    while !stop.is_cancelled() {
        round += 1;
        let guard = registry.guard(move |e: &ToolExecution| {
            (roll(e.arguments(), 40 + round, 50) == 0).then(|| "churned guard".to_owned())
        });
        let pre = registry.on_pre_execute_first(|_e, next: PreNext| next.run());
        let observer =
            registry
                .scope("A")
                .on_result(|_e: &ToolExecution, _r: &ToolExecutionResult| {
                    Err(ToolError::new("churned observer"))
                });
        let restriction = registry.scope("B").restrict(Restriction::deny(["other"]));
        tokio::task::yield_now().await;
        drop((guard, pre, observer, restriction));
        tokio::task::yield_now().await;
    }
}

#[test]
fn ten_thousand_calls_one_result_each() {
    quiet_panics();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_time()
        .build()
        .unwrap();
    let registry = Registry::new();
    let stats = Arc::new(BodyStats::default());
    install(&registry, &stats);
    let seen: Arc<Mutex<HashMap<String, usize>>> = Arc::default();
    let s = Arc::clone(&seen);
    registry
        .on_result(move |e: &ToolExecution, _r: &ToolExecutionResult| {
            *s.lock().unwrap().entry(e.call_id().to_owned()).or_default() += 1;
            Ok(())
        })
        .keep();
    let run = async {
        let stop = CancellationToken::new();
        let churner = tokio::spawn(churn(registry.clone(), stop.clone()));
        let mut tasks = Vec::new();
        for task in 0..TASKS {
            let registry = registry.clone();
            tasks.push(tokio::spawn(async move {
                let mut results = Vec::with_capacity(CALLS_PER_TASK);
                for i in 0..CALLS_PER_TASK {
                    let id = (task * CALLS_PER_TASK + i) as u64;
                    let r = mix(id);
                    let signal = CancellationToken::new();
                    // Cancellation: none, before the call, or after a few scheduler turns.
                    let cancel = r % 4;
                    let waits = cancel == 2 && (r >> 8).is_multiple_of(2);
                    if cancel == 1 {
                        signal.cancel();
                    } else if cancel == 2 {
                        let s = signal.clone();
                        let turns = (r >> 16) % 6;
                        tokio::spawn(async move {
                            for _ in 0..turns {
                                tokio::task::yield_now().await;
                            }
                            s.cancel();
                        });
                    }
                    let name = if (r >> 24).is_multiple_of(8) {
                        "other"
                    } else {
                        "work"
                    };
                    let mut input = ToolExecutionInput::new(
                        format!("call-{id}"),
                        name,
                        json!({"seed": r, "waits": waits}),
                        signal,
                    );
                    match (r >> 32) % 3 {
                        0 => input = input.agent("A"),
                        1 => input = input.agent("B"),
                        _ => {}
                    }
                    if (r >> 40).is_multiple_of(16) {
                        input.arguments = json!({"seed": r, "bad": -0.0});
                    }
                    let result = registry.execute(input).await;
                    results.push((format!("call-{id}"), result.is_error()));
                }
                results
            }));
        }
        let mut returned = Vec::new();
        for task in tasks {
            returned.extend(task.await.expect("no panic escapes execute"));
        }
        stop.cancel();
        churner.await.unwrap();
        returned
    };
    let returned = runtime
        .block_on(async { tokio::time::timeout(HANG, run).await })
        .expect("the calls settled");
    let total = TASKS * CALLS_PER_TASK;
    assert_eq!(returned.len(), total);
    let seen = seen.lock().unwrap();
    assert_eq!(seen.len(), total, "every call was observed");
    for (id, _) in &returned {
        assert_eq!(seen.get(id), Some(&1), "{id} observed exactly once");
    }
    assert_eq!(
        stats.started.load(Ordering::SeqCst),
        stats.settled.load(Ordering::SeqCst),
        "every started body settled"
    );
    let failures = returned.iter().filter(|(_, e)| *e).count();
    assert!(failures > 0 && failures < total, "a mix of outcomes");
}

//! The turn scheduler: classification, rolling pool, exclusive barriers, ordered policy and
//! commit, aborts (spec §7).

use dsh_tools::schedule::{ExecutionMode, TurnScheduler};
use dsh_tools::*;
use serde_json::{Value, json};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Bodies in flight now, and the most seen at once.
#[derive(Default)]
struct Gauge {
    now: AtomicUsize,
    max: AtomicUsize,
}

fn sleeper(
    name: &str,
    parallel: bool,
    gauge: Arc<Gauge>,
    exclusive_alone: Arc<Mutex<Vec<usize>>>,
) -> ToolDefinition {
    let def = ToolDefinition::new(
        name,
        "sleeps",
        json!({}),
        OutputDecl::text(),
        move |args, _| {
            let gauge = gauge.clone();
            let alone = exclusive_alone.clone();
            async move {
                let now = gauge.now.fetch_add(1, Ordering::SeqCst) + 1;
                gauge.max.fetch_max(now, Ordering::SeqCst);
                if !parallel {
                    alone.lock().unwrap().push(now);
                }
                let ms = args["ms"].as_u64().unwrap_or(5);
                tokio::time::sleep(Duration::from_millis(ms)).await;
                gauge.now.fetch_sub(1, Ordering::SeqCst);
                Ok(json!(args["id"].as_str().unwrap_or("").to_owned()))
            }
        },
    );
    if parallel {
        def.concurrency_safe(|_| true)
    } else {
        def
    }
}

fn call(i: usize, name: &str, ms: u64, turn: &CancellationToken) -> ToolExecutionInput {
    ToolExecutionInput::new(
        format!("c{i}"),
        name,
        json!({"id": format!("r{i}"), "ms": ms}),
        turn.clone(),
    )
}

fn setup() -> (Registry, Arc<Gauge>, Arc<Mutex<Vec<usize>>>) {
    let registry = Registry::new();
    let gauge = Arc::new(Gauge::default());
    let alone = Arc::new(Mutex::new(Vec::new()));
    registry
        .register(sleeper("par", true, gauge.clone(), alone.clone()))
        .unwrap()
        .keep();
    registry
        .register(sleeper("excl", false, gauge.clone(), alone.clone()))
        .unwrap()
        .keep();
    (registry, gauge, alone)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn results_policy_and_commit_follow_model_order() {
    let (registry, gauge, alone) = setup();
    let policy = Arc::new(Mutex::new(Vec::<String>::new()));
    let commits = Arc::new(Mutex::new(Vec::<String>::new()));
    let p = policy.clone();
    registry
        .on_pre_execute(move |exec: Arc<ToolExecution>, next: PreNext| {
            p.lock().unwrap().push(exec.call_id().to_owned());
            next.run()
        })
        .keep();
    let c = commits.clone();
    registry
        .on_result(move |exec: &ToolExecution, _r: &ToolExecutionResult| {
            c.lock().unwrap().push(exec.call_id().to_owned());
            Ok(())
        })
        .keep();
    let turn = CancellationToken::new();
    // Later calls finish first: commit order must still be model order.
    let mut calls: Vec<_> = (0..6)
        .map(|i| call(i, "par", 30 - 5 * i as u64, &turn))
        .collect();
    calls.push(call(6, "excl", 5, &turn));
    calls.extend((7..10).map(|i| call(i, "par", 5, &turn)));
    let results = TurnScheduler::new(registry)
        .width(4)
        .run(calls, &turn)
        .await;
    let texts: Vec<String> = results.iter().map(|r| r.text()).collect();
    let expected: Vec<String> = (0..10).map(|i| format!("r{i}")).collect();
    assert_eq!(texts, expected);
    let ids: Vec<String> = (0..10).map(|i| format!("c{i}")).collect();
    assert_eq!(
        *policy.lock().unwrap(),
        ids,
        "pre-execute runs in model order"
    );
    assert_eq!(
        *commits.lock().unwrap(),
        ids,
        "results are committed in model order"
    );
    assert!(
        gauge.max.load(Ordering::SeqCst) <= 4,
        "the pool width bounds concurrency"
    );
    assert!(
        gauge.max.load(Ordering::SeqCst) >= 2,
        "parallel calls overlapped"
    );
    assert_eq!(*alone.lock().unwrap(), [1], "the exclusive call ran alone");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn width_one_runs_serially() {
    let (registry, gauge, _) = setup();
    let turn = CancellationToken::new();
    let calls = (0..5).map(|i| call(i, "par", 2, &turn)).collect();
    let results = TurnScheduler::new(registry)
        .width(1)
        .run(calls, &turn)
        .await;
    assert!(results.iter().all(|r| !r.is_error()));
    assert_eq!(gauge.max.load(Ordering::SeqCst), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_aborted_turn_settles_started_calls_and_synthesizes_the_rest() {
    let (registry, _, _) = setup();
    let turn = CancellationToken::new();
    let t = turn.clone();
    // The first call's observer cancels the turn: calls already started settle normally.
    registry
        .on_result(move |exec: &ToolExecution, _r: &ToolExecutionResult| {
            if exec.call_id() == "c0" {
                t.cancel();
            }
            Ok(())
        })
        .keep();
    let calls = vec![
        call(0, "excl", 1, &turn),
        call(1, "excl", 1, &turn),
        call(2, "par", 1, &turn),
    ];
    let results = TurnScheduler::new(registry).run(calls, &turn).await;
    assert_eq!(results.len(), 3);
    assert_eq!(results[0].text(), "r0");
    for r in &results[1..] {
        assert_eq!(r.code(), Some("ABORTED_BEFORE_DISPATCH"));
        assert_eq!(r.text(), "Error: tool call aborted before dispatch");
    }
}

#[tokio::test]
async fn classification_is_fail_closed() {
    let registry = Registry::new();
    let tool = |name: &str| {
        ToolDefinition::new(name, "t", json!({}), OutputDecl::text(), |_, _| async {
            Ok(json!(""))
        })
    };
    registry.register(tool("plain")).unwrap().keep();
    registry
        .register(tool("safe").concurrency_safe(|_| true))
        .unwrap()
        .keep();
    registry
        .register(tool("reads").concurrency_safe(|args: &Value| args["mode"] == "read"))
        .unwrap()
        .keep();
    registry
        .register(tool("panics").concurrency_safe(|_| panic!("classifier broke")))
        .unwrap()
        .keep();
    let mode = |name: &str, args: Value| registry.execution_mode(name, &args, None, None);
    assert_eq!(mode("safe", json!({})), ExecutionMode::Parallel);
    assert_eq!(mode("plain", json!({})), ExecutionMode::Exclusive);
    assert_eq!(mode("missing", json!({})), ExecutionMode::Exclusive);
    assert_eq!(
        mode("reads", json!({"mode": "read"})),
        ExecutionMode::Parallel
    );
    assert_eq!(
        mode("reads", json!({"mode": "write"})),
        ExecutionMode::Exclusive
    );
    assert_eq!(mode("panics", json!({})), ExecutionMode::Exclusive);
    // Hidden by a restriction: exclusive, like an unknown tool.
    let scope = registry.scope("A");
    scope.restrict(Restriction::deny(["safe"])).unwrap().keep();
    assert_eq!(
        registry.execution_mode("safe", &json!({}), Some(&AgentId::new("A")), None),
        ExecutionMode::Exclusive
    );
    // Code Mode collapses model-direct calls: they are exclusive (and fail as UNKNOWN_TOOL).
    registry.set_presentation_mode(PresentationMode::Code);
    assert_eq!(mode("safe", json!({})), ExecutionMode::Exclusive);
}

//! Approvals inside Code Mode (issue 33, part 6) on the real engine: a sub-call waiting for a
//! person does not spend the program's compute budget, the wait is bounded by the wall budget
//! with a clear failure, and `Promise.all` over calls that ask yields one request per call in
//! submission order.

use dsh_tools::code::CodeRuntimeConfig;
use dsh_tools::code::quickjs::QuickJsRuntime;
use dsh_tools::registry::PresentationMode;
use dsh_tools::{
    AgentId, ApprovalOutcome, ApprovalRequest, CancellationToken, OutputDecl, PreToolDecision,
    Registry, ToolDefinition, ToolError, ToolExecution, ToolExecutionInput, ToolExecutionResult,
};
use serde_json::{Value, json};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

fn registry(config: CodeRuntimeConfig, runs: &Arc<AtomicUsize>) -> Registry {
    let registry = Registry::new();
    registry.set_presentation_mode(PresentationMode::Code);
    registry.set_code_runtime(QuickJsRuntime::new(config).unwrap());
    let runs = Arc::clone(runs);
    let write = ToolDefinition::new(
        "write",
        "writes",
        json!({"type": "object"}),
        OutputDecl::text(),
        move |args: Arc<Value>, _| {
            runs.fetch_add(1, Ordering::SeqCst);
            async move { Ok(json!(format!("wrote {}", args["n"]))) }
        },
    )
    .concurrency_safe(|_| true);
    registry.register(write).unwrap().keep();
    registry
        .on_pre_execute(
            |e: Arc<ToolExecution>, next: dsh_tools::PreNext| async move {
                if e.name() == "write" {
                    return Ok(PreToolDecision::ask(Some("writes")));
                }
                next.run().await
            },
        )
        .keep();
    registry
}

async fn run(registry: &Registry, code: &str) -> ToolExecutionResult {
    let mut input = ToolExecutionInput::new(
        "outer",
        "run_code",
        json!({"code": code, "description": "approvals"}),
        CancellationToken::new(),
    );
    input.agent = Some(AgentId::new("a"));
    tokio::time::timeout(Duration::from_secs(60), registry.execute(input))
        .await
        .expect("the run ended")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn waiting_for_a_person_spends_no_compute_budget() {
    // 300 ms of compute; the person takes 1.5 s to answer each of two calls.
    let config = CodeRuntimeConfig {
        compute_ms: 300.0,
        max_wall_ms: 30_000.0,
        ..CodeRuntimeConfig::default()
    };
    let runs = Arc::new(AtomicUsize::new(0));
    let registry = registry(config, &runs);
    registry.set_approval_service(|_r: ApprovalRequest| async {
        tokio::time::sleep(Duration::from_millis(1500)).await;
        Ok::<_, ToolError>(ApprovalOutcome::AllowedOnce)
    });
    let result = run(
        &registry,
        "const a = await tools.write({n: 1}); const b = await tools.write({n: 2}); return [a, b];",
    )
    .await;
    assert!(!result.is_error(), "{}", result.text());
    assert_eq!(
        result.value().unwrap()["result"],
        json!(["wrote 1", "wrote 2"])
    );
    assert_eq!(runs.load(Ordering::SeqCst), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unanswered_approval_ends_at_the_wall_budget_and_the_call_never_runs() {
    let config = CodeRuntimeConfig {
        max_wall_ms: 1_000.0,
        ..CodeRuntimeConfig::default()
    };
    let runs = Arc::new(AtomicUsize::new(0));
    let registry = registry(config, &runs);
    // A person who never answers; the service gives up when the call is cancelled (the run's
    // signal fires when the run ends).
    registry.set_approval_service(|r: ApprovalRequest| async move {
        r.signal.cancelled().await;
        Ok::<_, ToolError>(ApprovalOutcome::Cancelled)
    });
    let result = run(&registry, "return await tools.write({n: 1});").await;
    assert!(result.is_error());
    assert_eq!(result.code(), Some("CODE_RUN_FAILED"), "{}", result.text());
    assert!(
        result
            .text()
            .contains("wall-clock ceiling reached (1000ms)"),
        "{}",
        result.text()
    );
    assert_eq!(runs.load(Ordering::SeqCst), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn promise_all_over_calls_that_ask_asks_once_per_call_in_submission_order() {
    let runs = Arc::new(AtomicUsize::new(0));
    let registry = registry(CodeRuntimeConfig::default(), &runs);
    let asked: Arc<Mutex<Vec<Value>>> = Arc::default();
    let seen = Arc::clone(&asked);
    registry.set_approval_service(move |r: ApprovalRequest| {
        seen.lock()
            .unwrap()
            .push(r.arguments.as_deref().cloned().unwrap());
        // Answer later calls sooner: the requests must still come in submission order.
        let n = r.arguments.as_deref().unwrap()["n"].as_u64().unwrap();
        async move {
            tokio::time::sleep(Duration::from_millis(60 - 10 * n)).await;
            Ok::<_, ToolError>(match n {
                3 => ApprovalOutcome::Rejected,
                _ => ApprovalOutcome::AllowedOnce,
            })
        }
    });
    let result = run(
        &registry,
        "const calls = [0, 1, 2, 3, 4].map(n => tools.write({n}).catch(e => 'refused: ' + e.message));\n\
         return await Promise.all(calls);",
    )
    .await;
    assert!(!result.is_error(), "{}", result.text());
    assert_eq!(
        *asked.lock().unwrap(),
        (0..5).map(|n| json!({"n": n})).collect::<Vec<_>>()
    );
    assert_eq!(
        result.value().unwrap()["result"],
        json!([
            "wrote 0",
            "wrote 1",
            "wrote 2",
            "refused: the user rejected tool \"write\"",
            "wrote 4"
        ])
    );
    assert_eq!(runs.load(Ordering::SeqCst), 4);
}

//! Approvals inside Code Mode (issue 33, part 6) on the real engine: a sub-call waiting for a
//! person does not spend the program's compute budget, the wait is bounded by the wall budget
//! with a clear failure, and `Promise.all` over calls that ask yields one request per call in
//! submission order. In deferred mode a program that asks settles as a `PendingProgram` and is
//! replayed from its journal when answered: nothing runs twice.

use dsh_tools::code::CodeRuntimeConfig;
use dsh_tools::code::quickjs::QuickJsRuntime;
use dsh_tools::pipeline::{ApprovalAnswer, Deferred, PendingProgram};
use dsh_tools::registry::PresentationMode;
use dsh_tools::schedule::{DeferredTurn, TurnCall, TurnScheduler};
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

// ---- deferred mode: a program that asks settles as a PendingProgram and is replayed ---------

/// A registry with `read` (allowed, counted) and `write` (asks, counted), observed.
struct Deferring {
    registry: Registry,
    reads: Arc<AtomicUsize>,
    writes: Arc<AtomicUsize>,
    observed: Arc<Mutex<Vec<String>>>,
}

fn deferring() -> Deferring {
    let writes = Arc::new(AtomicUsize::new(0));
    let registry = registry(CodeRuntimeConfig::default(), &writes);
    let reads = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&reads);
    let read = ToolDefinition::new(
        "read",
        "reads",
        json!({"type": "object"}),
        OutputDecl::json(json!({})),
        move |args: Arc<Value>, _| {
            counter.fetch_add(1, Ordering::SeqCst);
            async move { Ok(json!({"n": args["n"], "text": format!("file {}", args["n"])})) }
        },
    );
    registry.register(read).unwrap().keep();
    let observed: Arc<Mutex<Vec<String>>> = Arc::default();
    let seen = Arc::clone(&observed);
    registry
        .on_result(move |e: &ToolExecution, _r: &ToolExecutionResult| {
            seen.lock().unwrap().push(e.call_id().to_owned());
            Ok(())
        })
        .keep();
    Deferring {
        registry,
        reads,
        writes,
        observed,
    }
}

fn program_input(code: &str) -> ToolExecutionInput {
    ToolExecutionInput::new(
        "outer",
        "run_code",
        json!({"code": code, "description": "deferred"}),
        CancellationToken::new(),
    )
    .agent("a")
}

async fn deferred(registry: &Registry, code: &str) -> Deferred {
    tokio::time::timeout(
        Duration::from_secs(60),
        registry.execute_deferred(program_input(code)),
    )
    .await
    .expect("the run ended")
}

fn stopped(deferred: Deferred) -> PendingProgram {
    match deferred {
        Deferred::Program(program) => program,
        Deferred::Settled(r) => panic!("settled: {}", r.text()),
        Deferred::Pending(p) => panic!("the run_code call itself is pending: {p:?}"),
    }
}

fn settled(deferred: Deferred) -> ToolExecutionResult {
    match deferred {
        Deferred::Settled(r) => r,
        other => panic!("not settled: {other:?}"),
    }
}

async fn answer(
    registry: &Registry,
    program: PendingProgram,
    outcome: ApprovalOutcome,
) -> Result<Deferred, dsh_tools::pipeline::ResumeError> {
    let answer = ApprovalAnswer::new(&program.approval.id, outcome, "a");
    tokio::time::timeout(
        Duration::from_secs(60),
        registry.resume_program(program, answer),
    )
    .await
    .expect("the resume ended")
}

const READ_THEN_WRITE: &str = "const a = await tools.read({n: 1});\n\
    console.log('read', a.text);\n\
    const b = await tools.write({n: 2});\n\
    return [a.n, b];";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_program_that_asks_stops_and_its_replay_runs_nothing_twice() {
    let d = deferring();
    let program = stopped(deferred(&d.registry, READ_THEN_WRITE).await);
    assert_eq!(program.approval.tool, "write");
    assert_eq!(program.approval.program.as_deref(), Some("outer"));
    assert_eq!(program.approval.call_id, "outer:code:2");
    assert_eq!(program.waiting, 2);
    assert_eq!(program.journal.len(), 1);
    assert_eq!(program.journal[0].tool, "read");
    assert_eq!(
        (
            d.reads.load(Ordering::SeqCst),
            d.writes.load(Ordering::SeqCst)
        ),
        (1, 0)
    );
    // The read was observed; the stopped run_code call was not.
    assert_eq!(*d.observed.lock().unwrap(), ["outer:code:1"]);
    // The program is data: it goes through JSON (a file, a queue, another process).
    let program: PendingProgram =
        serde_json::from_str(&serde_json::to_string(&program).unwrap()).unwrap();

    let result = settled(
        answer(&d.registry, program.clone(), ApprovalOutcome::AllowedOnce)
            .await
            .unwrap(),
    );
    assert!(!result.is_error(), "{}", result.text());
    assert_eq!(result.value().unwrap()["result"], json!([1, "wrote 2"]));
    // The log of the replayed run is the program's whole output.
    assert!(result.text().contains("read file 1"), "{}", result.text());
    assert_eq!(
        (
            d.reads.load(Ordering::SeqCst),
            d.writes.load(Ordering::SeqCst)
        ),
        (1, 1)
    );
    assert_eq!(
        *d.observed.lock().unwrap(),
        ["outer:code:1", "outer:code:2", "outer"],
        "the journaled read is not observed again"
    );
    // Answered once: a second resume of the same program runs nothing.
    let again = answer(&d.registry, program, ApprovalOutcome::AllowedOnce).await;
    assert!(
        matches!(
            again,
            Err(dsh_tools::pipeline::ResumeError::AlreadyAnswered(_)
                | dsh_tools::pipeline::ResumeError::Unknown(_))
        ),
        "{again:?}"
    );
    assert_eq!(
        (
            d.reads.load(Ordering::SeqCst),
            d.writes.load(Ordering::SeqCst)
        ),
        (1, 1)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rejection_is_what_the_replayed_program_sees() {
    let d = deferring();
    let code = "try { await tools.write({n: 1}); return 'written'; } \
                catch (e) { return `refused: ${e.message}`; }";
    let program = stopped(deferred(&d.registry, code).await);
    let result = settled(
        answer(&d.registry, program, ApprovalOutcome::Rejected)
            .await
            .unwrap(),
    );
    assert!(!result.is_error(), "{}", result.text());
    assert_eq!(
        result.value().unwrap()["result"],
        json!("refused: the user rejected tool \"write\"")
    );
    assert_eq!(d.writes.load(Ordering::SeqCst), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn calls_that_ask_in_parallel_are_answered_one_round_each_in_submission_order() {
    let d = deferring();
    let code = "const r = await Promise.all([tools.write({n: 1}), tools.read({n: 2}), tools.write({n: 3})]);\n\
                return r.map(x => typeof x === 'string' ? x : x.n);";
    let first = stopped(deferred(&d.registry, code).await);
    assert_eq!(
        (first.waiting, first.approval.arguments.clone()),
        (1, json!({"n": 1}))
    );
    // Nothing after the waiting call started (as inline, where starts wait for the answer).
    assert_eq!(
        (
            d.reads.load(Ordering::SeqCst),
            d.writes.load(Ordering::SeqCst)
        ),
        (0, 0)
    );
    let second = stopped(
        answer(&d.registry, first, ApprovalOutcome::AllowedOnce)
            .await
            .unwrap(),
    );
    assert_eq!(
        (second.waiting, second.approval.arguments.clone()),
        (3, json!({"n": 3}))
    );
    assert_eq!(second.journal.len(), 2, "the first write and the read");
    let result = settled(
        answer(&d.registry, second, ApprovalOutcome::AllowedOnce)
            .await
            .unwrap(),
    );
    assert_eq!(
        result.value().unwrap()["result"],
        json!(["wrote 1", 2, "wrote 3"])
    );
    assert_eq!(
        (
            d.reads.load(Ordering::SeqCst),
            d.writes.load(Ordering::SeqCst)
        ),
        (1, 2)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_replay_that_makes_another_call_fails_and_the_approved_call_never_runs() {
    let d = deferring();
    // The first call's arguments change between runs: the replay diverges at once.
    let code = "await tools.read({n: Math.random()}); await tools.write({n: 1}); return 'done';";
    let program = stopped(deferred(&d.registry, code).await);
    let result = settled(
        answer(&d.registry, program, ApprovalOutcome::AllowedOnce)
            .await
            .unwrap(),
    );
    assert!(result.is_error());
    assert_eq!(result.code(), Some("CODE_RUN_FAILED"));
    assert!(
        result
            .text()
            .contains("made another call than before at call 1"),
        "{}",
        result.text()
    );
    assert_eq!(
        (
            d.reads.load(Ordering::SeqCst),
            d.writes.load(Ordering::SeqCst)
        ),
        (1, 0)
    );
    // The claimed approval is gone: nothing can run it.
    let page = d.registry.pending_approvals(None, 10).await.unwrap();
    assert!(page.approvals.is_empty(), "{page:?}");

    // A program that no longer makes the approved call at all.
    let d = deferring();
    let code = "const r = await tools.read({n: 1}); if (r.n === 1) { await tools.write({n: 1}); } return 'ok';";
    let program = stopped(deferred(&d.registry, code).await);
    let mut changed = program.clone();
    changed.journal[0].result = ToolExecutionResult::success(json!({"n": 2}));
    let result = settled(
        answer(&d.registry, changed, ApprovalOutcome::AllowedOnce)
            .await
            .unwrap(),
    );
    assert_eq!(result.code(), Some("CODE_RUN_FAILED"));
    assert!(
        result.text().contains("did not make call 2 again"),
        "{}",
        result.text()
    );
    assert_eq!(d.writes.load(Ordering::SeqCst), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_programs_approval_is_not_answered_alone_nor_for_another_agent() {
    let d = deferring();
    let program = stopped(deferred(&d.registry, READ_THEN_WRITE).await);
    let alone = d
        .registry
        .resume(ApprovalAnswer::new(
            &program.approval.id,
            ApprovalOutcome::AllowedOnce,
            "a",
        ))
        .await;
    assert!(
        matches!(alone, Err(dsh_tools::pipeline::ResumeError::InProgram(_))),
        "{alone:?}"
    );
    let other = d
        .registry
        .resume_program(
            program.clone(),
            ApprovalAnswer::new(&program.approval.id, ApprovalOutcome::AllowedOnce, "b"),
        )
        .await;
    assert!(
        matches!(
            other,
            Err(dsh_tools::pipeline::ResumeError::WrongAgent { .. })
        ),
        "{other:?}"
    );
    // An answer for another approval than the program's.
    let wrong = d
        .registry
        .resume_program(
            program.clone(),
            ApprovalAnswer::new(
                "0123456789abcdef0123456789abcdef",
                ApprovalOutcome::AllowedOnce,
                "a",
            ),
        )
        .await;
    assert!(
        matches!(wrong, Err(dsh_tools::pipeline::ResumeError::Unknown(_))),
        "{wrong:?}"
    );
    assert_eq!(d.writes.load(Ordering::SeqCst), 0);
    // Still answerable.
    let result = settled(
        answer(&d.registry, program, ApprovalOutcome::AllowedOnce)
            .await
            .unwrap(),
    );
    assert!(!result.is_error(), "{}", result.text());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_deferred_turn_with_a_program_resumes_through_the_scheduler() {
    let d = deferring();
    let turn = CancellationToken::new();
    let calls = vec![
        // A program that does not ask settles in the same turn.
        ToolExecutionInput::new(
            "c1",
            "run_code",
            json!({"code": "return (await tools.read({n: 0})).n;", "description": "read"}),
            turn.clone(),
        )
        .agent("a"),
        program_input(READ_THEN_WRITE),
    ];
    let scheduler = TurnScheduler::new(d.registry.clone());
    let waiting = scheduler.run_deferred(calls, &turn).await;
    let pending: Vec<_> = waiting.pending().cloned().collect();
    assert_eq!(pending.len(), 1);
    assert_eq!(pending[0].tool, "write");
    assert!(matches!(waiting.calls[1], TurnCall::Program { .. }));
    let waiting: DeferredTurn =
        serde_json::from_str(&serde_json::to_string(&waiting).unwrap()).unwrap();
    let answers = vec![ApprovalAnswer::new(
        &pending[0].id,
        ApprovalOutcome::AllowedOnce,
        "a",
    )];
    let done = scheduler.resume(waiting, answers).await.unwrap();
    let results = done.results().expect("every call settled");
    assert_eq!(results[0].value().unwrap()["result"], json!(0));
    assert_eq!(results[1].value().unwrap()["result"], json!([1, "wrote 2"]));
    assert_eq!(
        (
            d.reads.load(Ordering::SeqCst),
            d.writes.load(Ordering::SeqCst)
        ),
        (2, 1)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_code_call_that_asks_itself_resumes_deferred_and_its_program_waits_too() {
    let d = deferring();
    // A policy that asks before any program, as well as before writes.
    d.registry
        .on_pre_execute_first(
            |e: Arc<ToolExecution>, next: dsh_tools::PreNext| async move {
                if e.name() == "run_code" {
                    return Ok(PreToolDecision::ask(Some("runs code")));
                }
                next.run().await
            },
        )
        .keep();
    let pending = match deferred(&d.registry, READ_THEN_WRITE).await {
        Deferred::Pending(p) => p,
        other => panic!("not pending: {other:?}"),
    };
    assert_eq!(pending.tool, "run_code");
    let resumed = d
        .registry
        .resume_deferred(ApprovalAnswer::new(
            &pending.id,
            ApprovalOutcome::AllowedOnce,
            "a",
        ))
        .await
        .unwrap();
    // The program ran, and its write waits as well (it did not block, nor was it refused).
    let program = stopped(resumed);
    assert_eq!(program.approval.tool, "write");
    let result = settled(
        answer(&d.registry, program, ApprovalOutcome::AllowedOnce)
            .await
            .unwrap(),
    );
    assert_eq!(result.value().unwrap()["result"], json!([1, "wrote 2"]));
    assert_eq!(
        (
            d.reads.load(Ordering::SeqCst),
            d.writes.load(Ordering::SeqCst)
        ),
        (1, 1)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_wrapper_that_retries_a_stopped_program_does_not_run_its_calls_twice() {
    let d = deferring();
    d.registry
        .on_execute(dsh_tools::wrappers::retry(3).when(|r| r.is_error()))
        .keep();
    let program = stopped(deferred(&d.registry, READ_THEN_WRITE).await);
    assert_eq!(program.journal.len(), 1);
    assert_eq!(d.reads.load(Ordering::SeqCst), 1, "the read ran once");
    let result = settled(
        answer(&d.registry, program, ApprovalOutcome::AllowedOnce)
            .await
            .unwrap(),
    );
    assert_eq!(result.value().unwrap()["result"], json!([1, "wrote 2"]));
    assert_eq!(
        (
            d.reads.load(Ordering::SeqCst),
            d.writes.load(Ordering::SeqCst)
        ),
        (1, 1)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_deferred_runs_journal_is_bounded() {
    let d = deferring();
    d.registry.set_code_host_limits(
        dsh_tools::code::CodeHostLimits::default().max_journal_bytes(64 << 10),
    );
    // 1,000 reads of ~100 bytes each: past 64 KiB of journal before any approval.
    let code = "for (let i = 0; i < 1000; i++) { await tools.read({n: i, pad: 'x'.repeat(64)}); } return 'done';";
    let result = settled(deferred(&d.registry, code).await);
    assert_eq!(result.code(), Some("CODE_RUN_FAILED"), "{}", result.text());
    assert!(
        result.text().contains("max_journal_bytes"),
        "{}",
        result.text()
    );
    let reads = d.reads.load(Ordering::SeqCst);
    assert!(
        reads < 1000,
        "{reads} reads: the run went on past the bound"
    );
    // Inline, the same program keeps no journal and completes.
    let inline = run(&d.registry, code).await;
    assert!(!inline.is_error(), "{}", inline.text());
}

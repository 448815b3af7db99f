//! `call/{direct,bare,hooked}`: one call of a raw no-op tool returning a short string —
//! awaited directly, through the registry with no hooks, and through one pass-through hook of
//! each kind (pre-execute, guard, wrapper, post-execute, result observer); `hooked_subscribed`
//! is `hooked` with a `tracing` subscriber that is interested in every span and records nothing
//! (what the call's spans cost once something listens; issue 37).
//! `approval/{allow,ask_granted}`: the same call by an agent through a pre-execute hook that
//! allows, and through one that asks, answered by a remembered grant (issue 33: ≤ 1.2×).
//! `turn/pool16`: the scheduler runs 64 concurrency-safe calls of a tool that sleeps 10 ms with a
//! pool of 16 (ideal: 4 waves, 40 ms).

use criterion::{Criterion, criterion_group, criterion_main};
use dsh_tools::schedule::TurnScheduler;
use dsh_tools::*;
use serde_json::{Value, json};
use std::hint::black_box;
use std::sync::Arc;
use std::time::Duration;

async fn noop(_args: Arc<Value>, _ctx: ToolRunContext) -> Result<Value, ToolError> {
    Ok(Value::String("ok".to_owned()))
}

fn noop_tool() -> ToolDefinition {
    ToolDefinition::new(
        "noop",
        "does nothing",
        json!({"type": "object"}),
        OutputDecl::text(),
        noop,
    )
}

fn input() -> ToolExecutionInput {
    ToolExecutionInput::new(
        "c1",
        "noop",
        json!({"path": "/tmp/a"}),
        CancellationToken::new(),
    )
}

fn call(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let bare = Registry::new();
    bare.register(noop_tool()).unwrap().keep();
    let hooked = Registry::new();
    hooked.register(noop_tool()).unwrap().keep();
    hooked.on_pre_execute(|_e, next: PreNext| next.run()).keep();
    hooked.guard(|_e: &ToolExecution| None).keep();
    hooked.on_execute(|_c, next: ExecuteNext| next.run()).keep();
    hooked
        .on_post_execute(|_e, _r, next: PostNext| next.run())
        .keep();
    hooked
        .on_result(|_e: &ToolExecution, _r: &ToolExecutionResult| Ok(()))
        .keep();
    assert_eq!(rt.block_on(hooked.execute(input())).text(), "ok");

    let ctx = capture_ctx();
    let mut group = c.benchmark_group("call");
    group.bench_function("direct", |b| {
        b.iter(|| {
            // The same inputs the registry gets (arguments built per call), awaited directly.
            let args = Arc::new(json!({"path": "/tmp/a"}));
            run_now(&rt, noop(black_box(args), ctx.clone()))
        })
    });
    group.bench_function("bare", |b| {
        b.iter(|| run_now(&rt, bare.execute(black_box(input()))))
    });
    group.bench_function("hooked", |b| {
        b.iter(|| run_now(&rt, hooked.execute(black_box(input()))))
    });
    group.bench_function("hooked_subscribed", |b| {
        tracing::subscriber::with_default(Silent, || {
            b.iter(|| run_now(&rt, hooked.execute(black_box(input()))))
        })
    });
    group.finish();
}

/// A subscriber interested in every span and event that keeps nothing: the cost of the spans'
/// fields and bookkeeping, without a real subscriber's own work.
struct Silent;

impl tracing::Subscriber for Silent {
    fn enabled(&self, _: &tracing::Metadata<'_>) -> bool {
        true
    }
    fn new_span(&self, _: &tracing::span::Attributes<'_>) -> tracing::span::Id {
        tracing::span::Id::from_u64(1)
    }
    fn record(&self, _: &tracing::span::Id, _: &tracing::span::Record<'_>) {}
    fn record_follows_from(&self, _: &tracing::span::Id, _: &tracing::span::Id) {}
    fn event(&self, _: &tracing::Event<'_>) {}
    fn enter(&self, _: &tracing::span::Id) {}
    fn exit(&self, _: &tracing::span::Id) {}
}

/// Polls `fut` once with a no-op waker (a no-op call completes in one poll), falling back to the
/// runtime otherwise: entering a runtime costs more than the calls measured here.
fn run_now<F: Future>(rt: &tokio::runtime::Runtime, fut: F) -> F::Output {
    let mut fut = std::pin::pin!(fut);
    let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
    match fut.as_mut().poll(&mut cx) {
        std::task::Poll::Ready(out) => out,
        std::task::Poll::Pending => rt.block_on(fut),
    }
}

/// A body context for the direct baseline, taken from a real execution once.
fn capture_ctx() -> ToolRunContext {
    let registry = Registry::new();
    let slot: Arc<std::sync::Mutex<Option<ToolRunContext>>> = Arc::default();
    let s = slot.clone();
    registry
        .register(ToolDefinition::new(
            "capture",
            "keeps its context",
            json!({}),
            OutputDecl::text(),
            move |_, ctx| {
                *s.lock().unwrap() = Some(ctx);
                async { Ok(json!("")) }
            },
        ))
        .unwrap()
        .keep();
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    rt.block_on(registry.execute(ToolExecutionInput::new(
        "c",
        "capture",
        json!({}),
        CancellationToken::new(),
    )));
    slot.lock().unwrap().take().unwrap()
}

fn turn(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let registry = Registry::new();
    registry
        .register(
            ToolDefinition::new(
                "sleep",
                "sleeps 10 ms",
                json!({}),
                OutputDecl::text(),
                |_, _| async {
                    tokio::time::sleep(Duration::from_millis(10)).await;
                    Ok(json!("slept"))
                },
            )
            .concurrency_safe(|_| true),
        )
        .unwrap()
        .keep();
    let scheduler = TurnScheduler::new(registry).width(16);
    let mut group = c.benchmark_group("turn");
    group.sample_size(20);
    group.bench_function("pool16", |b| {
        b.iter(|| {
            let turn = CancellationToken::new();
            let calls = (0..64)
                .map(|i| ToolExecutionInput::new(format!("c{i}"), "sleep", json!({}), turn.clone()))
                .collect();
            let results = rt.block_on(scheduler.run(calls, &turn));
            assert_eq!(results.len(), 64);
            results
        })
    });
    group.finish();
}

fn approval(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let allow = Registry::new();
    allow.register(noop_tool()).unwrap().keep();
    allow
        .on_pre_execute(|_e, _next: PreNext| async { Ok(PreToolDecision::Allow) })
        .keep();
    let granted = Registry::new();
    granted.register(noop_tool()).unwrap().keep();
    granted
        .on_pre_execute(|_e, _next: PreNext| async { Ok(PreToolDecision::ask_user()) })
        .keep();
    granted.grant(Grant {
        key: GrantKey::new("noop").agent(AgentId::new("a")),
        decision: GrantDecision::Allow,
    });
    let input = || input().agent("a");
    assert_eq!(rt.block_on(allow.execute(input())).text(), "ok");
    assert_eq!(rt.block_on(granted.execute(input())).text(), "ok");
    let mut group = c.benchmark_group("approval");
    group.bench_function("allow", |b| {
        b.iter(|| run_now(&rt, allow.execute(black_box(input()))))
    });
    group.bench_function("ask_granted", |b| {
        b.iter(|| run_now(&rt, granted.execute(black_box(input()))))
    });
    group.finish();
}

criterion_group!(benches, call, approval, turn);
criterion_main!(benches);

//! Code Mode (feature `typescript`):
//! `code/run/empty`: one `run_code` program that returns a constant, thread and engine included;
//! `code/calls/100`: one program making 100 sequential calls of a no-op tool;
//! `code/direct/100`: the same 100 calls through `Registry::execute`, the baseline;
//! `code/parallel/100`: one `Promise.all` of 100 calls of a concurrency-safe no-op, against
//! `code/join_all/100`, the same 100 calls run concurrently with `join_all`;
//! `code/concurrent/64x10`: 64 programs of 10 sequential calls each, at once (each a task on the
//! 2-worker runtime), against `code/concurrent_direct/64x10`, 64 tasks making the same 10 calls
//! through `Registry::execute`.
//!
//! Floors, the engine alone (no thread, no type stripping, no bridge of ours, no pipeline), to
//! show what no scheduling can remove: `code/floor/engine` creates a QuickJS runtime and context
//! and evaluates a constant; `code/floor/await100` runs, in a context made beforehand, a compiled
//! async function awaiting 100 calls of a native function that returns a resolved promise. Two
//! more make those calls cross a sub-call's boundary both ways, argument to a `serde_json::Value`
//! and answer back: `code/floor/bridge100` as JSON text (the engine's `JSON.stringify` and
//! `JSON.parse`, serde_json between), `code/floor/bridge100_walk` by walking the engine's value
//! with rquickjs calls (the cheaper of the two). `code/floor/all100_walk` is one `Promise.all` of
//! 100 such walked calls: `code/parallel/100`'s program with no pipeline at all.
//!
//! With `CODE_MEMORY=1` it measures memory instead: the peak RSS the hostile programs of issue
//! 43.2 reach, each in a child process, against the sum of the default limits. With
//! `CODE_WARM_RSS=1`, what an idle warm engine holds resident. With `CODE_COUNT=<calls>`, only
//! runs of a program making that many sub-calls, for an instruction counter ([`count`]), and with
//! `CODE_COUNT_FLOOR`, the baselines' rounds ([`count_floor`]). With `CODE_PAIRED=1`, the call
//! targets against their floors, interleaved ([`paired`]).

use criterion::{Criterion, criterion_group};
use dsh_tools::code::quickjs::QuickJsRuntime;
use dsh_tools::registry::PresentationMode;
use dsh_tools::*;
use serde_json::{Value, json};
use std::hint::black_box;
use std::sync::Arc;

async fn noop(_args: Arc<Value>, _ctx: ToolRunContext) -> Result<Value, ToolError> {
    Ok(Value::String("ok".to_owned()))
}

/// The registry's runtime, shared with the bench (to wait until its warm engines are back).
struct Shared(Arc<QuickJsRuntime>);

impl dsh_tools::code::CodeRuntime for Shared {
    fn language(&self) -> &str {
        self.0.language()
    }
    fn isolation(&self) -> &str {
        self.0.isolation()
    }
    fn run(
        &self,
        request: dsh_tools::code::CodeRequest,
    ) -> dsh_tools::pipeline::BoxFuture<
        Result<dsh_tools::code::CodeResult, dsh_tools::code::SeamError>,
    > {
        self.0.run(request)
    }
    fn run_with(
        &self,
        request: dsh_tools::code::CodeRequest,
        companion: dsh_tools::code::Companion,
    ) -> dsh_tools::pipeline::BoxFuture<dsh_tools::code::RunWithOutcome> {
        self.0.run_with(request, companion)
    }
}

/// Times `run` alone, each time once the runtime's warm engines are all back (the latency of a
/// run in an agent loop, where runs are a model turn apart).
fn warm_iters(engine: &QuickJsRuntime, iters: u64, mut run: impl FnMut()) -> std::time::Duration {
    let mut total = std::time::Duration::ZERO;
    for _ in 0..iters {
        while engine.warm_engines() < 2 || engine.runs_in_flight() > 0 {
            std::thread::sleep(std::time::Duration::from_micros(200));
        }
        let started = std::time::Instant::now();
        run();
        total += started.elapsed();
    }
    total
}

fn registry() -> Registry {
    registry_on(Arc::new(QuickJsRuntime::new(Default::default()).unwrap()))
}

/// A registry with the no-op tool `noop` alone.
fn noop_registry() -> Registry {
    let registry = Registry::new();
    let tool = ToolDefinition::new(
        "noop",
        "does nothing",
        json!({"type": "object"}),
        OutputDecl::text(),
        noop,
    );
    registry.register(tool).unwrap().keep();
    registry
}

/// The baselines' 100 calls of `tool` through `Registry::execute`: one after another, or all at
/// once with `join_all`.
async fn direct_hundred(registry: &Registry, tool: &'static str, concurrent: bool) {
    let inputs = (0..100).map(move |i| {
        ToolExecutionInput::new(
            format!("c{i}"),
            tool,
            json!({"path": "/tmp/a"}),
            CancellationToken::new(),
        )
    });
    if concurrent {
        black_box(
            futures_util::future::join_all(inputs.map(|input| registry.execute(input))).await,
        );
    } else {
        for input in inputs {
            black_box(registry.execute(input).await);
        }
    }
}

/// A number from the environment variable `name`, else `default`.
fn env_usize(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(default)
}

fn registry_on(engine: Arc<QuickJsRuntime>) -> Registry {
    let registry = noop_registry();
    let parallel = ToolDefinition::new(
        "pnoop",
        "does nothing, concurrently",
        json!({"type": "object"}),
        OutputDecl::text(),
        noop,
    )
    .concurrency_safe(|_| true);
    registry.register(parallel).unwrap().keep();
    registry.set_code_runtime(Shared(engine));
    registry.set_presentation_mode(PresentationMode::Both);
    registry
}

/// Runs `code` through `run_code` and checks that it succeeded.
fn run_ok(rt: &tokio::runtime::Runtime, registry: &Registry, code: &str) -> ToolExecutionResult {
    let result = rt.block_on(registry.execute(run_code(code)));
    assert!(!result.is_error(), "{}", result.text());
    result
}

fn run_code(code: &str) -> ToolExecutionInput {
    let args = json!({"code": code, "description": "bench"});
    ToolExecutionInput::new("c1", "run_code", args, CancellationToken::new())
}

/// The floor's binding: reads the argument, returns an already resolved promise.
fn resolved<'js>(
    ctx: rquickjs::Ctx<'js>,
    args: rquickjs::Object<'js>,
) -> rquickjs::Result<rquickjs::Promise<'js>> {
    let path: String = args.get("path")?;
    let (promise, resolve, _) = ctx.promise()?;
    resolve.call::<_, ()>((path.len() as i32,))?;
    Ok(promise)
}

/// A bridge floor's binding: a sub-call's boundary crossed both ways with the engine's own C
/// code and no checks of ours. The argument goes to JSON text by the engine's
/// `JSON.stringify`, that text to a `serde_json::Value`, and an answer `Value` comes back as text
/// through the engine's `JSON.parse`, resolving an already settled promise.
fn marshalled<'js>(
    ctx: rquickjs::Ctx<'js>,
    args: rquickjs::Value<'js>,
) -> rquickjs::Result<rquickjs::Promise<'js>> {
    let text = match ctx.json_stringify(args)? {
        Some(text) => text.to_string()?,
        None => "null".to_owned(),
    };
    let value: Value = serde_json::from_str(&text).unwrap_or(Value::Null);
    black_box(&value);
    let answer = serde_json::to_string(&Value::String("ok".to_owned())).unwrap_or_default();
    let answer = ctx.json_parse(answer)?;
    let (promise, resolve, _) = ctx.promise()?;
    resolve.call::<_, ()>((answer,))?;
    Ok(promise)
}

/// `marshalled` with the argument read by a walk over the engine's value (rquickjs calls, no
/// JSON text) and the answer made as an engine string: the other way across.
fn walked<'js>(
    ctx: rquickjs::Ctx<'js>,
    args: rquickjs::Value<'js>,
) -> rquickjs::Result<rquickjs::Promise<'js>> {
    fn to_json(v: &rquickjs::Value<'_>) -> rquickjs::Result<Value> {
        use rquickjs::Type;
        Ok(match v.type_of() {
            Type::Bool => Value::Bool(v.as_bool().unwrap_or(false)),
            Type::Int => json!(v.as_int().unwrap_or(0)),
            Type::Float => json!(v.as_float().unwrap_or(0.0)),
            Type::String => match v.as_string() {
                Some(s) => Value::String(s.to_string()?),
                None => Value::Null,
            },
            Type::Array => match v.as_array() {
                Some(items) => Value::Array(
                    items
                        .iter::<rquickjs::Value>()
                        .map(|x| to_json(&x?))
                        .collect::<rquickjs::Result<_>>()?,
                ),
                None => Value::Null,
            },
            Type::Object => match v.as_object() {
                Some(o) => {
                    let mut map = serde_json::Map::new();
                    for entry in o.props::<String, rquickjs::Value>() {
                        let (k, x) = entry?;
                        map.insert(k, to_json(&x)?);
                    }
                    Value::Object(map)
                }
                None => Value::Null,
            },
            _ => Value::Null,
        })
    }
    black_box(to_json(&args)?);
    let answer = rquickjs::String::from_str(ctx.clone(), "ok")?;
    let (promise, resolve, _) = ctx.promise()?;
    resolve.call::<_, ()>((answer,))?;
    Ok(promise)
}

/// Runs the compiled async function `name` (a floor's 100 awaits) in `context` to its end.
fn await_hundred(runtime: &rquickjs::Runtime, context: &rquickjs::Context, name: &str) {
    context.with(|ctx| {
        ctx.globals().set("done", false).unwrap();
        let hundred: rquickjs::Function = ctx.globals().get(name).unwrap();
        drop(hundred.call::<_, rquickjs::Value>(()).unwrap());
    });
    while runtime.execute_pending_job().unwrap() {}
    assert!(context.with(|ctx| ctx.globals().get::<_, bool>("done").unwrap()));
}

/// A context with the intrinsics the QuickJS runtime gives a program (code/quickjs/engine.rs).
fn engine_context(runtime: &rquickjs::Runtime) -> rquickjs::Context {
    use rquickjs::context::intrinsic::*;
    rquickjs::Context::custom::<(
        Date,
        Eval,
        RegExpCompiler,
        RegExp,
        Json,
        Proxy,
        MapSet,
        TypedArrays,
        Promise,
        WeakRef,
    )>(runtime)
    .unwrap()
}

fn code(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let engine = Arc::new(QuickJsRuntime::new(Default::default()).unwrap());
    let registry = registry_on(Arc::clone(&engine));
    let mut group = c.benchmark_group("code");
    group.bench_function("run/empty", |b| {
        b.iter(|| black_box(run_ok(&rt, &registry, "return 1")))
    });
    let hundred = "for (let i = 0; i < 100; i++) await tools.noop({path: '/tmp/a'}); return 1";
    group.bench_function("calls/100", |b| {
        b.iter(|| black_box(run_ok(&rt, &registry, hundred)))
    });
    group.bench_function("run/empty_warm", |b| {
        b.iter_custom(|iters| {
            warm_iters(&engine, iters, || {
                run_ok(&rt, &registry, "return 1");
            })
        })
    });
    group.bench_function("calls/100_warm", |b| {
        b.iter_custom(|iters| {
            warm_iters(&engine, iters, || {
                run_ok(&rt, &registry, hundred);
            })
        })
    });
    group.bench_function("direct/100", |b| {
        b.iter(|| rt.block_on(direct_hundred(&registry, "noop", false)))
    });
    let all = "await Promise.all(Array.from({length: 100}, () => tools.pnoop({path: '/tmp/a'}))); return 1";
    group.bench_function("parallel/100", |b| {
        b.iter(|| black_box(run_ok(&rt, &registry, all)))
    });
    group.bench_function("join_all/100", |b| {
        b.iter(|| rt.block_on(direct_hundred(&registry, "pnoop", true)))
    });
    let ten = "for (let i = 0; i < 10; i++) await tools.noop({path: '/tmp/a'}); return 1";
    group.bench_function("concurrent/64x10", |b| {
        b.iter(|| {
            rt.block_on(async {
                let runs: Vec<_> = (0..64)
                    .map(|_| {
                        let registry = registry.clone();
                        tokio::spawn(async move { registry.execute(run_code(ten)).await })
                    })
                    .collect();
                for run in runs {
                    let result = run.await.unwrap();
                    assert!(!result.is_error(), "{}", result.text());
                }
            })
        })
    });
    group.bench_function("concurrent_direct/64x10", |b| {
        b.iter(|| {
            rt.block_on(async {
                let runs: Vec<_> = (0..64)
                    .map(|_| {
                        let registry = registry.clone();
                        tokio::spawn(async move {
                            for i in 0..10 {
                                let input = ToolExecutionInput::new(
                                    format!("c{i}"),
                                    "noop",
                                    json!({"path": "/tmp/a"}),
                                    CancellationToken::new(),
                                );
                                black_box(registry.execute(input).await);
                            }
                        })
                    })
                    .collect();
                for run in runs {
                    run.await.unwrap();
                }
            })
        })
    });
    group.bench_function("floor/engine", |b| {
        b.iter(|| {
            let runtime = rquickjs::Runtime::new().unwrap();
            let context = engine_context(&runtime);
            black_box(context.with(|ctx| ctx.eval::<i32, _>("1").unwrap()))
        })
    });
    group.bench_function("floor/bootstrap", |b| {
        b.iter(|| {
            let runtime = rquickjs::Runtime::new().unwrap();
            let context = engine_context(&runtime);
            black_box(context.with(|ctx| {
                ctx.eval::<rquickjs::Function, _>(include_str!("../src/code/quickjs/bootstrap.js"))
                    .is_ok()
            }))
        })
    });
    let alone = QuickJsRuntime::new(Default::default()).unwrap();
    group.bench_function("engine/empty", |b| {
        b.iter(|| {
            let request = dsh_tools::code::CodeRequest {
                program: "return 1".into(),
                bindings: vec![],
                signal: None,
            };
            let result = rt
                .block_on(dsh_tools::code::CodeRuntime::run(&alone, request))
                .unwrap();
            assert_eq!(result.value, Some(json!(1)));
        })
    });
    // The engine and its bridge alone (no registry, no lane, no pipeline): 100 awaited calls of
    // a host function that answers at once, a run each time the warm engines are back.
    let bridged = QuickJsRuntime::new(Default::default()).unwrap();
    let answer: dsh_tools::code::HostFn =
        Arc::new(|_| Box::pin(async { Ok(Value::String("ok".to_owned())) }));
    let bridge = |program: &str| dsh_tools::code::CodeRequest {
        program: program.to_owned(),
        bindings: vec![dsh_tools::code::Namespace {
            global: "tools".to_owned(),
            functions: vec![("noop".to_owned(), Arc::clone(&answer))],
            error_class: None,
        }],
        signal: None,
    };
    for (id, program) in [
        ("engine/empty_warm", "return 1"),
        ("engine/calls/100_warm", hundred),
    ] {
        group.bench_function(id, |b| {
            b.iter_custom(|iters| {
                warm_iters(&bridged, iters, || {
                    let result = rt
                        .block_on(dsh_tools::code::CodeRuntime::run(&bridged, bridge(program)))
                        .unwrap();
                    assert_eq!(result.value, Some(json!(1)));
                })
            })
        });
    }
    let (runtime, context) = floors();
    group.bench_function("floor/await100", |b| {
        b.iter(|| await_hundred(&runtime, &context, "hundred"))
    });
    group.bench_function("floor/bridge100_walk", |b| {
        b.iter(|| await_hundred(&runtime, &context, "hundredWalked"))
    });
    group.bench_function("floor/bridge100", |b| {
        b.iter(|| await_hundred(&runtime, &context, "hundredMarshalled"))
    });
    group.bench_function("floor/all100_walk", |b| {
        b.iter(|| await_hundred(&runtime, &context, "allWalked"))
    });
    group.finish();
}

/// The floors' engine: a runtime and a context (made once: each iteration is the awaits alone)
/// with the floors' bindings and their compiled async functions. `hundred` awaits 100 calls of
/// `call` ([`resolved`]); `hundredMarshalled` and `hundredWalked` the same through
/// [`marshalled`] and [`walked`]; `allWalked` awaits one `Promise.all` of 100 calls of
/// `walked` (`code/parallel/100`'s shape).
fn floors() -> (rquickjs::Runtime, rquickjs::Context) {
    let runtime = rquickjs::Runtime::new().unwrap();
    let context = engine_context(&runtime);
    context.with(|ctx| {
        let globals = ctx.globals();
        let call = rquickjs::Function::new(ctx.clone(), resolved).unwrap();
        globals.set("call", call).unwrap();
        let call = rquickjs::Function::new(ctx.clone(), marshalled).unwrap();
        globals.set("marshalled", call).unwrap();
        let call = rquickjs::Function::new(ctx.clone(), walked).unwrap();
        globals.set("walked", call).unwrap();
        let program = "globalThis.hundred = async () => { \
              for (let i = 0; i < 100; i++) await call({path: '/tmp/a'}); globalThis.done = true; };\n\
            globalThis.hundredMarshalled = async () => { \
              for (let i = 0; i < 100; i++) await marshalled({path: '/tmp/a'}); globalThis.done = true; };\n\
            globalThis.hundredWalked = async () => { \
              for (let i = 0; i < 100; i++) await walked({path: '/tmp/a'}); globalThis.done = true; };\n\
            globalThis.allWalked = async () => { \
              await Promise.all(Array.from({length: 100}, () => walked({path: '/tmp/a'}))); \
              globalThis.done = true; };";
        ctx.eval::<(), _>(program).unwrap();
    });
    (runtime, context)
}

criterion_group!(benches, code);

/// A process's peak and current resident set (`VmHWM`, `VmRSS`), in MiB.
fn rss_mib() -> (f64, f64) {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let field = |name: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
            .unwrap_or(0.0)
            / 1024.0
    };
    (field("VmHWM:"), field("VmRSS:"))
}

/// The hostile programs of issue 43.2, each against the default limits.
const ATTACKS: &[(&str, &str)] = &[
    (
        "one 60 MiB string to 100 unawaited calls",
        "const s = 'x'.repeat(60 << 20); for (let i = 0; i < 100; i++) tools.hold({ s }).catch(() => {}); return 1;",
    ),
    ("`for (;;) console.log('a')`", "for (;;) console.log('a');"),
    (
        "`return new Array(8e6).fill(0)` (16 MB of JSON)",
        "return new Array(8e6).fill(0);",
    ),
    (
        "120 image results of 12 MB, values dropped",
        "const all = []; for (let i = 0; i < 120; i++) all.push(tools.shot({})); await Promise.all(all); return 1;",
    ),
];

/// One attack in this process (a child of [`memory`]): prints the peak RSS before and after.
fn attack(index: usize) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let registry = registry();
    registry.set_presentation_mode(PresentationMode::Code);
    let hold = ToolDefinition::new(
        "hold",
        "holds until the run is over",
        json!({"type": "object"}),
        OutputDecl::text(),
        |_, ctx: ToolRunContext| async move {
            ctx.signal().cancelled().await;
            Ok(json!("held"))
        },
    );
    registry.register(hold).unwrap().keep();
    let shot = ToolDefinition::new(
        "shot",
        "a 12 MB screenshot",
        json!({"type": "object"}),
        OutputDecl::new(json!({"type": "string"}), |_, _| {
            vec![ContentBlock::image("A".repeat(12_000_000), "image/png").unwrap()]
        }),
        |_, _| async { Ok(json!("shot")) },
    );
    registry.register(shot).unwrap().keep();
    // Warm: the engine's thread, the stripper, the pipeline.
    runtime.block_on(registry.execute(run_code("return 1;")));
    let (before, _) = rss_mib();
    let result = runtime.block_on(registry.execute(run_code(ATTACKS[index].1)));
    let (peak, _) = rss_mib();
    let attached = result.additional_contexts().map_or(0, <[_]>::len);
    println!("{before:.0} {peak:.0} {} {attached}", result.is_error());
}

/// `CODE_MEMORY=1`: each attack in a child process of its own, its peak RSS against the sum of
/// the default limits (BENCHMARKS.md, "Code Mode memory").
fn memory() {
    let config = dsh_tools::code::CodeRuntimeConfig::default();
    let limits = dsh_tools::code::CodeHostLimits::default();
    let output = config.max_output_bytes as usize;
    let ledger_mib = (2 * output + (1 << 20)) >> 20;
    let budget_mib = config.max_old_generation_size_mb as usize
        + (limits.max_in_flight_argument_bytes >> 20)
        + 2 * ledger_mib
        + (limits.max_attached_bytes >> 20);
    println!(
        "budget: engine {} MiB + arguments in flight {} MiB + ledger {ledger_mib} MiB + completion {ledger_mib} MiB + attachments {} MiB = {budget_mib} MiB",
        config.max_old_generation_size_mb,
        limits.max_in_flight_argument_bytes >> 20,
        limits.max_attached_bytes >> 20
    );
    println!("| program | peak RSS before | peak RSS after | run failed | contexts attached |");
    println!("|---|---|---|---|---|");
    for (index, (name, _)) in ATTACKS.iter().enumerate() {
        let out = std::process::Command::new(std::env::current_exe().unwrap())
            .env("CODE_MEMORY_ATTACK", index.to_string())
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        let fields: Vec<&str> = text.split_whitespace().collect();
        match fields.as_slice() {
            [before, peak, failed, attached] => {
                println!("| {name} | {before} MiB | {peak} MiB | {failed} | {attached} |");
            }
            _ => println!(
                "| {name} | the child failed: {} |",
                String::from_utf8_lossy(&out.stderr)
                    .lines()
                    .last()
                    .unwrap_or("")
            ),
        }
    }
}

/// A process's resident set now (`VmRSS`), in KiB.
fn rss_kib() -> f64 {
    rss_mib().1 * 1024.0
}

/// `CODE_WARM_RSS=1`: what an idle warm engine costs, the resident set of a process holding 32
/// of them against the same process holding none (each in a child process of its own).
fn warm_rss() {
    const ENGINES: usize = 32;
    let measure = |warm: usize| -> f64 {
        let out = std::process::Command::new(std::env::current_exe().unwrap())
            .env("CODE_WARM_CHILD", warm.to_string())
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout)
            .trim()
            .parse()
            .unwrap_or(f64::NAN)
    };
    let (none, some) = (measure(0), measure(ENGINES));
    println!(
        "idle warm engines: {none:.0} KiB with none, {some:.0} KiB with {ENGINES}: {:.0} KiB each",
        (some - none) / ENGINES as f64
    );
}

fn warm_child(warm: usize) {
    use dsh_tools::code::quickjs::EnginePool;
    let runtime = QuickJsRuntime::with_pool(
        dsh_tools::code::CodeRuntimeConfig::default(),
        EnginePool::default().warm(warm),
    )
    .unwrap();
    while runtime.warm_engines() < warm {
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    std::thread::sleep(std::time::Duration::from_millis(50));
    println!("{}", rss_kib());
    drop(runtime);
}

/// `CODE_COUNT=<calls>`: `CODE_N` runs (default 10) of a program awaiting `<calls>` calls of the
/// no-op tool (with `CODE_COUNT_ALL=1`, one `Promise.all` of them, of the concurrency-safe
/// no-op), through the registry, each once the warm engines are back, and nothing else: what
/// an instruction counter (`valgrind --tool=cachegrind`, on a build with `--cfg rustix_use_libc`:
/// BENCHMARKS.md) reads. Two `CODE_N` give a run's count; a run of 100 calls less one of 0, over
/// 100, is one sub-call's instructions, every thread's (the lane, the pipeline, the bridge, the
/// engine), without the noise a timed run has on two cores.
fn count(calls: usize) {
    let runs = env_usize("CODE_N", 10);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let engine = Arc::new(QuickJsRuntime::new(Default::default()).unwrap());
    let registry = registry_on(Arc::clone(&engine));
    let program = if std::env::var_os("CODE_COUNT_ALL").is_some() {
        format!(
            "await Promise.all(Array.from({{length: {calls}}}, () => tools.pnoop({{path: '/tmp/a'}}))); return 1"
        )
    } else {
        format!("for (let i = 0; i < {calls}; i++) await tools.noop({{path: '/tmp/a'}}); return 1")
    };
    warm_iters(&engine, runs as u64, || {
        run_ok(&rt, &registry, &program);
    });
}

/// `CODE_COUNT_FLOOR=direct|await|walk|all`: `CODE_N` rounds (default 10) of what
/// `code/direct/100`, `code/floor/await100`, `code/floor/bridge100_walk` or
/// `code/floor/all100_walk` measures, for the same instruction counter as [`count`]: two `CODE_N`
/// give a round's count, over 100 one call's (the terms of issue 35's targets in instructions).
fn count_floor(which: &str) {
    let runs = env_usize("CODE_N", 10);
    if which == "direct" {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        // No code runtime: its warm pool would make engines meanwhile, counted with the calls.
        let registry = noop_registry();
        for _ in 0..runs {
            rt.block_on(direct_hundred(&registry, "noop", false));
        }
        return;
    }
    let (runtime, context) = floors();
    let name = match which {
        "await" => "hundred",
        "walk" => "hundredWalked",
        "all" => "allWalked",
        other => panic!("CODE_COUNT_FLOOR: direct, await, walk or all, not {other:?}"),
    };
    for _ in 0..runs {
        await_hundred(&runtime, &context, name);
    }
}

/// `CODE_PAIRED=1`: issue 35's two call targets against their floors, the ids interleaved
/// round after round (criterion measures one id after another, and on a shared two-core VM the
/// speed drifts between them by more than the margins read here). Each round times
/// `CODE_PAIRED_ITERS` (default 10) iterations of each id, in a rotating order; `calls/100_warm`
/// and `parallel/100_warm` each once the warm engines are back. Printed: each id's median over
/// rounds, and the median over rounds of each ratio within a round:
///
/// - `calls`: the target 1.3 × (`direct/100` + `floor/await100`), the boundary's floor
///   `direct/100` + `floor/bridge100_walk` (the pipeline, plus 100 awaited calls whose argument
///   and answer cross by the cheapest walk, with none of the sandbox's checks), and
///   `calls/100_warm` against both.
/// - `parallel`: the target 1.3 × `join_all/100`, the floor `floor/all100_walk` (one
///   `Promise.all` of 100 such calls, with no pipeline at all), and `parallel/100_warm`.
fn paired() {
    let rounds = env_usize("CODE_PAIRED_ROUNDS", 30).max(1);
    let iters = env_usize("CODE_PAIRED_ITERS", 10).max(1);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let engine = Arc::new(QuickJsRuntime::new(Default::default()).unwrap());
    let registry = registry_on(Arc::clone(&engine));
    let (runtime, context) = floors();
    let hundred = "for (let i = 0; i < 100; i++) await tools.noop({path: '/tmp/a'}); return 1";
    let all = "await Promise.all(Array.from({length: 100}, () => tools.pnoop({path: '/tmp/a'}))); return 1";
    let direct = |tool: &'static str, concurrent: bool| {
        rt.block_on(direct_hundred(&registry, tool, concurrent))
    };
    const IDS: [&str; 7] = [
        "direct/100",
        "floor/await100",
        "floor/bridge100_walk",
        "calls/100_warm",
        "join_all/100",
        "floor/all100_walk",
        "parallel/100_warm",
    ];
    let mut times = vec![Vec::with_capacity(rounds); IDS.len()];
    for round in 0..=rounds {
        for k in 0..IDS.len() {
            let i = (round + k) % IDS.len();
            let mut total = std::time::Duration::ZERO;
            for _ in 0..iters {
                let timed = |f: &dyn Fn()| {
                    let started = std::time::Instant::now();
                    f();
                    started.elapsed()
                };
                total += match i {
                    0 => timed(&|| direct("noop", false)),
                    1 => timed(&|| await_hundred(&runtime, &context, "hundred")),
                    2 => timed(&|| await_hundred(&runtime, &context, "hundredWalked")),
                    3 => warm_iters(&engine, 1, || {
                        run_ok(&rt, &registry, hundred);
                    }),
                    4 => timed(&|| direct("pnoop", true)),
                    5 => timed(&|| await_hundred(&runtime, &context, "allWalked")),
                    _ => warm_iters(&engine, 1, || {
                        run_ok(&rt, &registry, all);
                    }),
                };
            }
            if round > 0 {
                times[i].push(total.as_secs_f64() / iters as f64);
            }
        }
    }
    let median = |mut v: Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    for (id, t) in IDS.iter().zip(&times) {
        println!("code/{id}: median {:.1} us", median(t.clone()) * 1e6);
    }
    let per_round = |f: &dyn Fn(usize) -> f64| median((0..rounds).map(f).collect());
    let t = |i: usize, r: usize| times[i][r];
    let target = |r| 1.3 * (t(0, r) + t(1, r));
    let floor = |r| t(0, r) + t(2, r);
    println!(
        "calls: floor / target {:.3}; calls/100_warm / target {:.3}, / floor {:.3}",
        per_round(&|r| floor(r) / target(r)),
        per_round(&|r| t(3, r) / target(r)),
        per_round(&|r| t(3, r) / floor(r)),
    );
    println!(
        "parallel: floor / target {:.3}; parallel/100_warm / target {:.3}, / floor {:.3}",
        per_round(&|r| t(5, r) / (1.3 * t(4, r))),
        per_round(&|r| t(6, r) / (1.3 * t(4, r))),
        per_round(&|r| t(6, r) / t(5, r)),
    );
}

fn main() {
    if std::env::var_os("CODE_PAIRED").is_some() {
        return paired();
    }
    if let Ok(which) = std::env::var("CODE_COUNT_FLOOR") {
        return count_floor(&which);
    }
    if let Ok(calls) = std::env::var("CODE_COUNT") {
        return count(calls.parse().unwrap());
    }
    if let Ok(warm) = std::env::var("CODE_WARM_CHILD") {
        return warm_child(warm.parse().unwrap());
    }
    if std::env::var_os("CODE_WARM_RSS").is_some() {
        return warm_rss();
    }
    if let Ok(index) = std::env::var("CODE_MEMORY_ATTACK") {
        return attack(index.parse().unwrap());
    }
    if std::env::var_os("CODE_MEMORY").is_some() {
        return memory();
    }
    benches();
    Criterion::default().configure_from_args().final_summary();
}

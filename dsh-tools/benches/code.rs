//! Code Mode (feature `typescript`):
//! `code/run/empty`: one `run_code` program that returns a constant, thread and engine included;
//! `code/calls/100`: one program making 100 sequential calls of a no-op tool;
//! `code/direct/100`: the same 100 calls through `Registry::execute`, the baseline.
//!
//! Two floors, the engine alone (no thread, no type stripping, no bridge, no pipeline), to show
//! what no scheduling can remove: `code/floor/engine` creates a QuickJS runtime and context and
//! evaluates a constant; `code/floor/await100` runs, in a context made beforehand, a compiled
//! async function awaiting 100 calls of a native function that returns a resolved promise.

use criterion::{Criterion, criterion_group, criterion_main};
use dsh_tools::code::quickjs::QuickJsRuntime;
use dsh_tools::registry::PresentationMode;
use dsh_tools::*;
use serde_json::{Value, json};
use std::hint::black_box;
use std::sync::Arc;

async fn noop(_args: Arc<Value>, _ctx: ToolRunContext) -> Result<Value, ToolError> {
    Ok(Value::String("ok".to_owned()))
}

fn registry() -> Registry {
    let registry = Registry::new();
    let tool = ToolDefinition::new(
        "noop",
        "does nothing",
        json!({"type": "object"}),
        OutputDecl::text(),
        noop,
    );
    registry.register(tool).unwrap().keep();
    registry.set_code_runtime(QuickJsRuntime::new(Default::default()).unwrap());
    registry.set_presentation_mode(PresentationMode::Both);
    registry
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
    let registry = registry();
    let mut group = c.benchmark_group("code");
    group.bench_function("run/empty", |b| {
        b.iter(|| {
            let result = rt.block_on(registry.execute(run_code("return 1")));
            assert!(!result.is_error(), "{}", result.text());
            black_box(result)
        })
    });
    let hundred = "for (let i = 0; i < 100; i++) await tools.noop({path: '/tmp/a'}); return 1";
    group.bench_function("calls/100", |b| {
        b.iter(|| {
            let result = rt.block_on(registry.execute(run_code(hundred)));
            assert!(!result.is_error(), "{}", result.text());
            black_box(result)
        })
    });
    group.bench_function("direct/100", |b| {
        b.iter(|| {
            rt.block_on(async {
                for i in 0..100 {
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
    });
    group.bench_function("floor/engine", |b| {
        b.iter(|| {
            let runtime = rquickjs::Runtime::new().unwrap();
            let context = engine_context(&runtime);
            black_box(context.with(|ctx| ctx.eval::<i32, _>("1").unwrap()))
        })
    });
    let runtime = rquickjs::Runtime::new().unwrap();
    let context = engine_context(&runtime);
    context.with(|ctx| {
        let call = rquickjs::Function::new(ctx.clone(), resolved).unwrap();
        ctx.globals().set("call", call).unwrap();
    });
    // Compiled once: each iteration is the 100 awaits alone.
    context.with(|ctx| {
        let program = "globalThis.hundred = async () => { \
            for (let i = 0; i < 100; i++) await call({path: '/tmp/a'}); globalThis.done = true; }";
        ctx.eval::<(), _>(program).unwrap();
    });
    group.bench_function("floor/await100", |b| {
        b.iter(|| {
            context.with(|ctx| {
                ctx.globals().set("done", false).unwrap();
                let hundred: rquickjs::Function = ctx.globals().get("hundred").unwrap();
                drop(hundred.call::<_, rquickjs::Value>(()).unwrap());
            });
            while runtime.execute_pending_job().unwrap() {}
            assert!(context.with(|ctx| ctx.globals().get::<_, bool>("done").unwrap()));
        })
    });
    group.finish();
}

criterion_group!(benches, code);
criterion_main!(benches);

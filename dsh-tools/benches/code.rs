//! Code Mode (feature `typescript`):
//! `code/run/empty`: one `run_code` program that returns a constant, thread and engine included;
//! `code/calls/100`: one program making 100 sequential calls of a no-op tool;
//! `code/direct/100`: the same 100 calls through `Registry::execute`, the baseline.

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
    group.finish();
}

criterion_group!(benches, code);
criterion_main!(benches);

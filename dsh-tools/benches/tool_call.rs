//! `tool_call/{generated,by_hand}`: one call through a registry without hooks of a `#[tool]`
//! (validate the arguments, decode them, run a no-op body, serialize and validate the output)
//! and of a raw definition doing the same steps by hand with the same compiled schema. The
//! ratio is the cost of the typed adapter; both share the registry's own cost.
//! `tool_call/generated_fast` is the same tool with `#[derive(FastCheck)]` on its arguments.

use criterion::{Criterion, criterion_group, criterion_main};
use dsh_tools::schema::{CompiledSchema, Root, ToolArgsError, bridge};
use dsh_tools::*;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use std::hint::black_box;
use std::sync::Arc;

#[derive(Deserialize, JsonSchema)]
struct ReadArgs {
    /// Absolute file path
    path: String,
    /// First line, 1-based
    offset: Option<u64>,
    /// Most lines
    limit: Option<u64>,
}

/// Reads nothing.
#[tool]
async fn read(args: ReadArgs) -> Result<usize, ToolError> {
    Ok(args.path.len() + args.offset.unwrap_or(0) as usize + args.limit.unwrap_or(0) as usize)
}

/// `ReadArgs` with a generated validator.
#[derive(Deserialize, JsonSchema, FastCheck)]
struct ReadArgsFast {
    /// Absolute file path
    path: String,
    /// First line, 1-based
    offset: Option<u64>,
    /// Most lines
    limit: Option<u64>,
}

/// Reads nothing.
#[tool]
async fn read_fast(args: ReadArgsFast) -> Result<usize, ToolError> {
    Ok(args.path.len() + args.offset.unwrap_or(0) as usize + args.limit.unwrap_or(0) as usize)
}

fn by_hand() -> ToolDefinition {
    let parameters = bridge::schema_for::<ReadArgs>().unwrap();
    let output = bridge::schema_for::<usize>().unwrap();
    let compiled = Arc::new(CompiledSchema::compile(&parameters).unwrap());
    ToolDefinition::new(
        "read_by_hand",
        "Reads nothing.",
        parameters,
        OutputDecl::json(output),
        move |args: Arc<Value>, _ctx| {
            let compiled = Arc::clone(&compiled);
            async move {
                let violations = compiled.validate_at(&args, Root::Parameters);
                if !violations.is_empty() {
                    return Err(ToolArgsError::new(violations).into());
                }
                let args: ReadArgs = json::decode(&args)?;
                let out = args.path.len()
                    + args.offset.unwrap_or(0) as usize
                    + args.limit.unwrap_or(0) as usize;
                Ok(serde_json::to_value(out)?)
            }
        },
    )
}

fn input(name: &str) -> ToolExecutionInput {
    let args = json!({"path": "/tmp/a", "offset": 3, "limit": 10});
    ToolExecutionInput::new("c1", name, args, CancellationToken::new())
}

fn tool_call(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let registry = Registry::new();
    registry.register_tool(Read).unwrap().keep();
    registry.register(by_hand()).unwrap().keep();
    registry.register(ReadFast).unwrap().keep();
    let fast = ReadFast.definition();
    assert_eq!(fast.args_validator().unwrap().fast_path(), Ok(()));
    assert_eq!(rt.block_on(registry.execute(input("read"))).text(), "19");
    assert_eq!(
        rt.block_on(registry.execute(input("read_fast"))).text(),
        "19"
    );
    assert_eq!(
        rt.block_on(registry.execute(input("read_by_hand"))).text(),
        "19"
    );

    let mut group = c.benchmark_group("tool_call");
    group.bench_function("generated", |b| {
        b.iter(|| rt.block_on(registry.execute(black_box(input("read")))))
    });
    group.bench_function("by_hand", |b| {
        b.iter(|| rt.block_on(registry.execute(black_box(input("read_by_hand")))))
    });
    group.bench_function("generated_fast", |b| {
        b.iter(|| rt.block_on(registry.execute(black_box(input("read_fast")))))
    });
    group.finish();
}

criterion_group!(benches, tool_call);
criterion_main!(benches);

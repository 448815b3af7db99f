//! `provider/export/<dialect>`: exporting 100 typed tools to each dialect (transform, report,
//! wire entries, name map), against `provider/schemas`: plain `Registry::schemas()` of the same
//! 100 tools, in the same run.

use criterion::{Criterion, criterion_group, criterion_main};
use dsh_tools::provider::{Dialect, Provider};
use dsh_tools::{Registry, ToolDefinition, ToolError};
use schemars::JsonSchema;
use serde::Deserialize;
use std::hint::black_box;

#[derive(Deserialize, JsonSchema)]
#[allow(dead_code)]
enum Mode {
    Fast,
    Thorough,
}

#[derive(Deserialize, JsonSchema)]
#[allow(dead_code)]
struct SearchArgs {
    /// The pattern
    pattern: String,
    /// Where to look
    path: Option<String>,
    /// Most results
    limit: Option<u32>,
    /// How hard to look
    mode: Mode,
    /// Globs to skip
    exclude: Vec<String>,
    /// Case sensitive
    case_sensitive: Option<bool>,
}

fn registry() -> Registry {
    let registry = Registry::new();
    for i in 0..100 {
        let tool = ToolDefinition::typed(
            format!("search_{i}"),
            "Search files for a pattern.",
            |_: SearchArgs, _| async { Ok::<_, ToolError>(0u32) },
        )
        .unwrap();
        registry.register(tool).unwrap().keep();
    }
    registry
}

fn bench(c: &mut Criterion) {
    let registry = registry();
    let mut group = c.benchmark_group("provider");
    group.bench_function("schemas", |b| {
        b.iter(|| black_box(registry.schemas(None).unwrap()))
    });
    let mut dialects = Vec::new();
    for p in Provider::ALL {
        dialects.push(Dialect::new(p));
        if p.has_strict() {
            dialects.push(Dialect::strict(p));
        }
    }
    for dialect in dialects {
        let id = dialect.name().replace(" (strict)", "-strict");
        group.bench_function(format!("export/{id}"), |b| {
            b.iter(|| black_box(registry.provider_tools(None, dialect).unwrap()))
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);

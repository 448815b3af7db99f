//! `provider/export/<dialect>`: exporting 100 typed tools to each dialect (transform, report,
//! wire entries, name map), against `provider/schemas`: plain `Registry::schemas()` of the same
//! 100 tools, in the same run.
//!
//! `stream/*` (issue 38): a 100 KB argument text (a file write: path, a long content string,
//! options) arriving in 1-byte fragments, against `stream/serde`, `serde_json::from_str` of the
//! finished text once: `stream/reader` feeds the incremental reader alone, `stream/assembler`
//! the whole Anthropic assembler (one pre-parsed `input_json_delta` event a byte, then
//! `finish`), `stream/reader_partials` asks for the partial value every 4 KiB, and
//! `stream/events_floor` only reads each event's fragment and appends it (the floor of any
//! assembler fed one event a byte); `stream/append_floor` only appends each 1-byte fragment to
//! a string (the floor of any reader that keeps the text).

use criterion::{Criterion, criterion_group, criterion_main};
use dsh_tools::provider::ProviderExport;
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

/// The 100 KB arguments of a file write, as the model would send them.
fn write_arguments() -> String {
    let mut content = String::new();
    let mut line = 0;
    while content.len() < 100_000 {
        content.push_str(&format!(
            "fn f{line}() {{ println!(\"line {line}\\t\"); }}\n"
        ));
        line += 1;
    }
    serde_json::to_string(&serde_json::json!({
        "path": "src/generated.rs", "content": content, "mode": "overwrite",
        "options": {"create_dirs": true, "backup": false, "tags": ["gen", "big"]}
    }))
    .unwrap()
}

fn stream(c: &mut Criterion) {
    use dsh_tools::provider::stream::PartialJson;
    let text = write_arguments();
    let bytes: Vec<&str> = text
        .char_indices()
        .map(|(i, ch)| &text[i..i + ch.len_utf8()])
        .collect();
    let tools = Registry::new()
        .provider_tools(None, Dialect::new(Provider::Anthropic))
        .unwrap();
    let start = serde_json::json!({"type": "content_block_start", "index": 1,
        "content_block": {"type": "tool_use", "id": "toolu_1", "name": "write_file", "input": {}}});
    let events: Vec<serde_json::Value> = bytes
        .iter()
        .map(|b| {
            serde_json::json!({"type": "content_block_delta", "index": 1,
            "delta": {"type": "input_json_delta", "partial_json": b}})
        })
        .collect();
    let stop = serde_json::json!({"type": "content_block_stop", "index": 1});
    let mut group = c.benchmark_group("stream");
    group.bench_function("serde", |b| {
        b.iter(|| black_box(serde_json::from_str::<serde_json::Value>(&text).unwrap()))
    });
    // The floor of any assembler fed these events: reading each event's fragment and
    // appending it (no JSON reading, no bookkeeping).
    group.bench_function("events_floor", |b| {
        b.iter(|| {
            let mut text = String::new();
            for event in &events {
                let piece = event
                    .get("delta")
                    .and_then(|d| d.get("partial_json"))
                    .and_then(serde_json::Value::as_str)
                    .unwrap_or_default();
                text.push_str(piece);
            }
            black_box(text)
        })
    });
    // The floor of any assembler fed one byte at a time: keeping the text.
    group.bench_function("append_floor", |b| {
        b.iter(|| {
            let mut text = String::new();
            for piece in &bytes {
                text.push_str(piece);
            }
            black_box(text)
        })
    });
    group.bench_function("reader", |b| {
        b.iter(|| {
            let mut reader = PartialJson::new();
            for piece in &bytes {
                reader.push(piece);
            }
            black_box(reader.partial())
        })
    });
    group.bench_function("reader_partials", |b| {
        b.iter(|| {
            let mut reader = PartialJson::new();
            for (i, piece) in bytes.iter().enumerate() {
                reader.push(piece);
                if i % 4096 == 0 {
                    black_box(reader.partial());
                }
            }
            black_box(reader.partial())
        })
    });
    group.bench_function("assembler", |b| {
        b.iter(|| {
            let mut stream = tools.call_stream();
            stream.feed(&start).unwrap();
            for event in &events {
                black_box(stream.feed(event).unwrap());
            }
            stream.feed(&stop).unwrap();
            black_box(stream.finish().unwrap())
        })
    });
    group.finish();
}

criterion_group!(benches, bench, stream);
criterion_main!(benches);

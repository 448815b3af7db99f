//! `args/{serde,dsh,jsonschema}/{small,medium,large,invalid}`: typed tool arguments from a
//! pre-parsed `serde_json::Value`.
//!
//! * `serde` — the floor: `T::deserialize(&value)`.
//! * `dsh` — our validation (`is_valid`, then every violation when invalid) + the same decode.
//! * `dsh_bridged` — what `#[tool]` runs: the *bridged* schema of the same Rust types
//!   (`bridge::schema_for_args::<T>(false)`, where `Option<i64>` is `oneOf [{integer, minimum:
//!   i64::MIN, maximum: i64::MAX}, {type: null}]`) through [`ArgsValidator`]: the code
//!   `#[derive(FastCheck)]` generated decides valid payloads, the interpreter lists violations.
//! * `dsh_bridged_interp` — the same bridged schema through the interpreter alone (what a type
//!   without `FastCheck` gets).
//! * `jsonschema` — the `jsonschema` crate's validator built once: `is_valid` for valid payloads,
//!   every error collected for the invalid one, + the same decode.
//! * `walk` — the floor of any validator that reads a `serde_json::Value`: one walk that touches
//!   every value once (its type, every key's length, every number's kind, no schema), + the same
//!   decode. No validator can check a value it does not visit.
//!
//! Payloads and schemas: `benches/data/` (copied from the shared benchmark set).

use criterion::{Criterion, criterion_group, criterion_main};
use dsh_tools::FastCheck;
use dsh_tools::schema::fast::ArgsValidator;
use dsh_tools::schema::{CompiledSchema, Root};
use serde::Deserialize;
use serde_json::Value;
use std::hint::black_box;

#[path = "common/types.rs"]
mod types;
use types::{EditArgs, ReadArgs, TableArgs};

/// Touches every value of `v` once: what any validator must at least do. Returns a number the
/// optimizer cannot drop.
fn walk(v: &Value) -> usize {
    match v {
        Value::Null => 1,
        Value::Bool(b) => usize::from(*b),
        Value::Number(n) => usize::from(n.is_i64()),
        Value::String(s) => s.len(),
        Value::Array(items) => items.iter().map(walk).sum(),
        Value::Object(map) => map.iter().map(|(k, v)| k.len() + walk(v)).sum(),
    }
}

fn parse(text: &str) -> Value {
    serde_json::from_str(text).expect("benchmark data is JSON")
}

/// One payload: its schema, value and the typed decode.
fn bench_payload<T: for<'de> Deserialize<'de> + schemars::JsonSchema + FastCheck>(
    c: &mut Criterion,
    name: &str,
    schema: &str,
    payload: &str,
) {
    let schema = parse(schema);
    let value = parse(payload);
    let dsh = CompiledSchema::compile(&schema).expect("benchmark schemas are in the subset");
    let js = jsonschema::validator_for(&schema).expect("benchmark schemas are valid JSON Schema");
    let valid = dsh.is_valid(&value);
    assert_eq!(
        valid,
        js.is_valid(&value),
        "{name}: the validators disagree"
    );
    assert_eq!(
        valid,
        T::deserialize(&value).is_ok(),
        "{name}: validity and decoding disagree"
    );
    let bridged = CompiledSchema::compile(
        &dsh_tools::schema::bridge::schema_for_args::<T>(false).expect("benchmark types bridge"),
    )
    .expect("bridged schemas are in the subset");
    assert_eq!(
        valid,
        bridged.is_valid(&value),
        "{name}: the bridged schema disagrees"
    );
    let generated = ArgsValidator::of::<T>(false).expect("benchmark types bridge");
    assert_eq!(generated.fast_path(), Ok(()), "{name}: no generated check");
    assert_eq!(generated.fast_is_valid(&value), Some(valid), "{name}");
    if !valid {
        assert_eq!(
            generated.validate(&value).unwrap_err(),
            bridged.validate_at(&value, Root::Parameters),
            "{name}"
        );
        assert_eq!(dsh.validate_at(&value, Root::Parameters).len(), 3, "{name}");
        assert_eq!(js.iter_errors(&value).count(), 3, "{name}");
    }

    // Every variant returns what the serde floor returns, `Option<T>` (violations, where there
    // are any, go to `black_box`): the result's shape alone moves these figures by a few ns.
    let mut group = c.benchmark_group("args");
    group.bench_function(format!("serde/{name}"), |b| {
        b.iter(|| T::deserialize(black_box(&value)).ok())
    });
    group.bench_function(format!("dsh/{name}"), |b| {
        b.iter(|| {
            let value = black_box(&value);
            let violations = dsh.validate_at(value, Root::Parameters);
            if violations.is_empty() {
                T::deserialize(value).ok()
            } else {
                black_box(violations);
                None
            }
        })
    });
    group.bench_function(format!("dsh_bridged/{name}"), |b| {
        b.iter(|| {
            let value = black_box(&value);
            match generated.validate(value) {
                Ok(()) => T::deserialize(value).ok(),
                Err(violations) => {
                    black_box(violations);
                    None
                }
            }
        })
    });
    group.bench_function(format!("dsh_bridged_interp/{name}"), |b| {
        b.iter(|| {
            let value = black_box(&value);
            let violations = bridged.validate_at(value, Root::Parameters);
            if violations.is_empty() {
                T::deserialize(value).ok()
            } else {
                black_box(violations);
                None
            }
        })
    });
    group.bench_function(format!("walk/{name}"), |b| {
        b.iter(|| {
            let value = black_box(&value);
            if black_box(walk(value)) > 0 {
                T::deserialize(value).ok()
            } else {
                None
            }
        })
    });
    group.bench_function(format!("jsonschema/{name}"), |b| {
        b.iter(|| {
            let value = black_box(&value);
            if valid {
                if js.is_valid(value) {
                    T::deserialize(value).ok()
                } else {
                    None
                }
            } else {
                black_box(
                    js.iter_errors(value)
                        .map(|e| e.to_string())
                        .collect::<Vec<_>>(),
                );
                None
            }
        })
    });
    group.finish();
}

fn args(c: &mut Criterion) {
    let small_schema = include_str!("data/small.schema.json");
    let medium_schema = include_str!("data/medium.schema.json");
    let large_schema = include_str!("data/large.schema.json");
    bench_payload::<ReadArgs>(c, "small", small_schema, include_str!("data/small.json"));
    bench_payload::<EditArgs>(c, "medium", medium_schema, include_str!("data/medium.json"));
    bench_payload::<TableArgs>(c, "large", large_schema, include_str!("data/large.json"));
    bench_payload::<EditArgs>(
        c,
        "invalid",
        medium_schema,
        include_str!("data/invalid.json"),
    );
}

criterion_group!(benches, args);
criterion_main!(benches);

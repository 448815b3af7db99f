//! `adversarial/*`: the worst inputs the hardening issue found, each beside a benign input of the
//! same size measured in the same run. The target is a ratio of at most 3× for each pair.
//!
//! * `unique_collide_10k` / `unique_distinct_10k` — `uniqueItems` over 10,000 rows of 17
//!   integers; the colliding rows mix `n` and `-n-1`, which a naive integer hash maps together.
//! * `regex_nonascii_1mb` / `regex_ascii_1mb` — `(?:\w|\b){20}y` against 1 MB of `é` / of `a`
//!   (a Unicode `\b` sent non-ASCII text to the slow engine).
//! * `required_50k` / `optional_50k` — compiling 50,000 properties, all required / none.
//! * `patterns_2000` / `simple_patterns_2000` — compiling and validating 2,000 properties each
//!   with a distinct `\w{20}…` / `^[a-z]+…$` pattern. Every iteration uses new pattern texts, so
//!   the process-wide pattern cache never answers: this is the cold cost.

use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use dsh_tools::schema::{CompiledSchema, Root};
use serde_json::{Map, Value, json};
use std::hint::black_box;
use std::sync::atomic::{AtomicU64, Ordering};

fn rows(collide: bool) -> Value {
    let rows = (0..10_000i64)
        .map(|i| {
            Value::Array(
                (0..17i64)
                    .map(|j| {
                        if collide {
                            // Bit j of i picks j or -j-1: 10,000 distinct rows built from 34 values.
                            if i >> j & 1 == 1 {
                                json!(j)
                            } else {
                                json!(-j - 1)
                            }
                        } else {
                            json!(i * 17 + j)
                        }
                    })
                    .collect(),
            )
        })
        .collect();
    json!({"rows": Value::Array(rows)})
}

fn unique(c: &mut Criterion) {
    let schema = CompiledSchema::compile(&json!({
        "type": "object",
        "properties": {"rows": {
            "type": "array",
            "uniqueItems": true,
            "items": {"type": "array", "items": {"type": "integer"}}
        }}
    }))
    .unwrap();
    for (id, value) in [
        ("adversarial/unique_collide_10k", rows(true)),
        ("adversarial/unique_distinct_10k", rows(false)),
    ] {
        assert!(schema.is_valid(&value));
        c.bench_function(id, |b| {
            b.iter(|| black_box(schema.is_valid(black_box(&value))))
        });
    }
}

fn regex(c: &mut Criterion) {
    let schema = CompiledSchema::compile(&json!({
        "type": "object",
        "properties": {"s": {"type": "string", "pattern": r"(?:\w|\b){20}y"}}
    }))
    .unwrap();
    for (id, value) in [
        (
            "adversarial/regex_nonascii_1mb",
            json!({"s": "é".repeat(500_000)}),
        ),
        (
            "adversarial/regex_ascii_1mb",
            json!({"s": "a".repeat(1_000_000)}),
        ),
    ] {
        // Both run the pattern to the end (a mismatch), neither is cut by the work budget.
        let violations = schema.validate_at(&value, Root::Parameters);
        assert_eq!(violations.len(), 1);
        assert!(!violations[0].contains("not checked"));
        c.bench_function(id, |b| {
            b.iter(|| black_box(schema.validate_at(black_box(&value), Root::Parameters)))
        });
    }
}

fn properties(n: usize, required: bool) -> Value {
    let mut props = Map::new();
    let mut names = Vec::new();
    for i in 0..n {
        props.insert(format!("p{i}"), json!({"type": "integer"}));
        if required {
            names.push(Value::String(format!("p{i}")));
        }
    }
    json!({"type": "object", "properties": props, "required": names})
}

fn required(c: &mut Criterion) {
    for (id, schema) in [
        ("adversarial/required_50k", properties(50_000, true)),
        ("adversarial/optional_50k", properties(50_000, false)),
    ] {
        c.bench_function(id, |b| {
            b.iter(|| black_box(CompiledSchema::compile(black_box(&schema)).is_ok()))
        });
    }
}

static FRESH: AtomicU64 = AtomicU64::new(0);

fn patterned(hostile: bool) -> (Value, Value) {
    let run = FRESH.fetch_add(1, Ordering::Relaxed);
    let mut props = Map::new();
    let mut value = Map::new();
    for i in 0..2000 {
        let tag = format!("r{run}x{i}");
        let pattern = if hostile {
            format!(r"\w{{20}}{tag}")
        } else {
            format!("^[a-z]+{tag}$")
        };
        props.insert(
            format!("p{i}"),
            json!({"type": "string", "pattern": pattern}),
        );
        value.insert(
            format!("p{i}"),
            Value::String(format!("abcdefghijklmnopqrst{tag}")),
        );
    }
    (
        json!({"type": "object", "properties": props}),
        Value::Object(value),
    )
}

fn patterns(c: &mut Criterion) {
    for (id, hostile) in [
        ("adversarial/patterns_2000", true),
        ("adversarial/simple_patterns_2000", false),
    ] {
        let (schema, value) = patterned(hostile);
        assert!(CompiledSchema::compile(&schema).unwrap().is_valid(&value));
        let mut group = c.benchmark_group("adversarial");
        group.sample_size(10);
        group.bench_function(id.trim_start_matches("adversarial/"), |b| {
            b.iter_batched(
                || patterned(hostile),
                |(schema, value)| {
                    let compiled = CompiledSchema::compile(&schema).unwrap();
                    black_box(compiled.is_valid(&value))
                },
                BatchSize::PerIteration,
            )
        });
        group.finish();
    }
}

criterion_group!(benches, unique, regex, required, patterns);
criterion_main!(benches);

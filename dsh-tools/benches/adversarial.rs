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
//! * `one_of_tagged_500x100` / `one_object_500x100` — exporting (DeepSeek, which spells `oneOf`
//!   as `anyOf` and reports whether that loosens it) a `oneOf` of 500 object branches of 100
//!   required properties told apart by a tag listed last, beside one object of 50,000
//!   properties (the disjointness check compared every pair of branches, every property with
//!   every `required` entry: O(B²·M²)).
//! * `bridge_any_of_tagged_190x100` / `bridge_one_object_190x100` — the same two schemas as a
//!   remote server sends them (`anyOf`), through `bridge::from_foreign` (which proves the
//!   branches disjoint to make the `anyOf` a `oneOf`: every pair of branches, every `required`
//!   entry against every other).
//! * `closure_required_100k` / `closure_optional_100k` — the strict closure (DeepSeek strict)
//!   of 100,000 properties, all required / none (each property searched the `required` list).
//! * `restore_unions_8` / `restore_plain_8` — restoring strict-mode arguments through 8
//!   nested unions of two object branches that differ in one scalar's type, beside the same
//!   value through plain objects (each union tried both branches, each try the whole subtree:
//!   2^depth).
//! * `dispose_front_40k` / `dispose_back_40k` — removing 40,000 of 80,000 tools with
//!   `Registry::dispose_all`, the first half / the last half (one by one, removing from the
//!   front shifted the registration order every time: what dropping an import did).

use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use dsh_tools::provider::ProviderExport;
use dsh_tools::provider::{Dialect, Provider, export_parameters};
use dsh_tools::schema::{CompiledSchema, Root};
use dsh_tools::{OutputDecl, Registry, ToolDefinition};
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

/// 500 tagged object branches of 100 required properties (hostile), or one object holding
/// the same 50,000 properties (benign).
fn tagged(hostile: bool) -> Value {
    tagged_n(500, hostile)
}

/// `branches` tagged object branches of 100 required properties, or one object holding as
/// many properties.
fn tagged_n(branches: usize, hostile: bool) -> Value {
    let branch = |b: usize| {
        let mut props = Map::new();
        let mut required = Vec::new();
        for p in 0..99 {
            props.insert(format!("p{p}"), json!({"type": "string"}));
            required.push(Value::String(format!("p{p}")));
        }
        props.insert("kind".to_owned(), json!({"const": format!("k{b}")}));
        required.push(Value::String("kind".to_owned()));
        json!({"type": "object", "properties": props, "required": required})
    };
    if hostile {
        let branches: Vec<Value> = (0..branches).map(branch).collect();
        json!({"type": "object", "properties": {"x": {"oneOf": branches}}, "required": ["x"]})
    } else {
        let mut props = Map::new();
        let mut required = Vec::new();
        for i in 0..branches * 100 {
            props.insert(format!("p{i}"), json!({"type": "string"}));
            required.push(Value::String(format!("p{i}")));
        }
        json!({"type": "object", "properties": {"x": {"type": "object", "properties": props,
            "required": required}}, "required": ["x"]})
    }
}

fn bridges(c: &mut Criterion) {
    // The remote form: `anyOf`, which the bridge makes a `oneOf` once it shows the branches
    // disjoint.
    let foreign = |hostile: bool| {
        // 190 × 101 schemas: within the bridge's 20,000-node limit.
        let text = tagged_n(190, hostile).to_string().replace("oneOf", "anyOf");
        serde_json::from_str::<Value>(&text).unwrap()
    };
    for (id, schema) in [
        ("adversarial/bridge_any_of_tagged_190x100", foreign(true)),
        ("adversarial/bridge_one_object_190x100", foreign(false)),
    ] {
        assert!(dsh_tools::schema::bridge::from_foreign(&schema).is_ok());
        let mut group = c.benchmark_group("adversarial");
        group.sample_size(10);
        group.bench_function(id.trim_start_matches("adversarial/"), |b| {
            b.iter(|| {
                black_box(dsh_tools::schema::bridge::from_foreign(black_box(&schema)).is_ok())
            })
        });
        group.finish();
    }
}

fn exports(c: &mut Criterion) {
    let deepseek = Dialect::new(Provider::DeepSeek);
    let strict = Dialect::strict(Provider::DeepSeek);
    for (id, schema, dialect) in [
        ("adversarial/one_of_tagged_500x100", tagged(true), deepseek),
        ("adversarial/one_object_500x100", tagged(false), deepseek),
        (
            "adversarial/closure_required_100k",
            properties(100_000, true),
            strict,
        ),
        (
            "adversarial/closure_optional_100k",
            properties(100_000, false),
            strict,
        ),
    ] {
        let mut group = c.benchmark_group("adversarial");
        group.sample_size(10);
        group.bench_function(id.trim_start_matches("adversarial/"), |b| {
            b.iter(|| black_box(export_parameters(black_box(&schema), dialect).is_ok()))
        });
        group.finish();
    }
}

/// `depth` nested unions (hostile) or plain objects (benign) and a strict-mode value through
/// them: each level has the nested value, a scalar whose type tells the branches apart, and
/// an optional field sent as `null`.
fn nested(depth: usize, unions: bool) -> (Value, Value) {
    let mut schema = json!({"type": "object", "properties": {"o": {"type": "string"}}});
    let mut value = json!({"o": null});
    for _ in 0..depth {
        let branch = |t: &str| {
            json!({"type": "object", "properties": {
                "v": schema.clone(), "t": {"type": t}, "o": {"type": "string"}},
                "required": ["v", "t"]})
        };
        schema = if unions {
            json!({"oneOf": [branch("string"), branch("integer")]})
        } else {
            branch("integer")
        };
        value = json!({"v": value, "t": 5, "o": null});
    }
    let schema = json!({"type": "object", "properties": {"u": schema}, "required": ["u"]});
    (schema, json!({"u": value}))
}

fn restores(c: &mut Criterion) {
    for (id, unions) in [
        ("adversarial/restore_unions_8", true),
        ("adversarial/restore_plain_8", false),
    ] {
        let (schema, value) = nested(8, unions);
        let registry = Registry::new();
        registry
            .register(ToolDefinition::new(
                "t",
                "d",
                schema,
                OutputDecl::text(),
                |_, _| async { Ok(json!("")) },
            ))
            .unwrap()
            .keep();
        let tools = registry
            .provider_tools(None, Dialect::strict(Provider::OpenAiChat))
            .unwrap();
        let mut check = value.clone();
        tools.restore("t", &mut check);
        assert!(
            check["u"].get("o").is_none(),
            "the null was restored to absent"
        );
        c.bench_function(id, |b| {
            b.iter_batched(
                || value.clone(),
                |mut args| {
                    tools.restore("t", &mut args);
                    args
                },
                BatchSize::SmallInput,
            )
        });
    }
}

fn removals(c: &mut Criterion) {
    let tool = |i: usize| {
        ToolDefinition::new(
            format!("t{i}"),
            "d",
            json!({"type": "object"}),
            OutputDecl::text(),
            |_, _| async { Ok(json!("")) },
        )
    };
    for (id, front) in [("dispose_front_40k", true), ("dispose_back_40k", false)] {
        let mut group = c.benchmark_group("adversarial");
        group.sample_size(10);
        group.bench_function(id, |b| {
            b.iter_batched(
                || {
                    let registry = Registry::new();
                    let mut all: Vec<_> = (0..80_000)
                        .map(|i| registry.register(tool(i)).unwrap())
                        .collect();
                    let half = if front {
                        all.drain(..40_000).collect::<Vec<_>>()
                    } else {
                        all.split_off(40_000)
                    };
                    for r in all {
                        r.keep();
                    }
                    (registry, half)
                },
                |(registry, half)| {
                    registry.dispose_all(half);
                    registry
                },
                BatchSize::PerIteration,
            )
        });
        group.finish();
    }
}

criterion_group!(
    benches, unique, regex, required, patterns, bridges, exports, restores, removals
);
criterion_main!(benches);

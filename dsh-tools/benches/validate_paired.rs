//! `validate_paired`: the `args/*` ratios measured so that machine noise cancels. Criterion
//! samples one benchmark after another; on a shared VM the speed drifts between them (up to 2×
//! here), which swamps ratios near 1. This harness interleaves the variants, round after round,
//! and keeps each variant's fastest round: drift hits all of them alike, and the minimum is the
//! least disturbed figure.
//!
//! Variants (each returns `Option<T>`, like the serde floor):
//! * `serde` — `T::deserialize(&value)`.
//! * `generated` — what `#[tool]` runs for a type deriving `FastCheck`: [`ArgsValidator::validate`]
//!   (the generated check; the interpreter only when it says no), then the decode.
//! * `interpreter` — the same bridged schema through the interpreter alone (a type without
//!   `FastCheck`), then the decode.
//! * `hand_written` (small only) — a check written by hand for `ReadArgs`, the floor a generator
//!   can hope for.
//!
//! `compact`: the small payload's arguments as the inline form of `#[tool]` declares them: a
//! member table checked by one shared loop, the form `#[tool]` writes to keep compile time down,
//! beside the derive's straight-line code.
//!
//! Then `call`: the small payload as one whole call through a registry without hooks (no-op body,
//! output validated and rendered), so the validator's share of a call shows:
//! * `call_generated` — a `#[tool]` whose arguments derive `FastCheck`;
//! * `call_interpreter` — the same body and type through `ToolDefinition::typed` (no generated
//!   check);
//! * `call_unchecked` — a raw definition that decodes without validating (not a real option: it
//!   is the floor);
//! * `decode` and `parse` — `T::deserialize(&value)` alone, and `serde_json::from_str` of the
//!   arguments' JSON text (what a provider adapter does before any of this).
//!
//! `cargo bench -p dsh-tools --bench validate_paired` (about two minutes).
//!
//! Instructions instead of time: with `PAIRED_COUNT=VARIANT` (`serde`, `generated`,
//! `interpreter` or `hand_written`) the binary only runs that variant on the small payload
//! `PAIRED_N` times (default 10000), for valgrind to count: the difference between two counts
//! divided by the difference of their `PAIRED_N` is one validate-and-decode, free of timing
//! noise and of where the code happens to be laid out (see BENCHMARKS.md).

use dsh_tools::schema::fast::ArgsValidator;
use dsh_tools::schema::{CompiledSchema, Root, bridge};
use dsh_tools::{
    CancellationToken, FastCheck, OutputDecl, Registry, Tool, ToolDefinition, ToolError,
    ToolExecutionInput, tool,
};
use serde::Deserialize;
use serde_json::Value;
use std::hint::black_box;
use std::time::Instant;

#[path = "common/types.rs"]
mod types;
use types::{EditArgs, ReadArgs, TableArgs};

const ROUNDS: usize = 200;

/// `ReadArgs`'s schema checked by hand: a string `path`, optional `i64`s, nothing else.
fn hand_written(v: &Value) -> bool {
    let Value::Object(m) = v else {
        return false;
    };
    let mut required = 0;
    for (k, x) in m {
        let ok = match k.as_str() {
            "path" => {
                required += 1;
                x.is_string()
            }
            "offset" | "limit" => x.is_null() || x.as_i64().is_some(),
            _ => false,
        };
        if !ok {
            return false;
        }
    }
    required == 1
}

/// The decoded arguments when `validation` passed (violations go to `black_box`): every variant
/// returns what the serde floor returns.
fn decode_if_valid<T: for<'de> Deserialize<'de>>(
    validation: Result<(), Vec<String>>,
    v: &Value,
) -> Option<T> {
    match validation {
        Ok(()) => T::deserialize(v).ok(),
        Err(violations) => {
            black_box(violations);
            None
        }
    }
}

/// The fastest round of `f`, in ns per call.
fn time(best: &mut f64, iters: usize, mut f: impl FnMut()) {
    let start = Instant::now();
    for _ in 0..iters {
        f();
    }
    *best = best.min(start.elapsed().as_nanos() as f64 / iters as f64);
}

/// The `interpreter` variant: the bridged schema through the interpreter alone, then the decode.
fn interpreted<T: for<'de> Deserialize<'de>>(interpreter: &CompiledSchema, v: &Value) -> Option<T> {
    let violations = interpreter.validate_at(v, Root::Parameters);
    decode_if_valid(
        if violations.is_empty() {
            Ok(())
        } else {
            Err(violations)
        },
        v,
    )
}

/// The `hand_written` variant: `check`, then the decode.
fn checked_by<T: for<'de> Deserialize<'de>>(check: fn(&Value) -> bool, v: &Value) -> Option<T> {
    if check(v) {
        T::deserialize(v).ok()
    } else {
        None
    }
}

fn paired<T: for<'de> Deserialize<'de> + schemars::JsonSchema + FastCheck>(
    name: &str,
    payload: &str,
    iters: usize,
    hand: Option<fn(&Value) -> bool>,
) {
    let value: Value = serde_json::from_str(payload).expect("benchmark data is JSON");
    let generated = ArgsValidator::of::<T>(false).expect("benchmark types bridge");
    assert_eq!(generated.fast_path(), Ok(()), "{name}");
    let schema = bridge::schema_for_args::<T>(false).expect("benchmark types bridge");
    let interpreter = CompiledSchema::compile(&schema).expect("bridged schemas compile");
    if let Some(hand) = hand {
        assert_eq!(hand(&value), interpreter.is_valid(&value), "{name}");
    }
    let [mut serde, mut fast, mut interp, mut by_hand] = [f64::MAX; 4];
    for _ in 0..ROUNDS {
        time(&mut serde, iters, || {
            black_box(T::deserialize(black_box(&value)).ok());
        });
        time(&mut fast, iters, || {
            let v = black_box(&value);
            black_box(decode_if_valid::<T>(generated.validate(v), v));
        });
        time(&mut interp, iters, || {
            let v = black_box(&value);
            black_box(interpreted::<T>(&interpreter, v));
        });
        if let Some(hand) = hand {
            time(&mut by_hand, iters, || {
                let v = black_box(&value);
                black_box(checked_by::<T>(hand, v));
            });
        }
    }
    let ratio = |x: f64| format!("{x:.1} ns ({:.3}x)", x / serde);
    print!(
        "{name:8} serde {serde:.1} ns | generated {} | interpreter {}",
        ratio(fast),
        ratio(interp)
    );
    if hand.is_some() {
        print!(" | hand_written {}", ratio(by_hand));
    }
    println!();
}

/// Reads nothing.
#[tool]
async fn read(args: ReadArgs) -> Result<usize, ToolError> {
    Ok(args.path.len())
}

/// Reads nothing (the inline form: its arguments get the compact generated check).
#[tool]
async fn read_inline(
    /// The file
    path: String,
    /// First line
    offset: Option<i64>,
    /// Most lines
    limit: Option<i64>,
) -> Result<usize, ToolError> {
    Ok(path.len() + usize::from(offset.is_some()) + usize::from(limit.is_some()))
}

/// The small payload against the inline form's compact check (a member table and one shared
/// loop) beside the derive's straight-line code, both with the same decode.
fn compact() {
    type InlineArgs = <ReadInline as Tool>::Args;
    let value: Value = serde_json::from_str(include_str!("data/small.json")).expect("JSON");
    let definition = ReadInline.definition();
    let compact = definition.args_validator().expect("typed");
    assert_eq!(compact.fast_path(), Ok(()));
    let generated = ArgsValidator::of::<ReadArgs>(false).expect("bridges");
    let iters = 20_000;
    let [mut serde, mut straight, mut table] = [f64::MAX; 3];
    for _ in 0..ROUNDS {
        time(&mut serde, iters, || {
            black_box(InlineArgs::deserialize(black_box(&value)).ok());
        });
        time(&mut straight, iters, || {
            let v = black_box(&value);
            black_box(decode_if_valid::<InlineArgs>(generated.validate(v), v));
        });
        time(&mut table, iters, || {
            let v = black_box(&value);
            black_box(decode_if_valid::<InlineArgs>(compact.validate(v), v));
        });
    }
    println!(
        "compact  serde {serde:.1} ns | straight-line (derive) {straight:.1} ns ({:.3}x) | compact (inline #[tool]) {table:.1} ns ({:.3}x)",
        straight / serde,
        table / serde
    );
}

fn calls() {
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("a runtime");
    let registry = Registry::new();
    registry.register(Read).expect("registers").keep();
    let typed = ToolDefinition::typed(
        "read_interpreted",
        "Reads nothing.",
        |args: ReadArgs, _| async move { Ok::<_, ToolError>(args.path.len()) },
    )
    .expect("bridges");
    assert!(typed.args_validator().unwrap().fast_path().is_err());
    registry.register(typed).expect("registers").keep();
    let output = bridge::schema_for::<usize>().expect("bridges");
    let unchecked = ToolDefinition::new(
        "read_unchecked",
        "Reads nothing.",
        bridge::schema_for_args::<ReadArgs>(false).expect("bridges"),
        OutputDecl::json(output),
        |args, _| async move {
            let args: ReadArgs = dsh_tools::json::decode(&args)?;
            Ok(serde_json::to_value(args.path.len())?)
        },
    );
    registry.register(unchecked).expect("registers").keep();

    let text = include_str!("data/small.json");
    let value: Value = serde_json::from_str(text).expect("JSON");
    let call = |name: &str| {
        let input = ToolExecutionInput::new("c1", name, value.clone(), CancellationToken::new());
        rt.block_on(registry.execute(input))
    };
    let expected = value["path"].as_str().unwrap().len().to_string();
    for name in ["read", "read_interpreted", "read_unchecked"] {
        assert_eq!(call(name).text(), expected, "{name}");
    }
    let iters = 2_000;
    let [
        mut generated,
        mut interpreted,
        mut unchecked,
        mut decode,
        mut parse,
    ] = [f64::MAX; 5];
    for _ in 0..ROUNDS {
        time(&mut generated, iters, || {
            black_box(call(black_box("read")));
        });
        time(&mut interpreted, iters, || {
            black_box(call(black_box("read_interpreted")));
        });
        time(&mut unchecked, iters, || {
            black_box(call(black_box("read_unchecked")));
        });
        time(&mut decode, iters, || {
            black_box(ReadArgs::deserialize(black_box(&value)).ok());
        });
        time(&mut parse, iters, || {
            black_box(serde_json::from_str::<Value>(black_box(text)).ok());
        });
    }
    let share = |x: f64| {
        format!(
            "{x:.0} ns (+{:.1} % on unchecked)",
            (x / unchecked - 1.0) * 100.0
        )
    };
    println!(
        "call     unchecked {unchecked:.0} ns | generated {} | interpreter {} | decode {decode:.1} ns | parse {parse:.1} ns ({:.1}x the decode)",
        share(generated),
        share(interpreted),
        parse / decode
    );
}

/// One variant, `n` times, on the small payload (for an instruction count).
fn count(variant: &str, n: usize) {
    if let Some((variant, payload)) = variant.split_once(':') {
        return count_twin(variant, payload, n);
    }
    let value: Value = serde_json::from_str(include_str!("data/small.json")).expect("JSON");
    let generated = ArgsValidator::of::<ReadArgs>(false).expect("bridges");
    let schema = bridge::schema_for_args::<ReadArgs>(false).expect("bridges");
    let interpreter = CompiledSchema::compile(&schema).expect("compiles");
    fn run(n: usize, mut f: impl FnMut()) {
        (0..n).for_each(|_| f());
    }
    match variant {
        "serde" => run(n, || {
            black_box(ReadArgs::deserialize(black_box(&value)).ok());
        }),
        "generated" => run(n, || {
            let v = black_box(&value);
            black_box(decode_if_valid::<ReadArgs>(generated.validate(v), v));
        }),
        "interpreter" => run(n, || {
            let v = black_box(&value);
            black_box(interpreted::<ReadArgs>(&interpreter, v));
        }),
        "hand_written" => run(n, || {
            let v = black_box(&value);
            black_box(checked_by::<ReadArgs>(hand_written, v));
        }),
        other => panic!("PAIRED_COUNT: no variant {other:?}"),
    }
}

/// Touches every value of `v` once: the floor of any validator that reads a `Value` (its type,
/// every key's length, every number's kind; no schema). Scalars inside containers are read
/// inline, without a call, as the validator's fast path reads them.
///
/// `KEYED` (the `keyed` variant) reads each key's last byte instead of its length: the floor of
/// any validator that checks a `Value`'s keys, since telling a key apart loads its bytes (a heap
/// allocation of its own, which the plain walk never touches).
fn walk<const KEYED: bool>(v: &Value) -> usize {
    match v {
        Value::Array(items) => items.iter().map(member::<KEYED>).sum(),
        Value::Object(map) => map
            .iter()
            .map(|(k, v)| {
                let key = if KEYED {
                    usize::from(k.as_bytes().last().copied().unwrap_or(1))
                } else {
                    k.len()
                };
                key + member::<KEYED>(v)
            })
            .sum(),
        _ => scalar(v),
    }
}

#[inline(always)]
fn member<const KEYED: bool>(v: &Value) -> usize {
    match v {
        Value::Array(_) | Value::Object(_) => walk::<KEYED>(v),
        _ => scalar(v),
    }
}

#[inline(always)]
fn scalar(v: &Value) -> usize {
    match v {
        Value::Null => 1,
        Value::Bool(b) => usize::from(*b),
        Value::Number(n) => usize::from(n.is_i64()),
        Value::String(s) => s.len(),
        Value::Array(_) | Value::Object(_) => 0,
    }
}

/// `validate.rs`'s criterion variants, interleaved: `serde`, `dsh` (the hand-written schema
/// through the interpreter: `validate_at`), `walk` (the floor: every value touched once),
/// `keyed` (the walk reading every key's bytes too: the floor of a validator that checks keys)
/// and `jsonschema` (`is_valid`, or every error rendered on the invalid payload), each + the
/// decode.
fn criterion_twin<T: for<'de> Deserialize<'de>>(
    name: &str,
    schema: &str,
    payload: &str,
    iters: usize,
) {
    let schema: Value = serde_json::from_str(schema).expect("benchmark schemas are JSON");
    let value: Value = serde_json::from_str(payload).expect("benchmark data is JSON");
    let dsh = CompiledSchema::compile(&schema).expect("benchmark schemas are in the subset");
    let js = jsonschema::validator_for(&schema).expect("benchmark schemas are JSON Schema");
    let valid = dsh.is_valid(&value);
    assert_eq!(valid, js.is_valid(&value), "{name}");
    let [mut serde, mut ours, mut floor, mut keyed, mut theirs] = [f64::MAX; 5];
    for _ in 0..ROUNDS {
        time(&mut serde, iters, || {
            black_box(T::deserialize(black_box(&value)).ok());
        });
        time(&mut ours, iters, || {
            let v = black_box(&value);
            let violations = dsh.validate_at(v, Root::Parameters);
            black_box(decode_if_valid::<T>(
                if violations.is_empty() {
                    Ok(())
                } else {
                    Err(violations)
                },
                v,
            ));
        });
        time(&mut floor, iters, || {
            let v = black_box(&value);
            if black_box(walk::<false>(v)) > 0 {
                black_box(T::deserialize(v).ok());
            }
        });
        time(&mut keyed, iters, || {
            let v = black_box(&value);
            if black_box(walk::<true>(v)) > 0 {
                black_box(T::deserialize(v).ok());
            }
        });
        time(&mut theirs, iters, || {
            let v = black_box(&value);
            if valid {
                if js.is_valid(v) {
                    black_box(T::deserialize(v).ok());
                }
            } else {
                black_box(js.iter_errors(v).map(|e| e.to_string()).collect::<Vec<_>>());
            }
        });
    }
    println!(
        "{name:8} serde {serde:.1} ns | dsh {ours:.1} ns ({:.3}x serde, {:.3}x jsonschema) | walk {floor:.1} ns ({:.3}x serde, {:.3}x jsonschema) | keyed {keyed:.1} ns ({:.3}x serde, {:.3}x jsonschema) | jsonschema {theirs:.1} ns ({:.3}x serde)",
        ours / serde,
        ours / theirs,
        floor / serde,
        floor / theirs,
        keyed / serde,
        keyed / theirs,
        theirs / serde,
    );
}

/// One criterion-twin variant (`dsh`, `walk`, `keyed`, `jsonschema`), `n` times, on one payload
/// (`PAIRED_COUNT=dsh:medium`).
fn count_twin(variant: &str, payload: &str, n: usize) {
    let medium = include_str!("data/medium.schema.json");
    let (schema, data) = match payload {
        "small" => (
            include_str!("data/small.schema.json"),
            include_str!("data/small.json"),
        ),
        "medium" => (medium, include_str!("data/medium.json")),
        "large" => (
            include_str!("data/large.schema.json"),
            include_str!("data/large.json"),
        ),
        "invalid" => (medium, include_str!("data/invalid.json")),
        other => panic!("PAIRED_COUNT: no payload {other:?}"),
    };
    let schema: Value = serde_json::from_str(schema).expect("JSON");
    let value: Value = serde_json::from_str(data).expect("JSON");
    let dsh = CompiledSchema::compile(&schema).expect("compiles");
    let js = jsonschema::validator_for(&schema).expect("JSON Schema");
    for _ in 0..n {
        let v = black_box(&value);
        match variant {
            "dsh" => black_box(dsh.validate_at(v, Root::Parameters).len()),
            "walk" => black_box(walk::<false>(v)),
            "keyed" => black_box(walk::<true>(v)),
            "jsonschema" => black_box(
                js.iter_errors(v)
                    .map(|e| e.to_string())
                    .collect::<Vec<_>>()
                    .len(),
            ),
            other => panic!("PAIRED_COUNT: no variant {other:?}"),
        };
    }
}

fn main() {
    // `cargo bench` passes `--bench`; a filter or `--list` has nothing to select here.
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    if let Ok(variant) = std::env::var("PAIRED_COUNT") {
        let n = std::env::var("PAIRED_N")
            .ok()
            .and_then(|n| n.parse().ok())
            .unwrap_or(10_000);
        count(&variant, n);
        return;
    }
    {
        let medium = include_str!("data/medium.schema.json");
        criterion_twin::<ReadArgs>(
            "small",
            include_str!("data/small.schema.json"),
            include_str!("data/small.json"),
            20_000,
        );
        criterion_twin::<EditArgs>("medium", medium, include_str!("data/medium.json"), 500);
        criterion_twin::<TableArgs>(
            "large",
            include_str!("data/large.schema.json"),
            include_str!("data/large.json"),
            10,
        );
        criterion_twin::<EditArgs>("invalid", medium, include_str!("data/invalid.json"), 500);
        if std::env::var("PAIRED_ONLY").is_ok_and(|o| o == "twin") {
            return;
        }
    }
    paired::<ReadArgs>(
        "small",
        include_str!("data/small.json"),
        20_000,
        Some(hand_written),
    );
    paired::<EditArgs>("medium", include_str!("data/medium.json"), 500, None);
    paired::<TableArgs>("large", include_str!("data/large.json"), 10, None);
    paired::<EditArgs>("invalid", include_str!("data/invalid.json"), 500, None);
    compact();
    calls();
}

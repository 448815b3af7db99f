//! Arguments from a parameters schema for `fuzz_tool`: values the schema (most likely)
//! accepts, near-misses made from them, and the limits checked before generating.

use proptest::prelude::*;
use proptest::test_runner::TestRunner;
use serde_json::{Map, Number, Value, json};

/// The deepest schema nesting `fuzz_tool` generates for: its generator follows the schema
/// (required properties at every depth), so a deeper schema would take the stack with it.
pub const MAX_FUZZ_SCHEMA_DEPTH: usize = 64;
/// The most values one generated argument object may need: nested `minItems` multiply (four
/// levels of 256 need 4 billion), so such schemas fail at once instead of never finishing.
pub const MAX_FUZZ_VALUES: u64 = 100_000;

/// Whether the generator can serve `schema`: nesting within [`MAX_FUZZ_SCHEMA_DEPTH`], and at
/// most [`MAX_FUZZ_VALUES`] values in the smallest arguments the arrays' `minItems` allow.
/// Walked without recursion, so a 100,000-deep schema is refused, not followed.
pub(super) fn generation_limits(schema: &Value) -> Result<(), String> {
    let mut stack: Vec<(&Value, usize, u64)> = vec![(schema, 0, 1)];
    let mut values: u64 = 0;
    while let Some((node, depth, copies)) = stack.pop() {
        if depth > MAX_FUZZ_SCHEMA_DEPTH {
            return Err(format!(
                "the parameters nest more than {MAX_FUZZ_SCHEMA_DEPTH} schemas deep; fuzz_tool \
                 generates for at most that many levels (test the deep part on its own)"
            ));
        }
        values = values.saturating_add(copies);
        if values > MAX_FUZZ_VALUES {
            return Err(format!(
                "the smallest arguments these parameters admit hold more than {MAX_FUZZ_VALUES} \
                 values (nested `minItems` multiply); fuzz_tool stops there (lower the minimums)"
            ));
        }
        let Some(map) = node.as_object() else {
            continue;
        };
        if let Some(Value::Array(branches)) = map.get("oneOf") {
            stack.extend(branches.iter().map(|b| (b, depth + 1, copies)));
        }
        if let Some(Value::Object(properties)) = map.get("properties") {
            stack.extend(properties.values().map(|p| (p, depth + 1, copies)));
        }
        if let Some(extra @ Value::Object(_)) = map.get("additionalProperties") {
            stack.push((extra, depth + 1, copies));
        }
        if let Some(items) = map.get("items") {
            let min = map
                .get("minItems")
                .and_then(Value::as_u64)
                .unwrap_or(0)
                .min(256);
            stack.push((items, depth + 1, copies.saturating_mul(min.max(1))));
        }
    }
    Ok(())
}

/// Valid arguments and near-misses, half and half.
pub(super) fn arguments(schema: &Value, depth: u32) -> BoxedStrategy<Value> {
    let valid = value(schema, depth);
    let near = (value(schema, depth), any::<usize>(), 0..MUTATIONS)
        .prop_map(|(v, at, op)| mutate(v, at, op));
    prop_oneof![valid, near].boxed()
}

/// Arguments around known-good `examples` (not empty): an example with one top-level property
/// replaced by a value drawn from its schema (half the time), with one near-miss mutation (a
/// quarter), or as given.
pub(super) fn around(schema: &Value, examples: Vec<Value>, depth: u32) -> BoxedStrategy<Value> {
    let pick = proptest::sample::select(examples);
    let near = (pick.clone(), any::<usize>(), 0..MUTATIONS)
        .prop_map(|(v, at, op)| mutate(v, at, op))
        .boxed();
    let properties = schema.get("properties").and_then(Value::as_object);
    let replaced: Vec<BoxedStrategy<Value>> = properties
        .into_iter()
        .flatten()
        .map(|(key, property)| {
            let key = key.clone();
            (pick.clone(), value(property, depth))
                .prop_map(move |(mut example, v)| {
                    if let Value::Object(map) = &mut example {
                        map.insert(key.clone(), v);
                    }
                    example
                })
                .boxed()
        })
        .collect();
    if replaced.is_empty() {
        return prop_oneof![1 => pick, 1 => near].boxed();
    }
    prop_oneof![
        1 => pick,
        2 => proptest::strategy::Union::new(replaced),
        1 => near,
    ]
    .boxed()
}

/// A value the schema (most likely) accepts; the validator decides in the end.
fn value(schema: &Value, depth: u32) -> BoxedStrategy<Value> {
    let Some(map) = schema.as_object() else {
        return any_json(1);
    };
    if let Some(c) = map.get("const") {
        return Just(c.clone()).boxed();
    }
    if let Some(Value::Array(members)) = map.get("enum")
        && !members.is_empty()
    {
        return proptest::sample::select(members.clone()).boxed();
    }
    if let Some(Value::Array(branches)) = map.get("oneOf")
        && !branches.is_empty()
    {
        let branches: Vec<BoxedStrategy<Value>> =
            branches.iter().map(|b| value(b, depth)).collect();
        return proptest::strategy::Union::new(branches).boxed();
    }
    let number = |key: &str| map.get(key).and_then(Value::as_f64);
    let count = |key: &str| map.get(key).and_then(Value::as_u64).map(|n| n as usize);
    match map.get("type").and_then(Value::as_str) {
        Some("null") => Just(Value::Null).boxed(),
        Some("boolean") => any::<bool>().prop_map(Value::Bool).boxed(),
        Some("integer") => {
            let low = integer_bound(map, "minimum", "exclusiveMinimum", 1, i64::MIN);
            let high = integer_bound(map, "maximum", "exclusiveMaximum", -1, i64::MAX);
            if low > high {
                return Just(json!(low)).boxed();
            }
            Integers::new(low, high).prop_map(|n| json!(n)).boxed()
        }
        Some("number") => {
            let low = number("minimum")
                .or_else(|| number("exclusiveMinimum").map(f64::next_up))
                .unwrap_or(-f64::MAX);
            let high = number("maximum")
                .or_else(|| number("exclusiveMaximum").map(f64::next_down))
                .unwrap_or(f64::MAX);
            if !low.is_finite() || !high.is_finite() || low > high {
                return Just(Number::from_f64(low).map_or(Value::Null, Value::Number)).boxed();
            }
            floats(low, high)
                .prop_map(|f| Number::from_f64(f).map_or(Value::Null, Value::Number))
                .boxed()
        }
        Some("string") => {
            // Huge minimums are capped (such values are then near-misses, classified as such).
            let min = count("minLength").unwrap_or(0).min(4096);
            let max = count("maxLength")
                .unwrap_or(min + 16)
                .min(min + 16)
                .max(min);
            if let Some(pattern) = map.get("pattern").and_then(Value::as_str)
                // proptest's regex strategy refuses anchors; schema patterns usually have them.
                && let Ok(matching) = proptest::string::string_regex(unanchored(pattern))
            {
                return matching.prop_map(Value::String).boxed();
            }
            proptest::collection::vec(any::<char>(), min..=max)
                .prop_map(|chars| Value::String(chars.into_iter().collect()))
                .boxed()
        }
        Some("array") => {
            let min = count("minItems").unwrap_or(0).min(256);
            let max = count("maxItems").unwrap_or(min + 3).min(min + 3).max(min);
            let items = if depth == 0 && min == 0 {
                return Just(json!([])).boxed();
            } else {
                map.get("items")
                    .map_or_else(|| any_json(1), |i| value(i, depth.saturating_sub(1)))
            };
            proptest::collection::vec(items, min..=max)
                .prop_map(Value::Array)
                .boxed()
        }
        Some("object") => object(map, depth),
        _ => any_json(depth.min(2)),
    }
}

/// Integers in `[low, high]`: the values bodies trip on ([`integer_edges`]) half the time,
/// else any; a failure shrinks by binary search toward 0 (a candidate the schema rejects is
/// classified as such, so the search still ends on the smallest failing value).
#[derive(Debug)]
struct Integers {
    pick: BoxedStrategy<i64>,
}

/// The integers bodies trip on: the bounds and their neighbours, 0 and ±1, the limits of Rust's
/// integer types (a `u64` field given `i32::MAX + 1`), and 2^53, past which a JSON peer loses
/// precision.
fn integer_edges(low: i64, high: i64) -> Vec<i64> {
    let mut edges = vec![
        low,
        high,
        low.saturating_add(1),
        high.saturating_sub(1),
        0,
        1,
        -1,
        2,
        i64::from(i8::MIN),
        i64::from(i8::MAX),
        i64::from(u8::MAX),
        i64::from(i16::MIN),
        i64::from(i16::MAX),
        i64::from(u16::MAX),
        i64::from(i32::MIN),
        i64::from(i32::MAX),
        i64::from(u32::MAX),
        1 << 53,
        (1 << 53) + 1,
        -(1 << 53),
        i64::MIN,
        i64::MAX,
    ];
    edges.retain(|n| (low..=high).contains(n));
    edges.sort_unstable();
    edges.dedup();
    edges
}

/// Floats in `[low, high]` (finite, `low <= high`): half the time one of the values that break
/// arithmetic (the bounds and the next floats inside them, 0, ±1, ±½, ±`f64::MAX`, the smallest
/// normal and subnormal, ±1e±300, 2^53, `1 + ε`), else a uniform draw (over at most ±1e15) or
/// any magnitude at all (random bits, clamped into the range).
fn floats(low: f64, high: f64) -> BoxedStrategy<f64> {
    let tiny = f64::from_bits(1);
    let mut edges: Vec<f64> = vec![
        low,
        high,
        low.next_up(),
        high.next_down(),
        0.0,
        1.0,
        -1.0,
        0.5,
        -0.5,
        f64::MAX,
        -f64::MAX,
        f64::MIN_POSITIVE,
        -f64::MIN_POSITIVE,
        tiny,
        -tiny,
        1e-300,
        -1e-300,
        1e300,
        -1e300,
        9_007_199_254_740_992.0,
        1.0 + f64::EPSILON,
    ];
    edges.retain(|f| f.is_finite() && (low..=high).contains(f));
    edges.sort_by(f64::total_cmp);
    edges.dedup_by(|a, b| a.to_bits() == b.to_bits());
    // `low..=high` samples `high - low`, which must stay finite.
    let span_low = low.max(-1e15);
    let span_high = high.min(1e15).max(span_low);
    let (span_low, span_high) = if span_low <= high {
        (span_low, span_high)
    } else {
        (low, low)
    };
    prop_oneof![
        2 => proptest::sample::select(edges),
        1 => span_low..=span_high,
        1 => any::<u64>().prop_map(move |bits| {
            let f = f64::from_bits(bits);
            if f.is_finite() { f.clamp(low, high) } else { low }
        }),
    ]
    .boxed()
}

impl Integers {
    fn new(low: i64, high: i64) -> Self {
        let edges = integer_edges(low, high);
        let small = low.max(-100).min(high)..=high.min(100).max(low);
        Self {
            pick: prop_oneof![
                2 => proptest::sample::select(edges),
                1 => low..=high,
                1 => small,
            ]
            .boxed(),
        }
    }
}

impl Strategy for Integers {
    type Tree = proptest::num::i64::BinarySearch;
    type Value = i64;

    fn new_tree(&self, runner: &mut TestRunner) -> proptest::strategy::NewTree<Self> {
        let start = self.pick.new_tree(runner)?.current();
        Ok(proptest::num::i64::BinarySearch::new(start))
    }
}

/// An integer bound as an `i64`: the inclusive one, or the exclusive one moved by `step`.
fn integer_bound(
    map: &Map<String, Value>,
    inclusive: &str,
    exclusive: &str,
    step: i64,
    default: i64,
) -> i64 {
    let read = |key: &str| {
        map.get(key).and_then(|v| {
            v.as_i64()
                .or_else(|| v.as_u64().map(|_| i64::MAX))
                .or_else(|| {
                    // A fractional bound: the first integer inside it.
                    v.as_f64()
                        .map(|f| if step > 0 { f.ceil() } else { f.floor() })
                        .map(|f| f.clamp(i64::MIN as f64, i64::MAX as f64) as i64)
                })
        })
    };
    read(inclusive)
        .or_else(|| read(exclusive).map(|b| b.saturating_add(step)))
        .unwrap_or(default)
}

fn object(map: &Map<String, Value>, depth: u32) -> BoxedStrategy<Value> {
    let required: Vec<&str> = map
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let below = depth.saturating_sub(1);
    let mut fields: Vec<BoxedStrategy<Option<(String, Value)>>> = Vec::new();
    if let Some(Value::Object(properties)) = map.get("properties") {
        for (key, schema) in properties {
            let key = key.clone();
            let strategy = value(schema, below);
            if required.contains(&key.as_str()) {
                fields.push(strategy.prop_map(move |v| Some((key.clone(), v))).boxed());
            } else if depth == 0 {
                continue;
            } else {
                fields.push(
                    proptest::option::of(strategy.prop_map(move |v| (key.clone(), v))).boxed(),
                );
            }
        }
    }
    let extra = match map.get("additionalProperties") {
        Some(Value::Object(_)) | None if depth > 0 => {
            let schema = map
                .get("additionalProperties")
                .cloned()
                .unwrap_or(json!({}));
            proptest::collection::vec(("[a-z]{1,6}", value(&schema, below)), 0..=2).boxed()
        }
        _ => Just(Vec::new()).boxed(),
    };
    (fields, extra)
        .prop_map(|(fields, extra)| {
            let mut object = Map::new();
            for (key, value) in extra {
                object.insert(key, value);
            }
            for (key, value) in fields.into_iter().flatten() {
                object.insert(key, value);
            }
            Value::Object(object)
        })
        .boxed()
}

/// `pattern` without a leading `^` and an unescaped trailing `$`.
fn unanchored(pattern: &str) -> &str {
    let pattern = pattern.strip_prefix('^').unwrap_or(pattern);
    match pattern.strip_suffix('$') {
        Some(rest) if !rest.ends_with('\\') => rest,
        _ => pattern,
    }
}

/// Any small JSON value.
fn any_json(depth: u32) -> BoxedStrategy<Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i32>().prop_map(|n| json!(n)),
        "[a-z ]{0,8}".prop_map(Value::String),
    ];
    leaf.prop_recursive(depth, 8, 3, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..3).prop_map(Value::Array),
            proptest::collection::btree_map("[a-z]{1,4}", inner, 0..3)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
    .boxed()
}

const MUTATIONS: u8 = 7;

/// Breaks one thing in `value`, at the `at`-th node (preorder, modulo the node count).
fn mutate(mut value: Value, at: usize, op: u8) -> Value {
    let mut count = 0;
    count_nodes(&value, &mut count);
    let target = at % count.max(1);
    let mut seen = 0;
    if let Some(node) = nth_node(&mut value, target, &mut seen) {
        match op {
            // A value of another type.
            0 => {
                *node = match node {
                    Value::String(_) => json!(17),
                    Value::Number(_) => json!("17"),
                    Value::Bool(_) => Value::Null,
                    Value::Null => json!(false),
                    Value::Array(_) => json!({}),
                    Value::Object(_) => json!([]),
                }
            }
            // A property dropped (a required one, often).
            1 => {
                if let Value::Object(map) = node
                    && let Some(key) = map.keys().next().cloned()
                {
                    map.shift_remove(&key);
                }
            }
            // An undeclared property.
            2 => {
                if let Value::Object(map) = node {
                    map.insert("fuzz_extra".into(), json!(true));
                }
            }
            // Out of range, too long.
            3 => match node {
                Value::Number(n) => {
                    *node = n
                        .as_i64()
                        .map(|i| json!(i.saturating_mul(1000).saturating_add(1_000_000_007)))
                        .unwrap_or(json!(-1e300));
                }
                Value::String(s) => *s = s.repeat(3) + &"x".repeat(300),
                Value::Array(items) => {
                    let copy = items.clone();
                    items.extend(copy);
                    items.push(Value::Null);
                }
                _ => *node = json!(-1),
            },
            // Below every minimum, emptied.
            4 => match node {
                Value::Number(_) => *node = json!(i64::MIN),
                Value::String(s) => s.clear(),
                Value::Array(items) => items.clear(),
                Value::Object(map) => map.clear(),
                _ => {}
            },
            // A fraction where an integer goes.
            5 => *node = json!(0.5),
            // Null.
            _ => *node = Value::Null,
        }
    }
    value
}

fn count_nodes(value: &Value, count: &mut usize) {
    *count += 1;
    match value {
        Value::Array(items) => items.iter().for_each(|v| count_nodes(v, count)),
        Value::Object(map) => map.values().for_each(|v| count_nodes(v, count)),
        _ => {}
    }
}

fn nth_node<'a>(value: &'a mut Value, target: usize, seen: &mut usize) -> Option<&'a mut Value> {
    if *seen == target {
        return Some(value);
    }
    *seen += 1;
    match value {
        Value::Array(items) => {
            for item in items {
                if let Some(found) = nth_node(item, target, seen) {
                    return Some(found);
                }
            }
            None
        }
        Value::Object(map) => {
            for item in map.values_mut() {
                if let Some(found) = nth_node(item, target, seen) {
                    return Some(found);
                }
            }
            None
        }
        _ => None,
    }
}

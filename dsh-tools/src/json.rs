//! The lossless JSON value model (spec §0).
//!
//! Every value that crosses the registry is a [`serde_json::Value`] that survives a JSON round
//! trip bit for bit. `serde_json::Number` cannot hold NaN or ±infinity, so the one non-lossless
//! value a `Value` can carry is negative zero (`-0`, which serde_json parses to `-0.0`).
//!
//! Numbers follow the reference implementation's IEEE-double semantics where they are observable
//! (`1.0` and `1e2` are integers; `1` equals `1.0` in `enum`/`const`) while exact `u64`/`i64`
//! values are kept and compared exactly, never rounded.
//!
//! Every walk here is iterative: values nested 100,000 deep are fine on a small stack. The one
//! exception is [`decode`]'s call into serde (see its docs).

use serde_json::{Number, Value};
use std::cmp::Ordering;

/// How deep typed arguments may nest where the schema admits any value (a `serde_json::Value`
/// field), and how deep [`decode`] reads: serde_json's own parser limit. Decoding, and the
/// author's type dropping, recurse once per level; deeper arguments are `INVALID_ARGS`.
/// Re-exported as `tool::MAX_DECODE_DEPTH`.
pub const MAX_DECODE_DEPTH: u32 = 128;

/// Drops a value of any depth on any stack: ordinary values as usual, deep ones iteratively.
pub(crate) fn free(value: Value) {
    if deeper_than(&value, 64) {
        drop_deep(value);
    }
}

/// Whether `value` nests more than `limit` levels (a walk that recurses at most `limit` deep).
pub(crate) fn deeper_than(value: &Value, limit: u32) -> bool {
    match value {
        Value::Array(items) => limit == 0 || items.iter().any(|v| deeper_than(v, limit - 1)),
        Value::Object(map) => limit == 0 || map.values().any(|v| deeper_than(v, limit - 1)),
        _ => false,
    }
}

/// What one value takes on the host besides its strings: its slot.
pub(crate) const VALUE_HOST_BYTES: usize = std::mem::size_of::<Value>();
/// What one object member takes besides its key's bytes and its value: the key's `String`,
/// and the ordered map's hash and index.
pub(crate) const ENTRY_HOST_BYTES: usize = std::mem::size_of::<String>() + 16;

/// About how many bytes `value` takes on the host: each node's slot, each string's and key's
/// bytes, and a map entry's overhead. An estimate for budgets (it ignores allocator rounding and
/// spare capacity), walked without recursion.
pub(crate) fn host_bytes(value: &Value) -> usize {
    const NODE: usize = VALUE_HOST_BYTES;
    const ENTRY: usize = ENTRY_HOST_BYTES;
    let mut total = 0usize;
    let mut stack = vec![value];
    while let Some(v) = stack.pop() {
        total = total.saturating_add(NODE);
        match v {
            Value::String(s) => total = total.saturating_add(s.len()),
            Value::Array(items) => stack.extend(items),
            Value::Object(map) => {
                for (key, item) in map {
                    total = total.saturating_add(ENTRY + key.len());
                    stack.push(item);
                }
            }
            _ => {}
        }
    }
    total
}

/// Whether a number is lossless: finite (always, for `serde_json::Number`) and not negative zero.
#[inline]
pub fn is_lossless_number(n: &Number) -> bool {
    match n.as_f64() {
        Some(f) if !n.is_i64() && !n.is_u64() => {
            f.is_finite() && !(f == 0.0 && f.is_sign_negative())
        }
        _ => true,
    }
}

/// Whether a number is a JSON-Schema integer: finite, mathematically integral and not `-0`.
///
/// `1.0`, `1e2` and `1e300` are integers; `u64`/`i64` values always are.
#[inline]
pub fn is_integer(n: &Number) -> bool {
    if n.is_i64() || n.is_u64() {
        return true;
    }
    match n.as_f64() {
        Some(f) => f.is_finite() && f.fract() == 0.0 && !(f == 0.0 && f.is_sign_negative()),
        None => false,
    }
}

/// Whether a whole value is lossless JSON (no negative zero anywhere inside it).
///
/// Recursive for the first levels (no allocation for ordinary values), iterative below.
pub fn is_lossless(value: &Value) -> bool {
    lossless_within(value, 32)
}

fn lossless_within(value: &Value, depth: u32) -> bool {
    match value {
        Value::Number(n) => is_lossless_number(n),
        Value::Array(items) if depth > 0 => items.iter().all(|v| lossless_within(v, depth - 1)),
        Value::Object(map) if depth > 0 => map.values().all(|v| lossless_within(v, depth - 1)),
        Value::Array(_) | Value::Object(_) => {
            let mut stack: Vec<&Value> = vec![value];
            while let Some(v) = stack.pop() {
                match v {
                    Value::Number(n) if !is_lossless_number(n) => return false,
                    Value::Array(items) => stack.extend(items.iter()),
                    Value::Object(map) => stack.extend(map.values()),
                    _ => {}
                }
            }
            true
        }
        _ => true,
    }
}

/// An exact numeric view of a JSON number.
#[derive(Clone, Copy, Debug)]
enum Exact {
    Int(i128),
    Float(f64),
}

fn exact(n: &Number) -> Exact {
    if let Some(i) = n.as_i64() {
        Exact::Int(i128::from(i))
    } else if let Some(u) = n.as_u64() {
        Exact::Int(i128::from(u))
    } else {
        Exact::Float(n.as_f64().unwrap_or(f64::NAN))
    }
}

/// Compares an exact integer with a float, exactly (no rounding of the integer).
fn cmp_int_float(i: i128, f: f64) -> Option<Ordering> {
    if f.is_nan() {
        return None;
    }
    // |i| < 2^65 for any value a Number holds; floats beyond that are simply larger/smaller.
    const LIMIT: f64 = 3.6893488147419103e19; // 2^65
    if f >= LIMIT {
        return Some(Ordering::Less);
    }
    if f <= -LIMIT {
        return Some(Ordering::Greater);
    }
    let floor = f.floor();
    // `floor` is integral and within ±2^65, so the conversion is exact.
    let fi = floor as i128;
    match i.cmp(&fi) {
        Ordering::Equal if f > floor => Some(Ordering::Less),
        other => Some(other),
    }
}

/// Exact numeric comparison of two JSON numbers (`1` equals `1.0`; `2^53 + 1` is not `2^53`).
pub fn cmp_numbers(a: &Number, b: &Number) -> Option<Ordering> {
    match (exact(a), exact(b)) {
        (Exact::Int(x), Exact::Int(y)) => Some(x.cmp(&y)),
        (Exact::Float(x), Exact::Float(y)) => x.partial_cmp(&y),
        (Exact::Int(x), Exact::Float(y)) => cmp_int_float(x, y),
        (Exact::Float(x), Exact::Int(y)) => cmp_int_float(y, x).map(Ordering::reverse),
    }
}

/// Numeric equality of two JSON numbers.
#[inline]
pub fn numbers_equal(a: &Number, b: &Number) -> bool {
    cmp_numbers(a, b) == Some(Ordering::Equal)
}

/// Equality of two values that are not both arrays or both objects; `None` when they are.
#[inline]
fn scalar_equal(x: &Value, y: &Value) -> Option<bool> {
    Some(match (x, y) {
        (Value::Array(_), Value::Array(_)) | (Value::Object(_), Value::Object(_)) => return None,
        (Value::Null, Value::Null) => true,
        (Value::Bool(p), Value::Bool(q)) => p == q,
        (Value::String(p), Value::String(q)) => p == q,
        (Value::Number(p), Value::Number(q)) => numbers_equal(p, q),
        _ => false,
    })
}

/// Deep JSON equality with numeric comparison of numbers and order-insensitive objects
/// (the equality of `enum`, `const` and `uniqueItems`). Iterative; it allocates only when a
/// container holds another container (scalars and flat arrays or objects compare in place).
pub fn json_equal(a: &Value, b: &Value) -> bool {
    let mut stack: Vec<(&Value, &Value)> = Vec::new();
    let mut next = Some((a, b));
    while let Some((x, y)) = next.take().or_else(|| stack.pop()) {
        if let Some(equal) = scalar_equal(x, y) {
            if !equal {
                return false;
            }
            continue;
        }
        match (x, y) {
            (Value::Array(p), Value::Array(q)) if p.len() == q.len() => {
                for (pv, qv) in p.iter().zip(q) {
                    match scalar_equal(pv, qv) {
                        Some(true) => {}
                        Some(false) => return false,
                        None => stack.push((pv, qv)),
                    }
                }
            }
            (Value::Object(p), Value::Object(q)) if p.len() == q.len() => {
                for (k, pv) in p {
                    let Some(qv) = q.get(k) else { return false };
                    match scalar_equal(pv, qv) {
                        Some(true) => {}
                        Some(false) => return false,
                        None => stack.push((pv, qv)),
                    }
                }
            }
            _ => return false,
        }
    }
    true
}

/// The process's random hash keys: the hash below is keyed, so inputs cannot be crafted to
/// collide (a model controls the items `uniqueItems` compares).
fn hash_keys() -> &'static std::collections::hash_map::RandomState {
    static KEYS: std::sync::OnceLock<std::collections::hash_map::RandomState> =
        std::sync::OnceLock::new();
    KEYS.get_or_init(std::collections::hash_map::RandomState::new)
}

/// A hash consistent with [`json_equal`]: equal values hash equally. Keyed with a random
/// per-process key (SipHash), so colliding inputs cannot be crafted. Iterative.
pub(crate) fn json_hash(value: &Value) -> u64 {
    use std::hash::BuildHasher;
    /// A number's identity under numeric equality: integral values by their exact integer (so
    /// `1` and `1.0` agree), other floats by their bits.
    fn number_key(n: &Number) -> (u8, i128) {
        match exact(n) {
            Exact::Int(i) => (0, i),
            Exact::Float(f) if f.fract() == 0.0 && f.abs() < 1.8e19 => (0, f as i128),
            Exact::Float(f) => (1, i128::from(f.to_bits())),
        }
    }
    let keys = hash_keys();
    let leaf = |v: &Value| -> u64 {
        match v {
            Value::Null => keys.hash_one(0u8),
            Value::Bool(b) => keys.hash_one((1u8, *b)),
            Value::Number(n) => keys.hash_one((2u8, number_key(n))),
            Value::String(s) => keys.hash_one((3u8, s.as_str())),
            Value::Array(a) => keys.hash_one((4u8, a.len())),
            Value::Object(o) => keys.hash_one((5u8, o.len())),
        }
    };
    // Combine as a multiset of (position-or-key, leaf) hashes; positions make arrays ordered,
    // keys make objects order-insensitive.
    let mut total = 0u64;
    let mut stack: Vec<(&Value, u64)> = vec![(value, 0x9e37_79b9_7f4a_7c15)];
    while let Some((v, salt)) = stack.pop() {
        let h = keys.hash_one((leaf(v), salt));
        total = total.wrapping_add(h);
        match v {
            Value::Array(items) => {
                for (i, item) in items.iter().enumerate() {
                    stack.push((item, h ^ (i as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15)));
                }
            }
            Value::Object(map) => {
                for (k, item) in map {
                    stack.push((item, h ^ keys.hash_one(k.as_str())));
                }
            }
            _ => {}
        }
    }
    total
}

/// Drops a value without recursion, however deeply it is nested.
///
/// `serde_json::Value`'s own `Drop` recurses once per nesting level, so freeing a value nested
/// tens of thousands deep overflows a small stack. Use this for values of untrusted depth.
pub fn drop_deep(value: Value) {
    let mut stack = vec![value];
    while let Some(v) = stack.pop() {
        match v {
            Value::Array(items) => stack.extend(items),
            Value::Object(map) => stack.extend(map.into_iter().map(|(_, v)| v)),
            _ => {}
        }
    }
}

/// Decodes a typed value from JSON with the validator's number semantics.
///
/// The subset calls `1.0` and `1e2` integers (spec §0.4), but serde refuses to deserialize the
/// float token `2.0` into a `u32`. This first tries `T::deserialize(value)` as is (the common
/// case, no extra work); only if that fails and the value holds integral floats does it retry on
/// a copy where each integral float that fits `i64`/`u64` is an integer. So a value that passes
/// a bridged schema always decodes.
///
/// Depth: `T::deserialize` is serde's and recurses once per level where `T` holds a
/// `serde_json::Value` (or a recursive type), and so does dropping such a `T`. So a value nested
/// deeper than [`MAX_DECODE_DEPTH`] (serde_json's own parser
/// limit) is refused before serde sees it, with an error that says so: a tool's output or a
/// remote server's reply may be of any depth.
///
/// ```
/// use serde_json::json;
///
/// let n: u32 = dsh_tools::json::decode(&json!(2.0)).unwrap();
/// assert_eq!(n, 2);
/// let v: Vec<u8> = dsh_tools::json::decode(&json!([1e2, 3])).unwrap();
/// assert_eq!(v, [100, 3]);
/// assert!(dsh_tools::json::decode::<u32>(&json!(2.5)).is_err());
/// ```
pub fn decode<T: serde::de::DeserializeOwned>(value: &Value) -> Result<T, serde_json::Error> {
    if deeper_than(value, MAX_DECODE_DEPTH) {
        return Err(serde::de::Error::custom(format!(
            "the value nests deeper than {MAX_DECODE_DEPTH} levels"
        )));
    }
    decode_unbounded(value)
}

/// [`decode`] without the depth check, for callers that checked depth already (the typed
/// argument path checks it where the schema admits any value, and only there can `T` recurse).
pub(crate) fn decode_unbounded<T: serde::de::DeserializeOwned>(
    value: &Value,
) -> Result<T, serde_json::Error> {
    match T::deserialize(value) {
        Ok(t) => Ok(t),
        Err(first) => match integers_normalized(value) {
            Some(normal) => {
                let result = T::deserialize(&normal).map_err(|_| first);
                drop_deep(normal);
                result
            }
            None => Err(first),
        },
    }
}

/// An integral float as an exact integer number, when it fits `i64` or `u64`.
fn integral(n: &Number) -> Option<Number> {
    if n.is_i64() || n.is_u64() {
        return None;
    }
    let f = n.as_f64()?;
    if f.fract() != 0.0 || !f.is_finite() || (f == 0.0 && f.is_sign_negative()) {
        return None;
    }
    if (i64::MIN as f64..-(i64::MIN as f64)).contains(&f) {
        Some(Number::from(f as i64))
    } else if (0.0..u64::MAX as f64).contains(&f) {
        Some(Number::from(f as u64))
    } else {
        None
    }
}

/// A copy of `value` with integral floats as integers; `None` when there are none. Iterative.
fn integers_normalized(value: &Value) -> Option<Value> {
    let mut any = false;
    let mut scan = vec![value];
    while let Some(v) = scan.pop() {
        match v {
            Value::Number(n) if integral(n).is_some() => {
                any = true;
                break;
            }
            Value::Array(items) => scan.extend(items),
            Value::Object(map) => scan.extend(map.values()),
            _ => {}
        }
    }
    if !any {
        return None;
    }
    Some(rebuild(
        value,
        |n| integral(n).unwrap_or_else(|| n.clone()),
        usize::MAX,
    ))
}

/// A deep copy of `value`, without recursion (`Value::clone` recurses once per level).
pub fn clone_deep(value: &Value) -> Value {
    rebuild(value, Number::clone, usize::MAX)
}

/// A copy of `value` in which every array or object nested deeper than `max_depth` levels is
/// replaced by the string `"…"`. Iterative; the copy's own depth is at most `max_depth + 1`, so
/// it can be cloned, dropped and serialized by recursive code (serde, a UI) on any stack.
///
/// ```
/// use serde_json::json;
///
/// let v = json!({"a": [[1, [2]]]});
/// assert_eq!(dsh_tools::json::clone_truncated(&v, 2), json!({"a": ["…"]}));
/// assert_eq!(dsh_tools::json::clone_truncated(&v, 10), v);
/// ```
pub fn clone_truncated(value: &Value, max_depth: usize) -> Value {
    rebuild(value, Number::clone, max_depth)
}

/// Copies `value` bottom-up with `number` applied to every number, and every array or object
/// at depth `max_depth` replaced by `"…"`. Iterative: `Enter` pushes a node's children, `Leave`
/// assembles the node from what its children built.
fn rebuild(value: &Value, number: impl Fn(&Number) -> Number, max_depth: usize) -> Value {
    enum Step<'a> {
        Enter(&'a Value, usize),
        Leave(&'a Value),
    }
    let mut steps = vec![Step::Enter(value, 0)];
    let mut built: Vec<Value> = Vec::new();
    while let Some(step) = steps.pop() {
        match step {
            Step::Enter(Value::Array(_) | Value::Object(_), depth) if depth >= max_depth => {
                built.push(Value::String("…".to_owned()));
            }
            Step::Enter(v @ (Value::Array(_) | Value::Object(_)), depth) => {
                steps.push(Step::Leave(v));
                let child = |c| Step::Enter(c, depth + 1);
                match v {
                    Value::Array(items) => steps.extend(items.iter().rev().map(child)),
                    Value::Object(map) => steps.extend(map.values().rev().map(child)),
                    _ => {}
                }
            }
            Step::Enter(Value::Number(n), _) => built.push(Value::Number(number(n))),
            Step::Enter(leaf, _) => built.push(leaf.clone()),
            Step::Leave(Value::Array(items)) => {
                let children = built.split_off(built.len() - items.len());
                built.push(Value::Array(children));
            }
            Step::Leave(Value::Object(map)) => {
                let children = built.split_off(built.len() - map.len());
                built.push(Value::Object(map.keys().cloned().zip(children).collect()));
            }
            Step::Leave(_) => {}
        }
    }
    built.pop().unwrap_or(Value::Null)
}

/// Renders a value as compact JSON text without recursion.
///
/// The text is byte for byte what `serde_json::to_string` writes, for values of any depth.
/// Used for messages (`must be one of [...]`), for a result's text block, and by the CLI for
/// output of any depth.
pub fn to_compact_string(value: &Value) -> String {
    // A value of ordinary depth goes through serde_json itself (recursive, and the fastest);
    // only a deep one needs the walk below.
    if !deeper_than(value, 64)
        && let Ok(text) = serde_json::to_string(value)
    {
        return text;
    }
    compact_walk(value)
}

/// [`to_compact_string`] for values of any depth: the same text, written without recursion.
fn compact_walk(value: &Value) -> String {
    enum Step<'a> {
        Value(&'a Value),
        Text(&'static str),
        Key(&'a str),
    }
    let mut out = String::with_capacity(64);
    let mut stack = Vec::with_capacity(16);
    stack.push(Step::Value(value));
    while let Some(step) = stack.pop() {
        match step {
            Step::Text(t) => out.push_str(t),
            Step::Key(k) => {
                push_json_string(&mut out, k);
                out.push(':');
            }
            Step::Value(v) => match v {
                Value::Array(items) => {
                    out.push('[');
                    stack.push(Step::Text("]"));
                    for (i, item) in items.iter().enumerate().rev() {
                        stack.push(Step::Value(item));
                        if i > 0 {
                            stack.push(Step::Text(","));
                        }
                    }
                }
                Value::Object(map) => {
                    out.push('{');
                    stack.push(Step::Text("}"));
                    for (i, (k, item)) in map.iter().enumerate().rev() {
                        stack.push(Step::Value(item));
                        stack.push(Step::Key(k));
                        if i > 0 {
                            stack.push(Step::Text(","));
                        }
                    }
                }
                Value::String(s) => push_json_string(&mut out, s),
                Value::Number(n) => push_number(&mut out, n),
                Value::Bool(true) => out.push_str("true"),
                Value::Bool(false) => out.push_str("false"),
                Value::Null => out.push_str("null"),
            },
        }
    }
    out
}

/// Appends a number as serde_json writes it (its `Display` is the serializer's text: `itoa`
/// and `ryu`, or the kept digits under `arbitrary_precision`).
fn push_number(out: &mut String, n: &Number) {
    use std::fmt::Write;
    // Writing to a `String` cannot fail.
    let _ = write!(out, "{n}");
}

/// Appends `s` as a JSON string literal, escaped as serde_json escapes it: `"` and `\\`, the
/// short escapes `\b \f \n \r \t`, other control characters as `\u00xx` (lowercase hex), and
/// everything else as it is.
pub(crate) fn push_json_string(out: &mut String, s: &str) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    out.reserve(s.len() + 2);
    out.push('"');
    let mut start = 0;
    for (i, &b) in s.as_bytes().iter().enumerate() {
        let short = match b {
            b'"' => "\\\"",
            b'\\' => "\\\\",
            b'\n' => "\\n",
            b'\r' => "\\r",
            b'\t' => "\\t",
            0x08 => "\\b",
            0x0c => "\\f",
            0..=0x1f => "",
            _ => continue,
        };
        // Every escaped byte is ASCII, so `i` is a character boundary.
        out.push_str(&s[start..i]);
        start = i + 1;
        if short.is_empty() {
            out.push_str("\\u00");
            out.push(char::from(HEX[usize::from(b >> 4)]));
            out.push(char::from(HEX[usize::from(b & 0xf)]));
        } else {
            out.push_str(short);
        }
    }
    out.push_str(&s[start..]);
    out.push('"');
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn num(text: &str) -> Number {
        match serde_json::from_str::<Value>(text).unwrap() {
            Value::Number(n) => n,
            other => panic!("not a number: {other}"),
        }
    }

    #[test]
    fn negative_zero_is_not_lossless() {
        assert!(!is_lossless_number(&num("-0")));
        assert!(!is_lossless_number(&num("-0.0")));
        assert!(is_lossless_number(&num("0")));
        assert!(is_lossless_number(&num("0.0")));
        assert!(!is_lossless(&json!({"a": [1, {"b": -0.0}]})));
        assert!(is_lossless(&json!({"a": [1, {"b": 0.0}]})));
    }

    #[test]
    fn integers_are_integral_doubles() {
        for ok in ["1", "1.0", "1e2", "1e300", "-5", "18446744073709551615"] {
            assert!(is_integer(&num(ok)), "{ok}");
        }
        for bad in ["1.5", "-0", "-0.0", "1e-3"] {
            assert!(!is_integer(&num(bad)), "{bad}");
        }
    }

    #[test]
    fn numeric_equality_is_exact() {
        assert!(numbers_equal(&num("1"), &num("1.0")));
        assert!(numbers_equal(&num("100"), &num("1e2")));
        assert!(!numbers_equal(
            &num("9007199254740993"),
            &num("9007199254740992.0")
        ));
        assert!(numbers_equal(
            &num("9007199254740992"),
            &num("9007199254740992.0")
        ));
        assert_eq!(cmp_numbers(&num("-1"), &num("-0.5")), Some(Ordering::Less));
        assert_eq!(cmp_numbers(&num("2.5"), &num("2")), Some(Ordering::Greater));
        assert_eq!(
            cmp_numbers(&num("18446744073709551615"), &num("1e30")),
            Some(Ordering::Less)
        );
        assert_eq!(
            cmp_numbers(&num("-9223372036854775808"), &num("-1e30")),
            Some(Ordering::Greater)
        );
    }

    #[test]
    fn deep_equality_and_hash_agree() {
        let a = json!({"x": [1, 2.0, {"y": "z"}], "w": null});
        let b = json!({"w": null, "x": [1.0, 2, {"y": "z"}]});
        assert!(json_equal(&a, &b));
        assert_eq!(json_hash(&a), json_hash(&b));
        assert!(!json_equal(&json!([1, 2]), &json!([2, 1])));
        assert_ne!(json_hash(&json!([1, 2])), json_hash(&json!([2, 1])));
        assert!(!json_equal(&json!({"a": 1}), &json!({"b": 1})));
    }

    #[test]
    fn decode_accepts_integral_floats_only_where_needed() {
        #[derive(serde::Deserialize, Debug, PartialEq)]
        struct Args {
            n: u8,
            xs: Vec<i64>,
            f: f64,
        }
        let v = json!({"n": 2.0, "xs": [1e2, -3.0, 4], "f": 1.5});
        assert_eq!(
            decode::<Args>(&v).unwrap(),
            Args {
                n: 2,
                xs: vec![100, -3, 4],
                f: 1.5
            }
        );
        assert!(decode::<Args>(&json!({"n": 2.5, "xs": [], "f": 1})).is_err());
        assert!(decode::<Args>(&json!({"n": 256.0, "xs": [], "f": 1})).is_err());
        let big: u64 = decode(&json!(1.8e19)).unwrap();
        assert_eq!(big, 18_000_000_000_000_000_000);
        assert_eq!(integers_normalized(&json!({"a": [1, "x"]})), None);
    }

    #[test]
    fn compact_string_matches_serde_json() {
        let v = json!({"a": [1, 2.5, "x\"y", null, true, {}], "b": {"c": []}});
        assert_eq!(to_compact_string(&v), serde_json::to_string(&v).unwrap());
        // Every control character, the two that must be escaped, and text that must not be.
        let all: String = (0u8..0x80).map(char::from).collect();
        let v = json!({all.clone(): [all, "é\u{2028}😀", -0.0, 1e300, -7, u64::MAX, 0.1]});
        assert_eq!(compact_walk(&v), serde_json::to_string(&v).unwrap());
    }

    fn arb_json() -> impl proptest::strategy::Strategy<Value = Value> {
        use proptest::prelude::*;
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<i64>().prop_map(|n| json!(n)),
            any::<u64>().prop_map(|n| json!(n)),
            any::<f64>().prop_map(|f| json!(f)),
            any::<String>().prop_map(Value::String),
        ];
        leaf.prop_recursive(4, 32, 4, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
                prop::collection::btree_map(any::<String>(), inner, 0..4)
                    .prop_map(|m| Value::Object(m.into_iter().collect())),
            ]
        })
    }

    proptest::proptest! {
        #[test]
        fn compact_string_is_serde_jsons_text(v in arb_json()) {
            let serde = serde_json::to_string(&v).unwrap();
            proptest::prop_assert_eq!(&compact_walk(&v), &serde);
            proptest::prop_assert_eq!(&to_compact_string(&v), &serde);
        }
    }

    #[test]
    fn deep_values_are_walked_and_dropped_without_recursion() {
        let mut v = json!(0.0);
        for _ in 0..200_000 {
            v = Value::Array(vec![v]);
        }
        let handle = std::thread::Builder::new()
            .stack_size(256 * 1024)
            .spawn(move || {
                assert!(is_lossless(&v));
                assert!(json_equal(&v, &v));
                let _ = json_hash(&v);
                // No integral float inside: nothing to rebuild, and the retry keeps the error.
                assert!(decode::<u8>(&v).is_err());
                let mut w = json!(1.0);
                for _ in 0..200_000 {
                    w = Value::Array(vec![w]);
                }
                let normal = integers_normalized(&w).unwrap();
                assert_eq!(to_compact_string(&normal).len(), 400_001);
                drop_deep(normal);
                drop_deep(w);
                assert_eq!(to_compact_string(&v).len(), 400_003);
                drop_deep(v);
            })
            .unwrap();
        handle.join().unwrap();
    }
}

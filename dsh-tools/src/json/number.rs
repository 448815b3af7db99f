//! Lossless numbers, numeric order and equality (`1` equals `1.0`, exact integers compared
//! exactly), and the hash consistent with that equality.

use serde_json::{Number, Value};
use std::cmp::Ordering;

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

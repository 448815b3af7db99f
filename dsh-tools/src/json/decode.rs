//! Typed decoding with the validator's number semantics (`2.0` decodes as an integer).

use super::walk::{deeper_than, drop_deep, rebuild};
use serde_json::{Number, Value};

/// How deep typed arguments may nest where the schema admits any value (a `serde_json::Value`
/// field), and how deep [`decode`] reads: serde_json's own parser limit. Decoding, and the
/// author's type dropping, recurse once per level; deeper arguments are `INVALID_ARGS`.
/// Re-exported as `tool::MAX_DECODE_DEPTH`.
pub const MAX_DECODE_DEPTH: u32 = 128;

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
pub(super) fn integers_normalized(value: &Value) -> Option<Value> {
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

//! [`FastCheck`] for the standard types: `bool`, `String`, `PathBuf`, the integers up to 64
//! bits (decided exactly as the interpreter decides their bounds), `f64`, `Option`, `Box`, `Vec`
//! and maps with `String` keys.

use super::check::FastCheck;
use crate::json::{cmp_numbers, is_integer, is_lossless_number};
use serde_json::{Number, Value, json};
use std::cmp::Ordering;

/// Whether `v` is an integer in `lo..=hi`, exactly as the interpreter decides `{"type":
/// "integer", "minimum": lo, "maximum": hi}` (`3.0` is the integer 3).
#[inline]
fn int_in(v: &Value, lo: i128, hi: i128) -> bool {
    let Value::Number(n) = v else {
        return false;
    };
    if let Some(i) = n.as_i64() {
        return lo <= i128::from(i) && i128::from(i) <= hi;
    }
    if let Some(u) = n.as_u64() {
        return i128::from(u) <= hi;
    }
    float_int_in(n, lo, hi)
}

#[inline(never)]
fn float_int_in(n: &Number, lo: i128, hi: i128) -> bool {
    let bound = |b: i128| match i64::try_from(b) {
        Ok(i) => Number::from(i),
        Err(_) => Number::from(u64::try_from(b).unwrap_or(u64::MAX)),
    };
    is_integer(n)
        && cmp_numbers(n, &bound(lo)) != Some(Ordering::Less)
        && cmp_numbers(n, &bound(hi)) != Some(Ordering::Greater)
}

// ---- the standard types ----

macro_rules! integers {
    ($($ty:ty),*) => {$(
        impl FastCheck for $ty {
            fn fast_shape(_: bool) -> Result<Value, String> {
                Ok(json!({"type": "integer", "minimum": <$ty>::MIN, "maximum": <$ty>::MAX}))
            }
            #[inline]
            fn fast_check(v: &Value, _: bool) -> bool {
                int_in(v, <$ty>::MIN as i128, <$ty>::MAX as i128)
            }
        }
    )*};
}
integers!(i8, i16, i32, i64, isize, u8, u16, u32, u64, usize);

impl FastCheck for bool {
    fn fast_shape(_: bool) -> Result<Value, String> {
        Ok(json!({"type": "boolean"}))
    }
    #[inline]
    fn fast_check(v: &Value, _: bool) -> bool {
        v.is_boolean()
    }
}

impl FastCheck for String {
    fn fast_shape(_: bool) -> Result<Value, String> {
        Ok(json!({"type": "string"}))
    }
    #[inline]
    fn fast_check(v: &Value, _: bool) -> bool {
        v.is_string()
    }
}

impl FastCheck for std::path::PathBuf {
    fn fast_shape(c: bool) -> Result<Value, String> {
        String::fast_shape(c)
    }
    #[inline]
    fn fast_check(v: &Value, c: bool) -> bool {
        String::fast_check(v, c)
    }
}

impl FastCheck for f64 {
    fn fast_shape(_: bool) -> Result<Value, String> {
        Ok(json!({"type": "number"}))
    }
    #[inline]
    fn fast_check(v: &Value, _: bool) -> bool {
        matches!(v, Value::Number(n) if is_lossless_number(n))
    }
}

impl<T: FastCheck> FastCheck for Option<T> {
    const OPTIONAL: bool = true;
    fn fast_shape(closed: bool) -> Result<Value, String> {
        if T::OPTIONAL {
            // `Option<Option<T>>`: the bridge emits one `oneOf [T, null]`.
            return T::fast_shape(closed);
        }
        Ok(json!({"oneOf": [T::fast_shape(closed)?, {"type": "null"}]}))
    }
    #[inline]
    fn fast_check(v: &Value, closed: bool) -> bool {
        v.is_null() || T::fast_check(v, closed)
    }
}

impl<T: FastCheck> FastCheck for Box<T> {
    const OPTIONAL: bool = T::OPTIONAL;
    fn fast_shape(closed: bool) -> Result<Value, String> {
        T::fast_shape(closed)
    }
    #[inline]
    fn fast_check(v: &Value, closed: bool) -> bool {
        T::fast_check(v, closed)
    }
}

impl<T: FastCheck> FastCheck for Vec<T> {
    fn fast_shape(_: bool) -> Result<Value, String> {
        Ok(json!({"type": "array", "items": T::fast_shape(false)?}))
    }
    #[inline]
    fn fast_check(v: &Value, _: bool) -> bool {
        match v {
            Value::Array(items) => items.iter().all(|x| T::fast_check(x, false)),
            _ => false,
        }
    }
}

macro_rules! maps {
    ($($map:ident $(, $s:ident)?);*) => {$(
        impl<T: FastCheck $(, $s)?> FastCheck for std::collections::$map<String, T $(, $s)?> {
            fn fast_shape(_: bool) -> Result<Value, String> {
                Ok(json!({"type": "object", "additionalProperties": T::fast_shape(false)?}))
            }
            #[inline]
            fn fast_check(v: &Value, _: bool) -> bool {
                match v {
                    Value::Object(m) => m.values().all(|x| T::fast_check(x, false)),
                    _ => false,
                }
            }
        }
    )*};
}
maps!(BTreeMap; HashMap, S);

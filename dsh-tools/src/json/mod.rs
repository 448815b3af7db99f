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
//!
//! The rooms: `number` (lossless numbers, numeric order and equality, the equality-consistent
//! hash), `walk` (iterative depth checks, drops, copies and sizes), `decode` (typed decoding
//! with the validator's number semantics), `text` (compact JSON text of any depth).

mod decode;
mod number;
mod text;
mod walk;

pub(crate) use decode::decode_unbounded;
pub use decode::{MAX_DECODE_DEPTH, decode};
pub(crate) use number::json_hash;
pub use number::{
    cmp_numbers, is_integer, is_lossless, is_lossless_number, json_equal, numbers_equal,
};
pub use text::to_compact_string;
pub(crate) use text::{compact_prefix, push_json_string};
#[cfg(feature = "quickjs")]
pub(crate) use walk::{ENTRY_HOST_BYTES, VALUE_HOST_BYTES};
pub use walk::{clone_deep, clone_truncated, drop_deep};
pub(crate) use walk::{deeper_than, free, host_bytes};

#[cfg(test)]
mod tests {
    use super::decode::integers_normalized;
    use super::text::compact_walk;
    use super::*;
    use serde_json::json;
    use serde_json::{Number, Value};
    use std::cmp::Ordering;

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

    /// A value nested `depth` arrays deep around `leaf`, built without recursion.
    fn nested(depth: usize, leaf: Value) -> Value {
        (0..depth).fold(leaf, |v, _| Value::Array(vec![v]))
    }

    #[test]
    fn deep_copies_and_sizes_hold_at_every_depth() {
        for v in [
            json!("abc"),
            json!(-0.5),
            json!(null),
            json!({"a": [1, {"b": "c"}], "d": true}),
            nested(64, json!("x")),
            nested(65, json!({"k": [1, 2]})),
        ] {
            assert_eq!(clone_deep(&v), v);
            assert_eq!(clone_truncated(&v, usize::MAX), v);
        }
        let node = walk::VALUE_HOST_BYTES;
        let entry = walk::ENTRY_HOST_BYTES;
        assert_eq!(host_bytes(&json!(null)), node);
        assert_eq!(host_bytes(&json!(7)), node);
        assert_eq!(host_bytes(&json!("abc")), node + 3);
        assert_eq!(host_bytes(&json!(["abc"])), 2 * node + 3);
        assert_eq!(host_bytes(&json!({"ab": "c"})), 2 * node + entry + 2 + 1);
        // Deep enough to overflow a test thread's stack were it copied (or dropped) by
        // recursion: both values are freed before anything is asserted of them.
        let deep = nested(100_000, json!("x"));
        let copy = clone_deep(&deep);
        let (mut levels, mut at) = (0, &copy);
        while let Value::Array(items) = at {
            levels += 1;
            at = &items[0];
        }
        let leaf = at.clone();
        let bytes = host_bytes(&deep);
        drop_deep(copy);
        drop_deep(deep);
        assert_eq!((levels, leaf), (100_000, json!("x")));
        assert_eq!(bytes, 100_001 * node + 1);
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

    #[test]
    fn compact_prefix_is_the_text_or_its_marked_cut() {
        use super::text::compact_prefix;
        let v = json!({"a": [1, "two", {"b": null}], "é": true});
        let whole = to_compact_string(&v);
        assert_eq!(compact_prefix(&v, whole.len()), whole);
        assert_eq!(compact_prefix(&v, 5), "{\"a\":…");
        for limit in 1..whole.len() {
            let cut = compact_prefix(&v, limit);
            let kept = cut.strip_suffix('…').expect("a cut text is marked");
            assert!(
                kept.len() <= limit && whole.starts_with(kept),
                "{limit}: {cut}"
            );
        }
        // Bounded by the limit, not the value: deep, wide and long values.
        let mut deep = json!(1);
        for _ in 0..100_000 {
            deep = Value::Array(vec![deep]);
        }
        assert_eq!(compact_prefix(&deep, 3), "[[[…");
        drop_deep(deep);
        let wide = Value::Array(vec![json!(0); 1_000_000]);
        assert_eq!(compact_prefix(&wide, 4), "[0,0…");
        let long = Value::String("ü".repeat(1_000_000));
        assert_eq!(compact_prefix(&long, 4), "\"ü…");
    }
}

//! The schemars bridge over a corpus of argument types. For each type, property tests check that
//! (a) every serialized value validates against the bridged schema, and (b) every value the
//! schema accepts decodes into the type. Candidates for (b) are serialized instances with random
//! mutations, and random JSON generated near the schema.
//!
//! What cannot hold is listed once, in [`EXCEPTIONS`], with its reason and a check of the
//! bridge's actual behaviour.

use dsh_tools::FastCheck;
use dsh_tools::json;
use dsh_tools::schema::CompiledSchema;
use dsh_tools::schema::bridge::{self, BridgeError};
use dsh_tools::schema::fast::ArgsValidator;
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use schemars::JsonSchema;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value, json};
use std::cell::Cell;
use std::collections::BTreeSet;
use std::fmt::Debug;

#[path = "../common/corpus.rs"]
mod corpus;
use crate::strict;
use corpus::*;

/// A type of the corpus: serializable, deserializable, with a schema and random values.
pub(crate) trait Case:
    Serialize + DeserializeOwned + JsonSchema + FastCheck + Debug
{
    fn strategy() -> BoxedStrategy<Self>;
}

// ---- the exceptions ----

/// One type or property that genuinely cannot hold, why, and a check of what the bridge does.
struct Exception {
    name: &'static str,
    reason: &'static str,
    check: fn(),
}

const EXCEPTIONS: &[Exception] = &[
    Exception {
        name: "recursive type",
        reason: "the subset has no $ref, and inlining a type that contains itself never ends",
        check: || assert_error::<Recursive>("recursive type \"Recursive\""),
    },
    Exception {
        name: "untagged enum with overlapping variants",
        reason: "the subset only has oneOf (exactly one branch); a value both variants accept would be rejected",
        check: || assert_error::<Overlapping>("anyOf branches 0 and 1 may both match one value"),
    },
    Exception {
        name: "tuples (tuple structs, tuple variants, (A, B))",
        reason: "schemars describes them with prefixItems, which the subset lacks",
        check: || {
            assert_error::<TupleStruct>("tuples (prefixItems");
            assert_error::<TupleVariant>("tuples (prefixItems");
        },
    },
    Exception {
        name: "maps with non-String keys",
        reason: "schemars describes their keys with patternProperties, which the subset lacks",
        check: || assert_error::<IntKeys>("patternProperties is not supported"),
    },
    Exception {
        name: "string formats (Ipv4Addr, ...) and NonZeroI*",
        reason: "the subset cannot check `format` or `not`; a plain string/integer schema would accept values the type rejects",
        check: || {
            assert_error::<Formatted>("format \"ipv4\" cannot be checked");
            assert_error::<NonZero>("`not` is not supported");
        },
    },
    Exception {
        name: "(a) non-finite and negative-zero floats",
        reason: "serde_json serializes NaN and ±inf as null and -0.0 as -0, which is not lossless JSON (spec §0.2/§0.3); the float strategies avoid them",
        check: || {
            let schema = compiled::<Floats>();
            for (a, b) in [
                (f32::NAN, 0.0),
                (0.0, f64::INFINITY),
                (-0.0, 1.0),
                (1.0, -0.0),
            ] {
                let v = serde_json::to_value(Floats { a, b }).unwrap();
                assert!(!schema.is_valid(&v), "{v}");
            }
        },
    },
    Exception {
        name: "(b) integral floats at integer positions, with plain serde_json",
        reason: "`1.0` and `1e2` are integers to the validator (spec §0.4) but serde's integer types reject JSON floats; dsh_tools::json::decode, which the property uses, reads them as integers",
        check: || {
            let schema = compiled::<Ints>();
            let mut v = serde_json::to_value(Ints::default()).unwrap();
            v["a"] = json!(1.0);
            v["d"] = json!(1e19);
            assert!(schema.is_valid(&v));
            assert!(serde_json::from_value::<Ints>(v.clone()).is_err());
            assert!(json::decode::<Ints>(&v).is_ok());
        },
    },
    Exception {
        name: "u128 / i128 beyond i64::MIN..=u64::MAX",
        reason: "serde_json::Value cannot hold such numbers (without arbitrary_precision), so the bridge clamps the bounds to what it can hold; larger values cannot even be serialized",
        check: || {
            let schema = bridge::schema_for::<u128>().unwrap();
            assert_eq!(
                schema,
                json!({"type": "integer", "minimum": 0, "maximum": u64::MAX})
            );
            assert!(serde_json::to_value(u128::MAX).is_err());
            let schema = bridge::schema_for::<i128>().unwrap();
            assert_eq!(
                schema,
                json!({"type": "integer", "minimum": i64::MIN, "maximum": u64::MAX})
            );
        },
    },
    Exception {
        name: "(b) a flattened externally tagged enum in an open struct",
        reason: "each variant's branch is an open object, and the subset cannot forbid another variant's tag key, so {\"Go\": 0, \"Turn\": null, \"id\": 0} matches exactly one branch (Go) while serde tries the Turn key and fails; (a) still holds: every serialized value validates",
        check: || {
            let schema = compiled::<FlattenExternal>();
            for value in [
                FlattenExternal::go(1, 7),
                FlattenExternal::halt(2),
                FlattenExternal::turn(3, -90),
            ] {
                let v = serde_json::to_value(&value).unwrap();
                assert!(schema.is_valid(&v), "{v}");
                assert!(json::decode::<FlattenExternal>(&v).is_ok());
            }
            let v = json!({"Turn": null, "id": 0, "Go": 0});
            assert!(schema.is_valid(&v));
            assert!(json::decode::<FlattenExternal>(&v).is_err());
        },
    },
    Exception {
        name: "an internally tagged enum that looks adjacently tagged",
        reason: "every struct variant has exactly one field and another variant wraps a serde_json::Value: its schema is a unit variant's, the shape is adjacent tagging's, and the bridge closes it, so the Value's own keys are refused",
        check: || {
            let schema = compiled::<LooksAdjacent>();
            let v = serde_json::to_value(LooksAdjacent::Json(json!({"a": 1}))).unwrap();
            assert_eq!(v, json!({"kind": "Json", "a": 1}));
            assert!(!schema.is_valid(&v));
            assert!(schema.is_valid(&json!({"kind": "Json"})));
        },
    },
];

#[derive(serde::Serialize, serde::Deserialize, JsonSchema)]
#[serde(tag = "kind")]
enum LooksAdjacent {
    Point { x: i32 },
    Json(serde_json::Value),
}

#[test]
fn exceptions_behave_as_documented() {
    for e in EXCEPTIONS {
        println!("exception: {}: {}", e.name, e.reason);
        (e.check)();
    }
}

#[test]
fn a_tagged_unit_variant_accepts_only_its_tag() {
    // Adjacently tagged: serde rejects content beside a unit variant, so must the schema.
    let adjacent = compiled::<AdjacentUnit>();
    assert!(!adjacent.is_valid(&json!({"t": "Off", "c": 5})));
    assert!(serde_json::from_value::<AdjacentUnit>(json!({"t": "Off", "c": 5})).is_err());
    assert!(adjacent.is_valid(&json!({"t": "Off"})));
    assert!(adjacent.is_valid(&json!({"t": "On", "c": 5})));
    // `Internal`'s one struct variant has one field, so it reads as adjacent tagging (see the
    // exceptions): the unit variant is closed, the newtype variant keeps its struct's fields (its
    // branch takes them from `$ref`), and a flattened enum keeps its siblings.
    let internal = compiled::<Internal>();
    assert!(!internal.is_valid(&json!({"type": "Stop", "at": 1})));
    assert!(internal.is_valid(&json!({"type": "Stop"})));
    let wrapped = json!({"type": "Wrap", "id": 7, "label": "x"});
    assert!(serde_json::from_value::<Internal>(wrapped.clone()).is_ok());
    assert!(internal.is_valid(&wrapped));
    let flattened = json!({"id": 1, "action": "Stop"});
    assert!(serde_json::from_value::<FlattenInternal>(flattened.clone()).is_ok());
    assert!(compiled::<FlattenInternal>().is_valid(&flattened));
}

fn assert_error<T: JsonSchema>(needle: &str) {
    let err: BridgeError = bridge::schema_for::<T>().expect_err(std::any::type_name::<T>());
    assert!(err.to_string().contains(needle), "{err}");
}

fn compiled<T: JsonSchema>() -> CompiledSchema {
    let schema =
        bridge::schema_for::<T>().unwrap_or_else(|e| panic!("{}: {e}", std::any::type_name::<T>()));
    CompiledSchema::compile(&schema).expect("the bridge's output compiles")
}

// ---- the properties ----

const SERIALIZED_CASES: u32 = 200;
const CANDIDATE_CASES: u32 = 600;

fn runner(cases: u32) -> TestRunner {
    TestRunner::new(Config {
        cases,
        failure_persistence: None,
        ..Config::default()
    })
}

/// Checks (a) and (b) for `T`, with the schema from [`bridge::schema_for`] (subschemas inlined by
/// schemars) and from schemars' default settings (`$defs` and `$ref`, inlined by the bridge).
fn check<T: Case>() {
    let name = std::any::type_name::<T>();
    let inlined = bridge::schema_for::<T>().unwrap_or_else(|e| panic!("{name}: {e}"));
    let referenced =
        bridge::from_schemars(&schemars::schema_for!(T)).unwrap_or_else(|e| panic!("{name}: {e}"));
    check_schema::<T>(&inlined);
    check_schema::<T>(&referenced);
    // The tool layer's arguments schema (the root closed) keeps (a) and (b).
    let args = bridge::schema_for_args::<T>(false).unwrap_or_else(|e| panic!("{name}: {e}"));
    check_schema::<T>(&args);
    // (c) The output direction: every serialized value validates against the *serialize*
    // contract's schema, the one a tool's output is checked with.
    let output =
        bridge::schema_for_serialize::<T>().unwrap_or_else(|e| panic!("{name} (serialize): {e}"));
    serialized_values_validate::<T>(&output, "(c)");
}

/// (d) The validator `#[derive(FastCheck)]` generated decides every candidate exactly as the
/// interpreter does, in both root modes, wherever registration lets it stand in; `Err` says why
/// it does not (the same reason in both modes).
fn check_generated<T: Case>() -> Result<(), String> {
    let name = std::any::type_name::<T>();
    let mut outcome = Vec::new();
    for allow_unknown in [false, true] {
        let validator =
            ArgsValidator::of::<T>(allow_unknown).unwrap_or_else(|e| panic!("{name}: {e}"));
        if let Err(why) = validator.fast_path() {
            outcome.push(Err(why.to_owned()));
            continue;
        }
        outcome.push(Ok(()));
        let schema = bridge::schema_for_args::<T>(allow_unknown).expect("bridges");
        let pool = names(&schema);
        let serialized = T::strategy().prop_map(|x| serde_json::to_value(&x).expect("serializes"));
        let mutated = (T::strategy(), mutations(pool.clone()))
            .prop_map(|(x, ops)| mutate(serde_json::to_value(&x).expect("serializes"), &ops));
        let candidates = prop_oneof![serialized, mutated, near(&schema, &pool)];
        let (valid, tried) = (Cell::new(0u32), Cell::new(0u32));
        runner(CANDIDATE_CASES)
            .run(&candidates, |c| {
                tried.set(tried.get() + 1);
                let expected = validator.compiled().is_valid(&c);
                valid.set(valid.get() + u32::from(expected));
                prop_assert_eq!(
                    validator.fast_is_valid(&c),
                    Some(expected),
                    "{} (allow_unknown: {}): {}",
                    name,
                    allow_unknown,
                    c
                );
                Ok(())
            })
            .unwrap_or_else(|e| panic!("(d) {e}"));
        // Both answers must have been tried.
        assert!(
            valid.get() * 10 >= tried.get() && (tried.get() - valid.get()) * 10 >= tried.get(),
            "{name}: {} of {} candidates were valid",
            valid.get(),
            tried.get()
        );
    }
    assert_eq!(
        outcome[0], outcome[1],
        "{name}: the root mode changed the outcome"
    );
    outcome.swap_remove(0)
}

/// Every serialized value of `T` validates against `schema`; a failure panics with `label`.
fn serialized_values_validate<T: Case>(schema: &Value, label: &str) {
    let name = std::any::type_name::<T>();
    let compiled = CompiledSchema::compile(schema).expect("the bridge's output compiles");
    runner(SERIALIZED_CASES)
        .run(&T::strategy(), |x| {
            let v = serde_json::to_value(&x).expect("corpus values serialize");
            let violations = compiled.validate(&v);
            prop_assert!(
                violations.is_empty(),
                "{name}: {v} against {schema}: {violations:?}"
            );
            Ok(())
        })
        .unwrap_or_else(|e| panic!("{label} {e}"));
}

fn check_schema<T: Case>(schema: &Value) {
    let name = std::any::type_name::<T>();
    let compiled = CompiledSchema::compile(schema).expect("the bridge's output compiles");

    // (a) Every serialized value validates.
    serialized_values_validate::<T>(schema, "(a)");

    // (b) Every value that validates decodes.
    let pool = names(schema);
    let mutated = (T::strategy(), mutations(pool.clone()))
        .prop_map(|(x, ops)| mutate(serde_json::to_value(&x).expect("serializes"), &ops));
    let candidates = prop_oneof![mutated, near(schema, &pool)];
    let (valid, tried) = (Cell::new(0u32), Cell::new(0u32));
    runner(CANDIDATE_CASES)
        .run(&candidates, |c| {
            tried.set(tried.get() + 1);
            if !compiled.is_valid(&c) {
                return Ok(());
            }
            valid.set(valid.get() + 1);
            // The tool layer decodes with `json::decode`, which reads integral floats into
            // integer fields (see EXCEPTIONS for plain serde_json).
            if let Err(e) = json::decode::<T>(&c) {
                prop_assert!(
                    false,
                    "{name}: {c} validates against {schema} but does not decode: {e}"
                );
            }
            Ok(())
        })
        .unwrap_or_else(|e| panic!("(b) {e}"));
    // The property must not hold vacuously.
    assert!(
        valid.get() * 10 >= tried.get(),
        "{name}: only {} of {} candidates were valid",
        valid.get(),
        tried.get()
    );
    check_strict::<T>(schema);
}

/// (c) Reversible strict mode: where the type exports to a strict dialect, every serialized
/// value as a strict-mode model sends it (OpenAI and DeepSeek: absent optional fields as
/// `null`) that is valid for the exported schema (the `jsonschema` crate decides) maps back to
/// a value valid for ours that decodes, and that is the original but for a `null` where it had
/// nothing (a field both optional and nullable: both mean `None`). A value may not be
/// expressible at all (strict mode closes open objects: a `#[serde(flatten)]`ed optional
/// enum's fields cannot be sent), but the property must not hold vacuously.
fn check_strict<T: Case>(schema: &Value) {
    use dsh_tools::provider::{Dialect, Provider, export_parameters, restore_arguments};
    let name = std::any::type_name::<T>();
    let compiled = CompiledSchema::compile(schema).expect("compiles");
    for provider in [
        Provider::OpenAiChat,
        Provider::DeepSeek,
        Provider::Anthropic,
    ] {
        let dialect = Dialect::strict(provider);
        // Maps, values of any type and non-object roots are refused with a fix (tested in
        // `tests/provider/exports.rs`); the property is about what exports.
        let Ok((exported, _)) = export_parameters(schema, dialect) else {
            continue;
        };
        let validator = jsonschema::validator_for(&exported).expect("exported schemas compile");
        let expressible = Cell::new(0u32);
        runner(SERIALIZED_CASES)
            .run(&T::strategy(), |x| {
                let v = serde_json::to_value(&x).expect("serializes");
                // Anthropic's strict mode keeps `required`: a value is sent as it is.
                let sent = if provider == Provider::Anthropic {
                    v.clone()
                } else {
                    strict::to_strict(schema, &v)
                };
                if !validator.is_valid(&sent) {
                    return Ok(());
                }
                expressible.set(expressible.get() + 1);
                let mut back = sent;
                restore_arguments(schema, dialect, &mut back).unwrap();
                prop_assert!(compiled.is_valid(&back), "{name} in {dialect}: {back}");
                json::decode::<T>(&back)
                    .map_err(|e| TestCaseError::fail(format!("{name} in {dialect}: {e}")))?;
                prop_assert_eq!(without_added_nulls(back, &v), v, "{} in {}", name, dialect);
                Ok(())
            })
            .unwrap_or_else(|e| panic!("(c) {e}"));
        assert!(
            expressible.get() * 10 >= SERIALIZED_CASES,
            "{name} in {dialect}: only {} of {SERIALIZED_CASES} values could be sent",
            expressible.get()
        );
    }
}

/// `value` without the object members that are `null` in it and absent at the same place in
/// `like`.
fn without_added_nulls(value: Value, like: &Value) -> Value {
    match (value, like) {
        (Value::Object(map), Value::Object(like)) => Value::Object(
            map.into_iter()
                .filter(|(k, v)| !v.is_null() || like.contains_key(k))
                .map(|(k, v)| {
                    let v = match like.get(&k) {
                        Some(l) => without_added_nulls(v, l),
                        None => v,
                    };
                    (k, v)
                })
                .collect(),
        ),
        (Value::Array(items), Value::Array(like)) if items.len() == like.len() => Value::Array(
            items
                .into_iter()
                .zip(like)
                .map(|(v, l)| without_added_nulls(v, l))
                .collect(),
        ),
        (value, _) => value,
    }
}

/// Every property name and string constant in a schema: keys for mutations.
fn names(schema: &Value) -> Vec<String> {
    let mut out = BTreeSet::new();
    let mut stack = vec![schema];
    while let Some(v) = stack.pop() {
        match v {
            Value::Object(m) => {
                if let Some(Value::Object(props)) = m.get("properties") {
                    out.extend(props.keys().cloned());
                }
                for k in ["const", "enum"] {
                    match m.get(k) {
                        Some(Value::String(s)) => {
                            out.insert(s.clone());
                        }
                        Some(Value::Array(a)) => {
                            out.extend(a.iter().filter_map(Value::as_str).map(str::to_owned))
                        }
                        _ => {}
                    }
                }
                stack.extend(m.values());
            }
            Value::Array(a) => stack.extend(a),
            _ => {}
        }
    }
    out.insert("extra".into());
    out.into_iter().collect()
}

// ---- candidate values ----

/// Lossless JSON (no -0), small.
fn any_json() -> BoxedStrategy<Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        (-3i64..300).prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        finite_f64().prop_map(Value::from),
        "[a-z]{0,3}".prop_map(Value::from),
    ];
    leaf.prop_recursive(3, 16, 3, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..3).prop_map(Value::Array),
            prop::collection::vec(("[a-z]{1,3}", inner), 0..3)
                .prop_map(|kv| Value::Object(kv.into_iter().collect())),
        ]
    })
    .boxed()
}

/// Values shaped by `schema`, mostly valid, sometimes not.
fn near(schema: &Value, pool: &[String]) -> BoxedStrategy<Value> {
    let exact = near_exact(schema, pool);
    prop_oneof![8 => exact, 1 => any_json()].boxed()
}

fn near_exact(schema: &Value, pool: &[String]) -> BoxedStrategy<Value> {
    if let Some(Value::Array(branches)) = schema.get("oneOf") {
        let options: Vec<BoxedStrategy<Value>> = branches.iter().map(|b| near(b, pool)).collect();
        return proptest::strategy::Union::new(options).boxed();
    }
    if let Some(c) = schema.get("const") {
        return Just(c.clone()).boxed();
    }
    if let Some(Value::Array(members)) = schema.get("enum") {
        return prop::sample::select(members.clone()).boxed();
    }
    let int = |k: &str| schema.get(k).and_then(Value::as_f64).map(|f| f as i128);
    match schema.get("type").and_then(Value::as_str) {
        Some("null") => Just(Value::Null).boxed(),
        Some("boolean") => any::<bool>().prop_map(Value::Bool).boxed(),
        Some("string") => {
            let max = schema
                .get("maxLength")
                .and_then(Value::as_u64)
                .unwrap_or(6)
                .min(6) as usize;
            let min = schema
                .get("minLength")
                .and_then(Value::as_u64)
                .unwrap_or(0)
                .min(max as u64) as usize;
            prop_oneof![
                prop::collection::vec(any::<char>(), min..=max)
                    .prop_map(|c| Value::from(c.into_iter().collect::<String>())),
                prop::sample::select(pool.to_vec()).prop_map(Value::from),
            ]
            .boxed()
        }
        Some("integer") => {
            let (lo, hi) = (
                int("minimum").unwrap_or(-1000),
                int("maximum").unwrap_or(1000),
            );
            let edges: Vec<Value> = [lo - 1, lo, hi, hi + 1, 0]
                .into_iter()
                .filter_map(|i| {
                    i64::try_from(i)
                        .map(Value::from)
                        .or_else(|_| u64::try_from(i).map(Value::from))
                        .ok()
                })
                .collect();
            let lo64 = i64::try_from(lo.max(i64::MIN.into())).unwrap_or(i64::MIN);
            let hi64 = i64::try_from(hi.min(i64::MAX.into())).unwrap_or(i64::MAX);
            prop_oneof![
                prop::sample::select(edges),
                (lo64..=hi64).prop_map(Value::from),
                (lo64..=hi64).prop_map(|i| Value::from(i as f64)),
            ]
            .boxed()
        }
        Some("number") => prop_oneof![
            finite_f64().prop_map(Value::from),
            any::<i32>().prop_map(Value::from)
        ]
        .boxed(),
        Some("array") => {
            let items = schema.get("items").map_or_else(any_json, |i| near(i, pool));
            let min = schema
                .get("minItems")
                .and_then(Value::as_u64)
                .unwrap_or(0)
                .min(4) as usize;
            let max = schema
                .get("maxItems")
                .and_then(Value::as_u64)
                .unwrap_or(3)
                .clamp(min as u64, 4) as usize;
            prop::collection::vec(items, min..=max)
                .prop_map(Value::Array)
                .boxed()
        }
        Some("object") => {
            let required: Vec<&str> = schema
                .get("required")
                .and_then(Value::as_array)
                .map(|r| r.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            let mut fields: Vec<BoxedStrategy<Option<(String, Value)>>> = Vec::new();
            for (k, s) in schema
                .get("properties")
                .and_then(Value::as_object)
                .into_iter()
                .flatten()
            {
                let value = near(s, pool);
                let key = k.clone();
                fields.push(if required.contains(&k.as_str()) {
                    prop_oneof![15 => value.prop_map(move |v| Some((key.clone(), v))), 1 => Just(None)].boxed()
                } else {
                    prop::option::of(value.prop_map(move |v| (key.clone(), v))).boxed()
                });
            }
            let extra_value = match schema.get("additionalProperties") {
                Some(s @ Value::Object(_)) => near(s, pool),
                _ => any_json(),
            };
            let extras =
                prop::collection::vec((prop::sample::select(pool.to_vec()), extra_value), 0..2);
            (fields, extras)
                .prop_map(|(fields, extras)| {
                    let mut m: Map<String, Value> = fields.into_iter().flatten().collect();
                    for (k, v) in extras {
                        m.entry(k).or_insert(v);
                    }
                    Value::Object(m)
                })
                .boxed()
        }
        _ => any_json(),
    }
}

/// One mutation: where (an index into the value's nodes), what, and the material.
type Op = (prop::sample::Index, u8, Value, String);

fn mutations(pool: Vec<String>) -> impl Strategy<Value = Vec<Op>> {
    prop::collection::vec(
        (
            any::<prop::sample::Index>(),
            0u8..9,
            any_json(),
            prop::sample::select(pool),
        ),
        0..3,
    )
}

fn mutate(mut v: Value, ops: &[Op]) -> Value {
    for (at, what, material, key) in ops {
        let mut pointers = Vec::new();
        let mut stack = vec![(String::new(), &v)];
        while let Some((p, node)) = stack.pop() {
            match node {
                Value::Array(a) => {
                    stack.extend(a.iter().enumerate().map(|(i, x)| (format!("{p}/{i}"), x)))
                }
                Value::Object(m) => stack.extend(m.iter().map(|(k, x)| {
                    (
                        format!("{p}/{}", k.replace('~', "~0").replace('/', "~1")),
                        x,
                    )
                })),
                _ => {}
            }
            pointers.push(p);
        }
        let pointer = at.get(&pointers).clone();
        let Some(node) = v.pointer_mut(&pointer) else {
            continue;
        };
        match (what, &mut *node) {
            (0, _) => *node = material.clone(),
            (1, _) => *node = Value::Null,
            (2, Value::Object(m)) => {
                let first = m.keys().next().cloned();
                if let Some(k) = first {
                    m.shift_remove(&k);
                }
            }
            (3, Value::Object(m)) => {
                m.insert(key.clone(), material.clone());
            }
            (4, Value::Number(n)) => *node = Value::from(n.as_f64().unwrap_or(0.0)),
            (5, Value::Number(n)) => {
                *node = n.as_i64().map_or(json!(-1), |i| json!(i.saturating_add(1)))
            }
            (6, Value::String(_)) => *node = Value::from(key.clone()),
            (7, Value::Array(a)) => {
                if let Some(first) = a.first().cloned() {
                    a.push(first);
                }
            }
            (8, _) => *node = Value::Array(vec![node.clone()]),
            _ => {}
        }
    }
    v
}

fn finite_f64() -> impl Strategy<Value = f64> {
    prop_oneof![
        any::<f64>().prop_filter("finite", |x| x.is_finite()),
        prop::sample::select(vec![0.0, 1.0, 0.5, -2.5, 1e300, -1e-300]),
    ]
    .prop_map(|x| if x == 0.0 { 0.0 } else { x })
}

fn finite_f32() -> impl Strategy<Value = f32> {
    any::<f32>()
        .prop_filter("finite", |x| x.is_finite())
        .prop_map(|x| if x == 0.0 { 0.0 } else { x })
}

fn text() -> impl Strategy<Value = String> {
    prop_oneof!["[a-z]{0,5}", any::<String>()]
}

/// Keys that no corpus struct uses as a field name (a flattened map repeating a field's key
/// would serialize the key twice).
fn free_key() -> impl Strategy<Value = String> {
    "x_[a-z]{0,4}"
}

// ---- one test per corpus type ----

macro_rules! corpus_tests {
    ($($test:ident: $ty:ty => $fast:expr,)*) => {
        $(
            #[test]
            fn $test() {
                check::<$ty>();
                let expected: Result<(), &str> = $fast;
                match (check_generated::<$ty>(), expected) {
                    (Ok(()), Ok(())) => {}
                    (Err(why), Err(needle)) => assert!(why.contains(needle), "{why}"),
                    (got, expected) => panic!("generated check: {got:?}, expected {expected:?}"),
                }
            }
        )*

        #[test]
        fn corpus_has_at_least_30_types() {
            assert!([$(stringify!($test)),*].len() >= 30);
        }
    };
}

// After each type: whether `#[derive(FastCheck)]`'s code stands in for the interpreter (and is
// then checked against it), or the reason it does not (a substring of `fast_path()`'s).
//
// `flatten` with `deny_unknown_fields` holds (`flatten_deny_unknown_fields`): schemars merges the
// flattened fields into one object with `additionalProperties: false`, which is what serde does.
corpus_tests! {
    integer_widths: Ints => Ok(()),
    floats: Floats => Err("`f32` does not implement FastCheck"),
    scalars: Scalars => Ok(()),
    json_values: Anything => Err("the schema admits any value"),
    nested_structs: Nested => Ok(()),
    vectors_and_sets: Lists => Err("HashSet<u8>` does not implement FastCheck"),
    fixed_arrays: Fixed => Err("`[u8; 3]` does not implement FastCheck"),
    string_maps: Maps => Ok(()),
    enum_keyed_map: EnumKeys => Err("Mode, u8>` does not implement FastCheck"),
    btree_collections: Btree => Err("BTreeSet<alloc::string::String>` does not implement FastCheck"),
    options: Optionals => Ok(()),
    unit_enum_field: WithMode => Ok(()),
    unit_enum_root: Mode => Ok(()),
    externally_tagged: External => Err("an externally tagged enum with data"),
    internally_tagged: Internal => Err("tuple fields"),
    adjacently_tagged: Adjacent => Err("`#[serde(content)]`"),
    adjacently_tagged_unit: AdjacentUnit => Err("`#[serde(content)]`"),
    untagged_by_type: Untagged => Err("`#[serde(untagged)]`"),
    untagged_strict_structs: UntaggedStrict => Err("`#[serde(untagged)]`"),
    optional_enums: OptionalEnums => Err("an externally tagged enum with data"),
    renamed_fields: Renamed => Ok(()),
    renamed_enum: RenamedEnum => Err("an externally tagged enum with data"),
    field_defaults: Defaults => Ok(()),
    struct_default: StructDefault => Ok(()),
    skipped_fields: Skipped => Ok(()),
    flattened_struct: Flattened => Err("`#[serde(flatten)]`"),
    flattened_internal_enum: FlattenInternal => Err("`#[serde(flatten)]`"),
    flattened_optional_enum: FlattenOptional => Err("`#[serde(flatten)]`"),
    flattened_map: FlattenMap => Err("`#[serde(flatten)]`"),
    deny_unknown_fields: Strict => Ok(()),
    flatten_deny_unknown_fields: FlattenStrict => Err("`#[serde(flatten)]`"),
    deep_nesting: Deep => Ok(()),
    newtype_root: Newtype => Err("tuple fields"),
    unit_struct: Unit => Err("a struct without named fields"),
    chars_and_boxes: CharsAndBoxes => Err("`char` does not implement FastCheck"),
    documented_tool_args: ReadFile => Err("at `/properties/limit/oneOf/0/maximum`: 2000 is not 4294967295"),
    tagged_struct_variants: Command => Ok(()),
    documented_unit_enum_in_open_struct: Script => Ok(()),
    compact_open_struct: CompactOpen => Ok(()),
    compact_strict_struct: CompactStrict => Ok(()),
    nonzero_unsigned: Positive => Err("NonZero<u8>` does not implement FastCheck"),
}

#[test]
fn only_adjacent_tagging_closes_a_unit_variant() {
    use serde::{Deserialize, Serialize};
    // An internally tagged newtype around a JSON value: schemars' branch looks like a unit
    // variant's, but serialized values carry the value's keys beside the tag.
    #[derive(Serialize, Deserialize, JsonSchema)]
    #[serde(tag = "kind")]
    enum Payload {
        Empty,
        Json(serde_json::Value),
    }
    let output = bridge::schema_for_serialize::<Payload>().unwrap();
    let compiled = CompiledSchema::compile(&output).unwrap();
    let serialized = serde_json::to_value(Payload::Json(json!({"a": 1}))).unwrap();
    assert_eq!(serialized, json!({"kind": "Json", "a": 1}));
    assert!(compiled.is_valid(&serialized), "{output}");
    assert!(compiled.is_valid(&json!({"kind": "Empty", "extra": true})));
}

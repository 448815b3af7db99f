//! Random schemas shaped like schemars output: the bridge never panics, its output is always in
//! the subset and bridges to itself, and, where it succeeds, it accepts exactly the values the
//! original schema accepts under JSON Schema 2020-12 (checked against the `jsonschema` crate).
//! Schemas of the subset itself always bridge, to equivalent schemas.

use super::*;
use proptest::collection::vec;
use proptest::prelude::*;
use serde_json::{Map, json};

fn scalar() -> impl Strategy<Value = Value> + Clone {
    prop::sample::select(vec![
        json!(null),
        json!(true),
        json!(false),
        json!(0),
        json!(1),
        json!(-1),
        json!(2),
        json!(2.5),
        json!("a"),
        json!("b"),
        json!("A"),
        json!(""),
    ])
}

fn type_name() -> impl Strategy<Value = &'static str> + Clone {
    prop::sample::select(vec![
        "string", "integer", "number", "boolean", "null", "object", "array",
    ])
}

fn key() -> impl Strategy<Value = &'static str> + Clone {
    prop::sample::select(vec!["a", "b", "c"])
}

fn leaf() -> impl Strategy<Value = Value> + Clone {
    prop_oneof![
        type_name().prop_map(|t| json!({"type": t})),
        (type_name(), type_name())
            .prop_filter("distinct", |(a, b)| a != b)
            .prop_map(|(a, b)| json!({"type": [a, b]})),
        vec(scalar(), 1..4).prop_map(|e| json!({"enum": e})),
        (type_name(), type_name(), vec(scalar(), 1..4))
            .prop_map(|(a, b, e)| json!({"type": [a, b], "enum": e})),
        scalar().prop_map(|c| json!({"const": c})),
        (
            prop::sample::select(vec!["integer", "number"]),
            -1i64..2,
            0i64..3
        )
            .prop_map(|(t, lo, hi)| json!({"type": t, "minimum": lo, "exclusiveMaximum": hi})),
        Just(json!({"type": "string", "minLength": 1, "pattern": "^a"})),
        Just(json!({"type": ["number", "null"], "format": "double"})),
        prop::sample::select(vec!["#/$defs/a", "#/$defs/b"])
            .prop_map(|r| json!({"$ref": r, "description": "d"})),
        Just(json!(true)),
        Just(json!({"$comment": "c"})),
    ]
}

fn object(inner: BoxedStrategy<Value>) -> impl Strategy<Value = Value> + Clone {
    (
        vec((key(), inner.clone()), 0..3),
        prop::sample::subsequence(vec!["a", "b", "c", "d"], 0..3),
        prop_oneof![
            Just(None),
            Just(Some(json!(true))),
            Just(Some(json!(false))),
            inner.prop_map(Some)
        ],
        prop::sample::select(vec![
            None,
            Some(json!(false)),
            Some(json!({"type": "integer"})),
        ]),
        any::<bool>(),
    )
        .prop_map(|(props, required, extra, unevaluated, nullable)| {
            let mut m = Map::new();
            m.insert(
                "type".into(),
                if nullable {
                    json!(["object", "null"])
                } else {
                    json!("object")
                },
            );
            m.insert(
                "properties".into(),
                Value::Object(props.into_iter().map(|(k, v)| (k.to_owned(), v)).collect()),
            );
            m.insert("required".into(), json!(required));
            if let Some(e) = extra {
                m.insert("additionalProperties".into(), e);
            }
            if let Some(u) = unevaluated {
                m.insert("unevaluatedProperties".into(), u);
            }
            Value::Object(m)
        })
}

fn node() -> impl Strategy<Value = Value> {
    leaf().prop_recursive(4, 48, 4, |inner| {
        let inner = inner.boxed();
        prop_oneof![
            object(inner.clone()),
            (inner.clone(), any::<bool>()).prop_map(|(items, unique)| json!({"type": "array", "items": items, "uniqueItems": unique, "maxItems": 3})),
            vec(inner.clone(), 1..4).prop_map(|b| json!({"anyOf": b})),
            vec(inner.clone(), 1..4).prop_map(|b| json!({"oneOf": b})),
            vec(inner.clone(), 1..3).prop_map(|b| json!({"allOf": b})),
            // The shape of a #[serde(flatten)]ed enum.
            (object(inner.clone()), vec(object(inner), 1..3)).prop_map(|(mut o, b)| {
                o["oneOf"] = json!(b);
                o
            }),
        ]
    })
}

fn root() -> impl Strategy<Value = Value> {
    (node(), leaf(), node()).prop_map(|(mut root, a, b)| {
        if let Value::Object(m) = &mut root {
            m.insert("$defs".into(), json!({"a": a, "b": b}));
            root
        } else {
            json!({"allOf": [root], "$defs": {"a": a, "b": b}})
        }
    })
}

fn instance() -> impl Strategy<Value = Value> {
    let leaf = prop::sample::select(vec![
        json!(null),
        json!(true),
        json!(false),
        json!(0),
        json!(1),
        json!(1.0),
        json!(-1),
        json!(2),
        json!(2.5),
        json!("a"),
        json!("b"),
        json!("A"),
        json!(""),
        json!("ab"),
    ]);
    leaf.prop_recursive(3, 16, 4, |inner| {
        prop_oneof![
            vec(inner.clone(), 0..4).prop_map(Value::Array),
            vec(
                (prop::sample::select(vec!["a", "b", "c", "d"]), inner),
                0..4
            )
            .prop_map(|kv| Value::Object(kv.into_iter().map(|(k, v)| (k.to_owned(), v)).collect())),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(3000))]

    #[test]
    fn bridged_schemas_accept_exactly_what_the_original_accepts(
        original in root(),
        values in vec(instance(), 12),
    ) {
        let schema = Schema::try_from(original.clone()).expect("an object");
        let Ok(out) = from_schemars(&schema) else {
            return Ok(());
        };
        prop_assert!(assert_supported(&out).is_ok());
        prop_assert_eq!(&bridge(out.clone()).unwrap(), &out, "bridging is idempotent");
        let compiled = crate::schema::CompiledSchema::compile(&out).expect("compiles");
        let Ok(reference) = jsonschema::validator_for(&original) else {
            return Ok(());
        };
        for v in &values {
            prop_assert_eq!(
                compiled.is_valid(v),
                reference.is_valid(v),
                "value {} against {} bridged to {}", v, original, out
            );
        }
    }
}

/// Schemas of the subset itself, extension keywords included.
fn subset_schema() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(json!({})),
        Just(json!({"type": "string", "enum": ["a", "b"], "description": "d"})),
        Just(json!({"type": "string", "const": "a"})),
        Just(json!({"type": "string", "minLength": 1, "maxLength": 2, "pattern": "^a"})),
        Just(json!({"type": "number", "minimum": 0, "exclusiveMaximum": 2.5})),
        Just(json!({"type": "integer", "enum": [1, 2], "const": 1})),
        Just(
            json!({"type": "integer", "maximum": 1.5, "exclusiveMinimum": -1, "default": {"a": [1]}})
        ),
        Just(json!({"type": "boolean", "title": "t", "examples": [true]})),
        Just(json!({"type": "null"})),
    ];
    leaf.prop_recursive(4, 32, 3, |inner| {
        prop_oneof![
            (prop::option::of(inner.clone()), any::<bool>()).prop_map(|(items, unique)| {
                let mut s = json!({"type": "array", "minItems": 0, "uniqueItems": unique});
                if let Some(items) = items {
                    s["items"] = items;
                }
                s
            }),
            (
                vec((key(), inner.clone()), 0..3),
                prop::sample::subsequence(vec!["a", "b", "c"], 0..3),
                prop_oneof![Just(json!(true)), Just(json!(false)), inner.clone()],
            )
                .prop_map(|(props, required, extra)| {
                    let mut properties: Map<String, Value> =
                        props.into_iter().map(|(k, v)| (k.to_owned(), v)).collect();
                    for r in &required {
                        properties.entry(*r).or_insert(json!({}));
                    }
                    json!({"type": "object", "properties": properties, "required": required,
                           "additionalProperties": extra})
                }),
            vec(inner, 2..4).prop_map(|b| json!({"oneOf": b, "description": "u"})),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1000))]

    /// A schema of the subset bridges to an equivalent one, and bridging is idempotent.
    #[test]
    fn subset_schemas_bridge_to_equivalent_schemas(
        original in subset_schema(),
        values in vec(instance(), 8),
    ) {
        prop_assert!(assert_supported(&original).is_ok(), "{}", original);
        let bridged = bridge(original.clone()).map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert_eq!(&bridge(bridged.clone()).unwrap(), &bridged);
        let (a, b) = (
            crate::schema::CompiledSchema::compile(&original).unwrap(),
            crate::schema::CompiledSchema::compile(&bridged).unwrap(),
        );
        for v in &values {
            prop_assert_eq!(a.is_valid(v), b.is_valid(v), "{} against {} bridged to {}", v, original, bridged);
        }
    }
}

/// [`root`] with one keyword the subset has no word for, at the root or at a property (with
/// the keyword beside it that leaving it out must not make stricter).
fn foreign_root() -> impl Strategy<Value = Value> {
    let extra = prop::sample::select(vec![
        ("not", json!({"type": "string"}), None),
        (
            "patternProperties",
            json!({"^d": true}),
            Some(("additionalProperties", json!(false))),
        ),
        (
            "patternProperties",
            json!({"^d": {"type": "integer"}}),
            Some(("unevaluatedProperties", json!(false))),
        ),
        ("propertyNames", json!({"maxLength": 1}), None),
        (
            "prefixItems",
            json!([{"type": "string"}]),
            Some(("items", json!({"type": "integer"}))),
        ),
        ("format", json!("email"), None),
        ("deprecated", json!(true), None),
        ("examples", json!([1, "a"]), None),
        ("$id", json!("urn:x"), None),
        ("if", json!({"type": "string"}), None),
    ]);
    (root(), extra, any::<bool>()).prop_map(|(mut root, (key, value, beside), deep)| {
        let target = match root.pointer_mut("/properties/a") {
            Some(Value::Object(a)) if deep => a,
            _ => root.as_object_mut().expect("an object root"),
        };
        target.insert(key.to_owned(), value);
        if let Some((key, value)) = beside {
            target.insert(key.to_owned(), value);
        }
        root
    })
}

/// Every `oneOf` as an `anyOf`: what the shown schema means as a TypeScript union.
fn as_union(mut schema: Value) -> Value {
    let mut stack = vec![&mut schema];
    while let Some(node) = stack.pop() {
        match node {
            Value::Object(map) => {
                if let Some(branches) = map.shift_remove("oneOf") {
                    map.insert("anyOf".into(), branches);
                }
                stack.extend(map.values_mut());
            }
            Value::Array(items) => stack.extend(items.iter_mut()),
            _ => {}
        }
    }
    schema
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1500))]

    /// Issue 39.1: the SDK's conversion of a foreign schema never fails, is in the subset, and
    /// read as TypeScript reads it (a union admits what any branch admits) accepts every value
    /// the original accepts; it leaves nothing out when the exact conversion succeeds.
    #[test]
    fn the_lossy_conversion_is_in_the_subset_and_never_stricter(
        original in foreign_root(),
        values in vec(instance(), 12),
    ) {
        let shown = from_foreign_lossy(&original);
        prop_assert!(assert_supported(&shown.schema).is_ok(), "{}", shown.schema);
        if from_foreign(&original).is_ok() {
            prop_assert!(shown.dropped.is_empty(), "{:?}", shown.dropped);
        }
        let Ok(reference) = jsonschema::validator_for(&original) else {
            return Ok(());
        };
        let read = jsonschema::validator_for(&as_union(shown.schema.clone())).expect("a schema");
        for v in &values {
            if reference.is_valid(v) {
                prop_assert!(
                    read.is_valid(v),
                    "value {} accepted by {} but not by its SDK view {}", v, original, shown.schema
                );
            }
        }
    }
}

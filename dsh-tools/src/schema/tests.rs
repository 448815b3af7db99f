//! Property tests: the fast path, the silent collector and the listing collector agree on
//! validity for random schemas and values; the extension keywords behave as documented.

use super::validate::fits_with_budget;
use super::{CompiledSchema, Root, assert_supported};
use proptest::prelude::*;
use serde_json::{Value, json};

const STRINGS: [&str; 5] = ["", "a", "b", "ab", "ü"];
const NUMBERS: [&str; 14] = [
    "0",
    "1",
    "1.0",
    "1.5",
    "-0",
    "2",
    "-1",
    "1e2",
    "9007199254740993",
    "-9223372036854775808",
    "9223372036854775808",
    "18446744073709551615",
    "4294967296",
    "1e30",
];

/// Asserts that the fast path, the collector alone and the silent collector agree on `value`,
/// and with `oracle` (the `jsonschema` crate) when given; `schema` names the case.
fn assert_engines_agree(
    compiled: &CompiledSchema,
    oracle: Option<&jsonschema::Validator>,
    schema: &Value,
    value: &Value,
) {
    let fast = compiled.is_valid(value);
    if let Some(oracle) = oracle {
        assert_eq!(fast, oracle.is_valid(value), "{schema} {value}");
    }
    let listed = compiled.collect(value, Root::Value);
    assert_eq!(fast, listed.is_empty(), "{schema} {value}: {listed:?}");
    assert_eq!(
        fits_with_budget(compiled, value, 0),
        fast,
        "{schema} {value}"
    );
}

fn number(text: &str) -> Value {
    serde_json::from_str::<Value>(text).unwrap()
}

fn scalar() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        prop::sample::select(STRINGS.to_vec()).prop_map(|s| json!(s)),
        prop::sample::select(NUMBERS.to_vec()).prop_map(number),
    ]
}

/// Every scalar `scalar()` draws from, and an empty array and object.
fn scalar_values() -> Vec<Value> {
    let mut all = vec![Value::Null, json!(true), json!(false), json!([]), json!({})];
    all.extend(STRINGS.iter().map(|s| json!(s)));
    all.extend(NUMBERS.iter().map(|n| number(n)));
    all
}

fn value() -> impl Strategy<Value = Value> {
    scalar().prop_recursive(4, 24, 3, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::vec((prop::sample::select(vec!["a", "b", "c"]), inner), 0..4)
                .prop_map(|kv| Value::Object(
                    kv.into_iter().map(|(k, v)| (k.to_owned(), v)).collect()
                )),
        ]
    })
}

fn scalar_schemas() -> Vec<Value> {
    vec![
        json!({}),
        json!({"type": "string"}),
        json!({"type": "string", "enum": ["a", "b"]}),
        json!({"type": "string", "const": "a"}),
        json!({"type": "string", "minLength": 1, "maxLength": 1}),
        json!({"type": "string", "pattern": "^a"}),
        json!({"type": "number"}),
        json!({"type": "number", "minimum": 0, "exclusiveMaximum": 2}),
        json!({"type": "integer"}),
        json!({"type": "integer", "enum": [1, 2]}),
        json!({"type": "integer", "maximum": 1.5, "exclusiveMinimum": -1}),
        // The bridge's integer ranges (decided by the integer fast path).
        json!({"type": "integer", "minimum": i64::MIN, "maximum": i64::MAX}),
        json!({"type": "integer", "minimum": 0, "maximum": u32::MAX}),
        json!({"type": "integer", "minimum": 0, "maximum": u64::MAX}),
        json!({"type": "number", "minimum": -1}),
        json!({"type": "boolean"}),
        json!({"type": "boolean", "const": true}),
        json!({"type": "null"}),
    ]
}

fn scalar_schema() -> impl Strategy<Value = Value> {
    prop::sample::select(scalar_schemas())
}

fn schema() -> impl Strategy<Value = Value> {
    scalar_schema().prop_recursive(4, 32, 3, |inner| {
        prop_oneof![
            (prop::option::of(inner.clone()), any::<bool>(), 0u64..3).prop_map(
                |(items, unique, min)| {
                    let mut s = json!({"type": "array", "minItems": min});
                    if let Some(items) = items {
                        s["items"] = items;
                    }
                    if unique {
                        s["uniqueItems"] = json!(true);
                    }
                    s
                }
            ),
            (
                prop::collection::vec(
                    (
                        prop::sample::select(vec!["a", "b", "c"]),
                        inner.clone(),
                        any::<bool>()
                    ),
                    0..3
                ),
                prop_oneof![Just(json!(true)), Just(json!(false)), inner.clone()],
            )
                .prop_map(|(props, extra)| {
                    let mut properties = serde_json::Map::new();
                    let mut required = Vec::new();
                    for (k, s, req) in props {
                        if properties.insert(k.to_owned(), s).is_none() && req {
                            required.push(json!(k));
                        }
                    }
                    json!({"type": "object", "properties": properties, "required": required,
                           "additionalProperties": extra})
                }),
            prop::collection::vec(inner.clone(), 2..4).prop_map(|b| json!({"oneOf": b})),
            // `Option<T>` as the bridge writes it, either order (the null-check fast path).
            (inner, any::<bool>()).prop_map(|(x, first)| if first {
                json!({"oneOf": [x, {"type": "null"}]})
            } else {
                json!({"oneOf": [{"type": "null"}, x]})
            }),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(3000))]

    #[test]
    fn engines_agree(schema in schema(), value in value()) {
        assert_supported(&schema).unwrap();
        let compiled = CompiledSchema::compile(&schema).unwrap();
        let listed = compiled.collect(&value, Root::Value);
        let fast = compiled.is_valid(&value);
        prop_assert_eq!(fast, listed.is_empty(), "listed: {:?}", listed);
        for budget in 0..3 {
            prop_assert_eq!(fits_with_budget(&compiled, &value, budget), fast, "budget {}", budget);
        }
        prop_assert_eq!(compiled.validate(&value), listed);
    }
}

#[test]
fn extension_messages() {
    let s = CompiledSchema::compile(&json!({
        "type": "object",
        "properties": {
            "n": {"type": "integer", "minimum": 1, "maximum": 5, "exclusiveMinimum": 0, "exclusiveMaximum": 5},
            "s": {"type": "string", "minLength": 2, "maxLength": 3, "pattern": "^a"},
            "a": {"type": "array", "minItems": 1, "maxItems": 2, "uniqueItems": true},
            "m": {"type": "object", "additionalProperties": {"type": "integer"}}
        }
    }))
    .unwrap();
    assert_eq!(
        s.validate(&json!({"n": 5, "s": "béééé", "a": [1, 1.0, {}], "m": {"x": 1, "y": "2"}})),
        [
            r#""value.n" must be < 5"#.to_owned(),
            r#""value.s" must be at most 3 characters long"#.to_owned(),
            r#""value.s" must match pattern "^a""#.to_owned(),
            r#""value.a" must have at most 2 items"#.to_owned(),
            r#""value.a" must not contain duplicate items (items 0 and 1 are equal)"#.to_owned(),
            r#""value.m.y" must be an integer"#.to_owned(),
        ]
    );
    assert!(s.is_valid(&json!({"n": 1, "s": "ab", "a": [1, "1"], "m": {"x": 1e2}})));
    assert_eq!(
        s.validate(&json!({"n": 0, "s": "ü"})),
        [
            r#""value.n" must be >= 1"#,
            r#""value.n" must be > 0"#,
            r#""value.s" must be at least 2 characters long"#,
            r#""value.s" must match pattern "^a""#,
        ]
    );
}

#[test]
fn extension_schema_violations() {
    let err = assert_supported(&json!({
        "type": "string",
        "minLength": -1,
        "maxLength": 1.5,
        "pattern": "(",
        "minimum": 1,
        "properties": {"x": {"type": "array", "uniqueItems": "yes", "minItems": 1}}
    }))
    .unwrap_err();
    assert_eq!(
        err.violations(),
        [
            r#"schema.properties is not supported on type "string""#,
            r#"schema.minimum is not supported on type "string""#,
            "schema.minLength must be a non-negative integer",
            "schema.maxLength must be a non-negative integer",
            "schema.pattern must be a valid regular expression: unclosed group",
        ]
    );
    let err = assert_supported(&json!({"type": "number", "maximum": "1"})).unwrap_err();
    assert_eq!(err.violations(), ["schema.maximum must be a finite number"]);
    let err = assert_supported(&json!({"minimum": 1})).unwrap_err();
    assert_eq!(err.violations(), ["schema.minimum requires type or oneOf"]);
    let err = assert_supported(&json!({"type": "object", "additionalProperties": {"type": "x"}}))
        .unwrap_err();
    assert_eq!(
        err.violations(),
        [
            "schema.additionalProperties.type must be one of object/array/string/number/integer/boolean/null"
        ]
    );
}

#[test]
fn unique_items_uses_hashing_for_long_arrays() {
    let s = CompiledSchema::compile(&json!({"type": "array", "uniqueItems": true})).unwrap();
    let mut items: Vec<Value> = (0..100).map(|i| json!({"k": i})).collect();
    assert!(s.is_valid(&Value::Array(items.clone())));
    items.push(json!({"k": 42.0}));
    items.push(json!({"k": 7}));
    assert_eq!(
        s.validate(&Value::Array(items)),
        [r#""value" must not contain duplicate items (items 42 and 100 are equal)"#]
    );
}

#[test]
fn violation_listing_is_bounded() {
    let s =
        CompiledSchema::compile(&json!({"type": "array", "items": {"type": "string"}})).unwrap();
    let v = Value::Array(vec![json!(1); 5000]);
    let out = s.validate(&v);
    assert_eq!(out.len(), super::MAX_LISTED_VIOLATIONS + 1);
    assert_eq!(
        out.last().unwrap(),
        "... and 4000 more violations (not listed)"
    );
}

#[test]
fn listing_agrees_with_the_fast_path_on_deep_overlapping_one_of() {
    // Found by the `validate` fuzz target's invariant (fuzz/regressions/validate): the item
    // matches both branches, the first only 16 levels down, past the collector's probe budget.
    let mut deep_schema = json!({"type": "integer"});
    let mut deep_value = json!(0);
    for _ in 0..16 {
        deep_schema = json!({"type": "array", "items": deep_schema});
        deep_value = json!([deep_value]);
    }
    let schema = json!({"type": "array", "items": {"oneOf": [deep_schema, {"type": "array"}]}});
    let value = json!([deep_value]);
    let compiled = CompiledSchema::compile(&schema).unwrap();
    assert!(!compiled.is_valid(&value));
    assert_eq!(
        compiled.validate(&value),
        [r#""value[0]" must match exactly one oneOf branch (matched 2)"#]
    );
}

#[test]
fn keys_cannot_forge_violations_and_long_keys_are_cut() {
    use crate::schema::{CompiledSchema, MAX_LISTED_BYTES, Root};
    use serde_json::json;
    let schema = json!({"type": "object", "properties": {}, "additionalProperties": false});
    let compiled = CompiledSchema::compile(&schema).unwrap();
    let forged = "x\" is fine; \"y";
    let violations = compiled.validate_at(&json!({ forged: 1 }), Root::Value);
    // The key's own quotes are escaped: no unescaped `"` or `; "` can come from it.
    assert_eq!(
        violations,
        [
            r#""value["x\" is fine; \"y"]" is not a declared property (additionalProperties: false): no properties are declared"#
        ]
    );
    // Ordinary keys keep the spec's messages, then the names the model may use: quoted, with
    // `;` escaped too, so a declared name cannot read as another violation either.
    let ordinary = compiled.validate_at(&json!({"line_2": 1}), Root::Value);
    assert_eq!(
        ordinary,
        [
            r#""value.line_2" is not a declared property (additionalProperties: false): no properties are declared"#
        ]
    );
    let named = CompiledSchema::compile(&json!({"type": "object", "properties": {"path": {}, "a; \"b": {}}, "additionalProperties": false})).unwrap();
    assert_eq!(
        named.validate_at(&json!({"mode": 1}), Root::Parameters),
        [
            r#""mode" is not a declared property (additionalProperties: false): the declared properties are "path", "a\u003b \"b""#
        ]
    );
    // A 5 MiB key: one short violation, the report within its bound.
    let huge = "k".repeat(5 << 20);
    let violations = compiled.validate_at(&json!({ huge.as_str(): 1 }), Root::Value);
    assert_eq!(violations.len(), 1);
    assert!(violations[0].len() < 1024, "{}", violations[0].len());
    assert!(violations[0].contains("more bytes"));
    // Many long keys: the whole report stays under the byte bound.
    let mut many = serde_json::Map::new();
    for i in 0..2_000 {
        many.insert(format!("{i}{}", "k".repeat(250)), json!(1));
    }
    let report = compiled.validate_at(&serde_json::Value::Object(many), Root::Value);
    let total: usize = report.iter().map(String::len).sum();
    assert!(total <= MAX_LISTED_BYTES + 64, "{total}");
}

#[test]
fn bridged_option_and_integer_ranges_decide_exactly() {
    let s = CompiledSchema::compile(&json!({"oneOf": [
        {"type": "integer", "minimum": 0, "maximum": u32::MAX},
        {"type": "null"}
    ]}))
    .unwrap();
    for (text, valid) in [
        ("null", true),
        ("0", true),
        ("4294967295", true),
        ("4294967296", false),
        ("-1", false),
        ("1.0", true),
        ("1.5", false),
        ("1e30", false),
        ("\"1\"", false),
        ("18446744073709551615", false),
    ] {
        let v: Value = serde_json::from_str(text).unwrap();
        assert_eq!(s.is_valid(&v), valid, "{text}");
        assert_eq!(s.collect(&v, Root::Value).is_empty(), valid, "{text}");
    }
    // X admits null too: no shortcut, both branches count.
    let both = CompiledSchema::compile(&json!({"oneOf": [{}, {"type": "null"}]})).unwrap();
    assert!(!both.is_valid(&Value::Null));
    assert!(both.is_valid(&json!(1)));
}

#[test]
fn one_of_that_matches_nothing_is_explained() {
    // A tagged union (serde's internally tagged enum): the tag picks the branch to report.
    let op = CompiledSchema::compile(&json!({"type": "object", "properties": {"op": {"oneOf": [
        {"type": "object", "properties": {"kind": {"type": "string", "const": "add"}, "a": {"type": "integer"}, "b": {"type": "integer"}}, "required": ["kind", "a", "b"]},
        {"type": "object", "properties": {"kind": {"type": "string", "enum": ["neg"]}, "a": {"type": "integer"}}, "required": ["kind", "a"]}
    ]}}}))
    .unwrap();
    assert_eq!(
        op.validate_at(&json!({"op": {"kind": "add", "a": "1"}}), Root::Parameters),
        [
            r#""op" must match exactly one oneOf branch (matched 0): for "op.kind": "add", missing required property "op.b", "op.a" must be an integer"#
        ]
    );
    assert_eq!(
        op.validate_at(&json!({"op": {"kind": "pow", "a": 1}}), Root::Parameters),
        [
            r#""op" must match exactly one oneOf branch (matched 0): "op.kind" must be one of ["add","neg"]"#
        ]
    );
    assert_eq!(
        op.validate_at(&json!({"op": {"a": 1}}), Root::Parameters),
        [
            r#""op" must match exactly one oneOf branch (matched 0): "op.kind" must be one of ["add","neg"]"#
        ]
    );
    // `Option<T>`: T's violations; `(or null)` when the value is not a `T` at all.
    let opt = CompiledSchema::compile(
        &json!({"oneOf": [{"type": "integer", "minimum": 0}, {"type": "null"}]}),
    )
    .unwrap();
    assert_eq!(
        opt.validate(&json!(-1)),
        [
            r#""value" must match exactly one oneOf branch (matched 0): "value" must be >= 0 (or null)"#
        ]
    );
    assert_eq!(
        opt.validate(&json!("1")),
        [
            r#""value" must match exactly one oneOf branch (matched 0): "value" must be an integer (or null)"#
        ]
    );
    // Anything else: the closest branch, at most five violations.
    let other = CompiledSchema::compile(&json!({"oneOf": [
        {"type": "string"},
        {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}}, "required": ["a", "b"]}
    ]}))
    .unwrap();
    assert_eq!(
        other.validate(&json!({"a": "x"})),
        [
            r#""value" must match exactly one oneOf branch (matched 0): closest is branch 1: missing required property "value.b", "value.a" must be an integer"#
        ]
    );
    let wide: serde_json::Map<String, Value> = (0..8)
        .map(|i| (format!("p{i}"), json!({"type": "integer"})))
        .collect();
    let many = CompiledSchema::compile(
        &json!({"oneOf": [{"type": "null"}, {"type": "object", "properties": wide}]}),
    )
    .unwrap();
    let bad: serde_json::Map<String, Value> =
        (0..8).map(|i| (format!("p{i}"), json!("x"))).collect();
    let message = &many.validate(&Value::Object(bad))[0];
    assert!(
        message.ends_with(r#""value.p4" must be an integer, ... ("value" may also be null)"#),
        "{message}"
    );
    // The closest branch is numbered as declared, null branches included, and null allowed.
    let mixed = CompiledSchema::compile(&json!({"oneOf": [
        {"type": "null"}, {"type": "string"}, {"type": "integer", "minimum": 0}
    ]}))
    .unwrap();
    assert_eq!(
        mixed.validate(&json!(-1)),
        [
            r#""value" must match exactly one oneOf branch (matched 0): closest is branch 2: "value" must be >= 0 (or null)"#
        ]
    );
    // Matching two branches keeps the spec's message alone.
    let two = CompiledSchema::compile(&json!({"oneOf": [{"type": "integer"}, {"type": "number"}]}))
        .unwrap();
    assert_eq!(
        two.validate(&json!(1)),
        [r#""value" must match exactly one oneOf branch (matched 2)"#]
    );
}
/// Every scalar schema against every scalar value, as an object's member, an array's item and
/// an `Option` of either (where containers decide members by their type mask): the fast path, the
/// collector alone (budget 0) and the listing agree. Exhaustive, where the property test above
/// reaches a given pair only by chance.
#[test]
fn members_decided_by_type_agree_with_the_collector() {
    let (schemas, values) = (scalar_schemas(), scalar_values());
    let mut checked = 0;
    for s in &schemas {
        let wraps = [
            json!({"type": "object", "properties": {"a": s}}),
            json!({"type": "object", "properties": {"a": {"oneOf": [s, {"type": "null"}]}}}),
            json!({"type": "array", "items": s}),
            json!({"type": "array", "items": {"oneOf": [{"type": "null"}, s]}}),
        ];
        for wrapped in &wraps {
            let compiled = CompiledSchema::compile(wrapped).unwrap();
            for v in &values {
                let value = if wrapped["type"] == "object" {
                    json!({"a": v})
                } else {
                    json!([v])
                };
                assert_engines_agree(&compiled, None, wrapped, &value);
                checked += 1;
            }
        }
    }
    assert!(checked > 1000, "{checked}");
}

/// Members an object's loop decides without visiting their node (`Quick`: an `enum` or a
/// `const` of strings, an array of items a mask decides), and the look-alikes with one constraint more that must
/// still visit it, as members of a flat object and of a general one (a nested object makes it
/// general): the fast path, the collector alone and `jsonschema` agree on every value.
#[test]
fn quick_members_and_their_look_alikes_agree_with_jsonschema() {
    use crate::schema::compile::{Node, Quick};
    let members = [
        (json!({"type": "string", "enum": ["x", "yy", "ü"]}), true),
        (
            json!({"type": "string", "enum": ["x", "yy"], "maxLength": 1}),
            false,
        ),
        (
            json!({"type": "string", "enum": ["x", "yy"], "minLength": 2}),
            false,
        ),
        (
            json!({"type": "string", "enum": ["x", "yy"], "pattern": "^y"}),
            false,
        ),
        (
            json!({"type": "string", "enum": ["x", "yy"], "const": "x"}),
            true,
        ),
        (json!({"type": "string", "const": "yy"}), true),
        (json!({"type": "array", "items": {"type": "string"}}), true),
        (json!({"type": "array", "items": {"type": "integer"}}), true),
        (
            json!({"type": "array", "items": {"oneOf": [{"type": "number"}, {"type": "null"}]}}),
            true,
        ),
        (
            json!({"type": "array", "items": {"type": "string"}, "maxItems": 1}),
            false,
        ),
        (
            json!({"type": "array", "items": {"type": "string"}, "minItems": 2}),
            false,
        ),
        (
            json!({"type": "array", "items": {"type": "string"}, "uniqueItems": true}),
            false,
        ),
        // Not even flat: its items' node must be visited.
        (
            json!({"type": "array", "items": {"type": "string", "enum": ["x"]}}),
            false,
        ),
    ];
    let values = [
        json!("x"),
        json!("yy"),
        json!("ü"),
        json!("z"),
        json!(""),
        json!(1),
        Value::Null,
        json!([]),
        json!(["x"]),
        json!(["x", "x"]),
        json!(["x", "yy"]),
        json!([1, 2]),
        json!([1.5, null]),
        json!(["x", 1]),
        json!({}),
    ];
    let mut checked = 0;
    for (member, quick) in &members {
        for general in [false, true] {
            let mut properties = json!({"m": member, "s": {"type": "string"}});
            if general {
                properties["o"] = json!({"type": "object"});
            }
            let schema = json!({"type": "object", "properties": properties, "required": ["m"]});
            let compiled = CompiledSchema::compile(&schema).unwrap();
            let Node::Object(o) = &compiled.nodes[0] else {
                panic!("{schema}: not an object node");
            };
            let flat_member = member["items"].get("enum").is_none();
            assert_eq!(o.flat, !general && flat_member, "{schema}");
            let shape = o.props[0].quick;
            assert_eq!(shape != Quick::Node, *quick, "{schema}: {shape:?}");
            let oracle = jsonschema::validator_for(&schema).unwrap();
            for v in &values {
                for value in [
                    json!({"m": v}),
                    json!({"s": "a", "m": v}),
                    json!({"m": v, "o": {}}),
                ] {
                    assert_engines_agree(&compiled, Some(&oracle), &schema, &value);
                    checked += 1;
                }
            }
        }
    }
    assert_eq!(checked, 13 * 2 * 15 * 3);
}

/// Flat objects (every member a scalar or an array of typed items) are decided by a loop of their
/// own that reads members in declaration order and falls back at the first one out of order:
/// every order of every subset
/// of declared and undeclared keys, valid and invalid values, open and closed objects, alone, as
/// an array's items and as a `oneOf` branch, against the `jsonschema` crate (the collector's
/// probes run the same loop, so it is no independent witness) and against the collector.
#[test]
fn flat_objects_agree_with_jsonschema_in_every_member_order() {
    fn orders(keys: &[&'static str], len: usize) -> Vec<Vec<&'static str>> {
        if len == 0 {
            return vec![Vec::new()];
        }
        let mut out = Vec::new();
        for (i, k) in keys.iter().enumerate() {
            let rest: Vec<_> = keys
                .iter()
                .enumerate()
                .filter(|(j, _)| *j != i)
                .map(|(_, k)| *k)
                .collect();
            for mut tail in orders(&rest, len - 1) {
                tail.insert(0, k);
                out.push(tail);
            }
        }
        out
    }
    let member_values = [json!("x"), json!(7), Value::Null, json!(["x", "y"])];
    let mut checked = 0;
    for additional in [json!(true), json!(false)] {
        let object = json!({
            "type": "object",
            "properties": {
                "a": {"type": "string"},
                "b": {"type": "array", "items": {"type": "string"}},
                "c": {"type": "string", "enum": ["x", "y"]},
                "d": {"oneOf": [{"type": "integer"}, {"type": "null"}]},
            },
            "required": ["a", "c"],
            "additionalProperties": additional,
        });
        let wraps = [
            object.clone(),
            json!({"type": "array", "items": object}),
            json!({"oneOf": [object, {"type": "string"}]}),
        ];
        for wrapped in &wraps {
            let compiled = CompiledSchema::compile(wrapped).unwrap();
            let node = &compiled.nodes[if wrapped["type"] == "object" { 0 } else { 1 }];
            assert!(
                matches!(node, crate::schema::compile::Node::Object(o) if o.flat),
                "{wrapped}: the object should be flat"
            );
            let oracle = jsonschema::validator_for(wrapped).unwrap();
            for len in 0..=4 {
                for keys in orders(&["a", "b", "c", "d", "e"], len) {
                    // Every assignment of `member_values` to the keys.
                    for pick in 0..member_values.len().pow(len as u32) {
                        let mut map = serde_json::Map::new();
                        let mut p = pick;
                        for k in &keys {
                            map.insert((*k).to_owned(), member_values[p % 4].clone());
                            p /= 4;
                        }
                        let object = Value::Object(map);
                        let value = if wrapped["type"] == "array" {
                            json!([{"a": "x", "c": "y"}, object])
                        } else {
                            object
                        };
                        assert_engines_agree(&compiled, Some(&oracle), wrapped, &value);
                        checked += 1;
                    }
                }
            }
        }
    }
    assert!(checked > 200_000, "{checked}");
}

/// Tagged unions (`oneOf` of objects that all require the same property, each fixed to its own
/// string): the fast path evaluates only the branch the tag names. Each shape that is a tagged
/// union and each look-alike that is not (a tag one branch does not require, two equal tags, a
/// tag of two strings, two `null` branches), at the root, as a member and as an array's items:
/// the fast path, the collector alone and `jsonschema` agree on every value.
#[test]
fn tagged_unions_agree_with_jsonschema() {
    use crate::schema::compile::{Node, Pick};
    let file = json!({
        "type": "object",
        "properties": {"kind": {"type": "string", "const": "file"}, "path": {"type": "string"}},
        "required": ["kind", "path"],
        "additionalProperties": false,
    });
    // The tag second, as an `enum` of one.
    let glob = json!({
        "type": "object",
        "properties": {"pattern": {"type": "string"}, "kind": {"type": "string", "enum": ["glob"]}},
        "required": ["pattern", "kind"],
        "additionalProperties": false,
    });
    // Open, with an optional member, the tag a `const` inside an `enum`.
    let dir = json!({
        "type": "object",
        "properties": {
            "kind": {"type": "string", "enum": ["dir", "file"], "const": "dir"},
            "depth": {"type": "integer"},
        },
        "required": ["kind"],
    });
    let with = |object: &Value, key: &str, member: Value| {
        let mut o = object.clone();
        o[key] = member;
        o
    };
    let none = json!({"type": "null"});
    let unions = [
        (json!({"oneOf": [file, glob]}), Some(false)),
        (json!({"oneOf": [file, glob, dir]}), Some(false)),
        (json!({"oneOf": [none, glob, file]}), Some(true)),
        (json!({"oneOf": [file, dir, none]}), Some(true)),
        // Look-alikes: every branch is evaluated.
        (
            json!({"oneOf": [file, with(&glob, "required", json!(["pattern"]))]}),
            None,
        ),
        (
            json!({"oneOf": [file, with(&dir, "properties", json!({"kind": {"type": "string", "const": "file"}}))]}),
            None,
        ),
        (
            json!({"oneOf": [file, with(&dir, "properties", json!({"kind": {"type": "string", "enum": ["dir", "glob"]}}))]}),
            None,
        ),
        (json!({"oneOf": [file, glob, none, none]}), None),
        (json!({"oneOf": [file, {"type": "string"}]}), None),
        (json!({"oneOf": [file, {"type": "object"}]}), None),
    ];
    let values = [
        Value::Null,
        json!("file"),
        json!(1),
        json!({}),
        json!({"kind": "file", "path": "a"}),
        json!({"path": "a", "kind": "file"}),
        json!({"kind": "glob", "pattern": "*"}),
        json!({"kind": "file", "pattern": "*"}),
        json!({"kind": "glob", "path": "a"}),
        json!({"kind": "glob", "pattern": "*", "path": "a"}),
        json!({"kind": "other", "path": "a"}),
        json!({"kind": 1, "path": "a"}),
        json!({"kind": null}),
        json!({"path": "a"}),
        json!({"pattern": "*"}),
        json!({"kind": "file", "path": "a", "extra": 1}),
        json!({"kind": "file", "path": 3}),
        json!({"kind": "dir"}),
        json!({"kind": "dir", "depth": 2, "path": "a"}),
        json!({"kind": "dir", "depth": "deep"}),
        json!({"kind": "fil", "path": "a"}),
    ];
    let mut checked = 0;
    for (union, tagged) in &unions {
        let wraps = [
            union.clone(),
            json!({"type": "object", "properties": {"target": union}, "required": ["target"]}),
            json!({"type": "array", "items": union}),
        ];
        for wrapped in &wraps {
            let compiled = CompiledSchema::compile(wrapped).unwrap();
            let pick = compiled.nodes.iter().find_map(|n| match n {
                Node::OneOf(_, pick) => Some(pick),
                _ => None,
            });
            match (pick, tagged) {
                (Some(Pick::Tag(t)), Some(null)) => assert_eq!(t.null, *null, "{wrapped}"),
                (Some(Pick::All), None) => {}
                (pick, _) => panic!("{wrapped}: {pick:?}"),
            }
            let oracle = jsonschema::validator_for(wrapped).unwrap();
            for v in &values {
                let value = match wrapped["type"].as_str() {
                    Some("object") => json!({"target": v}),
                    Some("array") => json!([{"kind": "file", "path": "b"}, v]),
                    _ => v.clone(),
                };
                assert_engines_agree(&compiled, Some(&oracle), wrapped, &value);
                checked += 1;
            }
        }
    }
    assert_eq!(checked, 10 * 3 * 21);
}

/// A union's tag is looked for among the first eight properties fixed to one string: a schema
/// from a remote server may fix thousands in thousands of branches, and each property tried
/// reads every branch. Past them the union is evaluated branch by branch, still exactly, and
/// explained by its closest branch.
#[test]
fn tag_candidates_are_bounded() {
    use crate::schema::compile::{Node, Pick};
    let union = |shared: usize| {
        let branch = |tag: &str| {
            let mut properties = serde_json::Map::new();
            let mut required = Vec::new();
            for i in 0..shared {
                properties.insert(format!("same{i}"), json!({"type": "string", "const": "x"}));
                required.push(json!(format!("same{i}")));
            }
            properties.insert("kind".into(), json!({"type": "string", "const": tag}));
            required.push(json!("kind"));
            json!({"type": "object", "properties": properties, "required": required})
        };
        json!({"oneOf": [branch("a"), branch("b")]})
    };
    for (shared, tagged) in [(0, true), (7, true), (8, false), (50, false)] {
        let schema = union(shared);
        let compiled = CompiledSchema::compile(&schema).unwrap();
        let Node::OneOf(_, pick) = &compiled.nodes[0] else {
            panic!("not a oneOf");
        };
        assert_eq!(matches!(pick, Pick::Tag(_)), tagged, "{shared}: {pick:?}");
        let mut value = serde_json::Map::new();
        for i in 0..shared {
            value.insert(format!("same{i}"), json!("x"));
        }
        value.insert("kind".into(), json!("b"));
        let mut value = Value::Object(value);
        assert!(compiled.is_valid(&value), "{shared}");
        // The explanation looks for the tag the same way.
        value["kind"] = json!("c");
        assert!(!compiled.is_valid(&value), "{shared}");
        let listed = compiled.validate(&value).join("; ");
        let explained = if tagged {
            "\"value.kind\" must be one of [\"a\",\"b\"]"
        } else {
            "closest is branch 0: \"value.kind\" must be \"a\""
        };
        assert!(listed.contains(explained), "{shared}: {listed}");
    }
}

/// A declared key is found by its length and a few word compares (`same_len_eq`): every key of
/// 0 to 20 bytes is found as itself, and not when any one of its bytes differs or it is one
/// byte longer or shorter.
#[test]
fn declared_keys_are_told_apart_by_every_byte() {
    use crate::schema::compile::Node;
    let text = "abcdefghijklmnopqrstü";
    for n in 0..=20 {
        let key = &text.as_bytes()[..n];
        let key = std::str::from_utf8(key).unwrap();
        let schema = json!({"type": "object", "properties": {key: {"type": "string"}}});
        let compiled = CompiledSchema::compile(&schema).unwrap();
        let Node::Object(o) = &compiled.nodes[0] else {
            panic!("not an object");
        };
        assert_eq!(o.find(key), Some(0), "{key:?}");
        for i in 0..n {
            let mut other = key.as_bytes().to_vec();
            other[i] = b'_';
            let other = String::from_utf8(other).unwrap();
            assert_eq!(o.find(&other), None, "{key:?} against {other:?}");
        }
        assert_eq!(o.find(&format!("{key}_")), None, "{key:?}");
        if n > 0 {
            assert_eq!(o.find(&key[..n - 1]), None, "{key:?}");
        }
        assert!(compiled.is_valid(&json!({key: "x"})), "{key:?}");
        assert!(!compiled.is_valid(&json!({key: 1})), "{key:?}");
    }
}

//! Unit tests of the keyword rules: formats, `enum`/`const`, boolean schemas, `required`,
//! dropped and rejected keywords, limits and error reporting.

use super::*;
use std::collections::HashMap;

// ---- integer and float formats ----

#[derive(JsonSchema)]
struct Ranged {
    #[schemars(range(min = 5))]
    tight: u8,
    #[schemars(range(min = -1000, max = 1000))]
    wide: i8,
}

fn bounds<T: JsonSchema>() -> (Value, Value) {
    let s = schema_for::<T>().unwrap();
    assert_eq!(s["type"], "integer");
    assert_eq!(s.as_object().unwrap().len(), 3, "{s}");
    (s["minimum"].clone(), s["maximum"].clone())
}

#[test]
fn integer_formats_become_exact_bounds() {
    assert_eq!(bounds::<u8>(), (json!(0), json!(u8::MAX)));
    assert_eq!(bounds::<i8>(), (json!(i8::MIN), json!(i8::MAX)));
    assert_eq!(bounds::<u16>(), (json!(0), json!(u16::MAX)));
    assert_eq!(bounds::<i16>(), (json!(i16::MIN), json!(i16::MAX)));
    assert_eq!(bounds::<u32>(), (json!(0), json!(u32::MAX)));
    assert_eq!(bounds::<i32>(), (json!(i32::MIN), json!(i32::MAX)));
    assert_eq!(bounds::<u64>(), (json!(0), json!(u64::MAX)));
    assert_eq!(bounds::<i64>(), (json!(i64::MIN), json!(i64::MAX)));
    assert_eq!(bounds::<usize>(), (json!(0), json!(usize::MAX)));
    assert_eq!(bounds::<isize>(), (json!(isize::MIN), json!(isize::MAX)));
    // Clamped to what a serde_json::Value holds.
    assert_eq!(bounds::<u128>(), (json!(0), json!(u64::MAX)));
    assert_eq!(bounds::<i128>(), (json!(i64::MIN), json!(u64::MAX)));
    // The tighter of the declared and the format bound wins.
    let s = schema_for::<Ranged>().unwrap();
    assert_eq!(
        s["properties"]["tight"],
        json!({"type": "integer", "minimum": 5, "maximum": 255})
    );
    assert_eq!(
        s["properties"]["wide"],
        json!({"type": "integer", "minimum": -128, "maximum": 127})
    );
    assert_eq!(
        bridge(json!({"type": "integer", "format": "uint8", "minimum": 0.5})).unwrap(),
        json!({"type": "integer", "minimum": 0.5, "maximum": 255})
    );
}

#[test]
fn float_formats_are_dropped_other_formats_rejected() {
    assert_eq!(schema_for::<f32>().unwrap(), json!({"type": "number"}));
    assert_eq!(schema_for::<f64>().unwrap(), json!({"type": "number"}));
    let m = only_problem(
        json!({"type": "object", "properties": {"ip": {"type": "string", "format": "ipv4"}}}),
    );
    assert!(
        m.starts_with(r#"#/properties/ip: format "ipv4" cannot be checked by the subset"#),
        "{m}"
    );
    assert!(m.contains(r#"#[schemars(with = "String")]"#), "{m}");
    assert_eq!(
        only_problem(json!({"type": "string", "format": "uint8"})),
        r#"#: format "uint8" describes numbers but the type is "string""#
    );
}

#[derive(JsonSchema)]
struct WithString {
    #[schemars(with = "String")]
    ip: std::net::Ipv4Addr,
}

#[test]
fn with_string_is_the_documented_fix() {
    assert!(schema_for::<std::net::Ipv4Addr>().is_err());
    assert!(schema_for::<WithString>().is_ok());
}

// ---- enum / const ----

#[test]
fn enum_and_const_are_made_subset_legal() {
    assert_eq!(
        bridge(json!({"const": "a"})).unwrap(),
        json!({"type": "string", "const": "a"})
    );
    assert_eq!(
        bridge(json!({"enum": [1, 2.5]})).unwrap(),
        json!({"type": "number", "enum": [1, 2.5]})
    );
    assert_eq!(
        bridge(json!({"enum": ["a", 1, null, "b"]})).unwrap(),
        json!({"oneOf": [{"type": "string", "enum": ["a", "b"]}, {"type": "integer", "enum": [1]}, {"type": "null"}]})
    );
    // Members the type does not admit could never match.
    assert_eq!(
        bridge(json!({"type": "integer", "enum": [1, 1.5, "x"]})).unwrap(),
        json!({"type": "integer", "enum": [1]})
    );
    assert_eq!(
        problems(
            json!({"type": "object", "properties": {"c": {"const": {"a": 1}}, "e": {"enum": [[1], 2]}, "z": {"enum": [-0.0]}, "n": {"enum": []}}})
        ),
        [
            "#/properties/c: const values must be scalars (string, number, boolean or null): the subset cannot pin an object or array value",
            "#/properties/e: enum members must be scalars (string, number, boolean or null): the subset cannot pin an object or array value",
            "#/properties/z: enum members must be lossless JSON (-0 is not)",
            "#/properties/n: enum must be a non-empty array",
        ]
    );
    assert_eq!(
        only_problem(json!({"type": "string", "const": "a", "enum": ["b"]})),
        "#: no value can match this schema: no enum/const member has a declared type"
    );
}

// ---- boolean schemas, required ----

#[test]
fn boolean_schemas() {
    assert_eq!(bridge(json!(true)).unwrap(), json!({}));
    assert_eq!(schema_for::<serde_json::Value>().unwrap(), json!({}));
    assert_eq!(
        bridge(json!({"type": "array", "items": true})).unwrap(),
        json!({"type": "array"})
    );
    let m = only_problem(json!({"type": "object", "properties": {"never": false}}));
    assert!(
        m.starts_with("#/properties/never: the schema `false` accepts no value"),
        "{m}"
    );
    assert!(bridge(json!(false)).is_err());
}

#[test]
fn required_names_are_declared() {
    assert_eq!(
        bridge(json!({"type": "object", "required": ["a"]})).unwrap(),
        json!({"type": "object", "properties": {"a": {}}, "required": ["a"]})
    );
    assert_eq!(
        bridge(json!({"type": "object", "required": ["a", "a"], "additionalProperties": {"type": "string"}})).unwrap(),
        json!({"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"], "additionalProperties": {"type": "string"}})
    );
    assert!(
        only_problem(json!({"type": "object", "required": ["a"], "additionalProperties": false}))
            .contains("no value can match")
    );
}

// ---- keywords ----

#[derive(JsonSchema)]
struct Annotated {
    #[deprecated]
    #[schemars(extend("readOnly" = true, "writeOnly" = false, "$comment" = "note"))]
    a: bool,
}

#[test]
fn annotation_like_keywords_are_dropped() {
    #[allow(deprecated)]
    let s = schema_for::<Annotated>().unwrap();
    assert_eq!(s["properties"]["a"], json!({"type": "boolean"}));
}

#[test]
fn unsupported_keywords_are_errors_with_fixes() {
    let m = schema_for::<std::num::NonZeroI8>().unwrap_err().to_string();
    assert!(m.contains("`not` is not supported"), "{m}");
    let m = schema_for::<HashMap<u8, bool>>().unwrap_err().to_string();
    assert!(
        m.contains("patternProperties is not supported") && m.contains("HashMap<String, _>"),
        "{m}"
    );
    let m = schema_for::<(u8, String)>().unwrap_err().to_string();
    assert!(m.contains("tuples (prefixItems"), "{m}");
    assert_eq!(
        problems(json!({"type": "array", "items": [{"type": "string"}]})).len(),
        1
    );
    assert_eq!(
        problems(json!({"type": "string", "if": {}, "nullable": true, "title": 5})),
        [
            "#: keyword \"if\" is not supported by the subset (type/oneOf/properties/required/additionalProperties/items/enum/const/minimum/maximum/exclusiveMinimum/exclusiveMaximum/minLength/maxLength/pattern/minItems/maxItems/uniqueItems + annotations; the bridge also rewrites $ref, anyOf, allOf, format and unevaluatedProperties)",
            "#: `nullable` (OpenAPI 3.0) is not supported: generate the schema with draft 2020-12 settings, which use \"type\": [\"T\", \"null\"]",
            "#: title must be a string",
        ]
    );
    assert_eq!(
        problems(
            json!({"type": "object", "items": {}, "minLength": 1, "properties": {"x": {"minimum": 1}}})
        ),
        [
            "#: items does not apply to type \"object\"",
            "#: minLength does not apply to type \"object\"",
            "#/properties/x: minimum applies to one type only; the schema must declare \"type\"",
        ]
    );
}

#[test]
fn extension_keywords_pass_through() {
    let v = json!({"type": "object", "properties": {
        "s": {"type": "string", "minLength": 1, "maxLength": 3, "pattern": "^a"},
        "n": {"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 1},
        "a": {"type": "array", "items": {"type": "string"}, "minItems": 1, "maxItems": 2, "uniqueItems": true}
    }});
    assert_eq!(bridge(v.clone()).unwrap(), v);
    assert_eq!(
        problems(json!({"type": "string", "pattern": "(", "minLength": -1})),
        ["#: minLength must be a non-negative integer"]
    );
}

// ---- limits, errors ----

#[test]
fn deep_and_huge_inputs_are_errors_not_crashes() {
    let mut deep = json!({"type": "string"});
    for _ in 0..500 {
        deep = json!({"type": "array", "items": deep});
    }
    let m = only_problem(deep);
    assert!(
        m.contains(&format!("nested more than {MAX_DEPTH} levels")),
        "{m}"
    );
    // Each definition uses the next one three times: 3^15 nodes once inlined.
    let mut defs = serde_json::Map::new();
    for i in 0..15 {
        let next = json!({"$ref": format!("#/$defs/D{}", i + 1)});
        defs.insert(
            format!("D{i}"),
            json!({"type": "object", "properties": {"a": next, "b": next, "c": next}}),
        );
    }
    defs.insert("D15".into(), json!({"type": "string"}));
    let m = only_problem(json!({"$ref": "#/$defs/D0", "$defs": defs}));
    assert!(m.contains(&format!("more than {MAX_NODES} nodes")), "{m}");
}

#[test]
fn errors_list_every_problem_in_order() {
    let e = bridge(json!({"type": "object", "properties": {
        "a": {"type": "string", "format": "email"},
        "b": {"type": "array", "items": {"not": {}}},
        "c": false
    }}))
    .unwrap_err();
    let paths: Vec<&str> = e.problems().iter().map(BridgeProblem::path).collect();
    assert_eq!(
        paths,
        ["#/properties/a", "#/properties/b/items", "#/properties/c"]
    );
    assert!(e.to_string().starts_with(
        "cannot bridge the schemars schema into the subset: #/properties/a: format \"email\""
    ));
    assert_eq!(e.unlisted(), 0);
}

//! Unit tests of the bridge, one group per rule.

#![allow(dead_code)] // the derived types exist for their schemas

mod differential;

use super::*;
use crate::schema::assert_supported;
use schemars::{JsonSchema, Schema};
use serde_json::json;
use std::collections::HashMap;

fn bridge(v: Value) -> Result<Value, BridgeError> {
    from_schemars(&Schema::try_from(v).expect("object or bool"))
}

/// Every problem as `<path>: <message>`.
fn problems(v: Value) -> Vec<String> {
    bridge(v)
        .unwrap_err()
        .problems()
        .iter()
        .map(ToString::to_string)
        .collect()
}

fn only_problem(v: Value) -> String {
    let p = problems(v);
    assert_eq!(p.len(), 1, "{p:#?}");
    p.into_iter().next().unwrap_or_default()
}

// ---- $schema, title, descriptions ----

/// # A title
///
/// Some docs.
#[derive(JsonSchema)]
struct Titled {
    /// The field.
    a: bool,
}

#[derive(JsonSchema)]
struct Untitled {
    a: bool,
}

#[test]
fn drops_schema_keeps_doc_title_and_descriptions() {
    assert_eq!(
        bridge(json!({"$schema": "https://json-schema.org/draft/2020-12/schema", "title": "X", "type": "null"})).unwrap(),
        json!({"title": "X", "type": "null"})
    );
    assert_eq!(
        schema_for::<Titled>().unwrap(),
        json!({"title": "A title", "description": "Some docs.", "type": "object",
               "properties": {"a": {"description": "The field.", "type": "boolean"}}, "required": ["a"]})
    );
    // The schema-name title schemars adds to every root is dropped by `schema_for` only.
    assert_eq!(schema_for::<Untitled>().unwrap().get("title"), None);
    let raw = schemars::schema_for!(Untitled);
    assert_eq!(from_schemars(&raw).unwrap()["title"], "Untitled");
}

// ---- $ref / $defs / definitions ----

/// Inner docs.
#[derive(JsonSchema)]
struct Inner {
    n: u8,
}

#[derive(JsonSchema)]
struct UsesInner {
    /// Field docs win over the type's.
    first: Inner,
    second: Option<Inner>,
}

#[test]
fn inlines_refs_with_sibling_annotations_winning() {
    let inner = json!({"type": "object", "properties": {"n": {"type": "integer", "minimum": 0, "maximum": 255}}, "required": ["n"]});
    let mut documented = inner.clone();
    documented["description"] = json!("Inner docs.");
    let mut field = inner.clone();
    field["description"] = json!("Field docs win over the type's.");
    let expected = json!({"type": "object",
        "properties": {"first": field, "second": {"oneOf": [documented, {"type": "null"}]}},
        "required": ["first"]});
    // Default settings: `$defs` + `$ref` with a `description` sibling.
    let raw = schemars::schema_for!(UsesInner);
    assert!(raw.get("$defs").is_some());
    let mut out = from_schemars(&raw).unwrap();
    out.as_object_mut().unwrap().shift_remove("title");
    assert_eq!(out, expected);
    // Draft 7: `definitions`, and `allOf: [{$ref}]` beside the description.
    let raw = SchemaSettings::draft07()
        .into_generator()
        .into_root_schema_for::<UsesInner>();
    assert!(raw.get("definitions").is_some());
    let mut out = from_schemars(&raw).unwrap();
    out.as_object_mut().unwrap().shift_remove("title");
    assert_eq!(out, expected);
    // Pointers are decoded (`~1`, `%25`).
    assert_eq!(
        bridge(json!({"$ref": "#/$defs/a~1b%25", "$defs": {"a/b%": {"type": "string"}}})).unwrap(),
        json!({"type": "string"})
    );
}

#[derive(JsonSchema)]
struct Tree {
    children: Vec<Tree>,
}

#[derive(JsonSchema)]
struct Ping {
    pong: Option<Box<Pong>>,
}

#[derive(JsonSchema)]
struct Pong {
    ping: Ping,
}

#[test]
fn recursive_types_are_errors_naming_the_type() {
    let e = schema_for::<Tree>().unwrap_err();
    assert_eq!(e.problems().len(), 1);
    assert_eq!(e.problems()[0].path(), "#/properties/children/items");
    assert!(
        e.problems()[0]
            .message()
            .starts_with(r##"recursive type "Tree" ($ref "#")"##)
    );
    let e = from_schemars(&schemars::schema_for!(Pong)).unwrap_err();
    assert!(e.to_string().contains(r#"recursive type "Pong""#), "{e}");
    let m = only_problem(
        json!({"$defs": {"Node": {"type": "object", "properties": {"c": {"$ref": "#/$defs/Node"}}}}, "$ref": "#/$defs/Node"}),
    );
    assert!(
        m.starts_with(r#"#/properties/c: recursive type "Node""#),
        "{m}"
    );
    // A shared, non-recursive definition is inlined at every use.
    assert_eq!(
        bridge(json!({"type": "array", "items": {"$ref": "#/$defs/S"}, "$defs": {"S": {"type": "object", "properties": {"a": {"$ref": "#/$defs/T"}, "b": {"$ref": "#/$defs/T"}}}, "T": {"type": "string"}}})).unwrap(),
        json!({"type": "array", "items": {"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "string"}}}})
    );
}

#[test]
fn bad_refs_are_errors() {
    assert_eq!(
        problems(
            json!({"properties": {}, "type": "object", "allOf": [{"$ref": "other.json#/x"}, {"$ref": "#/nothing"}, {"$ref": "#anchor"}, {"$ref": 5}]})
        ),
        [
            r#"#/allOf/0: $ref "other.json#/x" is not a local reference (#...); only references inside the schema can be inlined"#,
            r##"#/allOf/1: $ref "#/nothing" points to nothing in the schema"##,
            r##"#/allOf/2: $ref "#anchor" is not a JSON pointer (anchors are not supported)"##,
            "#/allOf/3: $ref must be a string",
        ]
    );
}

// ---- type arrays ----

#[derive(JsonSchema)]
enum Color {
    Red,
    Green,
}

#[test]
fn type_arrays_become_one_of() {
    assert_eq!(
        bridge(json!({"description": "d", "type": ["integer", "null"], "format": "uint8", "minimum": 1})).unwrap(),
        json!({"description": "d", "oneOf": [{"type": "integer", "minimum": 1, "maximum": 255}, {"type": "null"}]})
    );
    assert_eq!(
        schema_for::<Option<Color>>().unwrap(),
        json!({"oneOf": [{"type": "string", "enum": ["Red", "Green"]}, {"type": "null"}]})
    );
    // Each keyword goes to the branch of its type; members are split by type.
    assert_eq!(
        bridge(json!({"type": ["string", "array", "boolean"], "minLength": 1, "items": {"type": "null"}, "enum": ["a", true, 3]})).unwrap(),
        json!({"oneOf": [{"type": "string", "enum": ["a"], "minLength": 1}, {"type": "boolean", "enum": [true]}]})
    );
    assert_eq!(
        bridge(json!({"type": ["string", "null"], "const": null})).unwrap(),
        json!({"type": "null"})
    );
    // `number` already admits every integer.
    assert_eq!(
        bridge(json!({"type": ["integer", "number"]})).unwrap(),
        json!({"type": "number"})
    );
    assert_eq!(
        only_problem(json!({"type": ["string", "null"], "enum": [1]})),
        "#: no value can match this schema: no enum/const member has a declared type"
    );
}

// ---- anyOf ----

#[derive(JsonSchema)]
#[serde(untagged)]
enum Loose {
    A { x: String },
    B { y: u8 },
}

#[derive(JsonSchema)]
#[serde(untagged, deny_unknown_fields)]
enum Strict {
    A { x: String },
    B { y: u8 },
}

#[test]
fn any_of_becomes_one_of_when_disjoint() {
    let n = json!({"type": "null"});
    // Different types, nested anyOf spliced.
    assert_eq!(
        bridge(json!({"anyOf": [{"anyOf": [{"type": "string"}, {"type": "integer"}]}, n]}))
            .unwrap(),
        json!({"oneOf": [{"type": "string"}, {"type": "integer"}, n]})
    );
    // Disjoint members; a required tag with distinct constants.
    assert!(
        bridge(
            json!({"anyOf": [{"type": "string", "enum": ["a"]}, {"type": "string", "const": "b"}]})
        )
        .is_ok()
    );
    let tagged = |t: &str| json!({"type": "object", "properties": {"t": {"type": "string", "const": t}}, "required": ["t"]});
    assert_eq!(
        bridge(json!({"anyOf": [tagged("a"), tagged("b")]})).unwrap(),
        json!({"oneOf": [tagged("a"), tagged("b")]})
    );
    // A required property the other branch's `additionalProperties: false` forbids.
    assert!(schema_for::<Strict>().is_ok());
    // Anything-goes branch: the whole anyOf accepts anything; duplicates collapse.
    assert_eq!(
        bridge(json!({"anyOf": [{"type": "string"}, true]})).unwrap(),
        json!({})
    );
    assert_eq!(
        bridge(json!({"anyOf": [{"type": "string"}, {"type": "string"}]})).unwrap(),
        json!({"type": "string"})
    );
}

#[test]
fn overlapping_any_of_is_an_error() {
    let e = schema_for::<Loose>().unwrap_err();
    assert_eq!(e.problems().len(), 1);
    assert_eq!(e.problems()[0].path(), "#");
    assert!(
        e.problems()[0]
            .message()
            .starts_with("anyOf branches 0 and 1 may both match one value")
    );
    assert!(
        only_problem(json!({"anyOf": [{"type": "integer"}, {"type": "number"}]}))
            .contains("branches 0 and 1")
    );
    assert!(only_problem(json!({"anyOf": [{"type": "null"}, {"type": "string"}, {"type": "string", "enum": ["a"]}]})).contains("branches 1 and 2"));
}

#[test]
fn one_of_is_kept() {
    let v = json!({"oneOf": [{"type": "integer"}, {"type": "number"}]});
    assert_eq!(bridge(v.clone()).unwrap(), v);
    assert_eq!(
        bridge(json!({"oneOf": [{"type": "integer"}]})).unwrap(),
        json!({"type": "integer"})
    );
}

// ---- allOf, flatten ----

#[derive(JsonSchema)]
#[serde(tag = "kind")]
enum Shape {
    Dot,
    Circle { r: f64 },
}

#[derive(JsonSchema)]
struct Flat {
    id: String,
    #[serde(flatten)]
    shape: Shape,
}

#[derive(JsonSchema)]
#[serde(deny_unknown_fields)]
struct FlatDeny {
    id: String,
    #[serde(flatten)]
    shape: Shape,
}

#[derive(JsonSchema)]
struct FlatOption {
    id: String,
    #[serde(flatten)]
    shape: Option<Shape>,
}

#[derive(JsonSchema)]
struct TwoFlat {
    #[serde(flatten)]
    a: Shape,
    #[serde(flatten)]
    b: Color2,
}

#[derive(JsonSchema)]
#[serde(tag = "color")]
enum Color2 {
    Red,
    Blue,
}

#[test]
fn keywords_beside_one_of_are_pushed_into_branches() {
    let id = json!({"type": "string"});
    let kind = |k: &str| json!({"type": "string", "const": k});
    let r = json!({"type": "number"});
    assert_eq!(
        schema_for::<Flat>().unwrap(),
        json!({"oneOf": [
            {"type": "object", "properties": {"kind": kind("Dot"), "id": id}, "required": ["kind", "id"]},
            {"type": "object", "properties": {"kind": kind("Circle"), "r": r, "id": id}, "required": ["kind", "r", "id"]}
        ]})
    );
    // deny_unknown_fields: schemars says `unevaluatedProperties: false`.
    let out = schema_for::<FlatDeny>().unwrap();
    for b in out["oneOf"].as_array().unwrap() {
        assert_eq!(b["additionalProperties"], json!(false));
    }
    // An optional flattened enum: `anyOf: [{oneOf}, {}]` accepts anything.
    assert_eq!(
        schema_for::<FlatOption>().unwrap(),
        json!({"type": "object", "properties": {"id": id}, "required": ["id"]})
    );
    // Two flattened enums: every pair of variants.
    let both = schema_for::<TwoFlat>().unwrap();
    let pairs: Vec<(&Value, &Value)> = both["oneOf"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| {
            (
                &b["properties"]["kind"]["const"],
                &b["properties"]["color"]["const"],
            )
        })
        .collect();
    assert_eq!(
        pairs,
        [
            (&json!("Dot"), &json!("Red")),
            (&json!("Dot"), &json!("Blue")),
            (&json!("Circle"), &json!("Red")),
            (&json!("Circle"), &json!("Blue"))
        ]
    );
}

#[test]
fn all_of_is_merged() {
    assert_eq!(
        bridge(json!({"allOf": [
            {"type": "object", "properties": {"a": {"type": "integer", "minimum": 0}}, "required": ["a"]},
            {"type": "object", "properties": {"b": {"type": "string"}}, "required": ["b"]},
            {"type": "object", "properties": {"a": {"type": "integer", "minimum": 0}}}
        ]})).unwrap(),
        json!({"type": "object", "properties": {"a": {"type": "integer", "minimum": 0}, "b": {"type": "string"}}, "required": ["a", "b"]})
    );
    assert_eq!(
        bridge(json!({"type": "integer", "minimum": 0, "maximum": 9, "allOf": [{"type": "number", "minimum": 2, "maximum": 20}]})).unwrap(),
        json!({"type": "integer", "minimum": 2, "maximum": 9})
    );
    assert_eq!(
        only_problem(json!({"type": "string", "allOf": [{"type": "integer"}]})),
        "#: no value can match this schema: its parts (type, $ref, allOf, oneOf/anyOf) contradict each other"
    );
    assert_eq!(
        only_problem(
            json!({"allOf": [{"type": "object", "properties": {"a": {"type": "string"}}}, {"type": "object", "properties": {"a": {"type": "integer"}}}]})
        ),
        r#"#: property "a" is declared with two different schemas by parts being merged"#
    );
    assert!(
        only_problem(json!({"allOf": [{"type": "object", "additionalProperties": false}, {"type": "object", "properties": {"a": {}}}]}))
            .contains("additionalProperties of one merged part")
    );
}

#[test]
fn unevaluated_properties_become_additional_properties() {
    assert_eq!(
        bridge(json!({"type": "object", "properties": {"a": {}}, "unevaluatedProperties": {"type": "string"}})).unwrap(),
        json!({"type": "object", "properties": {"a": {}}, "additionalProperties": {"type": "string"}})
    );
    assert_eq!(
        bridge(
            json!({"type": "object", "additionalProperties": true, "unevaluatedProperties": false})
        )
        .unwrap(),
        json!({"type": "object", "additionalProperties": true})
    );
    assert_eq!(
        only_problem(json!({"unevaluatedProperties": false})),
        "#: unevaluatedProperties needs type \"object\" (or object branches)"
    );
}

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

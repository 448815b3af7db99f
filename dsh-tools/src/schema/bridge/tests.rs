//! Unit tests of the bridge, one group per rule.

#![allow(dead_code)] // the derived types exist for their schemas

mod differential;
mod keywords;

use super::*;
use crate::schema::assert_supported;
use schemars::generate::SchemaSettings;
use schemars::{JsonSchema, Schema};
use serde_json::{Value, json};

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

/// Issue 39.1: a recursive `$ref` is kept as a reference to a named type in the lossy
/// conversion (mutual recursion too), not reported as left out; the root's own recursion is.
#[test]
fn the_lossy_conversion_names_recursive_types() {
    let schema = json!({
        "type": "object",
        "properties": {"root": {"$ref": "#/$defs/Tree"}, "a": {"$ref": "#/$defs/A"}},
        "$defs": {
            "Tree": {"type": "object", "properties": {"kids": {"type": "array", "items": {"$ref": "#/$defs/Tree"}}}},
            "A": {"type": "object", "properties": {"b": {"$ref": "#/$defs/B"}}},
            "B": {"type": "object", "properties": {"a": {"$ref": "#/$defs/A"}}}
        }
    });
    let shown = from_foreign_lossy(&schema);
    assert!(shown.dropped.is_empty(), "{:?}", shown.dropped);
    assert!(assert_supported(&shown.schema).is_ok());
    let mut names: Vec<(&str, &str)> = shown
        .named
        .iter()
        .map(|n| (n.pointer.as_str(), n.name.as_str()))
        .collect();
    names.sort();
    assert_eq!(names, [("/$defs/A", "A"), ("/$defs/Tree", "Tree")]);
    let tree = shown.named.iter().find(|n| n.name == "Tree").unwrap();
    assert_eq!(
        tree.schema["properties"]["kids"]["items"],
        json!({"title": reference_title("/$defs/Tree")})
    );
    assert_eq!(
        shown.schema["properties"]["root"]["properties"]["kids"]["items"]["title"],
        "$ref #/$defs/Tree"
    );
    // The root's own recursion has no name to give: shown as any value, and said.
    let own = from_foreign_lossy(&json!({"type": "object", "properties": {"me": {"$ref": "#"}}}));
    assert!(own.named.is_empty());
    assert_eq!(own.dropped.len(), 1);
    assert!(
        own.dropped[0]
            .message()
            .starts_with("shown as any value: recursive type")
    );
}

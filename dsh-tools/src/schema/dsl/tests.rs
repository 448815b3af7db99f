//! Unit tests of the author DSL.

use super::compile::*;
use super::*;
use crate::json::json_equal;
use crate::json::{drop_deep, to_compact_string};
use crate::schema::JsonSchemaError;
use serde_json::json;
use serde_json::{Map, Value};

fn value_err(spec: Value) -> Vec<String> {
    compile_value_spec(&spec).unwrap_err().into_violations()
}

fn params_err(spec: Value) -> Vec<String> {
    compile_parameter_spec(&spec).unwrap_err().into_violations()
}

fn text(v: &Value) -> String {
    to_compact_string(v)
}

const TYPE_MESSAGE: &str =
    "type must be string/number/integer/boolean/null/array/object/json, or use oneOf";

#[test]
fn compiled_key_order_is_fixed() {
    let cases = [
        (
            json!({"properties": {"id": {"type": "integer", "required": true}},
                   "additionalProperties": true, "title": "T", "type": "object", "description": "D"}),
            r#"{"type":"object","description":"D","title":"T","additionalProperties":true,"properties":{"id":{"type":"integer"}},"required":["id"]}"#,
        ),
        (
            json!({"const": "x", "enum": ["x"], "examples": ["x"], "type": "string", "default": "x"}),
            r#"{"type":"string","default":"x","examples":["x"],"enum":["x"],"const":"x"}"#,
        ),
        (
            json!({"description": "maybe text", "oneOf": [{"type": "string"}, {"type": "null"}]}),
            r#"{"oneOf":[{"type":"string"},{"type":"null"}],"description":"maybe text"}"#,
        ),
        (
            json!({"items": {"type": "json"}, "title": "any", "type": "array"}),
            r#"{"type":"array","title":"any","items":{}}"#,
        ),
        (
            json!({"examples": [{"nested": true}], "default": null, "title": "Any JSON",
                   "type": "json", "description": "anything"}),
            r#"{"description":"anything","title":"Any JSON","default":null,"examples":[{"nested":true}]}"#,
        ),
        (
            json!({"type": "object", "additionalProperties": false, "properties": {}}),
            r#"{"type":"object","additionalProperties":false,"properties":{}}"#,
        ),
        (
            json!({"oneOf": [{"type": "json"}, {"type": "null"}]}),
            r#"{"oneOf":[{},{"type":"null"}]}"#,
        ),
    ];
    for (spec, expected) in cases {
        assert_eq!(
            text(&compile_value_spec(&spec).unwrap()),
            expected,
            "{spec}"
        );
    }
}

#[test]
fn parameter_root_is_open_and_lists_required_in_declaration_order() {
    let empty = compile_parameter_spec(&json!({})).unwrap();
    assert_eq!(text(&empty), r#"{"type":"object","properties":{}}"#);
    let none_required = compile_parameter_spec(&json!({"a": {"type": "string"}})).unwrap();
    assert_eq!(
        text(&none_required),
        r#"{"type":"object","properties":{"a":{"type":"string"}}}"#
    );
    let spec = json!({
        "b": {"type": "string", "required": true},
        "a": {"required": true, "oneOf": [{"type": "string"}, {"type": "null"}]},
        "c": {"type": "object", "additionalProperties": true,
              "properties": {"z": {"type": "json", "required": true}, "y": {"type": "null"}}},
        "__proto__": {"type": "boolean", "required": true}
    });
    assert_eq!(
        text(&compile_parameter_spec(&spec).unwrap()),
        concat!(
            r#"{"type":"object","properties":{"b":{"type":"string"},"#,
            r#""a":{"oneOf":[{"type":"string"},{"type":"null"}]},"#,
            r#""c":{"type":"object","additionalProperties":true,"properties":{"z":{},"y":{"type":"null"}},"required":["z"]},"#,
            r#""__proto__":{"type":"boolean"}},"required":["b","a","__proto__"]}"#
        )
    );
}

#[test]
fn every_author_message() {
    let t = TYPE_MESSAGE;
    let value_cases = [
        (
            json!(null),
            "schema must be a value schema object".to_owned(),
        ),
        (json!([]), "schema must be a value schema object".to_owned()),
        (
            json!({"type": "array", "items": 42}),
            "schema.items must be a value schema object".to_owned(),
        ),
        (
            json!({"type": "string", "required": true}),
            "schema.required is not supported by the value schema DSL".to_owned(),
        ),
        (
            json!({"type": "array", "items": {"type": "string", "required": true}}),
            "schema.items.required is not supported by the value schema DSL".to_owned(),
        ),
        (
            json!({"oneOf": [{"type": "string", "required": true}, {"type": "null"}]}),
            "schema.oneOf[0].required is not supported by the value schema DSL".to_owned(),
        ),
        (
            json!({"oneOf": [{"type": "null"}], "required": true}),
            "schema.required is not supported by the value schema DSL".to_owned(),
        ),
        (
            json!({"type": "string", "pattern": "^a"}),
            "schema.pattern is not supported by the value schema DSL".to_owned(),
        ),
        (
            json!({"type": "json", "items": {}}),
            "schema.items is not supported by the value schema DSL".to_owned(),
        ),
        (
            json!({"type": "array", "enum": []}),
            "schema.enum is not supported by the value schema DSL".to_owned(),
        ),
        (
            json!({"type": "string", "oneOf": [{"type": "string"}, {"type": "null"}]}),
            "schema cannot declare both type and oneOf".to_owned(),
        ),
        (
            json!({"oneOf": "not-an-array"}),
            "schema.oneOf must be an array of at least two value schemas".to_owned(),
        ),
        (
            json!({"type": "object"}),
            "schema.additionalProperties must be explicitly true or false".to_owned(),
        ),
        (
            json!({"type": "object", "additionalProperties": "yes"}),
            "schema.additionalProperties must be explicitly true or false".to_owned(),
        ),
        (
            json!({"type": "array", "items": {"type": "object"}}),
            "schema.items.additionalProperties must be explicitly true or false".to_owned(),
        ),
        (
            json!({"type": "object", "additionalProperties": true, "properties": []}),
            "schema.properties must be an object of value schemas".to_owned(),
        ),
        (
            json!({"type": "object", "additionalProperties": true, "properties": {"a": 1}}),
            "schema.properties.a must be a value schema object".to_owned(),
        ),
        (
            json!({"type": "object", "additionalProperties": true, "properties": {"a": {"type": "null", "required": false}}}),
            "schema.properties.a.required must be true when present".to_owned(),
        ),
        (
            json!({"type": "string", "enum": "a"}),
            "schema.enum must be a non-empty array of scalar values".to_owned(),
        ),
        (json!({}), format!("schema.{t}")),
        (json!({"type": ["string", "null"]}), format!("schema.{t}")),
        (json!({"type": "String"}), format!("schema.{t}")),
    ];
    for (spec, expected) in value_cases {
        assert_eq!(value_err(spec.clone()), [expected], "{spec}");
    }
    let param_cases = [
        (
            json!(null),
            "parameters must be an object of value schemas".to_owned(),
        ),
        (
            json!([]),
            "parameters must be an object of value schemas".to_owned(),
        ),
        (
            json!({"bad": 42}),
            "parameters.bad must be a value schema object".to_owned(),
        ),
        (json!({"x": {"type": "weird"}}), format!("parameters.x.{t}")),
        (
            json!({"x": {"type": "string", "required": "yes"}}),
            "parameters.x.required must be true when present".to_owned(),
        ),
        (
            json!({"config": {"type": "object", "additionalProperties": true,
                              "properties": {"host": {"type": "string", "required": false}}}}),
            "parameters.config.properties.host.required must be true when present".to_owned(),
        ),
        (
            json!({"u": {"oneOf": [{"type": "null"}, {"type": "array", "items": {"type": "x"}}]}}),
            format!("parameters.u.oneOf[1].items.{t}"),
        ),
    ];
    for (spec, expected) in param_cases {
        assert_eq!(params_err(spec.clone()), [expected], "{spec}");
    }
}

#[test]
fn author_check_order() {
    let t = TYPE_MESSAGE;
    let cases = [
        // A union: unknown keys (type is known there) before the conflict, the conflict
        // before the oneOf shape.
        (
            json!({"oneOf": 1, "type": "string", "extra": 1}),
            "schema.extra is not supported by the value schema DSL".to_owned(),
        ),
        (
            json!({"type": "string", "oneOf": 1}),
            "schema cannot declare both type and oneOf".to_owned(),
        ),
        // The type value decides first, then unknown keys, then openness / enum shape.
        (json!({"type": "weird", "extra": 1}), format!("schema.{t}")),
        (json!({"extra": 1}), format!("schema.{t}")),
        (
            json!({"type": "object", "extra": 1}),
            "schema.extra is not supported by the value schema DSL".to_owned(),
        ),
        (
            json!({"type": "object", "properties": []}),
            "schema.additionalProperties must be explicitly true or false".to_owned(),
        ),
        (
            json!({"type": "string", "enum": "a", "extra": 1}),
            "schema.extra is not supported by the value schema DSL".to_owned(),
        ),
        // A property entry: object-ness, then `required`, then the node itself.
        (
            json!({"type": "object", "additionalProperties": true, "properties": {"a": {"type": "weird", "required": false}}}),
            "schema.properties.a.required must be true when present".to_owned(),
        ),
        // A parent before its children; children depth-first in declaration order.
        (
            json!({"type": "array", "extra": 1, "items": {"type": "weird"}}),
            "schema.extra is not supported by the value schema DSL".to_owned(),
        ),
        (
            json!({"type": "object", "additionalProperties": true,
                   "properties": {"a": {"type": "weird"}, "b": {"type": "string", "extra": 1}}}),
            format!("schema.properties.a.{t}"),
        ),
        (
            json!({"oneOf": [{"type": "array", "items": {"type": "x"}}, {"type": "y"}]}),
            format!("schema.oneOf[0].items.{t}"),
        ),
    ];
    for (spec, expected) in cases {
        assert_eq!(value_err(spec.clone()), [expected], "{spec}");
    }
    let first_only = params_err(json!({"a": {"type": "a"}, "b": {"type": "b"}}));
    assert_eq!(first_only, [format!("parameters.a.{t}")]);
}

#[test]
fn raw_violations_are_all_reported_rooted_at_schema() {
    assert_eq!(
        params_err(json!({"n": {"type": "number", "enum": ["1", "2"]}})),
        ["schema.properties.n.enum must be a non-empty array of number values"]
    );
    assert_eq!(
        value_err(json!({"type": "string", "description": 5, "enum": [], "title": "ok"})),
        [
            "schema.description must be a string",
            "schema.enum must be a non-empty array of string values"
        ]
    );
    assert_eq!(
        value_err(json!({"type": "string", "enum": ["a"], "const": "b"})),
        ["schema.const must be one of schema.enum when both are declared"]
    );
    assert_eq!(
        value_err(json!({"type": "integer", "const": 1.5})),
        ["schema.const must be a integer value"]
    );
    assert_eq!(
        value_err(json!({"oneOf": [{"type": "string"}]})),
        ["schema.oneOf must be an array of at least two schemas"]
    );
    assert_eq!(
        value_err(json!({"type": "json", "default": -0.0})),
        ["schema.default annotation must be lossless JSON data"]
    );
    assert_eq!(
        params_err(json!({
            "a": {"type": "null", "const": 1},
            "b": {"type": "array", "items": {"type": "boolean", "enum": [1]}}
        })),
        [
            "schema.properties.a.const must be a null value",
            "schema.properties.b.items.enum must be a non-empty array of boolean values"
        ]
    );
    // Numbers follow the lossless model: `1.0` is an integer.
    assert!(compile_value_spec(&json!({"type": "integer", "enum": [1.0, 2]})).is_ok());
    let err = JsonSchemaError::new(params_err(json!({"n": {"type": "integer", "enum": [0.5]}})));
    assert_eq!(
        err.to_string(),
        "unsupported JSON schema: schema.properties.n.enum must be a non-empty array of integer values"
    );
}

fn sample() -> ValueSchemaSpec {
    ValueSchemaSpec::object(false)
        .description("A job")
        .title("Job")
        .default(json!({"name": "x"}))
        .examples(json!([{"name": "y"}]))
        .property("name", PropertySpec::required(ValueSchemaSpec::string()))
        .property(
            "retries",
            ValueSchemaSpec::integer()
                .enum_values([1, 2, 3])
                .const_value(2),
        )
        .property("ratio", ValueSchemaSpec::number().default(0.5))
        .property("dry_run", ValueSchemaSpec::boolean())
        .property(
            "tags",
            ValueSchemaSpec::array_of(ValueSchemaSpec::string().title("tag")),
        )
        .property("any", ValueSchemaSpec::array())
        .property("extra", ValueSchemaSpec::json().description("free form"))
        .property(
            "parent",
            ValueSchemaSpec::one_of([
                ValueSchemaSpec::null(),
                ValueSchemaSpec::object(true).properties(ParameterSchemaSpec::new()),
            ])
            .description("maybe"),
        )
}

#[test]
fn typed_specs_compile_like_their_json() {
    let spec = sample();
    let compiled = spec.to_json_schema().unwrap();
    assert_eq!(
        text(&compiled),
        concat!(
            r#"{"type":"object","description":"A job","title":"Job","default":{"name":"x"},"#,
            r#""examples":[{"name":"y"}],"additionalProperties":false,"properties":{"#,
            r#""name":{"type":"string"},"retries":{"type":"integer","enum":[1,2,3],"const":2},"#,
            r#""ratio":{"type":"number","default":0.5},"dry_run":{"type":"boolean"},"#,
            r#""tags":{"type":"array","items":{"type":"string","title":"tag"}},"#,
            r#""any":{"type":"array"},"extra":{"description":"free form"},"#,
            r#""parent":{"oneOf":[{"type":"null"},{"type":"object","additionalProperties":true,"properties":{}}],"description":"maybe"}},"#,
            r#""required":["name"]}"#
        )
    );
    assert_eq!(
        text(&compile_value_spec(&spec.to_author_json()).unwrap()),
        text(&compiled)
    );
    // Raw-pass errors reach typed specs too.
    let bad = ValueSchemaSpec::one_of([
        ValueSchemaSpec::string().enum_values([1]),
        ValueSchemaSpec::number().description("n").const_value("x"),
    ]);
    assert_eq!(
        bad.to_json_schema().unwrap_err().into_violations(),
        [
            "schema.oneOf[0].enum must be a non-empty array of string values",
            "schema.oneOf[1].const must be a number value"
        ]
    );
    let lonely = ValueSchemaSpec::one_of([ValueSchemaSpec::string()]);
    assert_eq!(
        lonely.to_json_schema().unwrap_err().into_violations(),
        ["schema.oneOf must be an array of at least two schemas"]
    );
    // Kind-specific builders leave other kinds alone.
    assert_eq!(
        ValueSchemaSpec::string()
            .items(ValueSchemaSpec::null())
            .property("a", ValueSchemaSpec::null()),
        ValueSchemaSpec::string()
    );
    assert_eq!(
        ValueSchemaSpec::array().enum_values([1]).const_value(1),
        ValueSchemaSpec::array()
    );
}

#[test]
fn round_trip_typed_json_typed() {
    let spec = sample();
    let author = spec.to_author_json();
    assert_eq!(
        author["properties"]["name"],
        json!({"type": "string", "required": true})
    );
    assert_eq!(ValueSchemaSpec::from_json(&author).unwrap(), spec);
    assert_eq!(ValueSchemaSpec::try_from(&author).unwrap(), spec);
    assert_eq!(spec.clone(), spec);
    assert_ne!(spec.clone().title("other"), spec);

    let via_serde: ValueSchemaSpec =
        serde_json::from_value(serde_json::to_value(&spec).unwrap()).unwrap();
    assert_eq!(via_serde, spec);
    let text_form = serde_json::to_string(&spec).unwrap();
    assert_eq!(
        serde_json::from_str::<ValueSchemaSpec>(&text_form).unwrap(),
        spec
    );

    let params = ParameterSchemaSpec::new()
        .required("path", ValueSchemaSpec::string())
        .optional("nested", sample())
        .required(
            "path",
            ValueSchemaSpec::string().description("replaced in place"),
        );
    assert_eq!(params.len(), 2);
    assert_eq!(
        params.iter().map(|(n, _)| n).collect::<Vec<_>>(),
        ["path", "nested"]
    );
    assert!(params.get("path").is_some_and(|p| p.required));
    let author = params.to_author_json();
    assert_eq!(ParameterSchemaSpec::from_json(&author).unwrap(), params);
    let via_serde: ParameterSchemaSpec =
        serde_json::from_value(serde_json::to_value(&params).unwrap()).unwrap();
    assert_eq!(via_serde, params);
    assert_eq!(
        text(&params.to_json_schema().unwrap()),
        text(&compile_parameter_spec(&author).unwrap())
    );
    assert_eq!(
        format!("{:?}", ValueSchemaSpec::string().enum_values(["a"])),
        r#"ValueSchemaSpec({"type":"string","enum":["a"]})"#
    );
}

#[test]
fn deserialize_reports_the_spec_message() {
    let err = serde_json::from_value::<ValueSchemaSpec>(json!({"type": "object"})).unwrap_err();
    assert_eq!(
        err.to_string(),
        "unsupported JSON schema: schema.additionalProperties must be explicitly true or false"
    );
    let err = serde_json::from_value::<ParameterSchemaSpec>(
        json!({"n": {"type": "number", "enum": ["1"]}}),
    )
    .unwrap_err();
    assert_eq!(
        err.to_string(),
        "unsupported JSON schema: schema.properties.n.enum must be a non-empty array of number values"
    );
    let err = ParameterSchemaSpec::from_json(&json!([])).unwrap_err();
    assert_eq!(
        err.violations(),
        ["parameters must be an object of value schemas"]
    );
}

const DEPTH: usize = 100_000;

/// Runs `f` on a thread with a 256 KiB stack.
fn on_small_stack(f: impl FnOnce() + Send + 'static) {
    std::thread::Builder::new()
        .stack_size(256 * 1024)
        .spawn(f)
        .unwrap()
        .join()
        .unwrap();
}

fn nest(leaf: Value, wrap: impl Fn(Value) -> Value) -> Value {
    let mut v = leaf;
    for _ in 0..DEPTH {
        v = wrap(v);
    }
    v
}

fn array_of(items: Value) -> Value {
    let mut m = Map::new();
    m.insert("type".to_owned(), json!("array"));
    m.insert("items".to_owned(), items);
    Value::Object(m)
}

fn one_of(first: Value) -> Value {
    let mut m = Map::new();
    m.insert(
        "oneOf".to_owned(),
        Value::Array(vec![first, json!({"type": "null"})]),
    );
    Value::Object(m)
}

#[test]
fn deep_specs_compile_on_a_small_stack() {
    let items = nest(json!({"type": "string"}), array_of);
    let unions = nest(json!({"type": "string"}), one_of);
    let bad_leaf = nest(json!({"type": "weird"}), array_of);
    let bad_raw = nest(json!({"type": "string", "enum": []}), one_of);
    on_small_stack(move || {
        for spec in [&items, &unions] {
            // Array and oneOf chains compile to themselves.
            let compiled = compile_value_spec(spec).unwrap();
            assert_eq!(to_compact_string(&compiled), to_compact_string(spec));
            drop_deep(compiled);
        }
        // Typed: JSON -> typed -> clone / eq -> compiled, and as a parameter.
        let typed = ValueSchemaSpec::from_json(&unions).unwrap();
        let copy = typed.clone();
        assert_eq!(copy, typed);
        drop(copy);
        let params = ParameterSchemaSpec::new().required("deep", typed);
        let compiled = params.to_json_schema().unwrap();
        assert!(json_equal(&compiled["properties"]["deep"], &unions));
        drop_deep(compiled);
        let author = params.to_author_json();
        assert!(ParameterSchemaSpec::from_json(&author).is_ok_and(|p| p == params));
        drop_deep(author);
        drop(params);
        // Paths past 4 KiB keep their start and end, with a note of what was cut.
        let err = compile_value_spec(&bad_leaf).unwrap_err().into_violations();
        assert_eq!(err.len(), 1);
        assert!(
            err[0].starts_with("schema.items.items"),
            "{}",
            &err[0][..64]
        );
        assert!(err[0].contains(" bytes of path)…"));
        assert!(err[0].ends_with(&format!(".items.items.{TYPE_MESSAGE}")));
        assert!(err[0].len() < 8 * 1024);
        let err = compile_value_spec(&bad_raw).unwrap_err().into_violations();
        assert_eq!(err.len(), 1);
        assert!(err[0].starts_with("schema.oneOf[0].oneOf[0]"));
        assert!(err[0].ends_with(".oneOf[0].enum must be a non-empty array of string values"));
        for v in [items, unions, bad_leaf, bad_raw] {
            drop_deep(v);
        }
    });
}

#[test]
fn deep_typed_specs_built_in_code() {
    on_small_stack(|| {
        let mut spec = ValueSchemaSpec::integer().default(json!([[[1]]]));
        for i in 0..DEPTH {
            spec = if i % 2 == 0 {
                ValueSchemaSpec::array_of(spec)
            } else {
                ValueSchemaSpec::object(true).property("next", PropertySpec::required(spec))
            };
        }
        let compiled = spec.to_json_schema().unwrap();
        let author = spec.to_author_json();
        let again = ValueSchemaSpec::from_json(&author).unwrap();
        assert_eq!(again, spec);
        drop_deep(author);
        drop_deep(compiled);
        drop(again);
        drop(spec);
    });
}

#[test]
fn deep_annotation_values_are_cloned_and_dropped_without_recursion() {
    let deep = nest(json!(1), |v| Value::Array(vec![v]));
    on_small_stack(move || {
        let spec = ValueSchemaSpec::json().default(deep);
        let copy = spec.clone();
        assert_eq!(copy, spec);
        let compiled = spec.to_json_schema().unwrap();
        drop_deep(compiled);
        drop(copy);
        drop(spec);
    });
}

//! The inline form's arguments decode, which `#[tool]` writes itself (not with
//! `#[derive(Deserialize)]`, for incremental builds), against serde's derive over the same
//! fields: the same value or the same error for any JSON object, from a `Value`, a `&Value` and
//! JSON text (where a key can repeat). And its schema, written by `#[tool]` too, against
//! schemars' derive.

use dsh_tools::{ToolError, tool};
use proptest::prelude::*;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Map, Value, json};

/// Every kind of field: required, optional, nested optional, a list, a raw identifier.
#[tool]
pub(crate) async fn mixed(
    /// required text
    text: String,
    /// optional count
    count: Option<u32>,
    /// present, null, or absent
    nested: Option<Option<bool>>,
    /// # Numbers
    ///
    /// Any, in order:
    ///   negative ones too.
    items: Vec<i64>,
    /// a keyword as a name
    r#type: String,
    /// A nested struct, by reference.
    point: Option<Point>,
) -> Result<String, ToolError> {
    Ok(format!("{text}{count:?}{nested:?}{items:?}{type}{point:?}", type = r#type))
}

#[derive(Debug, PartialEq, Deserialize, JsonSchema)]
pub(crate) struct Point {
    /// across
    x: i32,
    y: i32,
}

// The same fields with serde's and schemars' derives (no doc comment: it would be the schema's
// description).
#[derive(Debug, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct MixedTwin {
    /// required text
    text: String,
    /// optional count
    count: Option<u32>,
    /// present, null, or absent
    nested: Option<Option<bool>>,
    /// # Numbers
    ///
    /// Any, in order:
    ///   negative ones too.
    items: Vec<i64>,
    /// a keyword as a name
    r#type: String,
    /// A nested struct, by reference.
    point: Option<Point>,
}

/// Unknown keys ignored rather than refused.
#[tool(allow_unknown_args)]
pub(crate) async fn open(
    /// required text
    text: String,
    /// optional count
    count: Option<u32>,
) -> Result<String, ToolError> {
    Ok(format!("{text}{count:?}"))
}

#[derive(Debug, PartialEq, Deserialize, JsonSchema)]
struct OpenTwin {
    /// required text
    text: String,
    /// optional count
    count: Option<u32>,
}

fn mixed_fields(args: MixedArgs) -> MixedTwin {
    let MixedArgs {
        text,
        count,
        nested,
        items,
        r#type,
        point,
    } = args;
    MixedTwin {
        text,
        count,
        nested,
        items,
        r#type,
        point,
    }
}

fn open_fields(args: OpenArgs) -> OpenTwin {
    let OpenArgs { text, count } = args;
    OpenTwin { text, count }
}

/// Decodes `value` both ways, three ways each, and asserts they agree.
fn agree<A, T>(value: &Value, fields: fn(A) -> T)
where
    A: serde::de::DeserializeOwned,
    T: serde::de::DeserializeOwned + std::fmt::Debug + PartialEq,
{
    let text = value.to_string();
    let ours = [
        A::deserialize(value).map(fields),
        A::deserialize(value.clone()).map(fields),
        serde_json::from_str::<A>(&text).map(fields),
    ];
    let serde = [
        T::deserialize(value),
        T::deserialize(value.clone()),
        serde_json::from_str::<T>(&text),
    ];
    for (ours, serde) in ours.into_iter().zip(serde) {
        match (ours, serde) {
            (Ok(ours), Ok(serde)) => assert_eq!(ours, serde, "{text}"),
            // The same message, from the same position in the text; "expected struct …" names
            // each its own type (`MixedArgs`, `MixedTwin`).
            (Err(ours), Err(serde)) => assert_eq!(
                ours.to_string(),
                serde.to_string().replace("Twin", "Args"),
                "{text}"
            ),
            (ours, serde) => panic!("{text}: ours {ours:?}, serde's {serde:?}"),
        }
    }
}

fn field_value() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        (0u64..5).prop_map(Value::from),
        "[a-z]{0,4}".prop_map(Value::String),
        prop::collection::vec(any::<i64>().prop_map(Value::from), 0..3).prop_map(Value::Array),
        Just(json!({"text": "x"})),
        Just(json!({"x": 1, "y": -2})),
    ]
}

fn object(keys: &'static [&'static str]) -> impl Strategy<Value = Value> {
    prop::collection::vec((prop::sample::select(keys), field_value()), 0..7).prop_map(|kv| {
        Value::Object(
            kv.into_iter()
                .map(|(k, v)| (k.to_owned(), v))
                .collect::<Map<_, _>>(),
        )
    })
}

const KEYS: &[&str] = &[
    "text", "count", "nested", "items", "type", "r#type", "other", "",
];

proptest! {
    #[test]
    fn closed_arguments_decode_like_serde_derive(value in object(KEYS)) {
        agree(&value, mixed_fields);
    }

    #[test]
    fn open_arguments_decode_like_serde_derive(value in object(KEYS)) {
        agree(&value, open_fields);
    }
}

#[test]
fn every_outcome_matches_serde_derive() {
    let full = json!({"text": "a", "count": 2, "nested": true, "items": [1, -2], "type": "t"});
    agree(&full, mixed_fields);
    let args: MixedArgs = serde_json::from_value(full).unwrap();
    assert_eq!(args.r#type, "t", "a raw identifier's key is the bare name");
    // Absent options are `None`, and so is a `null` for an `Option<Option<_>>`, as with serde.
    let sparse = json!({"text": "a", "items": [], "type": "t"});
    agree(&sparse, mixed_fields);
    assert_eq!(
        mixed_fields(serde_json::from_value(sparse).unwrap()).count,
        None
    );
    agree(
        &json!({"text": "a", "items": [], "type": "t", "nested": null}),
        mixed_fields,
    );
    // Errors: missing, unknown, wrong type, not an object.
    for bad in [
        json!({"items": [], "type": "t"}),
        json!({"text": "a", "items": [], "type": "t", "extra": 1}),
        json!({"text": 1, "items": [], "type": "t"}),
        json!("text"),
        json!(null),
    ] {
        agree(&bad, mixed_fields);
    }
    let missing = serde_json::from_value::<MixedArgs>(json!({"items": [], "type": "t"}));
    assert_eq!(
        missing.err().map(|e| e.to_string()).unwrap_or_default(),
        "missing field `text`"
    );
    let unknown = serde_json::from_value::<MixedArgs>(
        json!({"text": "a", "items": [], "type": "t", "extra": 1}),
    );
    assert_eq!(
        unknown.err().map(|e| e.to_string()).unwrap_or_default(),
        "unknown field `extra`, expected one of `text`, `count`, `nested`, `items`, `type`, `point`"
    );
    // Ignored when unknown keys are allowed.
    agree(&json!({"text": "a", "extra": {"deep": [1]}}), open_fields);
}

#[test]
fn a_repeated_key_is_refused_like_serde_derive() {
    let text = r#"{"text": "a", "items": [], "type": "t", "text": "b"}"#;
    let Err(ours) = serde_json::from_str::<MixedArgs>(text) else {
        panic!("refused");
    };
    let Err(serde) = serde_json::from_str::<MixedTwin>(text) else {
        panic!("refused");
    };
    assert_eq!(ours.to_string(), serde.to_string());
    assert!(
        ours.to_string().starts_with("duplicate field `text`"),
        "{ours}"
    );
}

/// A sequence is not arguments: serde's derive would take the fields in order, the generated
/// decode refuses it (the schema says `object`, and a tool's validator refused it first).
#[test]
fn a_sequence_is_refused() {
    let Err(error) = serde_json::from_value::<OpenArgs>(json!(["a", 1])) else {
        panic!("refused");
    };
    assert_eq!(
        error.to_string(),
        "invalid type: sequence, expected struct OpenArgs"
    );
    assert!(serde_json::from_value::<OpenTwin>(json!(["a", 1])).is_ok());
}

/// The schema `#[tool]` writes is schemars' for the same struct: properties in order, doc
/// comments as title and description, `required`, closed or open, a nested type by reference.
#[test]
fn the_schema_is_schemars_derive() {
    let named = |value: Value| {
        serde_json::from_str::<Value>(&value.to_string().replace("Twin", "Args")).unwrap()
    };
    let ours = serde_json::to_value(schemars::schema_for!(MixedArgs)).unwrap();
    let derived = named(serde_json::to_value(schemars::schema_for!(MixedTwin)).unwrap());
    assert_eq!(ours, derived);
    assert_eq!(
        ours.to_string(),
        derived.to_string(),
        "the same key order too"
    );
    assert_eq!(ours["properties"]["items"]["title"], "Numbers");
    assert_eq!(
        ours["properties"]["items"]["description"],
        "Any, in order:\n  negative ones too."
    );
    assert_eq!(ours["required"], json!(["text", "items", "type"]));
    assert_eq!(ours["additionalProperties"], false);
    let open = serde_json::to_value(schemars::schema_for!(OpenArgs)).unwrap();
    assert_eq!(
        open,
        named(serde_json::to_value(schemars::schema_for!(OpenTwin)).unwrap())
    );
    assert!(open.get("additionalProperties").is_none());
}

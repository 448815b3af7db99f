//! The schema of a Rust type: schemars generates it (draft 2020-12, deserialize or serialize
//! contract) and [`from_schemars`] bridges it; tool arguments are closed by default.

use super::exact::from_schemars;
use super::problems::BridgeError;
use crate::schema::keywords::{
    ADDITIONAL_PROPERTIES, ALL_OF, ANY_OF, ONE_OF, UNEVALUATED_PROPERTIES,
};
use schemars::generate::SchemaSettings;
use serde_json::Value;

/// Generates the schema of `T` and bridges it with [`from_schemars`]: what `T` *accepts*.
///
/// Settings: JSON Schema draft 2020-12 without `$schema`, and schemars' *deserialize* contract
/// (`#[serde(default)]` fields are optional, `#[serde(skip)]` fields absent). The root `title` is
/// dropped when it is only `T`'s schema name.
///
/// ```
/// use dsh_tools::schema::bridge;
/// use schemars::JsonSchema;
/// use serde::Deserialize;
///
/// #[derive(Deserialize, JsonSchema)]
/// struct Tree {
///     children: Vec<Tree>,
/// }
///
/// let err = bridge::schema_for::<Tree>().unwrap_err();
/// assert!(err.to_string().contains(r#"recursive type "Tree""#));
/// ```
pub fn schema_for<T: schemars::JsonSchema>() -> Result<Value, BridgeError> {
    generate::<T>(SchemaSettings::draft2020_12()).map(|(out, _)| out)
}

/// The parameters schema of a tool whose arguments are `T`: [`schema_for`], with the root object
/// **closed** (`additionalProperties: false`) unless `allow_unknown`. serde ignores unknown
/// fields, but a model's made-up argument is a mistake to report (and every provider's strict
/// mode wants closed objects). A root that schemars describes with more than `properties` (a
/// `#[serde(flatten)]` enum or map: `anyOf`, `oneOf`, `allOf`, `additionalProperties`) is left
/// as it is, and a type with `#[serde(deny_unknown_fields)]` stays closed either way.
pub fn schema_for_args<T: schemars::JsonSchema>(allow_unknown: bool) -> Result<Value, BridgeError> {
    generate::<T>(SchemaSettings::draft2020_12())
        .map(|(out, raw_keys)| close_args(out, &raw_keys, allow_unknown))
}

/// The non-generic half of [`schema_for_args`].
fn close_args(mut out: Value, raw_keys: &[String], allow_unknown: bool) -> Value {
    let plain = [
        ANY_OF,
        ONE_OF,
        ALL_OF,
        ADDITIONAL_PROPERTIES,
        UNEVALUATED_PROPERTIES,
    ]
    .iter()
    .all(|k| !raw_keys.iter().any(|r| r == k));
    if !allow_unknown
        && plain
        && let Some(map) = out.as_object_mut()
        && map.get("type").and_then(Value::as_str) == Some("object")
    {
        map.entry("additionalProperties")
            .or_insert(Value::Bool(false));
    }
    out
}

/// Generates the schema of `T` under schemars' *serialize* contract and bridges it: what `T`
/// *produces* when serialized, the schema of a tool's output. A field with
/// `#[serde(skip_serializing_if = "...")]` is optional and a `#[serde(skip_serializing)]` field
/// absent even without `#[serde(default)]`. Objects are left as schemars describes them.
///
/// ```
/// use dsh_tools::schema::bridge;
/// use schemars::JsonSchema;
/// use serde::Serialize;
///
/// #[derive(Serialize, JsonSchema)]
/// struct Listing {
///     #[serde(skip_serializing_if = "Vec::is_empty")]
///     entries: Vec<String>,
/// }
/// let schema = bridge::schema_for_serialize::<Listing>().unwrap();
/// assert!(schema.get("required").is_none_or(|r| r.as_array().unwrap().is_empty()));
/// ```
pub fn schema_for_serialize<T: schemars::JsonSchema>() -> Result<Value, BridgeError> {
    generate::<T>(SchemaSettings::draft2020_12().for_serialize()).map(|(out, _)| out)
}

/// The bridged schema, and the keys of schemars' own root object.
fn generate<T: schemars::JsonSchema>(
    settings: SchemaSettings,
) -> Result<(Value, Vec<String>), BridgeError> {
    // Generic only for schemars' own call; the rest is compiled once.
    let schema = generator(settings).into_root_schema_for::<T>();
    finish(&schema, &T::schema_name())
}

fn generator(settings: SchemaSettings) -> schemars::SchemaGenerator {
    settings
        .with(|s| {
            s.meta_schema = None;
            // schemars' own inlining expands shared subtypes before any limit applies (a type
            // with two fields of the same type, 24 levels deep, is 2^24 nodes): keep `$defs` and
            // let the loader inline `$ref`s, counting nodes as it goes.
            s.inline_subschemas = false;
        })
        .into_generator()
}

/// Bridges a generated root schema, drops a `title` that is only the type's name, and lists
/// schemars' own root keys.
fn finish(schema: &schemars::Schema, name: &str) -> Result<(Value, Vec<String>), BridgeError> {
    let mut out = from_schemars(schema)?;
    if let Some(map) = out.as_object_mut()
        && map.get("title").and_then(Value::as_str) == Some(name)
    {
        map.shift_remove("title");
    }
    let raw_keys = schema
        .as_object()
        .map(|m| m.keys().cloned().collect())
        .unwrap_or_default();
    Ok((out, raw_keys))
}

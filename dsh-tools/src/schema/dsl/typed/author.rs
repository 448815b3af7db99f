//! The typed specs as author JSON and back: compiling ([`ValueSchemaSpec::to_json_schema`]),
//! writing the author form (also for `Debug` and `Serialize`), and reading it through the author
//! pass (`from_json`, `Deserialize`, `TryFrom`), so messages match the JSON entry points.

use super::super::super::JsonSchemaError;
use super::super::compile::*;
use super::annotations::{Annotations, JsonText};
use super::tree::{
    ArraySpec, ObjectSpec, OneOfSpec, ParameterSchemaSpec, PropertySpec, ScalarSpec,
    ValueSchemaSpec,
};
use crate::json::{clone_deep, drop_deep};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value};
use std::fmt;

impl ValueSchemaSpec {
    /// Compiles the spec into the JSON Schema of spec §1.2 (the same code path as
    /// [`compile_value_spec`] on [`to_author_json`](Self::to_author_json)).
    pub fn to_json_schema(&self) -> Result<Value, JsonSchemaError> {
        let author = self.to_author_json();
        let compiled = compile_value_spec(&author);
        drop_deep(author);
        compiled
    }

    /// The author JSON form (what [`from_json`](Self::from_json) reads and `Serialize` writes).
    pub fn to_author_json(&self) -> Value {
        self.fold(author_node)
    }

    /// Reads an author spec, accepting exactly what [`compile_value_spec`] accepts (with the
    /// same errors).
    pub fn from_json(spec: &Value) -> Result<Self, JsonSchemaError> {
        let parsed = author_pass(spec, Origin::Value)?;
        parsed.assert_compiles()?;
        let kids = parsed.root_children(typed_node);
        Ok(typed_node(&parsed.root, kids))
    }
}

/// The author JSON of one node given its children's author JSON.
pub(super) fn author_node(spec: &ValueSchemaSpec, kids: Vec<Value>) -> Value {
    let mut out = Map::new();
    let mut kids = kids.into_iter();
    match spec {
        ValueSchemaSpec::OneOf(u) => {
            out.insert("oneOf".to_owned(), Value::Array(kids.collect()));
            u.annotations.write(&mut out);
        }
        ValueSchemaSpec::Json(a) => {
            put_type(&mut out, "json");
            a.write(&mut out);
        }
        ValueSchemaSpec::Array(a) => {
            put_type(&mut out, "array");
            a.annotations.write(&mut out);
            if let Some(items) = kids.next() {
                out.insert("items".to_owned(), items);
            }
        }
        ValueSchemaSpec::Object(o) => {
            put_type(&mut out, "object");
            o.annotations.write(&mut out);
            out.insert(
                "additionalProperties".to_owned(),
                Value::Bool(o.additional_properties),
            );
            if let Some(p) = &o.properties {
                out.insert("properties".to_owned(), author_entries(p, kids));
            }
        }
        scalar => {
            if let Some((kind, s)) = scalar.scalar() {
                put_type(&mut out, kind.name());
                s.annotations.write(&mut out);
                if let Some(members) = &s.enum_values {
                    let members = members.iter().map(clone_deep).collect();
                    out.insert("enum".to_owned(), Value::Array(members));
                }
                if let Some(c) = &s.const_value {
                    out.insert("const".to_owned(), clone_deep(c));
                }
            }
        }
    }
    Value::Object(out)
}

/// The author JSON of a property map given its entries' schemas' author JSON.
pub(super) fn author_entries(
    map: &ParameterSchemaSpec,
    kids: impl Iterator<Item = Value>,
) -> Value {
    let entries = map.entries.iter().zip(kids).map(|((name, prop), mut kid)| {
        if let (true, Value::Object(node)) = (prop.required, &mut kid) {
            node.insert("required".to_owned(), Value::Bool(true));
        }
        (name.clone(), kid)
    });
    Value::Object(entries.collect())
}

/// The typed node of one checked author node given its typed children.
pub(super) fn typed_node(frame: &Frame<'_>, kids: Vec<ValueSchemaSpec>) -> ValueSchemaSpec {
    let node = frame.node;
    let annotations = Annotations::from_author(node);
    let mut kids = kids.into_iter();
    match frame.kind {
        Kind::Scalar(scalar) => scalar.wrap(ScalarSpec {
            annotations,
            enum_values: node
                .get("enum")
                .and_then(Value::as_array)
                .map(|m| m.iter().map(clone_deep).collect()),
            const_value: node.get("const").map(clone_deep),
        }),
        Kind::Array(_) => ValueSchemaSpec::Array(ArraySpec {
            annotations,
            items: kids.next().map(Box::new),
        }),
        Kind::Object(_) => ValueSchemaSpec::Object(ObjectSpec {
            annotations,
            additional_properties: node
                .get("additionalProperties")
                .and_then(Value::as_bool)
                .unwrap_or(false),
            properties: node
                .get("properties")
                .and_then(Value::as_object)
                .map(|entries| typed_entries(entries, kids)),
        }),
        Kind::OneOf(_) => ValueSchemaSpec::OneOf(OneOfSpec {
            annotations,
            branches: kids.collect(),
        }),
        // A parameter root is built by `typed_entries`; never a node.
        Kind::Json | Kind::Params(_) => ValueSchemaSpec::Json(annotations),
    }
}

pub(super) fn typed_entries(
    entries: &Map<String, Value>,
    kids: impl Iterator<Item = ValueSchemaSpec>,
) -> ParameterSchemaSpec {
    let entries = entries.iter().zip(kids).map(|((name, entry), schema)| {
        let required = is_required(entry);
        (name.clone(), PropertySpec { schema, required })
    });
    ParameterSchemaSpec {
        entries: entries.collect(),
    }
}

impl fmt::Debug for ValueSchemaSpec {
    /// The author JSON form, e.g. `ValueSchemaSpec({"type":"string"})`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let author = self.to_author_json();
        let result = f
            .debug_tuple("ValueSchemaSpec")
            .field(&JsonText(&author))
            .finish();
        drop_deep(author);
        result
    }
}

impl Serialize for ValueSchemaSpec {
    /// Writes the author JSON form. serde's data model nests one call per level, so this
    /// recurses as deep as the spec; use [`ValueSchemaSpec::to_author_json`] with
    /// [`crate::json::to_compact_string`] for specs of untrusted depth.
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let author = self.to_author_json();
        let result = author.serialize(serializer);
        drop_deep(author);
        result
    }
}

impl<'de> Deserialize<'de> for ValueSchemaSpec {
    /// Reads the author JSON form; a malformed spec fails with the [`JsonSchemaError`] message.
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let value = Value::deserialize(deserializer)?;
        let spec = Self::from_json(&value);
        drop_deep(value);
        spec.map_err(serde::de::Error::custom)
    }
}

impl TryFrom<&Value> for ValueSchemaSpec {
    type Error = JsonSchemaError;

    fn try_from(spec: &Value) -> Result<Self, JsonSchemaError> {
        Self::from_json(spec)
    }
}

impl ParameterSchemaSpec {
    /// Compiles into the implicit open root object schema (the same code path as
    /// [`compile_parameter_spec`] on [`to_author_json`](Self::to_author_json)).
    pub fn to_json_schema(&self) -> Result<Value, JsonSchemaError> {
        let author = self.to_author_json();
        let compiled = compile_parameter_spec(&author);
        drop_deep(author);
        compiled
    }

    /// The author JSON form: an object of entries, required ones with `"required": true`.
    pub fn to_author_json(&self) -> Value {
        let kids = self.entries.iter().map(|(_, p)| p.schema.to_author_json());
        author_entries(self, kids)
    }

    /// Reads a parameter spec, accepting exactly what [`compile_parameter_spec`] accepts (with
    /// the same errors).
    pub fn from_json(spec: &Value) -> Result<Self, JsonSchemaError> {
        let parsed = author_pass(spec, Origin::Parameters)?;
        parsed.assert_compiles()?;
        let kids = parsed.root_children(typed_node);
        Ok(typed_entries(parsed.root.node, kids.into_iter()))
    }
}

impl fmt::Debug for ParameterSchemaSpec {
    /// The author JSON form, e.g. `ParameterSchemaSpec({"q":{"type":"string"}})`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let author = self.to_author_json();
        let result = f
            .debug_tuple("ParameterSchemaSpec")
            .field(&JsonText(&author))
            .finish();
        drop_deep(author);
        result
    }
}

impl Serialize for ParameterSchemaSpec {
    /// Writes the author JSON form (recursive like [`ValueSchemaSpec`]'s `Serialize`).
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let author = self.to_author_json();
        let result = author.serialize(serializer);
        drop_deep(author);
        result
    }
}

impl<'de> Deserialize<'de> for ParameterSchemaSpec {
    /// Reads the author JSON form; a malformed spec fails with the [`JsonSchemaError`] message.
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let value = Value::deserialize(deserializer)?;
        let spec = Self::from_json(&value);
        drop_deep(value);
        spec.map_err(serde::de::Error::custom)
    }
}

impl TryFrom<&Value> for ParameterSchemaSpec {
    type Error = JsonSchemaError;

    fn try_from(spec: &Value) -> Result<Self, JsonSchemaError> {
        Self::from_json(spec)
    }
}

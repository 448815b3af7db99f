//! The forward half of reversible strict mode, for tests: a value valid for a subset schema as
//! a strict-mode model sends it.

use dsh_tools::schema::CompiledSchema;
use serde_json::{Map, Value};

/// A value valid for `schema` as a strict-mode model would send it: every optional property
/// that is absent is sent as null.
pub(crate) fn to_strict(schema: &Value, value: &Value) -> Value {
    match (schema, value) {
        (Value::Object(s), Value::Object(v)) if s.contains_key("properties") => {
            let props = s["properties"].as_object().unwrap();
            let mut out = Map::new();
            for (name, sub) in props {
                match v.get(name) {
                    Some(child) => {
                        out.insert(name.clone(), to_strict(sub, child));
                    }
                    None => {
                        out.insert(name.clone(), Value::Null);
                    }
                }
            }
            for (k, child) in v {
                if !props.contains_key(k) {
                    out.insert(k.clone(), child.clone());
                }
            }
            Value::Object(out)
        }
        (Value::Object(s), Value::Array(items)) if s.contains_key("items") => {
            Value::Array(items.iter().map(|i| to_strict(&s["items"], i)).collect())
        }
        (Value::Object(s), _) if s.contains_key("oneOf") => {
            for branch in s["oneOf"].as_array().unwrap() {
                if CompiledSchema::compile(branch).unwrap().is_valid(value) {
                    return to_strict(branch, value);
                }
            }
            value.clone()
        }
        _ => value.clone(),
    }
}

//! The names serde decodes that a type's schema does not declare: `#[serde(alias = "...")]` on a
//! field or a variant. schemars leaves aliases out of the schema, so the model never sees them
//! and the validator refuses them as undeclared: an alias on a tool's arguments is dead, and
//! registration says so instead of failing every call that uses it.
//!
//! serde's derive lists a struct's field names (aliases included) in the `fields` it passes to
//! `deserialize_struct`, and an enum's variant names in `variants`; a probing deserializer reads
//! them, one node of the type per run, and aborts each run with an error. Types decoded through
//! `deserialize_any` (flattened, internally tagged, untagged) show nothing and are skipped.

use serde::de::{self, DeserializeOwned, DeserializeSeed, IntoDeserializer, Visitor};
use serde_json::Value;
use std::collections::BTreeSet;

/// How deep the probe descends into fields and variants (a recursive type ends here).
const MAX_DEPTH: usize = 8;
/// At most this many nodes are probed per type.
const MAX_NODES: usize = 512;

/// Every struct field and enum variant name serde accepts for `T` (within the probe's bounds).
pub(crate) fn serde_names<T: DeserializeOwned>() -> BTreeSet<&'static str> {
    let mut names = BTreeSet::new();
    let mut pending: Vec<Vec<usize>> = vec![Vec::new()];
    let mut probed = 0;
    while let Some(path) = pending.pop() {
        probed += 1;
        if probed > MAX_NODES {
            break;
        }
        let mut found = None;
        let _ = T::deserialize(Probe {
            path: &path,
            found: &mut found,
        });
        let Some(children) = found else { continue };
        names.extend(children.iter().copied());
        if path.len() < MAX_DEPTH {
            for i in 0..children.len() {
                let mut child = path.clone();
                child.push(i);
                pending.push(child);
            }
        }
    }
    names
}

/// Every name a schema declares: property keys, string `enum` values and `const`s, at any depth.
pub(crate) fn schema_names(schema: &Value) -> BTreeSet<&str> {
    let mut names = BTreeSet::new();
    let mut stack = vec![schema];
    while let Some(node) = stack.pop() {
        match node {
            Value::Object(map) => {
                if let Some(Value::Object(properties)) = map.get("properties") {
                    names.extend(properties.keys().map(String::as_str));
                }
                if let Some(Value::Array(values)) = map.get("enum") {
                    names.extend(values.iter().filter_map(Value::as_str));
                }
                if let Some(Value::String(value)) = map.get("const") {
                    names.insert(value.as_str());
                }
                stack.extend(map.values());
            }
            Value::Array(items) => stack.extend(items),
            _ => {}
        }
    }
    names
}

/// Whether some node of `schema` admits any value (`true`, or an object schema with no
/// keyword that constrains the value), so that names under it cannot be known from the schema.
pub(crate) fn admits_anything(schema: &Value) -> bool {
    const CONSTRAINING: &[&str] = &[
        "type",
        "enum",
        "const",
        "oneOf",
        "anyOf",
        "allOf",
        "$ref",
        "properties",
        "items",
        "not",
    ];
    let mut stack = vec![schema];
    while let Some(node) = stack.pop() {
        match node {
            Value::Bool(true) => return true,
            Value::Object(map) => {
                if !map.keys().any(|k| CONSTRAINING.contains(&k.as_str())) {
                    return true;
                }
                for (key, value) in map {
                    match key.as_str() {
                        "properties" | "$defs" | "definitions" => {
                            if let Value::Object(children) = value {
                                stack.extend(children.values());
                            }
                        }
                        "items" | "additionalProperties" | "not" => stack.push(value),
                        "oneOf" | "anyOf" | "allOf" => {
                            if let Value::Array(branches) = value {
                                stack.extend(branches);
                            }
                        }
                        _ => {}
                    }
                }
            }
            _ => {}
        }
    }
    false
}

/// Aborts a probe run.
#[derive(Debug)]
struct Stop;

impl std::fmt::Display for Stop {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("probe")
    }
}

impl std::error::Error for Stop {}

impl de::Error for Stop {
    fn custom<M: std::fmt::Display>(_: M) -> Self {
        Stop
    }
}

/// Descends along `path` (an index into the names of each struct or enum on the way), then
/// records the names of the node it reaches.
struct Probe<'p> {
    path: &'p [usize],
    found: &'p mut Option<&'static [&'static str]>,
}

impl<'de> de::Deserializer<'de> for Probe<'_> {
    type Error = Stop;

    fn deserialize_any<V: Visitor<'de>>(self, _: V) -> Result<V::Value, Stop> {
        Err(Stop)
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _: &'static str,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Stop> {
        match self.path.split_first() {
            None => {
                *self.found = Some(fields);
                Err(Stop)
            }
            Some((&i, rest)) => {
                let key = *fields.get(i).ok_or(Stop)?;
                visitor.visit_map(OneEntry {
                    key: Some(key),
                    value: Some(Probe {
                        path: rest,
                        found: self.found,
                    }),
                })
            }
        }
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _: &'static str,
        variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Stop> {
        match self.path.split_first() {
            None => {
                *self.found = Some(variants);
                Err(Stop)
            }
            Some((&i, rest)) => {
                let variant = *variants.get(i).ok_or(Stop)?;
                visitor.visit_enum(Variant {
                    name: variant,
                    inner: Probe {
                        path: rest,
                        found: self.found,
                    },
                })
            }
        }
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Stop> {
        visitor.visit_some(self)
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _: &'static str,
        visitor: V,
    ) -> Result<V::Value, Stop> {
        visitor.visit_newtype_struct(self)
    }

    fn deserialize_seq<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Stop> {
        visitor.visit_seq(OneItem(Some(self)))
    }

    fn deserialize_tuple<V: Visitor<'de>>(self, _: usize, visitor: V) -> Result<V::Value, Stop> {
        visitor.visit_seq(OneItem(Some(self)))
    }

    fn deserialize_map<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Stop> {
        visitor.visit_map(OneEntry {
            key: Some("key"),
            value: Some(self),
        })
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf
        unit unit_struct tuple_struct identifier ignored_any
    }
}

/// A map with one entry: `key` and a probe as its value.
struct OneEntry<'p> {
    key: Option<&'static str>,
    value: Option<Probe<'p>>,
}

impl<'de> de::MapAccess<'de> for OneEntry<'_> {
    type Error = Stop;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, Stop> {
        match self.key.take() {
            Some(key) => seed
                .deserialize(IntoDeserializer::<Stop>::into_deserializer(key))
                .map(Some),
            None => Ok(None),
        }
    }

    fn next_value_seed<S: DeserializeSeed<'de>>(&mut self, seed: S) -> Result<S::Value, Stop> {
        seed.deserialize(self.value.take().ok_or(Stop)?)
    }
}

/// A sequence with one item, a probe.
struct OneItem<'p>(Option<Probe<'p>>);

impl<'de> de::SeqAccess<'de> for OneItem<'_> {
    type Error = Stop;

    fn next_element_seed<S: DeserializeSeed<'de>>(
        &mut self,
        seed: S,
    ) -> Result<Option<S::Value>, Stop> {
        match self.0.take() {
            Some(probe) => seed.deserialize(probe).map(Some),
            None => Ok(None),
        }
    }
}

/// The variant `name`, its content a probe.
struct Variant<'p> {
    name: &'static str,
    inner: Probe<'p>,
}

impl<'de, 'p> de::EnumAccess<'de> for Variant<'p> {
    type Error = Stop;
    type Variant = Probe<'p>;

    fn variant_seed<S: DeserializeSeed<'de>>(self, seed: S) -> Result<(S::Value, Probe<'p>), Stop> {
        let name = seed.deserialize(IntoDeserializer::<Stop>::into_deserializer(self.name))?;
        Ok((name, self.inner))
    }
}

impl<'de> de::VariantAccess<'de> for Probe<'_> {
    type Error = Stop;

    fn unit_variant(self) -> Result<(), Stop> {
        Err(Stop)
    }

    fn newtype_variant_seed<S: DeserializeSeed<'de>>(self, seed: S) -> Result<S::Value, Stop> {
        seed.deserialize(self)
    }

    fn tuple_variant<V: Visitor<'de>>(self, _: usize, visitor: V) -> Result<V::Value, Stop> {
        visitor.visit_seq(OneItem(Some(self)))
    }

    fn struct_variant<V: Visitor<'de>>(
        self,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Stop> {
        de::Deserializer::deserialize_struct(self, "", fields, visitor)
    }
}

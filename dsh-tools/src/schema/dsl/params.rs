//! Property maps: `PropertySpec` and `ParameterSchemaSpec` (a tool's parameters).

use super::typed::{JsonText, author_entries, typed_entries, typed_node};
use super::*;

/// A property-map entry: a value node, optionally required.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PropertySpec {
    /// The member's schema.
    pub schema: ValueSchemaSpec,
    /// Whether the member must be present (`required: true` in the author form).
    pub required: bool,
}

impl PropertySpec {
    /// A member that must be present.
    pub fn required(schema: ValueSchemaSpec) -> Self {
        Self {
            schema,
            required: true,
        }
    }

    /// A member that may be absent.
    pub fn optional(schema: ValueSchemaSpec) -> Self {
        Self {
            schema,
            required: false,
        }
    }
}

impl From<ValueSchemaSpec> for PropertySpec {
    /// An optional member.
    fn from(schema: ValueSchemaSpec) -> Self {
        Self::optional(schema)
    }
}

/// A tool's parameters: an ordered map name → [`PropertySpec`], compiled to the implicit open
/// root object (spec §1.1.1). Also the type of an object node's `properties`.
///
/// Insertion order is kept: it is the order of `properties` and `required` in the compiled
/// schema.
///
/// ```
/// use dsh_tools::schema::dsl::{ParameterSchemaSpec, ValueSchemaSpec};
///
/// let params = ParameterSchemaSpec::new()
///     .required("path", ValueSchemaSpec::string())
///     .optional("depth", ValueSchemaSpec::integer().default(1));
/// assert_eq!(
///     params.to_json_schema()?.to_string(),
///     r#"{"type":"object","properties":{"path":{"type":"string"},"depth":{"type":"integer","default":1}},"required":["path"]}"#
/// );
/// let from_config: ParameterSchemaSpec =
///     serde_json::from_str(r#"{"path": {"type": "string", "required": true}, "depth": {"type": "integer", "default": 1}}"#)
///         .unwrap();
/// assert_eq!(from_config, params);
/// # Ok::<(), dsh_tools::schema::JsonSchemaError>(())
/// ```
#[derive(Clone, Default, PartialEq, Eq)]
pub struct ParameterSchemaSpec {
    pub(super) entries: Vec<(String, PropertySpec)>,
}

impl ParameterSchemaSpec {
    /// An empty map (compiles to `{"type": "object", "properties": {}}`).
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds (or replaces, in place) a required member.
    pub fn required(mut self, name: impl Into<String>, schema: ValueSchemaSpec) -> Self {
        self.insert(name, PropertySpec::required(schema));
        self
    }

    /// Adds (or replaces, in place) an optional member.
    pub fn optional(mut self, name: impl Into<String>, schema: ValueSchemaSpec) -> Self {
        self.insert(name, PropertySpec::optional(schema));
        self
    }

    /// Adds a member, or replaces the one named `name` keeping its position (the way a JSON
    /// object with a duplicate key reads); returns the replaced member.
    pub fn insert(
        &mut self,
        name: impl Into<String>,
        property: PropertySpec,
    ) -> Option<PropertySpec> {
        let name = name.into();
        match self.entries.iter_mut().find(|(n, _)| *n == name) {
            Some((_, slot)) => Some(std::mem::replace(slot, property)),
            None => {
                self.entries.push((name, property));
                None
            }
        }
    }

    /// The member named `name`.
    pub fn get(&self, name: &str) -> Option<&PropertySpec> {
        self.entries.iter().find(|(n, _)| n == name).map(|(_, p)| p)
    }

    /// The members in order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &PropertySpec)> {
        self.entries.iter().map(|(n, p)| (n.as_str(), p))
    }

    /// The number of members.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether there are no members.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

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

impl<N: Into<String>> FromIterator<(N, PropertySpec)> for ParameterSchemaSpec {
    fn from_iter<I: IntoIterator<Item = (N, PropertySpec)>>(iter: I) -> Self {
        let mut map = Self::new();
        for (name, property) in iter {
            map.insert(name, property);
        }
        map
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

//! The typed spec family and its builders: the node specs ([`ValueSchemaSpec`] and one struct
//! per node kind) and the property maps ([`PropertySpec`], [`ParameterSchemaSpec`]), one family
//! because each holds the other (an object spec holds a property map, a property a value spec).

use super::super::compile::{Scalar, free, option_value_eq, value_eq};
use super::annotations::{Annotations, JsonText};
use crate::json::clone_deep;
use serde_json::Value;
use std::fmt;

/// A `string`, `number`, `integer`, `boolean` or `null` node.
///
/// `enum` and `const` are kept as JSON: their members are checked against the node's type when
/// the spec compiles (`schema.enum must be a non-empty array of number values`).
#[derive(Default)]
pub struct ScalarSpec {
    /// The node's annotations.
    pub annotations: Annotations,
    /// `enum`: the allowed values (non-empty, each of the node's type).
    pub enum_values: Option<Vec<Value>>,
    /// `const`: the one allowed value (a member of `enum` when both are declared).
    pub const_value: Option<Value>,
}

impl Clone for ScalarSpec {
    fn clone(&self) -> Self {
        Self {
            annotations: self.annotations.clone(),
            enum_values: self
                .enum_values
                .as_ref()
                .map(|m| m.iter().map(clone_deep).collect()),
            const_value: self.const_value.as_ref().map(clone_deep),
        }
    }
}

impl PartialEq for ScalarSpec {
    fn eq(&self, other: &Self) -> bool {
        let enums_eq = match (&self.enum_values, &other.enum_values) {
            (Some(a), Some(b)) => {
                a.len() == b.len() && a.iter().zip(b).all(|(x, y)| value_eq(x, y))
            }
            (a, b) => a.is_none() && b.is_none(),
        };
        self.annotations == other.annotations
            && enums_eq
            && option_value_eq(self.const_value.as_ref(), other.const_value.as_ref())
    }
}

impl Eq for ScalarSpec {}

impl fmt::Debug for ScalarSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let members = self
            .enum_values
            .as_ref()
            .map(|m| m.iter().map(JsonText).collect::<Vec<_>>());
        f.debug_struct("ScalarSpec")
            .field("annotations", &self.annotations)
            .field("enum_values", &members)
            .field("const_value", &self.const_value.as_ref().map(JsonText))
            .finish()
    }
}

/// An `array` node; without `items`, any lossless JSON items.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ArraySpec {
    /// The node's annotations.
    pub annotations: Annotations,
    /// `items`: the schema of every item.
    pub items: Option<Box<ValueSchemaSpec>>,
}

/// An explicit `object` node. Its openness is mandatory.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ObjectSpec {
    /// The node's annotations.
    pub annotations: Annotations,
    /// `additionalProperties`: whether undeclared members are allowed.
    pub additional_properties: bool,
    /// `properties`: the declared members (`None` omits the key; an empty map emits `{}`).
    pub properties: Option<ParameterSchemaSpec>,
}

/// A `oneOf` node: exactly one branch must match. It needs at least two branches.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct OneOfSpec {
    /// The node's annotations.
    pub annotations: Annotations,
    /// `oneOf`: the branches, in order.
    pub branches: Vec<ValueSchemaSpec>,
}

/// One author value node (spec §1.1), built in code or read from JSON.
///
/// ```
/// use dsh_tools::schema::dsl::{PropertySpec, ValueSchemaSpec};
/// use serde_json::json;
///
/// let point = ValueSchemaSpec::object(false)
///     .title("Point")
///     .property("x", PropertySpec::required(ValueSchemaSpec::number()))
///     .property("label", ValueSchemaSpec::one_of([ValueSchemaSpec::string(), ValueSchemaSpec::null()]));
/// assert_eq!(
///     point.to_json_schema()?.to_string(),
///     r#"{"type":"object","title":"Point","additionalProperties":false,"properties":{"x":{"type":"number"},"label":{"oneOf":[{"type":"string"},{"type":"null"}]}},"required":["x"]}"#
/// );
///
/// // The author JSON form round-trips, through serde as well.
/// let author = point.to_author_json();
/// assert_eq!(author["properties"]["x"], json!({"type": "number", "required": true}));
/// assert_eq!(ValueSchemaSpec::from_json(&author)?, point);
/// let parsed: ValueSchemaSpec = serde_json::from_value(author).unwrap();
/// assert_eq!(parsed, point);
/// # Ok::<(), dsh_tools::schema::JsonSchemaError>(())
/// ```
///
/// A typed spec always has the author shape, so [`to_json_schema`](Self::to_json_schema) can
/// only fail on the rules the raw pass checks: a `oneOf` with fewer than two branches, `enum` /
/// `const` members of the wrong type, `const` outside `enum`, or `-0` in a value.
///
/// Builder methods that only apply to some node kinds (`enum_values`, `items`, `property`, …)
/// leave other kinds unchanged; each says which kinds it applies to.
///
/// The type drops its children iteratively (a custom `Drop`), so match on a reference to take
/// a node apart rather than moving its fields out.
pub enum ValueSchemaSpec {
    /// `{"type": "string"}`.
    String(ScalarSpec),
    /// `{"type": "number"}`: any finite JSON number.
    Number(ScalarSpec),
    /// `{"type": "integer"}`: a finite, integral JSON number.
    Integer(ScalarSpec),
    /// `{"type": "boolean"}`.
    Boolean(ScalarSpec),
    /// `{"type": "null"}`.
    Null(ScalarSpec),
    /// `{"type": "array"}`.
    Array(ArraySpec),
    /// `{"type": "object"}`.
    Object(ObjectSpec),
    /// `{"type": "json"}`: any lossless JSON value (compiles to `{}` plus annotations).
    Json(Annotations),
    /// `{"oneOf": […]}`.
    OneOf(OneOfSpec),
}

impl ValueSchemaSpec {
    /// A `string` node.
    pub fn string() -> Self {
        Self::String(ScalarSpec::default())
    }

    /// A `number` node.
    pub fn number() -> Self {
        Self::Number(ScalarSpec::default())
    }

    /// An `integer` node.
    pub fn integer() -> Self {
        Self::Integer(ScalarSpec::default())
    }

    /// A `boolean` node.
    pub fn boolean() -> Self {
        Self::Boolean(ScalarSpec::default())
    }

    /// A `null` node.
    pub fn null() -> Self {
        Self::Null(ScalarSpec::default())
    }

    /// A `json` node: any lossless JSON value.
    pub fn json() -> Self {
        Self::Json(Annotations::default())
    }

    /// An `array` node without `items` (any lossless items).
    pub fn array() -> Self {
        Self::Array(ArraySpec::default())
    }

    /// An `array` node whose items match `items`.
    pub fn array_of(items: ValueSchemaSpec) -> Self {
        Self::array().items(items)
    }

    /// An explicit `object` node without `properties`; `additional_properties` says whether
    /// undeclared members are allowed. Add members with [`property`](Self::property).
    pub fn object(additional_properties: bool) -> Self {
        Self::Object(ObjectSpec {
            annotations: Annotations::default(),
            additional_properties,
            properties: None,
        })
    }

    /// A `oneOf` node over `branches` (at least two are needed for the spec to compile).
    pub fn one_of(branches: impl IntoIterator<Item = ValueSchemaSpec>) -> Self {
        Self::OneOf(OneOfSpec {
            annotations: Annotations::default(),
            branches: branches.into_iter().collect(),
        })
    }

    /// The node's annotations.
    pub fn annotations(&self) -> &Annotations {
        match self {
            Self::String(s)
            | Self::Number(s)
            | Self::Integer(s)
            | Self::Boolean(s)
            | Self::Null(s) => &s.annotations,
            Self::Array(a) => &a.annotations,
            Self::Object(o) => &o.annotations,
            Self::Json(a) => a,
            Self::OneOf(u) => &u.annotations,
        }
    }

    /// The node's annotations, mutably.
    pub fn annotations_mut(&mut self) -> &mut Annotations {
        match self {
            Self::String(s)
            | Self::Number(s)
            | Self::Integer(s)
            | Self::Boolean(s)
            | Self::Null(s) => &mut s.annotations,
            Self::Array(a) => &mut a.annotations,
            Self::Object(o) => &mut o.annotations,
            Self::Json(a) => a,
            Self::OneOf(u) => &mut u.annotations,
        }
    }

    /// Sets `description` (any node).
    pub fn description(mut self, text: impl Into<String>) -> Self {
        self.annotations_mut().description = Some(text.into());
        self
    }

    /// Sets `title` (any node).
    pub fn title(mut self, text: impl Into<String>) -> Self {
        self.annotations_mut().title = Some(text.into());
        self
    }

    /// Sets the `default` annotation (any node; never applied to values).
    pub fn default(mut self, value: impl Into<Value>) -> Self {
        free(self.annotations_mut().default.replace(value.into()));
        self
    }

    /// Sets the `examples` annotation (any node).
    pub fn examples(mut self, value: impl Into<Value>) -> Self {
        free(self.annotations_mut().examples.replace(value.into()));
        self
    }

    /// Sets `enum` (scalar nodes only; other kinds are returned unchanged).
    pub fn enum_values<V: Into<Value>>(mut self, values: impl IntoIterator<Item = V>) -> Self {
        if let Some(s) = self.scalar_mut() {
            let old = s
                .enum_values
                .replace(values.into_iter().map(Into::into).collect());
            old.into_iter().flatten().for_each(|v| free(Some(v)));
        }
        self
    }

    /// Sets `const` (scalar nodes only; other kinds are returned unchanged).
    pub fn const_value(mut self, value: impl Into<Value>) -> Self {
        if let Some(s) = self.scalar_mut() {
            free(s.const_value.replace(value.into()));
        }
        self
    }

    /// Sets `items` (array nodes only; other kinds are returned unchanged).
    pub fn items(mut self, items: ValueSchemaSpec) -> Self {
        if let Self::Array(a) = &mut self {
            a.items = Some(Box::new(items));
        }
        self
    }

    /// Declares (or replaces, in place) the member `name` (object nodes only; other kinds are
    /// returned unchanged). A bare [`ValueSchemaSpec`] is an optional member.
    pub fn property(mut self, name: impl Into<String>, property: impl Into<PropertySpec>) -> Self {
        if let Self::Object(o) = &mut self {
            o.properties
                .get_or_insert_with(ParameterSchemaSpec::new)
                .insert(name, property.into());
        }
        self
    }

    /// Sets the whole `properties` map (object nodes only; other kinds are returned unchanged).
    /// An empty map emits `"properties": {}`.
    pub fn properties(mut self, properties: ParameterSchemaSpec) -> Self {
        if let Self::Object(o) = &mut self {
            o.properties = Some(properties);
        }
        self
    }

    pub(super) fn scalar(&self) -> Option<(Scalar, &ScalarSpec)> {
        match self {
            Self::String(s) => Some((Scalar::String, s)),
            Self::Number(s) => Some((Scalar::Number, s)),
            Self::Integer(s) => Some((Scalar::Integer, s)),
            Self::Boolean(s) => Some((Scalar::Boolean, s)),
            Self::Null(s) => Some((Scalar::Null, s)),
            _ => None,
        }
    }

    pub(super) fn scalar_mut(&mut self) -> Option<&mut ScalarSpec> {
        match self {
            Self::String(s)
            | Self::Number(s)
            | Self::Integer(s)
            | Self::Boolean(s)
            | Self::Null(s) => Some(s),
            _ => None,
        }
    }
}

impl Scalar {
    /// The typed spec of this scalar type.
    pub(super) fn wrap(self, spec: ScalarSpec) -> ValueSchemaSpec {
        match self {
            Self::String => ValueSchemaSpec::String(spec),
            Self::Number => ValueSchemaSpec::Number(spec),
            Self::Integer => ValueSchemaSpec::Integer(spec),
            Self::Boolean => ValueSchemaSpec::Boolean(spec),
            Self::Null => ValueSchemaSpec::Null(spec),
        }
    }
}

// Property maps: `PropertySpec` and `ParameterSchemaSpec` (a tool's parameters), one family
// with the value specs (an object spec holds a property map, a property holds a value spec).

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

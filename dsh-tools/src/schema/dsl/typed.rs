//! The typed specs: `ValueSchemaSpec`, `PropertySpec`, `ParameterSchemaSpec`, built in code or
//! deserialized from author JSON (through the author pass, so messages match).

use super::super::JsonSchemaError;
use super::compile::*;
use crate::json::{clone_deep, drop_deep, to_compact_string};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value};
use std::fmt;

/// The annotations every value node may carry. They are copied into the compiled schema and
/// never validated against (a `default` is not applied either).
///
/// `default` and `examples` must be lossless JSON (no `-0`), checked when the spec compiles.
#[derive(Default)]
pub struct Annotations {
    /// `description`: what the value means, for the model.
    pub description: Option<String>,
    /// `title`: a short human-readable name.
    pub title: Option<String>,
    /// `default`: an annotation only.
    pub default: Option<Value>,
    /// `examples`: any JSON, conventionally an array of sample values.
    pub examples: Option<Value>,
}

impl Annotations {
    fn from_author(node: &Map<String, Value>) -> Self {
        // After the raw pass `description` and `title` are strings.
        let text = |key: &str| node.get(key).and_then(Value::as_str).map(str::to_owned);
        Self {
            description: text("description"),
            title: text("title"),
            default: node.get("default").map(clone_deep),
            examples: node.get("examples").map(clone_deep),
        }
    }

    fn write(&self, out: &mut Map<String, Value>) {
        for (key, text) in [("description", &self.description), ("title", &self.title)] {
            if let Some(text) = text {
                out.insert(key.to_owned(), Value::String(text.clone()));
            }
        }
        for (key, value) in [("default", &self.default), ("examples", &self.examples)] {
            if let Some(value) = value {
                out.insert(key.to_owned(), clone_deep(value));
            }
        }
    }

    fn free(&mut self) {
        free(self.default.take());
        free(self.examples.take());
    }
}

impl Clone for Annotations {
    fn clone(&self) -> Self {
        Self {
            description: self.description.clone(),
            title: self.title.clone(),
            default: self.default.as_ref().map(clone_deep),
            examples: self.examples.as_ref().map(clone_deep),
        }
    }
}

impl PartialEq for Annotations {
    fn eq(&self, other: &Self) -> bool {
        self.description == other.description
            && self.title == other.title
            && option_value_eq(self.default.as_ref(), other.default.as_ref())
            && option_value_eq(self.examples.as_ref(), other.examples.as_ref())
    }
}

impl Eq for Annotations {}

/// Renders a value as compact JSON in `Debug` output, without recursion.
pub(super) struct JsonText<'a>(pub(super) &'a Value);

impl fmt::Debug for JsonText<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&to_compact_string(self.0))
    }
}

impl fmt::Debug for Annotations {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Annotations")
            .field("description", &self.description)
            .field("title", &self.title)
            .field("default", &self.default.as_ref().map(JsonText))
            .field("examples", &self.examples.as_ref().map(JsonText))
            .finish()
    }
}

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

    fn scalar(&self) -> Option<(Scalar, &ScalarSpec)> {
        match self {
            Self::String(s) => Some((Scalar::String, s)),
            Self::Number(s) => Some((Scalar::Number, s)),
            Self::Integer(s) => Some((Scalar::Integer, s)),
            Self::Boolean(s) => Some((Scalar::Boolean, s)),
            Self::Null(s) => Some((Scalar::Null, s)),
            _ => None,
        }
    }

    fn scalar_mut(&mut self) -> Option<&mut ScalarSpec> {
        match self {
            Self::String(s)
            | Self::Number(s)
            | Self::Integer(s)
            | Self::Boolean(s)
            | Self::Null(s) => Some(s),
            _ => None,
        }
    }

    fn arity(&self) -> usize {
        match self {
            Self::Array(a) => usize::from(a.items.is_some()),
            Self::Object(o) => o.properties.as_ref().map_or(0, ParameterSchemaSpec::len),
            Self::OneOf(u) => u.branches.len(),
            _ => 0,
        }
    }

    /// Pushes the child nodes in reverse declaration order.
    fn push_children<'s>(&'s self, stack: &mut Vec<&'s ValueSchemaSpec>) {
        match self {
            Self::Array(a) => stack.extend(a.items.as_deref()),
            Self::Object(o) => {
                if let Some(p) = &o.properties {
                    stack.extend(p.entries.iter().rev().map(|(_, p)| &p.schema));
                }
            }
            Self::OneOf(u) => stack.extend(u.branches.iter().rev()),
            _ => {}
        }
    }

    /// Builds a `T` bottom-up over the tree, without recursion.
    fn fold<'s, T>(&'s self, mut build: impl FnMut(&'s ValueSchemaSpec, Vec<T>) -> T) -> T {
        let mut order = Vec::new();
        let mut stack = Vec::new();
        self.push_children(&mut stack);
        while let Some(node) = stack.pop() {
            order.push(node);
            node.push_children(&mut stack);
        }
        let kids = build_below(
            &order,
            self.arity(),
            |n| n.arity(),
            |n, kids| build(n, kids),
        );
        build(self, kids)
    }

    /// Moves the child nodes out (and frees annotation values) so that dropping is flat.
    fn detach(&mut self, out: &mut Vec<ValueSchemaSpec>) {
        self.annotations_mut().free();
        match self {
            Self::String(s)
            | Self::Number(s)
            | Self::Integer(s)
            | Self::Boolean(s)
            | Self::Null(s) => {
                s.enum_values
                    .take()
                    .into_iter()
                    .flatten()
                    .for_each(|v| free(Some(v)));
                free(s.const_value.take());
            }
            Self::Array(a) => out.extend(a.items.take().map(|b| *b)),
            Self::Object(o) => {
                if let Some(p) = o.properties.take() {
                    out.extend(p.entries.into_iter().map(|(_, p)| p.schema));
                }
            }
            Self::OneOf(u) => out.append(&mut u.branches),
            Self::Json(_) => {}
        }
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

impl Drop for ValueSchemaSpec {
    fn drop(&mut self) {
        let mut stack = Vec::new();
        self.detach(&mut stack);
        // Each popped node has its children moved out before it drops, so no drop nests.
        while let Some(mut node) = stack.pop() {
            node.detach(&mut stack);
        }
    }
}

impl Clone for ValueSchemaSpec {
    fn clone(&self) -> Self {
        self.fold(|spec, kids| {
            let mut kids = kids.into_iter();
            match spec {
                ValueSchemaSpec::Array(a) => ValueSchemaSpec::Array(ArraySpec {
                    annotations: a.annotations.clone(),
                    items: kids.next().map(Box::new),
                }),
                ValueSchemaSpec::Object(o) => ValueSchemaSpec::Object(ObjectSpec {
                    annotations: o.annotations.clone(),
                    additional_properties: o.additional_properties,
                    properties: o.properties.as_ref().map(|p| ParameterSchemaSpec {
                        entries: (p.entries.iter().zip(kids))
                            .map(|((name, prop), schema)| {
                                let required = prop.required;
                                (name.clone(), PropertySpec { schema, required })
                            })
                            .collect(),
                    }),
                }),
                ValueSchemaSpec::OneOf(u) => ValueSchemaSpec::OneOf(OneOfSpec {
                    annotations: u.annotations.clone(),
                    branches: kids.collect(),
                }),
                ValueSchemaSpec::Json(a) => ValueSchemaSpec::Json(a.clone()),
                scalar => match scalar.scalar() {
                    Some((kind, s)) => kind.wrap(s.clone()),
                    None => ValueSchemaSpec::json(),
                },
            }
        })
    }
}

impl PartialEq for ValueSchemaSpec {
    fn eq(&self, other: &Self) -> bool {
        use ValueSchemaSpec as V;
        let mut stack = vec![(self, other)];
        while let Some(pair) = stack.pop() {
            let same = match pair {
                (V::String(a), V::String(b))
                | (V::Number(a), V::Number(b))
                | (V::Integer(a), V::Integer(b))
                | (V::Boolean(a), V::Boolean(b))
                | (V::Null(a), V::Null(b)) => a == b,
                (V::Json(a), V::Json(b)) => a == b,
                (V::Array(a), V::Array(b)) => {
                    a.annotations == b.annotations
                        && match (&a.items, &b.items) {
                            (Some(x), Some(y)) => {
                                stack.push((&**x, &**y));
                                true
                            }
                            (x, y) => x.is_none() && y.is_none(),
                        }
                }
                (V::Object(a), V::Object(b)) => {
                    a.annotations == b.annotations
                        && a.additional_properties == b.additional_properties
                        && match (&a.properties, &b.properties) {
                            (Some(x), Some(y)) => {
                                let shape_eq = x.len() == y.len()
                                    && x.entries
                                        .iter()
                                        .zip(&y.entries)
                                        .all(|(p, q)| p.0 == q.0 && p.1.required == q.1.required);
                                let pairs = x.entries.iter().zip(&y.entries);
                                stack.extend(pairs.map(|(p, q)| (&p.1.schema, &q.1.schema)));
                                shape_eq
                            }
                            (x, y) => x.is_none() && y.is_none(),
                        }
                }
                (V::OneOf(a), V::OneOf(b)) => {
                    stack.extend(a.branches.iter().zip(&b.branches));
                    a.annotations == b.annotations && a.branches.len() == b.branches.len()
                }
                _ => false,
            };
            if !same {
                return false;
            }
        }
        true
    }
}

impl Eq for ValueSchemaSpec {}

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

//! The author schema DSL (spec §1): [`ValueSchemaSpec`] and [`ParameterSchemaSpec`].
//!
//! Tool authors describe values with a small vocabulary that compiles to the enforced JSON
//! Schema subset (see [`super::assert_supported`]). Compared with raw JSON Schema, the DSL
//!
//! * makes every explicit object state `additionalProperties: true|false`;
//! * marks a required property with `required: true` on the property itself (property maps
//!   only: a parameter spec's entries and an object's `properties`);
//! * adds `{"type": "json"}`, any lossless JSON value (it compiles to `{}` plus annotations);
//! * has no `pattern`, `minimum` and the like.
//!
//! A spec is given as JSON (configuration files, the CLI: [`compile_value_spec`],
//! [`compile_parameter_spec`]) or built in code with the typed [`ValueSchemaSpec`] and
//! [`ParameterSchemaSpec`], which compile through the same code path.
//!
//! Compilation has two passes. The author pass stops at the first mistake and names it with an
//! author path (`schema…` for a value root, `parameters…` for a parameter spec). The compiled
//! schema is then asserted by the raw subset, which lists every violation with raw paths rooted
//! at `schema` (for parameter specs too: `schema.properties.n.enum …`). Both fail with a
//! [`JsonSchemaError`]. The compiled key order is fixed (spec §1.2.1), so the bytes the model sees
//! do not depend on how the author ordered the keys.
//!
//! ```
//! use dsh_tools::schema::dsl::{ParameterSchemaSpec, ValueSchemaSpec, compile_parameter_spec};
//! use serde_json::json;
//!
//! // Built in code…
//! let params = ParameterSchemaSpec::new()
//!     .required("path", ValueSchemaSpec::string().description("File to read"))
//!     .optional("mode", ValueSchemaSpec::string().enum_values(["text", "bytes"]));
//! let schema = params.to_json_schema()?;
//! assert_eq!(
//!     schema.to_string(),
//!     r#"{"type":"object","properties":{"path":{"type":"string","description":"File to read"},"mode":{"type":"string","enum":["text","bytes"]}},"required":["path"]}"#
//! );
//!
//! // …or read from a configuration file: the same schema.
//! let from_config = compile_parameter_spec(&json!({
//!     "path": {"description": "File to read", "type": "string", "required": true},
//!     "mode": {"type": "string", "enum": ["text", "bytes"]}
//! }))?;
//! assert_eq!(from_config.to_string(), schema.to_string());
//!
//! // Mistakes are named with their author path.
//! let err = compile_parameter_spec(&json!({"limit": {"type": "int"}})).unwrap_err();
//! assert_eq!(
//!     err.to_string(),
//!     "unsupported JSON schema: parameters.limit.type must be \
//!      string/number/integer/boolean/null/array/object/json, or use oneOf"
//! );
//! # Ok::<(), dsh_tools::schema::JsonSchemaError>(())
//! ```
//!
//! Every walk here (author pass, compile, conversions, `Clone`, `PartialEq`, `Debug`, `Drop`) uses
//! explicit stacks, so specs nested 100,000 deep are fine on a small stack. Two exceptions are
//! outside this module's control: `Serialize` (serde's data model nests one call per level) and
//! the parsing of JSON text into a `Value` that `Deserialize` starts with (serde_json's
//! recursion limit of 128 applies there unless disabled).

use super::JsonSchemaError;
use super::path::{PathArena, PathId, ROOT, Seg};
use super::subset;
use crate::json::{drop_deep, to_compact_string};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value};
use std::fmt;

const ANNOTATIONS: [&str; 4] = ["description", "title", "default", "examples"];

// ---------------------------------------------------------------------------------------------
// JSON entry points
// ---------------------------------------------------------------------------------------------

/// Compiles a value-root author spec (given as JSON) into the JSON Schema of spec §1.2.
///
/// The author pass reports only its first mistake, with paths rooted at `schema`; the compiled
/// schema is then asserted by the raw subset, which reports every violation.
///
/// ```
/// use dsh_tools::schema::dsl::compile_value_spec;
/// use serde_json::json;
///
/// let schema = compile_value_spec(&json!({
///     "description": "maybe text",
///     "oneOf": [{"type": "string"}, {"type": "json"}]
/// }))?;
/// assert_eq!(schema.to_string(), r#"{"oneOf":[{"type":"string"},{}],"description":"maybe text"}"#);
///
/// let err = compile_value_spec(&json!({"type": "object"})).unwrap_err();
/// assert_eq!(err.violations(), ["schema.additionalProperties must be explicitly true or false"]);
/// let err = compile_value_spec(&json!({"type": "integer", "const": 1.5, "title": 7})).unwrap_err();
/// assert_eq!(err.violations(), ["schema.title must be a string", "schema.const must be a integer value"]);
/// # Ok::<(), dsh_tools::schema::JsonSchemaError>(())
/// ```
pub fn compile_value_spec(spec: &Value) -> Result<Value, JsonSchemaError> {
    author_pass(spec, Origin::Value)?.compile()
}

/// Compiles a parameter spec (a map name → property) into the implicit open root object schema
/// `{"type": "object", "properties": {…}, "required": […]}`.
///
/// The root has no `additionalProperties` (open by JSON Schema default) and no `required` key
/// when nothing is required. Author paths are rooted at `parameters`; raw-subset violations of
/// the compiled schema at `schema`.
///
/// ```
/// use dsh_tools::schema::dsl::compile_parameter_spec;
/// use serde_json::json;
///
/// let schema = compile_parameter_spec(&json!({"q": {"type": "string"}}))?;
/// assert_eq!(schema.to_string(), r#"{"type":"object","properties":{"q":{"type":"string"}}}"#);
///
/// let err = compile_parameter_spec(&json!({"n": {"type": "number", "enum": ["1"]}})).unwrap_err();
/// assert_eq!(err.violations(), ["schema.properties.n.enum must be a non-empty array of number values"]);
/// # Ok::<(), dsh_tools::schema::JsonSchemaError>(())
/// ```
pub fn compile_parameter_spec(spec: &Value) -> Result<Value, JsonSchemaError> {
    author_pass(spec, Origin::Parameters)?.compile()
}

// ---------------------------------------------------------------------------------------------
// The author pass: checks the author shape and lists the nodes in pre-order
// ---------------------------------------------------------------------------------------------

/// Which author root a spec is.
#[derive(Clone, Copy)]
enum Origin {
    Value,
    Parameters,
}

impl Origin {
    fn label(self) -> &'static str {
        match self {
            Self::Value => "schema",
            Self::Parameters => "parameters",
        }
    }
}

/// The five scalar node types.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Scalar {
    String,
    Number,
    Integer,
    Boolean,
    Null,
}

impl Scalar {
    fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "string" => Self::String,
            "number" => Self::Number,
            "integer" => Self::Integer,
            "boolean" => Self::Boolean,
            "null" => Self::Null,
            _ => return None,
        })
    }

    fn name(self) -> &'static str {
        match self {
            Self::String => "string",
            Self::Number => "number",
            Self::Integer => "integer",
            Self::Boolean => "boolean",
            Self::Null => "null",
        }
    }

    fn wrap(self, spec: ScalarSpec) -> ValueSchemaSpec {
        match self {
            Self::String => ValueSchemaSpec::String(spec),
            Self::Number => ValueSchemaSpec::Number(spec),
            Self::Integer => ValueSchemaSpec::Integer(spec),
            Self::Boolean => ValueSchemaSpec::Boolean(spec),
            Self::Null => ValueSchemaSpec::Null(spec),
        }
    }
}

/// What an author node checked out to be, with its number of child nodes.
#[derive(Clone, Copy)]
enum Kind {
    Scalar(Scalar),
    Array(usize),
    Object(usize),
    Json,
    OneOf(usize),
    /// The implicit parameter root (only ever the root frame).
    Params(usize),
}

/// One checked author node. Children follow their parent in pre-order.
struct Frame<'a> {
    node: &'a Map<String, Value>,
    kind: Kind,
}

impl Frame<'_> {
    fn arity(&self) -> usize {
        match self.kind {
            Kind::Array(n) | Kind::Object(n) | Kind::OneOf(n) | Kind::Params(n) => n,
            Kind::Scalar(_) | Kind::Json => 0,
        }
    }
}

/// A spec that passed the author pass: its root and every other node in pre-order.
struct Parsed<'a> {
    root: Frame<'a>,
    below: Vec<Frame<'a>>,
}

impl Parsed<'_> {
    /// Builds bottom-up with `build`, returning the root's built children.
    fn root_children<T>(&self, build: impl FnMut(&Frame<'_>, Vec<T>) -> T) -> Vec<T> {
        build_below(&self.below, self.root.arity(), Frame::arity, build)
    }

    /// The compiled schema, asserted by the raw subset.
    fn compile(&self) -> Result<Value, JsonSchemaError> {
        let kids = self.root_children(compile_node);
        let compiled = compile_node(&self.root, kids);
        let violations = subset::check(&compiled);
        if violations.is_empty() {
            Ok(compiled)
        } else {
            drop_deep(compiled);
            Err(JsonSchemaError::new(violations))
        }
    }

    /// Runs the raw pass on the compiled schema, keeping only the verdict.
    fn assert_compiles(&self) -> Result<(), JsonSchemaError> {
        self.compile().map(drop_deep)
    }
}

/// A node waiting to be checked; `entry` marks a property-map entry (may say `required`).
struct Task<'a> {
    node: &'a Value,
    path: PathId,
    entry: bool,
}

/// The author pass (spec §1.3): the first author-shape mistake, or every node in pre-order.
fn author_pass(spec: &Value, origin: Origin) -> Result<Parsed<'_>, JsonSchemaError> {
    let label = origin.label();
    let mut paths = PathArena::default();
    let mut tasks = Vec::new();
    let root = match origin {
        Origin::Value => examine(
            Task {
                node: spec,
                path: ROOT,
                entry: false,
            },
            &mut paths,
            &mut tasks,
        ),
        Origin::Parameters => match spec.as_object() {
            Some(map) => {
                push_entries(map, ROOT, Seg::Key, &mut paths, &mut tasks);
                Ok(Frame {
                    node: map,
                    kind: Kind::Params(map.len()),
                })
            }
            None => Err((ROOT, " must be an object of value schemas".to_owned())),
        },
    };
    let fail = |paths: &PathArena<'_>, (path, message): (PathId, String)| {
        JsonSchemaError::new(vec![format!("{}{message}", paths.render(label, path))])
    };
    let root = root.map_err(|e| fail(&paths, e))?;
    let mut below = Vec::new();
    while let Some(task) = tasks.pop() {
        match examine(task, &mut paths, &mut tasks) {
            Ok(frame) => below.push(frame),
            Err(e) => return Err(fail(&paths, e)),
        }
    }
    Ok(Parsed { root, below })
}

/// Schedules a property map's entries (declaration order, so pushed in reverse).
fn push_entries<'a>(
    map: &'a Map<String, Value>,
    parent: PathId,
    seg: fn(&'a str) -> Seg<'a>,
    paths: &mut PathArena<'a>,
    tasks: &mut Vec<Task<'a>>,
) {
    for (key, node) in map.iter().rev() {
        let path = paths.push(parent, seg(key));
        tasks.push(Task {
            node,
            path,
            entry: true,
        });
    }
}

/// Checks one author node in the spec's order (§1.3.5) and schedules its children. An error is
/// the failing node's path and the message suffix.
fn examine<'a>(
    task: Task<'a>,
    paths: &mut PathArena<'a>,
    tasks: &mut Vec<Task<'a>>,
) -> Result<Frame<'a>, (PathId, String)> {
    let Task { node, path, entry } = task;
    let fail = |message: &str| Err((path, message.to_owned()));
    let Some(map) = node.as_object() else {
        return fail(" must be a value schema object");
    };
    if entry && map.get("required").is_some_and(|r| r != &Value::Bool(true)) {
        return fail(".required must be true when present");
    }
    let check_keys = |extra: &[&str]| match map.keys().find(|k| {
        !(ANNOTATIONS.contains(&k.as_str())
            || extra.contains(&k.as_str())
            || (entry && k.as_str() == "required"))
    }) {
        Some(key) => Err((
            path,
            format!(".{key} is not supported by the value schema DSL"),
        )),
        None => Ok(()),
    };
    if let Some(branches) = map.get("oneOf") {
        check_keys(&["oneOf", "type"])?;
        if map.contains_key("type") {
            return fail(" cannot declare both type and oneOf");
        }
        let Some(branches) = branches.as_array() else {
            return fail(".oneOf must be an array of at least two value schemas");
        };
        for (i, node) in branches.iter().enumerate().rev() {
            let path = paths.push(path, Seg::OneOf(i));
            tasks.push(Task {
                node,
                path,
                entry: false,
            });
        }
        return Ok(Frame {
            node: map,
            kind: Kind::OneOf(branches.len()),
        });
    }
    let kind = match map.get("type").and_then(Value::as_str) {
        Some("json") => {
            check_keys(&["type"])?;
            Kind::Json
        }
        Some("object") => {
            check_keys(&["type", "properties", "additionalProperties"])?;
            if !matches!(map.get("additionalProperties"), Some(Value::Bool(_))) {
                return fail(".additionalProperties must be explicitly true or false");
            }
            match map.get("properties") {
                None => Kind::Object(0),
                Some(Value::Object(props)) => {
                    push_entries(props, path, Seg::Prop, paths, tasks);
                    Kind::Object(props.len())
                }
                Some(_) => return fail(".properties must be an object of value schemas"),
            }
        }
        Some("array") => {
            check_keys(&["type", "items"])?;
            match map.get("items") {
                Some(node) => {
                    let path = paths.push(path, Seg::Lit(".items"));
                    tasks.push(Task {
                        node,
                        path,
                        entry: false,
                    });
                    Kind::Array(1)
                }
                None => Kind::Array(0),
            }
        }
        other => match other.and_then(Scalar::parse) {
            Some(scalar) => {
                check_keys(&["type", "enum", "const"])?;
                if map.get("enum").is_some_and(|e| !e.is_array()) {
                    return fail(".enum must be a non-empty array of scalar values");
                }
                Kind::Scalar(scalar)
            }
            None => {
                return fail(
                    ".type must be string/number/integer/boolean/null/array/object/json, or use oneOf",
                );
            }
        },
    };
    Ok(Frame { node: map, kind })
}

// ---------------------------------------------------------------------------------------------
// Bottom-up building shared by every conversion
// ---------------------------------------------------------------------------------------------

/// Builds every node of `nodes` (a root's descendants in pre-order) bottom-up, without
/// recursion, and returns the root's `root_arity` built children in order.
fn build_below<N, T>(
    nodes: &[N],
    root_arity: usize,
    arity: impl Fn(&N) -> usize,
    mut build: impl FnMut(&N, Vec<T>) -> T,
) -> Vec<T> {
    // In reverse pre-order a node's subtrees are already built: its children are the top
    // `arity` entries of `done`, first child on top.
    let mut done = Vec::new();
    for node in nodes.iter().rev() {
        let kids = take_kids(&mut done, arity(node));
        done.push(build(node, kids));
    }
    take_kids(&mut done, root_arity)
}

fn take_kids<T>(done: &mut Vec<T>, n: usize) -> Vec<T> {
    let mut kids = done.split_off(done.len().saturating_sub(n));
    kids.reverse();
    kids
}

/// Clones a value without recursion (`Value::clone` recurses once per level).
fn clone_deep(value: &Value) -> Value {
    fn arity(v: &&Value) -> usize {
        match v {
            Value::Array(items) => items.len(),
            Value::Object(map) => map.len(),
            _ => 0,
        }
    }
    fn shallow(v: &&Value, kids: Vec<Value>) -> Value {
        match v {
            Value::Array(_) => Value::Array(kids),
            Value::Object(map) => Value::Object(map.keys().cloned().zip(kids).collect()),
            scalar => (*scalar).clone(),
        }
    }
    if arity(&value) == 0 {
        return shallow(&value, Vec::new());
    }
    let mut order = Vec::new();
    let mut stack = vec![value];
    while let Some(v) = stack.pop() {
        match v {
            Value::Array(items) => stack.extend(items.iter().rev()),
            Value::Object(map) => stack.extend(map.values().rev()),
            _ => {}
        }
        order.push(v);
    }
    let kids = build_below(&order[1..], arity(&value), arity, shallow);
    shallow(&value, kids)
}

/// `Value` equality without recursion.
fn value_eq(a: &Value, b: &Value) -> bool {
    let mut stack = vec![(a, b)];
    while let Some(pair) = stack.pop() {
        match pair {
            (Value::Array(x), Value::Array(y)) if x.len() == y.len() => {
                stack.extend(x.iter().zip(y));
            }
            (Value::Object(x), Value::Object(y)) if x.len() == y.len() => {
                for (k, xv) in x {
                    match y.get(k) {
                        Some(yv) => stack.push((xv, yv)),
                        None => return false,
                    }
                }
            }
            (Value::Array(_) | Value::Object(_), _) | (_, Value::Array(_) | Value::Object(_)) => {
                return false;
            }
            (x, y) if x != y => return false,
            _ => {}
        }
    }
    true
}

fn option_value_eq(a: Option<&Value>, b: Option<&Value>) -> bool {
    match (a, b) {
        (Some(a), Some(b)) => value_eq(a, b),
        (a, b) => a.is_none() && b.is_none(),
    }
}

/// Frees a value without recursion.
fn free(value: Option<Value>) {
    if let Some(v @ (Value::Array(_) | Value::Object(_))) = value {
        drop_deep(v);
    }
}

fn put_type(out: &mut Map<String, Value>, name: &str) {
    out.insert("type".to_owned(), Value::String(name.to_owned()));
}

fn is_required(entry: &Value) -> bool {
    matches!(entry.get("required"), Some(Value::Bool(true)))
}

fn copy_annotations(node: &Map<String, Value>, out: &mut Map<String, Value>) {
    for key in ANNOTATIONS {
        if let Some(v) = node.get(key) {
            out.insert(key.to_owned(), clone_deep(v));
        }
    }
}

/// Builds `properties` and `required` of a property map from its entries' compiled schemas.
fn compile_property_map(
    entries: &Map<String, Value>,
    kids: Vec<Value>,
    out: &mut Map<String, Value>,
) {
    let mut required = Vec::new();
    let mut properties = Map::new();
    for ((name, entry), kid) in entries.iter().zip(kids) {
        if is_required(entry) {
            required.push(Value::String(name.clone()));
        }
        properties.insert(name.clone(), kid);
    }
    out.insert("properties".to_owned(), Value::Object(properties));
    if !required.is_empty() {
        out.insert("required".to_owned(), Value::Array(required));
    }
}

/// Compiles one checked node given its compiled children, in the key order of spec §1.2.1.
fn compile_node(frame: &Frame<'_>, kids: Vec<Value>) -> Value {
    let node = frame.node;
    let mut out = Map::new();
    match frame.kind {
        Kind::Scalar(scalar) => {
            put_type(&mut out, scalar.name());
            copy_annotations(node, &mut out);
            for key in ["enum", "const"] {
                if let Some(v) = node.get(key) {
                    out.insert(key.to_owned(), clone_deep(v));
                }
            }
        }
        Kind::Array(_) => {
            put_type(&mut out, "array");
            copy_annotations(node, &mut out);
            if let Some(items) = kids.into_iter().next() {
                out.insert("items".to_owned(), items);
            }
        }
        Kind::Object(_) => {
            put_type(&mut out, "object");
            copy_annotations(node, &mut out);
            if let Some(open) = node.get("additionalProperties") {
                out.insert("additionalProperties".to_owned(), open.clone());
            }
            if let Some(Value::Object(entries)) = node.get("properties") {
                compile_property_map(entries, kids, &mut out);
            }
        }
        Kind::Json => copy_annotations(node, &mut out),
        Kind::OneOf(_) => {
            out.insert("oneOf".to_owned(), Value::Array(kids));
            copy_annotations(node, &mut out);
        }
        Kind::Params(_) => {
            put_type(&mut out, "object");
            compile_property_map(node, kids, &mut out);
        }
    }
    Value::Object(out)
}

// ---------------------------------------------------------------------------------------------
// Typed specs
// ---------------------------------------------------------------------------------------------

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
struct JsonText<'a>(&'a Value);

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
fn author_node(spec: &ValueSchemaSpec, kids: Vec<Value>) -> Value {
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
fn author_entries(map: &ParameterSchemaSpec, kids: impl Iterator<Item = Value>) -> Value {
    let entries = map.entries.iter().zip(kids).map(|((name, prop), mut kid)| {
        if let (true, Value::Object(node)) = (prop.required, &mut kid) {
            node.insert("required".to_owned(), Value::Bool(true));
        }
        (name.clone(), kid)
    });
    Value::Object(entries.collect())
}

/// The typed node of one checked author node given its typed children.
fn typed_node(frame: &Frame<'_>, kids: Vec<ValueSchemaSpec>) -> ValueSchemaSpec {
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

fn typed_entries(
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
    entries: Vec<(String, PropertySpec)>,
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::json_equal;
    use serde_json::json;

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
        let err =
            JsonSchemaError::new(params_err(json!({"n": {"type": "integer", "enum": [0.5]}})));
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
            let err = compile_value_spec(&bad_leaf).unwrap_err().into_violations();
            let expected = format!("schema{}.{TYPE_MESSAGE}", ".items".repeat(DEPTH));
            assert_eq!(err, [expected]);
            let err = compile_value_spec(&bad_raw).unwrap_err().into_violations();
            let expected = format!(
                "schema{}.enum must be a non-empty array of string values",
                ".oneOf[0]".repeat(DEPTH)
            );
            assert_eq!(err, [expected]);
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
}

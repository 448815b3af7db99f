//! The DSL compiler over JSON specs: the author pass (every mistake, in order) and the
//! compilation to subset schemas, both with explicit stacks.

use super::super::JsonSchemaError;
use super::super::keywords::{
    ADDITIONAL_PROPERTIES, ANNOTATIONS, CONST, ENUM, ITEMS, MEMBERS, ONE_OF, PROPERTIES, REQUIRED,
    TYPE,
};
use super::super::path::{PathArena, PathId, ROOT, Seg};
use super::super::subset;
use crate::json::{clone_deep, drop_deep};
use serde_json::{Map, Value};

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
pub(super) enum Origin {
    Value,
    Parameters,
}

impl Origin {
    pub(super) fn label(self) -> &'static str {
        match self {
            Self::Value => "schema",
            Self::Parameters => "parameters",
        }
    }
}

/// The five scalar node types.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Scalar {
    String,
    Number,
    Integer,
    Boolean,
    Null,
}

impl Scalar {
    pub(super) fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "string" => Self::String,
            "number" => Self::Number,
            "integer" => Self::Integer,
            "boolean" => Self::Boolean,
            "null" => Self::Null,
            _ => return None,
        })
    }

    pub(super) fn name(self) -> &'static str {
        match self {
            Self::String => "string",
            Self::Number => "number",
            Self::Integer => "integer",
            Self::Boolean => "boolean",
            Self::Null => "null",
        }
    }
}

/// What an author node checked out to be, with its number of child nodes.
#[derive(Clone, Copy)]
pub(super) enum Kind {
    Scalar(Scalar),
    Array(usize),
    Object(usize),
    Json,
    OneOf(usize),
    /// The implicit parameter root (only ever the root frame).
    Params(usize),
}

/// One checked author node. Children follow their parent in pre-order.
pub(super) struct Frame<'a> {
    pub(super) node: &'a Map<String, Value>,
    pub(super) kind: Kind,
}

impl Frame<'_> {
    pub(super) fn arity(&self) -> usize {
        match self.kind {
            Kind::Array(n) | Kind::Object(n) | Kind::OneOf(n) | Kind::Params(n) => n,
            Kind::Scalar(_) | Kind::Json => 0,
        }
    }
}

/// A spec that passed the author pass: its root and every other node in pre-order.
pub(super) struct Parsed<'a> {
    pub(super) root: Frame<'a>,
    pub(super) below: Vec<Frame<'a>>,
}

impl Parsed<'_> {
    /// Builds bottom-up with `build`, returning the root's built children.
    pub(super) fn root_children<T>(&self, build: impl FnMut(&Frame<'_>, Vec<T>) -> T) -> Vec<T> {
        build_below(&self.below, self.root.arity(), Frame::arity, build)
    }

    /// The compiled schema, asserted by the raw subset.
    pub(super) fn compile(&self) -> Result<Value, JsonSchemaError> {
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
    pub(super) fn assert_compiles(&self) -> Result<(), JsonSchemaError> {
        self.compile().map(drop_deep)
    }
}

/// A node waiting to be checked; `entry` marks a property-map entry (may say `required`).
pub(super) struct Task<'a> {
    pub(super) node: &'a Value,
    pub(super) path: PathId,
    pub(super) entry: bool,
}

/// The author pass (spec §1.3): the first author-shape mistake, or every node in pre-order.
pub(super) fn author_pass(spec: &Value, origin: Origin) -> Result<Parsed<'_>, JsonSchemaError> {
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
pub(super) fn push_entries<'a>(
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
pub(super) fn examine<'a>(
    task: Task<'a>,
    paths: &mut PathArena<'a>,
    tasks: &mut Vec<Task<'a>>,
) -> Result<Frame<'a>, (PathId, String)> {
    let Task { node, path, entry } = task;
    let fail = |message: &str| Err((path, message.to_owned()));
    let Some(map) = node.as_object() else {
        return fail(" must be a value schema object");
    };
    if entry && map.get(REQUIRED).is_some_and(|r| r != &Value::Bool(true)) {
        return fail(".required must be true when present");
    }
    let check_keys = |extra: &[&str]| match map.keys().find(|k| {
        !(ANNOTATIONS.contains(&k.as_str())
            || extra.contains(&k.as_str())
            || (entry && k.as_str() == REQUIRED))
    }) {
        Some(key) => Err((
            path,
            format!(".{key} is not supported by the value schema DSL"),
        )),
        None => Ok(()),
    };
    if let Some(branches) = map.get(ONE_OF) {
        check_keys(&[ONE_OF, TYPE])?;
        if map.contains_key(TYPE) {
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
    let kind = match map.get(TYPE).and_then(Value::as_str) {
        Some("json") => {
            check_keys(&[TYPE])?;
            Kind::Json
        }
        Some("object") => {
            check_keys(&[TYPE, PROPERTIES, ADDITIONAL_PROPERTIES])?;
            if !matches!(map.get(ADDITIONAL_PROPERTIES), Some(Value::Bool(_))) {
                return fail(".additionalProperties must be explicitly true or false");
            }
            match map.get(PROPERTIES) {
                None => Kind::Object(0),
                Some(Value::Object(props)) => {
                    push_entries(props, path, Seg::Prop, paths, tasks);
                    Kind::Object(props.len())
                }
                Some(_) => return fail(".properties must be an object of value schemas"),
            }
        }
        Some("array") => {
            check_keys(&[TYPE, ITEMS])?;
            match map.get(ITEMS) {
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
                check_keys(&[TYPE, ENUM, CONST])?;
                if map.get(ENUM).is_some_and(|e| !e.is_array()) {
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
pub(super) fn build_below<N, T>(
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

pub(super) fn take_kids<T>(done: &mut Vec<T>, n: usize) -> Vec<T> {
    let mut kids = done.split_off(done.len().saturating_sub(n));
    kids.reverse();
    kids
}

/// `Value` equality without recursion.
pub(super) fn value_eq(a: &Value, b: &Value) -> bool {
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

pub(super) fn option_value_eq(a: Option<&Value>, b: Option<&Value>) -> bool {
    match (a, b) {
        (Some(a), Some(b)) => value_eq(a, b),
        (a, b) => a.is_none() && b.is_none(),
    }
}

/// Frees a value without recursion.
pub(super) fn free(value: Option<Value>) {
    if let Some(v @ (Value::Array(_) | Value::Object(_))) = value {
        drop_deep(v);
    }
}

pub(super) fn put_type(out: &mut Map<String, Value>, name: &str) {
    out.insert(TYPE.to_owned(), Value::String(name.to_owned()));
}

pub(super) fn is_required(entry: &Value) -> bool {
    matches!(entry.get(REQUIRED), Some(Value::Bool(true)))
}

pub(super) fn copy_annotations(node: &Map<String, Value>, out: &mut Map<String, Value>) {
    for key in ANNOTATIONS {
        if let Some(v) = node.get(key) {
            out.insert(key.to_owned(), clone_deep(v));
        }
    }
}

/// Builds `properties` and `required` of a property map from its entries' compiled schemas.
pub(super) fn compile_property_map(
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
    out.insert(PROPERTIES.to_owned(), Value::Object(properties));
    if !required.is_empty() {
        out.insert(REQUIRED.to_owned(), Value::Array(required));
    }
}

/// Compiles one checked node given its compiled children, in the key order of spec §1.2.1.
pub(super) fn compile_node(frame: &Frame<'_>, kids: Vec<Value>) -> Value {
    let node = frame.node;
    let mut out = Map::new();
    match frame.kind {
        Kind::Scalar(scalar) => {
            put_type(&mut out, scalar.name());
            copy_annotations(node, &mut out);
            for key in MEMBERS {
                if let Some(v) = node.get(key) {
                    out.insert(key.to_owned(), clone_deep(v));
                }
            }
        }
        Kind::Array(_) => {
            put_type(&mut out, "array");
            copy_annotations(node, &mut out);
            if let Some(items) = kids.into_iter().next() {
                out.insert(ITEMS.to_owned(), items);
            }
        }
        Kind::Object(_) => {
            put_type(&mut out, "object");
            copy_annotations(node, &mut out);
            if let Some(open) = node.get(ADDITIONAL_PROPERTIES) {
                out.insert(ADDITIONAL_PROPERTIES.to_owned(), open.clone());
            }
            if let Some(Value::Object(entries)) = node.get(PROPERTIES) {
                compile_property_map(entries, kids, &mut out);
            }
        }
        Kind::Json => copy_annotations(node, &mut out),
        Kind::OneOf(_) => {
            out.insert(ONE_OF.to_owned(), Value::Array(kids));
            copy_annotations(node, &mut out);
        }
        Kind::Params(_) => {
            put_type(&mut out, "object");
            compile_property_map(node, kids, &mut out);
        }
    }
    Value::Object(out)
}

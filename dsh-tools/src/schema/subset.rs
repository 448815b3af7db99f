//! `assert_supported`: is a JSON value a schema of the supported subset? (spec §2.1)

use super::keywords::{
    ADDITIONAL_PROPERTIES, ANNOTATIONS, ARRAY_KEYWORDS, BOUNDS, CONSTRAINTS, COUNTS, DESCRIPTION,
    EXTENSION, MEMBERS, OBJECT_KEYWORDS, ONE_OF, PATTERN, STRING_KEYWORDS, SUBSET_TEXT, TITLE,
    TYPE,
};
use super::path::{PathArena, PathId, ROOT, Seg};
use super::pattern::{self, MAX_SCHEMA_PATTERN_BYTES};
use super::{JsonSchemaError, Sink};
use crate::json::{is_integer, is_lossless, is_lossless_number, json_equal};
use rustc_hash::FxHashSet;
use serde_json::{Map, Value};

/// The seven `type` values.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Type {
    Object,
    Array,
    String,
    Number,
    Integer,
    Boolean,
    Null,
}

impl Type {
    pub(crate) fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "object" => Self::Object,
            "array" => Self::Array,
            "string" => Self::String,
            "number" => Self::Number,
            "integer" => Self::Integer,
            "boolean" => Self::Boolean,
            "null" => Self::Null,
            _ => return None,
        })
    }

    pub(crate) fn name(self) -> &'static str {
        match self {
            Self::Object => "object",
            Self::Array => "array",
            Self::String => "string",
            Self::Number => "number",
            Self::Integer => "integer",
            Self::Boolean => "boolean",
            Self::Null => "null",
        }
    }

    fn is_scalar(self) -> bool {
        !matches!(self, Self::Object | Self::Array)
    }

    /// Whether constraint keyword `kw` applies to this type.
    fn allows(self, kw: &str) -> bool {
        if OBJECT_KEYWORDS.contains(&kw) {
            self == Self::Object
        } else if ARRAY_KEYWORDS.contains(&kw) {
            self == Self::Array
        } else if MEMBERS.contains(&kw) {
            self.is_scalar()
        } else if BOUNDS.contains(&kw) {
            matches!(self, Self::Number | Self::Integer)
        } else {
            STRING_KEYWORDS.contains(&kw) && self == Self::String
        }
    }

    /// Whether `v` is a member of this scalar type (enum/const members).
    pub(crate) fn admits(self, v: &Value) -> bool {
        match (self, v) {
            (Self::String, Value::String(_))
            | (Self::Boolean, Value::Bool(_))
            | (Self::Null, Value::Null) => true,
            (Self::Number, Value::Number(n)) => is_lossless_number(n),
            (Self::Integer, Value::Number(n)) => is_integer(n),
            _ => false,
        }
    }
}

fn is_keyword(k: &str) -> bool {
    k == TYPE || k == ONE_OF || CONSTRAINTS.contains(&k) || ANNOTATIONS.contains(&k)
}

/// The distinct patterns of one schema and their compiled size together.
#[derive(Default)]
struct SchemaPatterns<'a> {
    seen: FxHashSet<&'a str>,
    bytes: usize,
}

impl<'a> SchemaPatterns<'a> {
    /// Builds `p` (once per process) and counts it toward the schema's total: the problem, if any.
    fn add(&mut self, p: &'a str) -> Option<String> {
        if self.bytes > MAX_SCHEMA_PATTERN_BYTES {
            // Past the total, nothing more is built: each further new pattern is reported.
            return (!self.seen.contains(p)).then(over_total);
        }
        match pattern::build(p) {
            Err(e) => Some(format!("must be a valid regular expression: {e}")),
            Ok(built) => {
                if self.seen.insert(p) {
                    self.bytes += built.bytes;
                }
                (self.bytes > MAX_SCHEMA_PATTERN_BYTES).then(over_total)
            }
        }
    }
}

fn over_total() -> String {
    format!(
        "is over the limit on compiled patterns per schema ({} MiB together)",
        MAX_SCHEMA_PATTERN_BYTES >> 20
    )
}

/// Reads a non-negative integer bound (`minLength` and the like), saturating at `u64::MAX`.
pub(crate) fn count_bound(v: &Value) -> Option<u64> {
    match v {
        Value::Number(n) if is_integer(n) => match n.as_u64() {
            Some(u) => Some(u),
            None => match n.as_f64() {
                Some(f) if f >= 0.0 => Some(if f >= u64::MAX as f64 {
                    u64::MAX
                } else {
                    f as u64
                }),
                _ => None,
            },
        },
        _ => None,
    }
}

/// Checks that `schema` is inside the supported subset, listing every violation (spec §2.1).
///
/// Paths start at `schema`; the order of the violations is the spec's (§2.1.5).
///
/// ```
/// use dsh_tools::schema::assert_supported;
/// use serde_json::json;
///
/// assert!(assert_supported(&json!({"type": "string", "enum": ["a", "b"]})).is_ok());
/// let err = assert_supported(&json!({"type": ["string", "null"], "format": "uuid"})).unwrap_err();
/// assert_eq!(err.code(), "UNSUPPORTED_SCHEMA");
/// assert_eq!(err.violations().len(), 2);
/// ```
pub fn assert_supported(schema: &Value) -> Result<(), JsonSchemaError> {
    let violations = check(schema);
    if violations.is_empty() {
        Ok(())
    } else {
        Err(JsonSchemaError::new(violations))
    }
}

enum Task<'a> {
    Visit(&'a Value, PathId),
    ObjectTail(&'a Map<String, Value>, PathId),
    UnionTail(&'a Map<String, Value>, PathId),
}

/// Every violation of `schema`, in order (empty when supported).
pub(crate) fn check(schema: &Value) -> Vec<String> {
    let mut paths = PathArena::default();
    let mut sink = Sink::default();
    let mut tasks = vec![Task::Visit(schema, ROOT)];
    let mut patterns = SchemaPatterns::default();
    while let Some(task) = tasks.pop() {
        match task {
            Task::Visit(node, path) => {
                visit(node, path, &mut paths, &mut sink, &mut tasks, &mut patterns)
            }
            Task::ObjectTail(map, path) => object_tail(map, path, &paths, &mut sink),
            Task::UnionTail(map, path) => {
                for kw in CONSTRAINTS {
                    if map.contains_key(kw) {
                        sink.add(|| {
                            format!("{}.{kw} is not supported beside oneOf", at(&paths, path))
                        });
                    }
                }
            }
        }
    }
    sink.finish()
}

fn at(paths: &PathArena<'_>, path: PathId) -> String {
    paths.render("schema", path)
}

fn visit<'a>(
    node: &'a Value,
    path: PathId,
    paths: &mut PathArena<'a>,
    sink: &mut Sink,
    tasks: &mut Vec<Task<'a>>,
    patterns: &mut SchemaPatterns<'a>,
) {
    let Some(map) = node.as_object() else {
        sink.add(|| format!("{} must be a schema object", at(paths, path)));
        return;
    };
    // (1) unknown keywords and annotation losslessness, in the node's key order.
    for (k, v) in map {
        if !is_keyword(k) {
            sink.add(|| {
                format!(
                    "{}.{k} is not a supported keyword (subset: {SUBSET_TEXT})",
                    at(paths, path)
                )
            });
        } else if ANNOTATIONS.contains(&k.as_str()) && !is_lossless(v) {
            sink.add(|| {
                format!(
                    "{}.{k} annotation must be lossless JSON data",
                    at(paths, path)
                )
            });
        }
    }
    // (2) description / title types.
    for kw in [DESCRIPTION, TITLE] {
        if map.get(kw).is_some_and(|v| !v.is_string()) {
            sink.add(|| format!("{}.{kw} must be a string", at(paths, path)));
        }
    }
    // (3) the structural decision.
    let (ty, one_of) = (map.get(TYPE), map.get(ONE_OF));
    match (ty, one_of) {
        (Some(_), Some(_)) => {
            sink.add(|| format!("{} cannot declare both type and oneOf", at(paths, path)));
        }
        (None, None) => {
            for kw in CONSTRAINTS {
                if map.contains_key(kw) {
                    sink.add(|| format!("{}.{kw} requires type or oneOf", at(paths, path)));
                }
            }
        }
        (None, Some(branches)) => {
            tasks.push(Task::UnionTail(map, path));
            match branches.as_array() {
                Some(list) if list.len() >= 2 => {
                    for (i, branch) in list.iter().enumerate().rev() {
                        let child = paths.push(path, Seg::OneOf(i));
                        tasks.push(Task::Visit(branch, child));
                    }
                }
                _ => sink.add(|| {
                    format!(
                        "{}.oneOf must be an array of at least two schemas",
                        at(paths, path)
                    )
                }),
            }
        }
        (Some(t), None) => {
            let ty = match t {
                Value::Array(_) => {
                    sink.add(|| {
                        format!(
                            "{}.type must be a single type string (type arrays are not supported)",
                            at(paths, path)
                        )
                    });
                    return;
                }
                Value::String(s) if Type::parse(s).is_some() => {
                    Type::parse(s).unwrap_or(Type::Null)
                }
                _ => {
                    sink.add(|| {
                        format!("{}.type must be one of object/array/string/number/integer/boolean/null", at(paths, path))
                    });
                    return;
                }
            };
            typed_node(map, ty, path, paths, sink, tasks, patterns);
        }
    }
}

fn typed_node<'a>(
    map: &'a Map<String, Value>,
    ty: Type,
    path: PathId,
    paths: &mut PathArena<'a>,
    sink: &mut Sink,
    tasks: &mut Vec<Task<'a>>,
    patterns: &mut SchemaPatterns<'a>,
) {
    // (4) misplaced keywords, fixed order.
    for kw in CONSTRAINTS {
        if map.contains_key(kw) && !ty.allows(kw) {
            sink.add(|| {
                format!(
                    "{}.{kw} is not supported on type \"{}\"",
                    at(paths, path),
                    ty.name()
                )
            });
        }
    }
    // (5) enum / const for scalars.
    if ty.is_scalar() {
        let name = ty.name();
        let enum_ok = map.get("enum").map(|e| match e.as_array() {
            Some(list) if !list.is_empty() && list.iter().all(|m| ty.admits(m)) => true,
            _ => {
                sink.add(|| {
                    format!(
                        "{}.enum must be a non-empty array of {name} values",
                        at(paths, path)
                    )
                });
                false
            }
        });
        let const_ok = map.get("const").map(|c| {
            let ok = ty.admits(c);
            if !ok {
                sink.add(|| format!("{}.const must be a {name} value", at(paths, path)));
            }
            ok
        });
        if enum_ok == Some(true) && const_ok == Some(true) {
            let (Some(Value::Array(members)), Some(c)) = (map.get("enum"), map.get("const")) else {
                return;
            };
            if !members.iter().any(|m| json_equal(m, c)) {
                sink.add(|| {
                    let p = at(paths, path);
                    format!("{p}.const must be one of {p}.enum when both are declared")
                });
            }
        }
    }
    // (5b) the extension's keyword values.
    for kw in EXTENSION {
        let Some(v) = map.get(*kw).filter(|_| ty.allows(kw)) else {
            continue;
        };
        let problem = if BOUNDS.contains(kw) {
            (!matches!(v, Value::Number(n) if is_lossless_number(n)))
                .then(|| "must be a finite number".to_owned())
        } else if COUNTS.contains(kw) {
            count_bound(v)
                .is_none()
                .then(|| "must be a non-negative integer".to_owned())
        } else if *kw == PATTERN {
            match v {
                Value::String(p) => patterns.add(p),
                _ => Some("must be a string".to_owned()),
            }
        } else {
            (!v.is_boolean()).then(|| "must be a boolean".to_owned())
        };
        if let Some(problem) = problem {
            sink.add(|| format!("{}.{kw} {problem}", at(paths, path)));
        }
    }
    // Children, depth-first in declaration order; then the object's tail.
    match ty {
        Type::Object => {
            tasks.push(Task::ObjectTail(map, path));
            if let Some(extra @ Value::Object(_)) = map.get(ADDITIONAL_PROPERTIES) {
                let child = paths.push(path, Seg::Lit(".additionalProperties"));
                tasks.push(Task::Visit(extra, child));
            }
            match map.get("properties") {
                None => {}
                Some(Value::Object(props)) => {
                    for (k, child_schema) in props.iter().rev() {
                        let child = paths.push(path, Seg::Prop(k));
                        tasks.push(Task::Visit(child_schema, child));
                    }
                }
                Some(_) => sink.add(|| {
                    format!(
                        "{}.properties must be an object of schemas",
                        at(paths, path)
                    )
                }),
            }
        }
        Type::Array => {
            if let Some(items) = map.get("items") {
                let child = paths.push(path, Seg::Lit(".items"));
                tasks.push(Task::Visit(items, child));
            }
        }
        _ => {}
    }
}

fn object_tail(map: &Map<String, Value>, path: PathId, paths: &PathArena<'_>, sink: &mut Sink) {
    let props = map.get("properties").and_then(Value::as_object);
    if let Some(required) = map.get("required") {
        match required.as_array() {
            Some(names) if names.iter().all(Value::is_string) => {
                for name in names.iter().filter_map(Value::as_str) {
                    if !props.is_some_and(|p| p.contains_key(name)) {
                        sink.add(|| {
                            format!(
                                "{}.required names \"{name}\" which is not in properties",
                                at(paths, path)
                            )
                        });
                    }
                }
            }
            _ => sink.add(|| format!("{}.required must be an array of strings", at(paths, path))),
        }
    }
    if let Some(extra) = map.get(ADDITIONAL_PROPERTIES)
        && !extra.is_boolean()
        && !extra.is_object()
    {
        sink.add(|| {
            format!(
                "{}.additionalProperties must be a boolean or a schema object",
                at(paths, path)
            )
        });
    }
}

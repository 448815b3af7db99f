//! A schema as the SDK's TypeScript (Code Mode spec §5.5–§5.7, §7): types in the layout
//! upstream uses, our extension keywords as JSDoc tags, names as keys, doc lines. Pure and
//! iterative: a 5,000-deep union renders on a small stack.

use super::number::js_number;
use crate::schema::keywords::{EXTENSION, MAXIMUM, MINIMUM, ONE_OF, PATTERN, UNIQUE_ITEMS};
use serde_json::{Map, Value};

/// A name as a TypeScript key: bare when `^[A-Za-z_$][A-Za-z0-9_$]*$`, else a JSON string.
pub(super) fn key(name: &str) -> String {
    let mut chars = name.chars();
    let bare = chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_' || c == '$')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '$');
    if bare {
        name.to_owned()
    } else {
        let mut out = String::new();
        crate::json::push_json_string(&mut out, name);
        out
    }
}

/// JavaScript's `\s` (the trim and whitespace collapse of spec §2.3.2 and §5.5.2).
pub(crate) fn js_space(c: char) -> bool {
    matches!(c, '\u{9}'..='\u{d}' | ' ' | '\u{a0}' | '\u{1680}' | '\u{2000}'..='\u{200a}'
        | '\u{2028}' | '\u{2029}' | '\u{202f}' | '\u{205f}' | '\u{3000}' | '\u{feff}')
}

/// `<pad>/** <text> */` from a description and extension tags (spec §5.5, §7.4).
pub(super) fn doc_line(
    description: Option<&str>,
    tags: &[String],
    indent: usize,
) -> Option<String> {
    let description = description.filter(|d| !d.is_empty());
    if description.is_none() && tags.is_empty() {
        return None;
    }
    let collapsed = description
        .map(|d| {
            d.split(js_space)
                .filter(|w| !w.is_empty())
                .collect::<Vec<_>>()
                .join(" ")
        })
        .unwrap_or_default();
    let mut parts: Vec<&str> = Vec::new();
    if !collapsed.is_empty() {
        parts.push(&collapsed);
    }
    parts.extend(tags.iter().map(String::as_str));
    let content = parts.join(" ").replace("*/", "*\\/");
    Some(format!("{}/** {content} */", "  ".repeat(indent)))
}

/// A number as JavaScript prints it (exact integers kept).
fn number_text(n: &serde_json::Number) -> String {
    match (n.as_i64(), n.as_u64()) {
        (Some(i), _) => i.to_string(),
        (_, Some(u)) => u.to_string(),
        _ => js_number(n.as_f64().unwrap_or(0.0)),
    }
}

fn literal(value: &Value) -> String {
    match value {
        Value::String(s) => {
            let mut out = String::new();
            crate::json::push_json_string(&mut out, s);
            out
        }
        Value::Number(n) => number_text(n),
        other => crate::json::to_compact_string(other),
    }
}

/// The extension keywords of a property node as JSDoc tags (spec §7.2, §7.3).
fn tags(schema: &Value) -> Vec<String> {
    let nodes: Vec<&Value> = match schema.get(ONE_OF).and_then(Value::as_array) {
        Some(branches) => branches.iter().collect(),
        None => vec![schema],
    };
    let mut out: Vec<String> = Vec::new();
    for &keyword in EXTENSION {
        for node in &nodes {
            let bound = keyword == MINIMUM || keyword == MAXIMUM;
            if bound && integer_type_range(node) {
                continue;
            }
            let tag = match (keyword, node.get(keyword)) {
                (_, None) => continue,
                (UNIQUE_ITEMS, Some(Value::Bool(true))) => format!("@{UNIQUE_ITEMS}"),
                (UNIQUE_ITEMS, _) => continue,
                (PATTERN, Some(p)) => format!("@{PATTERN} {}", literal(p)),
                (k, Some(Value::Number(n))) => format!("@{k} {}", number_text(n)),
                (k, Some(v)) => format!("@{k} {}", literal(v)),
            };
            if !out.contains(&tag) {
                out.push(tag);
            }
        }
    }
    // Issue 39.2 (a deliberate difference from upstream, which renders no default): the
    // property's default, or its first branch's, unless null (an absent optional value says as
    // much) or longer than a doc line should carry.
    let default = schema
        .get("default")
        .or_else(|| nodes.iter().find_map(|n| n.get("default")))
        .filter(|d| !d.is_null())
        .map(literal)
        .filter(|d| d.chars().count() <= MAX_DEFAULT_CHARS);
    if let Some(default) = default {
        out.push(format!("@default {default}"));
    }
    out
}

/// The longest default shown (as JSON text, in characters).
const MAX_DEFAULT_CHARS: usize = 120;

/// Whether a node's `minimum` and `maximum` are exactly a Rust integer type's own range (what
/// the bridge writes for every `u32` or `i64`): bounds the type already says, left out (issue
/// 39.2: no `@minimum -9223372036854775808`).
fn integer_type_range(node: &Value) -> bool {
    const RANGES: [(i128, i128); 8] = [
        (i8::MIN as i128, i8::MAX as i128),
        (i16::MIN as i128, i16::MAX as i128),
        (i32::MIN as i128, i32::MAX as i128),
        (i64::MIN as i128, i64::MAX as i128),
        (0, u8::MAX as i128),
        (0, u16::MAX as i128),
        (0, u32::MAX as i128),
        (0, u64::MAX as i128),
    ];
    let exact = |key: &str| {
        let n = node.get(key)?.as_number()?;
        n.as_i64()
            .map(i128::from)
            .or_else(|| n.as_u64().map(i128::from))
    };
    match (exact(MINIMUM), exact(MAXIMUM)) {
        (Some(lo), Some(hi)) => RANGES.contains(&(lo, hi)),
        _ => false,
    }
}

/// How a finished node's pieces combine.
enum Finish<'a> {
    /// Join the last `n` texts with ` | `.
    Union(usize),
    /// `T[]` or `(T)[]` around the last text.
    Array,
    /// `Record<string, S>` around the last text.
    RecordOf,
    /// An object block over the last `props.len()` texts (and one more for a schema-valued
    /// `additionalProperties`).
    Object {
        props: &'a Map<String, Value>,
        required: Vec<&'a str>,
        indent: usize,
        extra: Extra,
    },
}

enum Extra {
    Closed,
    Open,
    Schema,
}

enum Task<'a> {
    Render(&'a Value, usize),
    Finish(Finish<'a>),
}

/// A schema as TypeScript at indentation level `indent` (spec §5.6, §5.7, §7): `unknown` when the
/// schema is outside the supported subset anywhere.
///
/// ```
/// use dsh_tools::code::schema_to_ts;
/// use serde_json::json;
///
/// let schema = json!({"type": "object", "properties": {"path": {"type": "string", "description": "File path"}},
///                     "required": ["path"], "additionalProperties": false});
/// assert_eq!(schema_to_ts(&schema, 0), "{\n  /** File path */\n  path: string;\n}");
/// let items = json!({"type": "array", "items": {"type": "string", "enum": ["a", "b"]}});
/// assert_eq!(schema_to_ts(&items, 0), "(\"a\" | \"b\")[]");
/// ```
pub fn schema_to_ts(schema: &Value, indent: usize) -> String {
    schema_to_ts_named(schema, indent, &Names::new())
}

/// Named types by the JSON pointer their reference nodes carry.
pub(super) type Names = std::collections::HashMap<String, String>;

/// [`schema_to_ts`], with a node titled `$ref #<pointer>` (a recursive type
/// [`from_foreign_lossy`](crate::schema::bridge::from_foreign_lossy) left as a reference) shown
/// as the name `names` gives its pointer.
pub(super) fn schema_to_ts_named(schema: &Value, indent: usize, names: &Names) -> String {
    if crate::schema::assert_supported(schema).is_err() {
        return "unknown".to_owned();
    }
    let mut out: Vec<String> = Vec::new();
    let mut tasks = vec![Task::Render(schema, indent)];
    while let Some(task) = tasks.pop() {
        match task {
            Task::Render(node, i) => render_node(node, i, &mut tasks, &mut out, names),
            Task::Finish(finish) => {
                let text = match finish {
                    Finish::Union(n) => {
                        let parts = out.split_off(out.len() - n);
                        parts.join(" | ")
                    }
                    Finish::Array => {
                        let item = out.pop().unwrap_or_default();
                        if item.contains('|') || item.contains('&') {
                            format!("({item})[]")
                        } else {
                            format!("{item}[]")
                        }
                    }
                    Finish::RecordOf => {
                        format!("Record<string, {}>", out.pop().unwrap_or_default())
                    }
                    Finish::Object {
                        props,
                        required,
                        indent,
                        extra,
                    } => {
                        let extra_text =
                            matches!(extra, Extra::Schema).then(|| out.pop().unwrap_or_default());
                        let types = out.split_off(out.len() - props.len());
                        let pad = "  ".repeat(indent + 1);
                        let mut block = String::from("{\n");
                        for ((name, prop), ty) in props.iter().zip(types) {
                            let description = prop.get("description").and_then(Value::as_str);
                            if let Some(doc) = doc_line(description, &tags(prop), indent + 1) {
                                block.push_str(&doc);
                                block.push('\n');
                            }
                            let optional = if required.contains(&name.as_str()) {
                                ""
                            } else {
                                "?"
                            };
                            block.push_str(&format!("{pad}{}{optional}: {ty};\n", key(name)));
                        }
                        block.push_str(&"  ".repeat(indent));
                        block.push('}');
                        match (extra, extra_text) {
                            (Extra::Closed, _) => block,
                            (Extra::Open, _) => format!("{block} & Record<string, JsonValue>"),
                            (Extra::Schema, Some(s)) => format!("{block} & Record<string, {s}>"),
                            (Extra::Schema, None) => block,
                        }
                    }
                };
                out.push(text);
            }
        }
    }
    out.pop().unwrap_or_else(|| "unknown".to_owned())
}

fn render_node<'a>(
    node: &'a Value,
    i: usize,
    tasks: &mut Vec<Task<'a>>,
    out: &mut Vec<String>,
    names: &Names,
) {
    let Some(map) = node.as_object() else {
        // A boolean schema: `true` admits anything.
        out.push(
            if node == &Value::Bool(false) {
                "never"
            } else {
                "JsonValue"
            }
            .to_owned(),
        );
        return;
    };
    if let Some(Value::Array(branches)) = map.get("oneOf") {
        tasks.push(Task::Finish(Finish::Union(branches.len())));
        for branch in branches.iter().rev() {
            tasks.push(Task::Render(branch, i));
        }
        return;
    }
    let ty = map.get("type").and_then(Value::as_str);
    if let Some(c) = map.get("const") {
        out.push(literal(c));
        return;
    }
    if let Some(Value::Array(members)) = map.get("enum") {
        out.push(members.iter().map(literal).collect::<Vec<_>>().join(" | "));
        return;
    }
    let named = || {
        let title = map.get("title")?.as_str()?;
        let pointer = title.strip_prefix(crate::schema::bridge::REFERENCE_PREFIX)?;
        names.get(pointer)
    };
    match ty {
        None => out.push(named().cloned().unwrap_or_else(|| "JsonValue".to_owned())),
        Some("string") => out.push("string".to_owned()),
        Some("number" | "integer") => out.push("number".to_owned()),
        Some("boolean") => out.push("boolean".to_owned()),
        Some("null") => out.push("null".to_owned()),
        Some("array") => match map.get("items") {
            None => out.push("JsonValue[]".to_owned()),
            Some(items) => {
                tasks.push(Task::Finish(Finish::Array));
                tasks.push(Task::Render(items, i));
            }
        },
        Some("object") => {
            let extra = match map.get("additionalProperties") {
                Some(Value::Bool(false)) => Extra::Closed,
                Some(Value::Object(s)) if !s.is_empty() => Extra::Schema,
                _ => Extra::Open,
            };
            let props = map
                .get("properties")
                .and_then(Value::as_object)
                .filter(|p| !p.is_empty());
            match (props, extra) {
                (None, Extra::Closed) => out.push("Record<string, never>".to_owned()),
                (None, Extra::Open) => out.push("Record<string, JsonValue>".to_owned()),
                (None, Extra::Schema) => {
                    tasks.push(Task::Finish(Finish::RecordOf));
                    tasks.push(Task::Render(&map["additionalProperties"], i));
                }
                (Some(props), extra) => {
                    let required = map
                        .get("required")
                        .and_then(Value::as_array)
                        .map(|r| r.iter().filter_map(Value::as_str).collect())
                        .unwrap_or_default();
                    let schema_extra = matches!(extra, Extra::Schema);
                    tasks.push(Task::Finish(Finish::Object {
                        props,
                        required,
                        indent: i,
                        extra,
                    }));
                    if schema_extra {
                        tasks.push(Task::Render(&map["additionalProperties"], i));
                    }
                    for prop in props.values().rev() {
                        tasks.push(Task::Render(prop, i + 1));
                    }
                }
            }
        }
        Some(_) => out.push("unknown".to_owned()),
    }
}

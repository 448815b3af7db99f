//! The lossy conversion for showing a foreign schema ([`from_foreign_lossy`]): never failing,
//! what the subset cannot say left out and listed, recursive types named, doc tags added.

use super::clean::strip_annotations;
use super::convert;
use super::load::MAX_DEPTH;
use super::problems::{BridgeProblem, Problems};
use crate::schema::keywords::{
    ADDITIONAL_PROPERTIES, ALL_OF, ANY_OF, DEFINITIONS, DEFS, ITEMS, ONE_OF, PATTERN_PROPERTIES,
    PREFIX_ITEMS, PROPERTIES, UNEVALUATED_PROPERTIES,
};
use serde_json::{Map, Value};

/// What [`from_foreign_lossy`] made of a schema.
#[derive(Clone, Debug, PartialEq)]
pub struct Lossy {
    /// The schema in the subset, never stricter than the original: what a reader should be
    /// shown of it.
    pub schema: Value,
    /// What had to be left out, each with the path of its node: a keyword the subset has no
    /// word for (the node converted without it), or a node that could not be converted at all
    /// (it accepts anything there, keeping its description).
    pub dropped: Vec<BridgeProblem>,
    /// How many more were left out than are listed.
    pub unlisted: usize,
    /// The recursive types the schema refers to by name: where it recurs, `schema` (and these)
    /// hold a node titled [`reference_title`]`(pointer)` standing for the type.
    pub named: Vec<NamedType>,
}

/// A recursive type of a foreign schema, shown by name where it recurs.
#[derive(Clone, Debug, PartialEq)]
pub struct NamedType {
    /// The JSON pointer its `$ref`s name (`/$defs/Tree`).
    pub pointer: String,
    /// A TypeScript identifier for it (`Tree`), unique within the schema.
    pub name: String,
    /// Its schema, converted as [`from_foreign_lossy`] converts.
    pub schema: Value,
}

/// The title of the node that stands for a reference to the recursive type at `pointer` in a
/// [`from_foreign_lossy`] result.
pub fn reference_title(pointer: &str) -> String {
    convert::cycle_marker(pointer)
}

/// What [`reference_title`]s start with: `$ref #`.
pub const REFERENCE_PREFIX: &str = convert::CYCLE_MARKER;

/// The most recursive types one schema is shown with by name.
const MAX_NAMED_TYPES: usize = 32;

/// Converts a schema written by someone else for *showing* it (Code Mode's SDK): as
/// [`from_foreign`](super::from_foreign), but never failing. What the subset cannot express is
/// left out and listed in [`Lossy::dropped`]; annotations a reader needs become doc tags at the
/// end of the description of the node they describe (for a branch of `anyOf`/`oneOf`, its
/// parent's):
/// `format` as `@format uri`, `deprecated: true` as `@deprecated`, and the first of `examples`
/// as `@example <JSON>` (up to 120 characters).
///
/// The result is for reading, not validating: it may accept values the original rejects. A
/// host validates with [`from_foreign`](super::from_foreign) or the original schema.
///
/// ```
/// use dsh_tools::schema::bridge::from_foreign_lossy;
/// use serde_json::json;
///
/// let shown = from_foreign_lossy(&json!({
///     "$schema": "http://json-schema.org/draft-07/schema#",
///     "type": "object",
///     "properties": {
///         "url": {"type": "string", "format": "uri", "description": "Where."},
///         "tags": {"type": "object", "patternProperties": {"^x-": {"type": "string"}}}
///     }
/// }));
/// assert_eq!(shown.schema["properties"]["url"]["description"], "Where. @format uri");
/// assert_eq!(shown.schema["properties"]["tags"], json!({"type": "object"}));
/// assert_eq!(shown.dropped.len(), 1);
/// assert_eq!(shown.dropped[0].path(), "#/properties/tags");
/// ```
pub fn from_foreign_lossy(schema: &Value) -> Lossy {
    let (mut shown, tags) = lossy_root(schema);
    // The recursive types it refers to, each converted as a schema of its own (which may name
    // more): from a document whose root is a `$ref` to it beside the original `$defs`.
    let mut pending = std::mem::take(&mut shown.named);
    let mut problems = Problems::default();
    while let Some(next) = pending.pop() {
        if shown.named.iter().any(|n| n.pointer == next.pointer) {
            continue;
        }
        if shown.named.len() >= MAX_NAMED_TYPES {
            problems.add(
                &format!("#{}", next.pointer),
                format!("shown as any value: more than {MAX_NAMED_TYPES} recursive types to name"),
            );
            continue;
        }
        let mut doc = Map::new();
        doc.insert(
            "$ref".to_owned(),
            Value::String(format!("#{}", next.pointer)),
        );
        if let Value::Object(root) = schema {
            for key in [DEFS, DEFINITIONS] {
                if let Some(defs) = root.get(key) {
                    doc.insert(key.to_owned(), crate::json::clone_deep(defs));
                }
            }
        }
        let doc = Value::Object(doc);
        let mut def = lossy_pass(&doc, tags);
        crate::json::drop_deep(doc);
        for p in def.dropped.drain(..) {
            // The type's own paths start at the type.
            let path = format!("#{}{}", next.pointer, p.path().trim_start_matches('#'));
            problems.add(&path, p.message());
        }
        pending.append(&mut def.named);
        let name = unique_name(&next.pointer, &shown.named);
        shown.named.push(NamedType {
            pointer: next.pointer,
            name,
            schema: def.schema,
        });
    }
    let extra = problems.finish();
    shown.dropped.extend(extra.problems().iter().cloned());
    shown.unlisted += extra.unlisted();
    shown
}

/// A TypeScript identifier for the type at `pointer`: its last segment with every other
/// character made `_`, not already taken.
fn unique_name(pointer: &str, taken: &[NamedType]) -> String {
    let last = pointer.rsplit('/').next().unwrap_or_default();
    let last = last.replace("~1", "/").replace("~0", "~");
    let mut base: String = last
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '$' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if base.is_empty() || base.starts_with(|c: char| c.is_ascii_digit()) {
        base.insert(0, '_');
    }
    // Names the SDK itself declares are not reused.
    const RESERVED: [&str; 7] = [
        "JsonValue",
        "McpContent",
        "McpResult",
        "ToolArgsMap",
        "ToolOutputMap",
        "ToolName",
        "ToolCallError",
    ];
    let mut name = base.clone();
    let mut n = 1;
    while RESERVED.contains(&name.as_str()) || taken.iter().any(|t| t.name == name) {
        n += 1;
        name = format!("{base}_{n}");
    }
    name
}

/// [`lossy_pass`] with doc tags, or without them when they cost a node; and which it was.
fn lossy_root(schema: &Value) -> (Lossy, bool) {
    let tagged = lossy_pass(schema, true);
    if tagged.dropped.is_empty() {
        return (tagged, true);
    }
    // A doc tag changes a description, and two copies of one property that differ only there
    // no longer merge (a property pushed into the branches of a flattened `oneOf`): when the
    // tags cost more than they show, the schema is shown without them.
    let plain = lossy_pass(schema, false);
    let count = |l: &Lossy| l.dropped.len() + l.unlisted;
    if count(&plain) < count(&tagged) {
        crate::json::drop_deep(tagged.schema);
        (plain, false)
    } else {
        crate::json::drop_deep(plain.schema);
        (tagged, true)
    }
}

/// One lossy conversion, with or without doc tags.
fn lossy_pass(schema: &Value, tags: bool) -> Lossy {
    let mut cleaned = crate::json::clone_deep(schema);
    prepare_lossy(&mut cleaned, tags);
    strip_annotations(&mut cleaned);
    let mut problems = Problems::default();
    let mut cycles = Vec::new();
    let mut out = match schemars::Schema::try_from(cleaned) {
        Ok(schema) => {
            let out = convert::run_lossy(schema.as_value(), &mut problems, &mut cycles);
            crate::json::drop_deep(schema.to_value());
            out
        }
        Err(e) => {
            problems.add(
                "#",
                format!("shown as any value: a schema must be an object or a boolean: {e}"),
            );
            Value::Object(Map::new())
        }
    };
    if let Err(e) = crate::schema::assert_supported(&out) {
        for v in e.violations() {
            problems.add(
                "#",
                format!("internal error: the shown schema is outside the subset: {v}"),
            );
        }
        crate::json::drop_deep(std::mem::replace(&mut out, Value::Object(Map::new())));
    }
    let error = problems.finish();
    Lossy {
        schema: out,
        unlisted: error.unlisted(),
        dropped: error.problems().to_vec(),
        // Pointers only, for now: named and converted by `from_foreign_lossy`.
        named: cycles
            .into_iter()
            .map(|pointer| NamedType {
                pointer,
                name: String::new(),
                schema: Value::Null,
            })
            .collect(),
    }
}

/// The longest `@example` shown, as JSON text in characters.
const MAX_EXAMPLE_CHARS: usize = 120;

/// Readies a schema for the lossy conversion, to [`MAX_DEPTH`] levels: (with `tags`) appends
/// `format`, `deprecated` and the first of `examples` to the description of the node they
/// describe (a branch's to its parent's) as doc tags, and removes what would make the result stricter once
/// the conversion leaves a keyword out: `items` beside `prefixItems` (it then applies to every
/// item) and `additionalProperties` / `unevaluatedProperties` beside `patternProperties` (they
/// would then refuse the keys the patterns admit).
fn prepare_lossy(schema: &mut Value, tags: bool) {
    // Pass one, read-only: which node gets which tags, by JSON pointer.
    let mut found: Vec<(String, Vec<String>)> = Vec::new();
    let mut loosen: Vec<(String, &'static [&'static str])> = Vec::new();
    let mut index: std::collections::HashMap<String, usize> = Default::default();
    let mut stack: Vec<(&Value, String, String, usize)> =
        vec![(&*schema, String::new(), String::new(), 1)];
    while let Some((node, here, target, depth)) = stack.pop() {
        let Value::Object(map) = node else { continue };
        if map.contains_key(PREFIX_ITEMS) && map.contains_key(ITEMS) {
            loosen.push((here.clone(), &[ITEMS]));
        }
        if map.contains_key(PATTERN_PROPERTIES) {
            loosen.push((
                here.clone(),
                &[ADDITIONAL_PROPERTIES, UNEVALUATED_PROPERTIES],
            ));
        }
        let mut found_here = Vec::new();
        if let Some(Value::String(f)) = map.get("format") {
            found_here.push(format!("@format {f}"));
        }
        if map.get("deprecated") == Some(&Value::Bool(true)) {
            found_here.push("@deprecated".to_owned());
        }
        if let Some(first) = map
            .get("examples")
            .and_then(Value::as_array)
            .and_then(|e| e.first())
            && !crate::json::deeper_than(first, 8)
        {
            let text = crate::json::to_compact_string(first);
            if text.chars().count() <= MAX_EXAMPLE_CHARS {
                found_here.push(format!("@example {text}"));
            }
        }
        if tags && !found_here.is_empty() {
            match index.get(&target) {
                Some(&i) => found[i].1.extend(found_here),
                None => {
                    index.insert(target.clone(), found.len());
                    found.push((target.clone(), found_here));
                }
            }
        }
        if depth >= MAX_DEPTH {
            continue;
        }
        for (key, child) in map {
            let at = format!("{here}/{}", pointer_token(key));
            match key.as_str() {
                PROPERTIES | DEFS | DEFINITIONS => {
                    if let Value::Object(children) = child {
                        for (name, c) in children {
                            let p = format!("{at}/{}", pointer_token(name));
                            stack.push((c, p.clone(), p, depth + 1));
                        }
                    }
                }
                ANY_OF | ONE_OF => {
                    if let Value::Array(items) = child {
                        for (i, c) in items.iter().enumerate() {
                            stack.push((c, format!("{at}/{i}"), here.clone(), depth + 1));
                        }
                    }
                }
                ITEMS | ADDITIONAL_PROPERTIES | ALL_OF => match child {
                    Value::Array(items) => {
                        for (i, c) in items.iter().enumerate() {
                            let p = format!("{at}/{i}");
                            stack.push((c, p.clone(), p, depth + 1));
                        }
                    }
                    other => stack.push((other, at.clone(), at, depth + 1)),
                },
                _ => {}
            }
        }
    }
    // Pass two: write them.
    for (at, keys) in loosen {
        if let Some(Value::Object(map)) = schema.pointer_mut(&at) {
            for key in keys {
                if let Some(value) = map.shift_remove(*key) {
                    crate::json::drop_deep(value);
                }
            }
        }
    }
    for (target, tags) in found {
        let Some(Value::Object(map)) = schema.pointer_mut(&target) else {
            continue;
        };
        let tags = tags.join(" ");
        match map.get_mut("description") {
            Some(Value::String(d)) if !d.trim().is_empty() => {
                d.push(' ');
                d.push_str(&tags);
            }
            Some(Value::String(d)) => *d = tags,
            Some(_) => {}
            None => {
                map.insert("description".to_owned(), Value::String(tags));
            }
        }
    }
}

/// `key` as one JSON-pointer token (`~` as `~0`, `/` as `~1`).
fn pointer_token(key: &str) -> std::borrow::Cow<'_, str> {
    if key.contains(['~', '/']) {
        key.replace('~', "~0").replace('/', "~1").into()
    } else {
        key.into()
    }
}

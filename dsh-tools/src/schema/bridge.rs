//! The schemars bridge: the schemars 1.x schema of a Rust type, turned into the subset.
//!
//! [`schema_for::<T>()`](schema_for) generates `T`'s schema (draft 2020-12, deserialize
//! contract, subschemas inlined) and hands it to [`from_schemars`], which rewrites what the subset
//! can express exactly and rejects the rest with a message per problem, each at a JSON-pointer
//! path (`#/properties/when`). The result always passes [`assert_supported`](super::assert_supported)
//! (checked before it is returned), so it compiles with [`CompiledSchema`](super::CompiledSchema).
//!
//! ```
//! use dsh_tools::schema::{CompiledSchema, bridge};
//! use schemars::JsonSchema;
//! use serde::Deserialize;
//! use serde_json::json;
//!
//! /// Reads part of a file.
//! #[derive(Deserialize, JsonSchema)]
//! struct ReadArgs {
//!     /// The file to read.
//!     path: String,
//!     /// First line (1-based).
//!     offset: Option<u32>,
//! }
//!
//! let schema = bridge::schema_for::<ReadArgs>()?;
//! assert_eq!(schema, json!({
//!     "description": "Reads part of a file.",
//!     "type": "object",
//!     "properties": {
//!         "path": {"description": "The file to read.", "type": "string"},
//!         "offset": {"description": "First line (1-based).", "oneOf": [
//!             {"type": "integer", "minimum": 0, "maximum": 4294967295u32},
//!             {"type": "null"}
//!         ]}
//!     },
//!     "required": ["path"]
//! }));
//! let compiled = CompiledSchema::compile(&schema).unwrap();
//! assert!(compiled.is_valid(&json!({"path": "a.txt", "offset": null})));
//! assert!(!compiled.is_valid(&json!({"path": "a.txt", "offset": -1})));
//! # Ok::<(), bridge::BridgeError>(())
//! ```
//!
//! # Rules
//!
//! | schemars emits | the bridge |
//! |---|---|
//! | `$schema` | drops it (it names the draft, nothing to validate) |
//! | `$ref` into `$defs` / `definitions` / any local JSON pointer | inlines the target; keywords beside the `$ref` are merged into it, theirs winning for annotations. A type that contains itself is an error naming it. `$defs` / `definitions` are then dropped |
//! | `"type": ["T", "null"]` (any type array) | `{"oneOf": [<T part>, {"type": "null"}]}`: each keyword goes to the branch of the type it applies to, `enum`/`const` members are split by type, annotations stay on the `oneOf` |
//! | `anyOf` | `oneOf` when its branches are provably disjoint (different types; `null` against non-null; disjoint `enum`/`const` sets; objects with a required property whose values are disjoint, e.g. a tag `const`; or one branch requiring a property the other's `additionalProperties: false` forbids). A branch that accepts anything makes the whole `anyOf` accept anything (exact: schemars emits `anyOf: [X, {}]` for `#[serde(flatten)] Option<Enum>`). Otherwise an error |
//! | `oneOf` | kept: it means "exactly one branch" in the subset too |
//! | the unit variant of an adjacently tagged enum (a type that is only a `oneOf` of objects with a common required `const` tag, every other branch exactly `{tag, content}`; a branch declaring nothing but the tag) | closed (`additionalProperties: false`): serde rejects content beside it (`{"t": "Off", "c": 5}`). Internally tagged unit variants stay open (serde ignores extra keys there). [`from_schemars`] only: [`from_foreign`] takes a remote schema as written |
//! | `allOf` | merged into one schema (the intersection), when that merge is exact; two `oneOf`s meeting (two `#[serde(flatten)]`ed enums) become one `oneOf` of every pair of branches |
//! | `type`/`properties`/... beside `oneOf` (a `#[serde(flatten)]`ed enum) | pushed into every branch (branches whose type cannot match are dropped) |
//! | `unevaluatedProperties` | becomes `additionalProperties` of each object that has none (after the merges above, every object declares all the properties it evaluates). Beside a `oneOf`, only when its branches are provably disjoint (which properties count as evaluated depends on the branch that matched) |
//! | `format` `int8` … `uint64`, `int`/`uint` (`isize`/`usize`), `int128`/`uint128` | the exact `minimum`/`maximum` of the Rust type, merged with any declared bound (the tighter wins). `int128`/`uint128` are clamped to what `serde_json::Value` can hold without `arbitrary_precision`: `i64::MIN ..= u64::MAX`; larger values cannot be serialized to a `Value` at all |
//! | `format` `float` / `double` | dropped: every finite JSON number deserializes into `f32`/`f64` (out-of-range values become infinity), so the format constrains nothing a validator could enforce |
//! | any other `format` (`email`, `ipv4`, `date-time`, `uuid`, …) | an error: the subset cannot check it, and a `String` schema would accept values the type rejects. Fix the type: a `String` field parsed in the tool, or `#[schemars(with = "String")]` (optionally with `#[schemars(regex(pattern = …))]`) |
//! | `enum` / `const` without `type` | the `type` is added (split into a `oneOf` by type when members differ). Members that no declared type admits are dropped (they could never match) |
//! | object or array `enum` / `const` members | an error: the subset pins scalars only |
//! | `required` naming an undeclared property | the property is declared (as `{}`, or the `additionalProperties` schema), once nothing more can be merged into the object; a `oneOf` branch whose `additionalProperties: false` forbids it is dropped (it could never match) |
//! | a boolean schema `true` | `{}` |
//! | a boolean schema `false` | an error (no value could ever be valid) |
//! | `title`, `description` (doc comments), `default`, `examples` | kept |
//! | `$comment`, `readOnly`, `writeOnly`, `deprecated` | dropped: notes with no validation meaning that the subset has no keyword for (`readOnly`/`writeOnly` only matter to the serialize-vs-deserialize contract, and the bridge always describes what deserializes) |
//! | anything else (`prefixItems` for tuples, `patternProperties` for non-`String` map keys, `not` for `NonZeroI*`, `if`, `multipleOf`, `nullable`, …) | an error naming the keyword, with a fix where there is one |
//!
//! Root `title`: [`from_schemars`] keeps every `title` as an annotation; [`schema_for`] drops
//! the root `title` when it is just the type's schema name (schemars adds it to every root), and
//! keeps a title from the doc comment (`/// # Title`).
//!
//! # Limits
//!
//! Every rewrite is exact: where the bridge succeeds, the result accepts exactly the values the
//! input accepts under JSON Schema 2020-12 (a differential property test checks this against the
//! `jsonschema` crate), except for the `format` rules above, the lossless-JSON rule (no `-0`)
//! that every schema of the subset applies, and the closing of adjacently tagged unit variants
//! (a serde rule the schemars schema leaves out; [`from_schemars`] only).
//!
//! The walk is iterative; the few helpers that recurse do so only along nested `oneOf`s, which the
//! depth limit bounds. Inputs are cut at [`MAX_DEPTH`] nested schemas and [`MAX_NODES`] schemas
//! after inlining (inlining can multiply a schema's size exponentially), an `anyOf` is compared
//! pairwise only up to 1024 alternatives, and pushing keywords into `oneOf` branches copies at
//! most a million JSON values; each limit has its own error.
//!
//! # Gaps between a bridged schema and serde
//!
//! A value the schema accepts decodes into the type (with [`json::decode`](crate::json::decode)),
//! and a serialized value validates, except (the corpus test lists these in its `EXCEPTIONS`
//! table):
//!
//! * `1.0`, `1e2` are integers to the validator (spec §0.4), but serde's integer types reject
//!   JSON floats, so `serde_json::from_value` fails where `json::decode` succeeds.
//! * An internally tagged enum whose struct variants each have exactly one field looks like
//!   adjacent tagging; a newtype variant of it around `serde_json::Value` is then closed like a
//!   unit variant, and the value's own keys are refused.
//! * `f32`/`f64` NaN and ±infinity serialize as `null`, and `-0.0` as `-0`, which the schema
//!   rejects (they are not lossless JSON).

mod convert;
mod disjoint;
mod load;
mod problems;
mod shape;
#[cfg(test)]
mod tests;

pub use load::{MAX_DEPTH, MAX_NODES};
use problems::Problems;
pub use problems::{BridgeError, BridgeProblem};
use schemars::generate::SchemaSettings;
use serde_json::{Map, Value};

/// Turns the schemars schema of a Rust type into a schema of the supported subset.
///
/// Every problem is reported at once, each with the JSON-pointer path of the schema node it
/// concerns (`#` is the root; the path goes through `$ref`s as if they were inlined). The
/// result passes [`assert_supported`](super::assert_supported). See the [module docs](self) for
/// every rule.
///
/// ```
/// use dsh_tools::schema::bridge::from_schemars;
/// use serde_json::json;
///
/// let schema = schemars::json_schema!({
///     "$schema": "https://json-schema.org/draft/2020-12/schema",
///     "type": ["integer", "null"],
///     "format": "uint8",
/// });
/// assert_eq!(
///     from_schemars(&schema)?,
///     json!({"oneOf": [{"type": "integer", "minimum": 0, "maximum": 255}, {"type": "null"}]})
/// );
///
/// let err = from_schemars(&schemars::json_schema!({
///     "type": "object",
///     "properties": {"at": {"type": "string", "format": "date-time"}, "n": false}
/// }))
/// .unwrap_err();
/// assert_eq!(err.problems().len(), 2);
/// assert_eq!(err.problems()[0].path(), "#/properties/at");
/// # Ok::<(), dsh_tools::schema::bridge::BridgeError>(())
/// ```
pub fn from_schemars(schema: &schemars::Schema) -> Result<Value, BridgeError> {
    let open = open_unit_variants(schema.as_value());
    if open.is_empty() {
        return bridge_value(schema.as_value());
    }
    let mut closed = crate::json::clone_deep(schema.as_value());
    close_unit_variants(&mut closed, &open);
    let out = bridge_value(&closed);
    crate::json::drop_deep(closed);
    out
}

/// Bridges a schema as it is (no serde-specific rewrite).
fn bridge_value(schema: &Value) -> Result<Value, BridgeError> {
    let mut problems = Problems::default();
    let out = convert::run(schema, &mut problems);
    if !problems.is_empty() {
        return Err(problems.finish());
    }
    if let Err(e) = super::assert_supported(&out) {
        for v in e.violations() {
            problems.add(
                "#",
                format!("internal error: the bridged schema is outside the subset: {v}"),
            );
        }
        return Err(problems.finish());
    }
    Ok(out)
}

/// Bridges a schema written by someone else (an MCP server's `inputSchema`, a JSON file): first
/// drops the keywords that only annotate (`format`, which 2020-12 treats as an annotation by
/// default, `$comment`, `readOnly`, `writeOnly`, `deprecated`, and every `x-*` extension), then
/// runs [`from_schemars`].
///
/// Only schema positions are cleaned: a *property* named `format` or `x-id` is kept. Dropping
/// `format` loosens nothing a standard validator enforces by default; everything else keeps
/// [`from_schemars`]' exactness. The walk is iterative, so a hostile schema of any depth is
/// rejected (past [`MAX_DEPTH`]) rather than overflowing the stack.
///
/// ```
/// use dsh_tools::schema::bridge::from_foreign;
/// use serde_json::json;
///
/// // What a Pydantic model gives for `when: Optional[datetime]`.
/// let pydantic = json!({
///     "type": "object",
///     "properties": {
///         "when": {"anyOf": [{"type": "string", "format": "date-time"}, {"type": "null"}],
///                  "title": "When", "x-order": 1},
///         "format": {"type": "string", "$comment": "a property may be called format"}
///     },
///     "required": ["when"]
/// });
/// assert_eq!(from_foreign(&pydantic)?, json!({
///     "type": "object",
///     "properties": {
///         "when": {"oneOf": [{"type": "string"}, {"type": "null"}], "title": "When"},
///         "format": {"type": "string"}
///     },
///     "required": ["when"]
/// }));
/// assert!(from_foreign(&json!({"not": {"type": "string"}})).is_err());
/// # Ok::<(), dsh_tools::schema::bridge::BridgeError>(())
/// ```
pub fn from_foreign(schema: &Value) -> Result<Value, BridgeError> {
    let mut cleaned = crate::json::clone_deep(schema);
    strip_annotations(&mut cleaned);
    match schemars::Schema::try_from(cleaned) {
        // A remote schema means what it says: no serde-specific rewrite.
        Ok(schema) => {
            let out = bridge_value(schema.as_value());
            crate::json::drop_deep(schema.to_value());
            out
        }
        Err(e) => Err(BridgeError::internal(format!(
            "a schema must be an object or a boolean: {e}"
        ))),
    }
}

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
/// [`from_foreign`], but never failing. What the subset cannot express is left out and listed
/// in [`Lossy::dropped`]; annotations a reader needs become doc tags at the end of the
/// description of the node they describe (for a branch of `anyOf`/`oneOf`, its parent's):
/// `format` as `@format uri`, `deprecated: true` as `@deprecated`, and the first of `examples`
/// as `@example <JSON>` (up to 120 characters).
///
/// The result is for reading, not validating: it may accept values the original rejects. A
/// host validates with [`from_foreign`] or the original schema.
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
            for key in ["$defs", "definitions"] {
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
    if let Err(e) = super::assert_supported(&out) {
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
        if map.contains_key("prefixItems") && map.contains_key("items") {
            loosen.push((here.clone(), &["items"]));
        }
        if map.contains_key("patternProperties") {
            loosen.push((
                here.clone(),
                &["additionalProperties", "unevaluatedProperties"],
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
                "properties" | "$defs" | "definitions" => {
                    if let Value::Object(children) = child {
                        for (name, c) in children {
                            let p = format!("{at}/{}", pointer_token(name));
                            stack.push((c, p.clone(), p, depth + 1));
                        }
                    }
                }
                "anyOf" | "oneOf" => {
                    if let Value::Array(items) = child {
                        for (i, c) in items.iter().enumerate() {
                            stack.push((c, format!("{at}/{i}"), here.clone(), depth + 1));
                        }
                    }
                }
                "items" | "additionalProperties" | "allOf" => match child {
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

/// Removes annotation-only keywords from every schema position of `schema`, iteratively.
fn strip_annotations(schema: &mut Value) {
    /// Keywords whose value is a map of schemas.
    const SCHEMA_MAPS: &[&str] = &[
        "properties",
        "patternProperties",
        "$defs",
        "definitions",
        "dependentSchemas",
    ];
    /// Keywords whose value is a schema or an array of schemas.
    const SCHEMAS: &[&str] = &[
        "additionalProperties",
        "unevaluatedProperties",
        "items",
        "prefixItems",
        "additionalItems",
        "unevaluatedItems",
        "contains",
        "propertyNames",
        "anyOf",
        "oneOf",
        "allOf",
        "not",
        "if",
        "then",
        "else",
    ];
    // The root's `$id` names the document; local `$ref`s resolve the same without it.
    if let Value::Object(root) = schema
        && let Some(id) = root.shift_remove("$id")
    {
        crate::json::drop_deep(id);
    }
    let mut stack = vec![schema];
    while let Some(node) = stack.pop() {
        let Value::Object(map) = node else { continue };
        let annotations: Vec<String> = map
            .keys()
            .filter(|key| {
                key.starts_with("x-")
                    || matches!(
                        key.as_str(),
                        "format" | "$comment" | "readOnly" | "writeOnly" | "deprecated"
                    )
            })
            .cloned()
            .collect();
        for key in annotations {
            // An `x-*` value may be arbitrarily deep: freed without recursion.
            if let Some(value) = map.shift_remove(&key) {
                crate::json::drop_deep(value);
            }
        }
        for (key, child) in map.iter_mut() {
            if SCHEMA_MAPS.contains(&key.as_str()) {
                if let Value::Object(children) = child {
                    stack.extend(children.values_mut());
                }
            } else if SCHEMAS.contains(&key.as_str()) {
                match child {
                    Value::Array(items) => stack.extend(items.iter_mut()),
                    other => stack.push(other),
                }
            }
        }
    }
}

/// Generates the schema of `T` and bridges it with [`from_schemars`]: what `T` *accepts*.
///
/// Settings: JSON Schema draft 2020-12 without `$schema`, and schemars' *deserialize* contract
/// (`#[serde(default)]` fields are optional, `#[serde(skip)]` fields absent). The root `title` is
/// dropped when it is only `T`'s schema name.
///
/// ```
/// use dsh_tools::schema::bridge;
/// use schemars::JsonSchema;
/// use serde::Deserialize;
///
/// #[derive(Deserialize, JsonSchema)]
/// struct Tree {
///     children: Vec<Tree>,
/// }
///
/// let err = bridge::schema_for::<Tree>().unwrap_err();
/// assert!(err.to_string().contains(r#"recursive type "Tree""#));
/// ```
pub fn schema_for<T: schemars::JsonSchema>() -> Result<Value, BridgeError> {
    generate::<T>(SchemaSettings::draft2020_12()).map(|(out, _)| out)
}

/// The parameters schema of a tool whose arguments are `T`: [`schema_for`], with the root object
/// **closed** (`additionalProperties: false`) unless `allow_unknown`. serde ignores unknown
/// fields, but a model's made-up argument is a mistake to report (and every provider's strict
/// mode wants closed objects). A root that schemars describes with more than `properties` (a
/// `#[serde(flatten)]` enum or map: `anyOf`, `oneOf`, `allOf`, `additionalProperties`) is left
/// as it is, and a type with `#[serde(deny_unknown_fields)]` stays closed either way.
pub fn schema_for_args<T: schemars::JsonSchema>(allow_unknown: bool) -> Result<Value, BridgeError> {
    generate::<T>(SchemaSettings::draft2020_12())
        .map(|(out, raw_keys)| close_args(out, &raw_keys, allow_unknown))
}

/// The non-generic half of [`schema_for_args`].
fn close_args(mut out: Value, raw_keys: &[String], allow_unknown: bool) -> Value {
    let plain = [
        "anyOf",
        "oneOf",
        "allOf",
        "additionalProperties",
        "unevaluatedProperties",
    ]
    .iter()
    .all(|k| !raw_keys.iter().any(|r| r == k));
    if !allow_unknown
        && plain
        && let Some(map) = out.as_object_mut()
        && map.get("type").and_then(Value::as_str) == Some("object")
    {
        map.entry("additionalProperties")
            .or_insert(Value::Bool(false));
    }
    out
}

/// Generates the schema of `T` under schemars' *serialize* contract and bridges it: what `T`
/// *produces* when serialized, the schema of a tool's output. A field with
/// `#[serde(skip_serializing_if = "...")]` is optional and a `#[serde(skip_serializing)]` field
/// absent even without `#[serde(default)]`. Objects are left as schemars describes them.
///
/// ```
/// use dsh_tools::schema::bridge;
/// use schemars::JsonSchema;
/// use serde::Serialize;
///
/// #[derive(Serialize, JsonSchema)]
/// struct Listing {
///     #[serde(skip_serializing_if = "Vec::is_empty")]
///     entries: Vec<String>,
/// }
/// let schema = bridge::schema_for_serialize::<Listing>().unwrap();
/// assert!(schema.get("required").is_none_or(|r| r.as_array().unwrap().is_empty()));
/// ```
pub fn schema_for_serialize<T: schemars::JsonSchema>() -> Result<Value, BridgeError> {
    generate::<T>(SchemaSettings::draft2020_12().for_serialize()).map(|(out, _)| out)
}

/// The bridged schema, and the keys of schemars' own root object.
fn generate<T: schemars::JsonSchema>(
    settings: SchemaSettings,
) -> Result<(Value, Vec<String>), BridgeError> {
    // Generic only for schemars' own call; the rest is compiled once.
    let schema = generator(settings).into_root_schema_for::<T>();
    finish(&schema, &T::schema_name())
}

fn generator(settings: SchemaSettings) -> schemars::SchemaGenerator {
    settings
        .with(|s| {
            s.meta_schema = None;
            // schemars' own inlining expands shared subtypes before any limit applies (a type
            // with two fields of the same type, 24 levels deep, is 2^24 nodes): keep `$defs` and
            // let the loader inline `$ref`s, counting nodes as it goes.
            s.inline_subschemas = false;
        })
        .into_generator()
}

/// Bridges a generated root schema, drops a `title` that is only the type's name, and lists
/// schemars' own root keys.
fn finish(schema: &schemars::Schema, name: &str) -> Result<(Value, Vec<String>), BridgeError> {
    let mut out = from_schemars(schema)?;
    if let Some(map) = out.as_object_mut()
        && map.get("title").and_then(Value::as_str) == Some(name)
    {
        map.shift_remove("title");
    }
    let raw_keys = schema
        .as_object()
        .map(|m| m.keys().cloned().collect())
        .unwrap_or_default();
    Ok((out, raw_keys))
}

/// Where schemars left the unit variant of a serde tagged enum open: `(the $defs entry or None
/// for the root, the oneOf branch)`.
///
/// In a type whose schema is only a `oneOf` of objects told apart by one required constant
/// property (`#[serde(tag = "t")]`, with or without `content`), a branch that declares no
/// property but the tag (and takes none from `$ref` or `allOf`) is a unit variant. schemars leaves
/// it open, so `{"t": "Off", "c": 5}` validated and then failed to decode: serde reads an
/// adjacently tagged unit variant's content only when absent or null, and the tag alone is all a
/// unit variant means in either form. [`from_schemars`] closes them (`additionalProperties:
/// false`). Only the enum's own schema (the root or a `$defs` entry) is looked at: flattened into
/// a struct, its branches stand beside the struct's properties.
fn open_unit_variants(root: &Value) -> Vec<(Option<String>, usize)> {
    let mut out: Vec<(Option<String>, usize)> = Vec::new();
    let Some(root) = root.as_object() else {
        return out;
    };
    out.extend(unit_branches(root).into_iter().map(|i| (None, i)));
    if let Some(Value::Object(defs)) = root.get("$defs") {
        for (name, def) in defs {
            if let Value::Object(def) = def {
                out.extend(
                    unit_branches(def)
                        .into_iter()
                        .map(|i| (Some(name.clone()), i)),
                );
            }
        }
    }
    out
}

/// Closes the branches [`open_unit_variants`] found.
fn close_unit_variants(root: &mut Value, open: &[(Option<String>, usize)]) {
    for (def, index) in open {
        let schema = match def {
            None => Some(&mut *root),
            Some(name) => root.get_mut("$defs").and_then(|d| d.get_mut(name)),
        };
        if let Some(Value::Object(branch)) = schema
            .and_then(|s| s.get_mut("oneOf"))
            .and_then(|b| b.get_mut(*index))
        {
            branch
                .entry("additionalProperties")
                .or_insert(Value::Bool(false));
        }
    }
}

fn unit_branches(schema: &Map<String, Value>) -> Vec<usize> {
    const ANNOTATIONS: [&str; 9] = [
        "oneOf",
        "$defs",
        "title",
        "description",
        "$comment",
        "default",
        "examples",
        "deprecated",
        "$schema",
    ];
    // What a unit variant's branch may have: the properties it declares are all it has.
    const UNIT_KEYS: [&str; 8] = [
        "type",
        "properties",
        "required",
        "title",
        "description",
        "$comment",
        "deprecated",
        "examples",
    ];
    if schema.keys().any(|k| !ANNOTATIONS.contains(&k.as_str())) {
        return Vec::new();
    }
    let Some(Value::Array(branches)) = schema.get("oneOf") else {
        return Vec::new();
    };
    // The tags each branch could be told apart by: required properties with one constant value.
    let tags = |branch: &Value| -> Option<Vec<String>> {
        let branch = branch.as_object()?;
        let properties = branch.get("properties")?.as_object()?;
        let required = branch.get("required")?.as_array()?;
        Some(
            required
                .iter()
                .filter_map(Value::as_str)
                .filter(|name| {
                    properties.get(*name).is_some_and(|p| {
                        p.get("const").is_some()
                            || p.get("enum")
                                .and_then(Value::as_array)
                                .is_some_and(|e| e.len() == 1)
                    })
                })
                .map(str::to_owned)
                .collect(),
        )
    };
    let Some(mut common) = branches.first().and_then(tags) else {
        return Vec::new();
    };
    for branch in &branches[1..] {
        let Some(own) = tags(branch) else {
            return Vec::new();
        };
        common.retain(|t| own.contains(t));
    }
    let Some(tag) = common.first() else {
        return Vec::new();
    };
    // Only serde's adjacent tagging (`tag` + `content`) refuses content beside a unit variant:
    // every other branch is exactly `{tag, content}`, with one content key throughout. An
    // internally tagged unit variant ignores extra keys, and its branch looks the same as a
    // newtype variant around `serde_json::Value` (whose keys are the value's), so those stay open.
    let properties = |b: &Value| b.get("properties").and_then(Value::as_object).cloned();
    let mut content_key: Option<String> = None;
    let mut adjacent = false;
    for branch in branches {
        let Some(props) = properties(branch) else {
            return Vec::new();
        };
        if props.len() == 1 && props.contains_key(tag) {
            continue;
        }
        let required: Vec<&str> = branch
            .get("required")
            .and_then(Value::as_array)
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let others: Vec<&String> = props.keys().filter(|k| *k != tag).collect();
        let [content] = others.as_slice() else {
            return Vec::new();
        };
        if !required.contains(&content.as_str())
            || content_key.get_or_insert_with(|| (*content).clone()) != *content
        {
            return Vec::new();
        }
        adjacent = true;
    }
    if !adjacent {
        return Vec::new();
    }
    branches
        .iter()
        .enumerate()
        .filter(|(_, branch)| {
            branch.as_object().is_some_and(|b| {
                !b.contains_key("additionalProperties")
                    && b.keys().all(|k| UNIT_KEYS.contains(&k.as_str()))
                    && b.get("properties")
                        .and_then(Value::as_object)
                        .is_some_and(|p| p.len() == 1 && p.contains_key(tag))
            })
        })
        .map(|(i, _)| i)
        .collect()
}

//! JSON Schema: the enforced subset, its compiled validator, output schemas, the author DSL and
//! the schemars bridge.
//!
//! The subset is the reference implementation's (spec §2.1: `type`, `oneOf`, `properties`,
//! `required`, `additionalProperties`, `items`, `enum`, `const` and the annotations
//! `description`, `title`, `default`, `examples`) plus a deliberate extension that is always
//! enforced, never ignored:
//!
//! | keyword | on | violation |
//! |---|---|---|
//! | `minimum`, `maximum`, `exclusiveMinimum`, `exclusiveMaximum` | `number`, `integer` | `"<p>" must be >= 1` (`<=`, `>`, `<`) |
//! | `minLength`, `maxLength` (Unicode scalar values) | `string` | `"<p>" must be at least 3 characters long` |
//! | `pattern` (the [`regex`](https://docs.rs/regex) crate's syntax, unanchored, with ECMA-262's ASCII `\w`, `\d`, `\b`; see [limits](#patterns)) | `string` | `"<p>" must match pattern "^a"` |
//! | `minItems`, `maxItems` | `array` | `"<p>" must have at least 1 items` |
//! | `uniqueItems` | `array` | `"<p>" must not contain duplicate items (<i> and <j> are equal)` |
//! | `additionalProperties` as a schema | `object` | the undeclared member's own violations |
//!
//! ## Messages a model can act on
//!
//! The spec's messages come first, word for word; where they alone would not let a model fix its
//! call, what it needs follows a colon (deterministic, at most five nested violations):
//!
//! - an undeclared property lists the declared ones: `"mode" is not a declared property
//!   (additionalProperties: false): the declared properties are "path", "content"`;
//! - a `oneOf` that matched no branch is explained: for a tagged union (every branch an object
//!   with the same property fixed to a distinct string), the chosen branch's violations
//!   (`"op" must match exactly one oneOf branch (matched 0): for "kind": "add", missing required
//!   property "op.b"`) or the valid tags (`... (matched 0): "op.kind" must be one of
//!   ["add","neg"]`, the tag's path as the fields' read, the list in the `enum` message's format;
//!   a value that is not an object at all: `"op" must be an object whose "op.kind" is one of
//!   ["add","neg"]`); for serde's externally tagged enums, the named variant's violations (`for
//!   "circle", ...`) or the whole choice (`"shape" must be one of ["point"], or an object with
//!   one key, one of ["circle","square"] ...`); for `[T, null]` (every `Option<T>`), `T`'s
//!   violations, with `(or null)` when the value is not of `T`'s JSON type; otherwise the closest
//!   branch (of the value's JSON type, then fewest violations): `... (matched 0): closest is
//!   branch 1: ...`. Branches are re-checked once each for this, never recursively.
//!
//! ## Patterns
//!
//! - **Dialect.** The [`regex`](https://docs.rs/regex) crate's syntax with ECMA-262's meaning of
//!   the Perl classes, the dialect JSON Schema names and JavaScript validators (and so model
//!   providers) implement: `\w`, `\d` and `\b` are ASCII (`[0-9A-Za-z_]`, `[0-9]`, a boundary
//!   between an ASCII word character and anything else); `\s`, `.`, `\p{…}` and literals stay
//!   Unicode. This also keeps patterns small (`\w{20}` compiles to 7 KB, not 1.1 MB) and on the
//!   fast engine for any text.
//! - **Built once.** A pattern is built once per process (a bounded cache keyed by its text).
//! - **Size.** One pattern compiles to at most [`MAX_PATTERN_BYTES`]; a schema's distinct
//!   patterns to at most [`MAX_SCHEMA_PATTERN_BYTES`] together (past it, the schema is
//!   unsupported: `schema.properties.p.pattern is over the limit on compiled patterns per schema`).
//! - **Work.** Checking an `n`-byte string costs `n × (1 + compiled size / 4 KiB)` units, an
//!   upper bound on the matcher's work up to a constant; one validation (fast path and collector
//!   together) spends at most [`MAX_REGEX_WORK`]. A check that does not fit is not run: the string
//!   fails with `"<p>" must match pattern "…" (not checked: over the regex work limit)`, as does
//!   every later check of that validation. A string of 1 KiB or more is matched at most once per
//!   validation.
//!
//! Schema-valued `additionalProperties` goes beyond the issue's list: Rust maps
//! (`HashMap<String, T>`) need it for a validated value to always decode.
//!
//! ```
//! use dsh_tools::schema::{CompiledSchema, Root};
//! use serde_json::json;
//!
//! let schema = CompiledSchema::compile(&json!({
//!     "type": "object",
//!     "properties": {"path": {"type": "string"}, "limit": {"type": "integer", "minimum": 1}},
//!     "required": ["path"],
//!     "additionalProperties": false
//! }))?;
//! assert!(schema.is_valid(&json!({"path": "/tmp/a", "limit": 3})));
//! assert_eq!(
//!     schema.validate_at(&json!({"limit": 0, "x": 1}), Root::Parameters),
//!     [
//!         r#"missing required property "path""#,
//!         r#""limit" must be >= 1"#,
//!         r#""x" is not a declared property (additionalProperties: false): the declared properties are "path", "limit""#,
//!     ]
//! );
//! # Ok::<(), dsh_tools::schema::JsonSchemaError>(())
//! ```

pub mod bridge;
mod checks;
mod compile;
pub(crate) mod disjoint;
pub mod dsl;
mod error;
pub mod fast;
pub(crate) mod keywords;
mod output;
mod path;
mod pattern;
mod sink;
mod subset;
#[cfg(test)]
mod tests;
mod validate;

pub use compile::CompiledSchema;
pub use error::{JsonSchemaError, ToolArgsError, ToolOutputError};
pub use output::{OutputSchema, assert_object_schema};
pub use path::{MAX_KEY_BYTES, MAX_PATH_BYTES};
pub use pattern::{MAX_PATTERN_BYTES, MAX_REGEX_WORK, MAX_SCHEMA_PATTERN_BYTES};
pub(crate) use sink::Sink;
pub use sink::{MAX_LISTED_BYTES, MAX_LISTED_VIOLATIONS};
pub use subset::assert_supported;
pub use validate::Root;

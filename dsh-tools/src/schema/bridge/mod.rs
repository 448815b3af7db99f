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

mod clean;
mod convert;
mod disjoint;
mod exact;
mod generate;
mod load;
mod lossy;
mod problems;
mod shape;
#[cfg(test)]
mod tests;
mod unit;

pub use exact::{from_foreign, from_schemars};
pub use generate::{schema_for, schema_for_args, schema_for_serialize};
pub use load::{MAX_DEPTH, MAX_NODES};
pub use lossy::{Lossy, NamedType, REFERENCE_PREFIX, from_foreign_lossy, reference_title};
pub use problems::{BridgeError, BridgeProblem};

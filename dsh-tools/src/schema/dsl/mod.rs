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
//! [`JsonSchemaError`](super::JsonSchemaError). The compiled key order is fixed (spec §1.2.1), so the bytes the model sees
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

mod compile;
mod typed;
pub use compile::{compile_parameter_spec, compile_value_spec};
pub use typed::*;

#[cfg(test)]
mod tests;

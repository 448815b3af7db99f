//! The exact conversions: a schemars schema ([`from_schemars`]) or one written by someone else
//! ([`from_foreign`]) into the subset, or every problem; never a looser schema.

use super::clean::strip_annotations;
use super::convert;
use super::problems::{BridgeError, Problems};
use super::unit::{close_unit_variants, open_unit_variants};
use serde_json::Value;

/// Turns the schemars schema of a Rust type into a schema of the supported subset.
///
/// Every problem is reported at once, each with the JSON-pointer path of the schema node it
/// concerns (`#` is the root; the path goes through `$ref`s as if they were inlined). The
/// result passes [`assert_supported`](crate::schema::assert_supported). See the [module docs](super) for
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
    if let Err(e) = crate::schema::assert_supported(&out) {
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
/// rejected (past [`MAX_DEPTH`](super::MAX_DEPTH)) rather than overflowing the stack.
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

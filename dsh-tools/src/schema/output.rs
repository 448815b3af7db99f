//! Output schemas (spec §3): tool output declarations (any JSON root) and the object-root
//! assertion for structured outputs.

use super::{CompiledSchema, JsonSchemaError, Root, ToolOutputError, subset};
use serde_json::Value;

/// A tool's output declaration: any schema of the subset, any JSON root (spec §3.1).
///
/// ```
/// use dsh_tools::schema::OutputSchema;
/// use serde_json::json;
///
/// let output = OutputSchema::new(&json!({"type": "array", "items": {"type": "string"}}))?;
/// assert!(output.check("ls", &json!(["a", "b"])).is_ok());
/// let err = output.check("ls", &json!(["a", 1])).unwrap_err();
/// assert_eq!(err.to_string(), r#"tool "ls" returned invalid output: "value[1]" must be a string"#);
/// assert_eq!(err.code(), "INVALID_TOOL_OUTPUT");
/// # Ok::<(), dsh_tools::schema::JsonSchemaError>(())
/// ```
#[derive(Debug)]
pub struct OutputSchema {
    compiled: CompiledSchema,
}

impl OutputSchema {
    /// Asserts and compiles an output schema (`UNSUPPORTED_SCHEMA` listing every violation).
    pub fn new(schema: &Value) -> Result<Self, JsonSchemaError> {
        Ok(Self {
            compiled: CompiledSchema::compile(schema)?,
        })
    }

    /// The compiled schema.
    pub fn compiled(&self) -> &CompiledSchema {
        &self.compiled
    }

    /// Validates a canonical value of `tool` with the root label `value`.
    pub fn check(&self, tool: &str, value: &Value) -> Result<(), ToolOutputError> {
        let violations = self.compiled.validate_at(value, Root::Value);
        if violations.is_empty() {
            Ok(())
        } else {
            Err(ToolOutputError::new(tool, violations))
        }
    }
}

/// The structured-output assertion (spec §3.2): the full subset assertion, then, only when it
/// found nothing, the requirement that the root is `{"type": "object", …}`.
///
/// ```
/// use dsh_tools::schema::assert_object_schema;
/// use serde_json::json;
///
/// assert!(assert_object_schema(&json!({"type": "object"})).is_ok());
/// let err = assert_object_schema(&json!({"type": "string"})).unwrap_err();
/// assert_eq!(err.violations(), [r#"schema.type must be "object" (structured output is object-rooted)"#]);
/// ```
pub fn assert_object_schema(schema: &Value) -> Result<(), JsonSchemaError> {
    let mut violations = subset::check(schema);
    if violations.is_empty() && schema.get("type").and_then(Value::as_str) != Some("object") {
        violations
            .push("schema.type must be \"object\" (structured output is object-rooted)".to_owned());
    }
    if violations.is_empty() {
        Ok(())
    } else {
        Err(JsonSchemaError::new(violations))
    }
}

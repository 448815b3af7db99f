//! Errors that list every violation.

/// A schema outside the supported subset, or an author-DSL mistake (code `UNSUPPORTED_SCHEMA`).
///
/// Its message is `unsupported JSON schema: <violations joined by "; ">` (spec §1.3.1, §2.1.3).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unsupported JSON schema: {}", violations.join("; "))]
pub struct JsonSchemaError {
    violations: Vec<String>,
}

impl JsonSchemaError {
    /// The error code: `UNSUPPORTED_SCHEMA`.
    pub const CODE: &'static str = "UNSUPPORTED_SCHEMA";

    /// An error listing `violations` (at least one is expected).
    pub fn new(violations: Vec<String>) -> Self {
        Self { violations }
    }

    /// The error code, `UNSUPPORTED_SCHEMA`.
    pub fn code(&self) -> &'static str {
        Self::CODE
    }

    /// Every violation, in the order the spec fixes.
    pub fn violations(&self) -> &[String] {
        &self.violations
    }

    /// Takes the violations out.
    pub fn into_violations(self) -> Vec<String> {
        self.violations
    }
}

/// A tool returned a value its output schema rejects (code `INVALID_TOOL_OUTPUT`, spec §3.1.2).
///
/// Its message is `tool "<tool>" returned invalid output: <violations joined by "; ">`.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("tool \"{tool}\" returned invalid output: {}", violations.join("; "))]
pub struct ToolOutputError {
    tool: String,
    violations: Vec<String>,
}

impl ToolOutputError {
    /// The error code: `INVALID_TOOL_OUTPUT`.
    pub const CODE: &'static str = "INVALID_TOOL_OUTPUT";

    /// An error for `tool` listing `violations`.
    pub fn new(tool: impl Into<String>, violations: Vec<String>) -> Self {
        Self {
            tool: tool.into(),
            violations,
        }
    }

    /// The error code, `INVALID_TOOL_OUTPUT`.
    pub fn code(&self) -> &'static str {
        Self::CODE
    }

    /// The tool's name.
    pub fn tool(&self) -> &str {
        &self.tool
    }

    /// Every violation.
    pub fn violations(&self) -> &[String] {
        &self.violations
    }
}

/// Arguments that do not match a tool's parameters (code `INVALID_ARGS`, spec §1.4.2).
///
/// Its message is `invalid arguments: <violations joined by "; ">`.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("invalid arguments: {}", violations.join("; "))]
pub struct ToolArgsError {
    violations: Vec<String>,
}

impl ToolArgsError {
    /// The error code: `INVALID_ARGS`.
    pub const CODE: &'static str = "INVALID_ARGS";

    /// An error listing `violations`.
    pub fn new(violations: Vec<String>) -> Self {
        Self { violations }
    }

    /// The error code, `INVALID_ARGS`.
    pub fn code(&self) -> &'static str {
        Self::CODE
    }

    /// Every violation.
    pub fn violations(&self) -> &[String] {
        &self.violations
    }
}

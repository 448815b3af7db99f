//! Errors that list every violation.

use std::fmt;

/// A schema outside the supported subset, or an author-DSL mistake (code `UNSUPPORTED_SCHEMA`).
///
/// Its message is `unsupported JSON schema: <violations joined by "; ">` (spec §1.3.1, §2.1.3).
#[derive(Clone, Debug, PartialEq, Eq)]
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

impl fmt::Display for JsonSchemaError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "unsupported JSON schema: {}", self.violations.join("; "))
    }
}

impl std::error::Error for JsonSchemaError {}

/// A tool returned a value its output schema rejects (code `INVALID_TOOL_OUTPUT`, spec §3.1.2).
///
/// Its message is `tool "<tool>" returned invalid output: <violations joined by "; ">`.
#[derive(Clone, Debug, PartialEq, Eq)]
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

impl fmt::Display for ToolOutputError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "tool \"{}\" returned invalid output: {}",
            self.tool,
            self.violations.join("; ")
        )
    }
}

impl std::error::Error for ToolOutputError {}

/// Arguments that do not match a tool's parameters (code `INVALID_ARGS`, spec §1.4.2).
///
/// Its message is `invalid arguments: <violations joined by "; ">`.
#[derive(Clone, Debug, PartialEq, Eq)]
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

impl fmt::Display for ToolArgsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "invalid arguments: {}", self.violations.join("; "))
    }
}

impl std::error::Error for ToolArgsError {}

//! # dsh-tools
//!
//! The tool layer for LLM agents: typed tool definitions whose model-facing JSON Schema,
//! argument validator and typed decode can never disagree, and (in later releases) the registry
//! and execution pipeline every call runs through.
//!
//! This release holds the schema core:
//!
//! * [`json`]: the lossless JSON value model (no `-0`; numbers compared numerically, exactly).
//! * [`schema`]: the enforced JSON Schema subset ([`schema::assert_supported`]), the compiled
//!   validator ([`schema::CompiledSchema`]) that lists every violation with its path, output
//!   schemas, the author DSL ([`schema::dsl`]) and the bridge from `schemars`
//!   ([`schema::bridge`]).
//!
//! ```
//! use dsh_tools::schema::{CompiledSchema, Root};
//! use serde_json::json;
//!
//! let params = CompiledSchema::compile(&json!({
//!     "type": "object",
//!     "properties": {"path": {"type": "string"}, "tags": {"type": "array", "items": {"type": "string"}}},
//!     "required": ["path"]
//! }))?;
//! let violations = params.validate_at(&json!({"tags": ["a", 2]}), Root::Parameters);
//! assert_eq!(violations, [r#"missing required property "path""#, r#""tags[1]" must be a string"#]);
//! # Ok::<(), dsh_tools::schema::JsonSchemaError>(())
//! ```
#![forbid(unsafe_code)]
#![deny(missing_docs)]

pub mod content;
pub mod definition;
pub mod error;
pub mod json;
pub mod pipeline;
pub mod present;
pub mod registry;
pub mod schedule;
pub mod schema;
pub mod wrappers;

pub use content::{ContentBlock, UserMessage, text_content};
pub use definition::{OutputDecl, ToolDefinition};
pub use error::{ErrorInfo, ToolError};
pub use pipeline::{
    AgentId, ApprovalOutcome, ApprovalRequest, ApprovalService, ExecuteCall, ExecuteNext,
    ExecutionToken, PostNext, PostToolDecision, PreNext, PreToolDecision, ToolExecution,
    ToolExecutionInput, ToolExecutionResult, ToolRunContext,
};
pub use registry::{PresentationMode, Registration, Registry, Restriction, Scope, ToolSchema};
pub use tokio_util::sync::CancellationToken;

/// Re-exported so tool authors need no direct dependency on these crates.
pub use schemars;
pub use serde_json;

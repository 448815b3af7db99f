//! # dsh-tools
//!
//! The tool layer for LLM agents. A tool is a [`ToolDefinition`]: what the model sees (name,
//! description, JSON Schema parameters) and what only the host sees (a validated output
//! declaration, the body, a timeout, a concurrency classifier, presenters). A [`Registry`] holds
//! tools for a deployment and its agents, and runs every call through one pipeline:
//!
//! pre-execute policy (allow / deny / ask → approval) → guards (can only deny) → around-dispatch
//! wrappers (timeouts, retries) → the body → output validation and rendering →
//! post-execute (accept, replace, block) → `finalize_content` → result observers.
//!
//! Every failure — unknown tool, invalid arguments, a panicking body or hook, a timeout, a
//! cancellation — becomes a structured result the model reads as `Error: <message>`, and the
//! turn goes on.
//!
//! ```
//! use dsh_tools::{
//!     CancellationToken, PreToolDecision, Registry, ToolDefinition, ToolError, ToolExecutionInput,
//!     wrappers,
//! };
//! use schemars::JsonSchema;
//! use serde::Deserialize;
//! use serde_json::json;
//! use std::time::Duration;
//!
//! #[derive(Deserialize, JsonSchema)]
//! struct ReadArgs {
//!     /// Absolute file path
//!     path: String,
//! }
//!
//! # tokio::runtime::Runtime::new().unwrap().block_on(async {
//! let registry = Registry::new();
//! // A typed tool: its parameters are ReadArgs' schema; arguments are validated, then decoded.
//! let read = ToolDefinition::typed("read_file", "Read a file.", |args: ReadArgs, _ctx| async move {
//!     Ok::<_, ToolError>(format!("contents of {}", args.path))
//! })?
//! .timeout(Duration::from_secs(30));
//! registry.register(read)?;
//!
//! // A policy, a guard and a wrapper.
//! registry.on_pre_execute(|exec, next| async move {
//!     if exec.arguments().is_some_and(|a| a["path"] == "/etc/shadow") {
//!         return Ok(PreToolDecision::deny("that file is off limits"));
//!     }
//!     next.run().await
//! });
//! registry.guard(|exec| {
//!     let path = exec.arguments()?.get("path")?.as_str()?;
//!     (!path.starts_with('/')).then(|| format!("{path} is not absolute"))
//! });
//! registry.on_execute(wrappers::timeout(&registry));
//!
//! let call = |args| ToolExecutionInput::new("call_1", "read_file", args, CancellationToken::new());
//! let ok = registry.execute(call(json!({"path": "/etc/hosts"}))).await;
//! assert_eq!(ok.text(), "contents of /etc/hosts");
//! let denied = registry.execute(call(json!({"path": "/etc/shadow"}))).await;
//! assert_eq!(denied.text(), "Error: that file is off limits");
//! let invalid = registry.execute(call(json!({"file": "/etc/hosts"}))).await;
//! assert_eq!(invalid.code(), Some("INVALID_ARGS"));
//! assert_eq!(
//!     invalid.text(),
//!     r#"Error: invalid arguments: missing required property "path"; "file" is not a declared property (additionalProperties: false): the declared properties are "path""#
//! );
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! # }).unwrap();
//! ```
//!
//! [`#[tool]`](macro@tool) makes an ordinary `async fn` a typed tool (the [`Tool`] trait, with
//! its schemas, validation and decode derived from the Rust types; see [`mod@tool`]).
//!
//! Modules: [`schema`] (the enforced JSON Schema subset, the compiled validator, output schemas,
//! the author DSL and the `schemars` bridge), [`json`] (the lossless JSON model), [`registry`]
//! (layers, scopes, restrictions, `schemas()`), [`pipeline`] (the call stages, hooks, results),
//! [`wrappers`] (timeout, retry), [`telemetry`] (spans and metrics in the OpenTelemetry
//! GenAI and MCP conventions), [`schedule`] (parallel / exclusive scheduling of a
//! model turn), [`present`] (presentation cards), [`provider`] (model-API dialects: export,
//! parse replies, format results), [`testing`] (helpers for authors' tests), and with feature
//! `mcp`, `mcp` (serve a registry over MCP, import MCP servers' tools); with feature `acp`, `acp`
//! (tool calls and approvals in Agent Client Protocol editors).
#![forbid(unsafe_code)]
#![deny(missing_docs)]
#![cfg_attr(docsrs, feature(doc_cfg))]

#[cfg(feature = "acp")]
pub mod acp;
mod call;
pub mod code;
pub mod content;
pub mod definition;
#[cfg(feature = "redis")]
pub mod durable;
pub mod error;
pub mod json;
#[cfg(feature = "mcp")]
pub mod mcp;
pub mod pipeline;
pub mod present;
pub mod provider;
pub mod registry;
pub(crate) mod run_code;
pub mod schedule;
pub mod schema;
pub mod search;
pub mod task;
pub mod telemetry;
pub mod testing;
pub mod tool;
#[cfg(feature = "workspace")]
pub mod workspace;
pub mod wrappers;

#[doc(hidden)]
pub mod __private;

pub use call::{
    AgentId, ApprovalOutcome, ApprovalRequest, ApprovalService, ArgumentMatch, ExecuteCall,
    ExecuteNext, ExecutionToken, Grant, GrantDecision, GrantKey, GrantPolicy, PostNext,
    PostToolDecision, PreNext, PreToolDecision, Principal, Signal, ToolExecution,
    ToolExecutionInput, ToolExecutionResult, ToolRunContext,
};
pub use content::{ContentBlock, InvalidMedia, UserMessage, text_content};
pub use definition::{OutputDecl, ToolDefinition, ToolHints};
pub use error::{ErrorInfo, ToolError};
pub use registry::{
    PresentationMode, Registration, Registry, Restriction, Scope, ScopedRegistration, ToolSchema,
};
pub use tokio_util::sync::CancellationToken;
pub use tool::{Carded, Concurrency, NoArgs, State, Tool, ToolArgs, ToolOutput, ToolReturn};

#[doc = include_str!("tool_macro.md")]
pub use dsh_tools_derive::tool;

/// Generates, at compile time, a validator for a type's bridged arguments schema: see
/// [`schema::fast`]. `#[tool]` derives it for the inline form's arguments; derive it on the
/// argument types of the struct form (and the types inside them) to use it there.
pub use dsh_tools_derive::FastCheck;
pub use schema::fast::FastCheck;

/// The crate README's example, compiled and run as a doctest (the repository README's are
/// in `dsh-tools-tests`, which is not published).
#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;

/// Re-exported so tool authors need no direct dependency on these crates.
pub use schemars;
pub use serde_json;

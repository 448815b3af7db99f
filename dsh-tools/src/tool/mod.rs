//! The typed path: the [`Tool`] trait, which `#[tool]` implements, and its adapter into a
//! [`ToolDefinition`](crate::ToolDefinition).
//!
//! A typed tool's parameters are the bridged schema of its `Args`, its output declaration the
//! bridged schema of its `Output`: the schema the model sees, the validator that checks every
//! call, the decode and the output check all come from the same Rust types, so they cannot
//! disagree. Each call's arguments are validated first (every violation in one `INVALID_ARGS`
//! failure, with paths), then decoded with [`json::decode`](crate::json::decode); a value that
//! validates always decodes. The schemas of a pair of types are bridged and compiled once per
//! process, never per call.
//!
//! # The code `#[tool]` writes
//!
//! An author can write the same impl by hand:
//!
//! ```
//! use dsh_tools::{Concurrency, Tool, ToolDefinition, ToolError, ToolRunContext};
//! use schemars::JsonSchema;
//! use serde::Deserialize;
//! use std::time::Duration;
//!
//! #[derive(Deserialize, JsonSchema)]
//! struct ReadFileArgs {
//!     /// Absolute file path
//!     path: String,
//! }
//!
//! /// Read a file from disk.
//! async fn read_file(args: ReadFileArgs, _ctx: ToolRunContext) -> Result<String, ToolError> {
//!     Ok(format!("contents of {}", args.path))
//! }
//!
//! /// The `read_file` tool.
//! #[derive(Clone, Copy, Debug, Default)]
//! struct ReadFile;
//!
//! impl Tool for ReadFile {
//!     type Args = ReadFileArgs;
//!     type Output = String;
//!
//!     fn name(&self) -> &str {
//!         "read_file"
//!     }
//!
//!     fn description(&self) -> &str {
//!         "Read a file from disk."
//!     }
//!
//!     fn timeout(&self) -> Option<Duration> {
//!         Some(Duration::from_millis(30_000))
//!     }
//!
//!     fn concurrency(&self) -> Concurrency<ReadFileArgs> {
//!         Concurrency::Parallel
//!     }
//!
//!     fn call(
//!         &self,
//!         args: ReadFileArgs,
//!         ctx: ToolRunContext,
//!     ) -> impl Future<Output = Result<String, ToolError>> + Send {
//!         read_file(args, ctx)
//!     }
//! }
//!
//! impl From<ReadFile> for ToolDefinition {
//!     fn from(tool: ReadFile) -> Self {
//!         tool.definition()
//!     }
//! }
//!
//! let registry = dsh_tools::Registry::new();
//! registry.register(ReadFile.definition())?;
//! # Ok::<(), dsh_tools::registry::RegistrationError>(())
//! ```
//!
//! (`#[tool]` also maps the body's error type into [`ToolError`](crate::ToolError) with `Into`, and for the
//! inline form generates the arguments struct and destructures it into the parameters.)
//!
//! # Rooms
//!
//! - `contract`: the [`Tool`] trait and [`Concurrency`], and what the trait's provided methods
//!   build: the adapter into a [`ToolDefinition`](crate::ToolDefinition) and [`Carded`] (typed
//!   cards). One room: the trait's methods name the adapter and the adapter names the trait.
//! - `signature`: what a `#[tool]` function's signature may name ([`ToolArgs`], [`ToolOutput`],
//!   [`ToolReturn`], [`ToolContext`], [`NoArgs`], [`State`]).
//! - `typed`: the schemas of an `(Args, Output)` pair, bridged and compiled once per process;
//!   argument validation and decoding; output encoding. Also used by
//!   [`ToolDefinition::typed`](crate::ToolDefinition::typed).
//! - `aliases`: the names serde decodes that a schema does not declare.

mod aliases;
pub(crate) mod contract;
mod signature;
pub(crate) mod typed;

pub use crate::json::MAX_DECODE_DEPTH;
pub use contract::{Carded, Concurrency, Tool};
pub use signature::{NoArgs, State, ToolArgs, ToolContext, ToolOutput, ToolReturn};

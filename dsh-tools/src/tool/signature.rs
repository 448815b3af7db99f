//! What a `#[tool]` function's signature may name: its arguments ([`ToolArgs`]) and output
//! ([`ToolOutput`]) types, its return type ([`ToolReturn`]), its context ([`ToolContext`]),
//! [`NoArgs`] and host [`State`]. Each carries the diagnostic an author reads when a signature
//! does not fit.

use crate::call::ToolRunContext;
use crate::error::ToolError;
use schemars::JsonSchema;
use serde::Serialize;
use serde::de::DeserializeOwned;

/// A tool's arguments: `Deserialize + JsonSchema` (implemented for every such type).
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a tool's arguments: it must implement `Deserialize` and `JsonSchema`",
    label = "not `Deserialize + JsonSchema`",
    note = "derive both: `#[derive(serde::Deserialize, schemars::JsonSchema)]` (dsh_tools re-exports schemars)"
)]
pub trait ToolArgs: DeserializeOwned + JsonSchema {}

impl<T: DeserializeOwned + JsonSchema> ToolArgs for T {}

/// A tool's output: `Serialize + JsonSchema` (implemented for every such type).
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a tool's output: it must implement `Serialize` and `JsonSchema`",
    label = "not `Serialize + JsonSchema`",
    note = "derive both: `#[derive(serde::Serialize, schemars::JsonSchema)]` (dsh_tools re-exports schemars)"
)]
pub trait ToolOutput: Serialize + JsonSchema {}

impl<T: Serialize + JsonSchema> ToolOutput for T {}

/// What a `#[tool]` function returns: `Result<O, E>` with `E: Into<ToolError>`.
#[diagnostic::on_unimplemented(
    message = "a `#[tool]` function must return `Result<O, E>` where `E: Into<ToolError>`, not `{Self}`",
    label = "not `Result<O, E>` with an error convertible into `ToolError`",
    note = "return `Result<O, ToolError>`, or implement `From<YourError> for ToolError`"
)]
pub trait ToolReturn {
    /// `O`.
    type Output;
    /// The result with the error converted.
    fn into_tool_result(self) -> Result<Self::Output, ToolError>;
}

impl<O, E: Into<ToolError>> ToolReturn for Result<O, E> {
    type Output = O;
    fn into_tool_result(self) -> Result<O, ToolError> {
        self.map_err(Into::into)
    }
}

/// The type of a `#[tool]` function's context parameter.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not the tool context",
    label = "the context parameter must be a `ToolRunContext`",
    note = "a `#[tool]` fn takes `(args: Args)` or `(args: Args, ctx: ToolRunContext)`, or documented arguments (the inline form) optionally followed by an undocumented `ctx: ToolRunContext`",
    note = "host state (a database handle, a client) is the tool's state: `State(db): State<Db>` as the first parameter, registered with `Tool::with(db)`",
    note = "arguments the model sends are documented with `///` (the inline form); the context never is"
)]
pub trait ToolContext: Sized {
    /// The context as this parameter's type.
    fn from_context(ctx: ToolRunContext) -> Self;
}

impl ToolContext for ToolRunContext {
    fn from_context(ctx: ToolRunContext) -> Self {
        ctx
    }
}

/// An empty object: the arguments of a tool that takes none but wants its context in the
/// struct form (`async fn now(_: NoArgs, ctx: ToolRunContext)`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NoArgs {}

/// By hand, so that these docs do not become the model-facing description.
impl JsonSchema for NoArgs {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "NoArgs".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({"type": "object", "properties": {}, "additionalProperties": false})
    }
}

/// Shared state a `#[tool]` function takes as its first parameter, the way an axum handler
/// takes `State<T>`: a database pool, an HTTP client, a workspace root.
///
/// The generated tool type then holds the state: it is built with `ReadFile::with(state)` (there
/// is no unit value to register, so forgetting the state is a compile error), and each call
/// receives a clone (`T: Clone`; wrap what is not cheap to clone in an `Arc`).
///
/// ```
/// use dsh_tools::{tool, Registry, State, ToolError};
/// use std::path::PathBuf;
///
/// #[derive(Clone)]
/// struct Workspace {
///     root: PathBuf,
/// }
///
/// /// Resolve a path inside the workspace.
/// #[tool]
/// async fn resolve(
///     State(ws): State<Workspace>,
///     /// a path relative to the workspace root
///     path: String,
/// ) -> Result<String, ToolError> {
///     Ok(ws.root.join(path).display().to_string())
/// }
///
/// let registry = Registry::new();
/// registry.register(Resolve::with(Workspace { root: "/srv".into() }))?;
/// # Ok::<(), dsh_tools::registry::RegistrationError>(())
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct State<T>(pub T);

impl<T> std::ops::Deref for State<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.0
    }
}

impl<T> std::ops::DerefMut for State<T> {
    fn deref_mut(&mut self) -> &mut T {
        &mut self.0
    }
}

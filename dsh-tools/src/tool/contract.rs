//! The contract of a typed tool: the [`Tool`] trait `#[tool]` implements, [`Concurrency`], and
//! what the trait's provided methods build from it: the adapter into a [`ToolDefinition`]
//! (non-generic where it can be, so it is compiled once rather than once per tool) and
//! [`Carded`], a tool with typed cards. One room because each part names the others: the
//! trait's methods return the adapter's results, and the adapter is generic over the trait.

use crate::call::ToolRunContext;
use crate::content::ContentBlock;
use crate::definition::{
    ClassifierFn, ExecuteFn, FinalizeFn, OutputDecl, RenderFn, ToolDefinition, ToolHints,
    render_default,
};
use crate::error::ToolError;

use super::signature::{ToolArgs, ToolOutput};
use super::typed::{TypedSchemas, encode, schemas, validate_and_decode};
use crate::present::{CallPresenter, ResultPresenter, ToolCallView, ToolResultView};
use crate::schema::bridge::BridgeError;
use crate::schema::fast::validator::Generated;
use serde::de::DeserializeOwned;
use serde_json::Value;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

/// Whether a tool's calls may run in parallel with their siblings (spec §7).
///
/// A closed set: a tool is exclusive, always parallel, or classified per call from its decoded
/// arguments (arguments that do not validate classify as exclusive: fail-closed).
pub enum Concurrency<A> {
    /// Every call runs alone (the default).
    Exclusive,
    /// Every call may run in parallel.
    Parallel,
    /// A call may run in parallel when the classifier returns `true` for its arguments.
    Classified(fn(&A) -> bool),
}

impl<A> Clone for Concurrency<A> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<A> Copy for Concurrency<A> {}

impl<A> std::fmt::Debug for Concurrency<A> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::Exclusive => "Exclusive",
            Self::Parallel => "Parallel",
            Self::Classified(_) => "Classified",
        })
    }
}

/// A typed tool: arguments decoded into `Args`, a value of type `Output`. `#[tool]` implements
/// it for a unit struct named after the function; see the [module docs](mod@crate::tool) for the same impl
/// written by hand.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a tool",
    label = "not a `dsh_tools::Tool`",
    note = "annotate an `async fn` with `#[dsh_tools::tool]`, or implement `Tool` by hand"
)]
pub trait Tool: Send + Sync + Sized + 'static {
    /// The decoded arguments; their schema is the model-facing `parameters` (an object).
    type Args: ToolArgs + Send + 'static;
    /// The value; its schema is the output declaration.
    type Output: ToolOutput + 'static;

    /// The model-facing name.
    fn name(&self) -> &str;

    /// The model-facing description.
    fn description(&self) -> &str;

    /// The body.
    fn call(
        &self,
        args: Self::Args,
        ctx: ToolRunContext,
    ) -> impl Future<Output = Result<Self::Output, ToolError>> + Send;

    /// A human-readable title for user interfaces.
    fn title(&self) -> Option<&str> {
        None
    }

    /// Behaviour hints (read-only, destructive, idempotent, open-world).
    fn hints(&self) -> ToolHints {
        ToolHints::new()
    }

    /// A timeout, enforced on every call ([`ToolDefinition::timeout`](crate::ToolDefinition::timeout)).
    fn timeout(&self) -> Option<Duration> {
        None
    }

    /// How long a body that ignores its cancelled signal is awaited after the timeout
    /// ([`ToolDefinition::timeout_grace`](crate::ToolDefinition::timeout_grace); `None`: the
    /// default).
    fn timeout_grace(&self) -> Option<Duration> {
        None
    }

    /// Whether calls may run in parallel.
    fn concurrency(&self) -> Concurrency<Self::Args> {
        Concurrency::Exclusive
    }

    /// Renders the value: `(arguments, value) -> blocks`; `None` is
    /// [`crate::definition::render_default`].
    fn render(&self) -> Option<RenderFn> {
        None
    }

    /// A call presenter (spec §9).
    fn present_call(&self) -> Option<CallPresenter> {
        None
    }

    /// A result presenter (spec §9).
    fn present_result(&self) -> Option<ResultPresenter> {
        None
    }

    /// A final content transform, applied once to every outcome.
    fn finalize_content(&self) -> Option<FinalizeFn> {
        None
    }

    /// Whether the arguments object accepts properties it does not declare (`false`: the
    /// model-facing schema is closed, and a made-up argument is `INVALID_ARGS` listing the
    /// declared ones). Nested objects stay closed either way; a struct with
    /// `#[serde(deny_unknown_fields)]` stays closed too, since serde would refuse the extra.
    fn allow_unknown_args(&self) -> bool {
        false
    }

    /// Whether the tool waits for a search before the model is shown it
    /// ([`ToolDefinition::defer_loading`](crate::ToolDefinition::defer_loading); `None`: the
    /// scope's [`DeferRule`](crate::registry::DeferRule)s decide). `#[tool(defer_loading)]`
    /// sets it.
    fn defer_loading(&self) -> Option<bool> {
        None
    }

    /// Whether calls may run as tasks, detached and collected later
    /// ([`ToolDefinition::task_support`](crate::ToolDefinition::task_support)). Forbidden by
    /// default; `#[tool(task = "optional")]` (or `"required"`) sets it.
    fn task_support(&self) -> crate::call::TaskSupport {
        crate::call::TaskSupport::Forbidden
    }

    /// This tool with a call card drawn from its typed arguments (spec §9): arguments that do not
    /// validate, a card of `None` or a card that panics show the generic card (not the tool's own
    /// [`present_call`](Tool::present_call), which this replaces). See [`Carded`].
    fn call_card<F>(self, card: F) -> Carded<Self>
    where
        F: Fn(&Self::Args) -> Option<ToolCallView> + Send + Sync + 'static,
    {
        Carded::new(self).call_card(card)
    }

    /// This tool with a result card drawn from its typed arguments and output, computed when a
    /// call succeeds and kept as the result's presentation metadata, so a replay from the logs
    /// shows the same card (and MCP clients get it in `_meta`). Failed calls, a card of `None` and
    /// a card that panics show the generic card (it replaces the tool's own
    /// [`present_result`](Tool::present_result) and uses the presentation-metadata slot). The
    /// card is drawn from the output as the body returns it, so the output type need not be
    /// `Deserialize`. See [`Carded`].
    fn result_card<F>(self, card: F) -> Carded<Self>
    where
        F: Fn(&Self::Args, &Self::Output) -> Option<ToolResultView> + Send + Sync + 'static,
    {
        Carded::new(self).result_card(card)
    }

    /// This tool with its content (what the model reads back) rendered from the typed arguments
    /// and output instead of the output's JSON text. The output type must also be
    /// `Deserialize`. See [`Carded`].
    fn render_with<F>(self, render: F) -> Carded<Self>
    where
        F: Fn(&Self::Args, &Self::Output) -> Vec<ContentBlock> + Send + Sync + 'static,
        Self::Output: DeserializeOwned,
    {
        Carded::new(self).render_with(render)
    }

    /// The validator generated for `Args` (by
    /// [`#[derive(FastCheck)]`](derive@crate::FastCheck), or the inline form's member table),
    /// if any: `#[tool]` fills it in. A constant, so it adds no function to a tool.
    #[doc(hidden)]
    const GENERATED_CHECK: Option<Generated> = None;

    /// Every field and variant name serde accepts for `Args`, aliases included (registration
    /// refuses an alias the schema does not show). `#[tool]`'s inline form checks its own
    /// parameters when it expands and overrides this, so no probe is compiled for it.
    #[doc(hidden)]
    fn serde_names() -> std::collections::BTreeSet<&'static str>
    where
        Self: Sized,
    {
        super::typed::serde_names::<Self::Args>()
    }

    /// [`title`](Tool::title) to [`finalize_content`](Tool::finalize_content) in one call, which
    /// is all that building a definition asks: `#[tool]` overrides it with what its keys set, so
    /// a generated tool compiles this one function instead of one per method
    /// (BENCHMARKS.md, compile time).
    #[doc(hidden)]
    fn __settings(&self) -> Settings<'_, Self::Args> {
        Settings::of(self)
    }

    /// The typed call card set by `#[tool(call_card = path)]` (see [`Tool::call_card`]).
    #[doc(hidden)]
    #[allow(clippy::type_complexity)]
    fn key_call_card() -> Option<fn(&Self::Args) -> Option<ToolCallView>>
    where
        Self: Sized,
    {
        None
    }

    /// The typed result card set by `#[tool(result_card = path)]` (see [`Tool::result_card`]).
    #[doc(hidden)]
    #[allow(clippy::type_complexity)]
    fn key_result_card() -> Option<fn(&Self::Args, &Self::Output) -> Option<ToolResultView>>
    where
        Self: Sized,
    {
        None
    }

    /// The definition, or why the types' schemas cannot be bridged into the subset.
    fn try_definition(self) -> Result<ToolDefinition, BridgeError> {
        let schemas = schemas::<Self::Args, Self::Output>(
            self.allow_unknown_args(),
            &Self::GENERATED_CHECK,
            Self::serde_names,
        )?;
        Ok(build(self, schemas))
    }

    /// The definition to register. When the types' schemas cannot be bridged, the definition
    /// carries the error and registering it fails with
    /// [`RegistrationError::Schema`](crate::registry::RegistrationError::Schema).
    fn definition(self) -> ToolDefinition {
        let name = self.name().to_owned();
        let description = self.description().to_owned();
        match schemas::<Self::Args, Self::Output>(
            self.allow_unknown_args(),
            &Self::GENERATED_CHECK,
            Self::serde_names,
        ) {
            Ok(schemas) => build(self, schemas),
            Err(error) => ToolDefinition::invalid(name, description, error),
        }
    }
}

fn build<T: Tool>(tool: T, schemas: Arc<TypedSchemas>) -> ToolDefinition {
    // Only the body and the classifier depend on `T`; everything else is assembled by
    // non-generic code, compiled once rather than once per tool in the author's crate.
    let tool = Arc::new(tool);
    let compiled = Arc::clone(&schemas.args);
    let body = Arc::clone(&tool);
    let execute: ExecuteFn = Arc::new(move |args: Arc<Value>, ctx: ToolRunContext| {
        let compiled = Arc::clone(&compiled);
        let body = Arc::clone(&body);
        Box::pin(async move {
            let decoded: T::Args = validate_and_decode(&compiled, &args)?;
            drop(args);
            encode(body.call(decoded, ctx).await?)
        })
    });
    assemble_typed(tool, execute, &schemas)
}

/// [`build`] with a typed result card computed from the typed output, before it is encoded:
/// the output type need not be `Deserialize`.
fn build_carded<T: Tool>(
    tool: T,
    schemas: Arc<TypedSchemas>,
    card: TypedResultCardOut<T>,
) -> ToolDefinition {
    let tool = Arc::new(tool);
    let compiled = Arc::clone(&schemas.args);
    let body = Arc::clone(&tool);
    let execute: ExecuteFn = Arc::new(move |args: Arc<Value>, ctx: ToolRunContext| {
        let compiled = Arc::clone(&compiled);
        let body = Arc::clone(&body);
        let card = Arc::clone(&card);
        Box::pin(async move {
            let decoded: T::Args = validate_and_decode(&compiled, &args)?;
            // The card reads the arguments after the body consumed its copy: decoded again,
            // without a second validation (they just validated).
            let for_card: Option<T::Args> = crate::json::decode_unbounded(&args).ok();
            drop(args);
            let execution = Arc::clone(&ctx.execution);
            let output = body.call(decoded, ctx).await?;
            // A card is for the UI: one that panics shows the generic card, never fails the call.
            let made = for_card.and_then(|args| {
                std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| card(&args, &output)))
                    .unwrap_or_else(|payload| {
                        crate::error::drop_panic_payload(payload);
                        None
                    })
            });
            let value = encode(output)?;
            // Set only for a value that reaches the output checks, which take it at once: no
            // card outlives its call (a retried body starts with none).
            if let Some(meta) = made.and_then(|view| serde_json::to_value(view).ok()) {
                execution.run.set_presentation(meta);
            }
            Ok(value)
        })
    });
    assemble_typed(tool, execute, &schemas)
}

/// A typed result card over the typed output.
type TypedResultCardOut<T> =
    Arc<dyn Fn(&<T as Tool>::Args, &<T as Tool>::Output) -> Option<ToolResultView> + Send + Sync>;

fn assemble_typed<T: Tool>(
    tool: Arc<T>,
    execute: ExecuteFn,
    schemas: &Arc<TypedSchemas>,
) -> ToolDefinition {
    let settings = tool.__settings();
    let classifier: Option<ClassifierFn> = match settings.concurrency {
        Concurrency::Exclusive => None,
        Concurrency::Parallel => Some(parallel()),
        Concurrency::Classified(classify) => {
            let compiled = Arc::clone(&schemas.args);
            Some(Arc::new(move |args: &Value| {
                validate_and_decode::<T::Args>(&compiled, args).is_ok_and(|a| classify(&a))
            }))
        }
    };
    assemble(
        Parts {
            name: tool.name().to_owned(),
            description: tool.description().to_owned(),
            title: settings.title.map(str::to_owned),
            hints: settings.hints,
            timeout: settings.timeout,
            timeout_grace: settings.timeout_grace,
            render: settings.render,
            present_call: settings.present_call,
            present_result: settings.present_result,
            finalize: settings.finalize_content,
            defer_loading: settings.defer_loading,
            task_support: settings.task_support,
            classifier,
            execute,
        },
        schemas,
    )
}

/// The classifier of a tool that is always safe in parallel: not generic, so compiled once
/// rather than once per tool.
fn parallel() -> ClassifierFn {
    Arc::new(|_: &Value| true)
}

/// What [`Tool::__settings`] returns: the values of the methods it stands for.
#[doc(hidden)]
pub struct Settings<'a, A> {
    /// [`Tool::title`].
    pub title: Option<&'a str>,
    /// [`Tool::hints`].
    pub hints: ToolHints,
    /// [`Tool::timeout`].
    pub timeout: Option<Duration>,
    /// [`Tool::timeout_grace`].
    pub timeout_grace: Option<Duration>,
    /// [`Tool::concurrency`].
    pub concurrency: Concurrency<A>,
    /// [`Tool::render`].
    pub render: Option<RenderFn>,
    /// [`Tool::present_call`].
    pub present_call: Option<CallPresenter>,
    /// [`Tool::present_result`].
    pub present_result: Option<ResultPresenter>,
    /// [`Tool::finalize_content`].
    pub finalize_content: Option<FinalizeFn>,
    /// [`Tool::defer_loading`].
    pub defer_loading: Option<bool>,
    /// [`Tool::task_support`].
    pub task_support: crate::call::TaskSupport,
}

impl<'a, A> Settings<'a, A> {
    /// Each method's value (the default of [`Tool::__settings`]).
    pub fn of<T: Tool<Args = A>>(tool: &'a T) -> Self {
        Self {
            title: tool.title(),
            hints: tool.hints(),
            timeout: tool.timeout(),
            timeout_grace: tool.timeout_grace(),
            concurrency: tool.concurrency(),
            render: tool.render(),
            present_call: tool.present_call(),
            present_result: tool.present_result(),
            finalize_content: tool.finalize_content(),
            defer_loading: tool.defer_loading(),
            task_support: tool.task_support(),
        }
    }
}

/// What [`build`] takes from a typed tool.
struct Parts {
    name: String,
    description: String,
    title: Option<String>,
    hints: ToolHints,
    timeout: Option<Duration>,
    timeout_grace: Option<Duration>,
    render: Option<RenderFn>,
    present_call: Option<CallPresenter>,
    present_result: Option<ResultPresenter>,
    finalize: Option<FinalizeFn>,
    classifier: Option<ClassifierFn>,
    defer_loading: Option<bool>,
    task_support: crate::call::TaskSupport,
    execute: ExecuteFn,
}

fn assemble(parts: Parts, schemas: &TypedSchemas) -> ToolDefinition {
    let output = match parts.render {
        Some(render) => OutputDecl::new(schemas.output.clone(), move |a, v| render(a, v)),
        None => OutputDecl::new(schemas.output.clone(), |_, v| render_default(v)),
    };
    let mut definition = ToolDefinition::from_execute(
        parts.name,
        parts.description,
        Arc::clone(&schemas.parameters),
        output,
        parts.execute,
    );
    definition.bridged = true;
    definition.args = Some(Arc::clone(&schemas.args));
    definition.defer_loading = parts.defer_loading;
    definition.task_support = parts.task_support;
    if let Some(title) = parts.title {
        definition = definition.title(title);
    }
    definition = definition.hints(parts.hints);
    if let Some(timeout) = parts.timeout {
        definition = definition.timeout(timeout);
    }
    if let Some(grace) = parts.timeout_grace {
        definition = definition.timeout_grace(grace);
    }
    definition.concurrency_safe = parts.classifier;
    if let Some(presenter) = parts.present_call {
        definition = definition.present_call(presenter);
    }
    if let Some(presenter) = parts.present_result {
        definition = definition.present_result(presenter);
    }
    definition.finalize_content = parts.finalize;
    definition
}

type TypedCallCard<A> = Arc<dyn Fn(&A) -> Option<ToolCallView> + Send + Sync>;

/// A typed tool with cards drawn from its typed arguments and output instead of raw JSON
/// ([`Tool::call_card`], [`Tool::result_card`]). Register it like the tool itself.
///
/// ```
/// use dsh_tools::present::{FileDiff, ToolCallKind, ToolCallView, ToolResultView};
/// use dsh_tools::{Registry, Tool, ToolError, tool};
/// use serde::{Deserialize, Serialize};
/// use serde_json::json;
///
/// #[derive(Serialize, Deserialize, schemars::JsonSchema)]
/// struct Written {
///     before: Option<String>,
///     after: String,
/// }
///
/// /// Writes a file.
/// #[tool]
/// async fn write_file(
///     /// The file
///     path: String,
///     /// Its new text
///     text: String,
/// ) -> Result<Written, ToolError> {
///     Ok(Written { before: None, after: text })
/// }
///
/// let registry = Registry::new();
/// registry.register(
///     WriteFile
///         .call_card(|args| {
///             Some(ToolCallView::Generic {
///                 title: format!("Write {}", args.path),
///                 kind: Some(ToolCallKind::Edit),
///                 raw_input: None,
///                 content: None,
///                 locations: None,
///             })
///         })
///         .result_card(|args, out| {
///             Some(ToolResultView::Diff {
///                 title: None,
///                 diffs: vec![FileDiff {
///                     path: args.path.clone(),
///                     old_text: out.before.clone(),
///                     new_text: out.after.clone(),
///                 }],
///             })
///         }),
/// )?;
/// let args = json!({"path": "a.txt", "text": "hi"});
/// assert_eq!(registry.present_call("write_file", &args, None).title(), "Write a.txt");
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let input = dsh_tools::ToolExecutionInput::new("c", "write_file", args.clone(), Default::default());
/// let result = registry.execute(input).await;
/// let card = registry.present_result("write_file", &args, &result, None);
/// assert!(matches!(card, ToolResultView::Diff { diffs, .. } if diffs[0].new_text == "hi"));
/// # });
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct Carded<T: Tool> {
    tool: T,
    call: Option<TypedCallCard<T::Args>>,
    result: Option<TypedResultCardOut<T>>,
    render: Option<TypedRender<T::Args>>,
}

type TypedRender<A> = Arc<dyn Fn(&A, &Value) -> Option<Vec<ContentBlock>> + Send + Sync>;

impl<T: Tool> std::fmt::Debug for Carded<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Carded")
            .field("tool", &self.tool.name())
            .field("call_card", &self.call.is_some())
            .field("result_card", &self.result.is_some())
            .field("render_with", &self.render.is_some())
            .finish()
    }
}

impl<T: Tool> Carded<T> {
    /// `tool`, with the cards its `#[tool]` keys set (replaced by the methods' cards).
    pub(super) fn new(tool: T) -> Self {
        Self {
            tool,
            call: T::key_call_card().map(|card| Arc::new(card) as TypedCallCard<T::Args>),
            result: T::key_result_card().map(|card| Arc::new(card) as TypedResultCardOut<T>),
            render: None,
        }
    }

    /// Sets the call card ([`Tool::call_card`]).
    pub fn call_card<F>(mut self, card: F) -> Self
    where
        F: Fn(&T::Args) -> Option<ToolCallView> + Send + Sync + 'static,
    {
        self.call = Some(Arc::new(card));
        self
    }

    /// Sets the result card ([`Tool::result_card`]).
    pub fn result_card<F>(mut self, card: F) -> Self
    where
        F: Fn(&T::Args, &T::Output) -> Option<ToolResultView> + Send + Sync + 'static,
    {
        self.result = Some(Arc::new(card));
        self
    }

    /// Renders the content from the typed arguments and output ([`Tool::render_with`]).
    pub fn render_with<F>(mut self, render: F) -> Self
    where
        F: Fn(&T::Args, &T::Output) -> Vec<ContentBlock> + Send + Sync + 'static,
        T::Output: DeserializeOwned,
    {
        self.render = Some(Arc::new(move |args: &T::Args, value: &Value| {
            let output: T::Output = decode_output(value)?;
            Some(render(args, &output))
        }));
        self
    }

    /// `tool` with the cards its `#[tool]` keys set: what the `definition` that `#[tool]` writes
    /// for a tool with card keys builds (only then, so a tool without cards compiles none of
    /// this).
    #[doc(hidden)]
    pub fn keyed(tool: T) -> Self {
        Self::new(tool)
    }

    /// The definition, or why the types' schemas cannot be bridged into the subset.
    pub fn try_definition(self) -> Result<ToolDefinition, BridgeError> {
        let allow_unknown = self.tool.allow_unknown_args();
        let generated = &T::GENERATED_CHECK;
        let schemas = schemas::<T::Args, T::Output>(allow_unknown, generated, T::serde_names)?;
        Ok(self.build(schemas))
    }

    /// The definition to register, with its cards and renderer.
    pub fn definition(self) -> ToolDefinition {
        let allow_unknown = self.tool.allow_unknown_args();
        let generated = &T::GENERATED_CHECK;
        match schemas::<T::Args, T::Output>(allow_unknown, generated, T::serde_names) {
            Ok(schemas) => self.build(schemas),
            Err(error) => {
                // The definition carries the bridge error; registering it reports that.
                let (name, description) = (self.tool.name().to_owned(), self.tool.description());
                ToolDefinition::invalid(name, description.to_owned(), error)
            }
        }
    }

    /// The definition from the types' schemas (never through `T::definition`, which comes
    /// back here when `#[tool]` keys set cards).
    fn build(self, schemas: Arc<TypedSchemas>) -> ToolDefinition {
        let has_result_card = self.result.is_some();
        let mut definition = match self.result {
            // The card is drawn from the typed output as the body returns it.
            Some(card) => build_carded(self.tool, Arc::clone(&schemas), card),
            None => build(self.tool, Arc::clone(&schemas)),
        };
        // Only arguments that validate are decoded: their depth is the schema's.
        let decode = {
            let compiled = Arc::clone(&schemas.args);
            move |args: &Value| validate_and_decode::<T::Args>(&compiled, args).ok()
        };
        if let Some(render) = self.render {
            let decode = decode.clone();
            definition.output.render = Arc::new(move |args: &Value, value: &Value| {
                // The call succeeded, so both decode; anything else falls back to the JSON text.
                decode(args)
                    .and_then(|args| render(&args, value))
                    .unwrap_or_else(|| render_default(value))
            });
        }
        if let Some(card) = self.call {
            definition =
                definition.present_call(Arc::new(move |args: &Value| card(&decode(args)?)));
        }
        if has_result_card {
            definition = definition.present_result(Arc::new(
                |_args: &Value, result: &crate::present::ResultSummary| {
                    let meta = result.meta.as_ref().filter(|_| !result.is_error)?;
                    // Refuses meta past the decode depth before serde recurses.
                    crate::json::decode::<ToolResultView>(meta).ok()
                },
            ));
        }
        definition
    }
}

/// A succeeded call's value as the typed output, when it decodes (never past the decode depth).
fn decode_output<O: DeserializeOwned>(value: &Value) -> Option<O> {
    crate::json::decode(value).ok()
}

impl<T: Tool> From<Carded<T>> for ToolDefinition {
    fn from(carded: Carded<T>) -> Self {
        carded.definition()
    }
}

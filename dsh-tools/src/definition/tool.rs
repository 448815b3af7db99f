//! `ToolDefinition`: the model-facing schema plus the host-only parts (spec §4.1): the body,
//! its timeout, the concurrency classifier, the finalizer, the presenters, and what approvals,
//! tasks, deferral, namespaces and Code Mode read of it; its constructors, builders and
//! accessors.

use super::hints::ToolHints;
use super::namespace::Namespace;
use super::output::OutputDecl;
use crate::call::{BoxFuture, ToolExecution, ToolExecutionResult, ToolRunContext};
use crate::content::ContentBlock;
use crate::error::ToolError;
use crate::present::{CallPresenter, ResultPresenter};
use serde_json::{Value, json};
use std::fmt;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

/// How long a body that ignores its cancelled signal is awaited after its timeout before it is
/// dropped: 5 s.
pub const DEFAULT_TIMEOUT_GRACE: Duration = Duration::from_secs(5);

/// The tool body: `(arguments, context) -> value`.
pub type ExecuteFn =
    Arc<dyn Fn(Arc<Value>, ToolRunContext) -> BoxFuture<Result<Value, ToolError>> + Send + Sync>;
/// Whether a call may run in parallel with its siblings, from its raw arguments.
pub type ClassifierFn = Arc<dyn Fn(&Value) -> bool + Send + Sync>;
/// What a Code Mode program receives for a tool's value, when not the value itself (see
/// [`ToolDefinition::program_value`]); `None` hands over the value.
pub type ProgramValueFn = Arc<dyn Fn(&Value) -> Option<Value> + Send + Sync>;
/// Rewrites the final content of any outcome, once per call; `None` keeps it.
pub type FinalizeFn =
    Arc<dyn Fn(&ToolExecution, &ToolExecutionResult) -> Option<Vec<ContentBlock>> + Send + Sync>;

/// A tool: what the model sees (`name`, `description`, `parameters`) and what only the host
/// sees (output declaration, body, timeout, concurrency classifier, finalizer, presenters).
///
/// Raw definitions take their arguments as a `serde_json::Value` and validate them themselves
/// (the registry does not); `#[tool]` builds typed ones.
///
/// ```
/// use dsh_tools::{OutputDecl, ToolDefinition};
/// use serde_json::json;
///
/// let echo = ToolDefinition::new(
///     "echo",
///     "echo arguments back",
///     json!({"type": "object", "properties": {"text": {"type": "string"}}}),
///     OutputDecl::text(),
///     |args, _ctx| async move { Ok(args.get("text").cloned().unwrap_or(json!(""))) },
/// )
/// .concurrency_safe(|_| true);
/// assert_eq!(echo.name(), "echo");
/// ```
#[derive(Clone)]
pub struct ToolDefinition {
    pub(crate) name: String,
    pub(crate) description: String,
    pub(crate) title: Option<String>,
    pub(crate) hints: ToolHints,
    pub(crate) parameters: Arc<Value>,
    pub(crate) output: OutputDecl,
    pub(crate) execute: ExecuteFn,
    pub(crate) timeout: Option<Duration>,
    pub(crate) timeout_grace: Duration,
    pub(crate) concurrency_safe: Option<ClassifierFn>,
    pub(crate) finalize_content: Option<FinalizeFn>,
    pub(crate) present_call: Option<CallPresenter>,
    pub(crate) present_result: Option<ResultPresenter>,
    /// Why a typed tool's schemas could not be bridged: registration fails with it.
    pub(crate) invalid: Option<Arc<crate::schema::bridge::BridgeError>>,
    /// The parameters came from the bridge, so they are in the subset (adapters skip the check).
    pub(crate) bridged: bool,
    /// Left out of a provider export that cannot express it, instead of failing the export.
    pub(crate) skip_unexportable: bool,
    /// A typed tool's arguments validator.
    pub(crate) args: Option<Arc<crate::schema::fast::ArgsValidator>>,
    /// The key an "always" answer to an `ask` is remembered under.
    pub(crate) grant_policy: crate::call::GrantPolicy,
    /// Whether an approval may run the call with edited arguments.
    pub(crate) editable_arguments: bool,
    /// Whether the tool is left out of the tool list until a search loads it (`None`: the
    /// scope's [`DeferRule`](crate::registry::DeferRule)s decide).
    pub(crate) defer_loading: Option<bool>,
    /// The group the tool belongs to.
    pub(crate) namespace: Option<Arc<Namespace>>,
    /// The parameters and output Code Mode's SDK shows, when not the ones validated with.
    pub(crate) sdk: Option<Arc<(Value, Value)>>,
    /// What a Code Mode program receives for the value, when not the value.
    pub(crate) program_value: Option<ProgramValueFn>,
    /// Whether calls may run as tasks.
    pub(crate) task_support: crate::call::TaskSupport,
}

impl fmt::Debug for ToolDefinition {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ToolDefinition")
            .field("name", &self.name)
            .field("description", &self.description)
            .field("title", &self.title)
            .field("hints", &self.hints)
            .field("parameters", &self.parameters)
            .field("output", &self.output)
            .field("timeout", &self.timeout)
            .finish_non_exhaustive()
    }
}

impl Drop for ToolDefinition {
    /// Parameters may be nested deeply (spec §5.5.2: 5000-deep parameters work); serde_json's
    /// own `Drop` recurses once per level. The last clone frees them iteratively.
    fn drop(&mut self) {
        if let Some(parameters) = Arc::get_mut(&mut self.parameters) {
            crate::json::free(std::mem::take(parameters));
        }
    }
}

impl ToolDefinition {
    /// A raw definition: JSON Schema `parameters` (sent to the model as is), an output
    /// declaration, and a body.
    pub fn new<F, Fut>(
        name: impl Into<String>,
        description: impl Into<String>,
        parameters: Value,
        output: OutputDecl,
        execute: F,
    ) -> Self
    where
        F: Fn(Arc<Value>, ToolRunContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Value, ToolError>> + Send + 'static,
    {
        Self::from_parts(
            name.into(),
            description.into(),
            Arc::new(parameters),
            output,
            execute,
        )
    }

    /// [`new`](Self::new) with shared parameters (typed tools share their bridged schema).
    pub(crate) fn from_parts<F, Fut>(
        name: String,
        description: String,
        parameters: Arc<Value>,
        output: OutputDecl,
        execute: F,
    ) -> Self
    where
        F: Fn(Arc<Value>, ToolRunContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Value, ToolError>> + Send + 'static,
    {
        Self::from_execute(
            name,
            description,
            parameters,
            output,
            Arc::new(move |args, ctx| Box::pin(execute(args, ctx))),
        )
    }

    /// [`from_parts`](Self::from_parts) with the body already boxed (no generic instantiation).
    pub(crate) fn from_execute(
        name: String,
        description: String,
        parameters: Arc<Value>,
        output: OutputDecl,
        execute: ExecuteFn,
    ) -> Self {
        Self {
            name,
            description,
            title: None,
            hints: ToolHints::new(),
            parameters,
            output,
            execute,
            timeout: None,
            timeout_grace: DEFAULT_TIMEOUT_GRACE,
            concurrency_safe: None,
            finalize_content: None,
            present_call: None,
            present_result: None,
            invalid: None,
            bridged: false,
            skip_unexportable: false,
            args: None,
            grant_policy: crate::call::GrantPolicy::default(),
            editable_arguments: false,
            defer_loading: None,
            namespace: None,
            sdk: None,
            program_value: None,
            task_support: crate::call::TaskSupport::Forbidden,
        }
    }

    /// A typed definition whose schemas could not be bridged: registering it fails with
    /// `error`, and its body (never reachable through a registry) fails with it too.
    pub(crate) fn invalid(
        name: String,
        description: String,
        error: crate::schema::bridge::BridgeError,
    ) -> Self {
        let message = error.to_string();
        let mut definition = Self::new(
            name,
            description,
            json!({"type": "object"}),
            OutputDecl::json(json!({})),
            move |_, _| std::future::ready(Err(ToolError::new(message.clone()))),
        );
        definition.invalid = Some(Arc::new(error));
        definition
    }

    /// Why this typed definition cannot be registered: its types' schemas could not be bridged
    /// into the subset (see [`Tool::definition`](crate::Tool::definition)).
    pub fn schema_error(&self) -> Option<&crate::schema::bridge::BridgeError> {
        self.invalid.as_deref()
    }

    /// Presentation metadata computed for top-level successes: `(arguments, value) -> meta`
    /// (the same as [`OutputDecl::presentation_meta`], for definitions built elsewhere, such as
    /// a `#[tool]`'s).
    pub fn presentation_meta(
        mut self,
        meta: impl Fn(&Value, &Value) -> Value + Send + Sync + 'static,
    ) -> Self {
        self.output.presentation_meta = Some(Arc::new(meta));
        self
    }

    /// The same tool under another model-facing name.
    /// Two instances of one stateful tool (one per workspace, say) coexist this way.
    ///
    /// ```
    /// use dsh_tools::{Registry, State, ToolDefinition, ToolError, tool};
    ///
    /// /// Reads a file under the workspace root.
    /// #[tool]
    /// async fn read(State(root): State<String>, /** The path */ path: String) -> Result<String, ToolError> {
    ///     Ok(format!("{root}/{path}"))
    /// }
    ///
    /// let registry = Registry::new();
    /// registry.register(ToolDefinition::from(Read::with("/srv/docs".into())).named("read_docs"))?;
    /// registry.register(ToolDefinition::from(Read::with("/srv/code".into())).named("read_code"))?;
    /// assert_eq!(registry.tools(None).len(), 2);
    /// # Ok::<(), dsh_tools::registry::RegistrationError>(())
    /// ```
    pub fn named(mut self, name: impl Into<String>) -> Self {
        self.name = name.into();
        self
    }

    /// A human-readable title for user interfaces (the model reads `name` and `description`).
    pub fn title(mut self, title: impl Into<String>) -> Self {
        self.title = Some(title.into());
        self
    }

    /// The parameters and output schemas Code Mode's SDK renders for this tool, when they are
    /// not the ones it validates with: an imported tool's remote schemas as
    /// [`code::foreign_tool`](crate::code::foreign_tool) shows them (formats and examples as
    /// doc tags, what the subset cannot say left out), while the call is checked against the
    /// exact conversion. Both must be in the subset to render (else `unknown`, as for any
    /// schema).
    pub fn sdk_schemas(mut self, parameters: Value, output: Value) -> Self {
        self.sdk = Some(Arc::new((parameters, output)));
        self
    }

    /// What a `run_code` program receives for this tool's value, when it is not the value
    /// itself: `view` returns it, or `None` to hand over the value. The pipeline, the model, the
    /// observers and any MCP client still see the value; only the program's `await` resolves to
    /// the view. An imported MCP tool that declares an `outputSchema` hands a program its
    /// structured value, as the same tool run in-process would (issue 39.8); say what the
    /// program receives in [`sdk_schemas`](Self::sdk_schemas)' output.
    pub fn program_value(
        mut self,
        view: impl Fn(&Value) -> Option<Value> + Send + Sync + 'static,
    ) -> Self {
        self.program_value = Some(Arc::new(view));
        self
    }

    /// The view set by [`program_value`](Self::program_value).
    pub fn program_view(&self) -> Option<&ProgramValueFn> {
        self.program_value.as_ref()
    }

    /// The parameters schema Code Mode's SDK renders: [`sdk_schemas`](Self::sdk_schemas)'
    /// when set, else [`parameters`](Self::parameters).
    pub fn sdk_parameters(&self) -> &Value {
        self.sdk.as_ref().map_or(&self.parameters, |s| &s.0)
    }

    /// The output schema Code Mode's SDK renders: [`sdk_schemas`](Self::sdk_schemas)' when
    /// set, else the output declaration's.
    pub fn sdk_output(&self) -> &Value {
        self.sdk.as_ref().map_or(self.output.schema(), |s| &s.1)
    }

    /// Behaviour hints ([`ToolHints`]).
    pub fn hints(mut self, hints: ToolHints) -> Self {
        self.hints = hints;
        self
    }

    /// Whether a provider export whose dialect cannot express this tool's parameters leaves the
    /// tool out (reported in [`ProviderTools::skipped`](crate::provider::ProviderTools::skipped))
    /// instead of failing for every tool. Off by default: a tool you wrote should be fixed, not
    /// hidden. `McpImport` (feature `mcp`) turns it on for the tools it imports, whose schemas
    /// their server decides.
    pub fn skip_unexportable(mut self, skip: bool) -> Self {
        self.skip_unexportable = skip;
        self
    }

    /// Which remembered approval answers this tool's calls may get: the key an "always allow"
    /// or "always reject" answer to an `ask` is stored under
    /// ([`GrantPolicy::ToolAndAgent`](crate::GrantPolicy::ToolAndAgent) by default;
    /// [`GrantPolicy::Never`](crate::GrantPolicy::Never) for a tool whose every call deserves a
    /// look).
    ///
    /// ```
    /// use dsh_tools::{GrantPolicy, OutputDecl, ToolDefinition};
    /// use serde_json::json;
    ///
    /// let shell = ToolDefinition::new("shell", "runs a command", json!({"type": "object"}),
    ///     OutputDecl::text(), |_, _| async { Ok(json!("")) })
    ///     .grant_policy(GrantPolicy::Arguments(vec!["/command".into()]));
    /// assert_eq!(shell.tool_grant_policy(), &GrantPolicy::Arguments(vec!["/command".into()]));
    /// ```
    pub fn grant_policy(mut self, policy: crate::call::GrantPolicy) -> Self {
        self.grant_policy = policy;
        self
    }

    /// Whether the tool's calls may run as tasks, detached and collected later
    /// ([`Tasks`](crate::task::Tasks); MCP's `execution.taskSupport`). Forbidden by default.
    ///
    /// ```
    /// use dsh_tools::task::TaskSupport;
    /// use dsh_tools::{OutputDecl, ToolDefinition};
    /// use serde_json::json;
    ///
    /// let build = ToolDefinition::new("build", "Builds the project", json!({"type": "object"}),
    ///     OutputDecl::text(), |_, _| async { Ok(json!("built")) })
    ///     .task_support(TaskSupport::Optional);
    /// assert_eq!(build.tool_task_support(), TaskSupport::Optional);
    /// ```
    pub fn task_support(mut self, support: crate::call::TaskSupport) -> Self {
        self.task_support = support;
        self
    }

    /// Whether an approval may run this tool's calls with edited arguments
    /// ([`ApprovalOutcome::AllowedWithArgs`](crate::ApprovalOutcome::AllowedWithArgs)): off by
    /// default. The edit is validated against the parameters again.
    pub fn editable_arguments(mut self, editable: bool) -> Self {
        self.editable_arguments = editable;
        self
    }

    /// Leaves the tool out of the tool list sent to the model until a search finds it
    /// (`true`), or keeps it in whatever the scope's [`DeferRule`](crate::registry::DeferRule)s
    /// say (`false`). A deferred tool is registered, restricted, guarded and callable like any
    /// other: only what the model is shown changes. Unset, the scope's rules decide.
    ///
    /// ```
    /// use dsh_tools::{OutputDecl, ToolDefinition};
    /// use serde_json::json;
    ///
    /// let tool = ToolDefinition::new("archive", "Archives a project", json!({"type": "object"}),
    ///     OutputDecl::text(), |_, _| async { Ok(json!("done")) })
    ///     .defer_loading(true);
    /// assert_eq!(tool.deferral(), Some(true));
    /// ```
    pub fn defer_loading(mut self, deferred: bool) -> Self {
        self.defer_loading = Some(deferred);
        self
    }

    /// What [`defer_loading`](Self::defer_loading) set, if anything.
    pub fn deferral(&self) -> Option<bool> {
        self.defer_loading
    }

    /// Puts the tool in `namespace`.
    pub fn namespace(mut self, namespace: Namespace) -> Self {
        self.namespace = Some(Arc::new(namespace));
        self
    }

    /// The tool's namespace, if it has one.
    pub fn tool_namespace(&self) -> Option<&Namespace> {
        self.namespace.as_deref()
    }

    /// The [`grant_policy`](Self::grant_policy).
    pub fn tool_grant_policy(&self) -> &crate::call::GrantPolicy {
        &self.grant_policy
    }

    /// The [`task_support`](Self::task_support).
    pub fn tool_task_support(&self) -> crate::call::TaskSupport {
        self.task_support
    }

    /// Whether approvals may edit this tool's arguments.
    pub fn accepts_edited_arguments(&self) -> bool {
        self.editable_arguments
    }

    /// A timeout, enforced on every call with no extra setup. When it passes, the body's signal
    /// is cancelled (only the body's: the caller's turn goes on); a body that settles within the
    /// [grace period](Self::timeout_grace) is awaited, one that ignores its signal is dropped
    /// after it. Either way the call settles as `TOOL_TIMEOUT` (`tool call timed out after
    /// <ms>ms`).
    ///
    /// In Rust a dropped future can do nothing more, so the call is over; but work the body
    /// handed to `tokio::spawn` or a thread keeps running: pass such tasks the signal
    /// (`ctx.signal()`) or abort their handles when it fires.
    ///
    /// The deadline is checked whenever the body yields (returns `Pending`): a body that blocks
    /// its thread (`std::thread::sleep`, blocking I/O, a long computation) cannot be preempted,
    /// and one that settles past its deadline without yielding keeps its result, with a `warn`
    /// event naming the tool and the overrun. Run blocking work where the deadline applies to
    /// the caller: a `#[tool]` on a plain `fn` runs on Tokio's blocking pool, or hand it to
    /// `tokio::task::spawn_blocking` yourself; the thread finishes its work, the call settles as
    /// `TOOL_TIMEOUT` at the deadline. The
    /// [`timeout`](crate::wrappers::timeout) wrapper adds the same deadline as an around-dispatch
    /// wrapper (visible to wrappers outside it).
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }

    /// How long a body that ignores its cancelled signal is awaited after the
    /// [timeout](Self::timeout) before it is dropped (default [`DEFAULT_TIMEOUT_GRACE`]).
    pub fn timeout_grace(mut self, grace: Duration) -> Self {
        self.timeout_grace = grace;
        self
    }

    /// A concurrency classifier: exactly `true` lets the call run in parallel.
    pub fn concurrency_safe(
        mut self,
        classifier: impl Fn(&Value) -> bool + Send + Sync + 'static,
    ) -> Self {
        self.concurrency_safe = Some(Arc::new(classifier));
        self
    }

    /// A final content transform, applied once to every outcome.
    pub fn finalize_content(
        mut self,
        finalize: impl Fn(&ToolExecution, &ToolExecutionResult) -> Option<Vec<ContentBlock>>
        + Send
        + Sync
        + 'static,
    ) -> Self {
        self.finalize_content = Some(Arc::new(finalize));
        self
    }

    /// A call presenter (spec §9).
    pub fn present_call(mut self, presenter: CallPresenter) -> Self {
        self.present_call = Some(presenter);
        self
    }

    /// A result presenter (spec §9).
    pub fn present_result(mut self, presenter: ResultPresenter) -> Self {
        self.present_result = Some(presenter);
        self
    }

    /// The name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The model-facing description.
    pub fn description(&self) -> &str {
        &self.description
    }

    /// The human-readable title, if one was set.
    pub fn tool_title(&self) -> Option<&str> {
        self.title.as_deref()
    }

    /// The behaviour hints.
    pub fn tool_hints(&self) -> ToolHints {
        self.hints
    }

    /// A typed tool's arguments validator (`None` for a raw definition): its
    /// [`fast_path`](crate::schema::fast::ArgsValidator::fast_path) says whether generated code
    /// decides valid arguments.
    pub fn args_validator(&self) -> Option<&crate::schema::fast::ArgsValidator> {
        self.args.as_deref()
    }

    /// The model-facing parameters schema.
    pub fn parameters(&self) -> &Value {
        &self.parameters
    }

    /// The output declaration.
    pub fn output(&self) -> &OutputDecl {
        &self.output
    }

    /// The grace period after the timeout.
    pub fn timeout_grace_duration(&self) -> Duration {
        self.timeout_grace
    }

    /// The declared timeout.
    pub fn timeout_duration(&self) -> Option<Duration> {
        self.timeout
    }

    /// The concurrency classifier.
    pub fn classifier(&self) -> Option<&ClassifierFn> {
        self.concurrency_safe.as_ref()
    }

    /// The call presenter.
    pub fn call_presenter(&self) -> Option<&CallPresenter> {
        self.present_call.as_ref()
    }

    /// The result presenter.
    pub fn result_presenter(&self) -> Option<&ResultPresenter> {
        self.present_result.as_ref()
    }
}

/// A `warn` event for a body that settled `overrun` past its `limit` in one poll that began
/// before the deadline: it blocked its thread, so the deadline could not interrupt it.
pub(crate) fn warn_blocked_past(name: &str, limit: Duration, overrun: Duration) {
    tracing::warn!(
        tool = name,
        limit_ms = u64::try_from(limit.as_millis()).unwrap_or(u64::MAX),
        overrun_ms = u64::try_from(overrun.as_millis()).unwrap_or(u64::MAX),
        "tool `{name}` settled {}ms past its {}ms timeout: its body blocked the thread, so the \
         deadline could not interrupt it (the result is kept); run blocking work on the blocking \
         pool (`#[tool]` on a plain `fn`, or `tokio::task::spawn_blocking`)",
        overrun.as_millis(),
        limit.as_millis(),
    );
}

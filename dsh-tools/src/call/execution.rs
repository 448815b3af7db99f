//! What a call is: the caller's input, the pipeline's view of it, and the body's context.

use super::caller::Caller;
use crate::content::{ContentBlock, UserMessage};
use serde_json::Value;
use std::fmt;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use tokio_util::sync::CancellationToken;

/// An agent scope's key.
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct AgentId(Arc<str>);

impl AgentId {
    /// An agent key.
    pub fn new(id: impl AsRef<str>) -> Self {
        Self(Arc::from(id.as_ref()))
    }

    /// The key as text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for AgentId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "AgentId({:?})", &*self.0)
    }
}

/// An agent id is its string in JSON (pending approvals and grants are stored).
impl serde::Serialize for AgentId {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.0)
    }
}

impl<'de> serde::Deserialize<'de> for AgentId {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let id = <std::borrow::Cow<'de, str>>::deserialize(deserializer)?;
        Ok(Self::new(id))
    }
}

impl fmt::Display for AgentId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl From<&str> for AgentId {
    fn from(s: &str) -> Self {
        Self::new(s)
    }
}

/// Identifies one execution: unique, unforgeable (no public constructor), equality only. A
/// nested call passes its parent's token as `parent`.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct ExecutionToken(u64);

impl ExecutionToken {
    pub(crate) fn mint() -> Self {
        static NEXT: AtomicU64 = AtomicU64::new(1);
        Self(NEXT.fetch_add(1, Ordering::Relaxed))
    }
}

impl fmt::Debug for ExecutionToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ExecutionToken(#{})", self.0)
    }
}

/// A call as the caller hands it to the registry (spec §6.1). Taken by value: every field is
/// read once.
///
/// ```
/// use dsh_tools::ToolExecutionInput;
/// use serde_json::json;
/// use tokio_util::sync::CancellationToken;
///
/// let input = ToolExecutionInput::new("call_1", "read_file", json!({"path": "/tmp/a"}), CancellationToken::new())
///     .agent("main");
/// assert_eq!(input.name, "read_file");
/// ```
#[derive(Debug)]
pub struct ToolExecutionInput {
    /// The model's call id.
    pub call_id: String,
    /// The id of the top-level call this one is nested in (defaults to `call_id`).
    pub root_call_id: Option<String>,
    /// The tool's name.
    pub name: String,
    /// The arguments, already parsed (must be lossless JSON).
    pub arguments: Value,
    /// The agent whose scope resolves the tool.
    pub agent: Option<AgentId>,
    /// The execution this call is nested in.
    pub parent: Option<ExecutionToken>,
    /// The caller's cancellation signal.
    pub signal: CancellationToken,
    /// Where the body's [`report_progress`](ToolRunContext::report_progress) goes (none: the
    /// reports are dropped).
    pub progress: Option<ProgressSink>,
    /// Who asked for the call, as a transport authenticated them (none: nobody was).
    pub caller: Option<Arc<Caller>>,
    /// The span the call's `execute_tool` span is a child of (none: the span current where
    /// the call is made). [`ToolRunContext::nested`] sets it to the outer call's span.
    pub span_parent: Option<tracing::Span>,
}

impl ToolExecutionInput {
    /// A top-level call without an agent.
    pub fn new(
        call_id: impl Into<String>,
        name: impl Into<String>,
        arguments: Value,
        signal: CancellationToken,
    ) -> Self {
        Self {
            call_id: call_id.into(),
            root_call_id: None,
            name: name.into(),
            arguments,
            agent: None,
            parent: None,
            signal,
            progress: None,
            caller: None,
            span_parent: None,
        }
    }

    /// Makes the call's span a child of `span` instead of the span current where the call is
    /// made (see [`telemetry`](crate::telemetry)).
    pub fn span_parent(mut self, span: tracing::Span) -> Self {
        self.span_parent = Some(span);
        self
    }

    /// Makes the call on behalf of `caller`, for hooks and guards to decide on.
    pub fn caller(mut self, caller: impl Into<Arc<Caller>>) -> Self {
        self.caller = Some(caller.into());
        self
    }

    /// Sends the body's progress reports to `sink`.
    pub fn progress(mut self, sink: ProgressSink) -> Self {
        self.progress = Some(sink);
        self
    }

    /// Routes the call through `agent`'s scope.
    pub fn agent(mut self, agent: impl Into<AgentId>) -> Self {
        self.agent = Some(agent.into());
        self
    }

    /// Marks the call as nested in `parent`.
    pub fn parent(mut self, parent: ExecutionToken) -> Self {
        self.parent = Some(parent);
        self
    }

    /// Sets the root call id.
    pub fn root_call_id(mut self, id: impl Into<String>) -> Self {
        self.root_call_id = Some(id.into());
        self
    }
}

/// One progress report of a running tool: `progress` of `total` (when known) units done.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Progress {
    /// Units done so far (should increase with each report).
    pub progress: f64,
    /// Units in all, when known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub total: Option<f64>,
    /// What is happening, for a person.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

/// Receives a call's progress reports, in the order the body made them. It runs on the body's
/// task, so it must be quick (send to a channel); a panic in it is logged and contained.
///
/// ```
/// use dsh_tools::pipeline::{Progress, ProgressSink};
/// use std::sync::{Arc, Mutex};
///
/// let seen = Arc::new(Mutex::new(Vec::new()));
/// let s = seen.clone();
/// let sink = ProgressSink::new(move |p: Progress| s.lock().unwrap().push(p.progress));
/// sink.report(Progress { progress: 1.0, total: Some(2.0), message: None });
/// assert_eq!(*seen.lock().unwrap(), [1.0]);
/// ```
#[derive(Clone)]
pub struct ProgressSink(Arc<dyn Fn(Progress) + Send + Sync>);

impl ProgressSink {
    /// A sink calling `f` with each report.
    pub fn new(f: impl Fn(Progress) + Send + Sync + 'static) -> Self {
        Self(Arc::new(f))
    }

    /// Delivers one report (a panicking sink is logged, never propagated).
    pub fn report(&self, progress: Progress) {
        let sink = &self.0;
        if let Err(payload) =
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| sink(progress)))
        {
            crate::error::drop_panic_payload(payload);
            tracing::warn!("a progress sink panicked; the report was dropped");
        }
    }
}

impl fmt::Debug for ProgressSink {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ProgressSink")
    }
}

/// A read-only cancellation signal (spec §8.1): observe it, wait for it, or derive a child
/// token from it; it can never cancel the caller's call or turn.
#[derive(Clone)]
pub struct Signal(CancellationToken);

impl Signal {
    pub(crate) fn new(token: CancellationToken) -> Self {
        Self(token)
    }

    /// The token itself (the pipeline's own use only: never handed out).
    pub(crate) fn token(&self) -> &CancellationToken {
        &self.0
    }

    /// Whether it fired.
    pub fn is_cancelled(&self) -> bool {
        self.0.is_cancelled()
    }

    /// Completes when it fires.
    pub fn cancelled(&self) -> tokio_util::sync::WaitForCancellationFuture<'_> {
        self.0.cancelled()
    }

    /// Completes when it fires (owning the signal).
    pub fn cancelled_owned(self) -> tokio_util::sync::WaitForCancellationFutureOwned {
        self.0.cancelled_owned()
    }

    /// A token that fires when this signal fires; cancelling it affects only itself and its
    /// children (hand it to nested calls and to APIs that take a `CancellationToken`).
    pub fn child_token(&self) -> CancellationToken {
        self.0.child_token()
    }
}

impl fmt::Debug for Signal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Signal")
            .field("cancelled", &self.is_cancelled())
            .finish()
    }
}

/// The pipeline's immutable view of a call (spec §6.1): the input with the arguments
/// snapshotted (absent when they were not lossless JSON), `root_call_id` defaulted, and a fresh
/// [`ExecutionToken`].
#[derive(Debug)]
pub struct ToolExecution {
    pub(crate) call_id: String,
    /// `None` when it is the call id itself.
    pub(crate) root_call_id: Option<String>,
    pub(crate) name: String,
    pub(crate) arguments: Option<Arc<Value>>,
    pub(crate) agent: Option<AgentId>,
    pub(crate) parent: Option<ExecutionToken>,
    pub(crate) token: ExecutionToken,
    pub(crate) signal: Signal,
    pub(crate) progress: Option<ProgressSink>,
    pub(crate) caller: Option<Arc<Caller>>,
    /// The call's `execute_tool` span (disabled when no subscriber records it).
    pub(crate) span: tracing::Span,
    /// What the body writes (deferred contexts, the turn mark) and whether it was invoked.
    pub(crate) run: RunState,
}

impl ToolExecution {
    /// Gives the call `arguments` in place of its snapshot (an approval edited them), before
    /// any body ran: in place when nothing else holds the execution, else as a copy of it with
    /// a fresh run state (nothing has written to it yet).
    pub(crate) fn replace_arguments(exec: &mut Arc<Self>, arguments: Value) {
        let arguments = Some(Arc::new(arguments));
        if let Some(only) = Arc::get_mut(exec) {
            if let Some(old) =
                std::mem::replace(&mut only.arguments, arguments).and_then(Arc::into_inner)
            {
                crate::json::free(old);
            }
            return;
        }
        *exec = Arc::new(Self {
            call_id: exec.call_id.clone(),
            root_call_id: exec.root_call_id.clone(),
            name: exec.name.clone(),
            arguments,
            agent: exec.agent.clone(),
            parent: exec.parent,
            token: exec.token,
            signal: exec.signal.clone(),
            progress: exec.progress.clone(),
            caller: exec.caller.clone(),
            span: exec.span.clone(),
            run: RunState::default(),
        });
    }

    /// The model's call id.
    pub fn call_id(&self) -> &str {
        &self.call_id
    }

    /// The top-level call id.
    pub fn root_call_id(&self) -> &str {
        self.root_call_id.as_deref().unwrap_or(&self.call_id)
    }

    /// The tool's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The call's `execute_tool` span (see [`telemetry`](crate::telemetry)): the parent of
    /// whatever a hook or wrapper traces about the call. Disabled when no subscriber records
    /// it.
    pub fn span(&self) -> &tracing::Span {
        &self.span
    }

    /// The snapshotted arguments (absent when the caller's were not lossless JSON).
    pub fn arguments(&self) -> Option<&Value> {
        self.arguments.as_deref()
    }

    /// The snapshotted arguments, shared.
    pub fn arguments_arc(&self) -> Option<&Arc<Value>> {
        self.arguments.as_ref()
    }

    /// The agent scope.
    pub fn agent(&self) -> Option<&AgentId> {
        self.agent.as_ref()
    }

    /// Who asked for the call, when a transport authenticated them.
    pub fn caller(&self) -> Option<&Caller> {
        self.caller.as_deref()
    }

    /// The caller, shared (to hand on to calls this one makes).
    pub fn caller_arc(&self) -> Option<&Arc<Caller>> {
        self.caller.as_ref()
    }

    /// The execution this call is nested in.
    pub fn parent(&self) -> Option<ExecutionToken> {
        self.parent
    }

    /// This execution's token.
    pub fn token(&self) -> ExecutionToken {
        self.token
    }

    /// The caller's cancellation signal (read-only).
    pub fn signal(&self) -> &Signal {
        &self.signal
    }
}

impl Drop for ToolExecution {
    /// Frees the arguments without recursion when they are nested deeply: they come from the
    /// model, and serde_json's own `Drop` recurses once per level.
    fn drop(&mut self) {
        if let Some(arguments) = self.arguments.take().and_then(Arc::into_inner) {
            crate::json::free(arguments);
        }
    }
}

/// Per-execution state the body writes: deferred contexts and the turn-conclusion mark.
#[derive(Debug, Default)]
pub(crate) struct RunState {
    pub(crate) deferred: Mutex<Vec<UserMessage>>,
    /// Content blocks the current body invocation attached ([`ToolRunContext::attach`]).
    pub(crate) attached: Mutex<Vec<ContentBlock>>,
    pub(crate) concluded: AtomicBool,
    pub(crate) body_invoked: AtomicBool,
    /// Presentation metadata the body's typed result card computed from the typed output (used
    /// instead of the definition's `presentation_meta` projection when set).
    pub(crate) presentation: Mutex<Option<Value>>,
    /// Deferred mode: an `ask` in this call's program (Code Mode) is kept, not waited for.
    pub(crate) defers: AtomicBool,
    /// Set when a deferred `run_code` body ran its program: a wrapper that runs the body again
    /// must not run the program again (its calls would run twice).
    pub(crate) program_ran: AtomicBool,
    /// What a resumed `run_code` call's program replays (`run_code::replay::Replay`), and what a
    /// stopped one leaves (a `PendingProgram`). Type-erased: those types name this file's
    /// types, so this file cannot name theirs without a file cycle.
    pub(crate) replay: Mutex<Option<Box<dyn std::any::Any + Send>>>,
    pub(crate) stopped: Mutex<Option<Box<dyn std::any::Any + Send>>>,
}

impl RunState {
    pub(crate) fn take_deferred(&self) -> Vec<UserMessage> {
        std::mem::take(&mut *self.deferred.lock().unwrap_or_else(|e| e.into_inner()))
    }

    pub(crate) fn set_presentation(&self, meta: Value) {
        *self.presentation.lock().unwrap_or_else(|e| e.into_inner()) = Some(meta);
    }

    pub(crate) fn take_presentation(&self) -> Option<Value> {
        self.presentation
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take()
    }

    /// Hands `value` over through `slot` (see [`replay`](Self::replay)).
    pub(crate) fn put<T: Send + 'static>(
        slot: &Mutex<Option<Box<dyn std::any::Any + Send>>>,
        value: T,
    ) {
        *slot.lock().unwrap_or_else(|e| e.into_inner()) = Some(Box::new(value));
    }

    /// Takes what `slot` holds, if it is a `T`.
    pub(crate) fn take<T: 'static>(
        slot: &Mutex<Option<Box<dyn std::any::Any + Send>>>,
    ) -> Option<T> {
        let held = slot.lock().unwrap_or_else(|e| e.into_inner()).take()?;
        held.downcast::<T>().ok().map(|b| *b)
    }

    /// Puts the call in deferred mode (its program's asks are kept, not waited for).
    pub(crate) fn defer_asks(&self) {
        self.defers.store(true, Ordering::Release);
    }

    pub(crate) fn take_attached(&self) -> Vec<ContentBlock> {
        std::mem::take(&mut *self.attached.lock().unwrap_or_else(|e| e.into_inner()))
    }

    pub(crate) fn concluded(&self) -> bool {
        self.concluded.load(Ordering::Acquire)
    }

    pub(crate) fn body_invoked(&self) -> bool {
        self.body_invoked.load(Ordering::Acquire)
    }
}

/// What a tool body sees (spec §6.1): the execution, a cancellation signal that fires when the
/// caller *or* an around-dispatch wrapper cancels, and the turn controls.
#[derive(Clone)]
pub struct ToolRunContext {
    pub(crate) execution: Arc<ToolExecution>,
    pub(crate) signal: Signal,
    /// The registry running the call, seen from below it (the registry's shared state; read
    /// back by [`registry`](Self::registry), defined with the registry).
    pub(crate) host: Arc<dyn std::any::Any + Send + Sync>,
}

impl ToolRunContext {
    /// A context for a test: see `for_test` (defined with the registry, which it creates).
    pub(crate) fn for_test_in(
        name: &str,
        arguments: Value,
        signal: CancellationToken,
        host: Arc<dyn std::any::Any + Send + Sync>,
    ) -> Self {
        let arguments = crate::json::is_lossless(&arguments).then(|| Arc::new(arguments));
        let execution = Arc::new(ToolExecution {
            call_id: "test_call".to_owned(),
            root_call_id: None,
            name: name.to_owned(),
            arguments,
            agent: None,
            parent: None,
            token: ExecutionToken::mint(),
            signal: Signal::new(signal.clone()),
            progress: None,
            caller: None,
            span: tracing::Span::none(),
            run: RunState::default(),
        });
        Self {
            execution,
            signal: Signal::new(signal),
            host,
        }
    }
}

impl fmt::Debug for ToolRunContext {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ToolRunContext")
            .field("execution", &self.execution)
            .field("cancelled", &self.signal.is_cancelled())
            .finish()
    }
}

impl ToolRunContext {
    /// The execution.
    pub fn execution(&self) -> &ToolExecution {
        &self.execution
    }

    /// The body's cancellation signal: honour it, then return (the registry awaits the body).
    pub fn signal(&self) -> &Signal {
        &self.signal
    }

    /// Whether the call was cancelled.
    pub fn is_cancelled(&self) -> bool {
        self.signal.is_cancelled()
    }

    /// Attaches a user message to this call's result (spec §6.12), after the tool result.
    pub fn defer_context(&self, message: UserMessage) {
        self.execution
            .run
            .deferred
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(message);
    }

    /// Adds a content block (an image, audio, a resource) to this call's content, after what the
    /// output renders, without putting it in the value: the model reads the image while the
    /// structured value (and the logs, and `structuredContent` over MCP) stays small. Kept only
    /// when this invocation succeeds; a retried body starts with none.
    ///
    /// ```
    /// use dsh_tools::{ContentBlock, ToolError, ToolRunContext, testing, tool};
    /// use serde_json::json;
    ///
    /// #[derive(serde::Serialize, schemars::JsonSchema)]
    /// struct Shot {
    ///     width: u32,
    ///     height: u32,
    /// }
    ///
    /// /// Takes a screenshot.
    /// #[tool]
    /// async fn screenshot(_args: dsh_tools::NoArgs, ctx: ToolRunContext) -> Result<Shot, ToolError> {
    ///     ctx.attach(ContentBlock::image("iVBORw0KGgo=", "image/png")?);
    ///     Ok(Shot { width: 1, height: 1 })
    /// }
    ///
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// let result = testing::call(Screenshot, json!({})).await;
    /// assert_eq!(result.value(), Some(&json!({"width": 1, "height": 1})));
    /// let kinds: Vec<&str> = result.content().iter().map(|b| b.kind()).collect();
    /// assert_eq!(kinds, ["text", "image"]);
    /// # });
    /// ```
    pub fn attach(&self, block: ContentBlock) {
        self.execution
            .run
            .attached
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(block);
    }

    /// Marks the turn as concluded once this call succeeds (spec §6.12.3).
    pub fn conclude_turn(&self) {
        self.execution.run.concluded.store(true, Ordering::Release);
    }

    /// Reports progress to the caller's sink: `progress` of `total` units (when known), with an
    /// optional message. A no-op when the caller gave no sink.
    ///
    /// ```
    /// # use dsh_tools::{ToolRunContext, ToolError};
    /// async fn copy_files(files: Vec<String>, ctx: ToolRunContext) -> Result<(), ToolError> {
    ///     for (i, file) in files.iter().enumerate() {
    ///         ctx.report_progress(i as f64, Some(files.len() as f64), Some(file));
    ///         // ... copy it ...
    ///     }
    ///     Ok(())
    /// }
    /// ```
    pub fn report_progress(&self, progress: f64, total: Option<f64>, message: Option<&str>) {
        if let Some(sink) = &self.execution.progress {
            sink.report(Progress {
                progress,
                total,
                message: message.map(str::to_owned),
            });
        }
    }

    /// Whether progress reports go anywhere (skip expensive messages when not).
    pub fn reports_progress(&self) -> bool {
        self.execution.progress.is_some()
    }

    /// The input of a call nested in this one: its parent is this execution, its root call id,
    /// agent and progress sink are this call's, and its signal is a child of this body's signal.
    ///
    /// ```
    /// # use dsh_tools::{ToolRunContext, ToolError};
    /// # use serde_json::json;
    /// async fn outer(ctx: ToolRunContext) -> Result<String, ToolError> {
    ///     let input = ctx.nested("inner_1", "read_file", json!({"path": "/tmp/a"}));
    ///     let result = ctx.registry().execute(input).await;
    ///     Ok(result.text())
    /// }
    /// ```
    pub fn nested(
        &self,
        call_id: impl Into<String>,
        name: impl Into<String>,
        arguments: Value,
    ) -> ToolExecutionInput {
        let exec = &self.execution;
        ToolExecutionInput {
            call_id: call_id.into(),
            root_call_id: Some(exec.root_call_id().to_owned()),
            name: name.into(),
            arguments,
            agent: exec.agent.clone(),
            parent: Some(exec.token),
            signal: self.signal.child_token(),
            progress: exec.progress.clone(),
            caller: exec.caller.clone(),
            span_parent: Some(exec.span.clone()),
        }
    }
}

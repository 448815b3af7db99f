//! What a call is: the caller's input, the pipeline's view of it, and the body's context.

use crate::content::UserMessage;
use crate::registry::Registry;
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
        }
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
    /// What the body writes (deferred contexts, the turn mark) and whether it was invoked.
    pub(crate) run: RunState,
}

impl ToolExecution {
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
            free(arguments);
        }
    }
}

/// Drops a value of any depth on any stack: ordinary values as usual, deep ones iteratively.
pub(crate) fn free(value: Value) {
    if deeper_than(&value, 64) {
        crate::json::drop_deep(value);
    }
}

/// Whether `value` nests more than `limit` levels (a walk that recurses at most `limit` deep).
fn deeper_than(value: &Value, limit: u32) -> bool {
    match value {
        Value::Array(items) => limit == 0 || items.iter().any(|v| deeper_than(v, limit - 1)),
        Value::Object(map) => limit == 0 || map.values().any(|v| deeper_than(v, limit - 1)),
        _ => false,
    }
}

/// Per-execution state the body writes: deferred contexts and the turn-conclusion mark.
#[derive(Debug, Default)]
pub(crate) struct RunState {
    pub(crate) deferred: Mutex<Vec<UserMessage>>,
    pub(crate) concluded: AtomicBool,
    pub(crate) body_invoked: AtomicBool,
}

impl RunState {
    pub(crate) fn take_deferred(&self) -> Vec<UserMessage> {
        std::mem::take(&mut *self.deferred.lock().unwrap_or_else(|e| e.into_inner()))
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
    pub(crate) registry: Registry,
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

    /// Marks the turn as concluded once this call succeeds (spec §6.12.3).
    pub fn conclude_turn(&self) {
        self.execution.run.concluded.store(true, Ordering::Release);
    }

    /// The registry, for nested calls (pass [`ToolExecution::token`] as their `parent`).
    pub fn registry(&self) -> &Registry {
        &self.registry
    }
}

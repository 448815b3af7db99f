//! The hook kinds: middleware with an explicit `next` (pre-execute, around-dispatch,
//! post-execute), monotonic guards, and observe-only result listeners.
//!
//! Hooks run as nested middleware in registration order: the first registered is outermost. A
//! hook that returns without calling `next` short-circuits the rest. Any closure of the right
//! shape is a hook; panics inside a hook are contained and become the call's failure.

use super::caller::ScopeRules;
use super::decision::{PostToolDecision, PreToolDecision};
use super::execution::{Signal, ToolExecution};
use super::future::{BoxFuture, HookResult};
use super::result::ToolExecutionResult;
use crate::error::ToolError;
use futures_util::FutureExt;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

/// Runs `start` and the future it returns with panics turned into errors.
pub(crate) fn contained<T: Send + 'static>(
    start: impl FnOnce() -> BoxFuture<HookResult<T>>,
) -> BoxFuture<HookResult<T>> {
    match std::panic::catch_unwind(AssertUnwindSafe(start)) {
        Ok(fut) => Box::pin(AssertUnwindSafe(fut).catch_unwind().map(|r| match r {
            Ok(out) => out,
            Err(payload) => Err(ToolError::from_panic_payload(payload)),
        })),
        Err(payload) => Box::pin(std::future::ready(Err(ToolError::from_panic_payload(
            payload,
        )))),
    }
}

/// `tools/pre-execute`: allow, deny or ask (spec §6.3). Any `Fn(Arc<ToolExecution>, PreNext)`
/// returning a future of a decision is one; its `Fn` supertrait lets a closure passed to
/// [`Registry::on_pre_execute`](crate::Registry::on_pre_execute) go without type annotations:
///
/// ```
/// use dsh_tools::{PreToolDecision, Registry};
///
/// let registry = Registry::new();
/// registry.on_pre_execute(|exec, next| async move {
///     if exec.name() == "rm" {
///         return Ok(PreToolDecision::deny("not here"));
///     }
///     next.run().await
/// });
/// registry.guard(|exec| (exec.name() == "dd").then(|| "not here either".to_owned()));
/// ```
pub trait PreExecuteHook:
    Fn(Arc<ToolExecution>, PreNext) -> <Self as PreExecuteHook>::Decided + Send + Sync + 'static
{
    /// The future the hook returns.
    type Decided: Future<Output = HookResult<PreToolDecision>> + Send + 'static;
}

impl<F, Fut> PreExecuteHook for F
where
    F: Fn(Arc<ToolExecution>, PreNext) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = HookResult<PreToolDecision>> + Send + 'static,
{
    type Decided = Fut;
}

/// A pre-execute hook as the registry stores it.
pub(crate) trait DynPreHook: Send + Sync + 'static {
    fn pre_execute(
        &self,
        execution: Arc<ToolExecution>,
        next: PreNext,
    ) -> BoxFuture<HookResult<PreToolDecision>>;
}

impl<H: PreExecuteHook> DynPreHook for H {
    fn pre_execute(
        &self,
        execution: Arc<ToolExecution>,
        next: PreNext,
    ) -> BoxFuture<HookResult<PreToolDecision>> {
        Box::pin(self(execution, next))
    }
}

/// The rest of the pre-execute chain; its innermost default is `Allow`.
pub struct PreNext {
    pub(crate) hooks: Arc<[Arc<dyn DynPreHook>]>,
    pub(crate) index: usize,
    pub(crate) execution: Arc<ToolExecution>,
}

impl PreNext {
    /// Runs the inner hooks.
    pub fn run(self) -> BoxFuture<HookResult<PreToolDecision>> {
        let Some(hook) = self.hooks.get(self.index).cloned() else {
            return Box::pin(std::future::ready(Ok(PreToolDecision::Allow)));
        };
        let next = PreNext {
            hooks: self.hooks,
            index: self.index + 1,
            execution: Arc::clone(&self.execution),
        };
        contained(move || hook.pre_execute(self.execution, next))
    }
}

/// `tools/execute`: wraps dispatch (timeouts, retries, metrics, caching). It may replace the
/// body's cancellation signal (through [`ExecuteNext::run_with_signal`]) and nothing else.
pub trait ExecuteWrapper: Send + Sync + 'static {
    /// Returns a result, usually the one `next.run()` produced.
    fn execute(
        &self,
        call: ExecuteCall,
        next: ExecuteNext,
    ) -> BoxFuture<HookResult<ToolExecutionResult>>;
}

impl<F, Fut> ExecuteWrapper for F
where
    F: Fn(ExecuteCall, ExecuteNext) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = HookResult<ToolExecutionResult>> + Send + 'static,
{
    fn execute(
        &self,
        call: ExecuteCall,
        next: ExecuteNext,
    ) -> BoxFuture<HookResult<ToolExecutionResult>> {
        Box::pin(self(call, next))
    }
}

/// What a wrapper sees: the execution and the signal currently installed for the body.
#[derive(Clone, Debug)]
pub struct ExecuteCall {
    /// The execution (immutable).
    pub execution: Arc<ToolExecution>,
    /// The signal the body will get, fused with the caller's (the caller's unless an outer
    /// wrapper replaced it). Read-only: install a replacement with
    /// [`ExecuteNext::run_with_signal`].
    pub signal: Signal,
}

/// The innermost step of the around-dispatch chain, which the pipeline provides: it runs the
/// body with the signal installed and builds the result (never failing: failures are results).
pub(crate) trait Dispatch: Send + Sync + 'static {
    /// The execution being dispatched.
    fn execution(&self) -> &Arc<ToolExecution>;
    /// Runs the body under `signal` (`replaced`: a wrapper installed it); always `Ok`.
    fn dispatch(
        self: Arc<Self>,
        signal: CancellationToken,
        replaced: bool,
    ) -> BoxFuture<HookResult<ToolExecutionResult>>;
}

/// The rest of the around-dispatch chain; the innermost step is the core dispatch, which
/// never fails (its failures are results). Cloning it lets a wrapper run the rest more than
/// once (retries).
#[derive(Clone)]
pub struct ExecuteNext {
    pub(crate) wrappers: Arc<[Arc<dyn ExecuteWrapper>]>,
    pub(crate) index: usize,
    pub(crate) ctx: Arc<dyn Dispatch>,
    pub(crate) signal: CancellationToken,
    /// Whether a wrapper replaced the caller's signal.
    pub(crate) replaced: bool,
}

impl ExecuteNext {
    /// Runs the inner wrappers and the dispatch with the currently installed signal.
    pub fn run(self) -> BoxFuture<HookResult<ToolExecutionResult>> {
        let (signal, replaced) = (self.signal.clone(), self.replaced);
        self.step(signal, replaced)
    }

    /// Runs the inner wrappers and the dispatch with `signal` installed instead. The body still
    /// sees the caller's cancellation too; post-execute sees the caller's signal again.
    pub fn run_with_signal(
        self,
        signal: CancellationToken,
    ) -> BoxFuture<HookResult<ToolExecutionResult>> {
        self.step(signal, true)
    }

    fn step(
        self,
        signal: CancellationToken,
        replaced: bool,
    ) -> BoxFuture<HookResult<ToolExecutionResult>> {
        match self.wrappers.get(self.index).cloned() {
            None => self.ctx.dispatch(signal, replaced),
            Some(wrapper) => {
                let call = ExecuteCall {
                    execution: Arc::clone(self.ctx.execution()),
                    signal: Signal::new(signal.clone()),
                };
                let next = ExecuteNext {
                    wrappers: self.wrappers,
                    index: self.index + 1,
                    ctx: self.ctx,
                    signal,
                    replaced,
                };
                contained(move || wrapper.execute(call, next))
            }
        }
    }

    /// The signal currently installed (read-only).
    pub fn signal(&self) -> Signal {
        Signal::new(self.signal.clone())
    }
}

/// `tools/post-execute`: accept (optionally replacing content or value) or block (spec §6.7).
/// Any `Fn(Arc<ToolExecution>, ToolExecutionResult, PostNext)` returning a future of a decision
/// is one; as with [`PreExecuteHook`], closures need no type annotations.
pub trait PostExecuteHook:
    Fn(Arc<ToolExecution>, ToolExecutionResult, PostNext) -> <Self as PostExecuteHook>::Decided
    + Send
    + Sync
    + 'static
{
    /// The future the hook returns.
    type Decided: Future<Output = HookResult<PostToolDecision>> + Send + 'static;
}

impl<F, Fut> PostExecuteHook for F
where
    F: Fn(Arc<ToolExecution>, ToolExecutionResult, PostNext) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = HookResult<PostToolDecision>> + Send + 'static,
{
    type Decided = Fut;
}

/// A post-execute hook as the registry stores it.
pub(crate) trait DynPostHook: Send + Sync + 'static {
    fn post_execute(
        &self,
        execution: Arc<ToolExecution>,
        result: ToolExecutionResult,
        next: PostNext,
    ) -> BoxFuture<HookResult<PostToolDecision>>;
}

impl<H: PostExecuteHook> DynPostHook for H {
    fn post_execute(
        &self,
        execution: Arc<ToolExecution>,
        result: ToolExecutionResult,
        next: PostNext,
    ) -> BoxFuture<HookResult<PostToolDecision>> {
        Box::pin(self(execution, result, next))
    }
}

/// The rest of the post-execute chain; its innermost default is `accept`.
pub struct PostNext {
    pub(crate) hooks: Arc<[Arc<dyn DynPostHook>]>,
    pub(crate) index: usize,
    pub(crate) execution: Arc<ToolExecution>,
    pub(crate) result: ToolExecutionResult,
}

impl PostNext {
    /// Runs the inner hooks.
    pub fn run(self) -> BoxFuture<HookResult<PostToolDecision>> {
        let Some(hook) = self.hooks.get(self.index).cloned() else {
            return Box::pin(std::future::ready(Ok(PostToolDecision::accept())));
        };
        let next = PostNext {
            hooks: self.hooks,
            index: self.index + 1,
            execution: Arc::clone(&self.execution),
            result: self.result.clone(),
        };
        contained(move || hook.post_execute(self.execution, self.result, next))
    }
}

/// A guard (spec §5.6): runs after an allow; any reason denies. Guards can only deny. Any
/// `Fn(&ToolExecution) -> Option<String>` is one (closures need no type annotations).
pub trait Guard: Fn(&ToolExecution) -> Option<String> + Send + Sync + 'static {
    /// `Some(reason)` denies the call.
    fn check(&self, execution: &ToolExecution) -> Option<String> {
        self(execution)
    }
}

impl<F> Guard for F where F: Fn(&ToolExecution) -> Option<String> + Send + Sync + 'static {}

// Here, not in `caller.rs`: the rules sit below the execution they are checked against.
impl ScopeRules {
    /// The rules as a guard, for [`Registry::guard`](crate::Registry::guard) or a scope's.
    pub fn guard(self) -> impl Guard {
        move |execution: &ToolExecution| self.check(execution.name(), execution.caller())
    }
}

/// Observes every final result (`tools/result`); cannot change it. Errors and panics are
/// logged as warnings and contained.
pub trait ResultObserver: Send + Sync + 'static {
    /// Sees the frozen execution and its final result.
    fn observe(
        &self,
        execution: &ToolExecution,
        result: &ToolExecutionResult,
    ) -> Result<(), ToolError>;
}

impl<F> ResultObserver for F
where
    F: Fn(&ToolExecution, &ToolExecutionResult) -> Result<(), ToolError> + Send + Sync + 'static,
{
    fn observe(
        &self,
        execution: &ToolExecution,
        result: &ToolExecutionResult,
    ) -> Result<(), ToolError> {
        self(execution, result)
    }
}

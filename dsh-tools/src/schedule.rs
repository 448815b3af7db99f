//! Concurrency classification and the turn scheduler (spec §7).
//!
//! One model turn's calls run in model order: consecutive calls the registry classifies as
//! [`ExecutionMode::Parallel`] form a group that runs in a rolling pool of bounded width; an
//! [`ExecutionMode::Exclusive`] call runs alone, a barrier between groups. Policy (`prepare`:
//! pre-execute, approval, guards) runs in model order; only dispatches overlap; results are
//! committed (post-execute, finalizer, observers) in model order.

use crate::error::ToolError;
use crate::pipeline::dispatch::resolve_executable;
use crate::pipeline::{
    AgentId, ExecutionToken, Stage, ToolExecution, ToolExecutionInput, ToolExecutionResult,
};
use crate::registry::Registry;
use serde_json::Value;
use std::collections::{BTreeMap, HashMap};
use std::panic::AssertUnwindSafe;
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

/// How a call may be scheduled.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ExecutionMode {
    /// May overlap with its parallel neighbours.
    Parallel,
    /// Runs alone.
    Exclusive,
}

impl Registry {
    /// Classifies a call (spec §7.1): `Parallel` only when the tool the call resolves to (scope,
    /// restrictions and Code Mode applied) has a classifier that returns `true` for the raw
    /// arguments. Unknown, hidden or collapsed tools, a missing classifier, or a panicking one:
    /// `Exclusive`. Never fails.
    pub fn execution_mode(
        &self,
        name: &str,
        arguments: &Value,
        agent: Option<&AgentId>,
        parent: Option<ExecutionToken>,
    ) -> ExecutionMode {
        let probe = ToolExecution {
            call_id: String::new(),
            root_call_id: None,
            name: name.to_owned(),
            arguments: None,
            agent: agent.cloned(),
            parent,
            token: ExecutionToken::mint(),
            signal: crate::call::Signal::new(CancellationToken::new()),
            progress: None,
            caller: None,
            run: Default::default(),
        };
        let Some(tool) = resolve_executable(self, &probe) else {
            return ExecutionMode::Exclusive;
        };
        let Some(classifier) = tool.definition().classifier() else {
            return ExecutionMode::Exclusive;
        };
        match std::panic::catch_unwind(AssertUnwindSafe(|| classifier(arguments))) {
            Ok(true) => ExecutionMode::Parallel,
            Ok(false) => ExecutionMode::Exclusive,
            Err(payload) => {
                crate::error::drop_panic_payload(payload);
                ExecutionMode::Exclusive
            }
        }
    }

    fn mode_of(&self, input: &ToolExecutionInput) -> ExecutionMode {
        self.execution_mode(
            &input.name,
            &input.arguments,
            input.agent.as_ref(),
            input.parent,
        )
    }
}

/// The bridge of a `run_code` run schedules its sub-calls on the registry's stages (Code Mode
/// spec §4.4).
impl crate::run_code::lane::Stages for Registry {
    type Started = Stage;

    fn parallel(&self, input: &ToolExecutionInput) -> bool {
        self.mode_of(input) == ExecutionMode::Parallel
    }

    fn start(&self, input: ToolExecutionInput) -> crate::call::BoxFuture<Stage> {
        let registry = self.clone();
        Box::pin(async move { registry.prepare(input).await })
    }

    fn dispatches(started: &Stage) -> bool {
        matches!(started, Stage::Dispatch(_))
    }

    fn dispatch(&self, started: Stage) -> crate::call::BoxFuture<Stage> {
        let registry = self.clone();
        Box::pin(async move {
            match started {
                Stage::Dispatch(call) => registry.dispatch(call).await,
                settled => settled,
            }
        })
    }

    fn commit(&self, started: Stage) -> crate::call::BoxFuture<ToolExecutionResult> {
        let registry = self.clone();
        Box::pin(async move { registry.complete(started).await })
    }

    fn record(&self, agent: &AgentId, record: &crate::code::CodeDispatchRecord) {
        self.record_code_dispatch(agent, record);
    }

    fn max_parallel(&self) -> usize {
        self.max_parallel_sub_calls()
    }
}

/// A call of a parallel group that finished dispatching.
enum Done {
    Stage(Stage),
    Lost(ToolExecutionResult),
}

/// Runs one model turn's tool calls (spec §7.2, §7.3).
///
/// ```
/// use dsh_tools::schedule::TurnScheduler;
/// use dsh_tools::{CancellationToken, OutputDecl, Registry, ToolDefinition, ToolExecutionInput};
/// use serde_json::json;
///
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let registry = Registry::new();
/// registry.register(ToolDefinition::new("read", "reads", json!({}), OutputDecl::text(),
///     |args, _| async move { Ok(args["path"].clone()) }).concurrency_safe(|_| true)).unwrap();
/// let turn = CancellationToken::new();
/// let calls = (0..3)
///     .map(|i| ToolExecutionInput::new(format!("c{i}"), "read", json!({"path": format!("/f{i}")}), turn.clone()))
///     .collect();
/// let results = TurnScheduler::new(registry).width(2).run(calls, &turn).await;
/// let texts: Vec<String> = results.iter().map(|r| r.text()).collect();
/// assert_eq!(texts, ["/f0", "/f1", "/f2"]);
/// # });
/// ```
#[derive(Clone, Debug)]
pub struct TurnScheduler {
    registry: Registry,
    width: usize,
}

impl TurnScheduler {
    /// A scheduler with the default pool width (10).
    pub fn new(registry: Registry) -> Self {
        Self {
            registry,
            width: 10,
        }
    }

    /// The most parallel calls in flight at once (at least 1; 1 runs everything serially).
    pub fn width(mut self, width: usize) -> Self {
        self.width = width.max(1);
        self
    }

    /// Runs `calls` and returns their results in model order. When `turn` is cancelled no
    /// further call starts; started ones settle and are committed in order, and every call never
    /// started gets a synthetic `ABORTED_BEFORE_DISPATCH` result.
    pub async fn run(
        &self,
        calls: Vec<ToolExecutionInput>,
        turn: &CancellationToken,
    ) -> Vec<ToolExecutionResult> {
        let total = calls.len();
        let mut results: Vec<ToolExecutionResult> = Vec::with_capacity(total);
        let mut queue = calls.into_iter().peekable();
        while let Some(first) = queue.next() {
            if turn.is_cancelled() {
                break;
            }
            if self.registry.mode_of(&first) == ExecutionMode::Exclusive {
                results.push(self.registry.execute(first).await);
                continue;
            }
            self.run_group(first, &mut queue, turn, &mut results).await;
        }
        while results.len() < total {
            results.push(ToolExecutionResult::failure(
                ToolError::aborted_before_dispatch(),
            ));
        }
        results
    }

    /// A group of consecutive parallel calls: prepared in order, dispatched in a rolling pool,
    /// committed in order.
    async fn run_group(
        &self,
        first: ToolExecutionInput,
        queue: &mut std::iter::Peekable<std::vec::IntoIter<ToolExecutionInput>>,
        turn: &CancellationToken,
        results: &mut Vec<ToolExecutionResult>,
    ) {
        let registry = &self.registry;
        let base = results.len();
        let mut started = 0usize;
        let mut committed = 0usize;
        let mut ready: BTreeMap<usize, Done> = BTreeMap::new();
        let mut pool: JoinSet<(usize, Stage)> = JoinSet::new();
        let mut ids: HashMap<tokio::task::Id, usize> = HashMap::new();
        let mut next = Some(first);
        loop {
            // Start calls while the pool has room and the next call is still parallel.
            while pool.len() < self.width && !turn.is_cancelled() {
                let input = match next.take() {
                    Some(input) => input,
                    None => match queue.next_if(|c| registry.mode_of(c) == ExecutionMode::Parallel)
                    {
                        Some(input) => input,
                        None => break,
                    },
                };
                let index = started;
                started += 1;
                match registry.prepare(input).await {
                    Stage::Dispatch(call) => {
                        let registry = registry.clone();
                        let handle =
                            pool.spawn(async move { (index, registry.dispatch(call).await) });
                        ids.insert(handle.id(), index);
                    }
                    done => {
                        ready.insert(index, Done::Stage(done));
                    }
                }
            }
            // Commit what is ready, in order.
            while let Some(done) = ready.remove(&committed) {
                results.push(match done {
                    Done::Stage(stage) => registry.complete(stage).await,
                    Done::Lost(result) => result,
                });
                committed += 1;
            }
            if committed == started
                && (turn.is_cancelled()
                    || !queue
                        .peek()
                        .is_some_and(|c| registry.mode_of(c) == ExecutionMode::Parallel))
            {
                debug_assert_eq!(results.len(), base + committed);
                return;
            }
            match pool.join_next_with_id().await {
                Some(Ok((id, (index, stage)))) => {
                    ids.remove(&id);
                    ready.insert(index, Done::Stage(stage));
                }
                // Dispatch contains panics itself; a join error means the runtime is shutting
                // down under us. The call's state is gone: report it as failed, in its place.
                Some(Err(e)) => {
                    if let Some(index) = ids.remove(&e.id()) {
                        let lost = ToolExecutionResult::failure(ToolError::new(format!(
                            "tool dispatch task failed: {e}"
                        )));
                        ready.insert(index, Done::Lost(lost));
                    }
                }
                None => {}
            }
        }
    }
}

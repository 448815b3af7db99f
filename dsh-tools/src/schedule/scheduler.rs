//! The turn scheduler (spec §7.2, §7.3): one model turn's calls in model order, consecutive
//! parallel calls in a rolling pool of bounded width, an exclusive call alone as a barrier;
//! deferred turns resumed with answers, detached calls' tasks collected.

use super::classify::ExecutionMode;
use super::turn::{DeferredTurn, TurnCall, TurnResumeError};
use crate::call::{ToolExecutionInput, ToolExecutionResult};
use crate::error::ToolError;
use crate::pipeline::{ApprovalAnswer, PendingProgram, ResumeError, Stage};
use crate::registry::Registry;
use crate::task::{Started, TaskError, TaskRecord, Tasks};
use std::collections::{BTreeMap, HashMap};
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

/// A call of a parallel group that finished dispatching.
enum Done {
    Stage(Stage),
    /// Its result, final (a lost dispatch, a call that settled instead of becoming a task).
    Settled(ToolExecutionResult),
    /// Started as a task.
    Task(Box<TaskRecord>),
}

/// How a turn is run.
#[derive(Clone, Copy)]
struct Mode {
    /// An `ask` no grant answers is kept pending ([`TurnScheduler::run_deferred`]).
    defer: bool,
    /// Calls that may run as tasks are left running ([`TurnScheduler::run_detached`]).
    detach: bool,
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
    tasks: Option<Tasks>,
}

impl TurnScheduler {
    /// A scheduler with the default pool width (10).
    pub fn new(registry: Registry) -> Self {
        Self {
            registry,
            width: 10,
            tasks: None,
        }
    }

    /// The tasks [`run_detached`](Self::run_detached) starts calls as (without it, that runs
    /// every call in place).
    pub fn tasks(mut self, tasks: Tasks) -> Self {
        self.tasks = Some(tasks);
        self
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
        let mode = Mode {
            defer: false,
            detach: false,
        };
        self.run_as(calls, turn, mode)
            .await
            .into_iter()
            .map(|call| match call {
                TurnCall::Settled { result } => result,
                TurnCall::Task { task } => ToolExecutionResult::failure(ToolError::new(format!(
                    "internal error: task {} was left running",
                    task.id
                ))),
                // Only a deferring run keeps a call pending.
                TurnCall::Pending { approval }
                | TurnCall::Program {
                    program: PendingProgram { approval, .. },
                } => ToolExecutionResult::failure(ToolError::new(format!(
                    "internal error: approval {} was deferred",
                    approval.id
                ))),
            })
            .collect()
    }

    /// Runs `calls` like [`run`](Self::run), except that an `ask` no grant answers does not
    /// wait: its call is kept in the registry's approval store
    /// ([`Registry::execute_deferred`]) and the turn settles with every other call's result
    /// and a [`PendingApproval`](crate::pipeline::PendingApproval) in that call's place. The
    /// turn is serializable; give it to [`resume`](Self::resume) with the answers, in this
    /// process or another one sharing the store.
    ///
    /// Calls after a pending one are not held back: they run now, as they would have while the
    /// approval was being answered, so a later call must not depend on an earlier one that
    /// asks (it would not in the inline turn either, where it could run before the answer
    /// came only if it did not wait for it).
    pub async fn run_deferred(
        &self,
        calls: Vec<ToolExecutionInput>,
        turn: &CancellationToken,
    ) -> DeferredTurn {
        let mode = Mode {
            defer: true,
            detach: false,
        };
        DeferredTurn {
            calls: self.run_as(calls, turn, mode).await,
        }
    }

    /// Runs `calls` like [`run`](Self::run), except that a parallel call whose tool may run
    /// as a task ([`TaskSupport`](crate::task::TaskSupport) `optional` or `required`) is started
    /// as a task of [`tasks`](Self::tasks) ([`Tasks::start`]: its policies run here, in model
    /// order; a call they refuse settles) and the turn goes on without it: the turn holds a
    /// [`TurnCall::Task`] in its place. Collect the results with [`collect`](Self::collect).
    ///
    /// **Exclusive calls do not overlap the turn's tasks.** An exclusive call runs alone: it
    /// waits until every task this turn started has ended before its policies run (the wait
    /// ends with the turn's signal: the call then never starts), and an exclusive call whose
    /// tool may run as a task runs in place, as a barrier, never detached. Parallel calls go on
    /// beside running tasks, as they would beside each other.
    ///
    /// ```
    /// use dsh_tools::schedule::{TurnCall, TurnScheduler};
    /// use dsh_tools::task::{TaskSupport, Tasks};
    /// use dsh_tools::{CancellationToken, OutputDecl, Registry, ToolDefinition, ToolExecutionInput};
    /// use serde_json::json;
    ///
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// let registry = Registry::new();
    /// registry.register(ToolDefinition::new("test", "runs the tests", json!({}), OutputDecl::text(),
    ///     |_, _| async { Ok(json!("412 passed")) })
    ///     .concurrency_safe(|_| true).task_support(TaskSupport::Optional)).unwrap();
    /// let scheduler = TurnScheduler::new(registry.clone()).tasks(Tasks::new(&registry));
    /// let turn = CancellationToken::new();
    /// let call = ToolExecutionInput::new("c1", "test", json!({}), turn.clone());
    /// let mut started = scheduler.run_detached(vec![call], &turn).await;
    /// assert!(matches!(started.calls[0], TurnCall::Task { .. }));
    /// scheduler.collect(&mut started, Some(&turn)).await.unwrap();
    /// assert_eq!(started.results().unwrap()[0].text(), "412 passed");
    /// # });
    /// ```
    pub async fn run_detached(
        &self,
        calls: Vec<ToolExecutionInput>,
        turn: &CancellationToken,
    ) -> DeferredTurn {
        let mode = Mode {
            defer: false,
            detach: self.tasks.is_some(),
        };
        DeferredTurn {
            calls: self.run_as(calls, turn, mode).await,
        }
    }

    /// Settles each task of `turn` that has ended with its result (one whose record is gone,
    /// its TTL passed, with a failure saying so); `wait`: waits for the running ones first
    /// (until the signal fires: the rest are left running). An error (the store failed) leaves
    /// `turn` with every call settled so far: nothing is lost. Needs [`tasks`](Self::tasks)
    /// when the turn holds tasks.
    pub async fn collect(
        &self,
        turn: &mut DeferredTurn,
        wait: Option<&CancellationToken>,
    ) -> Result<(), TaskError> {
        for call in &mut turn.calls {
            let TurnCall::Task { task } = &*call else {
                continue;
            };
            let Some(tasks) = &self.tasks else {
                return Err(TaskError::NotFound(task.id.clone()));
            };
            let owner = task.owner.as_deref();
            let read = match wait {
                Some(signal) => tasks.wait(&task.id, owner, signal).await,
                None => tasks.get(&task.id, owner).await,
            };
            let read = match read {
                Ok(read) => read,
                Err(TaskError::WaitCancelled(_)) => continue,
                Err(TaskError::NotFound(id)) => {
                    *call = TurnCall::Settled {
                        result: ToolExecutionResult::failure(ToolError::new(format!(
                            "task {id} is gone: its TTL passed, or its store lost it"
                        ))),
                    };
                    continue;
                }
                Err(e) => return Err(e),
            };
            *call = match (read.status.is_terminal(), read.result.clone()) {
                (true, Some(result)) => TurnCall::Settled { result },
                (true, None) => TurnCall::Settled {
                    result: ToolExecutionResult::failure(ToolError::new(
                        read.status_message
                            .clone()
                            .unwrap_or_else(|| format!("task {} ended without a result", read.id)),
                    )),
                },
                (false, _) => TurnCall::Task { task: read },
            };
        }
        Ok(())
    }

    /// Continues the pending calls of `turn` that `answers` answer, in model order, each as
    /// [`Registry::resume`] does; the answered ones become settled in the turn returned.
    /// Pending calls without an answer stay pending (resume again later). An answer that is
    /// not for a pending call of this turn, or that the registry refuses (another agent, an
    /// approval answered already: resuming a turn twice), is reported in the error, with the
    /// turn as far as it got: no call runs twice, and the turn returned holds every result this
    /// resume produced (a call resumed elsewhere settles there, not in this turn).
    pub async fn resume(
        &self,
        mut turn: DeferredTurn,
        answers: Vec<ApprovalAnswer>,
    ) -> Result<DeferredTurn, TurnResumeError> {
        let mut answers: Vec<Option<ApprovalAnswer>> = answers.into_iter().map(Some).collect();
        let mut errors = Vec::new();
        for call in &mut turn.calls {
            let id = match &*call {
                TurnCall::Pending { approval } => &approval.id,
                TurnCall::Program { program } => &program.approval.id,
                TurnCall::Settled { .. } | TurnCall::Task { .. } => continue,
            };
            let Some(answer) = answers
                .iter_mut()
                .find(|a| a.as_ref().is_some_and(|a| &a.approval_id == id))
                .and_then(Option::take)
            else {
                continue;
            };
            let resumed = match &*call {
                TurnCall::Program { program } => self
                    .registry
                    .resume_program(program.clone(), answer)
                    .await
                    .map(TurnCall::from),
                _ => self
                    .registry
                    .resume_deferred(answer)
                    .await
                    .map(TurnCall::from),
            };
            match resumed {
                Ok(resumed) => *call = resumed,
                Err(e) => errors.push(e),
            }
        }
        errors.extend(
            answers
                .into_iter()
                .flatten()
                .map(|a| ResumeError::Unknown(a.approval_id)),
        );
        if errors.is_empty() {
            Ok(turn)
        } else {
            Err(TurnResumeError { turn, errors })
        }
    }

    async fn run_as(
        &self,
        calls: Vec<ToolExecutionInput>,
        turn: &CancellationToken,
        mode: Mode,
    ) -> Vec<TurnCall> {
        let defer = mode.defer;
        let total = calls.len();
        let mut results: Vec<TurnCall> = Vec::with_capacity(total);
        let mut queue = calls.into_iter().peekable();
        while let Some(first) = queue.next() {
            if turn.is_cancelled() {
                break;
            }
            if self.registry.mode_of(&first) == ExecutionMode::Exclusive {
                // Alone means alone: the turn's tasks end first.
                if !self.tasks_ended(&results, turn).await {
                    break;
                }
                let stage = self.registry.prepare_as(first, defer).await;
                results.push(match stage {
                    Stage::Pending(approval) => TurnCall::Pending {
                        approval: *approval,
                    },
                    stage if defer => self.registry.run_prepared_deferred(stage).await.into(),
                    stage => TurnCall::Settled {
                        result: self.registry.run_prepared(stage).await,
                    },
                });
                continue;
            }
            self.run_group(first, &mut queue, turn, &mut results, mode)
                .await;
        }
        while results.len() < total {
            results.push(TurnCall::Settled {
                result: ToolExecutionResult::failure(ToolError::aborted_before_dispatch()),
            });
        }
        results
    }

    /// Whether every task `results` started has ended, waiting for them until `turn` fires
    /// (`false` then).
    async fn tasks_ended(&self, results: &[TurnCall], turn: &CancellationToken) -> bool {
        let Some(tasks) = &self.tasks else {
            return true;
        };
        for call in results {
            if let TurnCall::Task { task } = call {
                // A task gone or unreadable has nothing left to wait for.
                let waited = tasks.wait(&task.id, task.owner.as_deref(), turn).await;
                if let Err(TaskError::WaitCancelled(_)) = waited {
                    return false;
                }
            }
        }
        true
    }

    /// A group of consecutive parallel calls: prepared in order, dispatched in a rolling pool,
    /// committed in order.
    async fn run_group(
        &self,
        first: ToolExecutionInput,
        queue: &mut std::iter::Peekable<std::vec::IntoIter<ToolExecutionInput>>,
        turn: &CancellationToken,
        results: &mut Vec<TurnCall>,
        mode: Mode,
    ) {
        let registry = &self.registry;
        let defer = mode.defer;
        let tasks = self.tasks.as_ref().filter(|_| mode.detach);
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
                if let Some(tasks) = tasks
                    && tasks
                        .support(&input.name, input.agent.as_ref())
                        .allows_task()
                {
                    let done = match tasks.start(input, None).await {
                        Started::Task(task) => Done::Task(Box::new(task)),
                        Started::Settled(result) => Done::Settled(result),
                    };
                    ready.insert(index, done);
                    continue;
                }
                match registry.prepare_as(input, defer).await {
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
                    Done::Stage(Stage::Pending(approval)) => TurnCall::Pending {
                        approval: *approval,
                    },
                    Done::Stage(stage) => match Registry::stopped_program(&stage) {
                        Some(program) => TurnCall::Program { program },
                        None => TurnCall::Settled {
                            result: registry.complete(stage).await,
                        },
                    },
                    Done::Settled(result) => TurnCall::Settled { result },
                    Done::Task(task) => TurnCall::Task { task: *task },
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
                        ready.insert(index, Done::Settled(lost));
                    }
                }
                None => {}
            }
        }
    }
}

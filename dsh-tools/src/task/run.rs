//! [`Tasks`]: starting a call as a task, running it detached, and answering for it.

use super::{MemoryTaskStore, TaskPage, TaskRecord, TaskStatus, TaskStore, TaskStoreError};
use crate::call::{
    Progress, ProgressSink, TaskSupport, ToolExecutionInput, ToolExecutionResult, approval_id,
    now_ms,
};
use crate::error::{ToolError, codes};
use crate::pipeline::Stage;
use crate::registry::Registry;
use futures_util::FutureExt;
use std::collections::HashMap;
use std::panic::AssertUnwindSafe;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::{Notify, watch};
use tokio_util::sync::CancellationToken;

/// How tasks are kept and polled.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct TaskConfig {
    /// How long an ended task is kept when its caller asks for no TTL: one hour.
    pub default_ttl: Duration,
    /// The longest TTL a caller may ask for (a longer one is cut to it): one day.
    pub max_ttl: Duration,
    /// How often callers are asked to poll: one second.
    pub poll_interval: Duration,
    /// How long the instance running a task vouches for it between renewals (it renews at a
    /// third of it): 30 seconds. A working task whose lease passed is read as `failed`.
    pub lease: Duration,
    /// How long settling retries a failing store before it gives up (the lease then settles
    /// the task `failed`): two minutes.
    pub settle_retry: Duration,
}

impl Default for TaskConfig {
    fn default() -> Self {
        Self {
            default_ttl: Duration::from_secs(3600),
            max_ttl: Duration::from_secs(86_400),
            poll_interval: Duration::from_secs(1),
            lease: Duration::from_secs(30),
            settle_retry: Duration::from_secs(120),
        }
    }
}

impl TaskConfig {
    /// The defaults.
    pub fn new() -> Self {
        Self::default()
    }

    /// With `lease` in place of 30 seconds.
    pub fn lease(mut self, lease: Duration) -> Self {
        self.lease = lease;
        self
    }

    /// With `interval` in place of one second.
    pub fn poll_interval(mut self, interval: Duration) -> Self {
        self.poll_interval = interval;
        self
    }

    /// With `ttl` in place of one hour.
    pub fn default_ttl(mut self, ttl: Duration) -> Self {
        self.default_ttl = ttl;
        self
    }

    /// With `ttl` in place of one day.
    pub fn max_ttl(mut self, ttl: Duration) -> Self {
        self.max_ttl = ttl;
        self
    }

    /// With `retry` in place of two minutes.
    pub fn settle_retry(mut self, retry: Duration) -> Self {
        self.settle_retry = retry;
        self
    }
}

/// What [`Tasks::start`] did with a call.
#[derive(Debug)]
#[allow(clippy::large_enum_variant)]
pub enum Started {
    /// The call runs as this task.
    Task(TaskRecord),
    /// The call settled without becoming a task: its tool does not run as a task
    /// ([`TaskSupport::Forbidden`], or it is unknown), or it was refused, failed or cancelled
    /// before its body would have started.
    Settled(ToolExecutionResult),
}

/// Why a task could not be read, waited for or cancelled.
#[derive(Clone, Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TaskError {
    /// No task of that id, or one another owner started (the two are not told apart).
    #[error("no task {0:?}")]
    NotFound(String),
    /// The task has ended already (cancelling it changes nothing).
    #[error("task {:?} has ended already ({})", .0.id, .0.status.as_str())]
    Ended(Box<TaskRecord>),
    /// The wait's own signal fired before the task ended; the task goes on.
    #[error("the wait for task {0:?} was cancelled; the task goes on")]
    WaitCancelled(String),
    /// The store failed; nothing changed.
    #[error(transparent)]
    Store(#[from] TaskStoreError),
}

/// Starts calls as tasks and answers for them: one per registry (clones share it). See the
/// [module](super) for an example.
#[derive(Clone)]
pub struct Tasks {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for Tasks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tasks")
            .field("config", &self.inner.config)
            .field("running_here", &self.inner.lock().len())
            .finish_non_exhaustive()
    }
}

struct Inner {
    registry: Registry,
    store: Arc<dyn TaskStore>,
    config: TaskConfig,
    /// The tasks whose bodies run in this process.
    local: Mutex<HashMap<String, Local>>,
}

impl Inner {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Local>> {
        self.local.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// A task running here.
struct Local {
    /// The body's cancellation.
    token: CancellationToken,
    /// The task once ended here (before or whether or not the store has it).
    ended: watch::Sender<Option<TaskRecord>>,
    /// The task as created (what the waiters here read if the store cannot keep its end).
    created: TaskRecord,
}

/// The body's latest progress, and a bell for the keeper to write it.
#[derive(Default)]
struct Reported {
    latest: Mutex<Option<Progress>>,
    bell: Notify,
}

impl Tasks {
    /// Tasks of `registry`'s calls, kept in memory ([`MemoryTaskStore`]).
    pub fn new(registry: &Registry) -> Self {
        Self::with_store(registry, MemoryTaskStore::default())
    }

    /// Tasks of `registry`'s calls, kept in `store`.
    pub fn with_store(registry: &Registry, store: impl TaskStore) -> Self {
        Self::with_shared_store(registry, Arc::new(store))
    }

    /// [`with_store`](Self::with_store) for a store already shared.
    pub fn with_shared_store(registry: &Registry, store: Arc<dyn TaskStore>) -> Self {
        Self {
            inner: Arc::new(Inner {
                registry: registry.clone(),
                store,
                config: TaskConfig::default(),
                local: Mutex::default(),
            }),
        }
    }

    /// With `config` (set it before starting tasks: the clones made so far keep the old one).
    pub fn config(self, config: TaskConfig) -> Self {
        let inner = match Arc::try_unwrap(self.inner) {
            Ok(inner) => Inner { config, ..inner },
            Err(shared) => Inner {
                registry: shared.registry.clone(),
                store: Arc::clone(&shared.store),
                config,
                local: Mutex::default(),
            },
        };
        Self {
            inner: Arc::new(inner),
        }
    }

    /// The configuration.
    pub fn settings(&self) -> &TaskConfig {
        &self.inner.config
    }

    /// The registry whose calls these are.
    pub fn registry(&self) -> &Registry {
        &self.inner.registry
    }

    /// Whether `name` (as `agent` sees it) may run as a task, and how.
    pub fn support(&self, name: &str, agent: Option<&crate::call::AgentId>) -> TaskSupport {
        self.inner
            .registry
            .read()
            .resolve(name, agent)
            .map_or(TaskSupport::Forbidden, |t| t.definition.task_support)
    }

    /// Starts `input` as a task kept `ttl` after it ends (the configured default when `None`,
    /// at most [`TaskConfig::max_ttl`]).
    ///
    /// The call's policies run first, here: pre-execute, the approval (waited for on the
    /// input's signal), the guards. A call they refuse, and a call of a tool that does not
    /// run as a task, settles at once ([`Started::Settled`], the latter run in place). Then
    /// the task is kept and its body runs detached with a cancellation of its own (the input's
    /// signal no longer reaches it: [`cancel`](Self::cancel) does); progress the body reports
    /// goes to the input's sink and into the task. Must be called within a tokio runtime.
    pub async fn start(&self, input: ToolExecutionInput, ttl: Option<Duration>) -> Started {
        match self.start_with(input, ttl, None).await {
            Some(started) => started,
            // Only a call's own approval channel suspends it, and there is none here.
            None => Started::Settled(ToolExecutionResult::failure(ToolError::new(
                "internal error: a task was suspended for approval without a channel",
            ))),
        }
    }

    /// [`start`](Self::start), with the call's own approval channel (the MCP server's
    /// client); `None` when that channel suspended the call at its `ask` (nothing ran).
    pub(crate) async fn start_with(
        &self,
        mut input: ToolExecutionInput,
        ttl: Option<Duration>,
        approval: Option<crate::call::CallApproval>,
    ) -> Option<Started> {
        let registry = &self.inner.registry;
        if !self
            .support(&input.name, input.agent.as_ref())
            .allows_task()
        {
            return Some(Started::Settled(registry.execute(input).await));
        }
        let config = &self.inner.config;
        let ttl = ttl.unwrap_or(config.default_ttl).min(config.max_ttl);
        let id = approval_id();
        let owner = input.caller.as_ref().map(|c| c.subject().to_owned());
        let token = CancellationToken::new();
        let caller_signal = std::mem::replace(&mut input.signal, token.clone());
        let reported = Arc::new(Reported::default());
        let forward = input.progress.take();
        input.progress = Some({
            let reported = Arc::clone(&reported);
            ProgressSink::new(move |progress: Progress| {
                *reported.latest.lock().unwrap_or_else(|e| e.into_inner()) = Some(progress.clone());
                reported.bell.notify_one();
                if let Some(sink) = &forward {
                    sink.report(progress);
                }
            })
        });
        let tool = input.name.clone();
        let call_id = input.call_id.clone();
        // The caller's signal reaches the call until it is a task.
        let prepare = registry.prepare_with(input, false, approval, None);
        tokio::pin!(prepare);
        let stage = tokio::select! {
            stage = &mut prepare => stage,
            () = caller_signal.cancelled() => {
                token.cancel();
                prepare.await
            }
        };
        let call = match stage {
            Stage::Dispatch(call) => call,
            Stage::Suspended => return None,
            settled => return Some(Started::Settled(registry.run_prepared(settled).await)),
        };
        let now = now_ms();
        let record = TaskRecord {
            id: id.clone(),
            tool,
            call_id,
            owner,
            status: TaskStatus::Working,
            status_message: None,
            progress: None,
            created_at_ms: now,
            updated_at_ms: now,
            ttl_ms: Some(millis(ttl)),
            poll_interval_ms: millis(config.poll_interval),
            lease_until_ms: now.saturating_add(millis(config.lease)),
            result: None,
            version: 0,
        };
        if let Err(e) = self.inner.store.create(record.clone()).await {
            let e = ToolError::coded(
                "TaskStoreError",
                codes::TRANSIENT,
                format!("the call was not started as a task: {e}"),
            );
            return Some(Started::Settled(
                registry
                    .complete(Stage::Final(call, ToolExecutionResult::failure(e)))
                    .await,
            ));
        }
        let (ended, _) = watch::channel(None);
        self.inner.lock().insert(
            id.clone(),
            Local {
                token: token.clone(),
                ended,
                created: record.clone(),
            },
        );
        let inner = Arc::clone(&self.inner);
        tokio::spawn(async move {
            let stop = CancellationToken::new();
            let keeper = tokio::spawn(keep(
                Arc::clone(&inner),
                id.clone(),
                token.clone(),
                reported.clone(),
                stop.clone(),
            ));
            let run = AssertUnwindSafe(inner.registry.run_prepared(Stage::Dispatch(call)));
            let result = run.catch_unwind().await.unwrap_or_else(|payload| {
                ToolExecutionResult::failure(ToolError::from_panic_payload(payload))
            });
            stop.cancel();
            let _ = keeper.await;
            let latest = reported
                .latest
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .take();
            settle(&inner, &id, result, token.is_cancelled(), latest).await;
        });
        Some(Started::Task(record))
    }

    /// Keeps a call that settled without running as a task (refused by its policies, say) as a
    /// task that ended at once, `completed` with `result`, for a protocol whose caller asked
    /// for a task and must be answered with one (MCP 2025-11-25).
    #[cfg(feature = "mcp")]
    pub(crate) async fn keep_settled(
        &self,
        tool: &str,
        call_id: &str,
        owner: Option<String>,
        result: ToolExecutionResult,
        ttl: Option<Duration>,
    ) -> Result<TaskRecord, TaskStoreError> {
        let config = &self.inner.config;
        let now = now_ms();
        let record = TaskRecord {
            id: approval_id(),
            tool: tool.to_owned(),
            call_id: call_id.to_owned(),
            owner,
            status: TaskStatus::Working,
            status_message: None,
            progress: None,
            created_at_ms: now,
            updated_at_ms: now,
            ttl_ms: Some(millis(
                ttl.unwrap_or(config.default_ttl).min(config.max_ttl),
            )),
            poll_interval_ms: millis(config.poll_interval),
            lease_until_ms: now.saturating_add(millis(config.lease)),
            result: None,
            version: 0,
        };
        // Created, then ended: a store expires a record from its end (the TTL counts from
        // there), which only a replacement marks.
        self.inner.store.create(record.clone()).await?;
        let mut ended = next(&record, now);
        ended.status = TaskStatus::Completed;
        ended.result = Some(result);
        self.inner.store.replace(ended.clone(), 0).await?;
        Ok(ended)
    }

    /// Task `id`, if `owner` started it. A working task whose instance stopped renewing its
    /// lease is settled `failed` here, saying so.
    pub async fn get(&self, id: &str, owner: Option<&str>) -> Result<TaskRecord, TaskError> {
        if let Some(ended) = self.ended_here(id) {
            return owned(ended, id, owner);
        }
        loop {
            let task = self.inner.store.get(id).await?;
            let task = owned(
                task.ok_or_else(|| TaskError::NotFound(id.to_owned()))?,
                id,
                owner,
            )?;
            let now = now_ms();
            if task.status.is_terminal() || task.lease_until_ms >= now || self.is_running_here(id) {
                return Ok(task);
            }
            let mut failed = next(&task, now);
            failed.status = TaskStatus::Failed;
            failed.status_message = Some(format!(
                "the instance running this task stopped before it ended (its lease passed {} ms ago)",
                now - task.lease_until_ms
            ));
            if self
                .inner
                .store
                .replace(failed.clone(), task.version)
                .await?
            {
                return Ok(failed);
            }
        }
    }

    /// Task `id` once it has ended (polling the store at its interval when its body runs
    /// elsewhere); [`TaskError::WaitCancelled`] if `signal` fires first.
    pub async fn wait(
        &self,
        id: &str,
        owner: Option<&str>,
        signal: &CancellationToken,
    ) -> Result<TaskRecord, TaskError> {
        loop {
            let task = self.get(id, owner).await?;
            if task.status.is_terminal() {
                return Ok(task);
            }
            let here = self.inner.lock().get(id).map(|l| l.ended.subscribe());
            let interval = Duration::from_millis(task.poll_interval_ms.max(10));
            tokio::select! {
                () = signal.cancelled() => return Err(TaskError::WaitCancelled(id.to_owned())),
                () = async {
                    match here {
                        Some(mut rx) => {
                            // Ended here (or the entry went): read again.
                            let _ = rx.wait_for(Option::is_some).await;
                        }
                        None => tokio::time::sleep(interval).await,
                    }
                } => {}
            }
        }
    }

    /// Cancels task `id`: it ends `cancelled` now (its result an `ABORTED` failure), and the
    /// body's signal fires (here at once; on another instance when it next renews its lease).
    /// The call's post-execute and observers still run once when the body returns.
    pub async fn cancel(&self, id: &str, owner: Option<&str>) -> Result<TaskRecord, TaskError> {
        loop {
            let task = self.get(id, owner).await?;
            if task.status.is_terminal() {
                return Err(TaskError::Ended(Box::new(task)));
            }
            let mut cancelled = next(&task, now_ms());
            cancelled.status = TaskStatus::Cancelled;
            cancelled.status_message = Some("cancelled by its caller".to_owned());
            cancelled.result = Some(ToolExecutionResult::failure(ToolError::aborted()));
            if self
                .inner
                .store
                .replace(cancelled.clone(), task.version)
                .await?
            {
                if let Some(local) = self.inner.lock().get(id) {
                    local.token.cancel();
                    local.ended.send_replace(Some(cancelled.clone()));
                }
                return Ok(cancelled);
            }
        }
    }

    /// Up to `limit` of `owner`'s tasks after `cursor` (a page's `next`), oldest first.
    pub async fn list(
        &self,
        owner: Option<&str>,
        cursor: Option<String>,
        limit: usize,
    ) -> Result<TaskPage, TaskError> {
        Ok(self
            .inner
            .store
            .list(owner.map(str::to_owned), cursor, limit)
            .await?)
    }

    fn ended_here(&self, id: &str) -> Option<TaskRecord> {
        self.inner
            .lock()
            .get(id)
            .and_then(|l| l.ended.borrow().clone())
    }

    fn is_running_here(&self, id: &str) -> bool {
        self.inner.lock().contains_key(id)
    }
}

fn owned(task: TaskRecord, id: &str, owner: Option<&str>) -> Result<TaskRecord, TaskError> {
    if task.is_owned_by(owner) {
        Ok(task)
    } else {
        Err(TaskError::NotFound(id.to_owned()))
    }
}

fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

/// The record's next version, changed at `now`.
fn next(task: &TaskRecord, now: u64) -> TaskRecord {
    let mut next = task.clone();
    next.version = task.version + 1;
    next.updated_at_ms = now.max(task.updated_at_ms);
    next
}

/// While the body runs: renews the lease, writes the latest progress, and fires the body's
/// signal when the store says the task was cancelled.
async fn keep(
    inner: Arc<Inner>,
    id: String,
    token: CancellationToken,
    reported: Arc<Reported>,
    stop: CancellationToken,
) {
    let renew = (inner.config.lease / 3).max(Duration::from_millis(10));
    let mut written: Option<Progress> = None;
    loop {
        tokio::select! {
            () = stop.cancelled() => return,
            () = tokio::time::sleep(renew) => {}
            () = reported.bell.notified() => {}
        }
        let latest = reported
            .latest
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone();
        for _ in 0..8 {
            let task = match inner.store.get(&id).await {
                Ok(Some(task)) => task,
                Ok(None) => return,
                Err(e) => {
                    tracing::warn!("task {id}: could not renew its lease: {e}");
                    break;
                }
            };
            // Ended elsewhere (a cancel, or a lease read as failed): the body stops.
            if task.status.is_terminal() {
                token.cancel();
                return;
            }
            let now = now_ms();
            let mut renewed = next(&task, now);
            renewed.lease_until_ms = now.saturating_add(millis(inner.config.lease));
            if latest.is_some() && latest != written {
                renewed.progress.clone_from(&latest);
                renewed.status_message = latest.as_ref().and_then(|p| p.message.clone());
            }
            match inner.store.replace(renewed, task.version).await {
                Ok(true) => {
                    written.clone_from(&latest);
                    break;
                }
                Ok(false) => continue,
                Err(e) => {
                    tracing::warn!("task {id}: could not renew its lease: {e}");
                    break;
                }
            }
        }
        // Progress is written at most ten times a second.
        tokio::select! {
            () = stop.cancelled() => return,
            () = tokio::time::sleep(Duration::from_millis(100)) => {}
        }
    }
}

/// Ends task `id` with `result`, once: a task someone cancelled meanwhile stays cancelled.
/// A failing store is retried for [`TaskConfig::settle_retry`]; the result is handed to the
/// waiters here either way.
async fn settle(
    inner: &Inner,
    id: &str,
    result: ToolExecutionResult,
    cancelled: bool,
    progress: Option<Progress>,
) {
    let status = if cancelled && result.is_error() {
        TaskStatus::Cancelled
    } else {
        TaskStatus::Completed
    };
    let started = std::time::Instant::now();
    let mut backoff = Duration::from_millis(50);
    let mut result = result;
    let mut shrunk = false;
    let ended = loop {
        let outcome = async {
            loop {
                let Some(task) = inner.store.get(id).await? else {
                    return Ok::<_, TaskStoreError>(None);
                };
                if task.status.is_terminal() {
                    return Ok(Some(task));
                }
                let mut ended = next(&task, now_ms());
                ended.status = status;
                ended.status_message = (status == TaskStatus::Cancelled)
                    .then(|| "cancelled".to_owned());
                if progress.is_some() {
                    ended.progress.clone_from(&progress);
                }
                ended.result = Some(result.clone());
                match inner.store.replace(ended.clone(), task.version).await {
                    Ok(true) => return Ok(Some(ended)),
                    Ok(false) => {}
                    // A result the store cannot keep ends the task with a failure saying so,
                    // for every instance (once).
                    Err(TaskStoreError::TooLarge(size, max)) if !shrunk => {
                        shrunk = true;
                        result = ToolExecutionResult::failure(ToolError::new(format!(
                            "the task's result is {size} bytes as JSON, more than the task store keeps ({max})"
                        )));
                    }
                    Err(e) => return Err(e),
                }
            }
        }
        .await;
        match outcome {
            Ok(ended) => break ended,
            Err(e) if started.elapsed() < inner.config.settle_retry => {
                tracing::warn!("task {id}: could not keep its result, retrying: {e}");
                tokio::time::sleep(backoff).await;
                backoff = (backoff * 2).min(Duration::from_secs(5));
            }
            Err(e) => {
                tracing::error!(
                    "task {id}: its result could not be kept ({e}); it will read as failed once its lease passes"
                );
                break None;
            }
        }
    };
    let mut local = inner.lock();
    match ended {
        Some(ended) => {
            if let Some(here) = local.remove(id) {
                here.ended.send_replace(Some(ended));
            }
        }
        // The store could not keep the end: this process answers for it while it lives.
        None => {
            if let Some(here) = local.get(id) {
                let mut ended = next(&here.created, now_ms());
                ended.status = status;
                ended.result = Some(result);
                ended.progress = progress;
                here.ended.send_replace(Some(ended));
            }
        }
    }
}

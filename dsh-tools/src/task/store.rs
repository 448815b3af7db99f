//! Where tasks are kept: the [`TaskStore`] contract and the in-memory store.

use super::TaskRecord;
use crate::call::BoxFuture;
use std::collections::{BTreeMap, HashMap};
use std::sync::Mutex;

/// Why a task store could not do what was asked. Nothing is lost on an error: a `create` that
/// failed kept nothing (the call is not started), a `replace` that failed changed nothing.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum TaskStoreError {
    /// The store holds as many tasks as it may.
    #[error("the task store is full ({0} tasks)")]
    Full(usize),
    /// A task of this id exists already.
    #[error("a task with id {0:?} exists already")]
    Exists(String),
    /// The store could not be reached or answered with an error.
    #[error("the task store failed: {0}")]
    Unavailable(String),
    /// A page cursor that is not one of this store's.
    #[error("not a page cursor of this task store: {0:?}")]
    BadCursor(String),
    /// The record is larger than the store keeps (its size and the bound, in bytes of JSON).
    #[error("the task is {0} bytes as JSON, more than the task store keeps ({1})")]
    TooLarge(usize, usize),
}

/// One page of tasks, oldest first.
#[derive(Clone, Debug, Default)]
#[non_exhaustive]
pub struct TaskPage {
    /// The tasks.
    pub tasks: Vec<TaskRecord>,
    /// The cursor of the next page, if there is one.
    pub next: Option<String>,
}

impl TaskPage {
    /// A page of `tasks`, with the cursor of the next one.
    pub fn new(tasks: Vec<TaskRecord>, next: Option<String>) -> Self {
        Self { tasks, next }
    }
}

/// Where tasks are kept: in memory by default ([`MemoryTaskStore`]), in Redis with the `redis`
/// feature (`durable::RedisTaskStore`) so that any instance of a fleet can answer for a task.
///
/// The contract is compare-and-set: [`replace`](Self::replace) writes a record only over the
/// version it was read at, so of two changes made from one read, one wins and the other reads
/// again. A store forgets records [past their expiry](TaskRecord::is_expired), and never a
/// task that has not ended.
pub trait TaskStore: Send + Sync + 'static {
    /// Keeps a new task.
    fn create(&self, task: TaskRecord) -> BoxFuture<Result<(), TaskStoreError>>;
    /// The task `id`, if kept.
    fn get(&self, id: &str) -> BoxFuture<Result<Option<TaskRecord>, TaskStoreError>>;
    /// Writes `task` (whose `version` is one more than `expected`) if the kept record is still
    /// at version `expected`: `false` when it changed meanwhile or is gone.
    fn replace(&self, task: TaskRecord, expected: u64) -> BoxFuture<Result<bool, TaskStoreError>>;
    /// Up to `limit` of `owner`'s tasks after `cursor` (a page's `next`), oldest first.
    fn list(
        &self,
        owner: Option<String>,
        cursor: Option<String>,
        limit: usize,
    ) -> BoxFuture<Result<TaskPage, TaskStoreError>>;
}

/// The default store: tasks in this process's memory, at most [`MemoryTaskStore::DEFAULT_MAX`]
/// at once (ended tasks are forgotten when their TTL passes).
#[derive(Debug)]
pub struct MemoryTaskStore {
    max: usize,
    inner: Mutex<Memory>,
}

#[derive(Debug, Default)]
struct Memory {
    next: u64,
    order: BTreeMap<u64, String>,
    by_id: HashMap<String, (u64, TaskRecord)>,
}

impl Memory {
    fn sweep(&mut self, now: u64) {
        let expired: Vec<(u64, String)> = self
            .by_id
            .iter()
            .filter(|(_, (_, task))| task.is_expired(now))
            .map(|(id, (seq, _))| (*seq, id.clone()))
            .collect();
        for (seq, id) in expired {
            self.by_id.remove(&id);
            self.order.remove(&seq);
        }
    }
}

impl Default for MemoryTaskStore {
    fn default() -> Self {
        Self::new(Self::DEFAULT_MAX)
    }
}

impl MemoryTaskStore {
    /// How many tasks the default store keeps at once: 10,000.
    pub const DEFAULT_MAX: usize = 10_000;

    /// A store keeping at most `max` tasks; a task started past it is refused with
    /// [`TaskStoreError::Full`].
    pub fn new(max: usize) -> Self {
        Self {
            max,
            inner: Mutex::default(),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Memory> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl TaskStore for MemoryTaskStore {
    fn create(&self, task: TaskRecord) -> BoxFuture<Result<(), TaskStoreError>> {
        let mut memory = self.lock();
        memory.sweep(crate::call::now_ms());
        let outcome = if memory.by_id.contains_key(&task.id) {
            Err(TaskStoreError::Exists(task.id))
        } else if memory.by_id.len() >= self.max {
            Err(TaskStoreError::Full(memory.by_id.len()))
        } else {
            // Sequences start at 1: a cursor names the last one given, and none is 0.
            memory.next += 1;
            let seq = memory.next;
            memory.order.insert(seq, task.id.clone());
            memory.by_id.insert(task.id.clone(), (seq, task));
            Ok(())
        };
        Box::pin(std::future::ready(outcome))
    }

    fn get(&self, id: &str) -> BoxFuture<Result<Option<TaskRecord>, TaskStoreError>> {
        let now = crate::call::now_ms();
        let found = self
            .lock()
            .by_id
            .get(id)
            .filter(|(_, task)| !task.is_expired(now))
            .map(|(_, task)| task.clone());
        Box::pin(std::future::ready(Ok(found)))
    }

    fn replace(&self, task: TaskRecord, expected: u64) -> BoxFuture<Result<bool, TaskStoreError>> {
        let mut memory = self.lock();
        let written = match memory.by_id.get_mut(&task.id) {
            Some((_, kept)) if kept.version == expected => {
                *kept = task;
                true
            }
            _ => false,
        };
        Box::pin(std::future::ready(Ok(written)))
    }

    fn list(
        &self,
        owner: Option<String>,
        cursor: Option<String>,
        limit: usize,
    ) -> BoxFuture<Result<TaskPage, TaskStoreError>> {
        let mut memory = self.lock();
        memory.sweep(crate::call::now_ms());
        // As `RedisTaskStore` pages: the cursor is the last sequence given (exclusive), and a
        // page holds 1 to 1,000 tasks (a limit of 0 would give the same cursor back forever).
        let after = match cursor {
            None => 0,
            Some(c) => match c.parse::<u64>() {
                Ok(n) => n,
                Err(_) => return Box::pin(std::future::ready(Err(TaskStoreError::BadCursor(c)))),
            },
        };
        let limit = limit.clamp(1, 1000);
        let mut tasks = Vec::new();
        let mut next = None;
        let later = (std::ops::Bound::Excluded(after), std::ops::Bound::Unbounded);
        for (&seq, id) in memory.order.range(later) {
            let Some((_, task)) = memory.by_id.get(id) else {
                continue;
            };
            if task.owner != owner {
                continue;
            }
            tasks.push(task.clone());
            if tasks.len() == limit {
                next = Some(seq.to_string());
                break;
            }
        }
        Box::pin(std::future::ready(Ok(TaskPage { tasks, next })))
    }
}

//! Stores that outlive a process (feature `redis`): deferred approvals and tasks in Redis or
//! Valkey, so that an approval asked on one instance is answered on another, or after a
//! restart, and any instance of a fleet answers for a task.

use crate::call::{ApprovalPage, ApprovalStore, ApprovalStoreError, BoxFuture, PendingApproval};
use crate::task::{TaskPage, TaskRecord, TaskStore, TaskStoreError};
use std::fmt;
use std::time::Duration;

/// A connection to `url` that reconnects on its own when it drops; each command waits at most
/// 2 s (the stores here and the MCP session store share it).
pub(crate) async fn connect(url: &str) -> Result<redis::aio::ConnectionManager, redis::RedisError> {
    let client = redis::Client::open(url)?;
    let config = redis::aio::ConnectionManagerConfig::new()
        .set_connection_timeout(Some(Duration::from_secs(2)))
        .set_response_timeout(Some(Duration::from_secs(2)))
        .set_number_of_retries(2);
    client.get_connection_manager_with_config(config).await
}

/// Claims approval `KEYS[1]` by setting its marker `KEYS[2]` (to `ARGV[1]`) unless set:
/// the approval's JSON when this claim won, nil when it is gone or claimed.
const CLAIM: &str = "if redis.call('EXISTS', KEYS[1]) == 0 then return false end \
    if redis.call('SET', KEYS[2], ARGV[1], 'NX') then return redis.call('GET', KEYS[1]) end \
    return false";

/// Stores approval `ARGV[3]` (JSON `ARGV[2]`) at `KEYS[3]` and in the order `KEYS[1]` under
/// the next sequence `KEYS[2]`, unless `ARGV[1]` are pending (0) or the id is taken (-1).
const PUT: &str = "if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[1]) then return 0 end \
    if redis.call('EXISTS', KEYS[3]) == 1 then return -1 end \
    local seq = redis.call('INCR', KEYS[2]) \
    redis.call('SET', KEYS[3], ARGV[2]) \
    redis.call('ZADD', KEYS[1], seq, ARGV[3]) \
    return 1";

/// The largest pending approval stored or read back (its arguments included).
const MAX_APPROVAL_BYTES: usize = 1024 * 1024;

/// Pending approvals in Redis (or Valkey): give every instance the same store with
/// [`Registry::set_approval_store`](crate::Registry::set_approval_store).
///
/// Under a prefix (`dsh-tools:approval:` by default): `a:<id>` holds the approval as JSON,
/// `c:<id>` marks it claimed (a script that `SET NX`es it only while the approval exists, so
/// of two answers at most one is taken, whichever instance they reach), `order` is a sorted set of ids by a sequence (`seq`, `INCR`) that
/// page cursors name. Approvals do not expire: one is gone when its call settled. At most
/// [`max`](Self::max) are kept (10,000), each at most 1 MiB as JSON. Each command waits at
/// most 2 s; a store that fails loses nothing (see [`ApprovalStoreError`]).
///
/// ```no_run
/// use dsh_tools::Registry;
/// use dsh_tools::durable::RedisApprovalStore;
///
/// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
/// let registry = Registry::new();
/// registry.set_approval_store(RedisApprovalStore::connect("redis://redis.internal:6379/0").await?);
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct RedisApprovalStore {
    connection: redis::aio::ConnectionManager,
    prefix: String,
    max: usize,
}

impl fmt::Debug for RedisApprovalStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RedisApprovalStore")
            .field("prefix", &self.prefix)
            .field("max", &self.max)
            .finish_non_exhaustive()
    }
}

fn unavailable(e: impl fmt::Display) -> ApprovalStoreError {
    ApprovalStoreError::Unavailable(e.to_string())
}

impl RedisApprovalStore {
    /// Connects to `url` (`redis://[user:password@]host[:port][/db]`, `redis+unix://…`),
    /// reconnecting on its own when the connection drops.
    pub async fn connect(url: &str) -> Result<Self, redis::RedisError> {
        let connection = connect(url).await?;
        Ok(Self {
            connection,
            prefix: "dsh-tools:approval:".to_owned(),
            max: crate::call::MemoryApprovalStore::DEFAULT_MAX,
        })
    }

    /// Keys start with `prefix` (to share a database with other uses, or between fleets).
    #[must_use]
    pub fn prefix(mut self, prefix: impl Into<String>) -> Self {
        self.prefix = prefix.into();
        self
    }

    /// At most `max` approvals pending at once; a call asking past it fails (unrun).
    #[must_use]
    pub fn max(mut self, max: usize) -> Self {
        self.max = max;
        self
    }

    fn key(&self, kind: &str, id: &str) -> String {
        format!("{}{kind}:{id}", self.prefix)
    }

    fn order(&self) -> String {
        format!("{}order", self.prefix)
    }

    fn decode(stored: &[u8], claimed: bool) -> Result<PendingApproval, ApprovalStoreError> {
        if stored.len() > MAX_APPROVAL_BYTES {
            return Err(unavailable(format!(
                "a stored approval is larger than {MAX_APPROVAL_BYTES} bytes"
            )));
        }
        let mut approval: PendingApproval = serde_json::from_slice(stored)
            .map_err(|e| unavailable(format!("a stored approval is not readable: {e}")))?;
        approval.claimed = claimed;
        Ok(approval)
    }
}

impl ApprovalStore for RedisApprovalStore {
    fn put(&self, approval: PendingApproval) -> BoxFuture<Result<(), ApprovalStoreError>> {
        let this = self.clone();
        Box::pin(async move {
            let json = serde_json::to_vec(&approval).map_err(unavailable)?;
            if json.len() > MAX_APPROVAL_BYTES {
                return Err(unavailable(format!(
                    "the approval is larger than {MAX_APPROVAL_BYTES} bytes as JSON; not kept"
                )));
            }
            let mut connection = this.connection.clone();
            // One step on the server: the cap, the sequence and the record with its place in
            // the order, so concurrent instances neither pass the cap nor list out of order.
            let stored: i64 = redis::cmd("EVAL")
                .arg(PUT)
                .arg(3)
                .arg(this.order())
                .arg(format!("{}seq", this.prefix))
                .arg(this.key("a", &approval.id))
                .arg(this.max)
                .arg(json)
                .arg(&approval.id)
                .query_async(&mut connection)
                .await
                .map_err(unavailable)?;
            match stored {
                1 => Ok(()),
                0 => Err(ApprovalStoreError::Full(this.max)),
                _ => Err(unavailable(format!(
                    "an approval with id {} is stored already",
                    approval.id
                ))),
            }
        })
    }

    fn get(&self, id: &str) -> BoxFuture<Result<Option<PendingApproval>, ApprovalStoreError>> {
        let (this, id) = (self.clone(), id.to_owned());
        Box::pin(async move {
            let mut connection = this.connection.clone();
            let (stored, claimed): (Option<Vec<u8>>, Option<String>) = redis::cmd("MGET")
                .arg(this.key("a", &id))
                .arg(this.key("c", &id))
                .query_async(&mut connection)
                .await
                .map_err(unavailable)?;
            stored
                .map(|s| Self::decode(&s, claimed.is_some()))
                .transpose()
        })
    }

    fn claim(&self, id: &str) -> BoxFuture<Result<Option<PendingApproval>, ApprovalStoreError>> {
        let (this, id) = (self.clone(), id.to_owned());
        Box::pin(async move {
            let mut connection = this.connection.clone();
            // One step on the server: of two claims one `SET NX` wins, and none can win for an
            // approval a winner already settled and removed (a late claim after a `GET` would).
            let won: Option<Vec<u8>> = redis::cmd("EVAL")
                .arg(CLAIM)
                .arg(2)
                .arg(this.key("a", &id))
                .arg(this.key("c", &id))
                .arg(crate::call::now_ms())
                .query_async(&mut connection)
                .await
                .map_err(unavailable)?;
            won.map(|stored| Self::decode(&stored, true)).transpose()
        })
    }

    fn remove(&self, id: &str) -> BoxFuture<Result<(), ApprovalStoreError>> {
        let (this, id) = (self.clone(), id.to_owned());
        Box::pin(async move {
            let mut connection = this.connection.clone();
            redis::pipe()
                .atomic()
                .cmd("DEL")
                .arg(this.key("a", &id))
                .arg(this.key("c", &id))
                .ignore()
                .cmd("ZREM")
                .arg(this.order())
                .arg(&id)
                .ignore()
                .query_async::<()>(&mut connection)
                .await
                .map_err(unavailable)
        })
    }

    fn list(
        &self,
        cursor: Option<String>,
        limit: usize,
    ) -> BoxFuture<Result<ApprovalPage, ApprovalStoreError>> {
        let this = self.clone();
        Box::pin(async move {
            let after = match cursor.as_deref().map(str::parse::<u64>) {
                None => 0,
                Some(Ok(seq)) => seq,
                Some(Err(_)) => {
                    return Err(ApprovalStoreError::BadCursor(cursor.unwrap_or_default()));
                }
            };
            let limit = limit.clamp(1, 1000);
            let mut connection = this.connection.clone();
            let entries: Vec<(String, u64)> = redis::cmd("ZRANGE")
                .arg(this.order())
                .arg(format!("({after}"))
                .arg("+inf")
                .arg("BYSCORE")
                .arg("LIMIT")
                .arg(0)
                .arg(limit)
                .arg("WITHSCORES")
                .query_async(&mut connection)
                .await
                .map_err(unavailable)?;
            if entries.is_empty() {
                return Ok(ApprovalPage::default());
            }
            let mut command = redis::cmd("MGET");
            for (id, _) in &entries {
                command.arg(this.key("a", id)).arg(this.key("c", id));
            }
            let stored: Vec<Option<Vec<u8>>> = command
                .query_async(&mut connection)
                .await
                .map_err(unavailable)?;
            let mut approvals = Vec::with_capacity(entries.len());
            for (pair, (id, _)) in stored.chunks(2).zip(&entries) {
                if let [Some(record), claimed] = pair {
                    // One unreadable record does not hide the others.
                    match Self::decode(record, claimed.is_some()) {
                        Ok(approval) => approvals.push(approval),
                        Err(e) => tracing::warn!("pending approval {id} is skipped: {e}"),
                    }
                }
            }
            let next = (entries.len() == limit).then(|| entries[entries.len() - 1].1.to_string());
            Ok(ApprovalPage { approvals, next })
        })
    }
}

/// Creates task `ARGV[3]` (JSON `ARGV[2]`, version `ARGV[4]`) at `KEYS[3]`, in the order of
/// all tasks `KEYS[1]` and of its owner `KEYS[4]` under the next sequence `KEYS[2]`, unless
/// `ARGV[1]` tasks are kept (0) or the id is taken (-1). First, up to 100 tasks whose records
/// expired by `ARGV[5]` (the set `KEYS[5]`, by expiry) leave the count.
const CREATE_TASK: &str = "local old = redis.call('ZRANGE', KEYS[5], '-inf', ARGV[5], 'BYSCORE', 'LIMIT', 0, 100) \
    if #old > 0 then redis.call('ZREM', KEYS[1], unpack(old)) redis.call('ZREM', KEYS[5], unpack(old)) end \
    if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[1]) then return 0 end \
    if redis.call('EXISTS', KEYS[3]) == 1 then return -1 end \
    local seq = redis.call('INCR', KEYS[2]) \
    redis.call('HSET', KEYS[3], 'v', ARGV[4], 'j', ARGV[2]) \
    redis.call('ZADD', KEYS[1], seq, ARGV[3]) \
    redis.call('ZADD', KEYS[4], seq, ARGV[3]) \
    return 1";

/// Replaces task `KEYS[1]` with version `ARGV[2]` and JSON `ARGV[3]` if it is at version
/// `ARGV[1]` (1) or not (0); expires it at `ARGV[4]` ms since the epoch when not empty, and
/// notes id `ARGV[5]` in the set of expiring tasks `KEYS[2]`.
const REPLACE_TASK: &str = "if redis.call('HGET', KEYS[1], 'v') ~= ARGV[1] then return 0 end \
    redis.call('HSET', KEYS[1], 'v', ARGV[2], 'j', ARGV[3]) \
    if ARGV[4] ~= '' then redis.call('PEXPIREAT', KEYS[1], ARGV[4]) \
        redis.call('ZADD', KEYS[2], ARGV[4], ARGV[5]) end \
    return 1";

/// The largest task record stored (its result included).
const MAX_TASK_BYTES: usize = 8 * 1024 * 1024;

/// Tasks in Redis (or Valkey), so that every instance of a fleet answers for every task:
/// give each the same store with [`Tasks::with_store`](crate::task::Tasks::with_store).
///
/// Under a prefix (`dsh-tools:task:` by default): `t:<id>` is a hash of the record's version
/// (`v`) and JSON (`j`), replaced by a script only over the version it was read at (the
/// [`TaskStore`] contract); `all` and `o:<owner>` are sorted sets of
/// ids by a sequence (`seq`) that page cursors name. An ended task's record expires at its
/// [expiry](crate::task::TaskRecord::expires_at_ms) (`PEXPIREAT`, noted in `expiring`); its id
/// leaves `all` when a later task is created, and its owner's set when a listing finds it
/// gone. At most [`max`](Self::max) tasks are kept (10,000), each record
/// at most 8 MiB as JSON ([`TaskStoreError::TooLarge`]
/// past it). Each command waits at most 2 s.
///
/// ```no_run
/// use dsh_tools::Registry;
/// use dsh_tools::durable::RedisTaskStore;
/// use dsh_tools::task::Tasks;
///
/// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
/// let registry = Registry::new();
/// let tasks = Tasks::with_store(&registry, RedisTaskStore::connect("redis://redis.internal:6379/0").await?);
/// # let _ = tasks;
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct RedisTaskStore {
    connection: redis::aio::ConnectionManager,
    prefix: String,
    max: usize,
}

impl fmt::Debug for RedisTaskStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RedisTaskStore")
            .field("prefix", &self.prefix)
            .field("max", &self.max)
            .finish_non_exhaustive()
    }
}

fn task_unavailable(e: impl fmt::Display) -> TaskStoreError {
    TaskStoreError::Unavailable(e.to_string())
}

impl RedisTaskStore {
    /// Connects to `url` (`redis://[user:password@]host[:port][/db]`, `redis+unix://…`),
    /// reconnecting on its own when the connection drops.
    pub async fn connect(url: &str) -> Result<Self, redis::RedisError> {
        let connection = connect(url).await?;
        Ok(Self {
            connection,
            prefix: "dsh-tools:task:".to_owned(),
            max: crate::task::MemoryTaskStore::DEFAULT_MAX,
        })
    }

    /// Keys start with `prefix` (to share a database with other uses, or between fleets).
    #[must_use]
    pub fn prefix(mut self, prefix: impl Into<String>) -> Self {
        self.prefix = prefix.into();
        self
    }

    /// At most `max` tasks kept at once; a task started past it is not started.
    #[must_use]
    pub fn max(mut self, max: usize) -> Self {
        self.max = max;
        self
    }

    fn task(&self, id: &str) -> String {
        format!("{}t:{id}", self.prefix)
    }

    fn owner(&self, owner: Option<&str>) -> String {
        match owner {
            // `+` marks a subject, `-` none: no subject's key is the anonymous one.
            Some(owner) => format!("{}o:+{owner}", self.prefix),
            None => format!("{}o:-", self.prefix),
        }
    }

    fn encode(task: &TaskRecord) -> Result<Vec<u8>, TaskStoreError> {
        let json = serde_json::to_vec(task).map_err(task_unavailable)?;
        if json.len() > MAX_TASK_BYTES {
            return Err(TaskStoreError::TooLarge(json.len(), MAX_TASK_BYTES));
        }
        Ok(json)
    }

    fn decode(stored: &[u8]) -> Result<TaskRecord, TaskStoreError> {
        if stored.len() > MAX_TASK_BYTES {
            return Err(task_unavailable(format!(
                "a stored task is larger than {MAX_TASK_BYTES} bytes"
            )));
        }
        serde_json::from_slice(stored)
            .map_err(|e| task_unavailable(format!("a stored task is not readable: {e}")))
    }
}

impl TaskStore for RedisTaskStore {
    fn create(&self, task: TaskRecord) -> BoxFuture<Result<(), TaskStoreError>> {
        let this = self.clone();
        Box::pin(async move {
            let json = Self::encode(&task)?;
            let mut connection = this.connection.clone();
            let created: i64 = redis::cmd("EVAL")
                .arg(CREATE_TASK)
                .arg(5)
                .arg(format!("{}all", this.prefix))
                .arg(format!("{}seq", this.prefix))
                .arg(this.task(&task.id))
                .arg(this.owner(task.owner.as_deref()))
                .arg(format!("{}expiring", this.prefix))
                .arg(this.max)
                .arg(json)
                .arg(&task.id)
                .arg(task.version)
                .arg(crate::call::now_ms())
                .query_async(&mut connection)
                .await
                .map_err(task_unavailable)?;
            match created {
                1 => Ok(()),
                0 => Err(TaskStoreError::Full(this.max)),
                _ => Err(TaskStoreError::Exists(task.id)),
            }
        })
    }

    fn get(&self, id: &str) -> BoxFuture<Result<Option<TaskRecord>, TaskStoreError>> {
        let (this, id) = (self.clone(), id.to_owned());
        Box::pin(async move {
            let mut connection = this.connection.clone();
            let stored: Option<Vec<u8>> = redis::cmd("HGET")
                .arg(this.task(&id))
                .arg("j")
                .query_async(&mut connection)
                .await
                .map_err(task_unavailable)?;
            let task = stored.map(|s| Self::decode(&s)).transpose()?;
            Ok(task.filter(|t| !t.is_expired(crate::call::now_ms())))
        })
    }

    fn replace(&self, task: TaskRecord, expected: u64) -> BoxFuture<Result<bool, TaskStoreError>> {
        let this = self.clone();
        Box::pin(async move {
            let json = Self::encode(&task)?;
            let expires = task
                .expires_at_ms()
                .map_or_else(String::new, |at| at.to_string());
            let mut connection = this.connection.clone();
            let replaced: i64 = redis::cmd("EVAL")
                .arg(REPLACE_TASK)
                .arg(2)
                .arg(this.task(&task.id))
                .arg(format!("{}expiring", this.prefix))
                .arg(expected)
                .arg(task.version)
                .arg(json)
                .arg(expires)
                .arg(&task.id)
                .query_async(&mut connection)
                .await
                .map_err(task_unavailable)?;
            Ok(replaced == 1)
        })
    }

    fn list(
        &self,
        owner: Option<String>,
        cursor: Option<String>,
        limit: usize,
    ) -> BoxFuture<Result<TaskPage, TaskStoreError>> {
        let this = self.clone();
        Box::pin(async move {
            let after = match cursor.as_deref().map(str::parse::<u64>) {
                None => 0,
                Some(Ok(seq)) => seq,
                Some(Err(_)) => return Err(TaskStoreError::BadCursor(cursor.unwrap_or_default())),
            };
            let limit = limit.clamp(1, 1000);
            let owned = this.owner(owner.as_deref());
            let mut connection = this.connection.clone();
            let entries: Vec<(String, u64)> = redis::cmd("ZRANGE")
                .arg(&owned)
                .arg(format!("({after}"))
                .arg("+inf")
                .arg("BYSCORE")
                .arg("LIMIT")
                .arg(0)
                .arg(limit)
                .arg("WITHSCORES")
                .query_async(&mut connection)
                .await
                .map_err(task_unavailable)?;
            if entries.is_empty() {
                return Ok(TaskPage::default());
            }
            // One round trip for the page's records.
            let mut reads = redis::pipe();
            for (id, _) in &entries {
                reads.cmd("HGET").arg(this.task(id)).arg("j");
            }
            let records: Vec<Option<Vec<u8>>> = reads
                .query_async(&mut connection)
                .await
                .map_err(task_unavailable)?;
            let mut tasks = Vec::with_capacity(entries.len());
            let mut gone = Vec::new();
            let now = crate::call::now_ms();
            for ((id, _), stored) in entries.iter().zip(records) {
                match stored.map(|s| Self::decode(&s)) {
                    None => gone.push(id.clone()),
                    Some(Ok(task)) if task.is_expired(now) => gone.push(id.clone()),
                    Some(Ok(task)) => tasks.push(task),
                    // One unreadable record does not hide the others.
                    Some(Err(e)) => tracing::warn!("task {id} is skipped: {e}"),
                }
            }
            if !gone.is_empty() {
                let _: Result<(), _> = redis::pipe()
                    .cmd("ZREM")
                    .arg(&owned)
                    .arg(&gone)
                    .ignore()
                    .cmd("ZREM")
                    .arg(format!("{}all", this.prefix))
                    .arg(&gone)
                    .ignore()
                    .query_async(&mut connection)
                    .await;
            }
            let next = (entries.len() == limit).then(|| entries[entries.len() - 1].1.to_string());
            Ok(TaskPage::new(tasks, next))
        })
    }
}

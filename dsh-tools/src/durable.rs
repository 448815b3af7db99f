//! Stores that outlive a process (feature `redis`): deferred approvals in Redis or Valkey, so
//! that an approval asked on one instance is answered on another, or after a restart.

use crate::call::{ApprovalPage, ApprovalStore, ApprovalStoreError, BoxFuture, PendingApproval};
use std::fmt;
use std::time::Duration;

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
        let client = redis::Client::open(url)?;
        let config = redis::aio::ConnectionManagerConfig::new()
            .set_connection_timeout(Some(Duration::from_secs(2)))
            .set_response_timeout(Some(Duration::from_secs(2)))
            .set_number_of_retries(2);
        let connection = client.get_connection_manager_with_config(config).await?;
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

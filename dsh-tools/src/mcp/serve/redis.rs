//! A session store in Redis or Valkey (feature `mcp-redis`), shared by every instance of a fleet.

use rmcp::transport::streamable_http_server::session::store::{
    SessionState, SessionStore, SessionStoreError,
};
use std::fmt;
use std::time::Duration;

/// The largest stored session read back (an `initialize` request's parameters).
const MAX_STATE_BYTES: usize = 1024 * 1024;

/// 2025-11-25 sessions kept in Redis (or Valkey), so that every instance behind a load balancer
/// without affinity serves every session: give each instance the same store with
/// [`HttpConfig::session_store`](crate::mcp::HttpConfig::session_store).
///
/// Each session is one key, `<prefix><session id>` (prefix `dsh-tools:mcp:session:`), holding
/// its `initialize` parameters as JSON; it expires after [`ttl`](Self::ttl) (10 minutes) and
/// every read pushes the expiry back. `DELETE` removes it. Keep the TTL at least the session
/// idle timeout ([`HttpConfig::session_idle_timeout`](crate::mcp::HttpConfig::session_idle_timeout),
/// 5 minutes): a session whose requests all land on one instance is not read from the store,
/// so its key can expire while it lives there, and a request that then lands elsewhere gets
/// `404` (the client starts a new session, as the spec says it must). A longer TTL keeps idle
/// sessions restorable for that long. Redis being out of reach fails the requests
/// of sessions the instance does not hold itself, not the instance.
///
/// ```no_run
/// use dsh_tools::mcp::{HttpConfig, RedisSessionStore};
/// use std::sync::Arc;
///
/// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
/// let store = RedisSessionStore::connect("redis://redis.internal:6379/0").await?;
/// let config = HttpConfig::default().session_store(Arc::new(store));
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct RedisSessionStore {
    connection: redis::aio::ConnectionManager,
    prefix: String,
    ttl: Duration,
}

impl fmt::Debug for RedisSessionStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RedisSessionStore")
            .field("prefix", &self.prefix)
            .field("ttl", &self.ttl)
            .finish_non_exhaustive()
    }
}

impl RedisSessionStore {
    /// Connects to `url` (`redis://[user:password@]host[:port][/db]`, or `rediss://` for TLS when
    /// the `redis` crate is built with it), reconnecting on its own when the connection drops.
    /// Each command waits at most 2 s for its answer.
    pub async fn connect(url: &str) -> Result<Self, redis::RedisError> {
        let connection = crate::durable::connect(url).await?;
        Ok(Self {
            connection,
            prefix: "dsh-tools:mcp:session:".to_owned(),
            ttl: Duration::from_secs(600),
        })
    }

    /// Keys start with `prefix` (to share a database with other uses, or between fleets).
    pub fn prefix(mut self, prefix: impl Into<String>) -> Self {
        self.prefix = prefix.into();
        self
    }

    /// A session no instance read for this long is forgotten (at least a second).
    pub fn ttl(mut self, ttl: Duration) -> Self {
        self.ttl = ttl.max(Duration::from_secs(1));
        self
    }

    fn key(&self, id: &str) -> String {
        format!("{}{id}", self.prefix)
    }
}

impl SessionStore for RedisSessionStore {
    fn load<'a, 'b, 'r>(
        &'a self,
        session_id: &'b str,
    ) -> std::pin::Pin<
        Box<
            dyn std::future::Future<Output = Result<Option<SessionState>, SessionStoreError>>
                + Send
                + 'r,
        >,
    >
    where
        'a: 'r,
        'b: 'r,
    {
        Box::pin(async move {
            let mut connection = self.connection.clone();
            // GETEX: read and push the expiry back in one step.
            let stored: Option<Vec<u8>> = redis::cmd("GETEX")
                .arg(self.key(session_id))
                .arg("EX")
                .arg(self.ttl.as_secs())
                .query_async(&mut connection)
                .await?;
            let Some(stored) = stored else {
                return Ok(None);
            };
            if stored.len() > MAX_STATE_BYTES {
                return Err(format!(
                    "stored session {session_id:?} is larger than {MAX_STATE_BYTES} bytes"
                )
                .into());
            }
            Ok(Some(serde_json::from_slice(&stored)?))
        })
    }

    fn store<'a, 'b, 'c, 'r>(
        &'a self,
        session_id: &'b str,
        state: &'c SessionState,
    ) -> std::pin::Pin<
        Box<dyn std::future::Future<Output = Result<(), SessionStoreError>> + Send + 'r>,
    >
    where
        'a: 'r,
        'b: 'r,
        'c: 'r,
    {
        Box::pin(async move {
            let json = serde_json::to_vec(state)?;
            // Refused here rather than stored and then unreadable on every other instance.
            if json.len() > MAX_STATE_BYTES {
                return Err(format!(
                    "session {session_id:?} is larger than {MAX_STATE_BYTES} bytes; not stored"
                )
                .into());
            }
            let mut connection = self.connection.clone();
            let () = redis::cmd("SET")
                .arg(self.key(session_id))
                .arg(json)
                .arg("EX")
                .arg(self.ttl.as_secs())
                .query_async(&mut connection)
                .await?;
            Ok(())
        })
    }

    fn delete<'a, 'b, 'r>(
        &'a self,
        session_id: &'b str,
    ) -> std::pin::Pin<
        Box<dyn std::future::Future<Output = Result<(), SessionStoreError>> + Send + 'r>,
    >
    where
        'a: 'r,
        'b: 'r,
    {
        Box::pin(async move {
            let mut connection = self.connection.clone();
            let _: i64 = redis::cmd("DEL")
                .arg(self.key(session_id))
                .query_async(&mut connection)
                .await?;
            Ok(())
        })
    }
}

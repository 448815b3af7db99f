//! Deferred approvals: a call whose `ask` no grant answers settles as a [`PendingApproval`]
//! instead of waiting, kept in an [`ApprovalStore`] until someone answers it, maybe from
//! another process, maybe after a restart.

use super::caller::Caller;
use super::decision::ApprovalOutcome;
use super::execution::AgentId;
use super::future::BoxFuture;
use super::grant::GrantKey;
use super::result::ToolExecutionResult;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::{BTreeMap, HashMap};
use std::sync::Mutex;

/// A call waiting for a person: everything the pipeline needs to continue it, serializable.
///
/// Its pre-execute hooks already ran (they decided `ask`); resuming it
/// ([`Registry::resume`](crate::Registry::resume)) applies the answer and runs every later
/// stage: guards, wrappers, the body, post-execute, `finalize_content`, observers.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PendingApproval {
    /// The approval's id: 128 random bits as hex, stable for its life.
    pub id: String,
    /// The model's call id.
    pub call_id: String,
    /// The top-level call id, when the call is nested.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub root_call_id: Option<String>,
    /// The tool's name.
    pub tool: String,
    /// The arguments as the pipeline snapshotted them.
    pub arguments: Value,
    /// The `ask` decision's reason.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The agent the call ran for; only it may answer.
    pub agent: AgentId,
    /// Who asked for the call, when a transport authenticated them; only they may answer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub caller: Option<Caller>,
    /// The key an "always" answer is remembered under (see
    /// [`ApprovalRequest::grant`](crate::ApprovalRequest::grant)).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub grant: Option<GrantKey>,
    /// Whether the tool accepts edited arguments.
    #[serde(default)]
    pub editable: bool,
    /// When it was asked, in milliseconds since the Unix epoch.
    pub asked_at_ms: u64,
    /// Set by the store once an answer claimed it: the call is being (or was) run, and no
    /// other answer is taken. A claimed approval left in a store means its process stopped
    /// while running the call; it is never run again by itself.
    #[serde(default)]
    pub claimed: bool,
    /// The `run_code` call whose program made this call, when a program did (Code Mode in
    /// deferred mode): the approval is answered by resuming that program
    /// ([`Registry::resume_program`](crate::Registry::resume_program)), never alone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub program: Option<String>,
}

/// A `run_code` call (Code Mode) run in deferred mode whose program made a call that asks: the
/// program was stopped there, and is run again from the start when the approval is answered
/// ([`Registry::resume_program`](crate::Registry::resume_program)). Serializable, like
/// [`PendingApproval`].
///
/// On the replay, the program's calls before the waiting one are answered from the
/// [`journal`](Self::journal) in submission order (never run again, no hook or observer
/// sees them twice), the waiting call runs with the answer, and the calls after it run as in
/// any run (one that asks stops the program again). A replay that makes another call than the
/// one journaled at that place, or never makes the waiting one, fails the `run_code` call and
/// runs nothing more: a program that depends on anything but its tools' answers (the clock,
/// randomness) cannot be resumed.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PendingProgram {
    /// What the program waits for: the approval of its call number [`waiting`](Self::waiting)
    /// (its `program` names this `run_code` call).
    pub approval: PendingApproval,
    /// The waiting call's number in the program (1-based, in the order the program made its
    /// calls).
    pub waiting: u64,
    /// The `run_code` call's id.
    pub call_id: String,
    /// The top-level call id, when the `run_code` call was nested.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub root_call_id: Option<String>,
    /// The `run_code` call's arguments (`code`, `description`).
    pub arguments: Value,
    /// What the program's calls before the waiting one settled as, in submission order.
    pub journal: Vec<ReplayedCall>,
}

/// A call a stopped program made before the one it waits for, as it settled.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ReplayedCall {
    /// Its number in the program (1-based, submission order).
    pub n: u64,
    /// The tool.
    pub tool: String,
    /// The arguments the program gave.
    pub arguments: Value,
    /// Its result.
    pub result: ToolExecutionResult,
}

/// One page of pending approvals, oldest first.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ApprovalPage {
    /// The approvals.
    pub approvals: Vec<PendingApproval>,
    /// Where the next page starts (opaque), `None` after the last.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next: Option<String>,
}

/// Why a store could not do what was asked. Nothing is lost on an error: a `put` that failed
/// kept nothing (the call fails, unrun), a `claim` that failed left the approval pending.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ApprovalStoreError {
    /// The store holds as many approvals as it may.
    #[error("the approval store is full ({0} pending approvals)")]
    Full(usize),
    /// The store could not be reached or answered with an error.
    #[error("the approval store failed: {0}")]
    Unavailable(String),
    /// A page cursor that is not one of this store's.
    #[error("not a page cursor of this approval store: {0:?}")]
    BadCursor(String),
}

/// Where pending approvals wait: in memory by default
/// ([`MemoryApprovalStore`]), in Redis with the `mcp-redis` feature
/// (`durable::RedisApprovalStore`) so that one instance can answer
/// what another asked, or after a restart.
///
/// The contract: `claim` is atomic (of two claims of one id, at most one gets the approval),
/// and an approval is never given out twice.
pub trait ApprovalStore: Send + Sync + 'static {
    /// Keeps a new approval.
    fn put(&self, approval: PendingApproval) -> BoxFuture<Result<(), ApprovalStoreError>>;
    /// The approval `id`, claimed or not.
    fn get(&self, id: &str) -> BoxFuture<Result<Option<PendingApproval>, ApprovalStoreError>>;
    /// Marks approval `id` claimed and gives it out, once: `None` when there is none or it was
    /// claimed already.
    fn claim(&self, id: &str) -> BoxFuture<Result<Option<PendingApproval>, ApprovalStoreError>>;
    /// Forgets approval `id` (its call settled).
    fn remove(&self, id: &str) -> BoxFuture<Result<(), ApprovalStoreError>>;
    /// Up to `limit` approvals after `cursor` (a page's `next`), oldest first.
    fn list(
        &self,
        cursor: Option<String>,
        limit: usize,
    ) -> BoxFuture<Result<ApprovalPage, ApprovalStoreError>>;
}

/// The default store: approvals in this process's memory, at most
/// [`MemoryApprovalStore::DEFAULT_MAX`] at once.
#[derive(Debug)]
pub struct MemoryApprovalStore {
    max: usize,
    inner: Mutex<Memory>,
}

#[derive(Debug, Default)]
struct Memory {
    next: u64,
    order: BTreeMap<u64, String>,
    by_id: HashMap<String, (u64, PendingApproval)>,
}

impl Default for MemoryApprovalStore {
    fn default() -> Self {
        Self::new(Self::DEFAULT_MAX)
    }
}

impl MemoryApprovalStore {
    /// How many approvals the default store keeps at once: 10,000.
    pub const DEFAULT_MAX: usize = 10_000;

    /// A store keeping at most `max` approvals; a call asking past it fails (unrun) with
    /// [`ApprovalStoreError::Full`].
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

impl ApprovalStore for MemoryApprovalStore {
    fn put(&self, approval: PendingApproval) -> BoxFuture<Result<(), ApprovalStoreError>> {
        let mut memory = self.lock();
        let outcome = if memory.by_id.len() >= self.max {
            Err(ApprovalStoreError::Full(self.max))
        } else if memory.by_id.contains_key(&approval.id) {
            Err(ApprovalStoreError::Unavailable(format!(
                "an approval with id {} is kept already",
                approval.id
            )))
        } else {
            memory.next += 1;
            let seq = memory.next;
            memory.order.insert(seq, approval.id.clone());
            memory.by_id.insert(approval.id.clone(), (seq, approval));
            Ok(())
        };
        Box::pin(std::future::ready(outcome))
    }

    fn get(&self, id: &str) -> BoxFuture<Result<Option<PendingApproval>, ApprovalStoreError>> {
        let found = self.lock().by_id.get(id).map(|(_, a)| a.clone());
        Box::pin(std::future::ready(Ok(found)))
    }

    fn claim(&self, id: &str) -> BoxFuture<Result<Option<PendingApproval>, ApprovalStoreError>> {
        let mut memory = self.lock();
        let claimed = match memory.by_id.get_mut(id) {
            Some((_, approval)) if !approval.claimed => {
                approval.claimed = true;
                Some(approval.clone())
            }
            _ => None,
        };
        Box::pin(std::future::ready(Ok(claimed)))
    }

    fn remove(&self, id: &str) -> BoxFuture<Result<(), ApprovalStoreError>> {
        let mut memory = self.lock();
        if let Some((seq, _)) = memory.by_id.remove(id) {
            memory.order.remove(&seq);
        }
        Box::pin(std::future::ready(Ok(())))
    }

    fn list(
        &self,
        cursor: Option<String>,
        limit: usize,
    ) -> BoxFuture<Result<ApprovalPage, ApprovalStoreError>> {
        let after = match cursor.as_deref().map(str::parse::<u64>) {
            None => Ok(0),
            Some(Ok(seq)) => Ok(seq),
            Some(Err(_)) => Err(ApprovalStoreError::BadCursor(
                cursor.clone().unwrap_or_default(),
            )),
        };
        let page = after.map(|after| {
            let memory = self.lock();
            let limit = limit.max(1);
            let mut approvals = Vec::new();
            let mut next = None;
            let mut last = after;
            let later = (std::ops::Bound::Excluded(after), std::ops::Bound::Unbounded);
            for (&seq, id) in memory.order.range(later) {
                if approvals.len() == limit {
                    next = Some(last.to_string());
                    break;
                }
                if let Some((_, approval)) = memory.by_id.get(id) {
                    approvals.push(approval.clone());
                }
                last = seq;
            }
            ApprovalPage { approvals, next }
        });
        Box::pin(std::future::ready(page))
    }
}

/// What a call run with [`Registry::execute_deferred`](crate::Registry::execute_deferred) settled as.
#[derive(Debug)]
#[allow(clippy::large_enum_variant)]
pub enum Deferred {
    /// It ran (or failed) to the end.
    Settled(ToolExecutionResult),
    /// It waits for a person: answer it with [`Registry::resume`](crate::Registry::resume).
    Pending(PendingApproval),
    /// A `run_code` call whose program waits for a person: answer it with
    /// [`Registry::resume_program`](crate::Registry::resume_program).
    Program(PendingProgram),
}

/// An answer to a [`PendingApproval`], for [`Registry::resume`](crate::Registry::resume).
#[derive(Clone, Debug)]
pub struct ApprovalAnswer {
    /// The approval's id.
    pub approval_id: String,
    /// The answer.
    pub outcome: ApprovalOutcome,
    /// Who answers: the agent the approval was asked for.
    pub agent: AgentId,
    /// On whose behalf, when the approval's call had an authenticated caller: the same
    /// principal (subject, issuer, client).
    pub caller: Option<Caller>,
    /// The resumed call's cancellation signal.
    pub signal: tokio_util::sync::CancellationToken,
}

impl ApprovalAnswer {
    /// `outcome` for approval `approval_id`, answered for `agent`.
    pub fn new(
        approval_id: impl Into<String>,
        outcome: ApprovalOutcome,
        agent: impl Into<AgentId>,
    ) -> Self {
        Self {
            approval_id: approval_id.into(),
            outcome,
            agent: agent.into(),
            caller: None,
            signal: tokio_util::sync::CancellationToken::new(),
        }
    }

    /// Answered on behalf of `caller`.
    #[must_use]
    pub fn caller(mut self, caller: Caller) -> Self {
        self.caller = Some(caller);
        self
    }

    /// The resumed call's cancellation signal.
    #[must_use]
    pub fn signal(mut self, signal: tokio_util::sync::CancellationToken) -> Self {
        self.signal = signal;
        self
    }
}

/// Why [`Registry::resume`](crate::Registry::resume) continued nothing. The approval, when there is one, stays as it was.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ResumeError {
    /// No such approval: never asked, or answered and settled.
    #[error("no pending approval {0:?}: it was never asked, or it was answered already")]
    Unknown(String),
    /// Another answer claimed it first: its call ran, or is running.
    #[error("approval {0:?} was answered already: its call is not run again")]
    AlreadyAnswered(String),
    /// The answer came for another agent (which agent it was asked for is not said).
    #[error("approval {id:?} was not asked for agent {agent:?}")]
    WrongAgent {
        /// The approval.
        id: String,
        /// The agent that answered.
        agent: String,
    },
    /// The answer's signal fired before it was applied; the approval still waits.
    #[error("the answer to approval {0:?} was cancelled before its call started; it still waits")]
    Cancelled(String),
    /// The answer came on behalf of another caller (or of none).
    #[error("approval {0:?} belongs to another caller")]
    WrongCaller(String),
    /// The store failed; the approval is as it was.
    #[error("{0}")]
    Store(#[from] ApprovalStoreError),
    /// The approval's call was made by a `run_code` program: resume the program
    /// ([`Registry::resume_program`](crate::Registry::resume_program)), not the call alone.
    #[error("approval {0:?} belongs to a run_code program: resume the program, not the call alone")]
    InProgram(String),
}

/// 128 random bits as 32 hex digits.
pub(crate) fn approval_id() -> String {
    let mut bytes = [0u8; 16];
    if getrandom::fill(&mut bytes).is_err() {
        // No OS randomness (never seen on a supported platform): a process-unique fallback.
        use std::hash::{BuildHasher, Hasher};
        let state = std::collections::hash_map::RandomState::new();
        for chunk in bytes.chunks_mut(8) {
            let mut hasher = state.build_hasher();
            hasher.write_u128(
                std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map_or(0, |d| d.as_nanos()),
            );
            chunk.copy_from_slice(&hasher.finish().to_le_bytes());
        }
    }
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Now, in milliseconds since the Unix epoch.
pub(crate) fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

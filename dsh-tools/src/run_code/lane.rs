//! The lane of one `run_code` run (Code Mode spec §4.4–§4.8): how the calls a program makes
//! ([`Run`](super::run::Run)) are started, dispatched and committed.
//!
//! One ordered lane runs every ordered stage of every sub-call, one at a time: the start (the
//! start record, then pre-execute, approval and guards) in submission order, and the commit
//! (post-execute, finalizer, observers, the contexts handed to the outer call, the settle record)
//! in submission order. Only dispatches (wrappers and body) overlap: consecutive parallel calls
//! up to the registry's `max_parallel_sub_calls`; an exclusive call waits for the pool to drain,
//! runs alone and holds a barrier until its commit is done. When the run settles, queued calls
//! are abandoned and every started call is drained and committed before the outer result exists.

use super::placement::{Observed, Placements};
use super::replay::Step;
use super::run::{Entry, Held, Inbox, Reply, Run, Stop, abandon};
use crate::call::ToolRunContext;
use crate::call::{
    AgentId, ApprovalOutcome, BoxFuture, PendingApproval, ReplayedCall, ToolExecutionInput,
    ToolExecutionResult,
};
use crate::code::{CodeDispatchKind, CodeDispatchRecord};
use crate::content::UserMessage;
use crate::error::ToolError;
use futures_util::FutureExt;
use futures_util::stream::{FuturesUnordered, StreamExt};
use serde_json::{Value, json};
use std::collections::VecDeque;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use tokio::sync::{mpsc, oneshot};
use tokio_util::sync::CancellationToken;

/// The pipeline's stages as the lane uses them. The registry implements it (with the scheduler,
/// a layer up), so the bridge names no layer above its own.
pub(crate) trait Stages: Clone + Send + Sync + 'static {
    /// A call after its start stage: either still to dispatch, or already settled.
    type Started: Send + 'static;
    /// Whether the call may overlap with other parallel calls (unknown or undeclared: no).
    fn parallel(&self, input: &ToolExecutionInput) -> bool;
    /// Creation, pre-execute, approval, guards.
    fn start(&self, input: ToolExecutionInput) -> BoxFuture<Self::Started>;
    /// [`start`](Self::start) in deferred mode, for a call of `run_code` call `program`'s
    /// program: an `ask` no grant answers is kept in the approval store, not waited for.
    fn start_deferred(
        &self,
        input: ToolExecutionInput,
        program: String,
    ) -> BoxFuture<Self::Started>;
    /// The approval a deferred start kept, or the started call as it is.
    fn pending(started: Self::Started) -> Result<Box<PendingApproval>, Self::Started>;
    /// Runs `input`, the call of a claimed approval asked for `agent`, with `outcome` as the
    /// answer: every stage after the approval, to its result.
    fn resume_claimed(
        &self,
        agent: AgentId,
        outcome: ApprovalOutcome,
        input: ToolExecutionInput,
    ) -> BoxFuture<ToolExecutionResult>;
    /// Whether the started call still has to dispatch.
    fn dispatches(started: &Self::Started) -> bool;
    /// Wrappers and body.
    fn dispatch(&self, started: Self::Started) -> BoxFuture<Self::Started>;
    /// Post-execute (for a post-result), finalizer, observers.
    fn commit(&self, started: Self::Started) -> BoxFuture<ToolExecutionResult>;
    /// Hands one record to the registry's observers.
    fn record(&self, agent: &AgentId, record: &CodeDispatchRecord);
    /// The most dispatches in flight at once (at least 1).
    fn max_parallel(&self) -> usize;
    /// Where each tool's dispatches are polled ([`placement`](super::placement)).
    fn placements(&self) -> Arc<Placements>;
    /// What the program receives for the value of a call of `name` (its tool's
    /// [`program_value`](crate::ToolDefinition::program_value)): from the started call's tool
    /// when there is one, else looked up for `agent` (a journaled call, answered on replay).
    fn program_view(
        &self,
        started: Option<&Self::Started>,
        name: &str,
        agent: Option<&AgentId>,
    ) -> Option<crate::definition::ProgramValueFn>;
}

/// A dispatch in the lane's pool: the call's number and its stage, or why it was lost.
type Dispatch<S> = BoxFuture<(u64, Result<S, String>)>;

/// A dispatch task that is aborted when the lane lets go of it (the lane dropped with its run).
struct AbortOnDrop<T>(tokio::task::JoinHandle<T>);

impl<T> Drop for AbortOnDrop<T> {
    fn drop(&mut self) {
        self.0.abort();
    }
}

impl<T> std::future::Future for AbortOnDrop<T> {
    type Output = Result<T, tokio::task::JoinError>;

    fn poll(
        self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Self::Output> {
        std::pin::Pin::new(&mut self.get_mut().0).poll(cx)
    }
}

/// Call `n`'s dispatch, polled where its tool's [`Placements`] say: as a task of its own on the
/// host's runtime, or, for a tool that proved quick, first on the thread that polls the lane
/// (settled in that poll: no thread woken), the rest of it as a task (a dispatch that waits keeps
/// going while the lane awaits another call's start or commit, and never blocks the lane's thread
/// after its first poll). Without a runtime to spawn on, it is polled where the lane is.
fn place<S: Stages>(stages: &S, n: u64, name: &str, started: S::Started) -> Dispatch<S::Started> {
    let placements = stages.placements();
    let tool: Arc<str> = Arc::from(name);
    let future = stages.dispatch(started);
    let lost = |e: &dyn std::fmt::Display| format!("tool dispatch task failed: {e}");
    let Ok(handle) = tokio::runtime::Handle::try_current() else {
        return Box::pin(async move {
            let settled = std::panic::AssertUnwindSafe(future).catch_unwind().await;
            (n, settled.map_err(|_| lost(&"it panicked")))
        });
    };
    if !placements.inline(name) {
        let task = AbortOnDrop(handle.spawn(Observed {
            future,
            tool,
            placements,
            first: true,
        }));
        return Box::pin(async move { (n, task.await.map_err(|e| lost(&e))) });
    }
    let mut future = Some(future);
    Box::pin(async move {
        let first = std::future::poll_fn(|cx| {
            let Some(pending) = future.as_mut() else {
                return std::task::Poll::Ready(Some(Err(lost(&"it was polled after it settled"))));
            };
            let started = std::time::Instant::now();
            let polled = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                pending.as_mut().poll(cx)
            }));
            if started.elapsed() > super::placement::SLOW {
                placements.demote(&tool);
            }
            std::task::Poll::Ready(match polled {
                Ok(std::task::Poll::Ready(stage)) => Some(Ok(stage)),
                Ok(std::task::Poll::Pending) => None,
                Err(_) => Some(Err(lost(&"it panicked"))),
            })
        })
        .await;
        match (first, future.take()) {
            (Some(settled), _) => (n, settled),
            (None, Some(rest)) => {
                let task = AbortOnDrop(handle.spawn(rest));
                (n, task.await.map_err(|e| lost(&e)))
            }
            (None, None) => (n, Err(lost(&"it was lost"))),
        }
    })
}

/// A settle record waiting for its call's value to reach the program.
struct PendingRecord {
    delivered: oneshot::Receiver<()>,
    agent: AgentId,
    record: CodeDispatchRecord,
}

/// Completes once the oldest waiting record may be written (never, when none waits).
async fn oldest_delivered(records: &mut VecDeque<PendingRecord>) {
    match records.front_mut() {
        Some(pending) => {
            let _ = (&mut pending.delivered).await;
        }
        None => std::future::pending().await,
    }
}

/// Writes, in commit order, every waiting record whose value reached the program.
fn write_delivered<S: Stages>(stages: &S, records: &mut VecDeque<PendingRecord>) {
    while let Some(pending) = records.front_mut() {
        match pending.delivered.try_recv() {
            Err(oneshot::error::TryRecvError::Empty) => return,
            // Sent (never) or dropped: delivered, or the call's future is gone.
            _ => {
                if let Some(pending) = records.pop_front() {
                    stages.record(&pending.agent, &pending.record);
                    crate::json::free(pending.record.arguments);
                }
            }
        }
    }
}

/// A started call, in commit order.
struct Slot<S> {
    n: u64,
    exclusive: bool,
    name: String,
    sub_call_id: String,
    record_args: Value,
    /// Released once the commit is done.
    held: Held,
    reply: oneshot::Sender<Reply>,
    /// Set once its dispatch settled (or when its start already produced the result).
    done: Option<Done<S>>,
    /// Answered from a replay's journal: no record is written again.
    journaled: bool,
}

enum Done<S> {
    Stage(S),
    /// Settled already: a journaled result, or the waiting call run with its answer.
    Settled(Box<ToolExecutionResult>),
    /// The dispatch task was lost (the runtime is shutting down).
    Lost(String),
}

/// Runs the lane of `run` until `drain` fired and nothing is queued, started or uncommitted
/// (spec §4.4.2, §4.5.1). `ctx` is the outer call's: contexts and the turn conclusion of
/// committed sub-calls go through it (§4.7).
pub(crate) async fn lane<S: Stages>(
    stages: S,
    run: Arc<Run>,
    ctx: ToolRunContext,
    inbox: Inbox,
    drain: CancellationToken,
) {
    let mut inbox = inbox.0;
    let max = stages.max_parallel().max(1);
    let mut queue: VecDeque<Entry> = VecDeque::new();
    let mut order: VecDeque<Slot<S::Started>> = VecDeque::new();
    let mut pool: FuturesUnordered<Dispatch<S::Started>> = FuturesUnordered::new();
    let mut barrier = false;
    let mut open = true;
    let mut records: VecDeque<PendingRecord> = VecDeque::new();
    loop {
        write_delivered(&stages, &mut records);
        // 1. Commit the oldest started call once its dispatch settled.
        if order.front().is_some_and(|slot| slot.done.is_some()) {
            let Some(slot) = order.pop_front() else {
                continue;
            };
            let exclusive = slot.exclusive;
            records.extend(commit(&stages, &run, &ctx, slot).await);
            if exclusive {
                barrier = false;
            }
            continue;
        }
        while open {
            match inbox.try_recv() {
                Ok(entry) => queue.push_back(entry),
                Err(mpsc::error::TryRecvError::Empty) => break,
                Err(mpsc::error::TryRecvError::Disconnected) => open = false,
            }
        }
        // 2. Start the next queued call when it may.
        if let Some(entry) = queue.front_mut() {
            if run.signal.is_cancelled() || run.stopped() {
                if let Some(entry) = queue.pop_front() {
                    abandon(&run, entry);
                }
                continue;
            }
            // Classified now, at every decision (spec §4.4.2): what an earlier exclusive call
            // changed while this one waited counts. A decision is only made when the lane wakes
            // (a dispatch settled, a submission, the drain), so it is once per start in the
            // common case and never a spin.
            let exclusive = !stages.parallel(&entry.input);
            let may = !barrier
                && if exclusive {
                    pool.is_empty()
                } else {
                    pool.len() < max
                };
            if may && let Some(entry) = queue.pop_front() {
                run.queued.fetch_sub(1, Ordering::AcqRel);
                barrier = exclusive;
                let Entry {
                    n,
                    input,
                    record_args,
                    held,
                    reply,
                    ..
                } = entry;
                let name = input.name.clone();
                let sub_call_id = input.call_id.clone();
                // A replayed program: journaled calls are answered, the waiting call runs with
                // its answer, another call than before stops the run.
                let (done, journaled) = match run.replay_step(n, &name, &record_args) {
                    Step::Fresh => (None, false),
                    Step::Journaled(result) => (Some(Done::Settled(result)), true),
                    Step::Answered(answered) => {
                        let super::replay::Answered {
                            approval,
                            outcome,
                            caller,
                        } = *answered;
                        let mut input = input;
                        if let Some(caller) = caller {
                            input.caller = Some(Arc::new(caller));
                        }
                        let agent = approval.agent.clone();
                        let result = stages.resume_claimed(agent, outcome, input).await;
                        barrier = false;
                        order.push_back(Slot {
                            n,
                            exclusive: false,
                            name,
                            sub_call_id,
                            record_args,
                            held,
                            reply,
                            done: Some(Done::Settled(Box::new(result))),
                            journaled: false,
                        });
                        continue;
                    }
                    Step::Diverged(message) => {
                        run.stop_with(Stop::Failed(message));
                        let _ = reply.send(Reply::Abandoned);
                        crate::json::free(input.arguments);
                        crate::json::free(record_args);
                        drop(held);
                        barrier = false;
                        continue;
                    }
                };
                if let Some(done) = done {
                    crate::json::free(input.arguments);
                    barrier = false;
                    order.push_back(Slot {
                        n,
                        exclusive: false,
                        name,
                        sub_call_id,
                        record_args,
                        held,
                        reply,
                        done: Some(done),
                        journaled,
                    });
                    continue;
                }
                if let Some(agent) = &run.agent {
                    let record = CodeDispatchRecord {
                        kind: CodeDispatchKind::Start,
                        root_call_id: run.root_id.clone(),
                        parent_call_id: run.outer_id.clone(),
                        sub_call_id: sub_call_id.clone(),
                        name: name.clone(),
                        arguments: crate::json::clone_deep(&record_args),
                        is_error: None,
                        content: None,
                    };
                    stages.record(agent, &record);
                    crate::json::free(record.arguments);
                }
                let started = if run.deferred {
                    let started = stages.start_deferred(input, run.outer_id.clone()).await;
                    match S::pending(started) {
                        // It asks: the run stops here, the program waiting for the reply.
                        Ok(approval) => {
                            run.stop_with(Stop::Waiting {
                                n,
                                approval,
                                _reply: Some(reply),
                            });
                            crate::json::free(record_args);
                            drop(held);
                            barrier = false;
                            continue;
                        }
                        Err(started) => started,
                    }
                } else {
                    stages.start(input).await
                };
                let done = if S::dispatches(&started) {
                    pool.push(place(&stages, n, &name, started));
                    None
                } else {
                    Some(Done::Stage(started))
                };
                order.push_back(Slot {
                    n,
                    exclusive,
                    name,
                    sub_call_id,
                    record_args,
                    held,
                    reply,
                    done,
                    journaled: false,
                });
                continue;
            }
        }
        // 3. A stopped run whose started calls all committed: interrupt the program.
        if order.is_empty() && pool.is_empty() && !run.signal.is_cancelled() && run.stopped() {
            run.interrupt();
            continue;
        }
        // Idle and drained: done. Else wait for a dispatch, a submission or the drain.
        if queue.is_empty() && order.is_empty() && pool.is_empty() && drain.is_cancelled() {
            // The run is over: no program is left to receive a value, so what still waits is
            // written now (a runtime that kept a binding future past its run cannot hold the
            // outer result back).
            for pending in records.drain(..) {
                stages.record(&pending.agent, &pending.record);
                crate::json::free(pending.record.arguments);
            }
            return;
        }
        tokio::select! {
            biased;
            () = oldest_delivered(&mut records), if !records.is_empty() => {}
            joined = pool.next(), if !pool.is_empty() => {
                let Some((n, settled)) = joined else {
                    continue;
                };
                let done = match settled {
                    Ok(started) => Done::Stage(started),
                    Err(message) => Done::Lost(message),
                };
                if let Some(slot) = order.iter_mut().find(|slot| slot.n == n) {
                    slot.done = Some(done);
                }
            }
            entry = inbox.recv(), if open => match entry {
                Some(entry) => queue.push_back(entry),
                None => open = false,
            },
            () = drain.cancelled(), if !drain.is_cancelled() => {}
            else => {
                // Nothing can change any more: abandon what waits and stop.
                for entry in queue.drain(..) {
                    abandon(&run, entry);
                }
                return;
            }
        }
    }
}

/// The bytes of `content` as compact JSON, counted without building it or recursing (a block
/// from a tool may nest deeply).
fn json_bytes(content: &[crate::content::ContentBlock]) -> usize {
    content
        .iter()
        .map(|block| match block.stored_json() {
            Some(value) => crate::code::value_cost(value),
            // `{"type":"text","text":…}`: 21 bytes around the string's JSON.
            None => 23 + crate::code::string_cost(block.as_text().unwrap_or_default()),
        })
        .fold(0, usize::saturating_add)
}

/// The commit of one started call (spec §4.4.4).
async fn commit<S: Stages>(
    stages: &S,
    run: &Run,
    ctx: &ToolRunContext,
    slot: Slot<S::Started>,
) -> Option<PendingRecord> {
    let view = match &slot.done {
        Some(Done::Stage(started)) => {
            stages.program_view(Some(started), &slot.name, run.agent.as_ref())
        }
        Some(Done::Settled(_)) => stages.program_view(None, &slot.name, run.agent.as_ref()),
        _ => None,
    };
    let result = match slot.done {
        Some(Done::Stage(started)) => stages.commit(started).await,
        Some(Done::Settled(result)) => *result,
        Some(Done::Lost(message)) => ToolExecutionResult::failure(ToolError::new(message)),
        None => ToolExecutionResult::failure(ToolError::new(
            "internal error: a sub-call was committed before it settled",
        )),
    };
    if !result.is_error()
        && result.content().iter().any(|block| block.kind() == "image")
        && run.attach(json_bytes(result.content()))
    {
        ctx.defer_context(UserMessage::new(
            format!("{}:images", slot.sub_call_id),
            result.content().to_vec(),
            json!({"kind": "plugin", "plugin": "tools-code-mode"}),
        ));
    }
    for context in result.additional_contexts().unwrap_or_default() {
        ctx.defer_context(context.clone());
    }
    if !result.is_error() && result.concludes_turn() {
        ctx.conclude_turn();
    }
    let outcome = match result.error() {
        Some(error) if result.is_error() => Err(error.message().to_owned()),
        _ if result.is_error() => Err(format!("{} failed", slot.name)),
        _ => Ok(match (result.value(), view) {
            // A view is the host's code: one that panics hands over the value.
            (Some(value), Some(view)) => {
                std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| view(value)))
                    .unwrap_or_else(|_| {
                        tracing::warn!("run_code: the program view of {} panicked", slot.name);
                        None
                    })
                    .unwrap_or_else(|| crate::json::clone_deep(value))
            }
            (Some(value), None) => crate::json::clone_deep(value),
            (None, _) => Value::Null,
        }),
    };
    // Given back before the program hears of it: its next call may need the room.
    let held = slot.held;
    drop(held);
    if run.deferred {
        let bytes = crate::json::host_bytes(&slot.record_args)
            .saturating_add(json_bytes(result.content()))
            .saturating_add(result.value().map_or(0, crate::code::value_cost));
        let total = run
            .journal_bytes
            .fetch_add(bytes, Ordering::AcqRel)
            .saturating_add(bytes);
        if total > run.limits.max_journal_bytes {
            run.stop_with(Stop::Failed(format!(
                "run_code: the journal of this deferred run passed {} MiB \
                 (CodeHostLimits::max_journal_bytes): its committed calls are kept until the \
                 run ends, to be replayed if it stops for an approval; nothing more was run",
                run.limits.max_journal_bytes.div_ceil(1 << 20)
            )));
        } else {
            run.journal
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .push(ReplayedCall {
                    n: slot.n,
                    tool: slot.name.clone(),
                    arguments: crate::json::clone_deep(&slot.record_args),
                    result: result.clone(),
                });
        }
    }
    // A journaled call's records were written by the run that made it.
    let agent = run.agent.as_ref().filter(|_| !slot.journaled);
    let Some(agent) = agent else {
        let _ = slot.reply.send(Reply::Settled(outcome, None));
        crate::json::free(slot.record_args);
        return None;
    };
    let (delivery, delivered) = oneshot::channel();
    let _ = slot.reply.send(Reply::Settled(outcome, Some(delivery)));
    // Written once the program has the value (the lane goes on meanwhile).
    Some(PendingRecord {
        delivered,
        agent: agent.clone(),
        record: CodeDispatchRecord {
            kind: CodeDispatchKind::Settle,
            root_call_id: run.root_id.clone(),
            parent_call_id: run.outer_id.clone(),
            sub_call_id: slot.sub_call_id,
            name: slot.name,
            arguments: slot.record_args,
            is_error: Some(result.is_error()),
            content: Some(result.content().to_vec()),
        },
    })
}

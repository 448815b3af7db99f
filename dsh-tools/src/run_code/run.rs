//! One `run_code` run's shared state and its binding calls (Code Mode spec §4.2–§4.3): the
//! run-scoped signal and its reason, the submission of each `tools.<name>(args)` call in
//! order, the host bytes its calls hold, and, in deferred mode, why the run stopped.

use super::replay::{Replay, Replaying, Step};
use crate::call::ToolExecutionInput;
use crate::call::{AgentId, BoxFuture, Caller, ExecutionToken, PendingApproval, ReplayedCall};
use crate::code::{CodeHostLimits, MAX_QUEUED_SUB_CALLS};
use serde_json::Value;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use tokio::sync::{mpsc, oneshot};
use tokio_util::sync::CancellationToken;

/// Why a deferred run stopped early.
pub(crate) enum Stop {
    /// Call `n` asks: the run waits for its approval. The reply is kept so that the program
    /// waits too, until the run is interrupted.
    Waiting {
        n: u64,
        approval: Box<PendingApproval>,
        _reply: Option<oneshot::Sender<Reply>>,
    },
    /// The run cannot go on: a replay made another call than before, or the journal is full.
    Failed(String),
}

/// The reason a run is over when the bridge ended it (spec §4.2.1, exact).
pub(crate) const SETTLED: &str = "run_code settled";
/// The reason of an outer cancellation (our tokens carry none; spec §6.4).
pub(super) const OUTER_ABORT: &str = crate::code::ABORT_REASON;

/// The reason a deferred run is over when one of its calls waits for a person.
pub(crate) const WAITING: &str = "run_code waits for approval";

/// What the lane answers a binding call.
pub(crate) enum Reply {
    /// Committed: the value, or the failure's message, and the delivery signal: dropped once the
    /// runtime dropped the binding call's future (its program has the value), it lets the
    /// call's settle record be written (spec §4.8.1: "the program receives its value before the
    /// settle record is written").
    Settled(Result<Value, String>, Option<oneshot::Sender<()>>),
    /// Removed from the queue after the run was over; never started.
    Abandoned,
}

/// Host bytes held for a call's arguments (its copy and its record's), given back when the
/// holder (the queued entry, then the started slot) is dropped.
pub(super) struct Held {
    pub(super) bytes: usize,
    pub(super) pool: Arc<AtomicUsize>,
}

impl Drop for Held {
    fn drop(&mut self) {
        self.pool.fetch_sub(self.bytes, Ordering::AcqRel);
    }
}

/// What the run attached so far, and how many image-bearing results it left out.
#[derive(Default)]
pub(super) struct Attached {
    pub(super) results: usize,
    pub(super) bytes: usize,
    pub(super) left_out: usize,
}

/// One submitted call.
pub(super) struct Entry {
    pub(super) n: u64,
    pub(super) input: ToolExecutionInput,
    pub(super) record_args: Value,
    pub(super) held: Held,
    pub(super) reply: oneshot::Sender<Reply>,
}

/// What the submitter of a run holds: the call counter and the lane's inbox, under one lock so
/// ids follow submission order.
pub(super) struct Submitter {
    pub(super) n: u64,
    pub(super) inbox: mpsc::UnboundedSender<Entry>,
    /// The outer call's span, every sub-call's parent; let go when the run settles, so the
    /// span ends with the call even while the engine still holds the run.
    pub(super) span: tracing::Span,
}

/// One run's shared state: the run-scoped signal and the facts every sub-call input needs.
pub(crate) struct Run {
    pub(super) signal: CancellationToken,
    pub(super) reason: Reason,
    pub(super) submitter: Mutex<Submitter>,
    pub(super) queued: AtomicUsize,
    pub(super) outer_id: String,
    pub(super) root_id: String,
    pub(super) agent: Option<AgentId>,
    /// The outer call's caller: every sub-call is made on its behalf (guards see it).
    pub(super) caller: Option<Arc<Caller>>,
    pub(super) parent: ExecutionToken,
    pub(super) limits: CodeHostLimits,
    /// Host bytes the arguments of the calls in flight hold ([`Held`]).
    pub(super) in_flight: Arc<AtomicUsize>,
    pub(super) attached: Mutex<Attached>,
    /// Deferred mode: the first call that asks stops the run ([`Stop`]), and every committed
    /// call is journaled for the replay.
    pub(super) deferred: bool,
    pub(super) replaying: Mutex<Option<Replaying>>,
    pub(super) journal: Mutex<Vec<ReplayedCall>>,
    /// The journal's size as JSON ([`CodeHostLimits::max_journal_bytes`]).
    pub(super) journal_bytes: AtomicUsize,
    pub(super) stop: Mutex<Option<Stop>>,
}

/// How a run goes: its host limits, and inline (an `ask` waits) or deferred, maybe replaying
/// a stopped program.
pub(crate) struct Mode {
    /// The outer call's span, parent of the sub-calls' spans.
    pub(crate) span: tracing::Span,
    pub(crate) limits: CodeHostLimits,
    pub(crate) deferred: bool,
    pub(crate) replay: Option<Replay>,
}

impl Run {
    /// A run under `outer` (the body's signal): its run-scoped signal is a child of it, and the
    /// lane reads calls from the returned receiver.
    pub(crate) fn new(
        outer: CancellationToken,
        outer_id: String,
        root_id: String,
        agent: Option<AgentId>,
        caller: Option<Arc<Caller>>,
        parent: ExecutionToken,
        mode: Mode,
    ) -> (Arc<Self>, Inbox) {
        let limits = mode.limits;
        let (inbox, receiver) = mpsc::unbounded_channel();
        let run = Arc::new(Self {
            signal: outer.child_token(),
            reason: Reason {
                outer,
                fixed: Arc::default(),
            },
            submitter: Mutex::new(Submitter {
                n: 0,
                inbox,
                span: mode.span,
            }),
            queued: AtomicUsize::new(0),
            outer_id,
            root_id,
            agent,
            caller,
            parent,
            limits,
            in_flight: Arc::default(),
            attached: Mutex::default(),
            deferred: mode.deferred || mode.replay.is_some(),
            replaying: Mutex::new(mode.replay.map(Replaying::new)),
            journal: Mutex::default(),
            journal_bytes: AtomicUsize::new(0),
            stop: Mutex::default(),
        });
        (run, Inbox(receiver))
    }

    /// How many image-bearing results were not attached, past
    /// [`CodeHostLimits::max_attached_results`] or [`CodeHostLimits::max_attached_bytes`].
    pub(crate) fn left_out(&self) -> usize {
        self.attached
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .left_out
    }

    /// Whether a result of `bytes` may still be attached (and counts it if so).
    pub(super) fn attach(&self, bytes: usize) -> bool {
        let mut attached = self.attached.lock().unwrap_or_else(|e| e.into_inner());
        let fits = attached.results < self.limits.max_attached_results
            && attached.bytes.saturating_add(bytes) <= self.limits.max_attached_bytes;
        if fits {
            attached.results += 1;
            attached.bytes += bytes;
        } else {
            attached.left_out += 1;
        }
        fits
    }

    /// Holds `bytes` of the in-flight budget, or says why not.
    pub(super) fn hold(&self, name: &str, bytes: usize) -> Result<Held, String> {
        let max = self.limits.max_in_flight_argument_bytes;
        let mut current = self.in_flight.load(Ordering::Acquire);
        loop {
            let next = current.saturating_add(bytes);
            if next > max {
                let mib = |b: usize| b.div_ceil(1 << 20);
                return Err(format!(
                    "run_code: the arguments of the calls in flight would take more than {} MiB \
                     on the host ({} MiB held, {} MiB more for this call; \
                     CodeHostLimits::max_in_flight_argument_bytes); {name} not dispatched",
                    mib(max),
                    mib(current),
                    mib(bytes)
                ));
            }
            match self.in_flight.compare_exchange_weak(
                current,
                next,
                Ordering::AcqRel,
                Ordering::Acquire,
            ) {
                Ok(_) => {
                    return Ok(Held {
                        bytes,
                        pool: Arc::clone(&self.in_flight),
                    });
                }
                Err(seen) => current = seen,
            }
        }
    }

    /// Whether a deferred run stopped (a call waits, or a replay diverged).
    pub(super) fn stopped(&self) -> bool {
        // Only a deferred run stops: an inline one takes no lock here.
        self.deferred
            && self
                .stop
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .is_some()
    }

    pub(super) fn stop_with(&self, stop: Stop) {
        let mut current = self.stop.lock().unwrap_or_else(|e| e.into_inner());
        if current.is_none() {
            *current = Some(stop);
        }
    }

    /// Why the run stopped, once it is over; and the journal of what it committed.
    pub(crate) fn take_stop(&self) -> (Option<Stop>, Vec<ReplayedCall>) {
        let stop = self.stop.lock().unwrap_or_else(|e| e.into_inner()).take();
        let journal = std::mem::take(&mut *self.journal.lock().unwrap_or_else(|e| e.into_inner()));
        (stop, journal)
    }

    /// Why a replay failed when its program ended without making the waiting call again.
    pub(crate) fn unfinished_replay(&self) -> Option<String> {
        self.replaying
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .as_ref()
            .and_then(Replaying::unfinished)
    }

    /// What call `n` gets from the replay, if this run replays.
    pub(super) fn replay_step(&self, n: u64, tool: &str, arguments: &Value) -> Step {
        if !self.deferred {
            return Step::Fresh;
        }
        match &mut *self.replaying.lock().unwrap_or_else(|e| e.into_inner()) {
            Some(replaying) => replaying.step(n, tool, arguments),
            None => Step::Fresh,
        }
    }

    /// Everything started before the stop has committed: the program is interrupted.
    pub(super) fn interrupt(&self) {
        self.reason.fixed.get_or_init(|| WAITING);
        self.signal.cancel();
    }

    /// The run-scoped signal (the runtime's, and every sub-call's).
    pub(crate) fn signal(&self) -> &CancellationToken {
        &self.signal
    }

    /// The run settled: fire the run-scoped signal with `run_code settled` unless the outer
    /// cancellation fired it first (spec §4.5.1).
    pub(crate) fn settle(&self) {
        self.reason.fix();
        self.signal.cancel();
        let mut submitter = self.submitter.lock().unwrap_or_else(|e| e.into_inner());
        submitter.span = tracing::Span::none();
    }

    pub(super) fn over(&self, name: &str, what: &str) -> String {
        format!(
            "run_code run is over ({}); {name} {what}",
            self.reason.get()
        )
    }

    /// `tools.<name>(arg)` on the host side (spec §4.3.1). The submission (the checks, the call's
    /// number, the queueing) happens now, synchronously, so calls are numbered and queued in the
    /// order the program made them even when the returned futures are polled in another order
    /// (or never); the future only waits for the answer.
    pub(crate) fn call(&self, name: Arc<str>, arg: Value) -> BoxFuture<Result<Value, String>> {
        let submitted = self.submit(&name, arg);
        let signal = self.signal.clone();
        let over = move |what: &str, reason: &str| {
            format!("run_code run is over ({reason}); {name} {what}")
        };
        let reason = self.reason.clone();
        // Records are written only for a run with an agent: only then is there an order to keep.
        let delivery: Option<Arc<Mutex<Option<oneshot::Sender<()>>>>> =
            self.agent.as_ref().map(|_| Arc::default());
        let keep = delivery.clone();
        let inner = Box::pin(async move {
            let answer = submitted?;
            match answer.await {
                Ok(Reply::Settled(outcome, delivered)) => {
                    if let (Some(keep), Some(delivered)) = (keep, delivered) {
                        *keep.lock().unwrap_or_else(|e| e.into_inner()) = Some(delivered);
                    }
                    match outcome {
                        Ok(value) if signal.is_cancelled() => {
                            crate::json::free(value);
                            Err(over("result discarded", reason.get()))
                        }
                        Err(_) if signal.is_cancelled() => {
                            Err(over("result discarded", reason.get()))
                        }
                        outcome => outcome,
                    }
                }
                Ok(Reply::Abandoned) | Err(_) => Err(over("tool call abandoned", reason.get())),
            }
        });
        match delivery {
            Some(delivery) => Box::pin(HoldDelivery {
                inner,
                _delivery: delivery,
            }),
            None => inner,
        }
    }

    /// Steps 1–5 of spec §4.3.1: refused, or queued with a receiver for the answer.
    pub(super) fn submit(
        &self,
        name: &str,
        arg: Value,
    ) -> Result<oneshot::Receiver<Reply>, String> {
        if self.signal.is_cancelled() {
            crate::json::free(arg);
            return Err(self.over(name, "not dispatched"));
        }
        if !crate::json::is_lossless(&arg) {
            crate::json::free(arg);
            return Err("tool arguments must be lossless JSON (call the tool with an arguments object, e.g. `{}`)".to_owned());
        }
        // The call's copy, and its record's when something reads it: the records (a run with an
        // agent) or the journal and the replay (a deferred run).
        let recorded = self.agent.is_some() || self.deferred;
        let copies = if recorded { 2 } else { 1 };
        let held = match self.hold(name, crate::json::host_bytes(&arg).saturating_mul(copies)) {
            Ok(held) => held,
            Err(message) => {
                crate::json::free(arg);
                return Err(message);
            }
        };
        let record_args = if recorded {
            crate::json::clone_deep(&arg)
        } else {
            Value::Null
        };
        let (reply, answer) = oneshot::channel();
        let mut submitter = self.submitter.lock().unwrap_or_else(|e| e.into_inner());
        if self.queued.load(Ordering::Acquire) >= MAX_QUEUED_SUB_CALLS {
            drop(submitter);
            crate::json::free(arg);
            crate::json::free(record_args);
            return Err(format!(
                "run_code: more than {MAX_QUEUED_SUB_CALLS} tool calls are waiting to start; {name} not dispatched"
            ));
        }
        submitter.n += 1;
        let n = submitter.n;
        let mut input = ToolExecutionInput::new(
            format!("{}:code:{n}", self.outer_id),
            name,
            arg,
            self.signal.clone(),
        )
        .parent(self.parent)
        .root_call_id(self.root_id.clone())
        .span_parent(submitter.span.clone());
        input.agent = self.agent.clone();
        input.caller = self.caller.clone();
        let entry = Entry {
            n,
            input,
            record_args,
            held,
            reply,
        };
        self.queued.fetch_add(1, Ordering::AcqRel);
        if let Err(mpsc::error::SendError(entry)) = submitter.inbox.send(entry) {
            self.queued.fetch_sub(1, Ordering::AcqRel);
            drop(submitter);
            crate::json::free(entry.input.arguments);
            crate::json::free(entry.record_args);
            return Err(self.over(name, "not dispatched"));
        }
        Ok(answer)
    }
}

/// A binding call's future: the bridge's answer, holding the call's delivery signal until the
/// runtime drops it (the settle record waits for that).
pub(super) struct HoldDelivery {
    inner: BoxFuture<Result<Value, String>>,
    _delivery: Arc<Mutex<Option<oneshot::Sender<()>>>>,
}

impl std::future::Future for HoldDelivery {
    type Output = Result<Value, String>;

    fn poll(
        self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Self::Output> {
        self.get_mut().inner.as_mut().poll(cx)
    }
}

/// The run-scoped signal's reason (spec §4.2.1, §6.4): fixed when the run settles, the outer
/// cancellation's until then; readable from a binding's future after the run is gone.
#[derive(Clone)]
pub(super) struct Reason {
    pub(super) outer: CancellationToken,
    pub(super) fixed: Arc<OnceLock<&'static str>>,
}

impl Reason {
    pub(super) fn current(&self) -> &'static str {
        if self.outer.is_cancelled() {
            OUTER_ABORT
        } else {
            SETTLED
        }
    }

    pub(super) fn get(&self) -> &'static str {
        self.fixed.get().copied().unwrap_or_else(|| self.current())
    }

    pub(super) fn fix(&self) {
        self.fixed.get_or_init(|| self.current());
    }
}

/// The lane's end of a run's submissions.
pub(crate) struct Inbox(pub(super) mpsc::UnboundedReceiver<Entry>);

pub(super) fn abandon(run: &Run, entry: Entry) {
    run.queued.fetch_sub(1, Ordering::AcqRel);
    let _ = entry.reply.send(Reply::Abandoned);
    crate::json::free(entry.input.arguments);
    crate::json::free(entry.record_args);
}

//! One run's shared state: what the engine's host functions, its interrupt handler and the event
//! loop read and write on the run's thread (why the engine stopped, how the program ended, the
//! binding calls awaited and their answers, the output ledger, the wake of every host future).

use super::walk::Intrinsics;
use crate::code::{Companion, HostFn, OutputLedger};
use futures_util::stream::FuturesUnordered;
use rquickjs::{Ctx, Function, Persistent};
use serde_json::Value;
use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Wake, Waker};
use std::time::Duration;

/// Why the engine was stopped from outside the program.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Stop {
    Compute,
    Wall,
    Abort,
    Disposed,
    OutputLimit,
    /// A host future (the companion, a binding call) panicked while polled on this thread.
    HostPanic,
}

/// How the program ended by itself.
pub(super) enum Outcome {
    /// Completed: a value, or none for `undefined`.
    Done(Option<Value>),
    /// Completed with a value that is not lossless JSON.
    Lossy,
    /// Threw (the text of 3.4.2).
    Threw(String),
    /// Completed with a value larger on the host than the output cap allows.
    TooLarge,
}

/// A binding call's answer.
pub(super) struct Answer {
    pub(super) id: u64,
    pub(super) outcome: Result<Value, String>,
    /// The host function's completed future, dropped only once the program has the outcome:
    /// the bridge writes the call's settle record then (Code Mode spec §4.8.1).
    pub(super) _call: crate::call::BoxFuture<Result<Value, String>>,
}

/// A binding call the program awaits: how to settle its promise, and which member it called
/// (what a failure's error names).
pub(super) struct Pending {
    pub(super) resolve: Persistent<Function<'static>>,
    pub(super) reject: Persistent<Function<'static>>,
    pub(super) ns: u32,
    pub(super) member: u32,
}

type Calls = FuturesUnordered<Pin<Box<dyn Future<Output = Answer>>>>;

pub(super) struct State {
    pub(super) ledger: RefCell<Option<OutputLedger>>,
    pub(super) stop: Cell<Option<Stop>>,
    pub(super) outcome: RefCell<Option<Outcome>>,
    pub(super) pending: RefCell<HashMap<u64, Pending>>,
    /// What the bootstrap handed over, while the run runs (dropped before its engine).
    pub(super) bridge: RefCell<Option<Bridge>>,
    pub(super) next_id: Cell<u64>,
    /// The run's host functions, per namespace (set when the run starts).
    pub(super) functions: RefCell<Vec<Vec<HostFn>>>,
    /// The binding calls awaited, polled by the event loop.
    pub(super) calls: RefCell<Calls>,
    /// Answers polled while the program computed, settled when it yields.
    pub(super) ready: RefCell<Vec<Answer>>,
    /// The caller's companion (the `run_code` lane), until it completes.
    pub(super) companion: RefCell<Option<Companion>>,
    /// A host future panicked while polled here.
    pub(super) host_panicked: Cell<bool>,
    /// Time this thread spent polling host futures (the companion, the calls): not the
    /// program's compute.
    pub(super) host_time: Cell<Duration>,
    /// Set by every wake of a host future; the waker of every host future polled here.
    pub(super) wake: Arc<Unpark>,
    pub(super) waker: Waker,
}

impl State {
    /// A run's state before it starts, woken on the current thread, its ledger capped at
    /// `max_output_bytes`.
    pub(super) fn new(max_output_bytes: usize) -> Self {
        let wake = Arc::new(Unpark {
            thread: std::thread::current(),
            woken: AtomicBool::new(false),
        });
        Self {
            ledger: RefCell::new(Some(OutputLedger::new(max_output_bytes))),
            stop: Cell::new(None),
            outcome: RefCell::new(None),
            pending: RefCell::new(HashMap::new()),
            bridge: RefCell::new(None),
            next_id: Cell::new(0),
            functions: RefCell::new(Vec::new()),
            calls: RefCell::new(FuturesUnordered::new()),
            ready: RefCell::new(Vec::new()),
            companion: RefCell::new(None),
            host_panicked: Cell::new(false),
            host_time: Cell::new(Duration::ZERO),
            waker: Waker::from(Arc::clone(&wake)),
            wake,
        }
    }
}

/// What the bootstrap handed the host besides `start`, kept for the run (dropped before its
/// engine).
pub(super) struct Bridge {
    /// What the lossless walk reads.
    pub(super) walk: Intrinsics,
    /// `failFor(namespace, member, message)`: the error a refused or failed call rejects with.
    pub(super) fail_for: Persistent<Function<'static>>,
}

impl State {
    /// The error a call of `member` in namespace `ns` rejects with ([`Bridge::failure`]; the
    /// message alone before the run has its bridge).
    pub(super) fn failure<'js>(
        &self,
        ctx: &Ctx<'js>,
        ns: u32,
        member: u32,
        message: &str,
    ) -> rquickjs::Value<'js> {
        match self.bridge.borrow().as_ref() {
            Some(bridge) => bridge.failure(ctx, ns, member, message),
            None => text_or_undefined(ctx, message),
        }
    }
}

/// `message` as an engine string (`undefined` when the engine cannot hold it).
fn text_or_undefined<'js>(ctx: &Ctx<'js>, message: &str) -> rquickjs::Value<'js> {
    rquickjs::String::from_str(ctx.clone(), message)
        .map(|s| s.into_value())
        .unwrap_or_else(|_| rquickjs::Value::new_undefined(ctx.clone()))
}

impl Bridge {
    /// The error a call of `member` in namespace `ns` rejects with: the namespace's error class
    /// (or an `Error`) with `message`; the message alone if the engine cannot make one.
    pub(super) fn failure<'js>(
        &self,
        ctx: &Ctx<'js>,
        ns: u32,
        member: u32,
        message: &str,
    ) -> rquickjs::Value<'js> {
        let made = self
            .fail_for
            .clone()
            .restore(ctx)
            .and_then(|f| f.call::<_, rquickjs::Value>((ns, member, message)));
        match made {
            Ok(error) => error,
            Err(_) => {
                drop(ctx.catch());
                text_or_undefined(ctx, message)
            }
        }
    }
}

/// Wakes the run's thread, and says a host future wants a poll.
pub(super) struct Unpark {
    thread: std::thread::Thread,
    pub(super) woken: AtomicBool,
}

impl Wake for Unpark {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        self.woken.store(true, Ordering::Release);
        self.thread.unpark();
    }
}

/// Records how the program ended, unless it already ended or a stop fired (the first terminal
/// event wins).
pub(super) fn set_outcome(state: &State, outcome: Outcome) {
    let mut slot = state.outcome.borrow_mut();
    if slot.is_none() && state.stop.get().is_none() {
        *slot = Some(outcome);
    }
}

/// Whether the run is over: the program ended or a stop fired.
pub(super) fn ended(state: &State) -> bool {
    state.stop.get().is_some() || state.outcome.borrow().is_some()
}

//! One run's engine: made ahead of its run on the thread that will run it (a warm engine: the
//! QuickJS runtime and context, the bootstrap evaluated, its host functions installed), then the
//! run (the program started, the event loop driven to its end, the engine freed) under the
//! budgets its interrupt handler watches, and the run's result made from how it ended. The
//! binding calls' futures and the caller's companion are polled on this same thread (an answer
//! reaches the program without waking another thread); while the program computes, the
//! interrupt handler polls whatever host future was woken (answers wait for the program to
//! yield), so host work never waits for a program that does not await.

use super::event_loop::{event_loop, free, poll_host};
use super::host::install;
use super::start::begin;
use super::state::{Bridge, Outcome, State, Stop, set_outcome};
use crate::code::{CodeResult, Companion, FailureKind, Namespace, OutputLedger};
use rquickjs::{Context, Function, Persistent, Runtime};
use std::rc::Rc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};
use tokio_util::sync::CancellationToken;

/// One run's budgets, from the validated configuration.
#[derive(Clone, Copy, Debug)]
pub(super) struct EngineLimits {
    pub(super) compute: Duration,
    pub(super) wall: Duration,
    pub(super) max_output_bytes: usize,
    pub(super) memory_bytes: usize,
    pub(super) stack_bytes: usize,
}

/// What a run needs besides its engine.
pub(super) struct Job {
    pub(super) program: String,
    pub(super) bindings: Vec<Namespace>,
    pub(super) signal: CancellationToken,
    pub(super) disposed: CancellationToken,
    pub(super) host: tokio::runtime::Handle,
    pub(super) companion: Option<Companion>,
}

fn thread_cpu() -> Duration {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::ThreadCPUTime);
    Duration::new(
        t.tv_sec.max(0) as u64,
        t.tv_nsec.clamp(0, 999_999_999) as u32,
    )
}

/// An engine made ahead of its run, on the thread that runs it: used by one run, then dropped
/// (nothing a program did survives it).
pub(super) struct Prepared {
    // Dropped in this order: the engine values, then the context, then the runtime.
    start: Persistent<Function<'static>>,
    bridge: Bridge,
    state: Rc<State>,
    context: Context,
    runtime: Runtime,
}

/// Why an engine could not be made: the failure's kind and message.
pub(super) type NotPrepared = (FailureKind, String);

impl Prepared {
    /// A runtime and context with `limits`, the bootstrap evaluated and its host functions
    /// installed.
    pub(super) fn new(limits: &EngineLimits) -> Result<Self, NotPrepared> {
        let worker = |e: rquickjs::Error| (FailureKind::WorkerExit, format!("worker error: {e}"));
        let runtime = Runtime::new().map_err(worker)?;
        runtime.set_memory_limit(limits.memory_bytes);
        runtime.set_max_stack_size(limits.stack_bytes);
        let context = Context::custom::<(
            rquickjs::context::intrinsic::Date,
            rquickjs::context::intrinsic::Eval,
            rquickjs::context::intrinsic::RegExpCompiler,
            rquickjs::context::intrinsic::RegExp,
            rquickjs::context::intrinsic::Json,
            rquickjs::context::intrinsic::Proxy,
            rquickjs::context::intrinsic::MapSet,
            rquickjs::context::intrinsic::TypedArrays,
            rquickjs::context::intrinsic::Promise,
            rquickjs::context::intrinsic::WeakRef,
        )>(&runtime)
        .map_err(worker)?;
        let state = Rc::new(State::new(limits.max_output_bytes));
        let (start, bridge) = context
            .with(|ctx| {
                install(&ctx, limits.max_output_bytes, &state)
                    .map(|(f, bridge)| (Persistent::save(&ctx, f), bridge))
            })
            .map_err(|message| (FailureKind::Exception, message))?;
        Ok(Self {
            start,
            bridge,
            state,
            context,
            runtime,
        })
    }
}

/// Runs `job` on `prepared` (or reports why there is no engine) to its result, handed to
/// `deliver` with the companion unless it completed; then frees the engine. Called on the run's
/// own thread.
pub(super) fn run(
    prepared: Result<Prepared, NotPrepared>,
    mut job: Job,
    limits: &EngineLimits,
    deliver: Deliver,
) {
    let prepared = match prepared {
        Ok(prepared) => prepared,
        Err((kind, message)) => {
            let ledger = OutputLedger::new(limits.max_output_bytes);
            return deliver(ledger.fail(kind, message), job.companion.take());
        }
    };
    // Host futures polled here (a tool body, a timer) find the host's runtime.
    let _runtime = job.host.enter();
    let Prepared {
        start,
        bridge,
        state,
        context,
        runtime,
    } = prepared;
    *state.bridge.borrow_mut() = Some(bridge);
    *state.companion.borrow_mut() = job.companion.take();
    state.wake.woken.store(true, Ordering::Release);
    let started = Instant::now();
    let deadline = started + limits.wall;
    let cpu_start = thread_cpu();
    let compute = limits.compute;
    {
        let (state, signal, disposed) =
            (Rc::clone(&state), job.signal.clone(), job.disposed.clone());
        runtime.set_interrupt_handler(Some(Box::new(move || {
            if state.stop.get().is_some() {
                return true;
            }
            // Host work goes on while the program computes.
            if state.wake.woken.swap(false, Ordering::AcqRel) {
                poll_host(&state);
            }
            let stop = if state.host_panicked.get() {
                Some(Stop::HostPanic)
            } else if disposed.is_cancelled() {
                Some(Stop::Disposed)
            } else if signal.is_cancelled() {
                Some(Stop::Abort)
            } else if thread_cpu()
                .saturating_sub(cpu_start)
                .saturating_sub(state.host_time.get())
                > compute
            {
                Some(Stop::Compute)
            } else if Instant::now() >= deadline {
                Some(Stop::Wall)
            } else {
                None
            };
            state.stop.set(stop);
            stop.is_some()
        })));
    }
    *state.functions.borrow_mut() = job
        .bindings
        .iter()
        .map(|ns| ns.functions.iter().map(|(_, f)| f.clone()).collect())
        .collect();
    let program = std::mem::take(&mut job.program);
    if let Err(message) = begin(&context, &start, &job.bindings, program) {
        set_outcome(&state, Outcome::Threw(message));
    }
    drop(start);
    event_loop(
        &runtime,
        &context,
        &job.signal,
        &job.disposed,
        &state,
        deadline,
    );
    // Drop every engine value (the pending resolvers) before the runtime, and every binding
    // call's future (a binding that never answers must not outlive the run).
    state.pending.borrow_mut().clear();
    drop(state.bridge.borrow_mut().take());
    drop(std::mem::take(&mut *state.calls.borrow_mut()));
    for answer in std::mem::take(&mut *state.ready.borrow_mut()) {
        free(answer.outcome);
    }
    let companion = state.companion.borrow_mut().take();
    state.functions.borrow_mut().clear();
    let stop = state.stop.get();
    let outcome = state.outcome.borrow_mut().take();
    // Only a failure can be an exhausted heap; measuring walks the heap, so only then.
    let memory_full = !matches!(
        outcome,
        Some(Outcome::Done(_) | Outcome::Lossy | Outcome::TooLarge)
    ) && {
        let usage = runtime.memory_usage();
        usage.malloc_size as u128 * 10 >= limits.memory_bytes as u128 * 9
    };
    let ledger = state
        .ledger
        .borrow_mut()
        .take()
        .unwrap_or_else(|| OutputLedger::new(limits.max_output_bytes));
    // The result first: freeing the engine (its whole heap) is not the caller's wait.
    deliver(
        finish(ledger, stop, outcome, memory_full, limits),
        companion,
    );
    drop(context);
    runtime.set_interrupt_handler(None);
    drop(runtime);
}

/// What receives a run's result and what is left of its companion.
pub(super) type Deliver = Box<dyn FnOnce(CodeResult, Option<Companion>) + Send>;

fn finish(
    ledger: OutputLedger,
    stop: Option<Stop>,
    outcome: Option<Outcome>,
    memory_full: bool,
    limits: &EngineLimits,
) -> CodeResult {
    // The first terminal event wins: an outcome recorded before a stop stands.
    match (outcome, stop) {
        (Some(Outcome::Done(value)), _) => ledger.complete(value),
        (Some(Outcome::TooLarge), _) => ledger.exceeded(),
        (Some(Outcome::Lossy), _) => ledger.fail(
            FailureKind::InvalidOutput,
            "program completion must be lossless JSON".to_owned(),
        ),
        (Some(Outcome::Threw(message)), _) if out_of_memory(&message, memory_full) => {
            ledger.fail(FailureKind::WorkerExit, oom_message(limits))
        }
        (Some(Outcome::Threw(message)), _) => ledger.fail(FailureKind::Exception, message),
        (None, Some(Stop::OutputLimit)) => ledger.complete(None),
        (None, Some(Stop::Compute)) => ledger.fail(
            FailureKind::Timeout,
            format!(
                "compute budget exhausted ({}ms busy)",
                limits.compute.as_millis()
            ),
        ),
        (None, Some(Stop::Wall)) => ledger.fail(
            FailureKind::Timeout,
            format!("wall-clock ceiling reached ({}ms)", limits.wall.as_millis()),
        ),
        (None, Some(Stop::Abort)) => {
            ledger.fail(FailureKind::Abort, crate::code::ABORT_REASON.to_owned())
        }
        (None, Some(Stop::Disposed)) => {
            ledger.fail(FailureKind::Abort, "runtime disposed".to_owned())
        }
        (None, Some(Stop::HostPanic)) => ledger.fail(
            FailureKind::WorkerExit,
            "worker error: a host function's future panicked".to_owned(),
        ),
        (None, None) if memory_full => ledger.fail(FailureKind::WorkerExit, oom_message(limits)),
        (None, None) => ledger.fail(
            FailureKind::WorkerExit,
            "worker error: the program neither completed nor failed".to_owned(),
        ),
    }
}

fn out_of_memory(message: &str, memory_full: bool) -> bool {
    message.starts_with("InternalError: out of memory")
        || (memory_full && message == "program threw an unrenderable value")
}

fn oom_message(limits: &EngineLimits) -> String {
    format!(
        "worker error: the engine reached its memory limit ({} MiB): JS heap out of memory",
        limits.memory_bytes >> 20
    )
}

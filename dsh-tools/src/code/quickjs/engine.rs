//! One run's engine: made ahead of its run on the thread that will run it (a warm engine: the
//! QuickJS runtime and context, the bootstrap evaluated, its host functions installed), then the
//! program, and an event loop that runs engine jobs and polls, on this same thread, the binding
//! calls' futures and the caller's companion (the `run_code` lane). An answer reaches the program
//! without waking another thread; the loop sleeps only when nothing is runnable, woken by any of
//! those futures, the run's signal, a disposal or the wall deadline. While the program computes,
//! the engine's interrupt handler polls whatever host future was woken (answers wait for the
//! program to yield), so host work never waits for a program that does not await.

use super::convert::{TapeError, from_tape, to_js};
use crate::code::{CodeResult, Companion, FailureKind, HostFn, Namespace, OutputLedger};
use futures_util::stream::{FuturesUnordered, StreamExt};
use rquickjs::{Array, Context, Ctx, Function, Persistent, Runtime};
use serde_json::Value;
use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::future::Future;
use std::pin::{Pin, pin};
use std::rc::Rc;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Poll, Wake, Waker};
use std::time::{Duration, Instant};
use tokio_util::sync::CancellationToken;

const BOOTSTRAP: &str = include_str!("bootstrap.js");
/// The log inspector's source, compiled by the bootstrap on first use.
const INSPECTOR: &str = include_str!("inspect.js");

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

/// Why the engine was stopped from outside the program.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Stop {
    Compute,
    Wall,
    Abort,
    Disposed,
    OutputLimit,
    /// A host future (the companion, a binding call) panicked while polled on this thread.
    HostPanic,
}

/// How the program ended by itself.
enum Outcome {
    /// Completed: a value, or none for `undefined`.
    Done(Option<Value>),
    /// Completed with a value that is not lossless JSON.
    Lossy,
    /// Threw (the text of 3.4.2).
    Threw(String),
    /// Completed with a value larger on the host than the output cap allows.
    TooLarge,
}

/// The most host bytes one binding argument may take (an engine string referenced many times
/// becomes as many host strings).
const MAX_ARGUMENT_BYTES: usize = 64 << 20;

/// The longest the loop sleeps without looking at its deadlines (every wake source wakes it
/// sooner; this only bounds a missed one).
const MAX_SLEEP: Duration = Duration::from_millis(10);

/// The most of one host poll credited back to the program's compute budget.
const MAX_HOST_CREDIT: Duration = Duration::from_micros(100);

/// A binding call's answer.
struct Answer {
    id: u64,
    outcome: Result<Value, String>,
    /// The host function's completed future, dropped only once the program has the outcome:
    /// the bridge writes the call's settle record then (Code Mode spec §4.8.1).
    _call: crate::call::BoxFuture<Result<Value, String>>,
}

type Pending = HashMap<u64, (Persistent<Function<'static>>, Persistent<Function<'static>>)>;

type Calls = FuturesUnordered<Pin<Box<dyn Future<Output = Answer>>>>;

struct State {
    ledger: RefCell<Option<OutputLedger>>,
    stop: Cell<Option<Stop>>,
    outcome: RefCell<Option<Outcome>>,
    pending: RefCell<Pending>,
    next_id: Cell<u64>,
    /// The run's host functions, per namespace (set when the run starts).
    functions: RefCell<Vec<Vec<HostFn>>>,
    /// The binding calls awaited, polled by the event loop.
    calls: RefCell<Calls>,
    /// Answers polled while the program computed, settled when it yields.
    ready: RefCell<Vec<Answer>>,
    /// The caller's companion (the `run_code` lane), until it completes.
    companion: RefCell<Option<Companion>>,
    /// A host future panicked while polled here.
    host_panicked: Cell<bool>,
    /// Time this thread spent polling host futures (the companion, the calls): not the
    /// program's compute.
    host_time: Cell<Duration>,
    /// Set by every wake of a host future; the waker of every host future polled here.
    wake: Arc<Unpark>,
    waker: Waker,
}

/// Wakes the run's thread, and says a host future wants a poll.
struct Unpark {
    thread: std::thread::Thread,
    woken: AtomicBool,
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
        let wake = Arc::new(Unpark {
            thread: std::thread::current(),
            woken: AtomicBool::new(false),
        });
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
        let state = Rc::new(State {
            ledger: RefCell::new(Some(OutputLedger::new(limits.max_output_bytes))),
            stop: Cell::new(None),
            outcome: RefCell::new(None),
            pending: RefCell::new(HashMap::new()),
            next_id: Cell::new(0),
            functions: RefCell::new(Vec::new()),
            calls: RefCell::new(FuturesUnordered::new()),
            ready: RefCell::new(Vec::new()),
            companion: RefCell::new(None),
            host_panicked: Cell::new(false),
            host_time: Cell::new(Duration::ZERO),
            waker: Waker::from(Arc::clone(&wake)),
            wake,
        });
        let start = context
            .with(|ctx| install(&ctx, limits, &state).map(|f| Persistent::save(&ctx, f)))
            .map_err(|message| (FailureKind::Exception, message))?;
        Ok(Self {
            start,
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
        state,
        context,
        runtime,
    } = prepared;
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
    event_loop(&runtime, &context, &job, &state, deadline);
    // Drop every engine value (the pending resolvers) before the runtime, and every binding
    // call's future (a binding that never answers must not outlive the run).
    state.pending.borrow_mut().clear();
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

/// Starts the program: as plain JavaScript first when it may be (no type stripping), else, or
/// when that does not compile, with its types stripped. `Err` carries an exception's text.
fn begin(
    context: &Context,
    start: &Persistent<Function<'static>>,
    bindings: &[Namespace],
    program: String,
) -> Result<(), String> {
    let javascript_first = cfg!(feature = "typescript") && may_be_javascript(&program);
    if javascript_first {
        match context.with(|ctx| call_start(&ctx, start, bindings, &program, true))? {
            Started::Running => return Ok(()),
            Started::NotJavaScript => {}
        }
    }
    let program = strip(program)?;
    context
        .with(|ctx| call_start(&ctx, start, bindings, &program, false))
        .map(|_| ())
}

/// Whether `program` may run as JavaScript unchanged: compiling it as JavaScript means what
/// stripping its types would mean. TypeScript that also compiles as JavaScript with another
/// meaning has type arguments (`f<T>(x)`, `g<T>` at a line's end): a `<` and then a `>` that
/// TypeScript reads as closing them, i.e. one not followed on its line by what starts an operand
/// (TypeScript's own rule, `canFollowTypeArgumentsInExpression`), or followed by `in`,
/// `instanceof`, `as` or `satisfies`. A program without `<`, or whose every `>` is an arrow's,
/// part of `>=`, or followed by an operand, is one; any other is stripped first (which changes
/// nothing in plain JavaScript: the only cost is the stripper's time).
pub(super) fn may_be_javascript(program: &str) -> bool {
    let Some(first_lt) = program.find('<') else {
        return true;
    };
    let mut chars = program[first_lt..].char_indices().peekable();
    let mut previous = '<';
    while let Some((_, c)) = chars.next() {
        if c != '>' || previous == '=' {
            // Not a `>`, or an arrow's.
            previous = c;
            continue;
        }
        while chars.peek().is_some_and(|&(_, c)| c == '>') {
            chars.next();
        }
        // Whitespace on the same line (any of JavaScript's); a line break ends type arguments
        // in TypeScript, so what follows it is not an operand of this `>`.
        while chars
            .peek()
            .is_some_and(|&(_, c)| c.is_whitespace() && !is_line_break(c))
        {
            chars.next();
        }
        let Some(&(at, next)) = chars.peek() else {
            return false;
        };
        let operand = match next {
            '=' => true,
            c if c == '_' || c == '$' || c.is_alphabetic() => {
                let rest = &program[first_lt + at..];
                let word_end = rest
                    .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == '$'))
                    .unwrap_or(rest.len());
                !matches!(&rest[..word_end], "in" | "instanceof" | "as" | "satisfies")
            }
            '0'..='9' | '\'' | '"' | '[' | '{' | '!' | '~' | '+' | '-' | '<' => true,
            _ => false,
        };
        if !operand {
            return false;
        }
        previous = '>';
    }
    true
}

/// A JavaScript line terminator.
fn is_line_break(c: char) -> bool {
    matches!(c, '\n' | '\r' | '\u{2028}' | '\u{2029}')
}

/// How a start went.
enum Started {
    Running,
    /// `javascript_first` and the program did not compile as JavaScript: nothing ran.
    NotJavaScript,
}

/// Calls the bootstrap's `start` with the run's namespaces and `program`.
fn call_start(
    ctx: &Ctx<'_>,
    start: &Persistent<Function<'static>>,
    bindings: &[Namespace],
    program: &str,
    javascript_first: bool,
) -> Result<Started, String> {
    let start = start.clone().restore(ctx).map_err(|e| fail(ctx, e))?;
    let spec = Array::new(ctx.clone()).map_err(|e| fail(ctx, e))?;
    for (i, ns) in bindings.iter().enumerate() {
        let names: Vec<&str> = ns.functions.iter().map(|(n, _)| n.as_str()).collect();
        let class = ns.error_class.as_ref();
        let entry = (
            ns.global.as_str(),
            names,
            class.map(|c| c.name.as_str()),
            class.map(|c| c.member_name_property.as_str()),
        );
        let entry = rquickjs::IntoJs::into_js(
            vec![
                rquickjs::IntoJs::into_js(entry.0, ctx).map_err(|e| fail(ctx, e))?,
                rquickjs::IntoJs::into_js(entry.1, ctx).map_err(|e| fail(ctx, e))?,
                rquickjs::IntoJs::into_js(entry.2, ctx).map_err(|e| fail(ctx, e))?,
                rquickjs::IntoJs::into_js(entry.3, ctx).map_err(|e| fail(ctx, e))?,
            ],
            ctx,
        )
        .map_err(|e| fail(ctx, e))?;
        spec.set(i, entry).map_err(|e| fail(ctx, e))?;
    }
    let compiled: bool = start
        .call((spec, program, javascript_first))
        .map_err(|e| fail(ctx, e))?;
    Ok(if compiled {
        Started::Running
    } else {
        Started::NotJavaScript
    })
}

/// The text of an engine error (a thrown value's, for an exception).
fn fail(ctx: &Ctx<'_>, e: rquickjs::Error) -> String {
    if matches!(e, rquickjs::Error::Exception) {
        let thrown = ctx.catch();
        if let Some(text) = thrown.as_string().and_then(|s| s.to_string().ok()) {
            return text;
        }
        if let Some(object) = thrown.as_object() {
            let name: String = object.get("name").unwrap_or_default();
            let message: String = object.get("message").unwrap_or_default();
            return format!("{name}: {message}");
        }
        return "program threw an unrenderable value".to_owned();
    }
    e.to_string()
}

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

fn set_outcome(state: &State, outcome: Outcome) {
    let mut slot = state.outcome.borrow_mut();
    if slot.is_none() && state.stop.get().is_none() {
        *slot = Some(outcome);
    }
}

/// Evaluates the bootstrap and installs the host functions; returns the bootstrap's `start`.
fn install<'js>(
    ctx: &Ctx<'js>,
    limits: &EngineLimits,
    state: &Rc<State>,
) -> Result<Function<'js>, String> {
    let setup: Function = ctx.eval(BOOTSTRAP).map_err(|e| fail(ctx, e))?;
    let log_state = Rc::clone(state);
    let host_log = Function::new(ctx.clone(), move |entry: String| {
        let mut ledger = log_state.ledger.borrow_mut();
        if let Some(ledger) = ledger.as_mut()
            && !ledger.log(entry)
            && log_state.stop.get().is_none()
        {
            log_state.stop.set(Some(Stop::OutputLimit));
        }
    })
    .map_err(|e| fail(ctx, e))?;
    let done_state = Rc::clone(state);
    // A completion over the cap fails anyway: its host copy may take a little more (structure).
    let cap = limits
        .max_output_bytes
        .saturating_mul(2)
        .saturating_add(1 << 20);
    let on_done = Function::new(
        ctx.clone(),
        move |kind: i32, tape: rquickjs::Value<'_>| match kind {
            0 => set_outcome(&done_state, Outcome::Done(None)),
            1 => match tape.as_array().map(|t| from_tape(t, cap)) {
                Some(Ok(value)) => set_outcome(&done_state, Outcome::Done(Some(value))),
                Some(Err(TapeError::TooLarge)) => set_outcome(&done_state, Outcome::TooLarge),
                _ => set_outcome(&done_state, Outcome::Lossy),
            },
            _ => set_outcome(&done_state, Outcome::Lossy),
        },
    )
    .map_err(|e| fail(ctx, e))?;
    let error_state = Rc::clone(state);
    let on_error = Function::new(ctx.clone(), move |text: String| {
        set_outcome(&error_state, Outcome::Threw(text));
    })
    .map_err(|e| fail(ctx, e))?;
    let call_state = Rc::clone(state);
    let host_call = Function::new(
        ctx.clone(),
        move |ns: u32,
              member: u32,
              tape: Array<'_>,
              resolve: Function<'_>,
              reject: Function<'_>|
              -> rquickjs::Result<()> {
            let function = call_state
                .functions
                .borrow()
                .get(ns as usize)
                .and_then(|f| f.get(member as usize))
                .cloned();
            let argument = match from_tape(&tape, MAX_ARGUMENT_BYTES) {
                Ok(argument) => argument,
                Err(TapeError::TooLarge) => {
                    let message = format!(
                        "binding arguments are larger than {} MiB on the host",
                        MAX_ARGUMENT_BYTES >> 20
                    );
                    reject.call::<_, ()>((message,))?;
                    return Ok(());
                }
                Err(TapeError::Malformed) => {
                    reject.call::<_, ()>(("binding arguments must be lossless JSON",))?;
                    return Ok(());
                }
            };
            let Some(function) = function else {
                crate::json::free(argument);
                reject.call::<_, ()>(("binding arguments must be lossless JSON",))?;
                return Ok(());
            };
            let id = call_state.next_id.get() + 1;
            call_state.next_id.set(id);
            let resolve = Persistent::save(&resolve.ctx().clone(), resolve);
            let reject = Persistent::save(&reject.ctx().clone(), reject);
            call_state
                .pending
                .borrow_mut()
                .insert(id, (resolve, reject));
            // Called here, in the program's order: a host function's synchronous part (the
            // bridge queues the call) runs before the next binding call; the event loop polls
            // the wait.
            let mut future = function(argument);
            call_state.calls.borrow_mut().push(Box::pin(async move {
                let outcome = (&mut future).await;
                Answer {
                    id,
                    outcome,
                    _call: future,
                }
            }));
            // A new future: polled at the next chance (the loop, or an interrupt check).
            call_state.wake.woken.store(true, Ordering::Release);
            Ok(())
        },
    )
    .map_err(|e| fail(ctx, e))?;
    setup
        .call((host_call, host_log, on_done, on_error, INSPECTOR))
        .map_err(|e| fail(ctx, e))
}

/// Whether the run is over: the program ended or a stop fired.
fn ended(state: &State) -> bool {
    state.stop.get().is_some() || state.outcome.borrow().is_some()
}

/// Runs every pending engine job (promise reactions: the program's continuations).
fn run_jobs(runtime: &Runtime, state: &State) {
    // The first terminal event wins: jobs left after the program completed (a `.then` it never
    // awaited) do not delay its result.
    while !ended(state) {
        match runtime.execute_pending_job() {
            Ok(true) => continue,
            Ok(false) => return,
            Err(exception) => {
                // A job threw past every handler: only an interrupt does that here (the
                // program's own rejections settle its promise). Clear it.
                exception.0.with(|ctx| drop(ctx.catch()));
                return;
            }
        }
    }
}

/// Polls the companion and the binding calls once; answers wait in `state.ready`. A panic in
/// either stops the run (`worker-exit`). Never runs engine code.
fn poll_host(state: &State) {
    let (Ok(mut companion), Ok(mut calls), Ok(mut ready)) = (
        state.companion.try_borrow_mut(),
        state.calls.try_borrow_mut(),
        state.ready.try_borrow_mut(),
    ) else {
        // Already polling (an interrupt cannot come from here; a guard all the same): the wake
        // is kept for the next chance.
        state.wake.woken.store(true, Ordering::Release);
        return;
    };
    let polling = Instant::now();
    let mut cx = std::task::Context::from_waker(&state.waker);
    let lane = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        if let Some(future) = companion.as_mut()
            && future.as_mut().poll(&mut cx).is_ready()
        {
            *companion = None;
        }
    }));
    if let Err(payload) = lane {
        // Only the companion that panicked is lost.
        crate::error::drop_panic_payload(payload);
        *companion = None;
        state.host_panicked.set(true);
    }
    let answers = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        while let Poll::Ready(Some(answer)) = calls.poll_next_unpin(&mut cx) {
            ready.push(answer);
        }
    }));
    if let Err(payload) = answers {
        // A binding call's future panicked: the run ends (`worker-exit`); the companion is
        // handed back and drained as usual.
        crate::error::drop_panic_payload(payload);
        state.host_panicked.set(true);
    }
    // Not the program's compute. Wall time stands for the thread's CPU time (reading that costs a
    // system call, a few µs a call on this machine), capped per poll: a poll that blocked or was
    // descheduled is credited at most the cap, and a longer one is partly charged to the program.
    let spent = polling.elapsed().min(MAX_HOST_CREDIT);
    state
        .host_time
        .set(state.host_time.get().saturating_add(spent));
}

/// Runs the program until it ends, a stop fires, or the wall deadline passes: engine jobs, then
/// the companion and the binding calls, settling their answers; asleep only when none of them
/// can move.
fn event_loop(runtime: &Runtime, context: &Context, job: &Job, state: &State, deadline: Instant) {
    let mut cx = std::task::Context::from_waker(&state.waker);
    let mut cancelled = pin!(job.signal.cancelled());
    let mut disposed = pin!(job.disposed.cancelled());
    loop {
        run_jobs(runtime, state);
        // Polled before looking at the end too: calls the program made and did not await
        // start if the lane can start them now (the run then drains them, spec §4.5.3).
        if state.wake.woken.swap(false, Ordering::AcqRel) {
            poll_host(state);
        }
        if ended(state) {
            return;
        }
        if state.host_panicked.get() {
            state.stop.set(Some(Stop::HostPanic));
            return;
        }
        if job.disposed.is_cancelled() {
            state.stop.set(Some(Stop::Disposed));
            return;
        }
        if job.signal.is_cancelled() {
            state.stop.set(Some(Stop::Abort));
            return;
        }
        if Instant::now() >= deadline {
            state.stop.set(Some(Stop::Wall));
            return;
        }
        let answers = std::mem::take(&mut *state.ready.borrow_mut());
        if !answers.is_empty() {
            for answer in answers {
                settle(context, state, answer);
            }
            continue;
        }
        if runtime.is_job_pending() || state.host_panicked.get() {
            continue;
        }
        // Nothing can move: sleep until a future, the signal or a disposal wakes the thread (a
        // wake since the polls above ends the sleep at once), or the deadline.
        let _ = cancelled.as_mut().poll(&mut cx);
        let _ = disposed.as_mut().poll(&mut cx);
        if state.wake.woken.load(Ordering::Acquire) {
            continue;
        }
        let now = Instant::now();
        if now < deadline {
            std::thread::park_timeout((deadline - now).min(MAX_SLEEP));
        }
    }
}

/// Settles one binding call in the engine (spec §3.6.3 steps 3–4).
fn settle(context: &Context, state: &State, answer: Answer) {
    let Some((resolve, reject)) = state.pending.borrow_mut().remove(&answer.id) else {
        free(answer.outcome);
        return;
    };
    context.with(|ctx| {
        let (Ok(resolve), Ok(reject)) = (resolve.restore(&ctx), reject.restore(&ctx)) else {
            return;
        };
        let called = match &answer.outcome {
            Ok(value) if crate::json::is_lossless(value) => match to_js(&ctx, value) {
                Ok(js) => resolve.call::<_, ()>((js,)),
                // The engine could not hold it (its heap is full): the call fails, the run
                // goes on (or ends at its own next allocation).
                Err(_) => {
                    drop(ctx.catch());
                    reject.call::<_, ()>(("binding resolution could not be built in the engine",))
                }
            },
            Ok(_) => reject.call::<_, ()>(("binding resolution must be lossless JSON",)),
            Err(message) => reject.call::<_, ()>((message.as_str(),)),
        };
        if called.is_err() {
            drop(ctx.catch());
        }
    });
    free(answer.outcome);
}

fn free(outcome: Result<Value, String>) {
    if let Ok(value) = outcome {
        crate::json::free(value);
    }
}

/// The program as JavaScript: type annotations stripped when the `typescript` feature is on.
#[cfg(feature = "typescript")]
fn strip(program: String) -> Result<String, String> {
    super::typescript::strip(&program)
}

#[cfg(not(feature = "typescript"))]
fn strip(program: String) -> Result<String, String> {
    Ok(program)
}

#[cfg(test)]
mod tests {
    use super::may_be_javascript;

    #[test]
    fn plain_javascript_skips_the_stripper_and_type_arguments_do_not() {
        for js in [
            "return 1",
            "for (let i = 0; i < 100; i++) await tools.a({}); return 1",
            "const xs = [1, 2].map((x) => x > 1); return xs",
            "if (a.length > 0 && b <= c) return a >= b",
            "return x < y ? -1 : x > y ? 1 : 0",
            "const f = (a) => ({ a }); return f(1) > [0]",
            "return a >> 2 < b",
            "return a < b > \u{00A0}c",
            "return a < b > é",
        ] {
            assert!(may_be_javascript(js), "{js}");
        }
        for ts in [
            "return f<string>(x)",
            "return f<A, B>(x)",
            "return new Map<string, number>()",
            "const g = f<string>\nreturn g",
            "return f<T>`x`",
            "return f<Array<T>>(x)",
            "return a<b> in c",
            "return f<T> /* c */ (x)",
            "return x < y >",
            "const T = 0; return f<T>\u{00A0}(1)",
            "return a<b>\u{2028}c",
            "return a<b>\u{3000}`x`",
        ] {
            assert!(!may_be_javascript(ts), "{ts}");
        }
    }
}

//! One run on its own thread: a fresh QuickJS runtime and context, the bootstrap, the program,
//! and an event loop that runs engine jobs and settles binding calls answered by the host.

use super::convert::{TapeError, from_tape, to_js};
use crate::code::{CodeResult, FailureKind, HostFn, Namespace, OutputLedger};
use rquickjs::{Array, Context, Ctx, Function, Persistent, Runtime};
use serde_json::Value;
use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::rc::Rc;
use std::sync::mpsc;
use std::time::{Duration, Instant};
use tokio_util::sync::CancellationToken;

const BOOTSTRAP: &str = include_str!("bootstrap.js");

/// One run's budgets, from the validated configuration.
#[derive(Clone, Copy, Debug)]
pub(super) struct EngineLimits {
    pub(super) compute: Duration,
    pub(super) wall: Duration,
    pub(super) max_output_bytes: usize,
    pub(super) memory_bytes: usize,
    pub(super) stack_bytes: usize,
}

/// What a run's thread needs.
pub(super) struct Job {
    pub(super) program: String,
    pub(super) bindings: Vec<Namespace>,
    pub(super) signal: CancellationToken,
    pub(super) disposed: CancellationToken,
    pub(super) limits: EngineLimits,
    pub(super) host: tokio::runtime::Handle,
}

/// Why the engine was stopped from outside the program.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Stop {
    Compute,
    Wall,
    Abort,
    Disposed,
    OutputLimit,
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

/// A binding call's answer, sent from the host runtime to the engine thread.
struct Answer {
    id: u64,
    outcome: Result<Value, String>,
    /// The host function's completed future, dropped only once the program has the outcome:
    /// the bridge writes the call's settle record then (Code Mode spec §4.8.1).
    _call: crate::call::BoxFuture<Result<Value, String>>,
}

type Pending = HashMap<u64, (Persistent<Function<'static>>, Persistent<Function<'static>>)>;

struct State {
    ledger: RefCell<Option<OutputLedger>>,
    stop: Cell<Option<Stop>>,
    outcome: RefCell<Option<Outcome>>,
    pending: RefCell<Pending>,
    next_id: Cell<u64>,
    /// The run's one host task awaiting its binding calls, aborted when the run ends (an
    /// answer after that is dropped anyway; a binding that never answers must not outlive the
    /// run).
    forwarder: RefCell<Option<tokio::task::AbortHandle>>,
}

fn thread_cpu() -> Duration {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::ThreadCPUTime);
    Duration::new(
        t.tv_sec.max(0) as u64,
        t.tv_nsec.clamp(0, 999_999_999) as u32,
    )
}

/// Runs `job` to its result. Called on the run's own thread.
pub(super) fn run(job: Job) -> CodeResult {
    let ledger = OutputLedger::new(job.limits.max_output_bytes);
    let program = match strip(&job.program) {
        Ok(program) => program,
        Err(message) => return ledger.fail(FailureKind::Exception, message),
    };
    let runtime = match Runtime::new() {
        Ok(rt) => rt,
        Err(e) => return ledger.fail(FailureKind::WorkerExit, format!("worker error: {e}")),
    };
    runtime.set_memory_limit(job.limits.memory_bytes);
    runtime.set_max_stack_size(job.limits.stack_bytes);
    let context = match Context::custom::<(
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
    {
        Ok(ctx) => ctx,
        Err(e) => return ledger.fail(FailureKind::WorkerExit, format!("worker error: {e}")),
    };
    let state = Rc::new(State {
        ledger: RefCell::new(Some(ledger)),
        stop: Cell::new(None),
        outcome: RefCell::new(None),
        pending: RefCell::new(HashMap::new()),
        next_id: Cell::new(0),
        forwarder: RefCell::new(None),
    });
    let started = Instant::now();
    let deadline = started + job.limits.wall;
    let cpu_start = thread_cpu();
    let compute = job.limits.compute;
    {
        let (state, signal, disposed) =
            (Rc::clone(&state), job.signal.clone(), job.disposed.clone());
        runtime.set_interrupt_handler(Some(Box::new(move || {
            if state.stop.get().is_some() {
                return true;
            }
            let stop = if disposed.is_cancelled() {
                Some(Stop::Disposed)
            } else if signal.is_cancelled() {
                Some(Stop::Abort)
            } else if thread_cpu().saturating_sub(cpu_start) > compute {
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
    let (answers, inbox) = mpsc::channel::<Answer>();
    let started_ok = context.with(|ctx| start(&ctx, &job, &program, &state, answers));
    if let Err(message) = started_ok {
        set_outcome(&state, Outcome::Threw(message));
    }
    event_loop(&runtime, &context, &job, &state, &inbox, deadline);
    // Drop every engine value (the pending resolvers) before the runtime.
    state.pending.borrow_mut().clear();
    if let Some(forwarder) = state.forwarder.borrow_mut().take() {
        forwarder.abort();
    }
    let stop = state.stop.get();
    let outcome = state.outcome.borrow_mut().take();
    // Only a failure can be an exhausted heap; measuring walks the heap, so only then.
    let memory_full = !matches!(
        outcome,
        Some(Outcome::Done(_) | Outcome::Lossy | Outcome::TooLarge)
    ) && {
        let usage = runtime.memory_usage();
        usage.malloc_size as u128 * 10 >= job.limits.memory_bytes as u128 * 9
    };
    drop(context);
    runtime.set_interrupt_handler(None);
    drop(runtime);
    let ledger = state
        .ledger
        .borrow_mut()
        .take()
        .unwrap_or_else(|| OutputLedger::new(job.limits.max_output_bytes));
    finish(ledger, stop, outcome, memory_full, &job.limits)
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

/// Evaluates the bootstrap and starts the program. `Err` carries an exception's text.
fn start(
    ctx: &Ctx<'_>,
    job: &Job,
    program: &str,
    state: &Rc<State>,
    answers: mpsc::Sender<Answer>,
) -> Result<(), String> {
    let fail = |ctx: &Ctx<'_>, e: rquickjs::Error| -> String {
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
    };
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
    let cap = job
        .limits
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
    let functions: Vec<Vec<HostFn>> = job
        .bindings
        .iter()
        .map(|ns| ns.functions.iter().map(|(_, f)| f.clone()).collect())
        .collect();
    // One task per run awaits every binding call and forwards the answers in the order they
    // complete: the bridge answers in commit order, so the program receives them in that order.
    let (calls, mut waiting_calls) = tokio::sync::mpsc::unbounded_channel::<(
        u64,
        crate::call::BoxFuture<Result<Value, String>>,
    )>();
    let forwarder = job.host.spawn(async move {
        use futures_util::StreamExt;
        let mut pending = futures_util::stream::FuturesUnordered::new();
        let mut open = true;
        loop {
            tokio::select! {
                biased;
                Some((id, outcome, call)) = pending.next(), if !pending.is_empty() => {
                    let _ = answers.send(Answer { id, outcome, _call: call });
                }
                call = waiting_calls.recv(), if open => match call {
                    Some((id, mut future)) => pending.push(async move {
                        let outcome = (&mut future).await;
                        (id, outcome, future)
                    }),
                    None => open = false,
                },
                else => break,
            }
        }
    });
    *state.forwarder.borrow_mut() = Some(forwarder.abort_handle());
    let call_state = Rc::clone(state);

    let host_call = Function::new(
        ctx.clone(),
        move |ns: u32,
              member: u32,
              tape: Array<'_>,
              resolve: Function<'_>,
              reject: Function<'_>|
              -> rquickjs::Result<()> {
            let function = functions
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
            // bridge queues the call) runs before the next binding call; only the wait goes to
            // the forwarder.
            let _ = calls.send((id, function(argument)));
            Ok(())
        },
    )
    .map_err(|e| fail(ctx, e))?;
    let start: Function = setup
        .call((host_call, host_log, on_done, on_error))
        .map_err(|e| fail(ctx, e))?;
    let spec = Array::new(ctx.clone()).map_err(|e| fail(ctx, e))?;
    for (i, ns) in job.bindings.iter().enumerate() {
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
    start
        .call::<_, ()>((spec, program))
        .map_err(|e| fail(ctx, e))?;
    Ok(())
}

/// Runs jobs until the program ends, a stop fires, or the wall deadline passes; between jobs,
/// waits for binding answers.
fn event_loop(
    runtime: &Runtime,
    context: &Context,
    job: &Job,
    state: &State,
    inbox: &mpsc::Receiver<Answer>,
    deadline: Instant,
) {
    loop {
        // Run every pending job (promise reactions: the program's continuations).
        loop {
            // The first terminal event wins: jobs left after the program completed (a
            // `.then` it never awaited) do not delay its result.
            if state.stop.get().is_some() || state.outcome.borrow().is_some() {
                break;
            }
            match runtime.execute_pending_job() {
                Ok(true) => continue,
                Ok(false) => break,
                Err(exception) => {
                    // A job threw past every handler: only an interrupt does that here (the
                    // program's own rejections settle its promise). Clear it.
                    exception.0.with(|ctx| drop(ctx.catch()));
                    break;
                }
            }
        }
        if state.stop.get().is_some() || state.outcome.borrow().is_some() {
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
        let now = Instant::now();
        if now >= deadline {
            state.stop.set(Some(Stop::Wall));
            return;
        }
        let wait = (deadline - now).min(Duration::from_millis(5));
        match inbox.recv_timeout(wait) {
            Ok(answer) => settle(context, state, answer),
            Err(mpsc::RecvTimeoutError::Timeout) => {}
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                // Nothing can answer any more and nothing is runnable: the program waits
                // forever; the wall deadline ends it.
                std::thread::sleep(wait);
            }
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
fn strip(program: &str) -> Result<String, String> {
    super::typescript::strip(program)
}

#[cfg(not(feature = "typescript"))]
fn strip(program: &str) -> Result<String, String> {
    Ok(program.to_owned())
}

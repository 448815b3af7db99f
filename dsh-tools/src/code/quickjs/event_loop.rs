//! The event loop of a run: engine jobs (the program's continuations), then the host futures
//! polled on this same thread (the companion, the binding calls), their answers settled in the
//! engine; asleep only when nothing can move, until a wake, the signal, a disposal or the wall
//! deadline. The interrupt handler polls the host futures here too while the program computes.

use super::convert::to_js;
use super::state::{Answer, State, Stop, ended};
use futures_util::stream::StreamExt;
use rquickjs::{Context, Runtime};
use serde_json::Value;
use std::future::Future;
use std::pin::pin;
use std::sync::atomic::Ordering;
use std::task::Poll;
use std::time::{Duration, Instant};
use tokio_util::sync::CancellationToken;

/// The longest the loop sleeps without looking at its deadlines (every wake source wakes it
/// sooner; this only bounds a missed one).
const MAX_SLEEP: Duration = Duration::from_millis(10);

/// The most of one host poll credited back to the program's compute budget.
const MAX_HOST_CREDIT: Duration = Duration::from_micros(100);

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
pub(super) fn poll_host(state: &State) {
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
pub(super) fn event_loop(
    runtime: &Runtime,
    context: &Context,
    signal: &CancellationToken,
    disposal: &CancellationToken,
    state: &State,
    deadline: Instant,
) {
    let mut cx = std::task::Context::from_waker(&state.waker);
    let mut cancelled = pin!(signal.cancelled());
    let mut disposed = pin!(disposal.cancelled());
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
        if disposal.is_cancelled() {
            state.stop.set(Some(Stop::Disposed));
            return;
        }
        if signal.is_cancelled() {
            state.stop.set(Some(Stop::Abort));
            return;
        }
        if Instant::now() >= deadline {
            state.stop.set(Some(Stop::Wall));
            return;
        }
        let mut answers = std::mem::take(&mut *state.ready.borrow_mut());
        if !answers.is_empty() {
            for answer in answers.drain(..) {
                settle(context, state, answer);
            }
            // Its room back for the next answers (unless some arrived meanwhile, or a burst
            // made it large).
            if answers.capacity() <= 64
                && let Ok(mut ready) = state.ready.try_borrow_mut()
                && ready.is_empty()
            {
                *ready = answers;
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
    let Some(pending) = state.pending.borrow_mut().remove(&answer.id) else {
        free(answer.outcome);
        return;
    };
    context.with(|ctx| {
        let (Ok(resolve), Ok(reject)) =
            (pending.resolve.restore(&ctx), pending.reject.restore(&ctx))
        else {
            return;
        };
        let failed = |message: &str| {
            reject.call::<_, ()>((state.failure(&ctx, pending.ns, pending.member, message),))
        };
        let called = match &answer.outcome {
            Ok(value) if crate::json::is_lossless(value) => match to_js(&ctx, value) {
                Ok(js) => resolve.call::<_, ()>((js,)),
                // The engine could not hold it (its heap is full): the call fails, the run
                // goes on (or ends at its own next allocation).
                Err(_) => {
                    drop(ctx.catch());
                    failed("binding resolution could not be built in the engine")
                }
            },
            Ok(_) => failed("binding resolution must be lossless JSON"),
            Err(message) => failed(message),
        };
        if called.is_err() {
            drop(ctx.catch());
        }
    });
    free(answer.outcome);
}

pub(super) fn free(outcome: Result<Value, String>) {
    if let Ok(value) = outcome {
        crate::json::free(value);
    }
}

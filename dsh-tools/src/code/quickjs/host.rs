//! The bootstrap and the host functions handed to it: `bootstrap.js` evaluated in a fresh
//! context and given `host_call` (a binding call, queued in the program's order), `host_log`
//! (the output ledger), `on_done` and `on_error` (how the program ended) and the log inspector's
//! source; and the text of an engine error.

use super::convert::{TapeError, from_tape};
use super::state::{Answer, Outcome, State, Stop, set_outcome};
use rquickjs::{Array, Ctx, Function, Persistent};
use std::rc::Rc;
use std::sync::atomic::Ordering;

const BOOTSTRAP: &str = include_str!("bootstrap.js");
/// The log inspector's source, compiled by the bootstrap on first use.
const INSPECTOR: &str = include_str!("inspect.js");

/// The most host bytes one binding argument may take (an engine string referenced many times
/// becomes as many host strings).
const MAX_ARGUMENT_BYTES: usize = 64 << 20;

/// Evaluates the bootstrap and installs the host functions; returns the bootstrap's `start`.
pub(super) fn install<'js>(
    ctx: &Ctx<'js>,
    max_output_bytes: usize,
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
    let cap = max_output_bytes.saturating_mul(2).saturating_add(1 << 20);
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

/// The text of an engine error (a thrown value's, for an exception).
pub(super) fn fail(ctx: &Ctx<'_>, e: rquickjs::Error) -> String {
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

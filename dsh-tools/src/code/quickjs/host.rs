//! The bootstrap and the host functions handed to it: `bootstrap.js` evaluated in a fresh
//! context and given `host_call` (a binding call, queued in the program's order), `host_log`
//! (the output ledger), `on_done` and `on_error` (how the program ended), the log inspector's
//! source and the rarely needed parts' (`rare.js`); and the text of an engine error.

use super::convert::TapeError;
use super::state::{Answer, Bridge, Outcome, Pending, State, Stop, set_outcome};
use super::walk::{Intrinsics, lossless};
use rquickjs::{Array, Ctx, Function, Persistent, Promise};
use std::rc::Rc;
use std::sync::atomic::Ordering;

const BOOTSTRAP: &str = include_str!("bootstrap.js");
/// The log inspector's source, compiled by the bootstrap on first use.
const INSPECTOR: &str = include_str!("inspect.js");
/// `toTape` and `notATool`, compiled by the bootstrap the first time either is needed.
const RARE: &str = include_str!("rare.js");

/// The most host bytes one binding argument may take (an engine string referenced many times
/// becomes as many host strings).
const MAX_ARGUMENT_BYTES: usize = 64 << 20;

/// Constrains a binding call's closure to every context lifetime (a closure's elided lifetimes
/// cannot say that its promise lives as long as its context).
fn binding_call<F>(f: F) -> F
where
    F: for<'js> Fn(Ctx<'js>, u32, u32, rquickjs::Value<'js>) -> rquickjs::Result<Promise<'js>>,
{
    f
}

/// Evaluates the bootstrap and installs the host functions; returns the bootstrap's `start`
/// and what the run keeps of the rest.
pub(super) fn install<'js>(
    ctx: &Ctx<'js>,
    max_output_bytes: usize,
    state: &Rc<State>,
) -> Result<(Function<'js>, Bridge), String> {
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
        move |kind: i32, value: rquickjs::Value<'_>| -> rquickjs::Result<()> {
            let ctx = value.ctx().clone();
            if kind != 1 {
                set_outcome(&done_state, Outcome::Done(None));
                return Ok(());
            }
            let read = match done_state.bridge.borrow().as_ref() {
                Some(bridge) => Some(bridge.walk.restore(&ctx)?),
                None => None,
            };
            let outcome = match read {
                Some(with) => match lossless(&ctx, value, cap, &with)? {
                    Ok(value) => Outcome::Done(Some(value)),
                    Err(TapeError::TooLarge) => Outcome::TooLarge,
                    Err(TapeError::Malformed) => Outcome::Lossy,
                },
                None => Outcome::Lossy,
            };
            set_outcome(&done_state, outcome);
            Ok(())
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
        binding_call(move |ctx, ns, member, arg| host_call(&ctx, &call_state, ns, member, arg)),
    )
    .map_err(|e| fail(ctx, e))?;
    let handed: Array = setup
        .call((host_call, host_log, on_done, on_error, INSPECTOR, RARE))
        .map_err(|e| fail(ctx, e))?;
    let start: Function = handed.get(0).map_err(|e| fail(ctx, e))?;
    let fail_for: Function = handed.get(2).map_err(|e| fail(ctx, e))?;
    let bridge = Bridge {
        walk: Intrinsics::from_setup(ctx, &handed).map_err(|e| fail(ctx, e))?,
        fail_for: Persistent::save(ctx, fail_for),
    };
    Ok((start, bridge))
}

/// A binding call (spec §3.6.3): the argument checked and read on the host, the host function
/// called in the program's order, its answer settled by the event loop. Returns the call's
/// promise, already rejected when the argument is refused.
fn host_call<'js>(
    ctx: &Ctx<'js>,
    state: &State,
    ns: u32,
    member: u32,
    arg: rquickjs::Value<'js>,
) -> rquickjs::Result<Promise<'js>> {
    let (promise, resolve, reject) = ctx.promise()?;
    let with = match state.bridge.borrow().as_ref() {
        Some(bridge) => Some(bridge.walk.restore(ctx)?),
        None => None,
    };
    let read = match with {
        Some(with) => lossless(ctx, arg, MAX_ARGUMENT_BYTES, &with)?,
        None => Err(TapeError::Malformed),
    };
    let function = state
        .functions
        .borrow()
        .get(ns as usize)
        .and_then(|f| f.get(member as usize))
        .cloned();
    let refused = |message: &str| -> rquickjs::Result<Promise<'js>> {
        reject.call::<_, ()>((state.failure(ctx, ns, member, message),))?;
        Ok(promise.clone())
    };
    let argument = match read {
        Ok(argument) => argument,
        Err(TapeError::TooLarge) => {
            let message = format!(
                "binding arguments are larger than {} MiB on the host",
                MAX_ARGUMENT_BYTES >> 20
            );
            return refused(&message);
        }
        Err(TapeError::Malformed) => return refused("binding arguments must be lossless JSON"),
    };
    let Some(function) = function else {
        crate::json::free(argument);
        return refused("binding arguments must be lossless JSON");
    };
    let id = state.next_id.get() + 1;
    state.next_id.set(id);
    let pending = Pending {
        resolve: Persistent::save(ctx, resolve),
        reject: Persistent::save(ctx, reject),
        ns,
        member,
    };
    state.pending.borrow_mut().insert(id, pending);
    // Called here, in the program's order: a host function's synchronous part (the bridge
    // queues the call) runs before the next binding call; the event loop polls the wait.
    let mut future = function(argument);
    state.calls.borrow_mut().push(Box::pin(async move {
        let outcome = (&mut future).await;
        Answer {
            id,
            outcome,
            _call: future,
        }
    }));
    // A new future: polled at the next chance (the loop, or an interrupt check).
    state.wake.woken.store(true, Ordering::Release);
    Ok(promise)
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

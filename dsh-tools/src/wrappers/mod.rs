//! Ready-made around-dispatch wrappers: [`timeout`], [`retry`] and [`tracing`](trace).
//!
//! Register them like any wrapper (`registry.on_execute(…)`); the first registered is outermost,
//! so register tracing first to see the whole call, retries next, and timeouts last (each attempt
//! gets its own deadline).

mod retry;
mod timeout;
mod trace;

pub use retry::{Retry, is_transient, retry};
pub use timeout::{Timeouts, timeout};
pub use trace::{Trace, trace};

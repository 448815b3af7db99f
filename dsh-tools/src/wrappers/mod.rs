//! Ready-made around-dispatch wrappers: [`timeout`] and [`retry`].
//!
//! Register them like any wrapper (`registry.on_execute(…)`); the first registered is outermost,
//! so register retries before timeouts (each attempt gets its own deadline). Tracing needs no
//! wrapper: the pipeline opens every call's span itself ([`telemetry`](crate::telemetry)), and
//! [`retry`] opens an `attempt {n}` span for each try inside it.

mod retry;
mod timeout;

pub use retry::{Retry, is_transient, retry};
pub use timeout::{Timeouts, timeout};

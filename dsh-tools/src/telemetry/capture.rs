//! Content capture: the arguments and results of calls on their spans, off by default.

use std::sync::atomic::{AtomicUsize, Ordering};

/// The bound [`capture_content`] keeps to when switched on: 8 KiB of text per attribute.
pub const DEFAULT_CAPTURE_LIMIT: usize = 8 * 1024;

/// 0: off; otherwise the most bytes of text an attribute keeps.
static LIMIT: AtomicUsize = AtomicUsize::new(0);

/// Records each call's arguments (`gen_ai.tool.call.arguments`) and result
/// (`gen_ai.tool.call.result`) on its span, as compact JSON cut to
/// [`DEFAULT_CAPTURE_LIMIT`] bytes (`…` marks a cut), or stops recording them.
///
/// Off by default: arguments and results may hold what a user would not send to a tracing
/// backend (file contents, tokens, personal data). Process-wide.
///
/// ```
/// use dsh_tools::telemetry;
///
/// telemetry::capture_content(true);
/// assert_eq!(telemetry::capture_limit(), Some(telemetry::DEFAULT_CAPTURE_LIMIT));
/// telemetry::capture_content(false);
/// assert_eq!(telemetry::capture_limit(), None);
/// ```
pub fn capture_content(on: bool) {
    set_capture_limit(on.then_some(DEFAULT_CAPTURE_LIMIT));
}

/// Records content, cut to `limit` bytes each (at least 1), or none (`None`).
pub fn set_capture_limit(limit: Option<usize>) {
    LIMIT.store(limit.map_or(0, |l| l.max(1)), Ordering::Relaxed);
}

/// The bound content is kept to, when it is captured.
pub fn capture_limit() -> Option<usize> {
    match LIMIT.load(Ordering::Relaxed) {
        0 => None,
        n => Some(n),
    }
}

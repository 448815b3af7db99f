//! Where a `run_code` sub-call's dispatch (wrappers and body) is polled: on the thread that polls
//! the run's lane (the program's own thread under the QuickJS runtime: no thread is woken and the
//! answer reaches the program at once), or as a task of its own on the host's runtime (a body
//! that blocks or computes for long then holds a worker, never the program, its interrupt checks,
//! its cancellation or the other calls of a `Promise.all`).
//!
//! Nothing says in advance which a body is, so the registry learns it per tool. A tool starts on
//! the runtime; once [`PROMOTE_AFTER`] of its dispatches in a row settled in their first poll in
//! under [`QUICK`], its dispatches get their first poll inline (the rest, if they wait, runs as a
//! task on the runtime). An inline poll that takes longer than [`SLOW`] sends the tool back to the
//! runtime, where it must earn its place again: a body that blocks costs its run that one poll,
//! and stays on the runtime for as long as its first polls are slow there. (Demoting for good on
//! one slow poll turned a machine's hiccup, a thread descheduled for a millisecond, into a
//! permanent slowdown of the tool; measured in the bench.) A program can choose arguments that
//! make a promoted tool block in that poll (a file that is a FIFO, say): the run's thread is then
//! held until the body returns, as a tokio worker would be by the same body called directly.

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

/// Consecutive quick first polls after which a tool is dispatched inline.
pub(crate) const PROMOTE_AFTER: u32 = 4;
/// A first poll that settled within this is quick.
pub(crate) const QUICK: Duration = Duration::from_micros(100);
/// An inline poll longer than this sends its tool back to the runtime.
pub(crate) const SLOW: Duration = Duration::from_millis(1);
/// The most tools whose placement is remembered (others stay on the runtime).
const MAX_TOOLS: usize = 4_096;

/// What a registry learned of one tool's dispatches.
#[derive(Clone, Copy, Debug, Default)]
struct Learned {
    /// Consecutive dispatches that settled in a quick first poll on the runtime.
    quick: u32,
}

/// Where each tool's dispatches are polled, learned from how they ran (one per registry).
#[derive(Debug, Default)]
pub(crate) struct Placements {
    tools: Mutex<HashMap<Arc<str>, Learned>>,
}

impl Placements {
    /// Whether `tool`'s next dispatch is polled inline.
    pub(crate) fn inline(&self, tool: &str) -> bool {
        let tools = self.tools.lock().unwrap_or_else(|e| e.into_inner());
        tools.get(tool).is_some_and(|l| l.quick >= PROMOTE_AFTER)
    }

    /// A dispatch of `tool` on the runtime: its first poll took `took` and settled or not.
    fn observe_first(&self, tool: &str, took: Duration, settled: bool) {
        let mut tools = self.tools.lock().unwrap_or_else(|e| e.into_inner());
        if !tools.contains_key(tool) && tools.len() >= MAX_TOOLS {
            return;
        }
        let learned = tools.entry(Arc::from(tool)).or_default();
        if settled && took < QUICK {
            learned.quick = learned.quick.saturating_add(1);
        } else {
            learned.quick = 0;
        }
    }

    /// An inline poll of `tool` was slow: back to the runtime, to earn its place again.
    pub(crate) fn demote(&self, tool: &str) {
        let mut tools = self.tools.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(learned) = tools.get_mut(tool) {
            learned.quick = 0;
        }
    }

    /// A tool of this name was registered again: what was learned no longer holds.
    pub(crate) fn forget(&self, tool: &str) {
        self.tools
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(tool);
    }
}

/// A dispatch on the runtime: its first poll is timed to learn whether the tool may go inline.
pub(crate) struct Observed<F> {
    pub(crate) future: F,
    pub(crate) tool: Arc<str>,
    pub(crate) placements: Arc<Placements>,
    pub(crate) first: bool,
}

impl<F: Future + Unpin> Future for Observed<F> {
    type Output = F::Output;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        let this = self.get_mut();
        if !this.first {
            return Pin::new(&mut this.future).poll(cx);
        }
        this.first = false;
        let started = Instant::now();
        let polled = Pin::new(&mut this.future).poll(cx);
        this.placements
            .observe_first(&this.tool, started.elapsed(), polled.is_ready());
        polled
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tool_goes_inline_after_quick_dispatches_and_back_after_a_slow_one() {
        let placements = Placements::default();
        for _ in 0..PROMOTE_AFTER - 1 {
            placements.observe_first("t", Duration::from_micros(3), true);
        }
        assert!(!placements.inline("t"));
        // A pending first poll starts the count again.
        placements.observe_first("t", Duration::from_micros(3), false);
        for _ in 0..PROMOTE_AFTER - 1 {
            placements.observe_first("t", Duration::from_micros(3), true);
        }
        assert!(!placements.inline("t"));
        placements.observe_first("t", Duration::from_micros(3), true);
        assert!(placements.inline("t"));
        placements.demote("t");
        assert!(!placements.inline("t"));
        for _ in 0..PROMOTE_AFTER - 1 {
            placements.observe_first("t", Duration::from_micros(3), true);
        }
        assert!(
            !placements.inline("t"),
            "a demoted tool earns its place again"
        );
        placements.observe_first("t", Duration::from_micros(3), true);
        assert!(placements.inline("t"));
        placements.forget("t");
        assert!(!placements.inline("t"));
    }

    #[test]
    fn a_slow_first_poll_never_promotes() {
        let placements = Placements::default();
        for _ in 0..10 {
            placements.observe_first("t", QUICK + Duration::from_micros(1), true);
        }
        assert!(!placements.inline("t"));
    }
}

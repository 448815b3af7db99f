//! Validating values against a [`CompiledSchema`] (spec §2.2).
//!
//! Two engines that agree on validity (property-tested):
//! * `fits` — the fast path: recursive, answers yes/no, allocates nothing on valid input. Its
//!   recursion is bounded; below [`FAST_DEPTH`] levels it hands the subtree to the collector.
//! * `Collector` — iterative (explicit task stack), lists every violation with its path in the
//!   spec's order. Inside a `oneOf` branch it runs *silently*: it only needs to know whether the
//!   branch matched, so the first violation abandons the branch.

mod collector;
mod explain;
mod fits;

use super::compile::CompiledSchema;
use super::pattern::SessionGuard;
use collector::Collector;
use fits::FAST_DEPTH;
use serde_json::Value;

/// Where violation paths start (spec §2.3).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Root<'a> {
    /// The default label `value`: `"value.file" must be a string`.
    #[default]
    Value,
    /// Any other label, used verbatim: `"output.n" must be an integer`.
    Label(&'a str),
    /// Parameter-root mode (tool arguments): root properties have no prefix and the root itself
    /// renders as `arguments`: `missing required property "path"`, `"arguments" must be an object`.
    Parameters,
}

impl Root<'_> {
    fn label(&self) -> &str {
        match self {
            Root::Value => "value",
            Root::Label(l) => l,
            Root::Parameters => "",
        }
    }
}

impl CompiledSchema {
    /// Whether `value` is valid. Allocates nothing when it is (unless the value is nested more
    /// than a few dozen levels deep, where the check goes on iteratively).
    #[inline]
    pub fn is_valid(&self, value: &Value) -> bool {
        if self.has_patterns {
            let _budget = SessionGuard::enter();
            return self.fits::<false>(0, value, FAST_DEPTH);
        }
        self.fits::<false>(0, value, FAST_DEPTH)
    }

    /// Every violation of `value`, with paths under the label `value`; empty when valid.
    pub fn validate(&self, value: &Value) -> Vec<String> {
        self.validate_at(value, Root::Value)
    }

    /// Every violation of `value`, with paths under `root`; empty when valid.
    ///
    /// At most [`MAX_LISTED_VIOLATIONS`](super::MAX_LISTED_VIOLATIONS) messages are listed; a
    /// final line counts the rest.
    pub fn validate_at(&self, value: &Value, root: Root<'_>) -> Vec<String> {
        // One regex budget for the fast path and the collector: a long string is matched once.
        let _budget = self.has_patterns.then(SessionGuard::enter);
        if self.is_valid(value) {
            return Vec::new();
        }
        self.collect(value, root)
    }

    /// Every violation, without trying the fast path first.
    #[cold]
    #[inline(never)]
    pub(crate) fn collect(&self, value: &Value, root: Root<'_>) -> Vec<String> {
        let _budget = self.has_patterns.then(SessionGuard::enter);
        let mut c = Collector::new(self, root.label(), false);
        c.run(0, value);
        c.sink.finish()
    }
}

/// The fast path with an explicit recursion budget (0 = start in the silent collector).
#[cfg(test)]
pub(crate) fn fits_with_budget(schema: &CompiledSchema, value: &Value, budget: u32) -> bool {
    schema.fits::<false>(0, value, budget)
}

//! The listing limits of a violation report, and the sink that keeps to them (the validator,
//! the subset check and the bridge all report through them).

/// Most violations one report lists; the rest are counted in a final summary line. Keeps the
/// memory of a report bounded for adversarial inputs (a violation at every level of a tree
/// nested 100,000 deep would otherwise render gigabytes of paths).
pub const MAX_LISTED_VIOLATIONS: usize = 1000;
/// Most bytes of violation text one report holds before the rest are only counted.
pub const MAX_LISTED_BYTES: usize = 1 << 20;

/// Collects violation messages up to the listing limits.
#[derive(Default)]
pub(crate) struct Sink {
    out: Vec<String>,
    bytes: usize,
    unlisted: usize,
}

impl Sink {
    /// Whether another message would still be listed.
    #[inline]
    pub(crate) fn has_room(&self) -> bool {
        self.unlisted == 0
            && self.out.len() < MAX_LISTED_VIOLATIONS
            && self.bytes < MAX_LISTED_BYTES
    }

    /// Adds a message built by `f` (called only when the message will be listed).
    /// A message longer than the bytes left is cut to fit, with a note of what was cut, so the
    /// byte bound holds for the whole report.
    pub(crate) fn add(&mut self, f: impl FnOnce() -> String) {
        if self.has_room() {
            let mut m = f();
            let room = MAX_LISTED_BYTES - self.bytes;
            if m.len() > room && room < 64 {
                // No room for a useful part of it: counted instead.
                self.unlisted += 1;
                return;
            }
            if m.len() > room {
                let mut end = room.saturating_sub(48);
                while end > 0 && !m.is_char_boundary(end) {
                    end -= 1;
                }
                let cut = m.len() - end;
                m.truncate(end);
                m.push_str(&format!("…({cut} more bytes)"));
            }
            self.bytes += m.len();
            self.out.push(m);
        } else {
            self.unlisted += 1;
        }
    }

    /// Number of violations seen so far, listed or not.
    pub(crate) fn count(&self) -> usize {
        self.out.len() + self.unlisted
    }

    pub(crate) fn finish(mut self) -> Vec<String> {
        if self.unlisted > 0 {
            self.out.push(format!(
                "... and {} more violations (not listed)",
                self.unlisted
            ));
        }
        self.out
    }
}

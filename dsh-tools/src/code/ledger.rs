//! The output ledger (Code Mode spec §3.7): one per run, bounding the outer output (the JSON of
//! the logs plus the completion or the failure message) in bytes, with the exact accounting and
//! the `output-limit` result every backend must produce.

use super::number::js_number;
use super::runtime::{CodeFailure, CodeResult, FailureKind};
use serde_json::{Number, Value};

fn number_cost(n: &Number) -> usize {
    if let Some(i) = n.as_i64() {
        return i.to_string().len();
    }
    if let Some(u) = n.as_u64() {
        return u.to_string().len();
    }
    js_number(n.as_f64().unwrap_or(0.0)).len()
}

/// The bytes of `s` as a JSON string literal (spec §3.7.2).
pub fn string_cost(s: &str) -> usize {
    2 + s
        .chars()
        .map(|c| match c {
            '"' | '\\' | '\u{8}' | '\t' | '\n' | '\u{c}' | '\r' => 2,
            c if (c as u32) < 0x20 => 6,
            c => c.len_utf8(),
        })
        .sum::<usize>()
}

/// The bytes of `value` as compact JSON (spec §3.7.3), walked without recursion.
pub fn value_cost(value: &Value) -> usize {
    let mut total = 0;
    let mut stack = vec![value];
    while let Some(v) = stack.pop() {
        total += match v {
            Value::Null | Value::Bool(true) => 4,
            Value::Bool(false) => 5,
            Value::Number(n) => number_cost(n),
            Value::String(s) => string_cost(s),
            Value::Array(items) => {
                stack.extend(items);
                2 + items.len().saturating_sub(1)
            }
            Value::Object(map) => {
                stack.extend(map.values());
                2 + map.len().saturating_sub(1)
                    + map.keys().map(|k| string_cost(k) + 1).sum::<usize>()
            }
        };
    }
    total
}

/// What one log entry costs on the host besides its bytes, for the ledger's host bound: the
/// `String` (24 bytes), its slot in the list growing by doubling (up to 24 more), and the
/// allocator's smallest chunk.
pub const LOG_ENTRY_HOST_BYTES: usize = 64;

/// One run's output ledger.
///
/// ```
/// use dsh_tools::code::{FailureKind, OutputLedger};
/// use serde_json::json;
///
/// let mut ledger = OutputLedger::new(11);
/// assert!(ledger.log("abc".into()));                  // ["abc"]: 7 bytes
/// let result = ledger.complete(Some(json!("xy")));    // "xy": 4 more, 11 in all
/// assert_eq!(result.value, Some(json!("xy")));
///
/// let mut tight = OutputLedger::new(10);
/// tight.log("abc".into());
/// let over = tight.complete(Some(json!("xy")));
/// assert_eq!(over.error.unwrap().kind, FailureKind::OutputLimit);
/// ```
///
/// Besides the spec's count (JSON bytes), the ledger bounds what its logs take on the host:
/// each entry's bytes plus [`LOG_ENTRY_HOST_BYTES`], at most twice the cap plus 1 MiB. Tiny
/// entries cost far more on the host than as JSON (`for (;;) console.log('a')` held 1.3 GB
/// under a 64 MiB cap), so a program logging millions of them reaches `output-limit` before
/// its JSON reaches the cap; entries of 60 bytes or more never do.
#[derive(Clone, Debug)]
pub struct OutputLedger {
    cap: usize,
    total: usize,
    /// The logs' host bytes (entry bytes plus [`LOG_ENTRY_HOST_BYTES`] each).
    host: usize,
    logs: Vec<String>,
    /// The entry that did not fit, once one did not.
    overflow: Option<String>,
}

impl OutputLedger {
    /// A ledger capped at `cap` bytes (at least 4 in a valid configuration).
    pub fn new(cap: usize) -> Self {
        Self {
            cap,
            total: 2,
            host: 0,
            logs: Vec::new(),
            overflow: None,
        }
    }

    /// Admits one log entry; `false` once the cap is passed (the run then ends as
    /// `output-limit`, and nothing more is admitted).
    pub fn log(&mut self, entry: String) -> bool {
        if self.overflow.is_some() {
            return false;
        }
        let cost = string_cost(&entry) + usize::from(!self.logs.is_empty());
        let host = entry.len().saturating_add(LOG_ENTRY_HOST_BYTES);
        let host_cap = self.cap.saturating_mul(2).saturating_add(1 << 20);
        if self.total + cost <= self.cap && self.host.saturating_add(host) <= host_cap {
            self.total += cost;
            self.host += host;
            self.logs.push(entry);
            true
        } else {
            self.overflow = Some(entry);
            false
        }
    }

    /// Whether a log entry has overflowed the cap.
    pub fn overflowed(&self) -> bool {
        self.overflow.is_some()
    }

    /// The result of a completion: `Some(value)` for a value (already checked lossless),
    /// `None` for `undefined` (the logs alone).
    pub fn complete(self, value: Option<Value>) -> CodeResult {
        if self.overflow.is_some() {
            return self.limit();
        }
        match value {
            Some(value) if self.total + value_cost(&value) > self.cap => {
                crate::json::free(value);
                self.limit()
            }
            value => CodeResult {
                logs: self.logs,
                value,
                error: None,
            },
        }
    }

    /// The result of a failure of any kind, through the failure check (an oversized message
    /// becomes `output-limit`).
    pub fn fail(self, kind: FailureKind, message: String) -> CodeResult {
        if self.overflow.is_some() || self.total + string_cost(&message) > self.cap {
            return self.limit();
        }
        CodeResult {
            logs: self.logs,
            value: None,
            error: Some(CodeFailure { kind, message }),
        }
    }

    /// The `output-limit` result of spec §3.7.6, for a completion known to exceed the cap
    /// without measuring it.
    pub fn exceeded(self) -> CodeResult {
        self.limit()
    }

    /// The `output-limit` result of spec §3.7.6.
    fn limit(self) -> CodeResult {
        let cap = self.cap;
        let full = format!("outer output exceeded {cap} bytes");
        let room = cap.saturating_sub(full.len() + 2);
        let mut kept: Vec<String> = Vec::new();
        let mut used = 2;
        for entry in self.logs.into_iter().chain(self.overflow) {
            let separator = usize::from(!kept.is_empty());
            let cost = string_cost(&entry) + separator;
            if used + cost <= room {
                used += cost;
                kept.push(entry);
                continue;
            }
            // The longest prefix (whole characters) that fits, kept when not empty.
            let mut prefix = String::new();
            let mut prefix_cost = 2 + separator;
            for c in entry.chars() {
                let c_cost = string_cost(c.encode_utf8(&mut [0; 4])) - 2;
                if used + prefix_cost + c_cost > room {
                    break;
                }
                prefix_cost += c_cost;
                prefix.push(c);
            }
            if !prefix.is_empty() {
                used += prefix_cost;
                kept.push(prefix);
            }
            break;
        }
        let mut message = String::new();
        let mut cost = 2;
        for c in full.chars() {
            if used + cost + c.len_utf8() > cap {
                break;
            }
            cost += c.len_utf8();
            message.push(c);
        }
        CodeResult {
            logs: kept,
            value: None,
            error: Some(CodeFailure {
                kind: FailureKind::OutputLimit,
                message,
            }),
        }
    }
}

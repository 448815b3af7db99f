//! Compact JSON text for values of any depth, byte for byte what serde_json writes.

use super::walk::deeper_than;
use serde_json::{Number, Value};

/// Renders a value as compact JSON text without recursion.
///
/// The text is byte for byte what `serde_json::to_string` writes, for values of any depth.
/// Used for messages (`must be one of [...]`), for a result's text block, and by the CLI for
/// output of any depth.
pub fn to_compact_string(value: &Value) -> String {
    // A value of ordinary depth goes through serde_json itself (recursive, and the fastest);
    // only a deep one needs the walk below.
    if !deeper_than(value, 64)
        && let Ok(text) = serde_json::to_string(value)
    {
        return text;
    }
    compact_walk(value)
}

/// [`to_compact_string`] for values of any depth: the same text, written without recursion.
pub(super) fn compact_walk(value: &Value) -> String {
    enum Step<'a> {
        Value(&'a Value),
        Text(&'static str),
        Key(&'a str),
    }
    let mut out = String::with_capacity(64);
    let mut stack = Vec::with_capacity(16);
    stack.push(Step::Value(value));
    while let Some(step) = stack.pop() {
        match step {
            Step::Text(t) => out.push_str(t),
            Step::Key(k) => {
                push_json_string(&mut out, k);
                out.push(':');
            }
            Step::Value(v) => match v {
                Value::Array(items) => {
                    out.push('[');
                    stack.push(Step::Text("]"));
                    for (i, item) in items.iter().enumerate().rev() {
                        stack.push(Step::Value(item));
                        if i > 0 {
                            stack.push(Step::Text(","));
                        }
                    }
                }
                Value::Object(map) => {
                    out.push('{');
                    stack.push(Step::Text("}"));
                    for (i, (k, item)) in map.iter().enumerate().rev() {
                        stack.push(Step::Value(item));
                        stack.push(Step::Key(k));
                        if i > 0 {
                            stack.push(Step::Text(","));
                        }
                    }
                }
                Value::String(s) => push_json_string(&mut out, s),
                Value::Number(n) => push_number(&mut out, n),
                Value::Bool(true) => out.push_str("true"),
                Value::Bool(false) => out.push_str("false"),
                Value::Null => out.push_str("null"),
            },
        }
    }
    out
}

/// The first `limit` bytes (at a character boundary) of a value's compact JSON text, followed
/// by `…` when it was cut; the whole text when it fits.
///
/// Work and memory are bounded by `limit`, not by the value: a value of any depth, a huge
/// array or a huge string costs no more than the text kept (span attributes of any size a
/// model or a tool returns).
pub(crate) fn compact_prefix(value: &Value, limit: usize) -> String {
    enum Frame<'a> {
        Array(std::slice::Iter<'a, Value>, bool),
        Object(serde_json::map::Iter<'a>, bool),
    }
    // A string longer than what is left is written only up to the cut (with a margin so the
    // text surely overflows the limit and is marked).
    fn push_capped(out: &mut String, s: &str, limit: usize) {
        let room = limit.saturating_sub(out.len()) + 4;
        if s.len() <= room {
            push_json_string(out, s);
        } else {
            let mut cut = room;
            while !s.is_char_boundary(cut) {
                cut -= 1;
            }
            push_json_string(out, &s[..cut]);
        }
    }
    let mut out = String::with_capacity(limit.min(256) + 4);
    let mut stack: Vec<Frame<'_>> = Vec::new();
    let mut next = Some(value);
    while out.len() <= limit {
        if let Some(v) = next.take() {
            match v {
                Value::Array(items) => {
                    out.push('[');
                    stack.push(Frame::Array(items.iter(), true));
                }
                Value::Object(map) => {
                    out.push('{');
                    stack.push(Frame::Object(map.iter(), true));
                }
                Value::String(s) => push_capped(&mut out, s, limit),
                Value::Number(n) => push_number(&mut out, n),
                Value::Bool(true) => out.push_str("true"),
                Value::Bool(false) => out.push_str("false"),
                Value::Null => out.push_str("null"),
            }
            continue;
        }
        let Some(frame) = stack.last_mut() else { break };
        match frame {
            Frame::Array(items, first) => match items.next() {
                Some(item) => {
                    if !std::mem::take(first) {
                        out.push(',');
                    }
                    next = Some(item);
                }
                None => {
                    out.push(']');
                    stack.pop();
                }
            },
            Frame::Object(entries, first) => match entries.next() {
                Some((key, item)) => {
                    if !std::mem::take(first) {
                        out.push(',');
                    }
                    push_capped(&mut out, key, limit);
                    out.push(':');
                    next = Some(item);
                }
                None => {
                    out.push('}');
                    stack.pop();
                }
            },
        }
    }
    if out.len() > limit {
        let mut cut = limit;
        while !out.is_char_boundary(cut) {
            cut -= 1;
        }
        out.truncate(cut);
        out.push('…');
    }
    out
}

/// Appends a number as serde_json writes it (its `Display` is the serializer's text: `itoa`
/// and `ryu`, or the kept digits under `arbitrary_precision`).
fn push_number(out: &mut String, n: &Number) {
    use std::fmt::Write;
    // Writing to a `String` cannot fail.
    let _ = write!(out, "{n}");
}

/// Appends `s` as a JSON string literal, escaped as serde_json escapes it: `"` and `\\`, the
/// short escapes `\b \f \n \r \t`, other control characters as `\u00xx` (lowercase hex), and
/// everything else as it is.
pub(crate) fn push_json_string(out: &mut String, s: &str) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    out.reserve(s.len() + 2);
    out.push('"');
    let mut start = 0;
    for (i, &b) in s.as_bytes().iter().enumerate() {
        let short = match b {
            b'"' => "\\\"",
            b'\\' => "\\\\",
            b'\n' => "\\n",
            b'\r' => "\\r",
            b'\t' => "\\t",
            0x08 => "\\b",
            0x0c => "\\f",
            0..=0x1f => "",
            _ => continue,
        };
        // Every escaped byte is ASCII, so `i` is a character boundary.
        out.push_str(&s[start..i]);
        start = i + 1;
        if short.is_empty() {
            out.push_str("\\u00");
            out.push(char::from(HEX[usize::from(b >> 4)]));
            out.push(char::from(HEX[usize::from(b & 0xf)]));
        } else {
            out.push_str(short);
        }
    }
    out.push_str(&s[start..]);
    out.push('"');
}

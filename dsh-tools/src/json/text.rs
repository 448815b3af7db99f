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

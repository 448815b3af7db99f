//! An incremental JSON reader for arguments that arrive in fragments: each byte is read once,
//! and a best-effort value of what has arrived so far (the longest valid prefix, an open
//! string kept as it is so far) costs the size of that value, never a re-parse.
//!
//! The crates that offer "partial JSON" (`llmx`, the parsers inside `lc-core` and
//! `alchemy-llm`) re-parse the whole text on every fragment, with closing brackets guessed
//! and appended: quadratic over a stream of small deltas. This one keeps the containers under
//! construction on a stack instead.

use serde_json::{Map, Number, Value};

/// The most nested containers read: what serde_json reads (its recursion limit of 128 admits
/// 127 levels), which the final parse of the whole text applies too.
pub const MAX_DEPTH: usize = 127;

/// A container under construction.
#[derive(Debug)]
enum Frame {
    Object {
        map: Map<String, Value>,
        /// The key read, waiting for its value.
        key: Option<String>,
        /// The key's `:` was read.
        colon: bool,
        /// A `,` was read (a key must follow).
        after_comma: bool,
    },
    Array {
        items: Vec<Value>,
        after_comma: bool,
    },
}

/// What the reader is in the middle of.
#[derive(Debug)]
enum Lex {
    /// Between tokens.
    Between,
    /// A string: its text so far, whether it is an object key, the escape being read.
    Str {
        text: String,
        key: bool,
        escape: Escape,
    },
    /// A number's characters so far.
    Num(String),
    /// `true`, `false` or `null`, as far as read.
    Word(String),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Escape {
    None,
    /// After `\`.
    Backslash,
    /// After `\u` and this many hex digits, their value so far.
    Unicode(u8, u32),
    /// A high surrogate was read (`\uD83D`): `step` characters of `\uXXXX` of its low half
    /// read since, the hex digits' value so far.
    Surrogate {
        high: u32,
        step: u8,
        low: u32,
    },
}

/// Reads JSON fed in fragments. Errors (not JSON, too deep) stop the reading: the value so far
/// stays what it was. [`error`](Self::error) reports what the reader refused; the final text is
/// judged by the caller's full parse (serde_json), which this reader agrees with on JSON
/// grammar, escapes and depth.
#[derive(Debug)]
pub struct PartialJson {
    stack: Vec<Frame>,
    lex: Lex,
    /// The finished top-level value.
    done: Option<Value>,
    failed: Option<String>,
}

impl Default for PartialJson {
    fn default() -> Self {
        Self::new()
    }
}

impl PartialJson {
    /// Nothing read yet.
    pub fn new() -> Self {
        Self {
            stack: Vec::new(),
            lex: Lex::Between,
            done: None,
            failed: None,
        }
    }

    /// Why reading stopped, if it did.
    pub fn error(&self) -> Option<&str> {
        self.failed.as_deref()
    }

    /// Reads `fragment`.
    #[inline]
    pub fn push(&mut self, fragment: &str) {
        if self.failed.is_some() {
            return;
        }
        // The common case, a fragment inside a string with nothing to decode: copied whole.
        if let Lex::Str {
            text,
            escape: Escape::None,
            ..
        } = &mut self.lex
            && !fragment
                .bytes()
                .any(|b| b == b'"' || b == b'\\' || b < 0x20)
        {
            text.push_str(fragment);
            return;
        }
        self.push_slow(fragment);
    }

    fn push_slow(&mut self, fragment: &str) {
        let mut rest = fragment;
        while !rest.is_empty() && self.failed.is_none() {
            // Inside a string, the plain run up to the next quote, backslash or control
            // character is copied at once.
            if let Lex::Str {
                text,
                escape: Escape::None,
                ..
            } = &mut self.lex
            {
                let run = rest
                    .bytes()
                    .position(|b| b == b'"' || b == b'\\' || b < 0x20)
                    .unwrap_or(rest.len());
                if run > 0 {
                    text.push_str(&rest[..run]);
                    rest = &rest[run..];
                    continue;
                }
            }
            let Some(c) = rest.chars().next() else {
                return;
            };
            rest = &rest[c.len_utf8()..];
            self.char(c);
        }
    }

    fn fail(&mut self, why: impl Into<String>) {
        if self.failed.is_none() {
            self.failed = Some(why.into());
        }
    }

    fn char(&mut self, c: char) {
        match &mut self.lex {
            Lex::Str { text, escape, .. } => {
                match string_char(text, escape, c) {
                    Ok(true) => {
                        let Lex::Str { text, key, .. } =
                            std::mem::replace(&mut self.lex, Lex::Between)
                        else {
                            return;
                        };
                        if key {
                            self.key(text);
                        } else {
                            self.value(Value::String(text));
                        }
                    }
                    Ok(false) => {}
                    Err(why) => self.fail(why),
                }
                return;
            }
            Lex::Num(text) => {
                if matches!(c, '0'..='9' | '-' | '+' | '.' | 'e' | 'E') {
                    text.push(c);
                    return;
                }
                let Lex::Num(text) = std::mem::replace(&mut self.lex, Lex::Between) else {
                    return;
                };
                match number(&text) {
                    Some(n) => self.value(Value::Number(n)),
                    None => return self.fail(format!("not a number: {text:?}")),
                }
            }
            Lex::Word(text) => {
                if c.is_ascii_alphabetic() {
                    text.push(c);
                    if text.len() > 5 {
                        let word = text.clone();
                        self.fail(format!("not a JSON word: {word:?}"));
                    }
                    return;
                }
                let Lex::Word(text) = std::mem::replace(&mut self.lex, Lex::Between) else {
                    return;
                };
                match word(&text) {
                    Some(v) => self.value(v),
                    None => return self.fail(format!("not a JSON word: {text:?}")),
                }
            }
            Lex::Between => {}
        }
        self.between(c);
    }

    /// A character between tokens.
    fn between(&mut self, c: char) {
        // JSON's whitespace (not form feed, which `is_ascii_whitespace` also takes).
        if matches!(c, ' ' | '\t' | '\n' | '\r') {
            return;
        }
        let expecting_key = matches!(self.stack.last(), Some(Frame::Object { key: None, .. }));
        match c {
            '"' => {
                self.lex = Lex::Str {
                    text: String::new(),
                    key: expecting_key,
                    escape: Escape::None,
                }
            }
            '{' | '[' if !expecting_key => {
                if !self.accepts_value() {
                    return self.fail("a value where none belongs");
                }
                if self.stack.len() >= MAX_DEPTH {
                    return self.fail(format!("nested deeper than {MAX_DEPTH} levels"));
                }
                self.stack.push(if c == '{' {
                    Frame::Object {
                        map: Map::new(),
                        key: None,
                        colon: false,
                        after_comma: false,
                    }
                } else {
                    Frame::Array {
                        items: Vec::new(),
                        after_comma: false,
                    }
                });
            }
            '}' | ']' => self.close(c),
            ',' => match self.stack.last_mut() {
                Some(Frame::Object {
                    map,
                    key: None,
                    after_comma,
                    ..
                }) if !map.is_empty() && !*after_comma => *after_comma = true,
                Some(Frame::Array { items, after_comma }) if !items.is_empty() && !*after_comma => {
                    *after_comma = true
                }
                _ => self.fail("a comma where none belongs"),
            },
            // A key's colon: the key is held until its value comes.
            ':' => match self.stack.last_mut() {
                Some(Frame::Object {
                    key: Some(_),
                    colon,
                    ..
                }) if !*colon => *colon = true,
                _ => self.fail("a colon where none belongs"),
            },
            '-' | '0'..='9' if !expecting_key => self.lex = Lex::Num(c.to_string()),
            't' | 'f' | 'n' if !expecting_key => self.lex = Lex::Word(c.to_string()),
            other => self.fail(format!("unexpected {other:?}")),
        }
    }

    /// Whether a value may start here.
    fn accepts_value(&self) -> bool {
        match self.stack.last() {
            None => self.done.is_none(),
            Some(Frame::Object { key, colon, .. }) => key.is_some() && *colon,
            Some(Frame::Array { items, after_comma }) => items.is_empty() || *after_comma,
        }
    }

    fn key(&mut self, text: String) {
        if let Some(Frame::Object {
            map,
            key,
            after_comma,
            ..
        }) = self.stack.last_mut()
            && key.is_none()
            && (map.is_empty() || *after_comma)
        {
            *key = Some(text);
            *after_comma = false;
        } else {
            self.fail("a key where none belongs");
        }
    }

    /// A finished value: into its container, or the top-level value.
    fn value(&mut self, value: Value) {
        if !self.accepts_value() {
            crate::json::free(value);
            return self.fail("a value where none belongs");
        }
        match self.stack.last_mut() {
            None => self.done = Some(value),
            Some(Frame::Object {
                map, key, colon, ..
            }) => {
                *colon = false;
                if let Some(key) = key.take() {
                    map.insert(key, value);
                }
            }
            Some(Frame::Array { items, after_comma }) => {
                items.push(value);
                *after_comma = false;
            }
        }
    }

    fn close(&mut self, c: char) {
        let closes = match self.stack.last() {
            Some(Frame::Object {
                key: None,
                after_comma: false,
                ..
            }) => c == '}',
            Some(Frame::Array {
                after_comma: false, ..
            }) => c == ']',
            _ => false,
        };
        if !closes {
            return self.fail(format!("unexpected {c:?}"));
        }
        let value = match self.stack.pop() {
            Some(Frame::Object { map, .. }) => Value::Object(map),
            Some(Frame::Array { items, .. }) => Value::Array(items),
            None => return,
        };
        self.value(value);
    }

    /// The best-effort value of what was read: containers closed where they stand, an open
    /// string as it is so far, a number or word only once it is whole; `None` before any value
    /// began. Costs the size of the value.
    pub fn partial(&self) -> Option<Value> {
        if let Some(done) = &self.done {
            return Some(crate::json::clone_deep(done));
        }
        // The scalar under way, if it can be shown.
        let mut carried: Option<Value> = match &self.lex {
            Lex::Str {
                text, key: false, ..
            } => Some(Value::String(text.clone())),
            Lex::Num(text) => number(text).map(Value::Number),
            Lex::Word(text) => word(text),
            _ => None,
        };
        let mut out = None;
        for frame in self.stack.iter().rev() {
            let mut value = match frame {
                Frame::Object { map, .. } => Value::Object(
                    map.iter()
                        .map(|(k, v)| (k.clone(), crate::json::clone_deep(v)))
                        .collect(),
                ),
                Frame::Array { items, .. } => {
                    Value::Array(items.iter().map(crate::json::clone_deep).collect())
                }
            };
            let inner = out.take().or_else(|| carried.take());
            if let Some(inner) = inner {
                match (&mut value, frame) {
                    (
                        Value::Object(m),
                        Frame::Object {
                            key: Some(key),
                            colon: true,
                            ..
                        },
                    ) => {
                        m.insert(key.clone(), inner);
                    }
                    (Value::Array(items), Frame::Array { .. }) => items.push(inner),
                    _ => crate::json::free(inner),
                }
            }
            out = Some(value);
        }
        out.or(carried)
    }
}

impl Drop for PartialJson {
    /// Containers may be nested [`MAX_DEPTH`] deep and hold deep values: freed without
    /// recursion.
    fn drop(&mut self) {
        for frame in self.stack.drain(..) {
            match frame {
                Frame::Object { map, .. } => crate::json::free(Value::Object(map)),
                Frame::Array { items, .. } => crate::json::free(Value::Array(items)),
            }
        }
        if let Some(done) = self.done.take() {
            crate::json::free(done);
        }
    }
}

/// One character of a string: `Ok(true)` when it closed the string.
fn string_char(text: &mut String, escape: &mut Escape, c: char) -> Result<bool, String> {
    match *escape {
        Escape::None => match c {
            '"' => return Ok(true),
            '\\' => *escape = Escape::Backslash,
            c if (c as u32) < 0x20 => return Err("a control character in a string".to_owned()),
            c => text.push(c),
        },
        Escape::Backslash => {
            *escape = Escape::None;
            match c {
                '"' => text.push('"'),
                '\\' => text.push('\\'),
                '/' => text.push('/'),
                'b' => text.push('\u{8}'),
                'f' => text.push('\u{c}'),
                'n' => text.push('\n'),
                'r' => text.push('\r'),
                't' => text.push('\t'),
                'u' => *escape = Escape::Unicode(0, 0),
                other => return Err(format!("an unknown escape \\{other}")),
            }
        }
        Escape::Unicode(n, value) => {
            let digit = c
                .to_digit(16)
                .ok_or_else(|| format!("{c:?} in a \\u escape"))?;
            let value = value * 16 + digit;
            if n < 3 {
                *escape = Escape::Unicode(n + 1, value);
            } else if (0xD800..0xDC00).contains(&value) {
                *escape = Escape::Surrogate {
                    high: value,
                    step: 0,
                    low: 0,
                };
            } else {
                *escape = Escape::None;
                text.push(char::from_u32(value).unwrap_or('\u{FFFD}'));
            }
        }
        Escape::Surrogate { high, step, low } => match (step, c) {
            (0, '\\') | (1, 'u') => {
                *escape = Escape::Surrogate {
                    high,
                    step: step + 1,
                    low,
                }
            }
            (2..=5, c) if c.is_ascii_hexdigit() => {
                let low = low * 16 + c.to_digit(16).unwrap_or(0);
                if step < 5 {
                    *escape = Escape::Surrogate {
                        high,
                        step: step + 1,
                        low,
                    };
                } else {
                    *escape = Escape::None;
                    let code = if (0xDC00..0xE000).contains(&low) {
                        0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00)
                    } else {
                        0xFFFD
                    };
                    text.push(char::from_u32(code).unwrap_or('\u{FFFD}'));
                }
            }
            _ => return Err("a lone surrogate in a \\u escape".to_owned()),
        },
    }
    Ok(false)
}

/// A whole JSON number, as serde_json reads it.
fn number(text: &str) -> Option<Number> {
    let valid = {
        let b = text.as_bytes();
        let digits_from = usize::from(b.first() == Some(&b'-'));
        b.get(digits_from).is_some_and(u8::is_ascii_digit)
            && b.last().is_some_and(u8::is_ascii_digit)
    };
    if !valid {
        return None;
    }
    serde_json::from_str::<Number>(text).ok()
}

fn word(text: &str) -> Option<Value> {
    match text {
        "true" => Some(Value::Bool(true)),
        "false" => Some(Value::Bool(false)),
        "null" => Some(Value::Null),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn read_by_chars(text: &str) -> Vec<Option<Value>> {
        let mut p = PartialJson::new();
        let mut states = Vec::new();
        for c in text.chars() {
            p.push(&c.to_string());
            states.push(p.partial());
        }
        states
    }

    #[test]
    fn grows_as_the_text_arrives_and_ends_as_serde_reads_it() {
        let text = r#"{"path": "src/ma\"in.rs", "n": [1, 2.5, -3e2], "ok": true, "x": null, "u": "\u00e9\ud83d\ude00"}"#;
        let states = read_by_chars(text);
        assert_eq!(
            states.last().unwrap().as_ref().unwrap(),
            &serde_json::from_str::<Value>(text).unwrap()
        );
        // An open string shows as far as it goes; a key under way is not shown.
        let mut p = PartialJson::new();
        p.push(r#"{"path": "src/ma"#);
        assert_eq!(p.partial(), Some(json!({"path": "src/ma"})));
        p.push(r#"in.rs", "li"#);
        assert_eq!(p.partial(), Some(json!({"path": "src/main.rs"})));
        p.push(r#"mit": 1"#);
        assert_eq!(
            p.partial(),
            Some(json!({"path": "src/main.rs", "limit": 1}))
        );
        p.push(r#"2, "deep": [{"a": [tr"#);
        assert_eq!(
            p.partial(),
            Some(json!({"path": "src/main.rs", "limit": 12, "deep": [{"a": []}]}))
        );
        p.push("ue]}]}");
        assert_eq!(
            p.partial(),
            Some(json!({"path": "src/main.rs", "limit": 12, "deep": [{"a": [true]}]}))
        );
        assert!(p.error().is_none());
    }

    #[test]
    fn every_state_is_a_prefix_of_the_final_value() {
        let text = r#"[{"a": "xy", "b": [1, {"c": "z"}]}, "t", 10]"#;
        let states = read_by_chars(text);
        assert!(states[0].is_some()); // `[` is already an empty array.
        for state in states.iter().flatten() {
            assert!(state.is_array(), "{state}");
        }
    }

    #[test]
    fn malformed_text_stops_the_reading_and_keeps_the_value_so_far() {
        for bad in [
            r#"{"a": 1,, "b": 2}"#,
            r#"{"a" 1}"#,
            r#"{"a" "b"}"#,
            r#"{"a"::1}"#,
            "[:1]",
            "{\u{c}}",
            r#"[1 2]"#,
            r#"{"a": tru}"#,
            "{]",
        ] {
            let mut p = PartialJson::new();
            p.push(bad);
            assert!(p.error().is_some(), "{bad}");
        }
        let mut p = PartialJson::new();
        p.push(r#"{"a": 1, "b": @"#);
        assert_eq!(p.partial(), Some(json!({"a": 1})));
    }

    #[test]
    fn deep_nesting_stops_at_the_limit_and_drops_without_recursion() {
        let mut p = PartialJson::new();
        p.push(&"[".repeat(100_000));
        assert!(p.error().unwrap().contains("deeper than 127"));
        // After an error nothing more is read, a string under way included.
        let mut p = PartialJson::new();
        p.push("{\"a\": \"x\u{1}");
        assert!(p.error().is_some());
        p.push("yz");
        assert_eq!(p.partial(), Some(json!({"a": "x"})));
        let partial = p.partial().unwrap();
        crate::json::free(partial);
    }
}

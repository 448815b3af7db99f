//! JSON-RPC lines as bytes, shared by serving (`serve::lines`) and importing
//! (`import::filter`): a line read within a limit, the nesting and the top-level id of a text
//! that may not parse, and an error answer written by hand.

use tokio::io::{AsyncBufReadExt, AsyncRead, BufReader};

/// The largest line passed on (rmcp's own limit).
pub(crate) const MAX_LINE: usize = 16 * 1024 * 1024;
/// The deepest line passed on: serde_json stops at 128 levels.
pub(crate) const MAX_DEPTH: usize = 126;
/// How much of an oversized line is kept to look for its id.
pub(crate) const PREFIX: usize = 4096;

/// Reads one line into `line` (without its newline or a trailing `\r`), keeping at most
/// [`PREFIX`] bytes of a line longer than `max` (counting the newline, as rmcp does). `None` at
/// the end of input or on a read error; `Some(true)` for an oversized line. Shared by both
/// directions: the importer's filter and `serve_io`.
pub(crate) async fn read_line<R: AsyncRead + Unpin>(
    reader: &mut BufReader<R>,
    line: &mut Vec<u8>,
    max: usize,
) -> Option<bool> {
    line.clear();
    let mut oversized = false;
    loop {
        let buf = reader.fill_buf().await.ok()?;
        if buf.is_empty() {
            return None; // an unterminated last line is dropped, as rmcp would
        }
        let (chunk, complete) = match buf.iter().position(|&b| b == b'\n') {
            Some(i) => (&buf[..i], true),
            None => (buf, false),
        };
        let used = chunk.len() + usize::from(complete);
        // rmcp counts the newline too.
        if oversized || line.len() + chunk.len() + usize::from(complete) > max {
            if !oversized {
                line.truncate(PREFIX);
                oversized = true;
            }
            let room = PREFIX.saturating_sub(line.len());
            line.extend_from_slice(&chunk[..room.min(chunk.len())]);
        } else {
            line.extend_from_slice(chunk);
        }
        reader.consume(used);
        if complete {
            if line.last() == Some(&b'\r') {
                line.pop();
            }
            return Some(oversized);
        }
    }
}

/// A JSON-RPC error answer line to `id` (raw JSON text; `None`: `null`).
pub(crate) fn error_line(id: Option<&str>, code: i32, message: &str) -> String {
    let mut out = String::with_capacity(64 + message.len());
    out.push_str("{\"jsonrpc\":\"2.0\",\"id\":");
    out.push_str(id.unwrap_or("null"));
    out.push_str(",\"error\":{\"code\":");
    out.push_str(&code.to_string());
    out.push_str(",\"message\":");
    crate::json::push_json_string(&mut out, message);
    out.push_str("}}\n");
    out
}

/// The deepest nesting of arrays and objects in a JSON text (strings skipped), without
/// recursion.
pub(crate) fn nesting(text: &[u8]) -> usize {
    let (mut depth, mut max) = (0usize, 0usize);
    let mut in_string = false;
    let mut escaped = false;
    for &b in text {
        if in_string {
            match (escaped, b) {
                (true, _) => escaped = false,
                (false, b'\\') => escaped = true,
                (false, b'"') => in_string = false,
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'[' | b'{' => {
                depth += 1;
                max = max.max(depth);
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    max
}

/// The raw text of the top-level `"id"` member of a JSON-RPC *answer* (a number or a string),
/// if it can be read from `text` (which may be cut short). A message with a top-level `method`
/// is a request or notification from the server, never answered this way.
pub(crate) fn top_level_id(text: &[u8]) -> Option<String> {
    member_id(text, false)
}

/// The raw text of the top-level `"id"` of any JSON-RPC message (a request's too), if it can
/// be read from `text` (which may be cut short).
pub(crate) fn request_id(text: &[u8]) -> Option<String> {
    member_id(text, true)
}

fn member_id(text: &[u8], requests: bool) -> Option<String> {
    let mut id = None;
    let mut i = skip_ws(text, 0);
    if text.get(i) != Some(&b'{') {
        return None;
    }
    i += 1;
    loop {
        i = skip_ws(text, i);
        let Some(key_end) = (text.get(i) == Some(&b'"'))
            .then(|| string_end(text, i))
            .flatten()
        else {
            break;
        };
        let key = &text[i + 1..key_end - 1];
        if key == b"method" && !requests {
            return None;
        }
        i = skip_ws(text, key_end);
        if text.get(i) != Some(&b':') {
            break;
        }
        i = skip_ws(text, i + 1);
        let Some(end) = value_end(text, i) else {
            break;
        };
        if key == b"id" {
            let raw = &text[i..end];
            let plain = raw
                .first()
                .is_some_and(|b| *b == b'"' || b.is_ascii_digit() || *b == b'-');
            id = plain
                .then(|| std::str::from_utf8(raw).ok())
                .flatten()
                .filter(|raw| serde_json::from_str::<serde_json::Value>(raw).is_ok())
                .map(str::to_owned);
        }
        i = skip_ws(text, end);
        if text.get(i) != Some(&b',') {
            break;
        }
        i += 1;
    }
    id
}

fn skip_ws(text: &[u8], mut i: usize) -> usize {
    while text.get(i).is_some_and(u8::is_ascii_whitespace) {
        i += 1;
    }
    i
}

/// The index just past the string starting at `start` (a `"`).
fn string_end(text: &[u8], start: usize) -> Option<usize> {
    let mut escaped = false;
    for (i, &b) in text.iter().enumerate().skip(start + 1) {
        match (escaped, b) {
            (true, _) => escaped = false,
            (false, b'\\') => escaped = true,
            (false, b'"') => return Some(i + 1),
            _ => {}
        }
    }
    None
}

/// The index just past the value starting at `start`, skipping nested values without
/// recursion.
fn value_end(text: &[u8], start: usize) -> Option<usize> {
    match text.get(start)? {
        b'"' => string_end(text, start),
        b'[' | b'{' => {
            let mut depth = 0usize;
            let mut i = start;
            while i < text.len() {
                match text[i] {
                    b'"' => {
                        i = string_end(text, i)?;
                        continue;
                    }
                    b'[' | b'{' => depth += 1,
                    b']' | b'}' => {
                        depth -= 1;
                        if depth == 0 {
                            return Some(i + 1);
                        }
                    }
                    _ => {}
                }
                i += 1;
            }
            None
        }
        _ => {
            let len = text[start..]
                .iter()
                .position(|b| matches!(b, b',' | b'}' | b']') || b.is_ascii_whitespace())
                .unwrap_or(text.len() - start);
            Some(start + len)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_read_at_the_top_level_only() {
        assert_eq!(
            top_level_id(br#"{"jsonrpc":"2.0","result":{"id":9,"x":[{"id":8}]},"id":7}"#),
            Some("7".to_owned())
        );
        assert_eq!(
            top_level_id(br#"{"id":"a\"b","result":{}}"#),
            Some(r#""a\"b""#.to_owned())
        );
        assert_eq!(
            top_level_id(br#"{"jsonrpc":"2.0","id":12,"result":{"a":[[[["#),
            Some("12".to_owned())
        );
        assert_eq!(top_level_id(br#"{"result":{"id":1}"#), None);
        assert_eq!(top_level_id(br#"[{"id":1}]"#), None);
        assert_eq!(top_level_id(br#"{"id":null}"#), None);
        // A request from the server is not an answer.
        assert_eq!(
            top_level_id(br#"{"id":3,"method":"sampling/createMessage"}"#),
            None
        );
    }

    #[test]
    fn nesting_skips_strings() {
        assert_eq!(nesting(br#"{"a":"[[[[{{{{","b":[[1]]}"#), 3);
        assert_eq!(nesting(br#""\"[""#), 0);
        let deep = "[".repeat(100_000);
        assert_eq!(nesting(deep.as_bytes()), 100_000);
    }
}

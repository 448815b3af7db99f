//! What an imported server sends, checked before rmcp decodes it.
//!
//! rmcp drops a line it cannot decode (nested past serde_json's 128 levels, or longer than its
//! 16 MiB line limit) without answering the request it belonged to, so the request would wait
//! for good. The filter sits between the server's output and rmcp: a line that could not be
//! decoded is replaced by a JSON-RPC error answer to the same id (when the id can be read), so
//! the request fails at once as a transport error.

use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};

/// The largest line passed on (rmcp's own limit).
pub(crate) const MAX_LINE: usize = 16 * 1024 * 1024;
/// The deepest line passed on: serde_json stops at 128 levels.
pub(crate) const MAX_DEPTH: usize = 126;
/// The code of the answers the filter writes; `call_remote` maps it to `MCP_TRANSPORT_ERROR`.
pub(crate) const UNDECODABLE: i32 = -32099;
/// How much of an oversized line is kept to look for its id.
pub(crate) const PREFIX: usize = 4096;

/// Copies `input` to `output` line by line, replacing lines rmcp could not decode.
pub(crate) async fn filter<R, W>(input: R, mut output: W, max_line: usize)
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin,
{
    let mut input = BufReader::with_capacity(64 * 1024, input);
    let mut line: Vec<u8> = Vec::new();
    while let Some(oversized) = read_line(&mut input, &mut line, max_line).await {
        let verdict = if oversized {
            Err((None, format!("the message is longer than {max_line} bytes")))
        } else if nesting(&line) > MAX_DEPTH {
            Err((
                None,
                format!("the message nests deeper than {MAX_DEPTH} levels"),
            ))
        } else {
            check(&line)
        };
        let written = match verdict {
            Ok(()) => {
                line.push(b'\n');
                output.write_all(&line).await
            }
            Err((id, why)) => match id.or_else(|| top_level_id(&line)) {
                Some(id) => {
                    tracing::warn!("MCP import: the server's answer to {id} is dropped: {why}");
                    let message = format!("the server's answer could not be decoded: {why}");
                    let answer = error_line(Some(&id), UNDECODABLE, &message);
                    output.write_all(answer.as_bytes()).await
                }
                None => {
                    tracing::warn!("MCP import: a message from the server is dropped: {why}");
                    Ok(())
                }
            },
        };
        if line.capacity() > 1024 * 1024 {
            line.shrink_to(64 * 1024);
        }
        if written.is_err() || output.flush().await.is_err() {
            break; // rmcp is gone
        }
    }
    let _ = output.shutdown().await;
}

/// The top level of a JSON-RPC message, as far as the filter reads it (one serde pass; the
/// values are skipped without being built).
#[derive(serde::Deserialize)]
struct Envelope<'a> {
    #[serde(borrow)]
    jsonrpc: Option<std::borrow::Cow<'a, str>>,
    id: Option<serde_json::Value>,
    method: Option<serde::de::IgnoredAny>,
    result: Option<serde::de::IgnoredAny>,
    error: Option<ErrorShape>,
}

/// A JSON-RPC error object as rmcp reads it: an `i32` code and a string message (read only
/// to be checked).
#[derive(serde::Deserialize)]
struct ErrorShape {
    #[serde(rename = "code")]
    _code: i32,
    #[serde(rename = "message")]
    _message: serde::de::IgnoredAny,
}

/// `Ok` when rmcp can read `line` (a line within the size and depth limits) or nothing could
/// be answered for it; else the raw id of the request it answers (when this pass read one) and
/// why it is refused. These are what rmcp drops without a word, so the call waited out its
/// timeout: bytes that are not UTF-8 (a Latin-1 file name), a `\u` escape of half a surrogate
/// pair (what Node writes when a string is cut through an emoji), any other syntax error, an
/// answer that is not JSON-RPC 2.0 (no `jsonrpc: "2.0"`, neither `result` nor `error`, a
/// malformed `error`), and an id `"1"` answering request `1` (rmcp would take it for that
/// answer).
pub(crate) fn check(line: &[u8]) -> Result<(), (Option<String>, String)> {
    if let Err(e) = std::str::from_utf8(line) {
        return Err((
            None,
            format!(
                "the message is not valid UTF-8 (byte {} of {})",
                e.valid_up_to(),
                line.len()
            ),
        ));
    }
    let line = line.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(line);
    if line.iter().all(u8::is_ascii_whitespace) {
        return Ok(()); // rmcp skips blank lines
    }
    if let Some(why) = lone_surrogate(line) {
        return Err((None, why));
    }
    // Skipped values check no escapes, hence the scan above.
    let envelope = match serde_json::from_slice::<Envelope<'_>>(line) {
        Ok(envelope) => envelope,
        Err(e) if e.is_syntax() || e.is_eof() => {
            return Err((None, format!("the message is not valid JSON: {e}")));
        }
        Err(e) => return Err((None, format!("the message is not JSON-RPC: {e}"))),
    };
    if envelope.method.is_some() {
        return Ok(()); // the server's own request or notification: rmcp answers those
    }
    let id = match envelope.id {
        Some(serde_json::Value::Number(n)) => n.to_string(),
        Some(serde_json::Value::String(s)) => match s.parse::<i64>() {
            Ok(n) => {
                return Err((
                    Some(n.to_string()),
                    format!(
                        "the server answered request {n} with the id {}, a string (JSON-RPC \
                         ids must match exactly)",
                        serde_json::Value::String(s)
                    ),
                ));
            }
            // No request of ours has a string id: nothing waits for it.
            Err(_) => return Ok(()),
        },
        // No id, or one no request has: nothing to answer.
        _ => return Ok(()),
    };
    if envelope.jsonrpc.as_deref() != Some("2.0") {
        let why = "the answer is not JSON-RPC 2.0 (`jsonrpc` is not \"2.0\")";
        return Err((Some(id), why.to_owned()));
    }
    if envelope.result.is_none() && envelope.error.is_none() {
        let why = "the answer has neither `result` nor `error`";
        return Err((Some(id), why.to_owned()));
    }
    Ok(())
}

/// Where a string in `text` (JSON) holds a `\u` escape of half a surrogate pair, which no Rust
/// string can hold and serde_json refuses.
fn lone_surrogate(text: &[u8]) -> Option<String> {
    let hex = |at: usize| -> Option<u16> {
        let digits = std::str::from_utf8(text.get(at..at + 4)?).ok()?;
        u16::from_str_radix(digits, 16).ok()
    };
    // Most messages have no escape that could be one: `\u` then `d`/`D`.
    if !text
        .windows(3)
        .any(|w| w[0] == b'\\' && w[1] == b'u' && w[2] | 0x20 == b'd')
    {
        return None;
    }
    let (mut in_string, mut i) = (false, 0);
    while i < text.len() {
        match (in_string, text[i]) {
            (false, b'"') => in_string = true,
            (false, _) => {}
            (true, b'"') => in_string = false,
            (true, b'\\') if text.get(i + 1) == Some(&b'u') => {
                let unit = hex(i + 2);
                match unit {
                    Some(0xD800..=0xDBFF) => {
                        let paired = text.get(i + 6..i + 8) == Some(&b"\\u"[..])
                            && matches!(hex(i + 8), Some(0xDC00..=0xDFFF));
                        if !paired {
                            return Some(format!(
                                "the message holds a lone leading surrogate (\\u{:04x} at byte \
                                 {i}, half of a character a string was cut through)",
                                unit.unwrap_or_default()
                            ));
                        }
                        i += 12;
                        continue;
                    }
                    Some(unit @ 0xDC00..=0xDFFF) => {
                        return Some(format!(
                            "the message holds a lone trailing surrogate (\\u{unit:04x} at byte {i})"
                        ));
                    }
                    _ => {
                        i += 6;
                        continue;
                    }
                }
            }
            (true, b'\\') => {
                i += 2;
                continue;
            }
            (true, _) => {}
        }
        i += 1;
    }
    None
}

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
    fn answers_rmcp_would_drop_are_refused_with_the_request_they_answer() {
        let refused = |line: &str| check(line.as_bytes()).unwrap_err();
        // Escapes do not hide a mistyped id, in the key or in the value.
        for line in [
            r#"{"jsonrpc":"2.0","id":"1","result":{}}"#,
            r#"{"jsonrpc":"2.0","\u0069d":"1","result":{}}"#,
            r#"{"jsonrpc":"2.0","id":"\u0031","result":{}}"#,
        ] {
            let (id, why) = refused(line);
            assert_eq!(id.as_deref(), Some("1"), "{line}");
            assert!(why.contains("a string"), "{why}");
        }
        let (id, why) = refused(r#"{"id":7,"result":{}}"#);
        assert_eq!(
            (id.as_deref(), why.contains("JSON-RPC 2.0")),
            (Some("7"), true)
        );
        let (id, why) = refused(r#"{"jsonrpc":"2.0","id":7}"#);
        assert_eq!((id.as_deref(), why.contains("neither")), (Some("7"), true));
        let (_, why) = refused(r#"{"jsonrpc":"2.0","id":7,"error":{"code":"x","message":"m"}}"#);
        assert!(why.contains("not JSON-RPC"), "{why}");
        let (_, why) = refused(r#"{"jsonrpc":"2.0","id":7,"error":{"code":1}}"#);
        assert!(why.contains("message"), "{why}");
        let (_, why) = refused(r#"{"jsonrpc":"2.0","id":7,"result":{},}"#);
        assert!(why.contains("not valid JSON"), "{why}");
        // What rmcp reads, or what answers nothing, passes.
        for line in [
            r#"{"jsonrpc":"2.0","id":7,"result":{"content":[]}}"#,
            r#"{"jsonrpc":"2.0","id":7,"error":{"code":-32000,"message":"no"}}"#,
            r#"{"jsonrpc":"2.0","id":"abc","result":{}}"#,
            r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{}}"#,
            r#"{"jsonrpc":"2.0","id":"1","method":"ping"}"#,
            "  ",
        ] {
            assert!(check(line.as_bytes()).is_ok(), "{line}");
        }
    }

    #[test]
    fn lone_surrogates_are_found_in_strings_only() {
        assert!(lone_surrogate(br#"{"a":"\ud83d\ude00"}"#).is_none());
        assert!(
            lone_surrogate(br#"{"a":"\\ud800"}"#).is_none(),
            "an escaped backslash"
        );
        assert!(lone_surrogate(br#"{"a":"\u00e9\uD7FF\uE000"}"#).is_none());
        let cut = lone_surrogate(br#"{"a":"x\ud83d"}"#).unwrap();
        assert!(
            cut.contains("lone leading surrogate (\\ud83d at byte 7"),
            "{cut}"
        );
        let pair_broken = lone_surrogate(br#"{"a":"\ud83d\u0041"}"#).unwrap();
        assert!(pair_broken.contains("leading"), "{pair_broken}");
        let low = lone_surrogate(br#"{"a":"\uDC00"}"#).unwrap();
        assert!(low.contains("lone trailing surrogate"), "{low}");
        // What serde_json refuses, the scan finds, and the reverse.
        for text in [
            r#"["\ud800"]"#,
            r#"["\udbff\udfff"]"#,
            r#"["\udfff"]"#,
            r#"["a\\udfff"]"#,
            r#"["\ud800\ud800\udc00"]"#,
        ] {
            let refused = serde_json::from_str::<serde_json::Value>(text).is_err();
            assert_eq!(lone_surrogate(text.as_bytes()).is_some(), refused, "{text}");
        }
    }

    #[test]
    fn nesting_skips_strings() {
        assert_eq!(nesting(br#"{"a":"[[[[{{{{","b":[[1]]}"#), 3);
        assert_eq!(nesting(br#""\"[""#), 0);
        let deep = "[".repeat(100_000);
        assert_eq!(nesting(deep.as_bytes()), 100_000);
    }

    #[tokio::test]
    async fn undecodable_lines_become_error_answers() {
        let deep = format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":4,\"result\":{}{}}}\n",
            "[".repeat(200),
            "]".repeat(200)
        );
        let long = format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":\"x\",\"result\":\"{}\"}}\n",
            "a".repeat(1300)
        );
        let fine = "{\"jsonrpc\":\"2.0\",\"id\":5,\"result\":{}}\n";
        let input = format!("{deep}{long}{fine}");
        let mut out = Vec::new();
        filter(input.as_bytes(), &mut out, 1000).await;
        let lines: Vec<serde_json::Value> = String::from_utf8(out)
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(lines.len(), 3);
        assert_eq!(lines[0]["id"], 4);
        assert_eq!(lines[0]["error"]["code"], UNDECODABLE);
        assert!(
            lines[0]["error"]["message"]
                .as_str()
                .unwrap()
                .contains("deeper than")
        );
        assert_eq!(lines[1]["id"], "x");
        assert!(
            lines[1]["error"]["message"]
                .as_str()
                .unwrap()
                .contains("longer than 1000")
        );
        assert_eq!(lines[2]["result"], serde_json::json!({}));
    }
}

//! What an imported server sends, checked before rmcp decodes it.
//!
//! rmcp drops a line it cannot decode (nested past serde_json's 128 levels, or longer than its
//! 16 MiB line limit) without answering the request it belonged to, so the request would wait
//! for good. The filter sits between the server's output and rmcp: a line that could not be
//! decoded is replaced by a JSON-RPC error answer to the same id (when the id can be read), so
//! the request fails at once as a transport error.

use crate::mcp::wire::{MAX_DEPTH, error_line, nesting, read_line, top_level_id};
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};

/// The code of the answers the filter writes; `call_remote` maps it to `MCP_TRANSPORT_ERROR`.
pub(crate) const UNDECODABLE: i32 = -32099;

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

#[cfg(test)]
mod tests {
    use super::*;

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

//! Text a terminal, a log or a model would show as something else.

/// A character a terminal acts on or shows as something else: a control character (escape
/// sequences, bells, NUL, carriage returns, C1 controls such as U+009B), a bidirectional
/// embedding, override or isolate (U+202A–U+202E, U+2066–U+2069), a line or paragraph
/// separator (U+2028, U+2029), or another invisible format character (Unicode's category Cf:
/// zero-width spaces and joiners, the byte-order mark, tag characters, …). Imported tool names
/// holding one are refused, and the CLI escapes them in what it prints.
///
/// ```
/// use dsh_tools::present::is_hidden_char;
/// assert!(is_hidden_char('\u{1b}') && is_hidden_char('\u{202e}') && is_hidden_char('\u{e0041}'));
/// assert!(!is_hidden_char('a') && !is_hidden_char('é'));
/// ```
pub fn is_hidden_char(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{00ad}'
                | '\u{0600}'..='\u{0605}'
                | '\u{061c}'
                | '\u{06dd}'
                | '\u{070f}'
                | '\u{0890}'..='\u{0891}'
                | '\u{08e2}'
                | '\u{180e}'
                | '\u{200b}'..='\u{200f}'
                | '\u{2028}'..='\u{202e}'
                | '\u{2060}'..='\u{206f}'
                | '\u{feff}'
                | '\u{fff9}'..='\u{fffb}'
                | '\u{110bd}'
                | '\u{110cd}'
                | '\u{13430}'..='\u{1343f}'
                | '\u{1bca0}'..='\u{1bca3}'
                | '\u{1d173}'..='\u{1d17a}'
                | '\u{e0000}'..='\u{e007f}'
        )
}

/// `text` with every [`is_hidden_char`] written as a `\u{…}` escape: safe to print to a
/// terminal or show in a prompt, where it cannot drive the display or pass for other text.
///
/// ```
/// use dsh_tools::present::escape_hidden;
/// assert_eq!(escape_hidden("a\u{202e}b"), "a\\u{202e}b");
/// assert_eq!(escape_hidden("plain"), "plain");
/// ```
pub fn escape_hidden(text: &str) -> std::borrow::Cow<'_, str> {
    if !text.contains(is_hidden_char) {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        if is_hidden_char(c) {
            out.extend(c.escape_unicode());
        } else {
            out.push(c);
        }
    }
    std::borrow::Cow::Owned(out)
}

/// JSON text with every [`is_hidden_char`] written as a JSON `\uXXXX` escape (two surrogate
/// escapes past U+FFFF): the same JSON value, shown safely. Outside strings JSON text holds no
/// such character, so only string contents change.
///
/// ```
/// use dsh_tools::present::escape_hidden_json;
/// let text = serde_json::json!({"path": "a\u{202e}b"}).to_string();
/// let shown = escape_hidden_json(&text);
/// assert_eq!(shown, r#"{"path":"a\u202eb"}"#);
/// assert_eq!(serde_json::from_str::<serde_json::Value>(&shown).unwrap()["path"], "a\u{202e}b");
/// ```
pub fn escape_hidden_json(text: &str) -> std::borrow::Cow<'_, str> {
    if !text.contains(is_hidden_char) {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        if is_hidden_char(c) {
            let mut units = [0u16; 2];
            for unit in c.encode_utf16(&mut units) {
                use std::fmt::Write as _;
                let _ = write!(out, "\\u{unit:04x}");
            }
        } else {
            out.push(c);
        }
    }
    std::borrow::Cow::Owned(out)
}

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

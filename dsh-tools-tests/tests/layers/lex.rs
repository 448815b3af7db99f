//! Rust source as tokens, with what is not code taken out: line and (nested) block comments,
//! string literals (raw `r#"…"#`, byte and C strings too) and char literals become nothing or a
//! `"` token, so a path written in a string or a comment is never read. A `'` starts a char
//! literal only when it closes two characters on (or escapes); otherwise it is a lifetime or a
//! label (`'a`, `'static`), kept as one token.
//!
//! Tokens are strings: identifiers and keywords (`$crate` and other `$name`s as one token),
//! `::`, `"` for any literal string or char, lifetimes, and every other character alone.

pub(crate) fn tokens(text: &str) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        i = next(&chars, i, &mut out);
    }
    out
}

pub(crate) fn is_ident_start(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// Whether a token is an identifier or keyword (not punctuation, literal or lifetime).
pub(crate) fn is_word(token: &str) -> bool {
    token
        .chars()
        .next()
        .is_some_and(|c| is_ident_start(c) || c == '$')
        && token != "$"
}

/// Reads the token at `i` (pushing it, unless it is a comment or whitespace); the next index.
fn next(chars: &[char], i: usize, out: &mut Vec<String>) -> usize {
    let c = chars[i];
    let at = |k: usize| chars.get(i + k).copied();
    match c {
        _ if c.is_whitespace() => i + 1,
        '/' if at(1) == Some('/') => line_end(chars, i),
        '/' if at(1) == Some('*') => block_comment_end(chars, i),
        '"' => {
            out.push("\"".into());
            string_end(chars, i + 1)
        }
        '\'' => quote(chars, i, out),
        ':' if at(1) == Some(':') => {
            out.push("::".into());
            i + 2
        }
        '$' if at(1).is_some_and(is_ident_start) => {
            let end = word_end(chars, i + 1);
            out.push(chars[i..end].iter().collect());
            end
        }
        _ if is_ident_start(c) => word(chars, i, out),
        _ => {
            out.push(c.to_string());
            i + 1
        }
    }
}

fn line_end(chars: &[char], i: usize) -> usize {
    (i..chars.len())
        .find(|&j| chars[j] == '\n')
        .unwrap_or(chars.len())
}

/// Block comments nest.
fn block_comment_end(chars: &[char], i: usize) -> usize {
    let mut depth = 0;
    let mut j = i;
    while j < chars.len() {
        match (chars[j], chars.get(j + 1)) {
            ('/', Some('*')) => {
                depth += 1;
                j += 2;
            }
            ('*', Some('/')) => {
                depth -= 1;
                j += 2;
                if depth == 0 {
                    return j;
                }
            }
            _ => j += 1,
        }
    }
    j
}

/// The index after the closing `"` of a string whose body starts at `i` (escapes honoured).
fn string_end(chars: &[char], mut i: usize) -> usize {
    while i < chars.len() {
        match chars[i] {
            '\\' => i += 2,
            '"' => return i + 1,
            _ => i += 1,
        }
    }
    i
}

/// A raw string's body starts at `i` with `hashes` `#`s before its `"`: the index after the
/// `"` followed by as many `#`s.
fn raw_string_end(chars: &[char], i: usize, hashes: usize) -> usize {
    let mut j = i + hashes + 1;
    while j < chars.len() {
        if chars[j] == '"' && (1..=hashes).all(|k| chars.get(j + k) == Some(&'#')) {
            return j + 1 + hashes;
        }
        j += 1;
    }
    j
}

/// A char literal (`'x'`, `'\n'`, `'\''`, `'\u{1F600}'`) or a lifetime / label (`'a`).
fn quote(chars: &[char], i: usize, out: &mut Vec<String>) -> usize {
    if chars.get(i + 1) == Some(&'\\') {
        let mut j = i + 1;
        while j < chars.len() && chars[j] != '\'' {
            j += if chars[j] == '\\' { 2 } else { 1 };
        }
        out.push("\"".into());
        return j + 1;
    }
    if chars.get(i + 2) == Some(&'\'') {
        out.push("\"".into());
        return i + 3;
    }
    let end = word_end(chars, i + 1);
    out.push(chars[i..end].iter().collect());
    end
}

fn word_end(chars: &[char], mut i: usize) -> usize {
    while i < chars.len() && is_ident_start(chars[i]) {
        i += 1;
    }
    i
}

/// An identifier, or the prefix of a literal: `b"…"`, `c"…"`, `b'x'`, `r"…"`, `r#"…"#`,
/// `br#"…"#`, `cr"…"`; `r#name` is the raw identifier `name`.
fn word(chars: &[char], i: usize, out: &mut Vec<String>) -> usize {
    let end = word_end(chars, i);
    let word: String = chars[i..end].iter().collect();
    let after = chars.get(end).copied();
    match (word.as_str(), after) {
        ("b" | "c", Some('"')) => {
            out.push("\"".into());
            string_end(chars, end + 1)
        }
        ("b", Some('\'')) => {
            let mut literal = Vec::new();
            let j = quote(chars, end, &mut literal);
            out.push("\"".into());
            j
        }
        ("r" | "br" | "cr", Some('"' | '#')) => {
            let hashes = chars[end..].iter().take_while(|&&c| c == '#').count();
            if chars.get(end + hashes) == Some(&'"') {
                out.push("\"".into());
                raw_string_end(chars, end, hashes)
            } else {
                // `r#name`: a raw identifier.
                let name_end = word_end(chars, end + 1);
                out.push(chars[end + 1..name_end].iter().collect());
                name_end
            }
        }
        _ => {
            out.push(word);
            end
        }
    }
}

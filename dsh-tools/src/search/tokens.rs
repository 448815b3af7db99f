//! Words and terms: how a tool's text and a query are cut up for the index.
//!
//! A *word* is a run of letters and digits, split where `camelCase` and `HTTPServer` change
//! case, lowercased: `readFile` and `read_file` are both `read`, `file`. A *term* is a word that
//! is not a stop word, stemmed (Snowball English, the stemmer tantivy uses), so `files`,
//! `filing` and `file` meet.

use rust_stemmers::{Algorithm, Stemmer};
use std::sync::LazyLock;

/// Longer words are not indexed (hashes, base64, a crafted description's one long word).
pub(crate) const MAX_WORD_CHARS: usize = 40;

static STEMMER: LazyLock<Stemmer> = LazyLock::new(|| Stemmer::create(Algorithm::English));

/// Words too common in tool text to tell tools apart.
const STOP_WORDS: &[&str] = &[
    "a", "about", "all", "also", "an", "and", "any", "are", "as", "at", "be", "been", "being",
    "but", "by", "can", "do", "does", "for", "from", "has", "have", "how", "i", "if", "in", "into",
    "is", "it", "its", "me", "my", "of", "on", "or", "our", "please", "should", "so", "some",
    "than", "that", "the", "their", "them", "then", "there", "these", "this", "those", "to", "use",
    "used", "using", "want", "was", "we", "were", "what", "when", "where", "which", "while", "who",
    "will", "with", "would", "you", "your",
];

/// Calls `each` with every word of `text`, lowercased, in order.
pub(crate) fn words(text: &str, mut each: impl FnMut(&str)) {
    let mut word = String::new();
    let mut chars = 0usize;
    // The case of the previous character of the current run: `Some(true)` upper.
    let mut prev_upper: Option<bool> = None;
    let mut iter = text.chars().peekable();
    let flush = |word: &mut String, chars: &mut usize, each: &mut dyn FnMut(&str)| {
        if !word.is_empty() && *chars <= MAX_WORD_CHARS {
            each(word);
        }
        word.clear();
        *chars = 0;
    };
    while let Some(c) = iter.next() {
        if !c.is_alphanumeric() {
            flush(&mut word, &mut chars, &mut each);
            prev_upper = None;
            continue;
        }
        let upper = c.is_uppercase();
        let boundary = match prev_upper {
            // fooBar: a capital after a lower-case letter or digit starts a word.
            Some(false) => upper,
            // HTTPServer: in a capital run, the capital before a lower-case letter starts one.
            Some(true) => upper && iter.peek().is_some_and(|n| n.is_lowercase()),
            None => false,
        };
        if boundary {
            flush(&mut word, &mut chars, &mut each);
        }
        chars += 1;
        if chars <= MAX_WORD_CHARS {
            word.extend(c.to_lowercase());
        }
        prev_upper = Some(upper);
    }
    flush(&mut word, &mut chars, &mut each);
}

/// Calls `each` with every term of `text`: its words less stop words, stemmed.
pub(crate) fn terms(text: &str, mut each: impl FnMut(&str)) {
    words(text, |word| {
        if STOP_WORDS.binary_search(&word).is_ok() {
            return;
        }
        each(&STEMMER.stem(word));
    });
}

/// A name as words joined by `_`: `readFile`, `read-file` and `Read File` are all `read_file`,
/// so a query that spells a tool's name finds it however either is written.
pub(crate) fn name_key(text: &str) -> String {
    let mut key = String::new();
    words(text, |word| {
        if !key.is_empty() {
            key.push('_');
        }
        key.push_str(word);
    });
    key
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all(text: &str) -> Vec<String> {
        let mut out = Vec::new();
        words(text, |w| out.push(w.to_owned()));
        out
    }

    fn stems(text: &str) -> Vec<String> {
        let mut out = Vec::new();
        terms(text, |t| out.push(t.to_owned()));
        out
    }

    #[test]
    fn words_split_case_and_punctuation() {
        assert_eq!(all("readFile"), ["read", "file"]);
        assert_eq!(all("HTTPServer v2"), ["http", "server", "v2"]);
        assert_eq!(all("github__create_issue"), ["github", "create", "issue"]);
        assert_eq!(all("  ...!!  "), Vec::<String>::new());
        assert_eq!(all("ÉCOLE été"), ["école", "été"]);
        let long = "x".repeat(MAX_WORD_CHARS + 1);
        assert_eq!(all(&format!("a {long} b")), ["a", "b"]);
    }

    #[test]
    fn terms_drop_stop_words_and_stem() {
        assert_eq!(
            stems("Reads the files of a directory"),
            ["read", "file", "directori"]
        );
        assert_eq!(stems("file"), stems("files"));
    }

    #[test]
    fn stop_words_are_sorted() {
        // `terms` looks them up by binary search.
        assert!(STOP_WORDS.windows(2).all(|w| w[0] < w[1]));
    }

    #[test]
    fn name_keys_meet() {
        assert_eq!(name_key("readFile"), "read_file");
        assert_eq!(name_key("Read File"), "read_file");
        assert_eq!(name_key("read-file"), "read_file");
    }
}

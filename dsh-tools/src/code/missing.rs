//! The error for calling a namespace member that does not exist:
//! `tools.nope is not a tool; did you mean tools.note?` (issue 39.4). The engine's own error
//! (`TypeError: not a function` in QuickJS) names neither the member nor what exists.
//!
//! The QuickJS bootstrap (`quickjs/bootstrap.js`, `notATool`) writes the same text in JavaScript,
//! where the error is thrown; this is the text for runtimes without an engine (the test double)
//! and the reference a test holds the bootstrap's to, case by case. Both work on UTF-16 code
//! units, as JavaScript strings do, so that they agree on every name.

/// At most this many names are suggested.
const MAX_SUGGESTED: usize = 3;
/// Without a suggestion, at most this many of the namespace's names are listed.
const MAX_LISTED: usize = 10;
/// A name longer than this (in UTF-16 units) is shown cut, and a longer name is neither
/// suggested nor compared (the distance costs the product of the two lengths).
const MAX_NAME_UNITS: usize = 64;

/// The message for `global.name(...)` where `name` is none of `names` (declaration order).
pub(crate) fn not_a_tool(global: &str, name: &str, names: &[&str]) -> String {
    let shown = access(global, name);
    let near = nearest(name, names);
    if !near.is_empty() {
        let near: Vec<String> = near.iter().map(|n| access(global, n)).collect();
        return format!("{shown} is not a tool; did you mean {}?", or_list(&near));
    }
    if names.is_empty() {
        return format!("{shown} is not a tool; {global} has none");
    }
    let listed: Vec<String> = names.iter().take(MAX_LISTED).map(|n| cut(n)).collect();
    let more = names.len().saturating_sub(MAX_LISTED);
    let more = if more > 0 {
        format!(" and {more} more")
    } else {
        String::new()
    };
    format!(
        "{shown} is not a tool; {global} has {}{more}",
        listed.join(", ")
    )
}

/// `tools.name`, or `tools["na-me"]` for a name that is not an identifier (the SDK's own key
/// rule); cut when long (a cut name ends in `…`, so it is quoted).
fn access(global: &str, name: &str) -> String {
    let key = super::sdk::key(&cut(name));
    if key.starts_with('"') {
        format!("{global}[{key}]")
    } else {
        format!("{global}.{key}")
    }
}

/// `name` cut to [`MAX_NAME_UNITS`] UTF-16 units, with `…` when cut.
fn cut(name: &str) -> String {
    let units: Vec<u16> = name.encode_utf16().take(MAX_NAME_UNITS + 1).collect();
    if units.len() <= MAX_NAME_UNITS {
        return name.to_owned();
    }
    let mut out = String::from_utf16_lossy(&units[..MAX_NAME_UNITS]);
    out.push('…');
    out
}

/// `a`, `a or b`, `a, b or c`.
fn or_list(items: &[String]) -> String {
    match items {
        [] => String::new(),
        [one] => one.clone(),
        [init @ .., last] => format!("{} or {last}", init.join(", ")),
    }
}

/// The closest names to `name`, nearest first (ties in declaration order): the same name up to
/// case, `_` and `-`; one within a third of its length in edits; or one containing the other
/// (both at least 3 long once normalised).
fn nearest<'a>(name: &str, names: &[&'a str]) -> Vec<&'a str> {
    let Some(wanted) = normalized(name) else {
        return Vec::new();
    };
    let mut scored: Vec<(usize, usize, &str)> = Vec::new();
    for (i, candidate) in names.iter().enumerate() {
        let Some(c) = normalized(candidate) else {
            continue;
        };
        let distance = edits(&wanted, &c);
        let longer = wanted.len().max(c.len());
        let shorter = wanted.len().min(c.len());
        let contained = shorter >= 3 && (contains(&c, &wanted) || contains(&wanted, &c));
        if distance <= (longer / 3).max(1) || contained {
            scored.push((distance, i, candidate));
        }
    }
    scored.sort_unstable();
    scored
        .into_iter()
        .take(MAX_SUGGESTED)
        .map(|(_, _, n)| n)
        .collect()
}

/// A name's UTF-16 units with ASCII letters lower-cased and `_` and `-` dropped; `None` past
/// [`MAX_NAME_UNITS`].
fn normalized(name: &str) -> Option<Vec<u16>> {
    let mut out = Vec::new();
    for (i, unit) in name.encode_utf16().enumerate() {
        if i >= MAX_NAME_UNITS {
            return None;
        }
        match unit {
            0x41..=0x5a => out.push(unit + 0x20),
            0x5f | 0x2d => {}
            _ => out.push(unit),
        }
    }
    Some(out)
}

/// Whether `needle` occurs in `haystack`.
fn contains(haystack: &[u16], needle: &[u16]) -> bool {
    needle.is_empty() || haystack.windows(needle.len()).any(|w| w == needle)
}

/// The Levenshtein distance (insertions, deletions, substitutions).
fn edits(a: &[u16], b: &[u16]) -> usize {
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, &x) in a.iter().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, &y) in b.iter().enumerate() {
            let above = row[j + 1];
            row[j + 1] = (above + 1)
                .min(row[j] + 1)
                .min(diagonal + usize::from(x != y));
            diagonal = above;
        }
    }
    row[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_the_member_and_the_nearest_tools() {
        let names = ["read_file", "write_file", "list_directory", "search"];
        assert_eq!(
            not_a_tool("tools", "readFile", &names),
            "tools.readFile is not a tool; did you mean tools.read_file?"
        );
        assert_eq!(
            not_a_tool("tools", "file", &names),
            "tools.file is not a tool; did you mean tools.read_file or tools.write_file?"
        );
        assert_eq!(
            not_a_tool("tools", "serch", &names),
            "tools.serch is not a tool; did you mean tools.search?"
        );
        assert_eq!(
            not_a_tool("tools", "nope", &names),
            "tools.nope is not a tool; tools has read_file, write_file, list_directory, search"
        );
        assert_eq!(
            not_a_tool("tools", "x", &[]),
            "tools.x is not a tool; tools has none"
        );
    }

    #[test]
    fn odd_and_long_names_are_quoted_and_cut() {
        assert_eq!(
            not_a_tool("fs", "a-b\"c", &["zzz"]),
            r#"fs["a-b\"c"] is not a tool; fs has zzz"#
        );
        let long = "x".repeat(100_000);
        let message = not_a_tool("tools", &long, &["x"]);
        assert!(message.len() < 200, "{message}");
        assert!(message.starts_with(&format!("tools[\"{}…\"]", "x".repeat(64))));
        let many: Vec<String> = (0..25).map(|i| format!("t{i}")).collect();
        let many: Vec<&str> = many.iter().map(String::as_str).collect();
        assert!(not_a_tool("tools", "qqqqqq", &many).ends_with("t9 and 15 more"));
    }
}

//! `pattern`: ECMA-262's classes, each regex built once, and what patterns may cost.
//!
//! The contract is documented on the `schema` module ("Patterns").

use regex_automata::meta;
use regex_syntax::ast::{self, Ast, ClassSet, ClassSetItem};
use rustc_hash::FxHashMap;
use std::cell::RefCell;
use std::sync::{Arc, Mutex};

/// The largest compiled size of one `pattern` (the NFA's size limit): 1 MiB.
pub const MAX_PATTERN_BYTES: usize = 1 << 20;

/// The largest compiled size of a schema's distinct patterns together: 16 MiB.
pub const MAX_SCHEMA_PATTERN_BYTES: usize = 16 << 20;

/// The regex work one validation may spend, in units of one string byte matched against a
/// pattern of at most 4 KiB compiled: 4 Mi (4 MiB of text against small patterns).
pub const MAX_REGEX_WORK: u64 = 1 << 22;

/// Patterns kept built process-wide, by text; the cache is emptied past either bound.
const CACHE_ENTRIES: usize = 4096;
const CACHE_BYTES: usize = 64 << 20;

/// Strings at least this long are matched at most once per validation.
const MEMO_MIN_BYTES: usize = 1024;

/// A built `pattern`.
#[derive(Debug)]
pub(crate) struct Pattern {
    re: meta::Regex,
    /// Work units per byte of haystack.
    weight: u64,
    /// Heap bytes of the compiled regex (its caches excluded).
    pub(crate) bytes: usize,
}

type Built = Result<Arc<Pattern>, String>;

static CACHE: Mutex<Option<Cache>> = Mutex::new(None);

#[derive(Default)]
struct Cache {
    map: FxHashMap<Box<str>, Built>,
    bytes: usize,
}

/// The built pattern for `text`, or why it cannot be built (the syntax error's own words).
pub(crate) fn build(text: &str) -> Built {
    let cached = {
        let guard = CACHE
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        guard.as_ref().and_then(|c| c.map.get(text).cloned())
    };
    if let Some(built) = cached {
        return built;
    }
    let built = build_uncached(text).map(Arc::new);
    let mut guard = CACHE
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let cache = guard.get_or_insert_with(Cache::default);
    let bytes = built.as_ref().map_or(text.len(), |p| p.bytes + text.len());
    if cache.map.len() >= CACHE_ENTRIES || cache.bytes + bytes > CACHE_BYTES {
        *cache = Cache::default();
    }
    if bytes <= CACHE_BYTES {
        cache.bytes += bytes;
        cache.map.insert(text.into(), built.clone());
    }
    built
}

fn build_uncached(text: &str) -> Result<Pattern, String> {
    let translated = ecma_classes(text)?;
    let re = meta::Regex::builder()
        .configure(
            meta::Regex::config()
                .nfa_size_limit(Some(MAX_PATTERN_BYTES))
                .onepass_size_limit(Some(MAX_PATTERN_BYTES))
                .dfa_size_limit(Some(MAX_PATTERN_BYTES))
                .hybrid_cache_capacity(2 << 20),
        )
        .build(&translated)
        .map_err(|e| match (e.syntax_error(), e.size_limit()) {
            (Some(syntax), _) => syntax_message(&syntax.to_string()),
            (None, Some(limit)) => {
                format!("compiled regex exceeds the size limit of {limit} bytes")
            }
            (None, None) => e.to_string(),
        })?;
    let bytes = re.memory_usage();
    Ok(Pattern {
        re,
        weight: 1 + (bytes / 4096) as u64,
        bytes,
    })
}

/// The last `error: …` line of regex-syntax's multi-line report.
fn syntax_message(report: &str) -> String {
    report
        .lines()
        .rev()
        .find_map(|l| l.strip_prefix("error: "))
        .unwrap_or("invalid syntax")
        .to_owned()
}

/// Rewrites `\w`, `\d`, `\b` (and their negations and the `\b{…}` forms) to ECMA-262's ASCII
/// meaning; everything else is printed back as written. Rejects what does not parse.
fn ecma_classes(text: &str) -> Result<String, String> {
    let mut ast = ast::parse::ParserBuilder::new()
        .nest_limit(250)
        .build()
        .parse(text)
        .map_err(|e| syntax_message(&regex_syntax::Error::from(e).to_string()))?;
    let mut changed = false;
    let mut nodes: Vec<&mut Ast> = vec![&mut ast];
    let mut sets: Vec<&mut ClassSet> = Vec::new();
    while let Some(node) = nodes.pop() {
        if let Some(replacement) = ascii_node(node) {
            *node = replacement;
            changed = true;
            continue;
        }
        match node {
            Ast::Repetition(r) => nodes.push(&mut r.ast),
            Ast::Group(g) => nodes.push(&mut g.ast),
            Ast::Alternation(a) => nodes.extend(a.asts.iter_mut()),
            Ast::Concat(c) => nodes.extend(c.asts.iter_mut()),
            Ast::ClassBracketed(b) => sets.push(&mut b.kind),
            _ => {}
        }
    }
    let mut items: Vec<&mut ClassSetItem> = Vec::new();
    while let Some(set) = sets.pop() {
        match set {
            ClassSet::Item(item) => items.push(item),
            ClassSet::BinaryOp(op) => {
                sets.push(&mut op.lhs);
                sets.push(&mut op.rhs);
            }
        }
        while let Some(item) = items.pop() {
            match item {
                ClassSetItem::Perl(p) if p.kind != ast::ClassPerlKind::Space => {
                    *item = ClassSetItem::Ascii(ascii_class(p));
                    changed = true;
                }
                ClassSetItem::Union(u) => items.extend(u.items.iter_mut()),
                ClassSetItem::Bracketed(b) => sets.push(&mut b.kind),
                _ => {}
            }
        }
    }
    if !changed {
        return Ok(text.to_owned());
    }
    let mut out = String::with_capacity(text.len() + 16);
    ast::print::Printer::new()
        .print(&ast, &mut out)
        .map_err(|e| e.to_string())?;
    Ok(out)
}

fn ascii_class(p: &ast::ClassPerl) -> ast::ClassAscii {
    ast::ClassAscii {
        span: p.span,
        kind: match p.kind {
            ast::ClassPerlKind::Digit => ast::ClassAsciiKind::Digit,
            _ => ast::ClassAsciiKind::Word,
        },
        negated: p.negated,
    }
}

/// The ASCII form of a Perl class or word assertion outside brackets.
fn ascii_node(node: &Ast) -> Option<Ast> {
    match node {
        // `\w` → `[[:word:]]`, `\D` → `[^[:digit:]]`: a negated ASCII class in a Unicode set
        // matches every other scalar value.
        Ast::ClassPerl(p) if p.kind != ast::ClassPerlKind::Space => {
            Some(Ast::class_bracketed(ast::ClassBracketed {
                span: p.span,
                negated: p.negated,
                kind: ClassSet::Item(ClassSetItem::Ascii(ast::ClassAscii {
                    negated: false,
                    ..ascii_class(p)
                })),
            }))
        }
        // `\b` → `(?-u:\b)`.
        Ast::Assertion(a)
            if !matches!(
                a.kind,
                ast::AssertionKind::StartLine
                    | ast::AssertionKind::EndLine
                    | ast::AssertionKind::StartText
                    | ast::AssertionKind::EndText
            ) =>
        {
            let flag = |kind| ast::FlagsItem { span: a.span, kind };
            Some(Ast::group(ast::Group {
                span: a.span,
                kind: ast::GroupKind::NonCapturing(ast::Flags {
                    span: a.span,
                    items: vec![
                        flag(ast::FlagsItemKind::Negation),
                        flag(ast::FlagsItemKind::Flag(ast::Flag::Unicode)),
                    ],
                }),
                ast: Box::new(Ast::assertion(a.as_ref().clone())),
            }))
        }
        _ => None,
    }
}

// ---- matching within one validation's budget ----

/// What one check of a string against a pattern found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Outcome {
    Match,
    Miss,
    /// Not run: the validation's regex work budget is spent.
    OverBudget,
}

#[derive(Default)]
struct Session {
    /// Nested entries into the validator (the outermost one owns the budget).
    depth: u32,
    spent: u64,
    exhausted: bool,
    /// Outcomes of long strings: (string address, length, pattern address).
    memo: FxHashMap<(usize, usize, usize), Outcome>,
}

thread_local! {
    static SESSION: RefCell<Session> = RefCell::default();
}

/// One validation's regex budget: every check inside the guard's life shares it.
///
/// Entries nest (a validation that runs the fast path then the collector is one session).
pub(crate) struct SessionGuard(());

impl SessionGuard {
    pub(crate) fn enter() -> Self {
        SESSION.with(|s| {
            let mut s = s.borrow_mut();
            if s.depth == 0 {
                s.spent = 0;
                s.exhausted = false;
            }
            s.depth += 1;
        });
        SessionGuard(())
    }
}

impl Drop for SessionGuard {
    fn drop(&mut self) {
        SESSION.with(|s| {
            let mut s = s.borrow_mut();
            s.depth = s.depth.saturating_sub(1);
            if s.depth == 0 && !s.memo.is_empty() {
                s.memo = FxHashMap::default();
            }
        });
    }
}

impl Pattern {
    /// Runs the pattern on `x` within the current validation's budget.
    pub(crate) fn check(&self, x: &str) -> Outcome {
        let key = (
            x.as_ptr() as usize,
            x.len(),
            std::ptr::from_ref(self) as usize,
        );
        let cost = (x.len() as u64).saturating_mul(self.weight);
        let go = SESSION.with(|s| {
            let mut s = s.borrow_mut();
            if x.len() >= MEMO_MIN_BYTES
                && let Some(done) = s.memo.get(&key)
            {
                return Err(*done);
            }
            if s.depth == 0 {
                // Outside any validation (not reached by the validator's entries): a fresh budget.
                return if cost > MAX_REGEX_WORK {
                    Err(Outcome::OverBudget)
                } else {
                    Ok(false)
                };
            }
            if s.exhausted || cost > MAX_REGEX_WORK - s.spent {
                s.exhausted = true;
                return Err(Outcome::OverBudget);
            }
            s.spent += cost;
            Ok(x.len() >= MEMO_MIN_BYTES)
        });
        let remember = match go {
            Err(done) => return done,
            Ok(remember) => remember,
        };
        let outcome = if self.re.is_match(x) {
            Outcome::Match
        } else {
            Outcome::Miss
        };
        if remember {
            SESSION.with(|s| s.borrow_mut().memo.insert(key, outcome));
        }
        outcome
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn translated(p: &str) -> String {
        ecma_classes(p).unwrap()
    }

    #[test]
    fn perl_classes_become_ascii() {
        assert_eq!(translated(r"^\w+$"), r"^[[:word:]]+$");
        assert_eq!(translated(r"\D"), r"[^[:digit:]]");
        assert_eq!(translated(r"[\w.-]"), r"[[:word:].-]");
        assert_eq!(translated(r"[^\W\d]"), r"[^[:^word:][:digit:]]");
        assert_eq!(translated(r"\bx\B"), r"(?-u:\b)x(?-u:\B)");
        assert_eq!(translated(r"\s\S"), r"\s\S");
        assert_eq!(translated(r"^[a-z]+$"), r"^[a-z]+$");
        assert_eq!(translated(r"[a-z&&[^\d]]"), r"[a-z&&[^[:digit:]]]");
    }

    #[test]
    fn ecma_meaning() {
        let p = build(r"^\w+$").unwrap();
        let _g = SessionGuard::enter();
        assert_eq!(p.check("abc_09"), Outcome::Match);
        assert_eq!(p.check("é"), Outcome::Miss);
        let d = build(r"^\d$").unwrap();
        assert_eq!(
            d.check("٣"),
            Outcome::Miss,
            "Arabic-Indic digits are not \\d"
        );
        assert_eq!(d.check("3"), Outcome::Match);
        let s = build(r"^\s$").unwrap();
        assert_eq!(
            s.check("\u{a0}"),
            Outcome::Match,
            "\\s stays Unicode, as in ECMA-262"
        );
        let b = build(r"\bé").unwrap();
        assert_eq!(b.check(" é"), Outcome::Miss, "é is not a word character");
        let dot = build(r"^.$").unwrap();
        assert_eq!(dot.check("é"), Outcome::Match);
    }

    #[test]
    fn errors_keep_regex_syntax_words() {
        assert_eq!(build("(a").unwrap_err(), "unclosed group");
        assert_eq!(
            build(r"\p{Nope}").unwrap_err(),
            "Unicode property not found"
        );
        assert!(
            build(r"[a-z]{1000}{1000}")
                .unwrap_err()
                .contains("size limit")
        );
    }

    #[test]
    fn built_once_per_text() {
        let a = build(r"^once-[a-z]{3}$").unwrap();
        let b = build(r"^once-[a-z]{3}$").unwrap();
        assert!(Arc::ptr_eq(&a, &b));
    }

    #[test]
    fn budget_is_shared_sticky_and_per_session() {
        let p = build("^a+$").unwrap();
        assert_eq!(p.weight, 1);
        let big = "a".repeat(3 << 20);
        {
            let _g = SessionGuard::enter();
            assert_eq!(p.check(&big), Outcome::Match);
            let _inner = SessionGuard::enter();
            // 3 MiB spent of 4: a second 3 MiB check does not fit, nor does anything after it.
            let other = "a".repeat(3 << 20);
            assert_eq!(p.check(&other), Outcome::OverBudget);
            assert_eq!(p.check("a"), Outcome::OverBudget);
            // The first string's outcome is remembered, not re-run.
            assert_eq!(p.check(&big), Outcome::Match);
        }
        let _g = SessionGuard::enter();
        assert_eq!(
            p.check("a"),
            Outcome::Match,
            "a new validation has a new budget"
        );
    }
}

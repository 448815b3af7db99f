//! TypeScript in, JavaScript out (Code Mode spec §6.2): swc's strip-only mode, which replaces
//! erasable syntax with whitespace (positions are kept) and refuses the rest (`enum`,
//! `namespace`, parameter properties) with the texts Node's type stripper reports.

use std::sync::{Arc, Mutex};
use swc_common::errors::{DiagnosticBuilder, Emitter, Handler};
use swc_common::sync::Lrc;
use swc_common::{FilePathMapping, GLOBALS, Globals, SourceMap};

/// The wrapper that makes a function body parse (top-level `return` and `await`).
const HEAD: &str = "async function __dsh_main__() {\n";
const TAIL: &str = "\n}";

/// Brackets nested deeper than this are refused before the parser, which recurses.
const MAX_NESTING: usize = 1_000;

/// The longest program stripped: swc's parser recurses once per operator of a chain (`!!!…0`,
/// `1+1+…`), so the parse runs on a thread whose stack holds a chain as long as the program.
pub(super) const MAX_PROGRAM_BYTES: usize = 128 * 1024;

/// The stripping thread's stack: measured at 100,000 chained operators in a debug build in
/// well under 256 MiB (reserved, not committed, until used).
const STRIP_STACK_BYTES: usize = 384 << 20;

/// One stripper message, with where it points (a byte position of the source map).
type Message = (String, Option<swc_common::BytePos>);

/// The stripper's messages.
struct Collect(Arc<Mutex<Vec<Message>>>);

impl Emitter for Collect {
    fn emit(&mut self, db: &mut DiagnosticBuilder<'_>) {
        let at = db.span.primary_span().map(|span| span.lo);
        self.0
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push((db.message(), at));
    }
}

/// The deepest bracket nesting of `text` (strings and comments counted too: an over-estimate).
fn nesting(text: &str) -> usize {
    let (mut depth, mut deepest) = (0usize, 0usize);
    for b in text.bytes() {
        match b {
            b'(' | b'[' | b'{' => {
                depth += 1;
                deepest = deepest.max(depth);
            }
            b')' | b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    deepest
}

/// `program` with its types stripped, or the stripper's first message.
pub(super) fn strip(program: &str) -> Result<String, String> {
    if program.len() > MAX_PROGRAM_BYTES {
        return Err(format!(
            "SyntaxError: the program is longer than {MAX_PROGRAM_BYTES} bytes"
        ));
    }
    std::thread::scope(|scope| {
        std::thread::Builder::new()
            .name("dsh-code-strip".to_owned())
            .stack_size(STRIP_STACK_BYTES)
            .spawn_scoped(scope, || strip_here(program))
            .map_err(|e| format!("SyntaxError: could not start the type stripper: {e}"))?
            .join()
            .unwrap_or_else(|_| Err("SyntaxError: the type stripper failed".to_owned()))
    })
}

fn strip_here(program: &str) -> Result<String, String> {
    if nesting(program) > MAX_NESTING {
        return Err(format!(
            "SyntaxError: the program nests brackets more than {MAX_NESTING} levels deep"
        ));
    }
    let input = format!("{HEAD}{program}{TAIL}");
    let messages = Arc::new(Mutex::new(Vec::new()));
    let (output, first) = GLOBALS.set(&Globals::new(), || {
        let cm: Lrc<SourceMap> = Lrc::new(SourceMap::new(FilePathMapping::empty()));
        let handler = Handler::with_emitter(true, false, Box::new(Collect(Arc::clone(&messages))));
        let options = swc_ts_fast_strip::Options {
            module: Some(false),
            ..Default::default()
        };
        let output = swc_ts_fast_strip::operate(&cm, &handler, input, options);
        // Issue 39.3: the first message, with its line and column in the program's numbering
        // (the wrapper's head is one line of its own).
        let first = messages
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .first()
            .map(|(message, at)| match at {
                Some(at) if !at.is_dummy() => {
                    let loc = cm.lookup_char_pos(*at);
                    match loc.line.checked_sub(1).filter(|line| *line >= 1) {
                        Some(line) => {
                            let (line, column) = within(program, line, loc.col.0 + 1);
                            format!("{message} (line {line}, column {column})")
                        }
                        None => message.clone(),
                    }
                }
                _ => message.clone(),
            });
        (output, first)
    });
    match output {
        Ok(out) => {
            let code = out.code;
            match code
                .strip_prefix(HEAD)
                .and_then(|rest| rest.strip_suffix(TAIL))
            {
                Some(body) => Ok(body.to_owned()),
                None => Err(format!(
                    "SyntaxError: {}",
                    first.unwrap_or_else(|| "the program could not be type-stripped".to_owned())
                )),
            }
        }
        Err(e) => Err(first.unwrap_or(e.message)),
    }
}

/// A position past the program's end (the wrapper's closing line) as its last character's
/// successor.
fn within(program: &str, line: usize, column: usize) -> (usize, usize) {
    let lines = program.split('\n').count();
    if line <= lines {
        return (line, column);
    }
    let last = program.rsplit('\n').next().unwrap_or("");
    (lines, last.chars().count() + 1)
}

#[cfg(test)]
mod tests {
    use super::strip;

    #[test]
    fn erasable_syntax_is_stripped_in_place() {
        let out = strip("const p: number = 1 as number;\nreturn p").unwrap();
        assert_eq!(out.len(), "const p: number = 1 as number;\nreturn p".len());
        assert!(out.starts_with("const p"));
        assert!(!out.contains("number"));
    }

    #[test]
    fn enum_and_namespace_are_refused_with_node_texts() {
        // Each with where it points, in the program's own numbering (issue 39.3).
        let e = strip("enum E { A }\nreturn 1").unwrap_err();
        assert_eq!(
            e,
            "TypeScript enum is not supported in strip-only mode (line 1, column 1)"
        );
        let n = strip("const a = 1;\n  namespace N { export const x = 1 }\nreturn 1").unwrap_err();
        assert_eq!(
            n,
            "TypeScript namespace declaration is not supported in strip-only mode (line 2, column 3)"
        );
        assert_eq!(
            strip("return (1 +").unwrap_err(),
            "Expression expected (line 1, column 12)"
        );
        let far = format!("{}const b = ;", "\n".repeat(9_999));
        assert_eq!(
            strip(&far).unwrap_err(),
            "Expression expected (line 10000, column 11)"
        );
    }

    #[test]
    fn operator_chains_as_long_as_the_cap_strip_without_overflow() {
        let budget = super::MAX_PROGRAM_BYTES - "return 0".len();
        assert!(strip(&format!("return {}0", "!".repeat(budget))).is_ok());
        assert!(strip(&format!("return 1{}", "+1".repeat(budget / 2))).is_ok());
        let over = strip(&"x".repeat(super::MAX_PROGRAM_BYTES + 1)).unwrap_err();
        assert!(over.contains("longer than"), "{over}");
    }

    #[test]
    fn deep_nesting_is_refused_before_the_parser() {
        let deep = format!("return {}1{}", "(".repeat(5_000), ")".repeat(5_000));
        assert!(strip(&deep).unwrap_err().contains("nests brackets"));
    }
}

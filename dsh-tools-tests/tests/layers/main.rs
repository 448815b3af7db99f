//! The layering of `dsh-tools` and `dsh-tools-derive`, read from the source: no file-level
//! cycle, and no module importing one above it (DESIGN.md draws the same layers).
//!
//! An arrow runs from a file to the file that *defines* what it names. Every path form counts:
//! `use` trees, and paths written inline anywhere (expressions, types, attributes, macro bodies)
//! that start with `crate::`, `$crate::`, `self::`, `super::` (chains too), a child module or a
//! name a `use` bound; each is resolved through `use` bindings and globs to the defining file.
//! `mod` declarations are not arrows (a parent declares its children). Left out: comments,
//! string and char literals (a path in a string is text), `#[cfg(test)]` items wherever they are
//! and the files of `#[cfg(test)] mod x;`.
//!
//! The checker is proved on fixture crates (`tests/layers/fixtures/<case>/src`, read as text,
//! never compiled): each cycle shape it must find, and a clean crate full of paths it must not
//! read.
//!
//! Run alone: `cargo test -p dsh-tools-tests --test layers`.

mod graph;
mod items;
mod krate;
mod lex;

use graph::{cycles, describe};
use krate::{Crate, Edges};
use std::path::{Path, PathBuf};

/// The top-level modules of `dsh-tools`, ground first. A module may import only its own rank
/// or lower. `lib`, `__private` and the CLI sit on top.
const LAYERS: &[&[&str]] = &[
    &["json"],
    &["schema"],
    &["error", "content", "search"],
    &["call", "present", "code"],
    &["definition", "tool", "run_code", "telemetry"],
    &["registry"],
    &["pipeline"],
    &["wrappers", "schedule", "workspace", "durable", "task"],
    &["mcp", "provider", "acp", "testing"],
    &["lib", "__private", "bin"],
];

fn source(krate: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .join(krate)
        .join("src")
}

fn fixture(case: &str) -> (Edges, Vec<Vec<String>>) {
    let src = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/layers/fixtures")
        .join(case)
        .join("src");
    let krate = Crate::read(&src);
    assert!(krate.files.len() > 1, "{case}: no sources read");
    let edges = krate.edges();
    let found = cycles(&edges);
    (edges, found)
}

/// The fixture `case` has exactly one cycle, over `files`.
fn assert_one_cycle(case: &str, files: &[&str]) {
    let (edges, found) = fixture(case);
    let expected: Vec<String> = files.iter().map(|f| (*f).to_owned()).collect();
    assert_eq!(found, vec![expected], "{case}: {edges:#?}");
}

fn rank(file: &str) -> usize {
    let top = file.split('/').next().unwrap().trim_end_matches(".rs");
    LAYERS
        .iter()
        .position(|layer| layer.contains(&top))
        .unwrap_or_else(|| panic!("{top} (from {file}) is in no layer: add it to LAYERS"))
}

#[test]
fn no_file_level_cycles_in_either_crate() {
    for name in ["dsh-tools", "dsh-tools-derive"] {
        let krate = Crate::read(&source(name));
        assert!(krate.files.len() > 5, "{name}: no sources read");
        let found = cycles(&krate.edges());
        let arrows = krate.arrows();
        let report: Vec<String> = found.iter().map(|c| describe(&arrows, c)).collect();
        assert!(found.is_empty(), "{name}:\n{}", report.join("\n"));
    }
}

/// The reading itself: every file's braces pair up once comments and literals are out (a raw
/// string, a char literal or a lifetime misread would leave them unpaired).
#[test]
fn every_file_is_read_with_its_braces_paired() {
    for name in ["dsh-tools", "dsh-tools-derive"] {
        let krate = Crate::read(&source(name));
        let misread: Vec<&String> = krate
            .files
            .iter()
            .filter_map(|(rel, file)| file.unbalanced.then_some(rel))
            .collect();
        assert!(misread.is_empty(), "{name}: braces misread in {misread:?}");
    }
}

#[test]
fn modules_import_only_their_own_layer_or_lower() {
    let krate = Crate::read(&source("dsh-tools"));
    let mut upward = Vec::new();
    for (a, targets) in krate.edges() {
        for b in targets {
            if rank(&b) > rank(&a) {
                upward.push(format!("{a} -> {b}"));
            }
        }
    }
    assert!(
        upward.is_empty(),
        "imports that point up the layers (DESIGN.md):\n  {}",
        upward.join("\n  ")
    );
}

/// `super::ledger::js_number(..)` in an expression, after a `'"'` char literal.
#[test]
fn the_checker_finds_an_inline_call() {
    assert_one_cycle("expression", &["code/ledger.rs", "code/runtime.rs"]);
}

/// `&'a super::http::Request` between lifetimes; `auth::check(..)` through `use super::auth`.
#[test]
fn the_checker_finds_a_type_path_and_an_alias() {
    assert_one_cycle("type_path", &["mcp/serve/auth.rs", "mcp/serve/http.rs"]);
}

/// A macro argument, a derive path and `self::code::..` through a private `use`: three files.
#[test]
fn the_checker_finds_attribute_macro_and_self_paths() {
    let files = ["registry/code.rs", "registry/core.rs", "registry/state.rs"];
    assert_one_cycle("attribute_macro", &files);
}

/// `super::super::bridge::load::..` and `$crate::..` in a `macro_rules!` body.
#[test]
fn the_checker_finds_super_chains_and_dollar_crate() {
    let files = ["schema/bridge/convert.rs", "schema/bridge/load.rs"];
    assert_one_cycle("chain", &files);
}

/// A re-export chain and an inline `crate::` path.
#[test]
fn the_checker_finds_a_cycle_through_a_re_export() {
    assert_one_cycle("re_export", &["a/inner.rs", "b.rs"]);
}

/// Paths in strings, raw strings, comments, `#[cfg(test)]` modules and files, `pub(in ..)` and
/// `use super::{a, b}` are no arrows; each would close a cycle if read. The arrows are exactly
/// the real ones.
#[test]
fn the_checker_reads_no_arrow_from_what_is_not_code() {
    let (edges, found) = fixture("clean");
    assert!(found.is_empty(), "{found:?}\n{edges:#?}");
    let expected = [
        ("lib.rs", "shapes/mod.rs"),
        ("shapes/a.rs", "shapes/b.rs"),
        ("shapes/c.rs", "shapes/a.rs"),
        ("shapes/c.rs", "shapes/b.rs"),
        ("shapes/mod.rs", "shapes/c.rs"),
    ];
    let arrows: Vec<(&str, &str)> = edges
        .iter()
        .flat_map(|(a, bs)| bs.iter().map(move |b| (a.as_str(), b.as_str())))
        .collect();
    assert_eq!(arrows, expected);
}

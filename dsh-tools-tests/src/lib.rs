//! Integration, conformance and property tests for `dsh-tools` (see `tests/`).

/// The repository README's examples, compiled and run as doctests (with the features
/// `cargo test --workspace --all-features` turns on).
#[doc = include_str!("../../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;

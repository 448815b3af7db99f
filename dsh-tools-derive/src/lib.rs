//! Procedural macros for `dsh-tools`. Use them through the `dsh-tools` crate, which re-exports
//! them; this crate is an implementation detail and pinned by an exact version.
//!
//! The `#[tool]` attribute is tracked by issue #3; until it lands this crate exports nothing.

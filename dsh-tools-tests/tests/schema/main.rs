//! Schemas: the reference cases of the spec's conformance data checked exactly, and the
//! schemars bridge over a corpus of argument types. One test binary; each file is one part.

#[path = "../common/strict.rs"]
mod strict;

mod bridge;
mod conformance;

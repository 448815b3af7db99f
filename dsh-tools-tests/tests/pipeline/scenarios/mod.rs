//! The pipeline scenarios of `conformance/pipeline.md`, one module per section.

pub mod support;

mod around;
mod cancellation;
mod classification;
mod contexts;
mod execution;
mod finalize;
mod identity;
mod policy;
mod post;
mod registration;
mod repair;
mod scopes;

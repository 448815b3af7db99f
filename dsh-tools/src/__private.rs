//! Support for the code `#[tool]` generates. Not API: anything here may change in any release.

pub use schemars;
pub use serde;
pub use serde_json;

pub use crate::tool::{ToolContext, ToolReturn};

use std::future::Future;

/// A spanned check that the arguments decode (`quote_spanned!` at the author's type).
pub fn assert_args<T: serde::de::DeserializeOwned + schemars::JsonSchema>() {}

/// A spanned check that the output serializes and has a schema.
pub fn assert_output<T: serde::Serialize + schemars::JsonSchema>() {}

/// A spanned check that the body's future can move between threads.
pub fn assert_send<F: Future + Send>(future: F) -> F {
    future
}

//! Support for the code `#[tool]` generates. Not API: anything here may change in any release.

pub use schemars;
pub use serde;
pub use serde_json;

pub use crate::tool::{ToolContext, ToolReturn};

use std::future::Future;

/// A spanned check that the body's future can move between threads.
pub fn assert_send<F: Future + Send>(future: F) -> F {
    future
}

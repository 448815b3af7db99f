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

/// Runs a blocking body (a `#[tool]` on a plain `fn`) on Tokio's blocking pool. Awaiting it
/// yields, so a declared timeout releases the caller; a panic becomes the call's error.
pub async fn blocking<R: Send + 'static>(
    body: impl FnOnce() -> R + Send + 'static,
) -> Result<R, crate::ToolError> {
    let Ok(handle) = tokio::runtime::Handle::try_current() else {
        return Err(crate::ToolError::new(
            "a blocking `#[tool]` body (a plain `fn`) runs on Tokio's blocking pool: call it \
             inside a Tokio runtime",
        ));
    };
    match handle.spawn_blocking(body).await {
        Ok(returned) => Ok(returned),
        Err(error) if error.is_panic() => {
            Err(crate::ToolError::from_panic_payload(error.into_panic()))
        }
        Err(error) => Err(crate::ToolError::new(format!(
            "the blocking body did not run: {error}"
        ))),
    }
}

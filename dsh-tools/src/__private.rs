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
/// yields, and it gives up on the body when `signal` fires (a deadline, the caller's abort), so
/// the caller is released at once while the thread finishes its work; a panic becomes the
/// call's error.
pub async fn blocking<R: Send + 'static>(
    signal: crate::call::Signal,
    body: impl FnOnce() -> R + Send + 'static,
) -> Result<R, crate::ToolError> {
    let Ok(handle) = tokio::runtime::Handle::try_current() else {
        return Err(crate::ToolError::new(
            "a blocking `#[tool]` body (a plain `fn`) runs on Tokio's blocking pool: call it \
             inside a Tokio runtime",
        ));
    };
    // Already cancelled: the body never starts (its side effects would be for nobody).
    if signal.is_cancelled() {
        return Err(crate::ToolError::new(
            "the blocking body was not started: its signal had fired",
        ));
    }
    let task = handle.spawn_blocking(body);
    tokio::select! {
        joined = task => match joined {
            Ok(returned) => Ok(returned),
            Err(error) if error.is_panic() => {
                Err(crate::ToolError::from_panic_payload(error.into_panic()))
            }
            Err(error) => Err(crate::ToolError::new(format!(
                "the blocking body did not run: {error}"
            ))),
        },
        () = signal.cancelled() => Err(crate::ToolError::new(
            "the blocking body was abandoned when its signal fired (its thread runs on)",
        )),
    }
}

/// What a stateful tool's name means as a value (`registry.register(ReadFile)`): not a tool.
/// Converting it into a `ToolDefinition` fails with a message naming `ReadFile::with(state)`.
pub struct NeedsState<T>(std::marker::PhantomData<fn() -> T>);

impl<T> NeedsState<T> {
    /// The marker.
    #[allow(clippy::new_without_default)]
    pub const fn new() -> Self {
        Self(std::marker::PhantomData)
    }
}

/// Never implemented: the bound that carries the message.
#[diagnostic::on_unimplemented(
    message = "`{Self}` holds state: build it with `{Self}::with(state)`",
    label = "a stateful tool is registered with its state: `{Self}::with(state)`",
    note = "the function's first parameter is `State(..): State<T>`, so each `{Self}` holds a `T` (cloned into every call)"
)]
pub trait BuiltWithState: sealed::Never {}

mod sealed {
    /// Private and implemented for nothing, so `BuiltWithState` cannot be implemented either.
    pub trait Never {}
}

impl<T: crate::Tool + BuiltWithState> From<NeedsState<T>> for crate::ToolDefinition {
    fn from(_: NeedsState<T>) -> Self {
        // Not reachable (no type is `BuiltWithState`); a definition that refuses to register.
        crate::ToolDefinition::invalid(
            String::new(),
            String::new(),
            crate::schema::bridge::BridgeError::internal(
                "a stateful tool is built with `with(state)`".to_owned(),
            ),
        )
    }
}

/// Every struct field and enum variant name serde accepts for `T` (aliases included): the
/// inline form's parameter types, checked at registration. `NamesOf::<T>::NEW.names()` picks
/// this where `T: DeserializeOwned` and the empty fallback (behind `Deref`) otherwise, so a
/// parameter that is not `Deserialize` is reported once, by the arguments struct's derive.
pub struct NamesOf<T>(std::marker::PhantomData<fn() -> T>);

impl<T> NamesOf<T> {
    /// The probe.
    pub const NEW: Self = Self(std::marker::PhantomData);
}

impl<T: serde::de::DeserializeOwned> NamesOf<T> {
    /// `T`'s names.
    pub fn names(&self) -> std::collections::BTreeSet<&'static str> {
        crate::typed::serde_names::<T>()
    }
}

/// The fallback of [`NamesOf`]: no names.
pub struct NoNames;

impl NoNames {
    /// No names.
    pub fn names(&self) -> std::collections::BTreeSet<&'static str> {
        std::collections::BTreeSet::new()
    }
}

impl<T> std::ops::Deref for NamesOf<T> {
    type Target = NoNames;
    fn deref(&self) -> &NoNames {
        &NoNames
    }
}

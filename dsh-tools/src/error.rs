//! Tool errors as data (spec §6.9, §6.13): a message, and for routable errors `{name, code}`.

use crate::schema::{JsonSchemaError, ToolArgsError, ToolOutputError};
use serde::{Deserialize, Serialize};

/// The routable part of an error: `{name, code}` (`{"name": "ToolNotFoundError", "code":
/// "UNKNOWN_TOOL"}`).
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct ErrorInfo {
    /// The error's type name (`ToolArgsError`, `AbortError`, …).
    pub name: String,
    /// The machine-readable code (`INVALID_ARGS`, …).
    pub code: String,
}

/// Every failure of a call, as data: the model reads `Error: <message>`; routable errors also
/// carry [`ErrorInfo`].
///
/// ```
/// use dsh_tools::ToolError;
///
/// let plain = ToolError::new("disk on fire");
/// assert_eq!(plain.info(), None);
/// let routable = ToolError::coded("HarnessError", "ENOSPC", "disk full");
/// assert_eq!(routable.code(), Some("ENOSPC"));
/// assert_eq!(routable.to_string(), "disk full");
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, thiserror::Error)]
#[error("{message}")]
pub struct ToolError {
    message: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    info: Option<ErrorInfo>,
}

/// Error codes the registry produces (spec §6.13).
pub mod codes {
    /// The tool is not visible to the caller (or not registered).
    pub const UNKNOWN_TOOL: &str = "UNKNOWN_TOOL";
    /// Arguments do not match the tool's parameters.
    pub const INVALID_ARGS: &str = "INVALID_ARGS";
    /// The tool's value does not match its output schema, or a projector failed.
    pub const INVALID_TOOL_OUTPUT: &str = "INVALID_TOOL_OUTPUT";
    /// Cancellation prevented the body from being invoked.
    pub const ABORTED_BEFORE_DISPATCH: &str = "ABORTED_BEFORE_DISPATCH";
    /// Cancellation overtook a body that was invoked.
    pub const ABORTED: &str = "ABORTED";
    /// The timeout wrapper's deadline fired.
    pub const TOOL_TIMEOUT: &str = "TOOL_TIMEOUT";
    /// A schema outside the supported subset.
    pub const UNSUPPORTED_SCHEMA: &str = "UNSUPPORTED_SCHEMA";
    /// A failure that may pass on another attempt (a busy service, a dropped connection): the
    /// only one [`wrappers::retry`](crate::wrappers::retry) retries by default.
    pub const TRANSIENT: &str = "TRANSIENT";
    /// A `run_code` call in deferred mode whose program waits for an approval: the call
    /// settles as a `PendingProgram`, never as a result, where deferral is asked for.
    pub const APPROVAL_PENDING: &str = "APPROVAL_PENDING";
    /// The caller may not call the tool: [`Registry::scope_rules`](crate::Registry::scope_rules)
    /// want scopes its token was not granted, or a caller where there is none. Not in the
    /// reference system's list: it has no callers.
    pub const SCOPE_DENIED: &str = "SCOPE_DENIED";
}

impl ToolError {
    /// A failure worth another attempt ([`codes::TRANSIENT`]): what
    /// [`wrappers::retry`](crate::wrappers::retry) retries by default.
    ///
    /// ```
    /// use dsh_tools::ToolError;
    /// assert_eq!(ToolError::transient("rate limited").code(), Some("TRANSIENT"));
    /// ```
    pub fn transient(message: impl Into<String>) -> Self {
        Self::coded("TransientError", codes::TRANSIENT, message)
    }

    /// A plain error (no routable info).
    pub fn new(message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
            info: None,
        }
    }

    /// A routable error with `{name, code}`.
    pub fn coded(
        name: impl Into<String>,
        code: impl Into<String>,
        message: impl Into<String>,
    ) -> Self {
        Self {
            message: message.into(),
            info: Some(ErrorInfo {
                name: name.into(),
                code: code.into(),
            }),
        }
    }

    /// Any error's message, without routable info.
    pub fn from_error(error: &(dyn std::error::Error + '_)) -> Self {
        Self::new(error.to_string())
    }

    /// The message.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// `{name, code}` of a routable error.
    pub fn info(&self) -> Option<&ErrorInfo> {
        self.info.as_ref()
    }

    /// The code of a routable error.
    pub fn code(&self) -> Option<&str> {
        self.info.as_ref().map(|i| i.code.as_str())
    }

    /// `unknown tool "<name>"` (`ToolNotFoundError` / `UNKNOWN_TOOL`).
    pub fn unknown_tool(name: &str) -> Self {
        Self::coded(
            "ToolNotFoundError",
            codes::UNKNOWN_TOOL,
            format!("unknown tool \"{name}\""),
        )
    }

    /// `tool call aborted before dispatch` (`AbortError` / `ABORTED_BEFORE_DISPATCH`).
    pub fn aborted_before_dispatch() -> Self {
        Self::coded(
            "AbortError",
            codes::ABORTED_BEFORE_DISPATCH,
            "tool call aborted before dispatch",
        )
    }

    /// `tool call aborted` (`AbortError` / `ABORTED`).
    pub fn aborted() -> Self {
        Self::coded("AbortError", codes::ABORTED, "tool call aborted")
    }

    /// `tool call timed out after <ms>ms` (`ToolTimeoutError` / `TOOL_TIMEOUT`); fractional
    /// milliseconds are written as decimals (`0.5ms`).
    pub fn timeout(after: std::time::Duration) -> Self {
        let nanos = after.as_nanos();
        let ms = if nanos.is_multiple_of(1_000_000) {
            (nanos / 1_000_000).to_string()
        } else {
            let text = format!("{:.6}", nanos as f64 / 1e6);
            text.trim_end_matches('0').to_owned()
        };
        Self::coded(
            "ToolTimeoutError",
            codes::TOOL_TIMEOUT,
            format!("tool call timed out after {ms}ms"),
        )
    }

    /// The error a caught panic becomes ([`from_panic`](Self::from_panic)), consuming the
    /// payload: it is dropped here, and a payload whose own `Drop` panics is contained (its
    /// second payload is leaked rather than risk a loop), so nothing unwinds out.
    pub fn from_panic_payload(payload: Box<dyn std::any::Any + Send>) -> Self {
        let error = Self::from_panic(&*payload);
        drop_panic_payload(payload);
        error
    }

    /// The error a panic becomes: its `&str` / `String` payload, else
    /// `<unprintable thrown value>` (spec §6.9.3).
    pub fn from_panic(payload: &(dyn std::any::Any + Send)) -> Self {
        let message = payload
            .downcast_ref::<&str>()
            .map(|s| (*s).to_owned())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "<unprintable thrown value>".to_owned());
        Self::new(message)
    }
}

/// Drops a caught panic's payload without letting a panicking `Drop` unwind further.
pub(crate) fn drop_panic_payload(payload: Box<dyn std::any::Any + Send>) {
    if let Err(again) =
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(move || drop(payload)))
    {
        // The payload's `Drop` panicked; the new payload might do the same when dropped.
        std::mem::forget(again);
    }
}

impl From<JsonSchemaError> for ToolError {
    fn from(e: JsonSchemaError) -> Self {
        Self::coded("JsonSchemaError", e.code(), e.to_string())
    }
}

impl From<ToolArgsError> for ToolError {
    fn from(e: ToolArgsError) -> Self {
        Self::coded("ToolArgsError", e.code(), e.to_string())
    }
}

impl From<ToolOutputError> for ToolError {
    fn from(e: ToolOutputError) -> Self {
        Self::coded("ToolOutputError", e.code(), e.to_string())
    }
}

impl From<crate::content::InvalidMedia> for ToolError {
    fn from(e: crate::content::InvalidMedia) -> Self {
        Self::coded("InvalidMedia", "INVALID_MEDIA", e.to_string())
    }
}

impl From<String> for ToolError {
    fn from(message: String) -> Self {
        Self::new(message)
    }
}

impl From<&str> for ToolError {
    fn from(message: &str) -> Self {
        Self::new(message)
    }
}

impl From<std::io::Error> for ToolError {
    fn from(e: std::io::Error) -> Self {
        Self::new(e.to_string())
    }
}

/// The routable info of the first `ToolError` in `error`'s chain of sources, `error` included.
fn info_in_chain(error: &(dyn std::error::Error + 'static)) -> Option<ErrorInfo> {
    let mut next = Some(error);
    // A chain is finite unless a source cycles; bounded either way.
    for _ in 0..64 {
        let current = next?;
        if let Some(tool) = current.downcast_ref::<ToolError>()
            && tool.info.is_some()
        {
            return tool.info.clone();
        }
        next = current.source();
    }
    None
}

/// A boxed error (`Box<dyn Error + Send + Sync>`, what `?` on mixed error types gives): a boxed
/// `ToolError` comes back as itself (its code kept, so [`wrappers::retry`](crate::wrappers::retry)
/// still sees a transient failure); any other error gives its message, with the code of a
/// `ToolError` among its sources.
///
/// ```
/// use dsh_tools::ToolError;
///
/// let boxed: Box<dyn std::error::Error + Send + Sync> = Box::new(ToolError::transient("busy"));
/// assert_eq!(ToolError::from(boxed).code(), Some("TRANSIENT"));
/// ```
impl From<Box<dyn std::error::Error + Send + Sync>> for ToolError {
    fn from(e: Box<dyn std::error::Error + Send + Sync>) -> Self {
        match e.downcast::<ToolError>() {
            Ok(tool) => *tool,
            Err(e) => Self {
                message: e.to_string(),
                info: info_in_chain(&*e),
            },
        }
    }
}

/// `anyhow::Error` (feature `anyhow`): a `ToolError` comes back as itself; with context added
/// (`.context("reading config")`) the message is the chain (`{:#}`: `reading config: permission
/// denied`) and the code is the first `ToolError`'s in the chain, so a transient failure stays
/// transient.
///
/// ```
/// # #[cfg(feature = "anyhow")] {
/// use anyhow::Context;
/// use dsh_tools::ToolError;
///
/// let plain = anyhow::Error::from(ToolError::transient("rate limited"));
/// assert_eq!(ToolError::from(plain).code(), Some("TRANSIENT"));
/// let with_context = Err::<(), _>(ToolError::transient("rate limited")).context("fetching").unwrap_err();
/// let error = ToolError::from(with_context);
/// assert_eq!((error.message(), error.code()), ("fetching: rate limited", Some("TRANSIENT")));
/// # }
/// ```
#[cfg(feature = "anyhow")]
impl From<anyhow::Error> for ToolError {
    fn from(e: anyhow::Error) -> Self {
        // Alone (no context around it), a `ToolError` is returned as it was; `downcast` would
        // also see through a context, whose message must stay.
        let e = if e.chain().nth(1).is_none() {
            match e.downcast::<ToolError>() {
                Ok(tool) => return tool,
                Err(e) => e,
            }
        } else {
            e
        };
        let info = e
            .chain()
            .take(64)
            .filter_map(|c| c.downcast_ref::<ToolError>())
            .find_map(|t| t.info.clone());
        Self {
            message: format!("{e:#}"),
            info,
        }
    }
}

impl From<serde_json::Error> for ToolError {
    fn from(e: serde_json::Error) -> Self {
        Self::new(e.to_string())
    }
}

//! What a tool body reaches of the registry through its [`ToolRunContext`] (defined in the
//! call layer, which cannot name the registry: the context holds its state type-erased).

use super::{Inner, Registry};
use crate::call::ToolRunContext;
use serde_json::Value;
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

impl ToolRunContext {
    /// A context for calling a tool's function directly in a unit test: call `name` with
    /// `arguments`, cancelled when `signal` is, in an empty registry of its own (nested calls
    /// through [`nested`](Self::nested) find no tool). [`testing::call`](crate::testing::call)
    /// runs a whole tool instead (validation, decode, body, output check).
    ///
    /// ```
    /// use dsh_tools::{CancellationToken, ToolRunContext};
    /// use serde_json::json;
    ///
    /// let signal = CancellationToken::new();
    /// let ctx = ToolRunContext::for_test("read_file", json!({"path": "/a"}), signal.clone());
    /// assert_eq!(ctx.execution().name(), "read_file");
    /// assert!(!ctx.is_cancelled());
    /// signal.cancel();
    /// assert!(ctx.is_cancelled());
    /// ```
    pub fn for_test(name: &str, arguments: Value, signal: CancellationToken) -> Self {
        Self::for_test_in(name, arguments, signal, Registry::new().inner)
    }

    /// The registry running this call, for nested calls (build their input with
    /// [`nested`](Self::nested)): a handle on the same registry (a cheap clone).
    pub fn registry(&self) -> Registry {
        match Arc::clone(&self.host).downcast::<Inner>() {
            Ok(inner) => Registry { inner },
            // Only the registry builds contexts: this is never reached.
            Err(_) => Registry::new(),
        }
    }
}

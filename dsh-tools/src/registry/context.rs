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

    /// Asks the person whether this call may go on, while it runs: what an imported MCP
    /// tool does when its server asks, or any body that finds something it wants confirmed
    /// ("the file changed since you read it: overwrite?"). The approval service of the call's
    /// scope is asked, with `reason`. Grants neither answer it nor are made by it (a grant is
    /// about a tool's calls; a question asked during one may be about anything): "always" is
    /// taken as once. Edited arguments are not offered (an edit is taken as a rejection). A call
    /// without an agent, or a scope without a service, gets
    /// [`ApprovalOutcome::Unavailable`](crate::ApprovalOutcome::Unavailable).
    ///
    /// ```
    /// use dsh_tools::{ApprovalOutcome, ApprovalRequest, CancellationToken, OutputDecl};
    /// use dsh_tools::{Registry, ToolDefinition, ToolError, ToolExecutionInput, ToolRunContext};
    /// use serde_json::json;
    ///
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// let registry = Registry::new();
    /// registry.set_approval_service(|r: ApprovalRequest| async move {
    ///     assert_eq!(r.reason.as_deref(), Some("the file changed: overwrite?"));
    ///     Ok::<_, ToolError>(ApprovalOutcome::Rejected)
    /// });
    /// let save = ToolDefinition::new("save", "Saves.", json!({"type": "object"}), OutputDecl::text(),
    ///     |_, ctx: ToolRunContext| async move {
    ///         let asked = ctx.request_approval(Some("the file changed: overwrite?".into())).await?;
    ///         Ok(json!(if asked == ApprovalOutcome::AllowedOnce { "saved" } else { "kept" }))
    ///     });
    /// registry.register(save).unwrap().keep();
    /// let input = ToolExecutionInput::new("c1", "save", json!({}), CancellationToken::new()).agent("coder");
    /// assert_eq!(registry.execute(input).await.text(), "kept");
    /// # });
    /// ```
    pub async fn request_approval(
        &self,
        reason: Option<String>,
    ) -> Result<crate::call::ApprovalOutcome, crate::error::ToolError> {
        self.registry().ask_during(self.execution(), reason).await
    }
}

//! Approvals asked while a call runs: a body (an imported MCP tool whose server asks, or any
//! body that finds something it wants a person to confirm) asks the person its call's scope
//! would ask, through the approval service a pre-execute `ask` goes to (never through grants:
//! a grant is about a tool's calls, and a question asked during one may be about anything).

use crate::call::{ApprovalOutcome, ApprovalRequest, ToolExecution};
use crate::error::ToolError;
use crate::registry::Registry;

/// The longest reason passed on to the approval service, in characters.
const MAX_REASON: usize = 2_000;

impl Registry {
    /// Asks whether `exec` may go on: the approval service of the call's scope, with `reason`.
    /// A question asked during a call is about more than the call's tool (a remote server's
    /// question may be anything), so grants neither answer it nor are made by it: "always" is
    /// taken as once. Edits are not offered (the call is under way): an edit is taken as a
    /// rejection. Without an agent or a service the answer is
    /// [`ApprovalOutcome::Unavailable`].
    pub(crate) async fn ask_during(
        &self,
        exec: &ToolExecution,
        reason: Option<String>,
    ) -> Result<ApprovalOutcome, ToolError> {
        let name = exec.name();
        let Some(agent) = exec.agent() else {
            return Ok(ApprovalOutcome::Unavailable);
        };
        let service = {
            let state = self.read();
            let chain = state.chain(Some(agent));
            state.admitted(&chain).approval.clone()
        };
        let Some(service) = service else {
            return Ok(ApprovalOutcome::Unavailable);
        };
        let request = ApprovalRequest {
            agent: agent.clone(),
            tool_name: name.to_owned(),
            call_id: exec.call_id().to_owned(),
            arguments: exec.arguments_arc().cloned(),
            reason: reason.map(|r| r.chars().take(MAX_REASON).collect()),
            // No key: nothing is remembered, so the service offers no "always".
            grant: None,
            editable: false,
            signal: exec.signal().clone(),
        };
        let outcome = crate::call::contained(move || service.request(request)).await?;
        Ok(match outcome {
            ApprovalOutcome::AllowedAlways(_) => ApprovalOutcome::AllowedOnce,
            ApprovalOutcome::RejectedAlways(_) => ApprovalOutcome::Rejected,
            ApprovalOutcome::AllowedWithArgs(edited) => {
                tracing::warn!(
                    "the approval asked during tool \"{name}\" edited its arguments, which a \
                     call under way cannot take; taken as a rejection"
                );
                crate::json::free(edited);
                ApprovalOutcome::Rejected
            }
            other => other,
        })
    }
}

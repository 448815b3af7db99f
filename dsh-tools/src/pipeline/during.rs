//! Approvals asked while a call runs: a body (an imported MCP tool whose server asks, or any
//! body that finds something it wants a person to confirm) asks the person its call's scope
//! would ask, through the same grants and approval service as a pre-execute `ask`.

use super::{ApprovalOutcome, ApprovalRequest, GrantDecision, GrantPolicy, ToolExecution};
use crate::error::ToolError;
use crate::registry::Registry;

/// The longest reason passed on to the approval service, in characters.
const MAX_REASON: usize = 2_000;

impl Registry {
    /// Asks whether `exec` may go on: a grant that covers the call answers first (a rejection
    /// winning), then the approval service of the call's scope. Edits are not offered (the
    /// call is under way): an edit is taken as a rejection. "Always" answers are kept as
    /// grants, as for a pre-execute `ask`. Without an agent or a service the answer is
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
        let null = serde_json::Value::Null;
        let arguments = exec.arguments().unwrap_or(&null);
        let definition = self.get(name, Some(agent));
        let policy = definition
            .as_ref()
            .map_or(GrantPolicy::Never, |t| t.definition().grant_policy.clone());
        if policy != GrantPolicy::Never {
            match self
                .inner
                .grants
                .answer(name, Some(agent), exec.caller(), arguments)
            {
                Some(GrantDecision::Allow) => return Ok(ApprovalOutcome::AllowedOnce),
                Some(GrantDecision::Reject) => return Ok(ApprovalOutcome::Rejected),
                None => {}
            }
        }
        let service = {
            let state = self.read();
            let chain = state.chain(Some(agent));
            state.admitted(&chain).approval.clone()
        };
        let Some(service) = service else {
            return Ok(ApprovalOutcome::Unavailable);
        };
        let grant = policy.key_for(name, Some(agent), exec.caller(), arguments);
        let request = ApprovalRequest {
            agent: agent.clone(),
            tool_name: name.to_owned(),
            call_id: exec.call_id().to_owned(),
            arguments: exec.arguments_arc().cloned(),
            reason: reason.map(|r| r.chars().take(MAX_REASON).collect()),
            grant: grant.clone(),
            editable: false,
            signal: exec.signal().clone(),
        };
        let outcome = crate::call::contained(move || service.request(request)).await?;
        Ok(match outcome {
            ApprovalOutcome::AllowedAlways(key) => {
                self.remember(name, Some(agent), grant.as_ref(), key, GrantDecision::Allow);
                ApprovalOutcome::AllowedOnce
            }
            ApprovalOutcome::RejectedAlways(key) => {
                self.remember(
                    name,
                    Some(agent),
                    grant.as_ref(),
                    key,
                    GrantDecision::Reject,
                );
                ApprovalOutcome::Rejected
            }
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

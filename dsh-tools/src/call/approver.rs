//! A call's own approval channel: asked in place of its scope's approval service, and able to
//! suspend the call at its `ask` (the MCP server's elicitation, in both eras). Only the MCP
//! server makes one, so without feature `mcp` nothing here is used.
#![cfg_attr(not(feature = "mcp"), allow(dead_code))]

use super::{ApprovalOutcome, BoxFuture, GrantKey, Signal};
use crate::error::ToolError;
use serde_json::Value;
use std::sync::Arc;

/// A call's own approval channel, asked in place of its scope's [`ApprovalService`](super::ApprovalService) and
/// routing the call's `ask` even without an agent: the MCP server gives one to each call of a
/// client that can elicit (the session that made the call is the route).
pub(crate) trait CallApprover: Send + Sync + 'static {
    /// Answers the call's `ask`, or suspends the call ([`Asked::Suspend`]).
    fn ask(&self, ask: CallAsk) -> BoxFuture<Result<Asked, ToolError>>;
}

/// A call's [`CallApprover`] (a handle; `Debug` names it only).
#[derive(Clone)]
pub(crate) struct CallApproval(pub(crate) Arc<dyn CallApprover>);

impl std::fmt::Debug for CallApproval {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("CallApproval")
    }
}

/// What a [`CallApprover`] is asked: [`ApprovalRequest`](super::ApprovalRequest) without the agent (a call may have
/// none) or the call id.
pub(crate) struct CallAsk {
    pub(crate) tool_name: String,
    pub(crate) arguments: Option<Arc<Value>>,
    pub(crate) reason: Option<String>,
    pub(crate) grant: Option<GrantKey>,
    pub(crate) editable: bool,
    pub(crate) signal: Signal,
}

/// A [`CallApprover`]'s answer.
pub(crate) enum Asked {
    /// Apply this outcome, as if the scope's service had given it.
    Answer(ApprovalOutcome),
    /// Stop the call here: it settles as suspended (no later stage runs, no observer sees it),
    /// to be asked again with the answer at hand (an MCP `input_required` round).
    Suspend,
}

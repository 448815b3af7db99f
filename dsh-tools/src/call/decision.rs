//! Closed decision types: a deny always has a reason, an approval outcome is one of four.

use super::execution::AgentId;
use super::future::BoxFuture;
use super::grant::GrantKey;
use crate::content::{ContentBlock, UserMessage};
use crate::error::ToolError;
use serde_json::Value;
use std::sync::Arc;

/// What a `pre-execute` hook decides (spec §6.1).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PreToolDecision {
    /// Go on (guards still run).
    Allow,
    /// Refuse with a reason the model reads as `Error: <reason>`.
    Deny {
        /// Why.
        reason: String,
    },
    /// Ask the approval service (no service, or no agent: deny).
    Ask {
        /// Why approval is needed (passed on to the service).
        reason: Option<String>,
    },
}

impl PreToolDecision {
    /// `Deny` with `reason`.
    pub fn deny(reason: impl Into<String>) -> Self {
        Self::Deny {
            reason: reason.into(),
        }
    }

    /// `Ask` with an optional reason (`ask(Some("writes outside the workspace"))`; without
    /// one, [`ask_user`](Self::ask_user) reads better than `ask(None::<String>)`).
    pub fn ask(reason: Option<impl Into<String>>) -> Self {
        Self::Ask {
            reason: reason.map(Into::into),
        }
    }

    /// `Ask` without a reason.
    ///
    /// ```
    /// use dsh_tools::PreToolDecision;
    /// assert_eq!(PreToolDecision::ask_user(), PreToolDecision::Ask { reason: None });
    /// ```
    pub fn ask_user() -> Self {
        Self::Ask { reason: None }
    }
}

/// What a `post-execute` hook decides (spec §6.1, §6.7).
#[derive(Clone, Debug, PartialEq)]
pub enum PostToolDecision {
    /// Keep the result, optionally replacing its content *or* its value (not both: that is an
    /// error), and attach contexts.
    Accept {
        /// Replacement content (keeps the outcome, value and meta).
        content: Option<Vec<ContentBlock>>,
        /// Replacement value (successes only; revalidated and re-rendered).
        value: Option<Value>,
        /// Contexts appended after the result's own.
        additional_contexts: Vec<UserMessage>,
    },
    /// Turn the result into a failure whose content is `feedback`, verbatim.
    Block {
        /// What the model reads instead.
        feedback: Vec<ContentBlock>,
        /// The only contexts the blocked result keeps.
        additional_contexts: Vec<UserMessage>,
    },
}

impl PostToolDecision {
    /// Accept as is.
    pub fn accept() -> Self {
        Self::Accept {
            content: None,
            value: None,
            additional_contexts: Vec::new(),
        }
    }

    /// Accept with other content.
    pub fn replace_content(content: Vec<ContentBlock>) -> Self {
        Self::Accept {
            content: Some(content),
            value: None,
            additional_contexts: Vec::new(),
        }
    }

    /// Accept with another value (revalidated against the output schema and re-rendered).
    pub fn replace_value(value: Value) -> Self {
        Self::Accept {
            content: None,
            value: Some(value),
            additional_contexts: Vec::new(),
        }
    }

    /// Block with feedback for the model.
    pub fn block(feedback: Vec<ContentBlock>) -> Self {
        Self::Block {
            feedback,
            additional_contexts: Vec::new(),
        }
    }

    /// The same decision with these contexts appended.
    pub fn with_contexts(mut self, contexts: impl IntoIterator<Item = UserMessage>) -> Self {
        match &mut self {
            Self::Accept {
                additional_contexts,
                ..
            }
            | Self::Block {
                additional_contexts,
                ..
            } => additional_contexts.extend(contexts),
        }
        self
    }

    /// The decision's contexts.
    pub fn contexts(&self) -> &[UserMessage] {
        match self {
            Self::Accept {
                additional_contexts,
                ..
            }
            | Self::Block {
                additional_contexts,
                ..
            } => additional_contexts,
        }
    }

    /// The same decision with `contexts` in front of its own.
    pub fn with_contexts_first(mut self, contexts: Vec<UserMessage>) -> Self {
        match &mut self {
            Self::Accept {
                additional_contexts,
                ..
            }
            | Self::Block {
                additional_contexts,
                ..
            } => {
                let own = std::mem::replace(additional_contexts, contexts);
                additional_contexts.extend(own);
            }
        }
        self
    }
}

/// What the approval service answered (spec §6.4, and three answers beyond it: remembered
/// ones and edited arguments).
///
/// Whatever the answer, guards still run before the body: an approval never widens what a
/// guard or a restriction forbids.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ApprovalOutcome {
    /// Run this call.
    AllowedOnce,
    /// The user said no.
    Rejected,
    /// The user said no, and why: the model reads
    /// `the user rejected tool "<name>": <why>` (the reason bounded to 1,000 characters).
    RejectedBecause(String),
    /// The request was cancelled.
    Cancelled,
    /// No channel could ask the user.
    Unavailable,
    /// Run this call, and every later call the key covers without asking: the key given, or
    /// `None` for the request's own [`grant`](ApprovalRequest::grant) (when the tool allows
    /// none, the answer holds for this call only; a key the service chooses is kept only for
    /// this tool and this agent, or every agent). Kept in the registry's grants
    /// ([`Registry::grants`](crate::Registry::grants)); a grant answers every later `ask` it
    /// covers, whatever that ask's reason.
    AllowedAlways(Option<GrantKey>),
    /// Refuse this call, and every later call the key covers without asking (as
    /// [`AllowedAlways`](Self::AllowedAlways)).
    RejectedAlways(Option<GrantKey>),
    /// Run this call with these arguments instead ("yes, but write to `b.txt`"): validated
    /// again against the tool's parameters (`INVALID_ARGS`, saying the edit was invalid), and
    /// only for a tool that accepts edits
    /// ([`ToolDefinition::editable_arguments`](crate::ToolDefinition::editable_arguments),
    /// [`ApprovalRequest::editable`]). The result carries a context telling the model the
    /// arguments were edited, with the edited arguments in its `source`.
    AllowedWithArgs(Value),
}

/// An approval request (spec §6.4.2).
#[derive(Clone, Debug)]
pub struct ApprovalRequest {
    /// The calling agent.
    pub agent: AgentId,
    /// The tool's name.
    pub tool_name: String,
    /// The call id.
    pub call_id: String,
    /// The call's arguments as the pipeline snapshotted them (absent when the caller's were not
    /// lossless JSON), so the one who approves sees what would run. Beyond spec §6.4.2, which
    /// leaves the service to look the call up: an editor's permission prompt shows the call.
    pub arguments: Option<Arc<Value>>,
    /// The `ask` decision's reason, when it had one.
    pub reason: Option<String>,
    /// The key an [`AllowedAlways`](ApprovalOutcome::AllowedAlways) or
    /// [`RejectedAlways`](ApprovalOutcome::RejectedAlways) answer is remembered under, from the
    /// tool's [`GrantPolicy`](crate::GrantPolicy) (the tool and the agent by default); `None`
    /// when the tool allows no remembered answer (a prompt should not offer one).
    pub grant: Option<GrantKey>,
    /// Whether the tool accepts edited arguments
    /// ([`AllowedWithArgs`](ApprovalOutcome::AllowedWithArgs)).
    pub editable: bool,
    /// The caller's cancellation signal (read-only).
    pub signal: crate::call::Signal,
}

/// Resolves `ask` decisions (a UI prompt, a policy server, …).
pub trait ApprovalService: Send + Sync + 'static {
    /// Answers one request. An `Err` fails the call with its message.
    fn request(&self, request: ApprovalRequest) -> BoxFuture<Result<ApprovalOutcome, ToolError>>;
}

impl<F, Fut> ApprovalService for F
where
    F: Fn(ApprovalRequest) -> Fut + Send + Sync + 'static,
    Fut: std::future::Future<Output = Result<ApprovalOutcome, ToolError>> + Send + 'static,
{
    fn request(&self, request: ApprovalRequest) -> BoxFuture<Result<ApprovalOutcome, ToolError>> {
        Box::pin(self(request))
    }
}

//! Stage 1's approval (spec §6.4, and beyond it): an `ask` answered by a grant, the call's own
//! channel (the MCP client's user), deferral into the approval store, or the scope's approval
//! service; the outcome applied (remembered, edited, refused), edited arguments validated.

use super::{Call, MAX_PENDING_DEPTH, Stage, failure};
use crate::call::{
    AgentId, ApprovalOutcome, ApprovalRequest, Asked, CallApproval, CallAsk, Caller, Grant,
    GrantDecision, GrantKey, GrantPolicy, PendingApproval, PreToolDecision,
};
use crate::content::ContentBlock;
use crate::error::ToolError;
use crate::json::is_lossless;
use crate::registry::Registry;
use tracing::Instrument;

/// What [`Registry::approve`] decided.
pub(super) enum Approval {
    /// A decision (`None`: cancelled after the caller aborted).
    Decided(Option<PreToolDecision>),
    /// Deferred: kept in the store.
    Pending(Box<PendingApproval>),
    /// Suspended by the call's own channel.
    Suspended,
}

/// The longest reason a rejection passes on to the model, in characters.
const MAX_REJECTION_REASON: usize = 1_000;

/// The denial of an `ask` for a call without an agent.
pub(super) fn no_agent(name: &str) -> PreToolDecision {
    PreToolDecision::deny(format!(
        "tool \"{name}\" requires approval, but the call has no agent to route it through"
    ))
}

/// The key an "always" answer to `call` is remembered under, and whether its tool takes edits.
pub(super) fn grant_and_edits(call: &Call, agent: Option<&AgentId>) -> (Option<GrantKey>, bool) {
    let definition = call.executable.as_ref().map(|t| t.definition());
    let null = serde_json::Value::Null;
    let arguments = call.exec.arguments.as_deref().unwrap_or(&null);
    let grant = definition.and_then(|d| {
        d.grant_policy.key_for(
            &call.exec.name,
            agent,
            call.exec.caller.as_deref(),
            arguments,
        )
    });
    (grant, definition.is_some_and(|d| d.editable_arguments))
}

impl Registry {
    /// The stage an `ask` leads to: admitted with the answer's decision, refused, kept for
    /// later ([`Stage::Pending`]) or suspended by the call's own channel.
    pub(super) async fn approve_to_stage(
        &self,
        mut call: Call,
        reason: Option<String>,
        defer: bool,
    ) -> Stage {
        let span = crate::telemetry::approval_span(&call.exec.span, &call.exec.name);
        let approved = self
            .approve(&mut call, reason, defer)
            .instrument(span.clone())
            .await;
        if !span.is_disabled() {
            span.record("dsh_tools.approval.outcome", approval_outcome(&approved));
        }
        match approved {
            Ok(Approval::Decided(Some(decision))) => self.admit(call, decision),
            Ok(Approval::Decided(None)) => {
                Stage::Post(call, failure(ToolError::aborted_before_dispatch()))
            }
            Ok(Approval::Pending(pending)) => Stage::Pending(pending),
            Ok(Approval::Suspended) => Stage::Suspended,
            Err(e) => Stage::Final(call, failure(e)),
        }
    }

    /// Resolves an `ask` (spec §6.4): `Ok(Some(decision))`, `Ok(None)` for a cancelled
    /// approval after the caller aborted, or an error that ends the call. A remembered answer
    /// (a grant that covers the call) answers first; an edited-arguments answer replaces the
    /// call's arguments before the guards see them.
    pub(super) async fn approve(
        &self,
        call: &mut Call,
        reason: Option<String>,
        defer: bool,
    ) -> Result<Approval, ToolError> {
        let name = call.exec.name.clone();
        let rejected = || PreToolDecision::deny(format!("the user rejected tool \"{name}\""));
        match self.remembered(call) {
            Some(GrantDecision::Allow) => {
                return Ok(Approval::Decided(Some(PreToolDecision::Allow)));
            }
            Some(GrantDecision::Reject) => return Ok(Approval::Decided(Some(rejected()))),
            None => {}
        }
        if let Some(approval) = call.approval.clone() {
            return self.ask_own_channel(call, approval, reason).await;
        }
        if defer {
            return self.defer(call, reason).await;
        }
        let Some(service) = call.admitted.approval.clone() else {
            let reason = reason.unwrap_or_else(|| {
                format!("tool \"{name}\" requires approval (not yet supported)")
            });
            return Ok(Approval::Decided(Some(PreToolDecision::Deny { reason })));
        };
        let Some(agent) = call.exec.agent.clone() else {
            return Ok(Approval::Decided(Some(no_agent(&name))));
        };
        let (grant, editable) = grant_and_edits(call, Some(&agent));
        let request = ApprovalRequest {
            agent,
            tool_name: name.clone(),
            call_id: call.exec.call_id.clone(),
            arguments: call.exec.arguments.clone(),
            reason,
            grant: grant.clone(),
            editable,
            signal: call.exec.signal.clone(),
        };
        let outcome = crate::call::contained(move || service.request(request)).await?;
        self.apply_outcome(call, outcome, grant, editable)
            .await
            .map(Approval::Decided)
    }

    /// Asks the call's own channel (the MCP server's elicitation): it may answer without an
    /// agent (the session is the route), or suspend the call.
    pub(super) async fn ask_own_channel(
        &self,
        call: &mut Call,
        approval: CallApproval,
        reason: Option<String>,
    ) -> Result<Approval, ToolError> {
        let (grant, editable) = grant_and_edits(call, call.exec.agent.as_ref());
        // A remembered answer is kept for an agent; a call without one gets none (a key
        // without an agent would answer every agent's calls).
        let grant = grant.filter(|_| call.exec.agent.is_some());
        let ask = CallAsk {
            tool_name: call.exec.name.clone(),
            arguments: call.exec.arguments.clone(),
            reason,
            grant: grant.clone(),
            editable,
            signal: call.exec.signal.clone(),
        };
        match crate::call::contained(move || approval.0.ask(ask)).await? {
            Asked::Answer(outcome) => self
                .apply_outcome(call, outcome, grant, editable)
                .await
                .map(Approval::Decided),
            Asked::Suspend => Ok(Approval::Suspended),
        }
    }

    /// The grant that answers `call`, if any (none for a tool whose policy is
    /// [`GrantPolicy::Never`]: every call of it asks, whatever was granted).
    pub(super) fn remembered(&self, call: &Call) -> Option<GrantDecision> {
        let never = call
            .executable
            .as_ref()
            .is_some_and(|t| t.definition().grant_policy == GrantPolicy::Never);
        if never {
            return None;
        }
        let null = serde_json::Value::Null;
        let arguments = call.exec.arguments.as_deref().unwrap_or(&null);
        self.inner.grants.answer(
            &call.exec.name,
            call.exec.agent.as_ref(),
            call.exec.caller.as_deref(),
            arguments,
        )
    }

    /// Keeps the call's `ask` in the approval store (deferred mode).
    pub(super) async fn defer(
        &self,
        call: &Call,
        reason: Option<String>,
    ) -> Result<Approval, ToolError> {
        let name = &call.exec.name;
        let Some(agent) = call.exec.agent.clone() else {
            return Ok(Approval::Decided(Some(no_agent(name))));
        };
        let (grant, editable) = grant_and_edits(call, Some(&agent));
        let null = serde_json::Value::Null;
        let snapshot = call.exec.arguments.as_deref().unwrap_or(&null);
        if crate::json::deeper_than(snapshot, MAX_PENDING_DEPTH) {
            return Err(ToolError::coded(
                "ApprovalStoreError",
                "APPROVAL_NOT_KEPT",
                format!(
                    "tool \"{name}\" requires approval, and its arguments nest deeper than \
                     {MAX_PENDING_DEPTH} levels, more than a pending approval is kept with"
                ),
            ));
        }
        let pending = PendingApproval {
            id: crate::call::approval_id(),
            call_id: call.exec.call_id.clone(),
            root_call_id: call.exec.root_call_id.clone(),
            tool: name.clone(),
            arguments: call
                .exec
                .arguments
                .as_deref()
                .map(crate::json::clone_deep)
                .unwrap_or_default(),
            reason,
            agent,
            // Who, not what they may do: the answer brings the caller's current token.
            caller: call.exec.caller.as_deref().map(|c| {
                let mut who = Caller::new(c.subject());
                if let Some(issuer) = c.issuer_name() {
                    who = who.issuer(issuer);
                }
                if let Some(client) = c.client() {
                    who = who.client_id(client);
                }
                who
            }),
            grant,
            editable,
            asked_at_ms: crate::call::now_ms(),
            claimed: false,
            program: call.program.clone(),
        };
        let store = self.approval_store();
        match store.put(pending.clone()).await {
            Ok(()) => Ok(Approval::Pending(Box::new(pending))),
            Err(e) => {
                // The write may have happened with its answer lost: what the model is told
                // failed must not wait to be approved.
                if let Err(again) = store.remove(&pending.id).await {
                    tracing::warn!(
                        "approval {}: not kept ({e}), and its removal failed too: {again}",
                        pending.id
                    );
                }
                Err(ToolError::coded(
                    "ApprovalStoreError",
                    "APPROVAL_NOT_KEPT",
                    format!(
                        "tool \"{name}\" requires approval, and it could not be kept for later: {e}"
                    ),
                ))
            }
        }
    }

    /// Applies an approval service's (or a resumed approval's) answer to `call`.
    pub(crate) async fn apply_outcome(
        &self,
        call: &mut Call,
        outcome: ApprovalOutcome,
        grant: Option<GrantKey>,
        editable: bool,
    ) -> Result<Option<PreToolDecision>, ToolError> {
        let name = call.exec.name.clone();
        let rejected = || PreToolDecision::deny(format!("the user rejected tool \"{name}\""));
        let agent = call.exec.agent.clone();
        let remember = |key: Option<GrantKey>, decision: GrantDecision| {
            self.remember(&name, agent.as_ref(), grant.as_ref(), key, decision);
        };
        Ok(Some(match outcome {
            ApprovalOutcome::AllowedOnce => PreToolDecision::Allow,
            ApprovalOutcome::AllowedAlways(key) => {
                remember(key, GrantDecision::Allow);
                PreToolDecision::Allow
            }
            ApprovalOutcome::Rejected => rejected(),
            ApprovalOutcome::RejectedBecause(why) => {
                let why: String = why.chars().take(MAX_REJECTION_REASON).collect();
                let why = why.trim();
                if why.is_empty() {
                    rejected()
                } else {
                    PreToolDecision::deny(format!("the user rejected tool \"{name}\": {why}"))
                }
            }
            ApprovalOutcome::RejectedAlways(key) => {
                remember(key, GrantDecision::Reject);
                rejected()
            }
            ApprovalOutcome::AllowedWithArgs(edited) => {
                if !editable {
                    crate::json::free(edited);
                    return Ok(Some(PreToolDecision::deny(format!(
                        "the approval edited the arguments of tool \"{name}\", which does not \
                         accept edited arguments (ToolDefinition::editable_arguments)"
                    ))));
                }
                self.edit_arguments(call, edited)?;
                // The edit is a new call in all but name: pre-execute and the grants decide
                // again on it (a denial or a remembered rejection wins; an `ask` counts as
                // answered: this answer is about these arguments).
                if self.remembered(call) == Some(GrantDecision::Reject) {
                    return Ok(Some(rejected()));
                }
                match self.pre_execute(call).await? {
                    PreToolDecision::Deny { reason } => PreToolDecision::Deny { reason },
                    PreToolDecision::Allow | PreToolDecision::Ask { .. } => PreToolDecision::Allow,
                }
            }
            ApprovalOutcome::Cancelled if call.exec.signal.is_cancelled() => return Ok(None),
            ApprovalOutcome::Cancelled => {
                PreToolDecision::deny(format!("approval for tool \"{name}\" was cancelled"))
            }
            ApprovalOutcome::Unavailable => PreToolDecision::deny(format!(
                "tool \"{name}\" requires approval, but no approval channel is available"
            )),
        }))
    }

    /// Keeps an "always" answer to a call of `name` by `agent`: under `own` (the key the
    /// tool's policy gives) or a key the service chose. A chosen key is kept only for this
    /// tool, for this agent (or every agent), and never when `own` is `None` (a tool whose
    /// every call asks, a call lacking an argument the policy keys on, a call without an
    /// agent).
    pub(crate) fn remember(
        &self,
        name: &str,
        agent: Option<&AgentId>,
        own: Option<&GrantKey>,
        chosen: Option<GrantKey>,
        decision: GrantDecision,
    ) {
        let key = match (chosen, own) {
            (_, None) => None,
            (None, Some(own)) => Some(own.clone()),
            (Some(chosen), Some(_))
                if chosen.tool == name
                    && chosen.agent.as_ref().is_none_or(|a| agent == Some(a)) =>
            {
                Some(chosen)
            }
            (Some(chosen), Some(_)) => {
                tracing::warn!(
                    "the approval of tool \"{name}\" asked to remember an answer for tool \
                     {:?} and agent {:?}; kept for this call only",
                    chosen.tool,
                    chosen.agent.as_ref().map(ToString::to_string)
                );
                None
            }
        };
        match key {
            Some(key) => {
                self.grant(Grant { key, decision });
            }
            None => tracing::debug!("tool \"{name}\": the approval holds for this call only"),
        }
    }

    /// Runs `call` with the arguments an approval edited: lossless and valid against the
    /// tool's parameters (`INVALID_ARGS` saying the edit was invalid), and a context telling
    /// the model its arguments were edited.
    pub(super) fn edit_arguments(
        &self,
        call: &mut Call,
        edited: serde_json::Value,
    ) -> Result<(), ToolError> {
        let invalid = |detail: String| {
            ToolError::coded(
                "ToolArgsError",
                crate::error::codes::INVALID_ARGS,
                format!("invalid arguments (edited on approval): {detail}"),
            )
        };
        if !is_lossless(&edited) {
            crate::json::free(edited);
            return Err(invalid(
                "the edited arguments are not lossless JSON".to_owned(),
            ));
        }
        if let Some(tool) = &call.executable {
            let definition = tool.definition();
            // A raw definition's parameters are compiled for the check (an edit is rare, and
            // human-paced); ones outside the subset are left to the body, as the model's are.
            let own;
            let compiled = match definition.args_validator() {
                Some(validator) => Some(validator.compiled()),
                None => {
                    own = crate::schema::CompiledSchema::compile(definition.parameters()).ok();
                    own.as_ref()
                }
            };
            if let Some(compiled) = compiled {
                let violations = compiled.validate_at(&edited, crate::schema::Root::Parameters);
                if !violations.is_empty() {
                    crate::json::free(edited);
                    return Err(invalid(violations.join("; ")));
                }
            }
        }
        let mut shown = crate::json::to_compact_string(&edited);
        if shown.len() > 2000 {
            let mut end = 2000;
            while !shown.is_char_boundary(end) {
                end -= 1;
            }
            shown.truncate(end);
            shown.push('…');
        }
        let name = &call.exec.name;
        let context = crate::content::UserMessage::new(
            format!("{}:edited-arguments", call.exec.call_id),
            vec![ContentBlock::text(format!(
                "The user approved this call of tool \"{name}\" with edited arguments: {shown}"
            ))],
            {
                // Built by hand: `json!` would serialize the edit recursively.
                let mut source = serde_json::Map::new();
                source.insert("kind".to_owned(), "approval".into());
                source.insert("tool".to_owned(), name.as_str().into());
                source.insert(
                    "editedArguments".to_owned(),
                    crate::json::clone_deep(&edited),
                );
                serde_json::Value::Object(source)
            },
        );
        call.replace_arguments(edited, context);
        Ok(())
    }
}

/// `dsh_tools.approval.outcome` of an approval span: what the wait ended in.
fn approval_outcome(approved: &Result<Approval, ToolError>) -> &'static str {
    match approved {
        Ok(Approval::Decided(Some(PreToolDecision::Allow))) => "allowed",
        Ok(Approval::Decided(Some(_))) => "denied",
        Ok(Approval::Decided(None)) => "cancelled",
        Ok(Approval::Pending(_)) => "deferred",
        Ok(Approval::Suspended) => "suspended",
        Err(_) => "error",
    }
}

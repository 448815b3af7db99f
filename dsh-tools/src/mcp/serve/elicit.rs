//! Approvals that reach the MCP client's user: an `ask` becomes one form elicitation.
//!
//! - 2025-11-25 sessions get an `elicitation/create` request while the call waits (bounded by
//!   [`ServerApprovals::timeout`], ended by the call's cancellation).
//! - 2026-07-28 requests get an `input_required` result (SEP-2322) carrying the form and a
//!   `requestState` sealed with rmcp's [`RequestStateCodec`]: bound to the tool, a digest of
//!   the arguments, the caller and this server's view, expiring, and answerable once by this
//!   process (the set of answered states is per process: see DESIGN.md). The client retries
//!   the call with the answer; the retry runs the whole pipeline again (pre-execute hooks
//!   included) and its `ask` is answered by the form.
//!
//! The form (both eras): `approve` (required), `remember` when an answer can be kept (the
//! tool's grant policy allows one and the server serves an agent scope), `reason`, and
//! `arguments` (the call's arguments as JSON text, hidden characters escaped, to edit) when the
//! tool accepts edits and the text is short enough to show whole.

use crate::call::{ApprovalOutcome, Asked, CallApproval, CallApprover, CallAsk, Caller};
use crate::error::ToolError;
use crate::present::{escape_hidden, escape_hidden_json};
use rmcp::model::{
    ElicitRequestParams, ElicitResult, ElicitationAction, InputRequest, InputRequests,
    InputRequiredResult, RequestStateCodec, SealOptions,
};
use rmcp::{Peer, RoleServer};
use serde_json::{Value, json};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// The key of the one input request an approval's `input_required` result carries.
pub const APPROVAL_INPUT_KEY: &str = "approval";

/// The longest arguments text the form shows (and the message quotes), in characters.
const MAX_SHOWN_ARGUMENTS: usize = 2_000;

/// How an [`McpServer`](crate::mcp::McpServer) asks its clients' users to approve calls.
///
/// On by default: a call whose pre-execute decision is `ask`, that no grant answers, from a
/// client that declared form elicitation, is put to the client's user. A client that cannot
/// elicit gets what a registry without this gets (the agent scope's approval service, or a
/// denial).
///
/// ```
/// use dsh_tools::mcp::{McpServer, ServerApprovals};
/// use std::time::Duration;
/// # let registry = dsh_tools::Registry::new();
/// // A fleet: every replica seals and opens request states with the same key.
/// let approvals = ServerApprovals::new()
///     .key(b"a key of at least 32 bytes, from your secrets".to_vec())
///     .unwrap()
///     .timeout(Duration::from_secs(120));
/// let server = McpServer::new(registry).approvals(approvals);
/// ```
#[derive(Clone)]
pub struct ServerApprovals {
    pub(crate) enabled: bool,
    pub(crate) codec: Arc<RequestStateCodec>,
    pub(crate) timeout: Duration,
    pub(crate) ttl: Duration,
    pub(crate) answered: Arc<Answered>,
}

impl std::fmt::Debug for ServerApprovals {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServerApprovals")
            .field("enabled", &self.enabled)
            .field("timeout", &self.timeout)
            .field("ttl", &self.ttl)
            .finish_non_exhaustive()
    }
}

impl Default for ServerApprovals {
    fn default() -> Self {
        Self::new()
    }
}

/// Why a [`ServerApprovals`] setting was refused.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ApprovalsConfigError {
    /// rmcp's request-state codec refused the key (shorter than 32 bytes).
    #[error("MCP approvals: the request-state key: {0}")]
    Key(#[source] rmcp::model::RequestStateError),
}

impl ServerApprovals {
    /// The longest an answer waits by default (a 2025-11-25 elicitation) and a 2026-07-28
    /// request state stays answerable: 5 minutes.
    pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(300);

    /// The most answered request states remembered at once (to refuse their replay until they
    /// expire); past it, answers are refused until some expire.
    pub const MAX_ANSWERED: usize = 100_000;

    /// Elicitation on, with a random key for this process (request states do not survive a
    /// restart, nor open on another replica: give a fleet one [`key`](Self::key)).
    pub fn new() -> Self {
        let mut key = [0u8; 32];
        if getrandom::fill(&mut key).is_err() {
            // No OS randomness: a key from the approval ids' fallback.
            let fallback = format!(
                "{}{}",
                crate::call::approval_id(),
                crate::call::approval_id()
            );
            key.copy_from_slice(&fallback.as_bytes()[..32]);
        }
        Self {
            enabled: true,
            codec: Arc::new(RequestStateCodec::new_unchecked(key.to_vec())),
            timeout: Self::DEFAULT_TIMEOUT,
            ttl: Self::DEFAULT_TIMEOUT,
            answered: Arc::new(Answered::new(Self::MAX_ANSWERED)),
        }
    }

    /// Never elicits: every `ask` goes where it would without MCP approvals.
    pub fn disabled() -> Self {
        Self {
            enabled: false,
            ..Self::new()
        }
    }

    /// Seals and opens 2026-07-28 request states with `key` (at least 32 bytes): the same key
    /// on every replica of a fleet, kept across restarts.
    pub fn key(mut self, key: impl Into<Vec<u8>>) -> Result<Self, ApprovalsConfigError> {
        let codec = RequestStateCodec::try_new(key).map_err(ApprovalsConfigError::Key)?;
        self.codec = Arc::new(codec);
        Ok(self)
    }

    /// How long a 2025-11-25 client has to answer, and a 2026-07-28 request state stays
    /// answerable (at least one second).
    pub fn timeout(mut self, timeout: Duration) -> Self {
        let timeout = timeout.max(Duration::from_secs(1));
        self.timeout = timeout;
        self.ttl = timeout;
        self
    }

    /// Whether clients are asked.
    pub fn is_enabled(&self) -> bool {
        self.enabled
    }
}

/// The nonces of request states already answered, until they expire: a replayed state is
/// refused. Bounded: expired entries go first; a full set refuses new answers (fail closed).
pub(crate) struct Answered {
    max: usize,
    seen: Mutex<HashMap<String, Instant>>,
}

impl Answered {
    fn new(max: usize) -> Self {
        Self {
            max,
            seen: Mutex::new(HashMap::new()),
        }
    }

    /// Marks `nonce` answered until `until`: false when it already was (or the set is full).
    fn first_answer(&self, nonce: &str, until: Instant) -> Result<(), String> {
        let mut seen = self.seen.lock().unwrap_or_else(|e| e.into_inner());
        let now = Instant::now();
        if seen.get(nonce).is_some_and(|&t| t > now) {
            return Err("this requestState was answered already (a replay)".to_owned());
        }
        if seen.len() >= self.max {
            seen.retain(|_, &mut t| t > now);
            if seen.len() >= self.max {
                return Err(format!(
                    "more than {} approvals were answered within their lifetime; try again later",
                    self.max
                ));
            }
        }
        seen.insert(nonce.to_owned(), until);
        Ok(())
    }
}

/// What a sealed request state carries (its bindings are associated data, not payload).
#[derive(serde::Serialize, serde::Deserialize)]
struct SealedState {
    /// Answerable once: the replay key.
    nonce: String,
}

/// The bytes a request state is bound to: the tool, the arguments, the caller, the view.
fn binding(tool: &str, arguments: &Value, caller: Option<&Caller>, view: Option<&str>) -> Vec<u8> {
    use sha2::Digest;
    let mut hash = sha2::Sha256::new();
    let mut part = |bytes: &[u8]| {
        hash.update((bytes.len() as u64).to_le_bytes());
        hash.update(bytes);
    };
    part(b"dsh-tools/mcp-approval/v1");
    part(tool.as_bytes());
    // Arguments deeper than serde_json writes are refused before a call gets here.
    part(&serde_json::to_vec(arguments).unwrap_or_default());
    match caller {
        Some(c) => {
            part(c.subject().as_bytes());
            part(c.issuer_name().unwrap_or_default().as_bytes());
            part(c.client().unwrap_or_default().as_bytes());
        }
        None => part(b"\0anonymous"),
    }
    part(view.unwrap_or("\0global").as_bytes());
    hash.finalize().to_vec()
}

/// One call's approval context on the server: who asks, what is bound.
pub(crate) struct CallContext<'a> {
    pub(crate) server: &'a str,
    pub(crate) tool: &'a str,
    pub(crate) arguments: &'a Value,
    pub(crate) caller: Option<&'a Caller>,
    pub(crate) view: Option<&'a str>,
}

impl ServerApprovals {
    /// Seals a request state for this call.
    fn seal(&self, cx: &CallContext<'_>) -> Result<String, ToolError> {
        let ad = binding(cx.tool, cx.arguments, cx.caller, cx.view);
        let state = SealedState {
            nonce: crate::call::approval_id(),
        };
        self.codec
            .seal_json_with(
                &state,
                &SealOptions::new().associated_data(&ad).ttl(self.ttl),
            )
            .map_err(|e| {
                ToolError::coded(
                    "ApprovalError",
                    "APPROVAL_UNAVAILABLE",
                    format!("the approval request could not be sealed: {e}"),
                )
            })
    }

    /// A 2026-07-28 call's approval rounds: the first (no state), or a retry whose state opens
    /// for this call (`cx`) and whose form answer is at hand.
    pub(crate) fn rounds(
        &self,
        state: Option<&str>,
        responses: Option<rmcp::model::InputResponses>,
        cx: &CallContext<'_>,
    ) -> Result<Arc<Rounds>, rmcp::model::ErrorData> {
        let refused = |why: String| {
            rmcp::model::ErrorData::invalid_params(format!("Invalid params: {why}"), None)
        };
        let Some(state) = state else {
            if responses.is_some() {
                return Err(refused(
                    "inputResponses without the requestState they answer".to_owned(),
                ));
            }
            return Ok(Rounds::first());
        };
        self.open(state, cx).map_err(refused)?;
        let Some(answer) = responses.and_then(|mut r| r.remove(APPROVAL_INPUT_KEY)) else {
            return Err(refused(format!(
                "inputResponses carries no {APPROVAL_INPUT_KEY:?} answer for this requestState"
            )));
        };
        let answer: ElicitResult = serde_json::from_value(answer).map_err(|e| {
            refused(format!(
                "the approval answer is not an elicitation result: {e}"
            ))
        })?;
        Ok(Rounds::answered(answer))
    }

    /// Opens a retry's request state: it must be ours, for this very call, unexpired and not
    /// answered before. Consumes it.
    pub(crate) fn open(&self, sealed: &str, cx: &CallContext<'_>) -> Result<(), String> {
        if sealed.len() > 4_096 {
            return Err("requestState is longer than any this server issues".to_owned());
        }
        let ad = binding(cx.tool, cx.arguments, cx.caller, cx.view);
        // One answer for every failure to open (rmcp's codec asks for it: the details would
        // tell a forger which check failed); the detail goes to the log.
        let state: SealedState = self.codec.open_json_with(sealed, &ad).map_err(|e| {
            tracing::debug!("MCP: a requestState was refused: {e}");
            "requestState is not valid for this call (expired, altered, or issued for another \
             tool, arguments or caller): call the tool again to be asked again"
                .to_owned()
        })?;
        self.answered
            .first_answer(&state.nonce, Instant::now() + self.ttl)
    }

    /// The `input_required` result asking `ask`.
    pub(crate) fn input_required(
        &self,
        ask: &CallAsk,
        cx: &CallContext<'_>,
    ) -> Result<InputRequiredResult, ToolError> {
        let state = self.seal(cx)?;
        let request: InputRequest = serde_json::from_value(json!({
            "method": "elicitation/create",
            "params": form_params(ask, cx.server),
        }))
        .map_err(|e| unsealable(&e))?;
        let mut requests = InputRequests::new();
        requests.insert(APPROVAL_INPUT_KEY.to_owned(), request);
        Ok(InputRequiredResult::new(Some(requests), Some(state)))
    }
}

fn unsealable(e: &serde_json::Error) -> ToolError {
    ToolError::coded(
        "ApprovalError",
        "APPROVAL_UNAVAILABLE",
        format!("the approval form could not be written: {e}"),
    )
}

/// The arguments as JSON text (hidden characters escaped), cut to [`MAX_SHOWN_ARGUMENTS`]
/// characters.
fn shown_arguments(arguments: Option<&Value>) -> (String, bool) {
    let text = arguments.map_or_else(|| "{}".to_owned(), Value::to_string);
    let text = escape_hidden_json(&text).into_owned();
    if text.chars().count() <= MAX_SHOWN_ARGUMENTS {
        return (text, false);
    }
    let mut cut: String = text.chars().take(MAX_SHOWN_ARGUMENTS).collect();
    cut.push('…');
    (cut, true)
}

/// The elicitation's params (`message`, `requestedSchema`): one form, in both eras.
fn form_params(ask: &CallAsk, server: &str) -> Value {
    let (arguments, cut) = shown_arguments(ask.arguments.as_deref());
    let tool = &escape_hidden(&ask.tool_name);
    let server = escape_hidden(server);
    let mut message = format!("The MCP server \"{server}\" asks to run tool \"{tool}\"");
    if let Some(reason) = &ask.reason {
        let reason: String = reason.chars().take(500).collect();
        message.push_str(&format!(" ({})", escape_hidden(&reason)));
    }
    message.push_str(&format!(" with arguments {arguments}. Approve?"));
    let mut properties = serde_json::Map::new();
    properties.insert(
        "approve".to_owned(),
        json!({"type": "boolean", "title": "Approve", "description": format!("Run tool \"{tool}\""), "default": false}),
    );
    if ask.grant.is_some() {
        properties.insert(
            "remember".to_owned(),
            json!({"type": "boolean", "title": "Remember", "description": format!("Give the same answer to later calls of \"{tool}\" without asking"), "default": false}),
        );
    }
    properties.insert(
        "reason".to_owned(),
        json!({"type": "string", "title": "Reason", "description": "Why (optional; the model reads it when you decline)", "maxLength": 1000}),
    );
    // Edits need the whole arguments: a cut text could only be an edit.
    if ask.editable && !cut {
        properties.insert(
            "arguments".to_owned(),
            json!({"type": "string", "title": "Arguments (JSON)", "description": "Edit to run the tool with other arguments", "default": arguments}),
        );
    }
    json!({
        "mode": "form",
        "message": message,
        "requestedSchema": {"type": "object", "properties": properties, "required": ["approve"]},
    })
}

/// The outcome a form answer gives.
pub(crate) fn outcome(
    action: &ElicitationAction,
    content: Option<&Value>,
    ask: &CallAsk,
) -> Result<ApprovalOutcome, ToolError> {
    let content = match action {
        ElicitationAction::Decline => return Ok(ApprovalOutcome::Rejected),
        ElicitationAction::Cancel => return Ok(ApprovalOutcome::Cancelled),
        ElicitationAction::Accept => content,
        _ => return Ok(ApprovalOutcome::Cancelled),
    };
    let invalid = |why: &str| {
        ToolError::coded(
            "ApprovalError",
            "APPROVAL_ANSWER_INVALID",
            format!(
                "the approval of tool \"{}\" came back malformed: {why}",
                ask.tool_name
            ),
        )
    };
    let Some(Value::Object(form)) = content else {
        return Err(invalid("an accepted form carries no object"));
    };
    let Some(Value::Bool(approve)) = form.get("approve") else {
        return Err(invalid("`approve` is not a boolean"));
    };
    let remember = match form.get("remember") {
        None | Some(Value::Null) => false,
        Some(Value::Bool(b)) => *b && ask.grant.is_some(),
        Some(_) => return Err(invalid("`remember` is not a boolean")),
    };
    let reason = match form.get("reason") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) if s.trim().is_empty() => None,
        Some(Value::String(s)) => Some(s.clone()),
        Some(_) => return Err(invalid("`reason` is not a string")),
    };
    if !approve {
        return Ok(match (remember, reason) {
            (true, _) => ApprovalOutcome::RejectedAlways(None),
            (false, Some(why)) => ApprovalOutcome::RejectedBecause(why),
            (false, None) => ApprovalOutcome::Rejected,
        });
    }
    let edited = match form.get("arguments") {
        None | Some(Value::Null) => None,
        Some(Value::String(text)) => {
            let parsed: Value = serde_json::from_str(text).map_err(|e| {
                ToolError::coded(
                    "ToolArgsError",
                    crate::error::codes::INVALID_ARGS,
                    format!("invalid arguments (edited on approval): not JSON ({e})"),
                )
            })?;
            let same = ask.arguments.as_deref().is_some_and(|a| *a == parsed);
            if same {
                crate::json::free(parsed);
                None
            } else {
                Some(parsed)
            }
        }
        Some(_) => return Err(invalid("`arguments` is not a string")),
    };
    Ok(match (edited, remember) {
        (Some(args), _) => ApprovalOutcome::AllowedWithArgs(args),
        (None, true) => ApprovalOutcome::AllowedAlways(None),
        (None, false) => ApprovalOutcome::AllowedOnce,
    })
}

/// A 2026-07-28 call's channel: suspends at the ask (first round) or answers from the
/// retry's form.
pub(crate) struct Rounds {
    /// The retry's answer (none: first round).
    answer: Option<ElicitResult>,
    /// The ask that suspended the call.
    asked: Mutex<Option<CallAsk>>,
}

impl Rounds {
    pub(crate) fn first() -> Arc<Self> {
        Arc::new(Self {
            answer: None,
            asked: Mutex::new(None),
        })
    }

    pub(crate) fn answered(answer: ElicitResult) -> Arc<Self> {
        Arc::new(Self {
            answer: Some(answer),
            asked: Mutex::new(None),
        })
    }

    pub(crate) fn channel(self: &Arc<Self>) -> CallApproval {
        CallApproval(Arc::clone(self) as Arc<dyn CallApprover>)
    }

    /// The ask that suspended the call, once.
    pub(crate) fn take_ask(&self) -> Option<CallAsk> {
        self.asked.lock().unwrap_or_else(|e| e.into_inner()).take()
    }
}

impl CallApprover for Rounds {
    fn ask(&self, ask: CallAsk) -> crate::call::BoxFuture<Result<Asked, ToolError>> {
        let answered = match &self.answer {
            Some(answer) => {
                outcome(&answer.action, answer.content.as_ref(), &ask).map(Asked::Answer)
            }
            None => {
                *self.asked.lock().unwrap_or_else(|e| e.into_inner()) = Some(ask);
                Ok(Asked::Suspend)
            }
        };
        Box::pin(async move { answered })
    }
}

/// A 2025-11-25 session's channel: `elicitation/create`, waiting (bounded, cancellable).
pub(crate) struct Elicit {
    pub(crate) peer: Peer<RoleServer>,
    pub(crate) server: String,
    pub(crate) timeout: Duration,
}

impl CallApprover for Elicit {
    fn ask(&self, ask: CallAsk) -> crate::call::BoxFuture<Result<Asked, ToolError>> {
        let peer = self.peer.clone();
        let params = form_params(&ask, &self.server);
        let timeout = self.timeout;
        Box::pin(async move {
            let params: ElicitRequestParams =
                serde_json::from_value(params).map_err(|e| unsealable(&e))?;
            let tool = ask.tool_name.clone();
            let answer = tokio::select! {
                biased;
                () = ask.signal.cancelled() => return Ok(Asked::Answer(ApprovalOutcome::Cancelled)),
                answer = peer.create_elicitation_with_timeout(params, Some(timeout)) => answer,
            };
            match answer {
                Ok(result) => {
                    outcome(&result.action, result.content.as_ref(), &ask).map(Asked::Answer)
                }
                Err(rmcp::ServiceError::Timeout { .. }) => Err(ToolError::coded(
                    "ApprovalError",
                    "APPROVAL_TIMEOUT",
                    format!(
                        "tool \"{tool}\" requires approval, and the client did not answer within {} s",
                        timeout.as_secs()
                    ),
                )),
                Err(e) => {
                    tracing::debug!("MCP: the client did not take the approval of {tool:?}: {e}");
                    Ok(Asked::Answer(ApprovalOutcome::Unavailable))
                }
            }
        })
    }
}

/// Whether capabilities declare form elicitation (an empty `elicitation` object means form).
pub(crate) fn can_elicit(caps: Option<&rmcp::model::ClientCapabilities>) -> bool {
    caps.and_then(|c| c.elicitation.as_ref())
        .is_some_and(|e| e.form.is_some() || e.url.is_none())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hidden_characters_are_escaped_in_the_form_and_the_value_is_unchanged() {
        let arguments = json!({"path": "notes\u{202e}txt.sh", "tag": "a\u{e0041}b"});
        let (text, cut) = shown_arguments(Some(&arguments));
        assert!(!cut);
        assert!(text.contains("notes\\u202etxt.sh"), "{text}");
        assert!(!text.chars().any(crate::present::is_hidden_char), "{text}");
        let back: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(back, arguments, "an unedited form gives the same arguments");
    }
}

//! An imported server that asks: its form elicitation (a 2025-11-25 `elicitation/create`
//! during the call, or a 2026-07-28 `input_required` result) is put to *our* person, through
//! the calling scope's grants and approval service
//! ([`ToolRunContext::request_approval`]), and the answer goes back as the form's.
//!
//! An approval answers a yes/no question, so only forms an approval can fill are asked: each
//! required property must be a boolean (set to `true` on approval) or carry a default
//! (kept); optional properties are left out. Anything else (a required free-text field, a URL
//! elicitation, sampling, roots) is not put to the person: it is answered `cancel`, and the
//! remote server decides what that means.

use crate::call::{ApprovalOutcome, ToolRunContext};
use crate::error::ToolError;
use rmcp::model::{ElicitRequestParams, ElicitResult, ElicitationAction, InputRequest};
use rmcp::model::{ProgressNotificationParam, ProgressToken};
use serde_json::{Map, Value};
use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

/// The longest part of a server's message quoted to the person, in characters.
const MAX_MESSAGE: usize = 1_000;

/// The most questions of one 2026-07-28 round put to the person (the rest: `cancel`).
const MAX_QUESTIONS_PER_ROUND: usize = 4;

/// A `cancel` answer, as an input response.
fn cancelled() -> Value {
    serde_json::json!({"action": "cancel"})
}

/// The content accepting `params` on approval, if an approval can fill it.
fn approving_content(params: &ElicitRequestParams) -> Option<Value> {
    let ElicitRequestParams::FormElicitationParams {
        requested_schema, ..
    } = params
    else {
        return None;
    };
    let schema = serde_json::to_value(requested_schema).ok()?;
    let properties = schema.get("properties").and_then(Value::as_object);
    let required = schema.get("required").and_then(Value::as_array);
    let mut content = Map::new();
    for name in required.into_iter().flatten() {
        let name = name.as_str()?;
        let property = properties?.get(name)?;
        let value = match property.get("default") {
            Some(default) => default.clone(),
            None if property.get("type").and_then(Value::as_str) == Some("boolean") => {
                Value::Bool(true)
            }
            None => return None,
        };
        // A boolean asked for is the question itself, whatever its default.
        let value = if property.get("type").and_then(Value::as_str) == Some("boolean") {
            Value::Bool(true)
        } else {
            value
        };
        content.insert(name.to_owned(), value);
    }
    Some(Value::Object(content))
}

/// The server's message, made safe to show: hidden characters escaped, cut.
fn shown(message: &str) -> String {
    let cut: String = message.chars().take(MAX_MESSAGE).collect();
    let mut out = crate::present::escape_hidden(&cut).into_owned();
    if message.chars().nth(MAX_MESSAGE).is_some() {
        out.push('…');
    }
    out
}

/// Answers one form elicitation of `server` by asking our person.
pub(super) async fn answer(
    run: &ToolRunContext,
    server: &str,
    params: &ElicitRequestParams,
) -> Result<ElicitResult, ToolError> {
    let Some(content) = approving_content(params) else {
        tracing::warn!(
            "MCP import: the server {server:?} asked tool {:?} for input an approval cannot \
             give; answered cancel",
            run.execution().name()
        );
        return Ok(ElicitResult::new(ElicitationAction::Cancel));
    };
    let message = match params {
        ElicitRequestParams::FormElicitationParams { message, .. } => shown(message),
        _ => String::new(),
    };
    let reason = format!("the MCP server \"{}\" asks: {message}", shown(server));
    Ok(match run.request_approval(Some(reason)).await? {
        ApprovalOutcome::AllowedOnce | ApprovalOutcome::AllowedAlways(_) => {
            ElicitResult::new(ElicitationAction::Accept).with_content(content)
        }
        ApprovalOutcome::Rejected
        | ApprovalOutcome::RejectedAlways(_)
        | ApprovalOutcome::RejectedBecause(_)
        | ApprovalOutcome::AllowedWithArgs(_) => ElicitResult::new(ElicitationAction::Decline),
        _ => ElicitResult::new(ElicitationAction::Cancel),
    })
}

/// The responses to a round of a server's requests (a 2026-07-28 `input_required` result's,
/// or a task's): each put to our person, a few a round; a server asking more gets `cancel`
/// for the rest rather than a flood of prompts.
pub(super) async fn respond_all(
    peer: &rmcp::Peer<rmcp::RoleClient>,
    requests: rmcp::model::InputRequests,
    run: &ToolRunContext,
) -> Result<rmcp::model::InputResponses, ToolError> {
    let server = peer
        .peer_info()
        .and_then(|i| i.server_info.as_ref().map(|s| s.name.clone()))
        .unwrap_or_default();
    let mut responses = rmcp::model::InputResponses::new();
    for (i, (key, request)) in requests.into_iter().enumerate() {
        let answer = if i < MAX_QUESTIONS_PER_ROUND {
            respond(run, &server, &request).await?
        } else {
            cancelled()
        };
        responses.insert(key, answer);
    }
    Ok(responses)
}

/// The response to one of a 2026-07-28 `input_required` result's requests.
async fn respond(
    run: &ToolRunContext,
    server: &str,
    request: &InputRequest,
) -> Result<Value, ToolError> {
    let answered = match request {
        InputRequest::Elicitation(request) => answer(run, server, &request.params).await?,
        _ => {
            tracing::warn!(
                "MCP import: the server {server:?} asked tool {:?} for sampling or roots, which \
                 an import does not give; answered cancel",
                run.execution().name()
            );
            ElicitResult::new(ElicitationAction::Cancel)
        }
    };
    serde_json::to_value(answered).map_err(|e| {
        ToolError::coded(
            "McpError",
            "MCP_PROTOCOL_ERROR",
            format!("the answer to the server's question could not be written: {e}"),
        )
    })
}

/// The calls under way on one connection. A 2025-11-25 server's `elicitation/create` names no
/// call (the protocol has no correlation on stdio), so it is put to the person only while
/// exactly one call is in flight; with several, it is answered `cancel` (asking about the wrong
/// call would be worse than not asking). Progress names its request's token: it reaches that
/// call's [`ToolRunContext::report_progress`].
#[derive(Clone, Default)]
pub(super) struct InFlight(
    Arc<Mutex<Vec<(u64, ToolRunContext)>>>,
    Arc<Mutex<Progress>>,
    /// The calls whose person is being asked now (one question at a time per call).
    Arc<Mutex<std::collections::HashSet<u64>>>,
);

/// Progress routing: the calls by their requests' tokens, and notifications that came before
/// their call's token was known (the request is sent before its handle gives the token).
#[derive(Default)]
struct Progress {
    routes: HashMap<ProgressToken, ToolRunContext>,
    early: VecDeque<ProgressNotificationParam>,
}

/// The most notifications kept for tokens not yet routed (the oldest go first).
const MAX_EARLY: usize = 64;

/// Removes its token's route when dropped.
pub(super) struct Routed {
    progress: Arc<Mutex<Progress>>,
    token: ProgressToken,
}

impl Drop for Routed {
    fn drop(&mut self) {
        let mut progress = self.progress.lock().unwrap_or_else(|e| e.into_inner());
        progress.routes.remove(&self.token);
    }
}

/// Reports one remote notification to `run`: the numbers as given when finite, the message
/// escaped and cut.
fn report(run: &ToolRunContext, param: &ProgressNotificationParam) {
    if !param.progress.is_finite() {
        return;
    }
    let total = param.total.filter(|t| t.is_finite());
    let message = param.message.as_deref().map(shown);
    run.report_progress(param.progress, total, message.as_deref());
}

/// Marks call `.1` as being asked until dropped (the question answered, or given up).
struct Asking<'a>(&'a Mutex<std::collections::HashSet<u64>>, u64);

impl Drop for Asking<'_> {
    fn drop(&mut self) {
        self.0
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&self.1);
    }
}

/// Removes its call from the [`InFlight`] set when dropped.
pub(super) struct Entered {
    set: InFlight,
    id: u64,
}

impl Drop for Entered {
    fn drop(&mut self) {
        let mut calls = self.set.0.lock().unwrap_or_else(|e| e.into_inner());
        calls.retain(|(id, _)| *id != self.id);
    }
}

impl InFlight {
    /// Routes progress with `token` to `run` until the returned guard is dropped (reporting
    /// what came for it already).
    pub(super) fn route(&self, token: ProgressToken, run: &ToolRunContext) -> Routed {
        let mut progress = self.1.lock().unwrap_or_else(|e| e.into_inner());
        let early: Vec<ProgressNotificationParam> = {
            let (mine, rest): (VecDeque<_>, VecDeque<_>) = std::mem::take(&mut progress.early)
                .into_iter()
                .partition(|p| p.progress_token == token);
            progress.early = rest;
            mine.into()
        };
        progress.routes.insert(token.clone(), run.clone());
        // Reported before the lock is let go: a newer notification cannot overtake them.
        for param in &early {
            report(run, param);
        }
        drop(progress);
        Routed {
            progress: Arc::clone(&self.1),
            token,
        }
    }

    /// A remote `notifications/progress`.
    pub(super) fn progress(&self, param: ProgressNotificationParam) {
        let mut progress = self.1.lock().unwrap_or_else(|e| e.into_inner());
        match progress.routes.get(&param.progress_token) {
            // Under the lock, in arrival order (a progress sink is expected to be quick).
            Some(run) => report(run, &param),
            None => {
                if progress.early.len() >= MAX_EARLY {
                    progress.early.pop_front();
                }
                progress.early.push_back(param);
            }
        }
    }

    pub(super) fn enter(&self, run: &ToolRunContext) -> Entered {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let id = NEXT.fetch_add(1, Ordering::Relaxed);
        let mut calls = self.0.lock().unwrap_or_else(|e| e.into_inner());
        calls.push((id, run.clone()));
        Entered {
            set: self.clone(),
            id,
        }
    }

    /// The one call under way, if there is exactly one.
    fn only(&self) -> Option<(u64, ToolRunContext)> {
        let calls = self.0.lock().unwrap_or_else(|e| e.into_inner());
        match calls.as_slice() {
            [(id, run)] => Some((*id, run.clone())),
            _ => None,
        }
    }

    /// Answers a 2025-11-25 server's form elicitation.
    pub(super) async fn answer_legacy(
        &self,
        server: &str,
        params: &ElicitRequestParams,
    ) -> ElicitResult {
        let Some((id, run)) = self.only() else {
            tracing::warn!(
                "MCP import: the server {server:?} asked a question with several calls (or none) \
                 under way, so no call to ask about; answered cancel"
            );
            return ElicitResult::new(ElicitationAction::Cancel);
        };
        // One question at a time per call: a server asking again while the person is being
        // asked gets `cancel`, not a second prompt.
        if !self.2.lock().unwrap_or_else(|e| e.into_inner()).insert(id) {
            tracing::warn!(
                "MCP import: the server {server:?} asked again while its question was open; \
                 answered cancel"
            );
            return ElicitResult::new(ElicitationAction::Cancel);
        }
        let asking = Asking(&self.2, id);
        let answered = answer(&run, server, params).await;
        drop(asking);
        match answered {
            Ok(answered) => answered,
            Err(e) => {
                tracing::warn!(
                    "MCP import: asking about the server {server:?}'s question failed: {e}"
                );
                ElicitResult::new(ElicitationAction::Cancel)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn form(schema: Value) -> ElicitRequestParams {
        serde_json::from_value(json!({"mode": "form", "message": "ok?", "requestedSchema": schema}))
            .unwrap()
    }

    #[test]
    fn only_forms_an_approval_can_fill_are_filled() {
        let ours = form(json!({"type": "object", "properties": {
            "approve": {"type": "boolean", "default": false},
            "reason": {"type": "string"}}, "required": ["approve"]}));
        assert_eq!(approving_content(&ours), Some(json!({"approve": true})));
        let defaulted = form(json!({"type": "object", "properties": {
            "mode": {"type": "string", "enum": ["a", "b"], "default": "b"}}, "required": ["mode"]}));
        assert_eq!(approving_content(&defaulted), Some(json!({"mode": "b"})));
        let empty = form(json!({"type": "object", "properties": {}}));
        assert_eq!(approving_content(&empty), Some(json!({})));
        let text = form(
            json!({"type": "object", "properties": {"name": {"type": "string"}},
            "required": ["name"]}),
        );
        assert_eq!(approving_content(&text), None);
    }

    #[test]
    fn a_servers_message_is_shown_escaped_and_cut() {
        assert_eq!(shown("a\u{202e}b\n"), "a\\u{202e}b\\u{a}");
        assert_eq!(shown(&"x".repeat(5_000)).chars().count(), MAX_MESSAGE + 1);
    }
}

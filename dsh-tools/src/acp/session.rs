//! A registry's calls in ACP sessions: announcements, progress, results and approvals.

use super::updates::{
    SessionView, tool_call, tool_call_in_progress, tool_call_progress, tool_call_result,
};
use crate::ToolError;
use crate::call::{
    AgentId, ApprovalOutcome, ApprovalRequest, ApprovalService, BoxFuture, ExecuteCall,
    ExecuteNext, Progress, ProgressSink, ToolExecution, ToolExecutionInput, ToolExecutionResult,
};
use crate::code::{CodeDispatchKind, CodeDispatchRecord};
use crate::registry::{Registry, ScopedRegistration};
use agent_client_protocol::v1::schema::{
    PermissionOption, PermissionOptionKind, RequestPermissionOutcome, RequestPermissionRequest,
    RequestPermissionResponse, SessionId, SessionNotification, SessionUpdate, ToolCallStatus,
    ToolCallUpdate, ToolCallUpdateFields,
};
use serde_json::{Value, json};
use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError, Weak};

/// The client end of an ACP connection, as the bridge uses it: session updates out, permission
/// requests answered. Implemented for the SDK's agent-side connection
/// (`agent_client_protocol::v1::ConnectionTo<agent_client_protocol::Client>`); tests and other
/// transports implement it themselves.
pub trait AcpClient: Send + Sync + 'static {
    /// Sends a `session/update` notification.
    fn session_update(
        &self,
        notification: SessionNotification,
    ) -> Result<(), agent_client_protocol::Error>;

    /// Sends `session/request_permission` and resolves with the client's answer. Dropping the
    /// future abandons the request (the SDK then sends `$/cancel_request`).
    fn request_permission(
        &self,
        request: RequestPermissionRequest,
    ) -> BoxFuture<Result<RequestPermissionResponse, agent_client_protocol::Error>>;
}

impl AcpClient for agent_client_protocol::v1::ConnectionTo<agent_client_protocol::Client> {
    fn session_update(
        &self,
        notification: SessionNotification,
    ) -> Result<(), agent_client_protocol::Error> {
        self.send_notification(notification)
    }

    fn request_permission(
        &self,
        request: RequestPermissionRequest,
    ) -> BoxFuture<Result<RequestPermissionResponse, agent_client_protocol::Error>> {
        Box::pin(self.send_request(request).block_task())
    }
}

/// The option ids of a permission request, one per [`PermissionOptionKind`].
pub const ALLOW_ONCE: &str = "allow_once";
/// Allow this call and every later call of the same tool in the session.
pub const ALLOW_ALWAYS: &str = "allow_always";
/// Reject this call.
pub const REJECT_ONCE: &str = "reject_once";
/// Reject this call and every later call of the same tool in the session.
pub const REJECT_ALWAYS: &str = "reject_always";

/// Bridges a [`Registry`]'s calls to ACP sessions. Creating one installs it as the registry's
/// approval service: an `ask` for a call of an ACP session becomes a `session/request_permission`
/// to that session's client; an `ask` for any other agent is answered
/// [`Unavailable`](ApprovalOutcome::Unavailable) (denied).
///
/// ```
/// use dsh_tools::Registry;
/// use dsh_tools::acp::{AcpBridge, SessionView};
/// # use dsh_tools::acp::{AcpClient, schema::*};
/// # struct Client;
/// # impl AcpClient for Client {
/// #     fn session_update(&self, _: SessionNotification) -> Result<(), agent_client_protocol::Error> { Ok(()) }
/// #     fn request_permission(&self, _: RequestPermissionRequest) -> dsh_tools::pipeline::BoxFuture<Result<RequestPermissionResponse, agent_client_protocol::Error>> {
/// #         Box::pin(async { Ok(RequestPermissionResponse::new(RequestPermissionOutcome::Cancelled)) })
/// #     }
/// # }
///
/// let registry = Registry::new();
/// let bridge = AcpBridge::new(&registry);
/// // In the agent's `session/new` handler, with the SDK's connection as the client:
/// let session = bridge.open_session(Client, "sess_1", SessionView::new("/work/app"));
/// assert_eq!(session.agent().as_str(), "sess_1");
/// ```
#[derive(Clone)]
pub struct AcpBridge {
    registry: Registry,
    sessions: Arc<Sessions>,
}

type Sessions = Mutex<HashMap<AgentId, Weak<SessionInner>>>;

impl std::fmt::Debug for AcpBridge {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let sessions = self.sessions.lock().unwrap_or_else(PoisonError::into_inner);
        f.debug_struct("AcpBridge")
            .field("sessions", &sessions.len())
            .finish_non_exhaustive()
    }
}

impl AcpBridge {
    /// A bridge for `registry`, installed as its approval service (replacing any other).
    pub fn new(registry: &Registry) -> Self {
        let sessions = Arc::new(Sessions::default());
        registry.set_approval_service(Approvals(Arc::downgrade(&sessions)));
        Self {
            registry: registry.clone(),
            sessions,
        }
    }

    /// Opens the bridge's view of one ACP session. Its calls run through the agent scope named
    /// by the session id ([`AcpSession::agent`]), so tools registered in that scope (for example
    /// file tools bound to the session's working directory) are the session's own. Dropping the
    /// session closes it: later approvals for it are answered `Unavailable` (an approval already
    /// being asked finishes). Opening an id that is already open replaces it: approvals and
    /// progress go to the newest session. The bridge value itself may be dropped; its sessions
    /// keep working.
    pub fn open_session(
        &self,
        client: impl AcpClient,
        session_id: impl Into<SessionId>,
        view: SessionView,
    ) -> AcpSession {
        let session_id = session_id.into();
        let agent = AgentId::new(&session_id.0);
        let inner = Arc::new(SessionInner {
            registry: self.registry.clone(),
            agent: agent.clone(),
            session_id,
            view,
            client: Box::new(client),
            granted: Mutex::default(),
            sub_calls: Mutex::default(),
            streamed: Mutex::default(),
        });
        let weak = Arc::downgrade(&inner);
        let sessions = Arc::downgrade(&self.sessions);
        let this_agent = agent.clone();
        let in_progress = self
            .registry
            .scope(agent.clone())
            .on_execute_first(move |call: ExecuteCall, next: ExecuteNext| {
                // Only the session currently open under this id reports (a reopened id leaves
                // the old session's wrapper registered until the old session is dropped).
                let current = sessions.upgrade().is_some_and(|sessions| {
                    sessions
                        .lock()
                        .unwrap_or_else(PoisonError::into_inner)
                        .get(&this_agent)
                        .is_some_and(|open| Weak::ptr_eq(open, &weak))
                });
                let session = weak.upgrade().filter(|_| current);
                async move {
                    let exec = &call.execution;
                    // Top-level calls and `run_code` sub-calls were announced; other nested
                    // calls were not.
                    if let Some(session) = session
                        && (exec.root_call_id() == exec.call_id()
                            || session.sub_call_announced(exec.call_id()))
                    {
                        session.send(SessionUpdate::ToolCallUpdate(tool_call_in_progress(
                            exec.call_id(),
                        )));
                    }
                    next.run().await
                }
            })
            .scoped();
        // `run_code` sub-calls as their own tool calls: announced at their start record (before
        // their pre-execute), settled by their final result.
        let (weak, this_agent) = (Arc::downgrade(&inner), agent.clone());
        let announce = self
            .registry
            .on_code_dispatch(move |agent: &AgentId, record: &CodeDispatchRecord| {
                if agent != &this_agent || record.kind != CodeDispatchKind::Start {
                    return;
                }
                if let Some(session) = weak.upgrade() {
                    session.announce_sub_call(record);
                }
            })
            .scoped();
        let weak = Arc::downgrade(&inner);
        let settle = self
            .registry
            .scope(agent.clone())
            .on_result(move |exec: &ToolExecution, result: &ToolExecutionResult| {
                if let Some(session) = weak.upgrade() {
                    session.settle_sub_call(exec, result);
                }
                Ok(())
            })
            .scoped();
        self.sessions
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(agent, Arc::downgrade(&inner));
        AcpSession {
            inner,
            sessions: Arc::clone(&self.sessions),
            _in_progress: in_progress,
            _sub_calls: [announce, settle],
        }
    }
}

/// One ACP session's side of the bridge ([`AcpBridge::open_session`]).
pub struct AcpSession {
    inner: Arc<SessionInner>,
    /// Held strongly: the registry's approval service reaches open sessions through it even
    /// after the [`AcpBridge`] value itself is dropped.
    sessions: Arc<Sessions>,
    _in_progress: ScopedRegistration,
    _sub_calls: [ScopedRegistration; 2],
}

impl std::fmt::Debug for AcpSession {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AcpSession")
            .field("session_id", &self.inner.session_id)
            .field("view", &self.inner.view)
            .finish_non_exhaustive()
    }
}

impl Drop for AcpSession {
    fn drop(&mut self) {
        // Only this session's entry: the same id may have been opened again since.
        let mut sessions = self.sessions.lock().unwrap_or_else(PoisonError::into_inner);
        let mine = Arc::downgrade(&self.inner);
        if sessions
            .get(&self.inner.agent)
            .is_some_and(|open| Weak::ptr_eq(open, &mine))
        {
            sessions.remove(&self.inner.agent);
            drop(sessions);
            // The session's "always" answers end with it; grants the host made stay.
            let granted = std::mem::take(
                &mut *self
                    .inner
                    .granted
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner),
            );
            for key in granted {
                self.inner.registry.revoke(&key);
            }
        }
    }
}

struct SessionInner {
    registry: Registry,
    agent: AgentId,
    session_id: SessionId,
    view: SessionView,
    client: Box<dyn AcpClient>,
    /// The grant keys this session's own "always" answers created (revoked with it).
    granted: Mutex<Vec<crate::GrantKey>>,
    /// `run_code` sub-calls announced and not yet settled: call id → arguments.
    sub_calls: Mutex<HashMap<String, Value>>,
    /// Calls shown while their arguments streamed ([`AcpSession::stream_call`]).
    streamed: Mutex<Streamed>,
}

/// The call ids a session showed while they streamed, oldest first, each `true` once it ran
/// (a later redraw of it is ignored). Bounded: the oldest are forgotten.
#[derive(Default)]
struct Streamed {
    order: std::collections::VecDeque<String>,
    ran: HashMap<String, bool>,
}

impl Streamed {
    fn remember(&mut self, call_id: &str, ran: bool) {
        if let Some(state) = self.ran.get_mut(call_id) {
            *state |= ran;
            return;
        }
        if call_id.len() > MAX_STREAMED_ID_BYTES {
            return;
        }
        if self.order.len() >= MAX_STREAMED_CALLS
            && let Some(oldest) = self.order.pop_front()
        {
            self.ran.remove(&oldest);
        }
        self.order.push_back(call_id.to_owned());
        self.ran.insert(call_id.to_owned(), ran);
    }
}

/// Call ids longer than this are shown while they stream but not remembered (each redraw is
/// a new `tool_call`, and `execute` announces the call again).
const MAX_STREAMED_ID_BYTES: usize = 256;

/// The most streamed call ids one session remembers; past it the oldest are forgotten (a
/// forgotten call that runs is announced again: the client replaces the card).
pub const MAX_STREAMED_CALLS: usize = 1024;

impl AcpSession {
    /// The agent whose scope the session's calls run through (named by the session id).
    pub fn agent(&self) -> &AgentId {
        &self.inner.agent
    }

    /// The ACP session id.
    pub fn session_id(&self) -> &SessionId {
        &self.inner.session_id
    }

    /// How the session shows cards.
    pub fn view(&self) -> &SessionView {
        &self.inner.view
    }

    /// Shows a call while the model is still writing its arguments (fed from a
    /// [`CallStream`](crate::provider::CallStream): `tool_name` is ours, `partial` the
    /// arguments so far): the first time for `call_id` a `tool_call` (`pending`, the call card
    /// of the arguments so far, `rawInput` so far), then a `tool_call_update` carrying the card
    /// as it grows. Call it as often as the editor should redraw (every update, or at most
    /// every N ms). When the finished call runs through [`execute`](Self::execute) with the
    /// same id, the client gets a last update in place of a second `tool_call`; a redraw after
    /// that is ignored. A call that will not run: [`abandon_stream`](Self::abandon_stream).
    pub fn stream_call(&self, call_id: &str, tool_name: &str, partial: &Value) {
        let session = &self.inner;
        let card = session
            .registry
            .present_call(tool_name, partial, Some(&session.agent));
        let shown = tool_call(call_id, tool_name, partial, &card, &session.view);
        // Held while sending: two redraws of one call never reach the client out of order.
        let mut streamed = session
            .streamed
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let update = match streamed.ran.get(call_id) {
            Some(true) => return,
            Some(false) => SessionUpdate::ToolCallUpdate(shown.into()),
            None => SessionUpdate::ToolCall(shown),
        };
        streamed.remember(call_id, false);
        session.send(update);
    }

    /// Ends a call shown by [`stream_call`](Self::stream_call) that will not run (the stream
    /// broke off, its arguments could not be read, the host refused it): the client marks it
    /// `failed`.
    pub fn abandon_stream(&self, call_id: &str) {
        let session = &self.inner;
        let mut streamed = session
            .streamed
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if streamed.ran.get(call_id) != Some(&false) {
            return;
        }
        streamed.remember(call_id, true);
        session.send(SessionUpdate::ToolCallUpdate(ToolCallUpdate::new(
            call_id.to_owned(),
            ToolCallUpdateFields::new().status(ToolCallStatus::Failed),
        )));
    }

    /// Runs one model call in the session, telling the client as it goes: a `tool_call`
    /// (`pending`, from the tool's call card; an update of it for a call shown while it
    /// streamed), `in_progress` when dispatch starts (after any approval, which asks the
    /// client), its progress reports as `tool_call_update`s ([`tool_call_progress`]: a long
    /// call's, an imported MCP tool's remote task's status), then a `tool_call_update`
    /// (`completed` or `failed`, from its result card). The
    /// input's agent is replaced by the session's. A client that cannot be reached is logged,
    /// never fatal: the result is returned all the same.
    pub async fn execute(&self, input: ToolExecutionInput) -> ToolExecutionResult {
        let session = &self.inner;
        let agent = Some(&session.agent);
        let card = session
            .registry
            .present_call(&input.name, &input.arguments, agent);
        let announced = tool_call(
            &input.call_id,
            &input.name,
            &input.arguments,
            &card,
            &session.view,
        );
        {
            let mut streamed = session
                .streamed
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            let shown = streamed.ran.get(&input.call_id) == Some(&false);
            if shown {
                streamed.remember(&input.call_id, true);
            }
            session.send(if shown {
                SessionUpdate::ToolCallUpdate(announced.into())
            } else {
                SessionUpdate::ToolCall(announced)
            });
        }
        let (call_id, name) = (input.call_id.clone(), input.name.clone());
        let arguments = crate::json::clone_deep(&input.arguments);
        let input = self.reporting(input);
        let result = session
            .registry
            .execute(input.agent(session.agent.clone()))
            .await;
        let settled = session
            .registry
            .present_result(&name, &arguments, &result, agent);
        session.send(SessionUpdate::ToolCallUpdate(tool_call_result(
            &call_id,
            &settled,
            &result,
            &session.view,
        )));
        crate::json::drop_deep(arguments);
        result
    }

    /// `input` with its progress reports shown to the client too ([`tool_call_progress`]),
    /// each distinct report once, and still given to the input's own sink.
    fn reporting(&self, mut input: ToolExecutionInput) -> ToolExecutionInput {
        let session = Arc::downgrade(&self.inner);
        let call_id = input.call_id.clone();
        let forward = input.progress.take();
        let last = Mutex::new(None::<Progress>);
        input.progress(ProgressSink::new(move |progress: Progress| {
            let mut shown = last.lock().unwrap_or_else(PoisonError::into_inner);
            if let Some(session) = session.upgrade()
                && shown.as_ref() != Some(&progress)
            {
                session.send(SessionUpdate::ToolCallUpdate(tool_call_progress(
                    &call_id, &progress,
                )));
                *shown = Some(progress.clone());
            }
            drop(shown);
            if let Some(sink) = &forward {
                sink.report(progress);
            }
        }))
    }

    /// Sends any other update of the session (message chunks, plans, …), logging a failure.
    pub fn send(&self, update: SessionUpdate) {
        self.inner.send(update);
    }

    /// The "always" answers the user gave in this session: tool name → allowed (`true`) or
    /// rejected (`false`). They are the registry's [grants](Registry::grants) for the session's
    /// agent, answered before the client is asked again, and revoked when the session is
    /// dropped.
    pub fn remembered(&self) -> HashMap<String, bool> {
        self.inner
            .registry
            .grants()
            .into_iter()
            .filter(|g| {
                g.key.agent.as_ref() == Some(&self.inner.agent) && g.key.arguments.is_empty()
            })
            .map(|g| (g.key.tool, g.decision == crate::GrantDecision::Allow))
            .collect()
    }
}

impl SessionInner {
    fn sub_call_announced(&self, call_id: &str) -> bool {
        self.sub_calls
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .contains_key(call_id)
    }

    fn announce_sub_call(&self, record: &CodeDispatchRecord) {
        let card = self
            .registry
            .present_call(&record.name, &record.arguments, Some(&self.agent));
        self.send(SessionUpdate::ToolCall(tool_call(
            &record.sub_call_id,
            &record.name,
            &record.arguments,
            &card,
            &self.view,
        )));
        self.sub_calls
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(
                record.sub_call_id.clone(),
                crate::json::clone_deep(&record.arguments),
            );
    }

    fn settle_sub_call(&self, exec: &ToolExecution, result: &ToolExecutionResult) {
        let arguments = self
            .sub_calls
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(exec.call_id());
        let Some(arguments) = arguments else { return };
        let settled =
            self.registry
                .present_result(exec.name(), &arguments, result, Some(&self.agent));
        self.send(SessionUpdate::ToolCallUpdate(tool_call_result(
            exec.call_id(),
            &settled,
            result,
            &self.view,
        )));
        crate::json::drop_deep(arguments);
    }

    fn send(&self, update: SessionUpdate) {
        let notification = SessionNotification::new(self.session_id.clone(), update);
        if let Err(error) = self.client.session_update(notification) {
            tracing::warn!(session = %self.session_id.0, %error, "ACP session update not sent");
        }
    }

    /// Asks the client whether the call may run (spec §6.4, through `session/request_permission`).
    async fn ask(&self, request: ApprovalRequest) -> Result<ApprovalOutcome, ToolError> {
        // A remembered answer never reaches here: the registry's grants answer first. A caller that already gave up is not worth a prompt in the editor.
        if request.signal.is_cancelled() {
            return Ok(ApprovalOutcome::Cancelled);
        }
        let arguments = request.arguments.as_deref().unwrap_or(&Value::Null);
        let card = self
            .registry
            .present_call(&request.tool_name, arguments, Some(&self.agent));
        let call = tool_call(
            &request.call_id,
            &request.tool_name,
            arguments,
            &card,
            &self.view,
        );
        let name = &request.tool_name;
        // "Always" is offered only where the tool's grant policy gives the call a key.
        let always = request.grant.is_some();
        let mut options = vec![PermissionOption::new(
            ALLOW_ONCE,
            "Allow",
            PermissionOptionKind::AllowOnce,
        )];
        if always {
            options.push(PermissionOption::new(
                ALLOW_ALWAYS,
                format!("Always allow {name}"),
                PermissionOptionKind::AllowAlways,
            ));
        }
        options.push(PermissionOption::new(
            REJECT_ONCE,
            "Reject",
            PermissionOptionKind::RejectOnce,
        ));
        if always {
            options.push(PermissionOption::new(
                REJECT_ALWAYS,
                format!("Always reject {name}"),
                PermissionOptionKind::RejectAlways,
            ));
        }
        let meta = request.reason.as_ref().map(|reason| {
            let mut meta = agent_client_protocol::v1::schema::Meta::new();
            meta.insert("dev.dsh-tools/reason".to_owned(), json!(reason));
            meta
        });
        let permission = RequestPermissionRequest::new(
            self.session_id.clone(),
            ToolCallUpdate::from(call),
            options,
        )
        .meta(meta);
        let reply = self.client.request_permission(permission);
        let response = tokio::select! {
            biased;
            // Dropping `reply` abandons the request: the SDK sends `$/cancel_request`.
            () = request.signal.cancelled() => return Ok(ApprovalOutcome::Cancelled),
            response = reply => response,
        };
        let response = match response {
            Ok(response) => response,
            Err(error) => {
                tracing::warn!(session = %self.session_id.0, %error, "ACP permission request failed");
                return Ok(ApprovalOutcome::Unavailable);
            }
        };
        let selected = match response.outcome {
            RequestPermissionOutcome::Selected(selected) => selected.option_id,
            RequestPermissionOutcome::Cancelled => return Ok(ApprovalOutcome::Cancelled),
            // A later protocol's outcome this version cannot read: nobody allowed the call.
            #[allow(unreachable_patterns)]
            _ => return Ok(ApprovalOutcome::Unavailable),
        };
        let remember = |outcome: ApprovalOutcome| {
            if let Some(key) = &request.grant {
                self.granted
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .push(key.clone());
            }
            outcome
        };
        Ok(match &*selected.0 {
            ALLOW_ONCE => ApprovalOutcome::AllowedOnce,
            ALLOW_ALWAYS if always => remember(ApprovalOutcome::AllowedAlways(None)),
            REJECT_ONCE => ApprovalOutcome::Rejected,
            REJECT_ALWAYS if always => remember(ApprovalOutcome::RejectedAlways(None)),
            other => {
                let shown: String = other.chars().take(200).collect();
                return Err(ToolError::new(format!(
                    "the client answered the permission request for tool \"{name}\" with \
                     option {}, which it was not offered",
                    json!(shown)
                )));
            }
        })
    }
}

/// The registry's approval service: routes each request to its session by agent.
struct Approvals(Weak<Sessions>);

impl ApprovalService for Approvals {
    fn request(&self, request: ApprovalRequest) -> BoxFuture<Result<ApprovalOutcome, ToolError>> {
        let session = self.0.upgrade().and_then(|sessions| {
            sessions
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .get(&request.agent)
                .and_then(Weak::upgrade)
        });
        Box::pin(async move {
            match session {
                Some(session) => session.ask(request).await,
                None => Ok(ApprovalOutcome::Unavailable),
            }
        })
    }
}

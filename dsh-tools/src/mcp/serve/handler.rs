//! `McpServer` as rmcp's `ServerHandler`: `tools/list`, `tools/call` (traced, and measured with
//! feature `otel`), `initialize` (a legacy session joins the change forwarder), the tasks
//! requests of both eras, and `tools/list_changed` subscriptions.

use super::discovery::caller_of;
use super::server::McpServer;
use super::tasks;
use super::tasks_2025;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, ErrorData, ListToolsResult, PaginatedRequestParams,
    ProtocolVersion, ServerConfig, SubscriptionFilter, Tool,
};
use rmcp::service::{RequestContext, SubscriptionContext};
use rmcp::{RoleServer, ServerHandler};
use tracing::Instrument;

impl ServerHandler for McpServer {
    fn get_info(&self) -> ServerConfig {
        (*self.info).clone()
    }

    async fn list_tools(
        &self,
        request: Option<PaginatedRequestParams>,
        cx: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        // Every tool is on the first page, which has no next cursor: any cursor is not ours.
        if let Some(cursor) = request.and_then(|r| r.cursor) {
            let shown: String = cursor.chars().take(64).collect();
            return Err(ErrorData::invalid_params(
                format!(
                    "Invalid params: unknown cursor {shown:?} (this server lists every tool on one page)"
                ),
                None,
            ));
        }
        let modern = cx
            .protocol_version()
            .is_some_and(|v| v >= ProtocolVersion::V_2026_07_28);
        let all = self.mcp_tools_marked();
        let rules = self.registry.visibility_rules();
        let mut list = self
            .lister(&all)
            .listing(&rules, caller_of(&cx).as_deref(), modern);
        if modern {
            self.stamp(&mut list.meta);
        }
        Ok(list)
    }

    /// Any tool of the view, listed or not (a deferred tool is callable).
    fn get_tool(&self, name: &str) -> Option<Tool> {
        self.mcp_tools_marked()
            .iter()
            .find(|(t, _)| t.name == name)
            .map(|(t, _)| t.clone())
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        cx: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        // Boxed: the call's future (the whole pipeline's state, several KiB) would otherwise
        // sit inline in rmcp's per-request task, which tokio copies on spawn and completion.
        let task = cx.extensions.get::<tasks_2025::Augmented>().map(|a| a.0);
        let span = super::trace::server_span(&request.name, &cx);
        #[cfg(feature = "otel")]
        let metric = super::trace::Metric::start(
            &request.name,
            self.registry
                .get(&request.name, self.agent.as_ref())
                .is_some(),
            &cx,
        );
        let answer = Box::pin(self.call(request, cx, task))
            .instrument(span.clone())
            .await;
        super::trace::settle(&span, &answer);
        #[cfg(feature = "otel")]
        metric.settle(&answer);
        answer
    }

    /// A legacy session is told of changes from its `initialize` on (not from
    /// `notifications/initialized`): in a fleet sharing a session store, the instance that
    /// answered `initialize` may never see the notification (it lands on another instance),
    /// yet the client's `GET` stream may open on it; an instance restoring the session from
    /// the store replays `initialize` too.
    async fn initialize(
        &self,
        request: rmcp::model::InitializeRequestParams,
        cx: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::InitializeResult, ErrorData> {
        cx.peer.set_peer_info(request.clone());
        let mut answer = self.negotiate_initialize(&request)?;
        // Such a session is not told of the 2026-07-28 extension (its own revision's tasks
        // capability is added by the transport: see `tasks_2025`).
        if let Some(extensions) = answer.capabilities.extensions.as_mut() {
            extensions.remove(rmcp::model::TASKS_EXTENSION_ID);
            if extensions.is_empty() {
                answer.capabilities.extensions = None;
            }
        }
        let mut peers = self
            .shared
            .legacy_peers
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        // Sessions that ended since the last change are dropped here too, so the list stays
        // as long as the number of live sessions.
        peers.retain(|p| !p.is_transport_closed());
        peers.push(cx.peer.clone());
        drop(peers);
        self.start_forwarder();
        Ok(answer)
    }

    /// The 2025-11-25 tasks (`serve/tasks_2025.rs`): the transports hand these requests over
    /// under names of their own.
    async fn on_custom_request(
        &self,
        request: rmcp::model::CustomRequest,
        cx: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::CustomResult, ErrorData> {
        tasks_2025::serve(self, self.task_view(), request, cx)
            .await
            .map(rmcp::model::CustomResult::new)
    }

    async fn get_task(
        &self,
        request: rmcp::model::GetTaskParams,
        cx: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::GetTaskResult, ErrorData> {
        let owner = caller_of(&cx).map(|c| c.subject().to_owned());
        tasks::get(self.tasks.as_ref(), &request.task_id, owner.as_deref()).await
    }

    async fn update_task(
        &self,
        request: rmcp::model::UpdateTaskParams,
        cx: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let owner = caller_of(&cx).map(|c| c.subject().to_owned());
        tasks::update(self.tasks.as_ref(), &request.task_id, owner.as_deref()).await
    }

    async fn cancel_task(
        &self,
        request: rmcp::model::CancelTaskParams,
        cx: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let owner = caller_of(&cx).map(|c| c.subject().to_owned());
        tasks::cancel(self.tasks.as_ref(), &request.task_id, owner.as_deref()).await
    }

    fn accepted_subscription_filter(
        &self,
        _requested: &SubscriptionFilter,
    ) -> Option<SubscriptionFilter> {
        Some(SubscriptionFilter::builder().tools_list_changed().build())
    }

    async fn listen(&self, cx: SubscriptionContext) -> Result<(), ErrorData> {
        let mut changes = self.shared.changes.subscribe();
        loop {
            tokio::select! {
                () = cx.cancelled() => return Ok(()),
                changed = changes.changed() => {
                    if changed.is_err() || cx.sink().notify_tool_list_changed().await.is_err() {
                        return Ok(());
                    }
                }
            }
        }
    }
}

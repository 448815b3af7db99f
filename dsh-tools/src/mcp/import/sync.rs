//! Keeping a registry in step with a remote server's tool list: listing within the limits,
//! refusing names a terminal would misread, replacing changed tools in place, and the body of
//! every imported tool (a remote call under its own timeout).

use super::filter;
use super::options::{ImportError, ImportLimits, ImportOptions, SchemaPolicy};
use crate::call::ToolRunContext;
use crate::definition::{OutputDecl, ToolDefinition};
use crate::error::ToolError;
use crate::mcp::map;
use crate::registry::{Registry, ScopedRegistration};
use crate::schema::{CompiledSchema, Root, ToolArgsError, bridge};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, ClientRequest, CustomResult, ListToolsRequest,
    PaginatedRequestParams, ServerResult, Tool,
};
use rmcp::service::{PeerRequestOptions, ServiceError};
use rmcp::{Peer, RoleClient};
use serde_json::Value;
use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};
use tracing::Instrument;

#[derive(Default)]
pub(super) struct SyncState {
    /// Remote name → (the remote tool as JSON, to notice changes; the registration).
    pub(super) live: HashMap<String, (Value, ScopedRegistration)>,
    pub(super) order: Vec<String>,
    pub(super) collisions: Vec<String>,
    pub(super) passed_through: Vec<(String, String)>,
    pub(super) skipped: Vec<(String, String)>,
    /// What Code Mode's SDK could not show of each tool's schemas.
    pub(super) sdk_dropped: Vec<(String, crate::code::Dropped)>,
}

pub(super) struct SyncCtx {
    pub(super) registry: Registry,
    pub(super) options: Arc<ImportOptions>,
    pub(super) peer: Peer<RoleClient>,
    pub(super) limits: ImportLimits,
    /// The connection's calls under way (for the server's 2025-11-25 questions).
    pub(super) in_flight: super::asks::InFlight,
}

/// A server's tool list: the entries that decoded, and each that did not (its name, or `#<n>`
/// for its position in the listing when it has none, and why).
#[derive(Default)]
pub(super) struct Listing {
    pub(super) tools: Vec<Tool>,
    pub(super) bad: Vec<(String, String)>,
}

/// Every page of `tools/list`, within `limits`. An entry that is not a tool (no `inputSchema`, a
/// schema that is not an object, a name that is not a string) is left out and reported in
/// [`Listing::bad`]; the rest of the page is kept (rmcp alone would refuse the whole listing).
pub(super) async fn list_all(
    peer: &Peer<RoleClient>,
    limits: &ImportLimits,
) -> Result<Listing, ImportError> {
    let mut listing = Listing::default();
    let mut cursors = HashSet::new();
    let mut params: Option<PaginatedRequestParams> = None;
    let mut position = 0usize;
    for _ in 0..limits.max_pages {
        let request = ClientRequest::ListToolsRequest(ListToolsRequest {
            method: Default::default(),
            params: params.take(),
            extensions: Default::default(),
        });
        let timed_out = || ImportError::Timeout {
            what: "tools/list",
            after: limits.request_timeout,
        };
        // rmcp's own timeout, which tells the server with `notifications/cancelled`; the outer
        // one only bounds sending on a transport that does not drain.
        let mut options = PeerRequestOptions::no_options();
        options.timeout = Some(limits.request_timeout);
        let asked = async {
            peer.send_request_with_option(request, options)
                .await?
                .await_response()
                .await
        };
        let answer = match tokio::time::timeout(limits.request_timeout * 2, asked).await {
            Err(_) | Ok(Err(ServiceError::Timeout { .. })) => return Err(timed_out()),
            Ok(answer) => answer?,
        };
        let (tools, next_cursor) = match answer {
            ServerResult::ListToolsResult(page) => {
                position += page.tools.len();
                (page.tools, page.next_cursor)
            }
            ServerResult::CustomResult(CustomResult(raw)) => {
                page_by_entry(raw, &mut position, &mut listing.bad, limits.max_tools)?
            }
            _ => return Err(ServiceError::UnexpectedResponse.into()),
        };
        // Every entry counts, good or bad: a page of 5 M `{}` is as large as 5 M tools.
        if position > limits.max_tools {
            return Err(ImportError::TooLarge(format!(
                "more than {} tools (ImportLimits::max_tools)",
                limits.max_tools
            )));
        }
        listing.tools.extend(tools);
        match next_cursor {
            None => return Ok(listing),
            Some(cursor) if !cursors.insert(cursor.clone()) => {
                tracing::warn!(
                    "MCP import: the server repeated the cursor {:?}; the listing ends there",
                    cursor.escape_debug().to_string()
                );
                return Ok(listing);
            }
            Some(cursor) => {
                params = Some(PaginatedRequestParams::default().with_cursor(Some(cursor)))
            }
        }
    }
    Err(ImportError::TooLarge(format!(
        "more than {} pages (ImportLimits::max_pages)",
        limits.max_pages
    )))
}

/// A `tools/list` page rmcp could not decode as a whole, one entry at a time: the tools that
/// decode, each other entry reported in `bad` (`position` counts entries across pages).
fn page_by_entry(
    raw: Value,
    position: &mut usize,
    bad: &mut Vec<(String, String)>,
    max_tools: usize,
) -> Result<(Vec<Tool>, Option<String>), ImportError> {
    let Value::Object(mut page) = raw else {
        return Err(ServiceError::UnexpectedResponse.into());
    };
    let Some(Value::Array(entries)) = page.remove("tools") else {
        return Err(ServiceError::UnexpectedResponse.into());
    };
    let next_cursor = match page.remove("nextCursor") {
        None | Some(Value::Null) => None,
        Some(Value::String(cursor)) => Some(cursor),
        Some(_) => return Err(ServiceError::UnexpectedResponse.into()),
    };
    if *position + entries.len() > max_tools {
        return Err(ImportError::TooLarge(format!(
            "more than {max_tools} tools (ImportLimits::max_tools)"
        )));
    }
    let mut tools = Vec::with_capacity(entries.len());
    let mut refused = 0usize;
    for entry in entries {
        *position += 1;
        let name = match entry.get("name") {
            Some(Value::String(name)) if hostile_name(name).is_none() => name.clone(),
            Some(Value::String(name)) => printable(name),
            _ => format!("#{}", *position - 1),
        };
        match serde_json::from_value::<Tool>(entry) {
            Ok(tool) => tools.push(tool),
            Err(e) => {
                refused += 1;
                if bad.len() < MAX_REPORTED_BAD {
                    // serde's message quotes the offending value: cut, controls escaped.
                    let why: String = format!("the server's entry is not a tool: {e}")
                        .chars()
                        .take(200)
                        .map(|c| match c.is_control() {
                            true => c.escape_unicode().to_string(),
                            false => c.to_string(),
                        })
                        .collect();
                    bad.push((name, why));
                }
            }
        }
    }
    if refused > 0 {
        tracing::warn!(
            "MCP import: {refused} entries of a tools/list page are not tools and are skipped"
        );
    }
    Ok((tools, next_cursor))
}

/// The most bad listing entries reported (each also counts against `ImportLimits::max_tools`).
const MAX_REPORTED_BAD: usize = 100;

/// A remote name as it may be shown: its first 64 characters, escaped.
fn printable(name: &str) -> String {
    name.chars()
        .take(64)
        .collect::<String>()
        .escape_debug()
        .to_string()
}

/// Why a remote tool's name is not registered, if it is not: one a terminal, a log or a model
/// would show as something else.
pub(super) fn hostile_name(name: &str) -> Option<&'static str> {
    if name.is_empty() {
        return Some("the name is empty");
    }
    if name.chars().count() > 128 {
        return Some("the name is longer than 128 characters");
    }
    name.contains(crate::present::is_hidden_char)
        .then_some("the name holds control, invisible or bidirectional-override characters")
}

/// Brings the registrations in line with `tools`: unchanged tools stay, changed ones are
/// replaced in place (a call in between never sees `UNKNOWN_TOOL`), removed ones go in one pass.
pub(super) fn sync(ctx: &SyncCtx, state: &Mutex<SyncState>, listing: Listing) {
    let Listing { tools, bad } = listing;
    let mut state = state.lock().unwrap_or_else(|e| e.into_inner());
    state.order.clear();
    state.collisions.clear();
    state.passed_through.clear();
    state.sdk_dropped.clear();
    state.skipped = bad;
    let prefix = ctx.options.prefix.as_deref().unwrap_or("");
    // The tools to keep, de-duplicated (the first of a name wins) and with printable names.
    let mut seen = HashSet::new();
    let mut wanted = Vec::with_capacity(tools.len());
    for tool in tools {
        let remote = tool.name.to_string();
        if let Some(why) = hostile_name(&remote) {
            let shown = printable(&remote);
            tracing::warn!("MCP import: the remote tool \"{shown}\" is skipped: {why}");
            state.skipped.push((shown, why.to_owned()));
            continue;
        }
        if !seen.insert(remote.clone()) {
            state.skipped.push((
                format!("{prefix}{remote}"),
                "the server listed this name more than once; the first is registered".to_owned(),
            ));
            continue;
        }
        let fingerprint = serde_json::to_value(&tool).unwrap_or(Value::Null);
        wanted.push((remote, tool, fingerprint));
    }
    let gone: Vec<String> = state
        .live
        .keys()
        .filter(|name| !seen.contains(name.as_str()))
        .cloned()
        .collect();
    let removed = gone
        .iter()
        .filter_map(|name| state.live.remove(name))
        .filter_map(|(_, registration)| registration.into_inner());
    ctx.registry.dispose_all(removed.collect::<Vec<_>>());
    for (remote, tool, fingerprint) in wanted {
        let local = format!("{prefix}{remote}");
        let previous = state.live.remove(&remote);
        if let Some((old, registration)) = previous {
            if old == fingerprint {
                state.live.insert(remote, (old, registration));
                state.order.push(local);
                continue;
            }
            // Changed: replace it where it stands.
            let outcome = definition(ctx, &local, tool, &mut state).and_then(|d| {
                let old = registration
                    .into_inner()
                    .ok_or_else(|| "the registration is gone".to_owned())?;
                ctx.registry.replace_tool(old, d).map_err(|e| e.to_string())
            });
            match outcome {
                Ok(registration) => {
                    state
                        .live
                        .insert(remote, (fingerprint, registration.scoped()));
                    state.order.push(local);
                }
                Err(why) => state.skipped.push((local, why)),
            }
            continue;
        }
        if ctx
            .registry
            .get(&local, ctx.options.scope.as_ref())
            .is_some()
        {
            tracing::warn!(
                "MCP import: {local:?} is already registered; the remote tool is skipped"
            );
            state.collisions.push(local);
            continue;
        }
        let definition = match definition(ctx, &local, tool, &mut state) {
            Ok(d) => d,
            Err(why) => {
                state.skipped.push((local, why));
                continue;
            }
        };
        let registered = match &ctx.options.scope {
            Some(agent) => ctx.registry.scope(agent.clone()).register(definition),
            None => ctx.registry.register(definition),
        };
        match registered {
            Ok(registration) => {
                state
                    .live
                    .insert(remote, (fingerprint, registration.scoped()));
                state.order.push(local);
            }
            Err(e) => state.skipped.push((local, e.to_string())),
        }
    }
}

/// A remote tool as a definition whose body calls it.
pub(super) fn definition(
    ctx: &SyncCtx,
    local: &str,
    tool: Tool,
    state: &mut SyncState,
) -> Result<ToolDefinition, String> {
    let raw = Value::Object((*tool.input_schema).clone());
    let remote_output = tool
        .output_schema
        .as_ref()
        .map(|s| Value::Object((**s).clone()));
    // What Code Mode's SDK shows: the same conversion `dsh-tools code sdk` prints.
    let shown = crate::code::foreign_tool(&raw, remote_output.as_ref(), true);
    let (parameters, compiled) = match ctx.options.schemas {
        SchemaPolicy::PassThrough => (raw, None),
        policy => match bridge::from_foreign(&raw) {
            Ok(converted) => match CompiledSchema::compile(&converted) {
                Ok(compiled) => (converted, Some(Arc::new(compiled))),
                Err(e) => return Err(format!("its converted schema does not compile: {e}")),
            },
            Err(e) if policy == SchemaPolicy::Reject => return Err(e.to_string()),
            Err(e) => {
                state.passed_through.push((local.to_owned(), e.to_string()));
                (raw, None)
            }
        },
    };
    let structured = remote_output
        .as_ref()
        .and_then(|s| bridge::from_foreign(s).ok())
        .unwrap_or_else(|| serde_json::json!({}));
    let output = OutputDecl::new(crate::code::mcp_result_schema(structured), |_, value| {
        map::remote_content(value)
    });
    let remote = tool.name.to_string();
    let peer = ctx.peer.clone();
    let in_flight = ctx.in_flight.clone();
    let limits = ctx.limits;
    let mut definition = ToolDefinition::new(
        local,
        tool.description.as_deref().unwrap_or_default(),
        parameters,
        output,
        move |args: Arc<Value>, run: ToolRunContext| {
            let call = Remote {
                peer: peer.clone(),
                name: remote.clone(),
                compiled: compiled.clone(),
                limits,
                in_flight: in_flight.clone(),
            };
            call.run(args, run)
        },
    )
    .hints(map::hints(tool.annotations.as_ref()))
    .skip_unexportable(!ctx.options.require_export)
    .sdk_schemas(shown.parameters, shown.output);
    let dropped = shown.dropped;
    let read_only = tool
        .annotations
        .as_ref()
        .and_then(|a| a.read_only_hint)
        .unwrap_or(false);
    if ctx.options.trust_hints && read_only {
        definition = definition.concurrency_safe(|_| true);
    }
    let title = tool
        .title
        .clone()
        .or_else(|| tool.annotations.as_ref().and_then(|a| a.title.clone()));
    if let Some(title) = title {
        definition = definition.title(title);
    }
    if remote_output.is_some() {
        // Issue 39.8: a program gets the structured value, as from the tool in-process.
        definition = definition.program_value(crate::code::mcp_program_value);
    }
    state
        .sdk_dropped
        .extend(dropped.into_iter().map(|d| (local.to_owned(), d)));
    Ok(definition)
}

/// One remote tool's call target.
pub(super) struct Remote {
    peer: Peer<RoleClient>,
    name: String,
    compiled: Option<Arc<CompiledSchema>>,
    limits: ImportLimits,
    in_flight: super::asks::InFlight,
}

/// The most 2026-07-28 `input_required` rounds one call answers (rmcp's own default).
const MAX_ROUNDS: usize = rmcp::model::DEFAULT_MRTR_MAX_ROUNDS;

impl Remote {
    /// One remote call: local validation (when the schema converted), then `tools/call`,
    /// dropped (which sends `notifications/cancelled`) when our signal fires or the call timeout
    /// passes; a task it is answered with is awaited (`task`).
    async fn run(self, args: Arc<Value>, run: ToolRunContext) -> Result<Value, ToolError> {
        if let Some(compiled) = &self.compiled {
            let violations = compiled.validate_at(&args, Root::Parameters);
            if !violations.is_empty() {
                return Err(ToolArgsError::new(violations).into());
            }
        }
        let arguments = match map::arguments(&args) {
            Ok(arguments) => arguments,
            Err(message) => {
                // The arguments may be the last copy and nested 100,000 deep.
                if let Some(args) = Arc::into_inner(args) {
                    crate::json::free(args);
                }
                return Err(ToolError::coded(
                    "ToolArgsError",
                    crate::error::codes::INVALID_ARGS,
                    message,
                ));
            }
        };
        // The arguments stay at hand for a retry (a server that asks); the first round moves
        // the mapped copy.
        let _entered = self.in_flight.enter(&run);
        let mut request = CallToolRequestParams::new(self.name.clone()).with_arguments(arguments);
        let mut rounds = 0;
        let result = loop {
            let sent = tokio::select! {
                result = tokio::time::timeout(self.limits.call_timeout, self.send(request, &run)) => result,
                () = run.signal().cancelled() => return Err(ToolError::aborted()),
            };
            let Ok(sent) = sent else {
                return Err(ToolError::coded(
                    "McpError",
                    "MCP_TIMEOUT",
                    format!(
                        "the MCP server did not answer tools/call within {:?} (ImportLimits::call_timeout)",
                        self.limits.call_timeout
                    ),
                ));
            };
            match sent {
                Ok(CallToolResponse::Complete(result)) => break Ok(result),
                Ok(CallToolResponse::InputRequired(asked)) => {
                    rounds += 1;
                    if rounds > MAX_ROUNDS {
                        return Err(ToolError::coded(
                            "McpError",
                            "MCP_PROTOCOL_ERROR",
                            format!(
                                "the MCP server asked for input more than {MAX_ROUNDS} times in one call"
                            ),
                        ));
                    }
                    request = self.retry(&args, asked, &run).await?;
                }
                Ok(CallToolResponse::Task(created)) => {
                    break super::task::await_task(&self.peer, created, &run, &self.limits).await?;
                }
                Ok(_) => {
                    return Err(ToolError::coded(
                        "McpError",
                        "MCP_PROTOCOL_ERROR",
                        "the MCP server answered tools/call with a result kind this client does not take",
                    ));
                }
                Err(e) => break Err(e),
            }
        };
        match result {
            Ok(result) if result.is_error == Some(true) => Err(map::remote_error(&result)),
            Ok(result) => Ok(map::remote_value(result)),
            Err(ServiceError::McpError(e)) if e.code.0 == filter::UNDECODABLE => Err(
                ToolError::coded("McpError", "MCP_TRANSPORT_ERROR", e.message.to_string()),
            ),
            Err(ServiceError::McpError(e)) => Err(ToolError::coded(
                "McpError",
                "MCP_PROTOCOL_ERROR",
                format!("{}: {}", e.code.0, e.message),
            )),
            Err(e) => Err(ToolError::coded(
                "McpError",
                "MCP_TRANSPORT_ERROR",
                e.to_string(),
            )),
        }
    }
}

impl Remote {
    /// The call again, answering a 2026-07-28 `input_required` result: each request put to
    /// our person ([`asks::respond_all`](super::asks::respond_all)), the state echoed.
    async fn retry(
        &self,
        args: &Value,
        asked: rmcp::model::InputRequiredResult,
        run: &ToolRunContext,
    ) -> Result<CallToolRequestParams, ToolError> {
        let requests = asked.input_requests.unwrap_or_default();
        let responses = super::asks::respond_all(&self.peer, requests, run).await?;
        let arguments = map::arguments(args).map_err(|message| {
            ToolError::coded("ToolArgsError", crate::error::codes::INVALID_ARGS, message)
        })?;
        let mut request = CallToolRequestParams::new(self.name.clone()).with_arguments(arguments);
        request.input_responses = (!responses.is_empty()).then_some(responses);
        request.request_state = asked.request_state;
        Ok(request)
    }
}

impl Remote {
    /// One `tools/call` request: its progress reaches `run`'s `report_progress` while it is
    /// under way, and dropping the future (our signal, the timeout) sends
    /// `notifications/cancelled`, as rmcp's `call_tool_once` does.
    async fn send(
        &self,
        mut params: CallToolRequestParams,
        run: &ToolRunContext,
    ) -> Result<CallToolResponse, ServiceError> {
        let info = self.peer.peer_info();
        let protocol = info.as_ref().map(|i| i.protocol_version.as_str());
        let span = super::trace::client_span(&mut params, protocol);
        #[cfg(feature = "otel")]
        let since = crate::telemetry::Clock::start();
        let answer = self
            .send_in_span(params, run)
            .instrument(span.clone())
            .await;
        super::trace::settle(&span, &answer);
        #[cfg(feature = "otel")]
        super::trace::record(since, &self.name, protocol, &answer);
        answer
    }

    async fn send_in_span(
        &self,
        params: CallToolRequestParams,
        run: &ToolRunContext,
    ) -> Result<CallToolResponse, ServiceError> {
        let request = ClientRequest::CallToolRequest(rmcp::model::CallToolRequest::new(params));
        let handle = self
            .peer
            .send_request_with_option(request, PeerRequestOptions::no_options())
            .await?;
        tracing::Span::current().record("jsonrpc.request.id", tracing::field::display(&handle.id));
        let _routed = self.in_flight.route(handle.progress_token.clone(), run);
        let mut abandoned = Abandoned {
            peer: self.peer.clone(),
            id: Some(handle.id.clone()),
        };
        let answer = handle.await_response().await;
        abandoned.id = None;
        match answer? {
            ServerResult::CallToolResult(result) => Ok(CallToolResponse::Complete(result)),
            ServerResult::InputRequiredResult(result) => {
                Ok(CallToolResponse::InputRequired(result))
            }
            ServerResult::CreateTaskResult(result) => Ok(CallToolResponse::Task(result)),
            other => contentless(other)
                .map(CallToolResponse::Complete)
                .ok_or(ServiceError::UnexpectedResponse),
        }
    }
}

/// A request whose answer is no longer awaited: cancelled on drop.
struct Abandoned {
    peer: Peer<RoleClient>,
    id: Option<rmcp::model::RequestId>,
}

impl Drop for Abandoned {
    fn drop(&mut self) {
        let Some(id) = self.id.take() else {
            return;
        };
        let peer = self.peer.clone();
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn(async move {
                let cancelled = rmcp::model::CancelledNotificationParam::new(
                    Some(id),
                    Some("request abandoned by the caller".to_owned()),
                );
                let _ = peer.notify_cancelled(cancelled).await;
            });
        }
    }
}

/// A `tools/call` answer without `content`, which rmcp's untagged `ServerResult` decodes as
/// another kind (as rmcp's own `call_tool_once` recovers it).
fn contentless(result: ServerResult) -> Option<rmcp::model::CallToolResult> {
    #[derive(serde::Deserialize)]
    #[serde(deny_unknown_fields)]
    struct MetaOnly {
        #[serde(rename = "_meta")]
        meta: rmcp::model::MetaObject,
    }
    let (result_type, meta) = match result {
        ServerResult::EmptyResult(_) => (None, None),
        ServerResult::TaskAckResult(ack) => (Some(ack.result_type), ack.meta),
        ServerResult::CustomResult(custom) => {
            let MetaOnly { meta } = serde_json::from_value(custom.0).ok()?;
            (None, Some(meta))
        }
        _ => return None,
    };
    let mut result = rmcp::model::CallToolResult::default();
    result.result_type = result_type;
    result.meta = meta;
    Some(result)
}

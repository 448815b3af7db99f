//! A `tools/call` served: the tool looked up in the view, the call's approval channel (the
//! client's user by elicitation, or a 2026-07-28 retry's rounds), routed as a task or run in
//! place with its progress forwarded, a suspended `ask` answered as `input_required`, and the
//! result mapped to MCP.

use super::discovery::caller_of;
use super::elicit;
use super::progress;
use super::server::McpServer;
use super::tasks::{self, Asked, Begun, Route};
use crate::call::{AgentId, ToolExecutionInput, ToolExecutionResult};
use crate::mcp::map;
use rmcp::RoleServer;
use rmcp::model::{CallToolRequestParams, CallToolResponse, ErrorData, ProtocolVersion};
use rmcp::service::RequestContext;
use serde_json::Value;
use std::sync::Arc;

impl McpServer {
    /// `tools/call`; `task`: a 2025-11-25 task-augmented call's requested TTL.
    pub(super) async fn call(
        &self,
        request: CallToolRequestParams,
        cx: RequestContext<RoleServer>,
        task: Option<Option<std::time::Duration>>,
    ) -> Result<CallToolResponse, ErrorData> {
        let name = request.name;
        if self.registry.get(&name, self.agent.as_ref()).is_none() {
            return Err(unknown_tool(&name));
        }
        let arguments = request
            .arguments
            .map_or_else(|| Value::Object(serde_json::Map::new()), Value::Object);
        let caller = caller_of(&cx);
        let modern = cx
            .protocol_version()
            .is_some_and(|v| v >= ProtocolVersion::V_2026_07_28);
        let elicit =
            self.approvals.is_enabled() && elicit::can_elicit(cx.client_capabilities().as_ref());
        // A 2026-07-28 retry answers the approval it was asked: its state must be ours, for
        // this very call, and new.
        let rounds = if elicit && modern {
            let bind = elicit::CallContext {
                server: &self.info.server_info.name,
                tool: &name,
                arguments: &arguments,
                caller: caller.as_deref(),
                view: self.agent.as_ref().map(AgentId::as_str),
            };
            Some(self.approvals.rounds(
                request.request_state.as_deref(),
                request.input_responses,
                &bind,
            )?)
        } else {
            None
        };
        let mut input =
            ToolExecutionInput::new(format!("mcp-{}", cx.id), &*name, arguments, cx.ct.clone());
        if let Some(agent) = &self.agent {
            input = input.agent(agent.clone());
        }
        input.caller = caller.clone();
        let approval = match &rounds {
            Some(rounds) => Some(rounds.channel()),
            None if elicit => Some(crate::call::CallApproval(Arc::new(elicit::Elicit {
                peer: cx.peer.clone(),
                server: self.info.server_info.name.clone(),
                timeout: self.approvals.timeout,
            }))),
            None => None,
        };
        let asked = Asked::of(&cx, modern, task);
        let route = tasks::route(self.tasks.as_ref(), &name, self.agent.as_ref(), asked)?;
        let result = match route {
            Route::Task { tasks, ttl, legacy } => {
                // Boxed: a task's start is this future's largest state (about 9 KiB), and every
                // call's future, which `call_tool` boxes, would otherwise carry it.
                let begun = Box::pin(tasks::begin(
                    tasks,
                    input,
                    approval,
                    ttl,
                    legacy.then_some(&cx),
                ))
                .await;
                match begun {
                    Begun::Task(mut task) => {
                        if !legacy {
                            self.stamp(&mut task.meta);
                        }
                        return Ok(CallToolResponse::Task(*task));
                    }
                    Begun::Settled(result) => result,
                }
            }
            Route::InPlace => match cx.meta.get_progress_token() {
                None => self.execute(input, approval).await,
                Some(token) => {
                    progress::forwarding(input, token, &cx.peer, |input| {
                        self.execute(input, approval)
                    })
                    .await
                }
            },
        };
        let Some(result) = result else {
            // Suspended at its `ask`: the client's user answers, the client retries.
            // The state binds the arguments the call was asked with: the request's own (no
            // stage before pre-execute changes them), so the retry's digest is the same.
            let ask = rounds.as_ref().and_then(|r| r.take_ask());
            let Some((ask, arguments)) = ask.and_then(|a| a.arguments.clone().map(|v| (a, v)))
            else {
                return Err(ErrorData::internal_error(
                    "a call suspended for approval without asking",
                    None,
                ));
            };
            let bind = elicit::CallContext {
                server: &self.info.server_info.name,
                tool: &name,
                arguments: &arguments,
                caller: caller.as_deref(),
                view: self.agent.as_ref().map(AgentId::as_str),
            };
            let asked = self.approvals.input_required(&ask, &bind);
            return match asked {
                Ok(mut asked) => {
                    self.stamp(&mut asked.meta);
                    Ok(asked.into())
                }
                Err(e) => {
                    let failed = ToolExecutionResult::failure(e);
                    let mut result = map::call_result(failed, modern);
                    if modern {
                        self.stamp(&mut result.meta);
                    }
                    Ok(result.into())
                }
            };
        };
        // The tool went away during the call (a remote failure carrying that code is a result).
        if result.code() == Some(crate::error::codes::UNKNOWN_TOOL)
            && self.registry.get(&name, self.agent.as_ref()).is_none()
        {
            return Err(unknown_tool(&name));
        }
        let structured_any = modern;
        let mut result = map::call_result(result, structured_any);
        if name == crate::registry::TOOL_SEARCH
            && self
                .lister(&self.mcp_tools_marked())
                .after_search(&mut result, modern)
            && let Err(e) = cx.peer.notify_tool_list_changed().await
        {
            tracing::debug!("MCP: tools/list_changed not sent to the session: {e}");
        }
        if structured_any {
            self.stamp(&mut result.meta);
        }
        Ok(result.into())
    }

    /// Runs a call through the registry, with the client's user as its approval channel when
    /// there is one; `None` when that channel suspended it (a 2026-07-28 first round).
    async fn execute(
        &self,
        input: ToolExecutionInput,
        approval: Option<crate::call::CallApproval>,
    ) -> Option<ToolExecutionResult> {
        match approval {
            Some(approval) => self.registry.execute_or_suspend(input, approval).await,
            None => Some(self.registry.execute(input).await),
        }
    }
}

fn unknown_tool(name: &str) -> ErrorData {
    ErrorData::invalid_params(format!("Unknown tool: {name}"), None)
}

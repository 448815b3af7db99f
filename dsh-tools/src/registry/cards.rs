//! Cards for a call and its result, from the definition the caller's scope resolves.

use super::Registry;
use crate::call::{AgentId, ToolExecutionResult};
use crate::present::{
    ResultSummary, ToolCallView, ToolResultView, present_call_safely, present_result_safely,
};
use serde_json::Value;

impl Registry {
    /// The call card for `name` called with `arguments` by `agent` (spec §9): the tool's call
    /// presenter, or the generic card when it has none, returns nothing or panics. Never fails.
    pub fn present_call(
        &self,
        name: &str,
        arguments: &Value,
        agent: Option<&AgentId>,
    ) -> ToolCallView {
        let tool = self.get(name, agent);
        let presenter = tool
            .as_ref()
            .and_then(|t| t.definition.present_call.as_deref());
        present_call_safely(name, presenter, arguments)
    }

    /// The result card for a settled call (spec §9), from its durable parts
    /// (`content`, `is_error`, `meta`). Never fails.
    pub fn present_result(
        &self,
        name: &str,
        arguments: &Value,
        result: &ToolExecutionResult,
        agent: Option<&AgentId>,
    ) -> ToolResultView {
        // The meta may be external JSON of any depth: copied and freed without recursion.
        let mut summary = ResultSummary {
            content: result.content().to_vec(),
            is_error: result.is_error(),
            meta: result.meta().map(crate::json::clone_deep),
        };
        let tool = self.get(name, agent);
        let presenter = tool
            .as_ref()
            .and_then(|t| t.definition.present_result.as_deref());
        let view = present_result_safely(presenter, arguments, &summary);
        if let Some(meta) = summary.meta.take() {
            crate::json::free(meta);
        }
        view
    }
}

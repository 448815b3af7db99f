//! Code Mode on a registry: the runtime `run_code` programs run on, and the effective
//! presentation mode of a scope.

use super::core::Registry;
use super::tools::PresentationMode;
use crate::call::AgentId;
use crate::code::CodeRuntime;
use std::sync::Arc;

impl Registry {
    /// Gives the registry the runtime `run_code` programs run on. Every scope whose effective
    /// mode is `code` or `both` then presents `run_code` (last in [`tools`](Self::tools) and
    /// [`schemas`](Self::schemas)); each call of it runs one program with the scope's tools bound
    /// as `tools.<name>(args)`, every binding call going through the whole pipeline.
    ///
    /// ```
    /// use dsh_tools::registry::PresentationMode;
    /// use dsh_tools::testing::{FakeOutcome, FakeRuntime};
    /// use dsh_tools::{CancellationToken, OutputDecl, Registry, ToolDefinition, ToolExecutionInput};
    /// use serde_json::json;
    ///
    /// let registry = Registry::new();
    /// registry.register(ToolDefinition::new("add", "Add.", json!({"type": "object"}), OutputDecl::json(json!({})),
    ///     |args, _| async move { Ok(json!(args["a"].as_i64().unwrap_or(0) + args["b"].as_i64().unwrap_or(0))) }))?.keep();
    /// registry.set_presentation_mode(PresentationMode::Code);
    /// // A stand-in for an engine: the "program" calls tools.add and returns the sum.
    /// registry.set_code_runtime(FakeRuntime::new(|_request, run| async move {
    ///     match run.call("tools", "add", json!({"a": 2, "b": 3})).await {
    ///         Ok(sum) => FakeOutcome::Return(Some(sum)),
    ///         Err(e) => FakeOutcome::Throw(e),
    ///     }
    /// }));
    /// assert_eq!(registry.schemas(None)?.last().unwrap().name, "run_code");
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// let args = json!({"code": "return await tools.add({a: 2, b: 3})", "description": "Add two numbers"});
    /// let result = registry.execute(ToolExecutionInput::new("c1", "run_code", args, CancellationToken::new())).await;
    /// assert_eq!(result.text(), "5");
    /// # });
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn set_code_runtime(&self, runtime: impl CodeRuntime) {
        self.write().code_runtime = Some(Arc::new(runtime));
    }

    /// The runtime `run_code` programs run on, if one was set.
    pub fn code_runtime(&self) -> Option<Arc<dyn CodeRuntime>> {
        self.read().code_runtime.clone()
    }

    /// The presentation mode in effect for `agent`: the nearest one its scope chain declares,
    /// else the registry's.
    pub fn presentation_mode(&self, agent: Option<&AgentId>) -> PresentationMode {
        self.read().effective_mode(agent)
    }

    /// The tools sent to a model or an MCP client for `agent` (Code Mode spec §2.1.2): under
    /// `code` only `run_code`, under `both` the visible tools and `run_code`, under `native` the
    /// visible tools. [`tools`](Self::tools) lists every visible tool plus `run_code` in every
    /// non-native mode (what the SDK declares and the bridge binds).
    pub fn wire_tools(&self, agent: Option<&AgentId>) -> Vec<Arc<super::RegisteredTool>> {
        let mut tools = self.tools(agent);
        if self.presentation_mode(agent) == PresentationMode::Code {
            tools.retain(|t| t.name() == crate::code::RUN_CODE);
        }
        tools
    }
}

//! Code Mode on a registry: the runtime `run_code` programs run on, and the effective
//! presentation mode of a scope.

use super::errors::RegistrationError;
use super::handle::{Registration, Registry, Target};
use super::state::CodeDispatchObserver;
use super::tools::PresentationMode;
use crate::call::AgentId;
use crate::code::{
    CODE_ONLY_INSTRUCTION, CodeDispatchRecord, CodeHostLimits, CodeRuntime, RUN_CODE, SdkTool,
    render_sdk,
};
use std::sync::Arc;

/// One section Code Mode adds to an agent's system prompt (Code Mode spec §5.1): `tools:code-only`
/// (order 99, before per-tool guidance at 100–199) under `code`, and `tools:sdk` (order 150, the
/// SDK text) under `code` and `both`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PromptSection {
    /// `tools:code-only` or `tools:sdk`.
    pub id: &'static str,
    /// Where it goes among the prompt's sections (lower first).
    pub order: u32,
    /// The text.
    pub text: String,
}

use crate::code::SDK_LANGUAGES;

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
    ///     |args, _| async move { Ok(json!(args["a"].as_i64().unwrap_or(0) + args["b"].as_i64().unwrap_or(0))) }))?;
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

    /// Sets how many sub-calls of one `run_code` program may dispatch at once (Code Mode spec
    /// §4.4.5; default [`DEFAULT_MAX_PARALLEL_SUB_CALLS`](super::DEFAULT_MAX_PARALLEL_SUB_CALLS),
    /// `1` runs them one at a time). Calls the registry classifies as exclusive always run alone.
    ///
    /// ```
    /// use dsh_tools::Registry;
    ///
    /// let registry = Registry::new();
    /// assert_eq!(registry.max_parallel_sub_calls(), 10);
    /// registry.set_max_parallel_sub_calls(2)?;
    /// assert_eq!(registry.max_parallel_sub_calls(), 2);
    /// let error = registry.set_max_parallel_sub_calls(0).unwrap_err();
    /// assert_eq!(error.to_string(), "maxParallelSubCalls must be a positive integer");
    /// # Ok::<(), dsh_tools::registry::RegistrationError>(())
    /// ```
    pub fn set_max_parallel_sub_calls(&self, max: usize) -> Result<(), RegistrationError> {
        if max == 0 {
            return Err(RegistrationError::MaxParallelSubCalls);
        }
        self.write().max_parallel_sub_calls = max;
        Ok(())
    }

    /// How many sub-calls of one `run_code` program may dispatch at once.
    pub fn max_parallel_sub_calls(&self) -> usize {
        self.read().max_parallel_sub_calls
    }

    /// Sets what one `run_code` run may hold on the host besides its engine's heap: the
    /// arguments of its calls in flight and the results it attaches (see [`CodeHostLimits`]).
    /// Runs that already started keep the limits they started with.
    pub fn set_code_host_limits(&self, limits: CodeHostLimits) {
        self.write().code_host_limits = limits;
    }

    /// What one `run_code` run may hold on the host besides its engine's heap.
    pub fn code_host_limits(&self) -> CodeHostLimits {
        self.read().code_host_limits
    }

    /// Adds an observer of the two records every `run_code` sub-call leaves when the outer call
    /// has an agent (Code Mode spec §4.8): [`Start`](crate::code::CodeDispatchKind::Start)
    /// before its pre-execute, [`Settle`](crate::code::CodeDispatchKind::Settle) at its commit,
    /// with the complete final content. Calls abandoned or refused before dispatch leave none.
    /// Records are for logs and audits; they never reach the model. An observer that panics is
    /// contained (a warning is logged).
    ///
    /// ```
    /// use dsh_tools::code::CodeDispatchRecord;
    /// use dsh_tools::{AgentId, Registry};
    /// use std::sync::{Arc, Mutex};
    ///
    /// let registry = Registry::new();
    /// let log: Arc<Mutex<Vec<String>>> = Arc::default();
    /// let sink = Arc::clone(&log);
    /// registry
    ///     .on_code_dispatch(move |agent: &AgentId, record: &CodeDispatchRecord| {
    ///         sink.lock().unwrap().push(format!("{agent}: {} {}", record.kind.record_type(), record.sub_call_id));
    ///     });
    /// ```
    pub fn on_code_dispatch(
        &self,
        observer: impl Fn(&AgentId, &CodeDispatchRecord) + Send + Sync + 'static,
    ) -> Registration {
        let id = self.id();
        self.write()
            .code_dispatch_observers
            .push((id, Arc::new(observer)));
        self.registration(Target::CodeDispatchObserver { id })
    }

    /// Tells every code-dispatch observer, outside the lock.
    pub(crate) fn record_code_dispatch(&self, agent: &AgentId, record: &CodeDispatchRecord) {
        let observers: Vec<CodeDispatchObserver> = self
            .read()
            .code_dispatch_observers
            .iter()
            .map(|o| Arc::clone(&o.1))
            .collect();
        for observer in observers {
            let outcome =
                std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| observer(agent, record)));
            if let Err(payload) = outcome {
                let error = crate::error::ToolError::from_panic_payload(payload);
                tracing::warn!(
                    "tools: code-dispatch observer failed for {}: {}",
                    record.name,
                    error.message()
                );
            }
        }
    }

    /// The sections Code Mode adds to `agent`'s system prompt (Code Mode spec §5.1): none under
    /// `native`; `tools:code-only` and `tools:sdk` under `code`; `tools:sdk` under `both`; then
    /// `tools:deferred` when tools are deferred (issue 34) and `tools:overlap`, which of the
    /// declared tools' calls may overlap under `Promise.all` (issue 39.5). The
    /// SDK declares the scope's visible tools (restrictions applied, `run_code` never), sorted,
    /// byte-identical whatever the registration order. Fails, as [`schemas`](Self::schemas)
    /// does, when the scope is not native and the registry has no runtime, or the runtime's
    /// language has no SDK renderer. [`code_prompt`](Self::code_prompt) joins them.
    pub fn code_prompt_sections(
        &self,
        agent: Option<&AgentId>,
    ) -> Result<Vec<PromptSection>, RegistrationError> {
        let mode = self.presentation_mode(agent);
        if mode == PresentationMode::Native {
            return Ok(Vec::new());
        }
        let Some(runtime) = self.code_runtime() else {
            return Err(RegistrationError::NoCodeRuntime {
                mode: mode.as_str(),
            });
        };
        let language = runtime.language();
        if !SDK_LANGUAGES.contains(&language) {
            return Err(RegistrationError::NoSdkRenderer {
                language: language.to_owned(),
            });
        }
        let tools = self.tools(agent);
        // Deferred tools are named in a section of their own, not declared (issue 34).
        let deferred = self.deferred_tools(agent);
        let hidden: std::collections::HashSet<*const super::RegisteredTool> =
            deferred.iter().map(Arc::as_ptr).collect();
        let declared: Vec<&Arc<super::RegisteredTool>> = tools
            .iter()
            .filter(|t| t.name() != RUN_CODE && !hidden.contains(&Arc::as_ptr(t)))
            .collect();
        let overlap: Vec<(&str, bool)> = declared
            .iter()
            .map(|t| (t.name(), t.definition().classifier().is_some()))
            .collect();
        let sdk: Vec<SdkTool<'_>> = declared
            .iter()
            .map(|t| SdkTool {
                name: t.name(),
                description: t.definition().description(),
                parameters: t.definition().sdk_parameters(),
                output: t.definition().sdk_output(),
            })
            .collect();
        let mut sections = Vec::with_capacity(2);
        if mode == PresentationMode::Code {
            sections.push(PromptSection {
                id: "tools:code-only",
                order: 99,
                text: CODE_ONLY_INSTRUCTION.to_owned(),
            });
        }
        sections.push(PromptSection {
            id: "tools:sdk",
            order: 150,
            text: render_sdk(&sdk),
        });
        if !deferred.is_empty() {
            let named: Vec<crate::code::DeferredSdkTool<'_>> = deferred
                .iter()
                .map(|t| crate::code::DeferredSdkTool {
                    name: t.name(),
                    namespace: t.tool_namespace().map(|n| (n.name(), n.description())),
                })
                .collect();
            sections.push(PromptSection {
                id: "tools:deferred",
                order: 151,
                text: crate::code::render_deferred(&named),
            });
        }
        if !overlap.is_empty() {
            sections.push(PromptSection {
                id: "tools:overlap",
                order: 152,
                text: crate::code::render_overlap(&overlap),
            });
        }
        Ok(sections)
    }

    /// What `agent`'s system prompt needs for Code Mode, in one string: the sections of
    /// [`code_prompt_sections`](Self::code_prompt_sections) in order, joined by a blank line
    /// (empty under `native`). Put it in the system prompt you send with
    /// [`wire_tools`](Self::wire_tools).
    ///
    /// ```
    /// use dsh_tools::registry::PresentationMode;
    /// use dsh_tools::testing::{FakeOutcome, FakeRuntime};
    /// use dsh_tools::{OutputDecl, Registry, ToolDefinition};
    /// use serde_json::json;
    ///
    /// let registry = Registry::new();
    /// registry.register(ToolDefinition::new("echo", "Echo a value.",
    ///     json!({"type": "object", "properties": {"value": {"type": "string"}}, "required": ["value"],
    ///            "additionalProperties": false}),
    ///     OutputDecl::json(json!({"type": "string"})), |args, _| async move { Ok(args["value"].clone()) }))?;
    /// assert_eq!(registry.code_prompt(None)?, ""); // native: nothing to add
    /// registry.set_presentation_mode(PresentationMode::Code);
    /// assert!(registry.code_prompt(None).is_err()); // no runtime yet
    /// registry.set_code_runtime(FakeRuntime::new(|_, _| async { FakeOutcome::Return(None) }));
    /// let prompt = registry.code_prompt(None)?;
    /// assert!(prompt.starts_with("`run_code` is the only tool you can call directly"));
    /// assert!(prompt.contains("  echo: {\n    value: string;\n  };"));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn code_prompt(&self, agent: Option<&AgentId>) -> Result<String, RegistrationError> {
        let sections = self.code_prompt_sections(agent)?;
        Ok(sections
            .into_iter()
            .map(|s| s.text)
            .collect::<Vec<_>>()
            .join("\n\n"))
    }
}

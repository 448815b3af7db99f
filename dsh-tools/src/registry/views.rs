//! The model-facing views of a registry: the definition a scope resolves for a name, the
//! schemas it presents (spec §5.5), and every visible tool with what an adapter needs.

use super::errors::RegistrationError;
use super::handle::Registry;
use super::tools::{PresentationMode, RegisteredTool, ToolSchema};
use crate::call::AgentId;
use std::sync::Arc;

impl Registry {
    /// The definition `agent`'s scope resolves for `name` (shadowing and restrictions applied).
    pub fn get(&self, name: &str, agent: Option<&AgentId>) -> Option<Arc<RegisteredTool>> {
        self.read().resolve(name, agent).cloned()
    }

    /// The model-facing schemas of every tool visible to `agent`, in view order (spec §5.5).
    /// Where the view defers tools, those are left out and `tool_search` stands in for them:
    /// what a conversation that has loaded none is shown
    /// ([`presented_schemas`](Self::presented_schemas) for one that has); without deferral,
    /// exactly the view.
    ///
    /// Fails when a definition's parameters are not lossless JSON.
    pub fn schemas(&self, agent: Option<&AgentId>) -> Result<Vec<ToolSchema>, RegistrationError> {
        self.presented_schemas_by(agent, &|_| false)
    }

    /// [`schemas`](Self::schemas), with the deferred tools `loaded` names.
    pub(super) fn presented_schemas_by(
        &self,
        agent: Option<&AgentId>,
        loaded: &dyn Fn(&str) -> bool,
    ) -> Result<Vec<ToolSchema>, RegistrationError> {
        let state = self.read();
        let mode = state.effective_mode(agent);
        if mode != PresentationMode::Native && state.code_runtime.is_none() {
            return Err(RegistrationError::NoCodeRuntime {
                mode: mode.as_str(),
            });
        }
        let tools = state.presented(agent, loaded);
        let runtime = state.code_runtime.clone();
        drop(state);
        // Spec §2.2.3: run_code's strings follow the runtime's language, read now.
        if let Some(runtime) = runtime
            && tools
                .iter()
                .any(|t| t.definition.name == crate::code::RUN_CODE)
            && !crate::code::SDK_LANGUAGES.contains(&runtime.language())
        {
            return Err(RegistrationError::NoSchemaFlavor {
                language: runtime.language().to_owned(),
            });
        }
        tools
            .into_iter()
            .map(|t| {
                if !crate::json::is_lossless(&t.definition.parameters) {
                    return Err(RegistrationError::NotLossless {
                        name: t.definition.name.clone(),
                    });
                }
                Ok(ToolSchema {
                    name: t.definition.name.clone(),
                    description: t.definition.description.clone(),
                    parameters: crate::json::clone_deep(&t.definition.parameters),
                })
            })
            .collect()
    }

    /// Every tool visible to `agent` (deferred ones too), in view order, with
    /// everything a protocol adapter needs: the definition (name, description, parameters,
    /// title, hints, presenters) and the output schema.
    ///
    /// ```
    /// use dsh_tools::{OutputDecl, Registry, ToolDefinition, ToolHints};
    /// use serde_json::json;
    ///
    /// let registry = Registry::new();
    /// let ping = ToolDefinition::new("ping", "answers pong", json!({"type": "object"}),
    ///     OutputDecl::text(), |_, _| async { Ok(json!("pong")) })
    ///     .title("Ping")
    ///     .hints(ToolHints::new().read_only(true));
    /// registry.register(ping)?;
    /// let tools = registry.tools(None);
    /// assert_eq!(tools[0].tool_title(), Some("Ping"));
    /// assert_eq!(tools[0].output().schema(), &json!({"type": "string"}));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn tools(&self, agent: Option<&AgentId>) -> Vec<Arc<RegisteredTool>> {
        self.read().view(agent)
    }
}

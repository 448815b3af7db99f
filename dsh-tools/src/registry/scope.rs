//! Agent scopes: registrations that shadow inherited ones and apply to one agent's calls.

use super::state::{self, HookKind};
use super::{
    ChangeEvent, PresentationMode, RUN_CODE, Registration, RegistrationError, Registry,
    RestrictError, Restriction, Target,
};
use crate::call::{
    AgentId, ExecuteWrapper, Guard, PostExecuteHook, PreExecuteHook, ResultObserver,
};
use crate::definition::ToolDefinition;
use crate::tool::Tool;
use std::collections::HashSet;
use std::sync::Arc;

/// An agent's scope: registrations made here shadow inherited ones and apply only to calls
/// routed through this agent (and its descendants).
#[derive(Clone, Debug)]
pub struct Scope {
    pub(super) registry: Registry,
    pub(super) agent: AgentId,
}

impl Scope {
    /// The agent.
    pub fn agent(&self) -> &AgentId {
        &self.agent
    }

    /// Registers a tool in this scope (may shadow an inherited name).
    pub fn register(
        &self,
        definition: impl Into<ToolDefinition>,
    ) -> Result<Registration, RegistrationError> {
        self.registry
            .register_in(Some(self.agent.clone()), definition.into())
    }

    /// Registers a typed tool in this scope: `register(tool.definition())`.
    pub fn register_tool(&self, tool: impl Tool) -> Result<Registration, RegistrationError> {
        self.register(tool.definition())
    }

    /// Restricts the tools this scope inherits (spec §5.3). Own tools are exempt.
    pub fn restrict(&self, restriction: Restriction) -> Result<Registration, RestrictError> {
        if restriction.allow.is_none() && restriction.deny.is_none() {
            return Err(RestrictError::NoOp);
        }
        let names: Vec<&String> = restriction
            .allow
            .iter()
            .chain(restriction.deny.iter())
            .flatten()
            .collect();
        if names.iter().any(|n| n.as_str() == RUN_CODE) {
            return Err(RestrictError::Reserved);
        }
        let id = self.registry.id();
        let mut state = self.registry.write();
        let known = state.restrictable_names(&self.agent);
        let mut unknown: Vec<String> = Vec::new();
        for n in names {
            if !known.contains(n.as_str()) && !unknown.contains(n) {
                unknown.push(n.clone());
            }
        }
        if !unknown.is_empty() {
            let mut known: Vec<String> = known.into_iter().map(str::to_owned).collect();
            known.sort();
            return Err(RestrictError::Unknown { unknown, known });
        }
        let to_set = |v: &Option<Vec<String>>| {
            v.as_ref()
                .map(|v| v.iter().cloned().collect::<HashSet<_>>())
        };
        let entry = state::RestrictionEntry {
            id,
            allow: to_set(&restriction.allow),
            deny: to_set(&restriction.deny),
        };
        state
            .layer_or_create(Some(&self.agent))
            .restrictions
            .push(entry);
        drop(state);
        let registration = self.registry.registration(Target::Restriction {
            scope: self.agent.clone(),
            id,
        });
        let event = ChangeEvent::RestrictionAdded {
            agent: self.agent.clone(),
        };
        self.registry
            .announce(registration, event)
            .map_err(RestrictError::ChangeListener)
    }

    /// Adds a guard for this agent's calls (and its descendants').
    pub fn guard(&self, guard: impl Guard) -> Registration {
        self.registry
            .add_guard(Some(self.agent.clone()), Arc::new(guard))
    }

    /// Declares this scope's presentation mode (once per scope).
    pub fn present_as(&self, mode: PresentationMode) -> Result<(), RestrictError> {
        let mut state = self.registry.write();
        let layer = state.layer_or_create(Some(&self.agent));
        match layer.mode {
            Some(existing) => Err(RestrictError::ModeConflict {
                mode: mode.as_str(),
                existing: existing.as_str(),
            }),
            None => {
                layer.mode = Some(mode);
                Ok(())
            }
        }
    }

    /// Adds a `pre-execute` hook that sees only this agent's calls (and its descendants').
    pub fn on_pre_execute(&self, hook: impl PreExecuteHook) -> Registration {
        let hook = state::AnyHook::Pre(Arc::new(hook));
        self.registry
            .add_hook(HookKind::Pre, Some(self.agent.clone()), false, hook)
    }

    /// Adds a `pre-execute` hook for this agent as the outermost one.
    pub fn on_pre_execute_first(&self, hook: impl PreExecuteHook) -> Registration {
        let hook = state::AnyHook::Pre(Arc::new(hook));
        self.registry
            .add_hook(HookKind::Pre, Some(self.agent.clone()), true, hook)
    }

    /// Adds an around-dispatch wrapper for this agent's calls.
    pub fn on_execute(&self, wrapper: impl ExecuteWrapper) -> Registration {
        let hook = state::AnyHook::Execute(Arc::new(wrapper));
        self.registry
            .add_hook(HookKind::Execute, Some(self.agent.clone()), false, hook)
    }

    /// Adds an around-dispatch wrapper for this agent's calls as the outermost one.
    pub fn on_execute_first(&self, wrapper: impl ExecuteWrapper) -> Registration {
        let hook = state::AnyHook::Execute(Arc::new(wrapper));
        self.registry
            .add_hook(HookKind::Execute, Some(self.agent.clone()), true, hook)
    }

    /// Adds a `post-execute` hook for this agent's calls.
    pub fn on_post_execute(&self, hook: impl PostExecuteHook) -> Registration {
        let hook = state::AnyHook::Post(Arc::new(hook));
        self.registry
            .add_hook(HookKind::Post, Some(self.agent.clone()), false, hook)
    }

    /// Adds a `post-execute` hook for this agent's calls as the outermost one.
    pub fn on_post_execute_first(&self, hook: impl PostExecuteHook) -> Registration {
        let hook = state::AnyHook::Post(Arc::new(hook));
        self.registry
            .add_hook(HookKind::Post, Some(self.agent.clone()), true, hook)
    }

    /// Adds a result observer for this agent's calls.
    pub fn on_result(&self, observer: impl ResultObserver) -> Registration {
        let hook = state::AnyHook::Result(Arc::new(observer));
        self.registry
            .add_hook(HookKind::Result, Some(self.agent.clone()), false, hook)
    }

    /// Removes this scope's layer and hooks.
    pub fn dispose(&self) {
        self.registry.dispose_scope(&self.agent);
    }
}

impl Registry {
    /// The scope of `agent` (created on first use).
    pub fn scope(&self, agent: impl Into<AgentId>) -> Scope {
        Scope {
            registry: self.clone(),
            agent: agent.into(),
        }
    }

    /// The scope of `agent`, inheriting from `parent`'s (subagents, spec §5.1.2).
    pub fn child_scope(&self, agent: impl Into<AgentId>, parent: impl Into<AgentId>) -> Scope {
        let agent = agent.into();
        self.write().parents.insert(agent.clone(), parent.into());
        Scope {
            registry: self.clone(),
            agent,
        }
    }

    /// Removes `agent`'s layer (tools, restrictions, guards, mode) and its hooks.
    pub fn dispose_scope(&self, agent: &AgentId) {
        let mut state = self.write();
        if let Some(layer) = state.scopes.remove(agent) {
            for entry in layer.tools.values() {
                state.tool_removed(entry.id);
            }
        }
        state.parents.remove(agent);
        state.hooks.remove_scope(agent);
        state.hooks_changed();
        drop(state);
        let event = ChangeEvent::ScopeDisposed {
            agent: agent.clone(),
        };
        if let Err(e) = self.notify(&event) {
            tracing::warn!("tools/change listener failed on {event:?}: {e}");
        }
    }
}

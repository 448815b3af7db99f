//! The registry handle and its registrations: registering, disposing and replacing tools,
//! and the plumbing every hook, guard and listener registration goes through.

use crate::call::{AgentId, ApprovalService};
use crate::definition::ToolDefinition;
use crate::error::ToolError;
use crate::schema::OutputSchema;
use crate::tool::Tool;

use super::errors::RegistrationError;
use super::event::ChangeEvent;
use super::state::{self, HookKind, State};
use super::tools::{Memo, PresentationMode, RUN_CODE, RegisteredTool};
use std::collections::HashMap;
use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, RwLock, RwLockReadGuard, RwLockWriteGuard, Weak};

pub(crate) struct Inner {
    pub(crate) state: RwLock<State>,
    next_id: AtomicU64,
    /// Bumped by every change: a call compares it to reuse what it resolved at creation.
    generation: AtomicU64,
    /// Remembered approval answers.
    pub(crate) grants: crate::call::Grants,
    /// Where `run_code` sub-calls of each tool are dispatched, learned from how they ran.
    pub(crate) placements: Arc<crate::run_code::placement::Placements>,
}

impl Inner {
    pub(super) fn write(&self) -> RwLockWriteGuard<'_, State> {
        let guard = self.state.write().unwrap_or_else(|e| e.into_inner());
        self.generation.fetch_add(1, Ordering::AcqRel);
        guard
    }
}

/// The tool registry: a cheap `Clone` handle over shared state.
///
/// ```
/// use dsh_tools::{OutputDecl, Registry, ToolDefinition};
/// use serde_json::json;
///
/// let registry = Registry::new();
/// registry
///     .register(ToolDefinition::new("ping", "answers pong", json!({"type": "object"}), OutputDecl::text(),
///         |_, _| async { Ok(json!("pong")) }))?;
/// assert_eq!(registry.schemas(None)?[0].name, "ping");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone)]
pub struct Registry {
    pub(crate) inner: Arc<Inner>,
}

impl Default for Registry {
    fn default() -> Self {
        Self::new()
    }
}

impl fmt::Debug for Registry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let state = self.read();
        f.debug_struct("Registry")
            .field(
                "global_tools",
                &state.global.tools.keys().collect::<Vec<_>>(),
            )
            .field("scopes", &state.scopes.keys().collect::<Vec<_>>())
            .finish_non_exhaustive()
    }
}

/// The handle of one registration (a tool, restriction, guard, hook or listener): call
/// [`dispose`](Self::dispose) to undo it. Dropping or ignoring the handle keeps the registration,
/// as the spec's disposer does (`registry.register(tool)?;` registers for good).
pub struct Registration {
    registry: Weak<Inner>,
    target: Target,
}

#[derive(Clone)]
pub(crate) enum Target {
    Tool {
        scope: Option<AgentId>,
        name: String,
        id: u64,
    },
    Restriction {
        scope: AgentId,
        id: u64,
    },
    Guard {
        scope: Option<AgentId>,
        id: u64,
    },
    Hook {
        kind: HookKind,
        id: u64,
    },
    ChangeListener {
        id: u64,
    },
    CodeDispatchObserver {
        id: u64,
    },
    /// Scope rules: checked before every call's hooks and guards, and a visibility filter.
    ScopeRules {
        id: u64,
    },
    Nothing,
}

impl fmt::Debug for Registration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Registration")
    }
}

impl Registration {
    /// Undoes the registration now (a second dispose of the same registration, or one after the
    /// registry is gone, does nothing).
    pub fn dispose(mut self) {
        let target = std::mem::replace(&mut self.target, Target::Nothing);
        let Some(inner) = self.registry.upgrade() else {
            return;
        };
        let event = remove(&mut inner.write(), target);
        if let Some(event) = event {
            let registry = Registry { inner };
            if let Err(e) = registry.notify(&event) {
                tracing::warn!("tools/change listener failed on {event:?}: {e}");
            }
        }
    }

    /// Keeps the registration for the registry's lifetime: what dropping the handle does too
    /// (kept so that code written when dropping undid a registration still reads clearly).
    pub fn keep(self) {}

    /// A guard that disposes the registration when it is dropped: a hook or tool for the
    /// length of a scope.
    ///
    /// ```
    /// use dsh_tools::{OutputDecl, Registry, ToolDefinition};
    /// use serde_json::json;
    ///
    /// let registry = Registry::new();
    /// let tool = || ToolDefinition::new("t", "d", json!({}), OutputDecl::text(), |_, _| async { Ok(json!("")) });
    /// {
    ///     let _scoped = registry.register(tool()).unwrap().scoped();
    ///     assert_eq!(registry.schemas(None).unwrap().len(), 1);
    /// }
    /// assert_eq!(registry.schemas(None).unwrap().len(), 0);
    /// registry.register(tool()).unwrap(); // dropped: kept
    /// assert_eq!(registry.schemas(None).unwrap().len(), 1);
    /// ```
    pub fn scoped(self) -> ScopedRegistration {
        ScopedRegistration(Some(self))
    }
}

/// A [`Registration`] disposed when dropped ([`Registration::scoped`]).
#[must_use = "dropping a ScopedRegistration undoes the registration at once"]
#[derive(Debug)]
pub struct ScopedRegistration(Option<Registration>);

impl ScopedRegistration {
    /// Undoes the registration now.
    pub fn dispose(mut self) {
        if let Some(r) = self.0.take() {
            r.dispose();
        }
    }

    /// Keeps the registration after all.
    pub fn keep(mut self) {
        self.0.take();
    }

    /// The registration, no longer disposed on drop.
    #[cfg(feature = "mcp")]
    pub(crate) fn into_inner(mut self) -> Option<Registration> {
        self.0.take()
    }
}

impl Drop for ScopedRegistration {
    fn drop(&mut self) {
        if let Some(r) = self.0.take() {
            r.dispose();
        }
    }
}

/// Undoes one registration; the change to announce, if any.
pub(super) fn remove(state: &mut State, target: Target) -> Option<ChangeEvent> {
    match target {
        Target::Tool { scope, name, id } => {
            let layer = state.layer_mut(scope.as_ref())?;
            if layer.tools.get(&name).is_none_or(|e| e.id != id) {
                return None;
            }
            layer.tools.shift_remove(&name);
            state.tool_removed(id);
            Some(ChangeEvent::ToolRemoved { name, agent: scope })
        }
        Target::Restriction { scope, id } => {
            let layer = state.scopes.get_mut(&scope)?;
            let before = layer.restrictions.len();
            layer.restrictions.retain(|r| r.id != id);
            (layer.restrictions.len() < before)
                .then_some(ChangeEvent::RestrictionRemoved { agent: scope })
        }
        Target::Guard { scope, id } => {
            if let Some(layer) = state.layer_mut(scope.as_ref()) {
                layer.guards.retain(|g| g.0 != id);
            }
            state.guards_changed();
            None
        }
        Target::Hook { kind, id } => {
            state.hooks.remove(kind, id);
            state.hooks_changed();
            None
        }
        Target::ChangeListener { id } => {
            state.change_listeners.retain(|l| l.0 != id);
            None
        }
        Target::CodeDispatchObserver { id } => {
            state.code_dispatch_observers.retain(|l| l.0 != id);
            None
        }
        Target::ScopeRules { id } => {
            state.visibility.retain(|v| v.0 != id);
            state.visibility_changed();
            None
        }
        Target::Nothing => None,
    }
}

impl Registry {
    /// An empty registry in `native` presentation mode.
    pub fn new() -> Self {
        Self {
            inner: Arc::new(Inner {
                state: RwLock::new(State::default()),
                next_id: AtomicU64::new(1),
                generation: AtomicU64::new(0),
                grants: Default::default(),
                placements: Default::default(),
            }),
        }
    }

    pub(crate) fn read(&self) -> RwLockReadGuard<'_, State> {
        self.inner.state.read().unwrap_or_else(|e| e.into_inner())
    }

    pub(super) fn write(&self) -> RwLockWriteGuard<'_, State> {
        self.inner.write()
    }

    /// The current generation (see `Inner::generation`).
    pub(crate) fn generation(&self) -> u64 {
        self.inner.generation.load(Ordering::Acquire)
    }

    pub(super) fn id(&self) -> u64 {
        self.inner.next_id.fetch_add(1, Ordering::Relaxed)
    }

    pub(super) fn registration(&self, target: Target) -> Registration {
        Registration {
            registry: Arc::downgrade(&self.inner),
            target,
        }
    }

    /// Registers a tool in the global layer (spec §4.2): a [`ToolDefinition`], or a `#[tool]`
    /// type (`registry.register(ReadFile)`).
    pub fn register(
        &self,
        definition: impl Into<ToolDefinition>,
    ) -> Result<Registration, RegistrationError> {
        self.register_in(None, definition.into())
    }

    /// Registers a typed tool: the same as [`register`](Self::register)`(tool)`, which is the
    /// one way the docs use (kept for code that names the [`Tool`] trait).
    pub fn register_tool(&self, tool: impl Tool) -> Result<Registration, RegistrationError> {
        self.register(tool.definition())
    }

    /// The checks every registration passes before it touches the state.
    fn checked(definition: ToolDefinition) -> Result<Arc<RegisteredTool>, RegistrationError> {
        let name = &definition.name;
        if let Some(error) = &definition.invalid {
            return Err(RegistrationError::Schema {
                name: name.clone(),
                error: (**error).clone(),
            });
        }
        let output = OutputSchema::new(&definition.output.schema)
            .map_err(RegistrationError::OutputSchema)?;
        if definition.timeout.is_some_and(|t| t.is_zero()) {
            return Err(RegistrationError::Timeout { name: name.clone() });
        }
        if name == RUN_CODE {
            return Err(RegistrationError::Reserved);
        }
        if [
            super::tool_search::TOOL_SEARCH,
            crate::code::PROGRAM_SEARCH,
            crate::code::PROGRAM_DESCRIBE,
        ]
        .contains(&name.as_str())
        {
            return Err(RegistrationError::SearchReserved { name: name.clone() });
        }
        Ok(Arc::new(RegisteredTool {
            definition,
            output,
            memo: Memo::default(),
        }))
    }

    pub(super) fn register_in(
        &self,
        scope: Option<AgentId>,
        definition: ToolDefinition,
    ) -> Result<Registration, RegistrationError> {
        let tool = Self::checked(definition)?;
        let name = tool.definition.name.clone();
        let id = self.id();
        let mut state = self.write();
        let layer = state.layer_or_create(scope.as_ref());
        if layer.tools.contains_key(&name) {
            return Err(RegistrationError::Duplicate {
                name,
                scoped: scope.is_some(),
            });
        }
        layer.tools.insert(
            name.clone(),
            state::Entry {
                id,
                tool: Arc::clone(&tool),
            },
        );
        state.tool_added(id, &tool);
        drop(state);
        // A new body under this name: how the old one ran says nothing of it.
        self.inner.placements.forget(&name);
        let registration = self.registration(Target::Tool {
            scope: scope.clone(),
            name: name.clone(),
            id,
        });
        self.announce(
            registration,
            ChangeEvent::ToolRegistered { name, agent: scope },
        )
        .map_err(RegistrationError::ChangeListener)
    }

    /// Replaces the tool that `old` registered with `definition` in one step, keeping its place
    /// in the order: a call in between finds the old definition or the new one, never neither.
    /// When `old` no longer holds its name (or names another), it is disposed and `definition`
    /// registered as usual.
    #[cfg(feature = "mcp")]
    pub(crate) fn replace_tool(
        &self,
        old: Registration,
        definition: ToolDefinition,
    ) -> Result<Registration, RegistrationError> {
        let mut old = old;
        let same_registry = old.registry.ptr_eq(&Arc::downgrade(&self.inner));
        let (scope, name, id) = match &old.target {
            Target::Tool { scope, name, id } if same_registry && *name == definition.name => {
                (scope.clone(), name.clone(), *id)
            }
            _ => {
                let scope = match &old.target {
                    Target::Tool { scope, .. } => scope.clone(),
                    _ => None,
                };
                old.dispose();
                return self.register_in(scope, definition);
            }
        };
        // Checked before anything changes: a definition that does not register leaves the
        // old one undone (its handle would otherwise be lost with it).
        let tool = match Self::checked(definition) {
            Ok(tool) => tool,
            Err(e) => {
                old.dispose();
                return Err(e);
            }
        };
        old.target = Target::Nothing;
        let new_id = self.id();
        let mut state = self.write();
        let layer = state.layer_or_create(scope.as_ref());
        let entry = state::Entry {
            id: new_id,
            tool: Arc::clone(&tool),
        };
        let previous = match layer.tools.get_mut(&name) {
            Some(current) if current.id == id => Some(std::mem::replace(current, entry)),
            Some(_) => {
                return Err(RegistrationError::Duplicate {
                    name,
                    scoped: scope.is_some(),
                });
            }
            None => {
                layer.tools.insert(name.clone(), entry);
                None
            }
        };
        if let Some(previous) = &previous {
            state.tool_removed(previous.id);
        }
        state.tool_added(new_id, &tool);
        drop(state);
        self.inner.placements.forget(&name);
        let event = ChangeEvent::ToolRegistered {
            name: name.clone(),
            agent: scope.clone(),
        };
        if let Err(e) = self.notify(&event) {
            // A listener refused the new version: the old one comes back where it stood.
            let mut state = self.write();
            if let Some(layer) = state.layer_mut(scope.as_ref()) {
                let back = match (layer.tools.get_mut(&name), previous) {
                    (Some(current), Some(previous)) if current.id == new_id => {
                        let back = (previous.id, Arc::clone(&previous.tool));
                        *current = previous;
                        Some(Some(back))
                    }
                    (Some(current), None) if current.id == new_id => {
                        layer.tools.shift_remove(&name);
                        Some(None)
                    }
                    _ => None,
                };
                if let Some(back) = back {
                    state.tool_removed(new_id);
                    if let Some((id, tool)) = back {
                        state.tool_added(id, &tool);
                    }
                }
            }
            return Err(RegistrationError::ChangeListener(e));
        }
        Ok(self.registration(Target::Tool {
            scope,
            name,
            id: new_id,
        }))
    }

    /// Disposes many registrations at once: removing `n` tools from a layer costs one pass over
    /// it, where disposing them one by one shifts the registration order `n` times (quadratic:
    /// 40,000 tools took seconds). Listeners are told of every removal. Registrations of another
    /// registry are disposed one by one.
    ///
    /// ```
    /// use dsh_tools::{OutputDecl, Registry, ToolDefinition};
    /// use serde_json::json;
    ///
    /// let registry = Registry::new();
    /// let tool = |name: String| ToolDefinition::new(name, "d", json!({}), OutputDecl::text(),
    ///     |_, _| async { Ok(json!("")) });
    /// let plugin: Vec<_> = (0..1000)
    ///     .map(|i| registry.register(tool(format!("t{i}"))).unwrap())
    ///     .collect();
    /// registry.register(tool("kept".into()))?;
    /// registry.dispose_all(plugin);
    /// assert_eq!(registry.schemas(None)?.len(), 1);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn dispose_all(&self, registrations: impl IntoIterator<Item = Registration>) {
        let this = Arc::downgrade(&self.inner);
        // Per layer, per name, every id to remove (a name may have been registered twice).
        let mut tools: HashMap<Option<AgentId>, rustc_hash::FxHashMap<String, Vec<u64>>> =
            HashMap::new();
        let mut events = Vec::new();
        let mut foreign = Vec::new();
        {
            let mut state = self.write();
            for mut registration in registrations {
                if !registration.registry.ptr_eq(&this) {
                    foreign.push(registration);
                    continue;
                }
                match std::mem::replace(&mut registration.target, Target::Nothing) {
                    Target::Tool { scope, name, id } => {
                        tools
                            .entry(scope)
                            .or_default()
                            .entry(name)
                            .or_default()
                            .push(id);
                    }
                    other => events.extend(remove(&mut state, other)),
                }
            }
            let mut gone_ids = Vec::new();
            for (scope, names) in tools {
                let Some(layer) = state.layer_mut(scope.as_ref()) else {
                    continue;
                };
                layer.tools.retain(|name, entry| {
                    let gone = names.get(name).is_some_and(|ids| ids.contains(&entry.id));
                    if gone {
                        gone_ids.push(entry.id);
                        events.push(ChangeEvent::ToolRemoved {
                            name: name.clone(),
                            agent: scope.clone(),
                        });
                    }
                    !gone
                });
            }
            for id in gone_ids {
                state.tool_removed(id);
            }
        }
        // Another registry's handles, outside our lock (their listeners may read this one).
        for registration in foreign {
            registration.dispose();
        }
        for event in events {
            if let Err(e) = self.notify(&event) {
                tracing::warn!("tools/change listener failed on {event:?}: {e}");
            }
        }
    }

    /// Tells the listeners of an addition; if one fails, undoes it (silently) and fails.
    pub(crate) fn announce(
        &self,
        registration: Registration,
        event: ChangeEvent,
    ) -> Result<Registration, ToolError> {
        match self.notify(&event) {
            Ok(()) => Ok(registration),
            Err(e) => {
                let mut registration = registration;
                let target = std::mem::replace(&mut registration.target, Target::Nothing);
                remove(&mut self.write(), target);
                Err(e)
            }
        }
    }

    /// Sets the registry-wide presentation mode (default `native`).
    pub fn set_presentation_mode(&self, mode: PresentationMode) {
        self.write().mode = mode;
    }

    /// Switches on `repair` for arguments that do not validate ([`Repair`](crate::pipeline::Repair)):
    /// the repairs switched on are tried in that order before pre-execute, and kept only when
    /// the repaired arguments validate (the call then runs with them, and its result carries a
    /// context telling the model what was repaired). Off by default: a model's arguments are
    /// its own. With any repair on, every call's arguments are validated once more before its
    /// hooks.
    ///
    /// ```
    /// use dsh_tools::{Registry, pipeline::Repair};
    /// let registry = Registry::new();
    /// registry.repair(Repair::ScalarStrings);
    /// assert_eq!(registry.repairs(), [Repair::ScalarStrings]);
    /// ```
    pub fn repair(&self, repair: crate::call::Repair) {
        let mut state = self.write();
        if !state.repairs.contains(&repair) {
            let mut repairs = state.repairs.to_vec();
            repairs.push(repair);
            state.repairs = repairs.into();
        }
    }

    /// A repair of the host's own, tried after the built-in [`repair`](Self::repair)s left a
    /// call's arguments invalid: it sees the arguments as sent, every violation and the
    /// parameters, and may return repaired arguments, which are validated again (never
    /// trusted: invalid ones leave the call to fail as it would have). A hook that panics
    /// repairs nothing. One hook: a second replaces the first.
    ///
    /// ```
    /// use dsh_tools::{Registry, pipeline::InvalidCall};
    /// use serde_json::json;
    /// let registry = Registry::new();
    /// // Models that wrap their arguments in {"input": {...}}: unwrap them.
    /// registry.on_invalid_call(|call: &InvalidCall<'_>| call.arguments.get("input").cloned());
    /// ```
    pub fn on_invalid_call(
        &self,
        hook: impl Fn(&crate::call::InvalidCall<'_>) -> Option<serde_json::Value>
        + Send
        + Sync
        + 'static,
    ) {
        self.write().repair_hook = Some(Arc::new(hook));
    }

    /// The repairs switched on, in the order they are tried.
    pub fn repairs(&self) -> Vec<crate::call::Repair> {
        self.read().repairs.to_vec()
    }

    /// Mounts the approval service that resolves `ask` decisions.
    pub fn set_approval_service(&self, service: impl ApprovalService) {
        let mut state = self.write();
        state.approval = Some(Arc::new(service));
        state.hooks_changed();
    }
}

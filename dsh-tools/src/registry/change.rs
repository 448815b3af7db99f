//! `tools/change` (spec §4.2.2, §4.2.3, §5.3.2): listeners told after every change of what the
//! registry exposes.

use super::{Registration, Registry, Target};
use crate::error::ToolError;
use crate::call::AgentId;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;

/// A change of what the registry exposes. `agent` is the scope it happened in (`None`: global).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ChangeEvent {
    /// A tool was registered.
    ToolRegistered {
        /// The tool.
        name: String,
        /// The scope.
        agent: Option<AgentId>,
    },
    /// A tool registration was undone.
    ToolRemoved {
        /// The tool.
        name: String,
        /// The scope.
        agent: Option<AgentId>,
    },
    /// A restriction was added to a scope.
    RestrictionAdded {
        /// The scope.
        agent: AgentId,
    },
    /// A restriction was lifted.
    RestrictionRemoved {
        /// The scope.
        agent: AgentId,
    },
    /// A scope's layer and hooks were removed.
    ScopeDisposed {
        /// The scope.
        agent: AgentId,
    },
}

/// A `tools/change` listener. An `Err` (or a panic) from a listener told of an addition rolls the
/// addition back and fails it; failures on removals are logged.
pub type ChangeListener = Arc<dyn Fn(&ChangeEvent) -> Result<(), ToolError> + Send + Sync>;

impl Registry {
    /// Adds a `tools/change` listener.
    ///
    /// ```
    /// use dsh_tools::registry::ChangeEvent;
    /// use dsh_tools::{OutputDecl, Registry, ToolDefinition, ToolError};
    /// use serde_json::json;
    /// use std::sync::{Arc, Mutex};
    ///
    /// let registry = Registry::new();
    /// let seen = Arc::new(Mutex::new(Vec::new()));
    /// let s = seen.clone();
    /// registry.on_change(move |e: &ChangeEvent| { s.lock().unwrap().push(e.clone()); Ok(()) }).keep();
    /// let tool = || ToolDefinition::new("t", "t", json!({}), OutputDecl::text(), |_, _| async { Ok(json!("")) });
    /// registry.register(tool()).unwrap().dispose();
    /// assert_eq!(seen.lock().unwrap().len(), 2); // registered, then removed
    ///
    /// // A failing listener rolls the registration back.
    /// registry.on_change(|e: &ChangeEvent| match e {
    ///     ChangeEvent::ToolRegistered { .. } => Err(ToolError::new("not now")),
    ///     _ => Ok(()),
    /// }).keep();
    /// assert!(registry.register(tool()).is_err());
    /// assert!(registry.get("t", None).is_none());
    /// ```
    pub fn on_change(
        &self,
        listener: impl Fn(&ChangeEvent) -> Result<(), ToolError> + Send + Sync + 'static,
    ) -> Registration {
        let id = self.id();
        self.write().change_listeners.push((id, Arc::new(listener)));
        self.registration(Target::ChangeListener { id })
    }

    /// Tells every listener (outside the lock, so listeners may use the registry); the first
    /// failure is returned after all were told.
    pub(crate) fn notify(&self, event: &ChangeEvent) -> Result<(), ToolError> {
        let listeners: Vec<ChangeListener> = self
            .read()
            .change_listeners
            .iter()
            .map(|l| Arc::clone(&l.1))
            .collect();
        notify_all(&listeners, event)
    }
}

pub(crate) fn notify_all(
    listeners: &[ChangeListener],
    event: &ChangeEvent,
) -> Result<(), ToolError> {
    let mut first = None;
    for listener in listeners {
        let outcome = std::panic::catch_unwind(AssertUnwindSafe(|| listener(event)))
            .unwrap_or_else(|payload| Err(ToolError::from_panic_payload(payload)));
        if let Err(e) = outcome {
            first.get_or_insert(e);
        }
    }
    first.map_or(Ok(()), Err)
}

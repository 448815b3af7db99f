//! `tools/change` listeners on a registry: told after every change of what it exposes.

use super::event::{ChangeEvent, ChangeListener, notify_all};
use super::{Registration, Registry, Target};
use crate::error::ToolError;
use std::sync::Arc;

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
    /// registry.on_change(move |e: &ChangeEvent| { s.lock().unwrap().push(e.clone()); Ok(()) });
    /// let tool = || ToolDefinition::new("t", "t", json!({}), OutputDecl::text(), |_, _| async { Ok(json!("")) });
    /// registry.register(tool()).unwrap().dispose();
    /// assert_eq!(seen.lock().unwrap().len(), 2); // registered, then removed
    ///
    /// // A failing listener rolls the registration back.
    /// registry.on_change(|e: &ChangeEvent| match e {
    ///     ChangeEvent::ToolRegistered { .. } => Err(ToolError::new("not now")),
    ///     _ => Ok(()),
    /// });
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

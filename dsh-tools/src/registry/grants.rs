//! The registry's approval memory: remembered answers (grants), consulted before the approval
//! service is asked, listable and revocable; and the store deferred approvals wait in.

use super::handle::Registry;
use crate::call::{Grant, GrantKey};

impl Registry {
    /// Sets where deferred approvals wait
    /// ([`MemoryApprovalStore`](crate::pipeline::MemoryApprovalStore) by default; a Redis store
    /// lets another instance, or this one after a restart, answer them). See
    /// [`execute_deferred`](Self::execute_deferred).
    pub fn set_approval_store(&self, store: impl crate::call::ApprovalStore) {
        self.write().approval_store = std::sync::Arc::new(store);
    }

    /// Where deferred approvals wait.
    pub fn approval_store(&self) -> std::sync::Arc<dyn crate::call::ApprovalStore> {
        std::sync::Arc::clone(&self.read().approval_store)
    }

    /// The remembered approval answers, oldest first: what an
    /// [`AllowedAlways`](crate::ApprovalOutcome::AllowedAlways) or
    /// [`RejectedAlways`](crate::ApprovalOutcome::RejectedAlways) answer kept, and what
    /// [`grant`](Self::grant) added. Serializable, so a host can keep them across restarts and
    /// give them back with [`grant`](Self::grant).
    ///
    /// ```
    /// use dsh_tools::{AgentId, Grant, GrantDecision, GrantKey, Registry};
    ///
    /// let registry = Registry::new();
    /// let key = GrantKey::new("write_file").agent(AgentId::new("coder"));
    /// registry.grant(Grant { key: key.clone(), decision: GrantDecision::Allow });
    /// assert_eq!(registry.grants().len(), 1);
    /// assert!(registry.revoke(&key));
    /// assert!(registry.grants().is_empty());
    /// ```
    pub fn grants(&self) -> Vec<Grant> {
        self.inner
            .grants
            .0
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// Remembers an answer: calls `grant.key` covers are allowed (guards still run) or rejected
    /// without asking the approval service. Replaces a grant with the same key; `true` when it
    /// did. A grant only answers `ask` decisions: it never allows what a pre-execute hook
    /// denied, a guard refuses or a restriction hides.
    pub fn grant(&self, grant: Grant) -> bool {
        self.inner.grants.insert(grant)
    }

    /// Forgets the grant with exactly this key; `false` when there was none.
    pub fn revoke(&self, key: &GrantKey) -> bool {
        let mut grants = self
            .inner
            .grants
            .0
            .write()
            .unwrap_or_else(|e| e.into_inner());
        let before = grants.len();
        grants.retain(|g| &g.key != key);
        grants.len() != before
    }
}

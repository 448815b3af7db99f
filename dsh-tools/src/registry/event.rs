//! `tools/change` events (spec §4.2.2, §4.2.3, §5.3.2) and how listeners are told.

use crate::call::AgentId;
use crate::error::ToolError;
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

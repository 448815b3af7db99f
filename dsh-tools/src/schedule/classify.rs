//! Concurrency classification (spec §7.1): whether a call may overlap its parallel neighbours,
//! from the classifier of the tool it resolves to.

use crate::call::{AgentId, ExecutionToken, ToolExecutionInput};
use crate::pipeline::dispatch::resolve_call;
use crate::registry::Registry;
use serde_json::Value;
use std::panic::AssertUnwindSafe;

/// How a call may be scheduled.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ExecutionMode {
    /// May overlap with its parallel neighbours.
    Parallel,
    /// Runs alone.
    Exclusive,
}

impl Registry {
    /// Classifies a call (spec §7.1): `Parallel` only when the tool the call resolves to (scope,
    /// restrictions and Code Mode applied) has a classifier that returns `true` for the raw
    /// arguments. Unknown, hidden or collapsed tools, a missing classifier, or a panicking one:
    /// `Exclusive`. Never fails.
    pub fn execution_mode(
        &self,
        name: &str,
        arguments: &Value,
        agent: Option<&AgentId>,
        parent: Option<ExecutionToken>,
    ) -> ExecutionMode {
        let Some(tool) = resolve_call(self, name, agent, parent.is_some()) else {
            return ExecutionMode::Exclusive;
        };
        let Some(classifier) = tool.definition().classifier() else {
            return ExecutionMode::Exclusive;
        };
        match std::panic::catch_unwind(AssertUnwindSafe(|| classifier(arguments))) {
            Ok(true) => ExecutionMode::Parallel,
            Ok(false) => ExecutionMode::Exclusive,
            Err(payload) => {
                crate::error::drop_panic_payload(payload);
                ExecutionMode::Exclusive
            }
        }
    }

    pub(super) fn mode_of(&self, input: &ToolExecutionInput) -> ExecutionMode {
        self.execution_mode(
            &input.name,
            &input.arguments,
            input.agent.as_ref(),
            input.parent,
        )
    }
}

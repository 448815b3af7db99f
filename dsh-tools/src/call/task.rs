//! Whether a tool may run as a task (detached, polled later): the declaration a definition
//! carries. What runs a task is [`task`](crate::task), above the pipeline.

use serde::{Deserialize, Serialize};

/// Whether a tool's calls may run as tasks ([`Tasks`](crate::task::Tasks)): the MCP
/// `execution.taskSupport` of a tool (2025-11-25) and whether the server may answer its calls
/// with a task (the 2026-07-28 tasks extension).
///
/// ```
/// use dsh_tools::task::TaskSupport;
///
/// assert_eq!(TaskSupport::default(), TaskSupport::Forbidden);
/// assert_eq!(serde_json::to_value(TaskSupport::Optional).unwrap(), "optional");
/// assert!(TaskSupport::Required.allows_task());
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TaskSupport {
    /// Calls run in place (the default).
    #[default]
    Forbidden,
    /// A caller may ask for a task or wait for the result.
    Optional,
    /// Calls run only as tasks (an MCP client that cannot take a task is refused).
    Required,
}

impl TaskSupport {
    /// Whether a call may become a task.
    pub fn allows_task(self) -> bool {
        !matches!(self, Self::Forbidden)
    }

    /// The name MCP gives it: `forbidden`, `optional` or `required`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Forbidden => "forbidden",
            Self::Optional => "optional",
            Self::Required => "required",
        }
    }
}

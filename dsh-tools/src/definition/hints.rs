//! A tool's behaviour hints for hosts and protocol adapters (MCP's tool annotations): each
//! optional, describing and never granting.

/// Behaviour hints about a tool, for hosts and protocol adapters (MCP's tool annotations).
///
/// Each hint is optional: `None` means the tool says nothing, and a consumer applies its own
/// default (MCP's are `read_only: false`, `destructive: true`, `idempotent: false`,
/// `open_world: true`). Hints describe; they never grant or deny anything in the pipeline.
///
/// ```
/// use dsh_tools::ToolHints;
///
/// let hints = ToolHints::new().read_only(true).open_world(false);
/// assert_eq!(hints.read_only, Some(true));
/// assert_eq!(hints.destructive, None);
/// ```
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ToolHints {
    /// The tool does not modify its environment.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_only: Option<bool>,
    /// The tool may perform destructive updates (meaningful when not read-only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub destructive: Option<bool>,
    /// Calling it again with the same arguments has no further effect.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idempotent: Option<bool>,
    /// The tool interacts with an open world of external entities (the web, say).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub open_world: Option<bool>,
}

impl ToolHints {
    /// No hints.
    pub const fn new() -> Self {
        Self {
            read_only: None,
            destructive: None,
            idempotent: None,
            open_world: None,
        }
    }

    /// Sets `read_only`.
    pub const fn read_only(mut self, value: bool) -> Self {
        self.read_only = Some(value);
        self
    }

    /// Sets `destructive`.
    pub const fn destructive(mut self, value: bool) -> Self {
        self.destructive = Some(value);
        self
    }

    /// Sets `idempotent`.
    pub const fn idempotent(mut self, value: bool) -> Self {
        self.idempotent = Some(value);
        self
    }

    /// Sets `open_world`.
    pub const fn open_world(mut self, value: bool) -> Self {
        self.open_world = Some(value);
        self
    }

    /// Whether no hint is set.
    pub const fn is_empty(&self) -> bool {
        self.read_only.is_none()
            && self.destructive.is_none()
            && self.idempotent.is_none()
            && self.open_world.is_none()
    }
}

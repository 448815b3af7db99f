//! What the registry keeps for large catalogs: the search index over every registered tool
//! (built the first time it is needed, then kept current one registration at a time), and the
//! rules that defer tools' loading.

use super::tools::RegisteredTool;
use crate::search::{Document, Index};
use rustc_hash::FxHashMap;
use std::sync::Arc;

/// Which tools a layer defers (leaves out of the tool list until a search loads them), for
/// those whose definition does not say ([`ToolDefinition::defer_loading`](crate::ToolDefinition::defer_loading)).
///
/// ```
/// use dsh_tools::{Registry, registry::DeferRule};
///
/// let registry = Registry::new();
/// // Everything imported from the `github` server waits for a search.
/// registry.defer_loading(DeferRule::namespace("github"));
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum DeferRule {
    /// Every tool.
    All,
    /// The tools of this namespace.
    Namespace(String),
    /// These tools.
    Tools(Vec<String>),
}

impl DeferRule {
    /// Every tool.
    pub fn all() -> Self {
        Self::All
    }

    /// The tools of namespace `name`.
    pub fn namespace(name: impl Into<String>) -> Self {
        Self::Namespace(name.into())
    }

    /// The tools named `names`.
    pub fn tools(names: impl IntoIterator<Item = impl Into<String>>) -> Self {
        Self::Tools(names.into_iter().map(Into::into).collect())
    }

    /// Whether the rule defers `tool`.
    pub(crate) fn defers(&self, tool: &RegisteredTool) -> bool {
        match self {
            Self::All => true,
            Self::Namespace(name) => tool
                .definition
                .namespace
                .as_ref()
                .is_some_and(|n| n.name() == name),
            Self::Tools(names) => names.contains(&tool.definition.name),
        }
    }
}

/// The index over every registered tool of every layer, keyed by registration id (unique for
/// the registry's life, so a key is never reused).
#[derive(Default)]
pub(crate) struct Catalog {
    pub(crate) index: Index<u64>,
    pub(crate) tools: FxHashMap<u64, Arc<RegisteredTool>>,
}

impl Catalog {
    pub(crate) fn insert(&mut self, id: u64, tool: &Arc<RegisteredTool>) {
        let definition = &tool.definition;
        self.index.insert(
            id,
            Document {
                name: &definition.name,
                namespace: definition.namespace.as_ref().map_or("", |n| n.name()),
                description: &definition.description,
                parameters: &definition.parameters,
            },
        );
        self.tools.insert(id, Arc::clone(tool));
    }

    pub(crate) fn remove(&mut self, id: u64) {
        self.index.remove(&id);
        self.tools.remove(&id);
    }
}

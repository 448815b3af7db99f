//! What the registry holds of a tool, and the small types around it: the registered tool and
//! what adapters derive from it once, the presentation mode, the model-facing schema, and
//! restrictions.

use crate::definition::ToolDefinition;
use crate::schema::OutputSchema;
use serde::Serialize;
use serde_json::Value;
use std::fmt;
use std::sync::Arc;

pub use crate::code::RUN_CODE;

/// How tools are presented to the model (spec §5.7).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum PresentationMode {
    /// Every visible tool is callable directly.
    #[default]
    Native,
    /// Only `run_code` is callable directly; other tools are called from inside its programs.
    Code,
    /// Both.
    Both,
}

impl PresentationMode {
    /// The mode's name (`native`, `code`, `both`).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Native => "native",
            Self::Code => "code",
            Self::Both => "both",
        }
    }
}

/// A registered tool: its definition and its compiled output schema.
pub struct RegisteredTool {
    pub(crate) definition: ToolDefinition,
    pub(crate) output: OutputSchema,
    /// What adapters derive from this definition once (a provider export per dialect).
    pub(crate) memo: Memo,
}

/// Values derived from one registered definition, computed once and kept while it is
/// registered: keyed by their type and a number, so the registry holds them without knowing
/// what they are (the provider layer keeps its exports here).
/// One memoized value: its type, its key, the value.
type MemoSlot = (std::any::TypeId, u64, Arc<dyn std::any::Any + Send + Sync>);

#[derive(Default)]
pub(crate) struct Memo(std::sync::Mutex<Vec<MemoSlot>>);

impl Memo {
    /// The value of type `T` under `key`, made by `make` the first time.
    pub(crate) fn get_or_make<T: std::any::Any + Send + Sync>(
        &self,
        key: u64,
        make: impl FnOnce() -> T,
    ) -> Arc<T> {
        let id = std::any::TypeId::of::<T>();
        let find = |slots: &[MemoSlot]| {
            slots
                .iter()
                .find(|(t, k, _)| *t == id && *k == key)
                .and_then(|(_, _, v)| Arc::clone(v).downcast::<T>().ok())
        };
        if let Some(found) = find(&self.0.lock().unwrap_or_else(|e| e.into_inner())) {
            return found;
        }
        // Made outside the lock: two racing callers both make it, and the first one kept wins.
        let made = Arc::new(make());
        let mut slots = self.0.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(found) = find(&slots) {
            return found;
        }
        slots.push((
            id,
            key,
            Arc::clone(&made) as Arc<dyn std::any::Any + Send + Sync>,
        ));
        made
    }
}

impl RegisteredTool {
    /// The definition as registered.
    pub fn definition(&self) -> &ToolDefinition {
        &self.definition
    }

    /// The compiled output schema.
    pub fn output_schema(&self) -> &OutputSchema {
        &self.output
    }
}

impl std::ops::Deref for RegisteredTool {
    type Target = ToolDefinition;
    fn deref(&self) -> &ToolDefinition {
        &self.definition
    }
}

impl fmt::Debug for RegisteredTool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.definition.fmt(f)
    }
}

/// What the model sees of a tool: exactly name, description and parameters (spec §5.5).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ToolSchema {
    /// The tool's name.
    pub name: String,
    /// The description.
    pub description: String,
    /// The parameters' JSON Schema (a detached copy).
    pub parameters: Value,
}

/// An allow / deny filter on inherited tools (spec §5.3).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Restriction {
    /// Only these inherited tools stay visible.
    pub allow: Option<Vec<String>>,
    /// These inherited tools are hidden.
    pub deny: Option<Vec<String>>,
}

impl Restriction {
    /// Only `names` stay visible.
    pub fn allow<I: IntoIterator<Item = S>, S: Into<String>>(names: I) -> Self {
        Self {
            allow: Some(names.into_iter().map(Into::into).collect()),
            deny: None,
        }
    }

    /// `names` are hidden.
    pub fn deny<I: IntoIterator<Item = S>, S: Into<String>>(names: I) -> Self {
        Self {
            allow: None,
            deny: Some(names.into_iter().map(Into::into).collect()),
        }
    }

    /// No inherited tool stays visible (what `allow(Vec::<String>::new())` spells).
    ///
    /// ```
    /// use dsh_tools::Restriction;
    /// assert_eq!(Restriction::allow_none().allow, Some(vec![]));
    /// ```
    pub fn allow_none() -> Self {
        Self {
            allow: Some(Vec::new()),
            deny: None,
        }
    }
}

//! A tool's output declaration: the schema its value must match and how the value is rendered
//! for the model (with the default rendering), plus the presentation metadata of top-level
//! successes.

use crate::content::{ContentBlock, text_content};
use crate::json::to_compact_string;
use serde_json::{Value, json};
use std::fmt;
use std::sync::Arc;

/// Renders a canonical value into content: `(arguments, value) -> blocks`.
pub type RenderFn = Arc<dyn Fn(&Value, &Value) -> Vec<ContentBlock> + Send + Sync>;
/// Computes presentation metadata for top-level calls: `(arguments, value) -> meta`.
pub type MetaFn = Arc<dyn Fn(&Value, &Value) -> Value + Send + Sync>;

/// A tool's mandatory output declaration: the schema its value must match (any JSON root) and
/// how the value is rendered for the model.
#[derive(Clone)]
pub struct OutputDecl {
    pub(crate) schema: Value,
    pub(crate) render: RenderFn,
    pub(crate) presentation_meta: Option<MetaFn>,
}

impl fmt::Debug for OutputDecl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OutputDecl")
            .field("schema", &self.schema)
            .field("presentation_meta", &self.presentation_meta.is_some())
            .finish_non_exhaustive()
    }
}

/// The default rendering: a string is one text block, anything else its compact JSON.
pub fn render_default(value: &Value) -> Vec<ContentBlock> {
    match value {
        Value::String(s) => text_content(s.clone()),
        other => text_content(to_compact_string(other)),
    }
}

impl Drop for OutputDecl {
    /// Schemas may be nested deeply; serde_json's own `Drop` recurses once per level.
    fn drop(&mut self) {
        crate::json::free(std::mem::take(&mut self.schema));
    }
}

impl OutputDecl {
    /// An output `schema` (asserted at registration) rendered by `render(arguments, value)`.
    pub fn new(
        schema: Value,
        render: impl Fn(&Value, &Value) -> Vec<ContentBlock> + Send + Sync + 'static,
    ) -> Self {
        Self {
            schema,
            render: Arc::new(render),
            presentation_meta: None,
        }
    }

    /// An output `schema` rendered with [`render_default`].
    pub fn json(schema: Value) -> Self {
        Self::new(schema, |_, value| render_default(value))
    }

    /// A string output, rendered as one text block.
    pub fn text() -> Self {
        Self::json(json!({"type": "string"}))
    }

    /// Adds presentation metadata, computed for top-level successes only.
    pub fn presentation_meta(
        mut self,
        meta: impl Fn(&Value, &Value) -> Value + Send + Sync + 'static,
    ) -> Self {
        self.presentation_meta = Some(Arc::new(meta));
        self
    }

    /// The output schema.
    pub fn schema(&self) -> &Value {
        &self.schema
    }
}

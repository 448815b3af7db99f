//! `ToolDefinition`: the model-facing schema plus the host-only parts (spec §4.1). The
//! definition itself, its builders and accessors (`tool`), the typed constructor (`typed`), the
//! output declaration (`output`), the behaviour hints (`hints`) and the namespace a tool may
//! belong to (`namespace`).

mod hints;
mod namespace;
mod output;
mod tool;
mod typed;

pub use hints::ToolHints;
pub use namespace::Namespace;
pub use output::{MetaFn, OutputDecl, RenderFn, render_default};
pub(crate) use tool::warn_blocked_past;
pub use tool::{
    ClassifierFn, DEFAULT_TIMEOUT_GRACE, ExecuteFn, FinalizeFn, ProgramValueFn, ToolDefinition,
};

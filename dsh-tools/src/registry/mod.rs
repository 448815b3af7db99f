//! The registry (spec §4, §5): a global layer plus agent scopes that shadow it, restrictions
//! that intersect, guards, hooks, and the projection the model sees.
//!
//! A `Registry` is a cheap `Clone` handle; there is no global state. Every registration returns
//! a [`Registration`]: [`dispose`](Registration::dispose) undoes it, and dropping or ignoring it
//! keeps the registration (as the spec's disposer does). [`scoped`](Registration::scoped) turns
//! it into a guard that undoes the registration when dropped.

mod cards;
mod catalog;
mod change;
mod code_mode;
mod context;
mod errors;
mod event;
mod grants;
mod handle;
mod hooks;
mod scope;
mod search;
mod state;
mod tool_search;
mod tools;
mod views;

pub use catalog::DeferRule;
pub use code_mode::PromptSection;
pub use errors::{RegistrationError, RestrictError};
pub use event::{ChangeEvent, ChangeListener};
pub(crate) use handle::{Inner, Target};
pub use handle::{Registration, Registry, ScopedRegistration};
pub use scope::Scope;
pub use search::{LoadedTools, MAX_PROGRAM_SEARCH, ToolMatch, ToolQuery};
pub(crate) use state::Admitted;
pub use state::DEFAULT_MAX_PARALLEL_SUB_CALLS;
pub use tool_search::{DEFAULT_SEARCH_LIMIT, MAX_SEARCH_LIMIT, TOOL_SEARCH};
pub use tools::{PresentationMode, RUN_CODE, RegisteredTool, Restriction, ToolSchema};

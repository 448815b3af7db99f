//! Registration and restriction errors, with the spec's exact messages.

use crate::error::ToolError;
use crate::schema::JsonSchemaError;

/// Why a registration (or a `schemas()` projection) failed (spec §4.2.1, §5.5.3).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum RegistrationError {
    /// The output schema is outside the supported subset.
    #[error(transparent)]
    OutputSchema(JsonSchemaError),
    /// `timeout` is zero.
    #[error("tool \"{name}\" timeoutMs must be a positive finite number")]
    Timeout {
        /// The tool.
        name: String,
    },
    /// The name is `run_code`.
    #[error(
        "tool name \"run_code\" is reserved for the Code Mode presentation transport and cannot be registered or shadowed"
    )]
    Reserved,
    /// The name is `tool_search`, the built-in search of deferred tools, or `$search` or
    /// `$describe`, the members a Code Mode program searches with.
    #[error(
        "tool name \"{name}\" is reserved for the search of deferred tools and cannot be registered or shadowed"
    )]
    SearchReserved {
        /// The name.
        name: String,
    },
    /// The name is already registered in the same layer.
    #[error("{}", duplicate(name, *scoped))]
    Duplicate {
        /// The tool.
        name: String,
        /// Whether the layer is an agent scope.
        scoped: bool,
    },
    /// A definition's parameters are not lossless JSON (from `schemas()`).
    #[error("tool \"{name}\" parameters must be lossless JSON before schema projection")]
    NotLossless {
        /// The tool.
        name: String,
    },
    /// A `tools/change` listener failed; the registration was rolled back.
    #[error(transparent)]
    ChangeListener(ToolError),
    /// `schemas()` of a scope presenting `code` or `both` with no code runtime set (Code Mode
    /// spec §5.1.4): the projection fails rather than present a `run_code` that cannot run.
    #[error("{}", crate::run_code::missing_runtime(mode))]
    NoCodeRuntime {
        /// The scope's effective mode.
        mode: &'static str,
    },
    /// The code runtime's language has no SDK renderer (Code Mode spec §5.1.4).
    #[error(
        "dsh-tools: no SDK renderer registered for runtime language {} (known: {})",
        serde_json::Value::from(language.as_str()),
        known_languages()
    )]
    NoSdkRenderer {
        /// The runtime's language.
        language: String,
    },
    /// The code runtime's language has no `run_code` strings, so its schema cannot be
    /// projected (Code Mode spec §2.2.3).
    #[error(
        "dsh-tools: no run_code schema flavor registered for runtime language {} (known: {})",
        serde_json::Value::from(language.as_str()),
        known_languages()
    )]
    NoSchemaFlavor {
        /// The runtime's language.
        language: String,
    },
    /// [`Registry::set_max_parallel_sub_calls`](super::Registry::set_max_parallel_sub_calls)
    /// with zero (Code Mode spec §4.4.5).
    #[error("maxParallelSubCalls must be a positive integer")]
    MaxParallelSubCalls,
    /// A typed tool's argument or output type has a schema the bridge cannot turn into the
    /// subset (see [`Tool::definition`](crate::Tool::definition)).
    #[error("tool \"{name}\": {error}")]
    Schema {
        /// The tool.
        name: String,
        /// Why.
        error: crate::schema::bridge::BridgeError,
    },
}

/// The duplicate-name message: in the global layer it says how to add a variant or a second
/// instance.
fn duplicate(name: &str, scoped: bool) -> String {
    if scoped {
        format!("tool \"{name}\" is already registered in this scope")
    } else {
        format!(
            "tool \"{name}\" is already registered (for a per-agent variant, register it in that agent's scope: `registry.scope(agent).register(..)`; for a second instance, give it another name: `.named(\"...\")`)"
        )
    }
}

/// The known languages, each JSON-quoted, joined by `, ` (spec §2.2.3).
fn known_languages() -> String {
    crate::code::SDK_LANGUAGES
        .iter()
        .map(|l| serde_json::Value::from(*l).to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

/// Why a scope operation failed (spec §5.3.1, §5.7).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum RestrictError {
    /// Neither `allow` nor `deny`.
    #[error(
        "tools.restrict({{}}) is a no-op: pass `allow` and/or `deny` (an empty filter is almost always a materialized-empty-config bug)"
    )]
    NoOp,
    /// A listed name is `run_code`.
    #[error(
        "tools.restrict() cannot name reserved Code Mode presentation transport \"run_code\"; restrict end-capability tools instead"
    )]
    Reserved,
    /// Listed names that the scope does not inherit.
    #[error("{}", unknown_names(unknown, known))]
    Unknown {
        /// The unknown names, in the order given.
        unknown: Vec<String>,
        /// The names the scope inherits, sorted.
        known: Vec<String>,
    },
    /// A `tools/change` listener failed; the restriction was rolled back.
    #[error(transparent)]
    ChangeListener(ToolError),
    /// A second presentation mode for one scope.
    #[error(
        "tools.presentAs(\"{mode}\") conflicts with \"{existing}\" already declared for this scope; one composition selects one presentation"
    )]
    ModeConflict {
        /// The new mode.
        mode: &'static str,
        /// The mode already declared.
        existing: &'static str,
    },
}

/// The unknown-names message: each quoted, with the names the scope does inherit.
fn unknown_names(unknown: &[String], known: &[String]) -> String {
    let quoted: Vec<String> = unknown.iter().map(|n| format!("\"{n}\"")).collect();
    let noun = if unknown.len() == 1 { "tool" } else { "tools" };
    let known = if known.is_empty() {
        "(none)".to_owned()
    } else {
        known.join(", ")
    };
    format!(
        "tools.restrict() names unknown global {noun} {}; known global tools: {known}",
        quoted.join(", ")
    )
}

//! Code Mode's runtime seam (spec `code-mode.md` §3): the [`CodeRuntime`] trait a backend
//! implements, the request and result of one run, the six failure kinds, binding namespaces and
//! their validation, the runtime configuration and the output ledger every backend shares; and
//! the `run_code` tool's exact strings and how its outcome reads (`render`).
//!
//! The `run_code` tool, the bridge that turns a registry into namespaces, and an engine are
//! built on this seam; a test double driven by closures is
//! [`testing::FakeRuntime`](crate::testing::FakeRuntime).

/// The name reserved for the Code Mode transport: it cannot be registered, shadowed or
/// restricted (also at `registry::RUN_CODE`).
pub const RUN_CODE: &str = "run_code";

/// The text of a cancellation without a reason (our tokens carry none; Code Mode spec §6.4): the
/// message of an `abort` failure and the reason in `run_code run is over (…)` messages.
pub const ABORT_REASON: &str = "AbortError: This operation was aborted";

/// The most binding calls one `run_code` run may have waiting to start (queued behind an
/// exclusive call or a full pool); a call past it is refused with a message, not queued.
pub const MAX_QUEUED_SUB_CALLS: usize = 10_000;

mod foreign;
mod ledger;
mod limits;
pub(crate) mod missing;
mod number;
mod prompt;
#[cfg(feature = "quickjs")]
pub mod quickjs;
mod record;
mod render;
mod runtime;
mod sdk;
pub(crate) use sdk::js_space;

#[cfg(feature = "mcp")]
pub(crate) use foreign::mcp_result_schema;
pub use foreign::{Dropped, ForeignTool, foreign_tool};
pub use ledger::OutputLedger;
pub use limits::CodeHostLimits;
pub use prompt::{
    CODE_ONLY_INSTRUCTION, PROGRAM_DESCRIBE, PROGRAM_SEARCH, SDK_INSTRUCTIONS, SDK_LANGUAGES,
    SdkTool, render_sdk,
};
pub use record::{CodeDispatchKind, CodeDispatchRecord};
pub use render::{
    CODE_RUN_FAILED, NO_OUTPUT, RUN_CODE_DESCRIPTION, run_code_call_card, run_code_output_schema,
    run_code_parameters,
};
pub use runtime::{
    BindingProblem, CodeFailure, CodeRequest, CodeResult, CodeRuntime, CodeRuntimeConfig,
    Companion, ConfigProblem, ErrorClass, FailureKind, HostFn, Namespace, RunWithOutcome,
    SeamError, validate_bindings,
};
pub use sdk::schema_to_ts;

// The spec's conformance internals: the pieces the reference cases check one by one (numbers
// and values as JavaScript prints them, ledger costs, the parts of a rendered outcome or SDK).
// Public for the conformance tests and the CLI, hidden from the docs: not API.
#[doc(hidden)]
pub use foreign::mcp_program_value;
#[doc(hidden)]
pub use ledger::{LOG_ENTRY_HOST_BYTES, string_cost, value_cost};
#[doc(hidden)]
pub use number::js_number;
#[doc(hidden)]
pub use prompt::{DeferredSdkTool, render_declaration, render_deferred, render_overlap};
#[doc(hidden)]
pub use render::{canonical_value, failure_message, pretty, render_success};

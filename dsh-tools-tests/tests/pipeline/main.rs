//! Conformance tests for the registry and the execution pipeline (spec §4–§8): every scenario
//! of `conformance/pipeline.md` is a test named `scenario_NNN_<short_name>` in `pipeline/`,
//! one module per section, unless [`SKIPPED`] lists it whole with its reason. Parts of
//! scenarios that cannot apply to Rust are listed there too, with the analogue that is tested
//! instead. [`every_scenario_is_tested_or_skipped`] keeps the two in step with the document.
//!
//! The fixtures (`echo`, `raw`, content fixtures, `um`) are in `pipeline/support.rs`. Typed
//! `defineTool` tools do not exist yet, so `support::define_tool` builds what spec §1.4 says
//! defineTool builds: the compiled parameter schema, and a body that validates its arguments
//! in parameter-root mode and fails with `ToolArgsError` (`INVALID_ARGS`).
//!
//! Tests named `spec_<section>_…` check rules of the spec that no numbered scenario pins.

mod scenarios;
use scenarios::support;
#[path = "../common/warnings.rs"]
mod warnings;

mod change;
mod progress;
mod properties;
mod schedule;
mod search;
mod smoke;
mod stress;

/// How much of a scenario a [`SKIPPED`] entry covers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Skip {
    /// The scenario has no test: nothing of it applies to Rust.
    Whole,
    /// The scenario's test covers everything except this part.
    Part,
}

/// Scenarios, or parts of them, that cannot apply to Rust: `(number, extent, reason)`.
#[rustfmt::skip]
const SKIPPED: &[(u32, Skip, &str)] = &[
    (6, Skip::Whole, "an output declaration cannot be missing or malformed: `ToolDefinition::new` takes an `OutputDecl`, whose `render` is a required closure and `presentation_meta` an optional closure (a compile error, not a registration error)"),
    (7, Skip::Part, "timeouts of -5, ±Infinity, NaN or '5' are not representable in a `Duration` (zero is, and is rejected); defineTool's own timeout checks wait for typed tools (#[tool])"),
    (26, Skip::Part, "a throwing getter in the body's value does not exist in serde_json; the analogue, a value holding -0, is tested"),
    (27, Skip::Part, "a projector output with a throwing getter does not exist; projector panics are tested, and non-lossless projector output in scenario 28"),
    (28, Skip::Part, "a function as presentation metadata does not exist; the analogue, metadata holding -0, is tested"),
    (39, Skip::Part, "signal identity (=== the caller's): a CancellationToken has no identity, and hooks see a token derived from the caller's (spec §8.1, read-only); tested as 'fires when the caller's fires' (and, in spec_8_1_…, 'cannot cancel it')"),
    (42, Skip::Part, "a rogue approval outcome ('yolo') is not representable (`ApprovalOutcome` is a closed enum); the failing and panicking service are tested"),
    (46, Skip::Part, "'asserts frozen arguments': arguments are immutable by type (`&Value`); the guard checks their value"),
    (49, Skip::Part, "live guard iteration: Rust snapshots the guard table when evaluation starts (spec §5.6.4 allows it), so a guard registered by a guard applies from the next call; that behaviour is tested"),
    (53, Skip::Part, "attempts to mutate frozen results: results are immutable by type; the analogue (a wrapper returning a modified copy of a success, which is re-rendered) is tested; the upstream quirk of mutable core-dispatch failures cannot occur"),
    (61, Skip::Part, "signal identity: tested as 'post-execute's signal fires with the caller's' (see 39)"),
    (68, Skip::Part, "a function inside a feedback block: `ContentBlock::new` rejects non-lossless JSON at construction (tested); the finish-time check is tested with a -0 in a block decision's context"),
    (91, Skip::Part, "argument getter read once; frozen execution, result and arguments; signal identity: inputs are taken by value and immutable by type; a cancelled token's origin cannot be told (tested: the observed signal is cancelled)"),
    (93, Skip::Part, "caller object not frozen / body receives a frozen copy: arguments are moved into the execution and shared immutably (`Arc<Value>`); the values are compared"),
    (94, Skip::Part, "`{invalid: () => undefined}`: the analogue is `{invalid: -0}`; signal identity as in 39"),
    (96, Skip::Whole, "Map and class-instance arguments do not exist in serde_json::Value; the non-lossless analogue (-0) is scenarios 34, 92 and 94"),
    (97, Skip::Whole, "accessor inputs read once: `ToolExecutionInput` is taken by value, so each field is read exactly once by construction"),
    (98, Skip::Part, "an async observer rejection: observers are synchronous, so an observer returning `Err` is the analogue (tested); 'dispatch mode emit' belongs to the TypeScript event bus"),
    (99, Skip::Part, "'the execution object is not yet frozen': it is immutable throughout, by type"),
    (108, Skip::Part, "restrict() from a global context: `restrict` exists only on `Scope` (a compile error)"),
    (120, Skip::Whole, "a classifier returning a truthy non-`true` value ('yes'): the classifier returns `bool`"),
];

/// The scenario numbers of `conformance/pipeline.md` (lines starting `<n>. `).
fn documented() -> Vec<u32> {
    include_str!("../conformance/pipeline.md")
        .lines()
        .filter_map(|line| line.split_once(". ")?.0.parse().ok())
        .collect()
}

/// The sources of the scenario modules.
const SOURCES: &[&str] = &[
    include_str!("scenarios/around.rs"),
    include_str!("scenarios/cancellation.rs"),
    include_str!("scenarios/classification.rs"),
    include_str!("scenarios/contexts.rs"),
    include_str!("scenarios/execution.rs"),
    include_str!("scenarios/finalize.rs"),
    include_str!("scenarios/identity.rs"),
    include_str!("scenarios/policy.rs"),
    include_str!("scenarios/post.rs"),
    include_str!("scenarios/registration.rs"),
    include_str!("scenarios/scopes.rs"),
];

/// The numbers of the `scenario_NNN_…` tests.
fn tested() -> Vec<u32> {
    SOURCES
        .iter()
        .flat_map(|source| source.split("fn scenario_").skip(1))
        .map(|rest| rest[..3].parse().expect("scenario_NNN_"))
        .collect()
}

#[test]
fn every_scenario_is_tested_or_skipped() {
    let documented = documented();
    assert_eq!(documented.len(), 102, "the document's scenario count");
    let tested = tested();
    for n in &documented {
        let whole = SKIPPED.iter().any(|&(s, e, _)| s == *n && e == Skip::Whole);
        let count = tested.iter().filter(|t| *t == n).count();
        match (whole, count) {
            (true, 0) | (false, 1) => {}
            (true, _) => panic!("scenario {n} is skipped whole but has a test"),
            (false, 0) => panic!("scenario {n} has no test and is not skipped"),
            (false, _) => panic!("scenario {n} has {count} tests"),
        }
    }
    for n in tested.iter().chain(SKIPPED.iter().map(|(n, _, _)| n)) {
        assert!(
            documented.contains(n),
            "{n} is not a scenario of the document"
        );
    }
    for (n, _, reason) in SKIPPED {
        assert!(!reason.is_empty(), "{n} has no reason");
    }
}

//! `fuzz_tool`: arguments generated from a tool's own schema, valid ones and near-misses, run
//! through the whole call, with the failures shrunk (feature `proptest`).

pub use super::generate::{MAX_FUZZ_SCHEMA_DEPTH, MAX_FUZZ_VALUES};
use super::generate::{arguments, around, generation_limits};
use crate::error::codes;
use crate::schema::CompiledSchema;
use crate::{CancellationToken, Registry, ToolDefinition, ToolError, ToolExecutionInput};
use futures_util::FutureExt;
use proptest::prelude::{Strategy, prop_oneof};

use proptest::test_runner::{Config, RngAlgorithm, TestCaseError, TestError, TestRng, TestRunner};
use serde_json::Value;
use std::panic::AssertUnwindSafe;
use std::sync::{Arc, Mutex, PoisonError};

/// How [`fuzz_tool`] runs: how many cases, from which seed, how deep generated values nest.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FuzzConfig {
    /// Cases to run (default 256).
    pub cases: u32,
    /// The seed: the same seed and tool give the same cases (default `0x5eed`).
    pub seed: u64,
    /// How deep generated values nest below the arguments object (default 4); deeper parts of a
    /// schema get the shortest value they admit.
    pub max_depth: u32,
}

impl Default for FuzzConfig {
    fn default() -> Self {
        Self {
            cases: 256,
            seed: 0x5eed,
            max_depth: 4,
        }
    }
}

impl FuzzConfig {
    /// `cases` cases.
    pub fn cases(mut self, cases: u32) -> Self {
        self.cases = cases;
        self
    }

    /// Another seed.
    pub fn seed(mut self, seed: u64) -> Self {
        self.seed = seed;
        self
    }
}

/// What a passing [`fuzz_tool`] run saw.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FuzzReport {
    /// Cases run.
    pub cases: u32,
    /// Cases whose arguments the schema accepts (each decoded and reached the body).
    pub valid: u32,
    /// Cases whose arguments the schema rejects (each refused with `INVALID_ARGS`).
    pub invalid: u32,
    /// Valid cases whose body returned an error of its own (allowed: a file that is not there).
    pub tool_errors: u32,
}

/// A broken rule, with the smallest arguments proptest shrank it to.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error(
    "fuzzing tool \"{tool}\" (seed {seed:#x}) failed on arguments {}: {problem}",
    crate::json::to_compact_string(arguments)
)]
pub struct FuzzFailure {
    /// The tool.
    pub tool: String,
    /// The arguments, shrunk.
    pub arguments: Value,
    /// Which rule broke and how (messages name the paths involved).
    pub problem: String,
    /// The seed that found it.
    pub seed: u64,
}

/// The name of the threads a fuzzing run calls the tool on (its own and the blocking pool's).
const FUZZ_THREAD: &str = "dsh-tools-fuzz";

/// Shrinking calls a panicking body many times; each panic is caught and reported once, in the
/// [`FuzzFailure`], so the default hook's message is not printed for them. Installed once: the
/// hook in place before it (the default one, or yours) still runs for every other thread.
fn quiet_panics_on_fuzz_threads() {
    static INSTALLED: std::sync::Once = std::sync::Once::new();
    INSTALLED.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if std::thread::current().name() != Some(FUZZ_THREAD) {
                previous(info);
                return;
            }
            // Kept for the failure report: where the body panicked.
            let at = info.location().map(ToString::to_string);
            let _ = PANICKED_AT.try_with(|slot| {
                if let Ok(mut slot) = slot.try_borrow_mut() {
                    *slot = at;
                }
            });
        }));
    });
}

thread_local! {
    /// Where the last panic on this fuzzing thread happened (`file:line:column`).
    static PANICKED_AT: std::cell::RefCell<Option<String>> = const { std::cell::RefCell::new(None) };
}

/// Fuzzes one tool through the whole call (validation, decode, body, output check) with
/// arguments generated from its own parameters schema: values the schema accepts and near-misses
/// (a valid value with one thing broken: a required property dropped, a wrong type somewhere, an
/// undeclared property, a number out of range, a string or list too long). The schema decides
/// which is which, and each case checks:
///
/// - rejected arguments never reach the body: the call fails with `INVALID_ARGS`;
/// - accepted arguments always decode (no `INVALID_ARGS`, no decode failure);
/// - the body never panics;
/// - every output validates (no `INVALID_TOOL_OUTPUT`).
///
/// The body's own errors are allowed (and counted). A failure is shrunk by proptest to a minimal
/// argument value; the same seed reproduces it. It runs on a thread of its own with its own
/// runtime, so it can be called from a plain `#[test]` or inside `#[tokio::test]`; the panics it
/// provokes while shrinking are not printed (a panic hook, installed on the first run, stays
/// quiet on the fuzzing threads only), the failure is reported once. Bodies run for
/// real: point stateful tools at a scratch workspace. The generator follows the parameters
/// schema, which suits any Rust type's schema; schemas nested past [`MAX_FUZZ_SCHEMA_DEPTH`] or
/// whose smallest arguments exceed [`MAX_FUZZ_VALUES`] fail at once with a message.
///
/// ```
/// use dsh_tools::testing::{FuzzConfig, fuzz_tool};
/// use dsh_tools::{ToolError, tool};
///
/// /// Divides two numbers.
/// #[tool]
/// async fn divide(
///     /// The dividend
///     a: i32,
///     /// The divisor, not zero
///     b: i32,
/// ) -> Result<i32, ToolError> {
///     a.checked_div(b).ok_or_else(|| ToolError::new("division by zero or overflow"))
/// }
///
/// let report = fuzz_tool(Divide, FuzzConfig::default().cases(64)).unwrap();
/// assert_eq!(report.cases, 64);
/// assert!(report.valid > 0 && report.invalid > 0);
///
/// /// Divides, carelessly.
/// #[tool]
/// async fn careless(
///     /// The dividend
///     a: i32,
///     /// The divisor
///     b: i32,
/// ) -> Result<i32, ToolError> {
///     Ok(a / b) // panics on b = 0
/// }
/// let failure = fuzz_tool(Careless, FuzzConfig::default()).unwrap_err();
/// assert!(failure.problem.starts_with("the body panicked"), "{failure}");
/// assert_eq!(failure.arguments["b"], 0);
/// ```
pub fn fuzz_tool(
    tool: impl Into<ToolDefinition>,
    config: FuzzConfig,
) -> Result<FuzzReport, Box<FuzzFailure>> {
    fuzz(tool.into(), config, Vec::new())
}

/// [`fuzz_tool`] starting from known-good arguments (`{"path": "notes/a.txt"}` for a file that
/// exists): three cases in four start from one of `examples`, with one property replaced by a
/// value drawn from its schema, or one thing broken, or as given; the rest are drawn from the
/// schema alone. For tools whose valid cases would otherwise all end in error paths (random
/// paths name no file). No examples: the same as [`fuzz_tool`].
///
/// ```
/// use dsh_tools::testing::{FuzzConfig, fuzz_tool_around};
/// use dsh_tools::{ToolError, tool};
/// use serde_json::json;
///
/// /// Reads a line of the one file there is.
/// #[tool]
/// async fn read_line(/** The file */ path: String, /** From 0 */ line: u32) -> Result<String, ToolError> {
///     if path != "notes.txt" {
///         return Err(ToolError::new("no such file"));
///     }
///     ["first", "second"].get(line as usize).map(|l| l.to_string()).ok_or_else(|| "no such line".into())
/// }
///
/// let examples = [json!({"path": "notes.txt", "line": 0})];
/// let report = fuzz_tool_around(ReadLine, examples, FuzzConfig::default().cases(64)).unwrap();
/// assert!(report.tool_errors < report.valid); // some valid cases read a line
/// ```
pub fn fuzz_tool_around(
    tool: impl Into<ToolDefinition>,
    examples: impl IntoIterator<Item = Value>,
    config: FuzzConfig,
) -> Result<FuzzReport, Box<FuzzFailure>> {
    fuzz(tool.into(), config, examples.into_iter().collect())
}

fn fuzz(
    tool: ToolDefinition,
    config: FuzzConfig,
    examples: Vec<Value>,
) -> Result<FuzzReport, Box<FuzzFailure>> {
    let mut definition = tool;
    let name = definition.name().to_owned();
    let failure = |arguments: Value, problem: String| {
        Box::new(FuzzFailure {
            tool: name.clone(),
            arguments,
            problem,
            seed: config.seed,
        })
    };
    let schema = match CompiledSchema::compile(definition.parameters()) {
        Ok(schema) => schema,
        Err(e) => {
            return Err(failure(
                Value::Null,
                format!("its parameters do not compile: {e}"),
            ));
        }
    };
    if let Err(why) = generation_limits(definition.parameters()) {
        return Err(failure(Value::Null, why));
    }
    let parameters = Arc::clone(&definition.parameters);
    // Panics are caught by the pipeline and become errors; record them on the way out.
    let panicked: Arc<Mutex<Option<String>>> = Arc::default();
    let body = definition.execute.clone();
    let slot = panicked.clone();
    definition.execute = Arc::new(move |args, ctx| {
        let slot = slot.clone();
        let body = body.clone();
        Box::pin(async move {
            let run = AssertUnwindSafe(async move { body(args, ctx).await }).catch_unwind();
            match run.await {
                Ok(result) => result,
                Err(payload) => {
                    let error = ToolError::from_panic(&*payload);
                    // The location, when the panic was on this thread (an `async` body; a
                    // blocking body panics on the pool's).
                    let at = PANICKED_AT
                        .try_with(|slot| slot.try_borrow_mut().ok().and_then(|mut s| s.take()))
                        .ok()
                        .flatten();
                    let message = match at {
                        Some(at) => format!("{} (at {at})", error.message()),
                        None => error.message().to_owned(),
                    };
                    *slot.lock().unwrap_or_else(PoisonError::into_inner) = Some(message);
                    crate::error::drop_panic_payload(payload);
                    Err(error)
                }
            }
        })
    });
    let registry = Registry::new();
    if let Err(e) = registry.register(definition) {
        return Err(failure(Value::Null, format!("it does not register: {e}")));
    }
    quiet_panics_on_fuzz_threads();
    let outcome = std::thread::scope(|scope| {
        let thread = std::thread::Builder::new()
            .name(FUZZ_THREAD.to_owned())
            .spawn_scoped(scope, || {
                let strategy = if examples.is_empty() {
                    arguments(&parameters, config.max_depth)
                } else {
                    prop_oneof![
                        1 => arguments(&parameters, config.max_depth),
                        3 => around(&parameters, examples.clone(), config.max_depth),
                    ]
                    .boxed()
                };
                let runtime = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .thread_name(FUZZ_THREAD)
                    .build()
                    .map_err(|e| format!("no runtime for the tool: {e}"))?;
                let mut seed = [0u8; 32];
                seed[..8].copy_from_slice(&config.seed.to_le_bytes());
                let mut runner = TestRunner::new_with_rng(
                    Config {
                        cases: config.cases,
                        failure_persistence: None,
                        ..Config::default()
                    },
                    TestRng::from_seed(RngAlgorithm::ChaCha, &seed),
                );
                let report = Mutex::new(FuzzReport::default());
                let result = runner.run(&strategy, |args| {
                    *panicked.lock().unwrap_or_else(PoisonError::into_inner) = None;
                    let valid = schema.is_valid(&args);
                    let input = ToolExecutionInput::new(
                        "fuzz",
                        name.clone(),
                        args,
                        CancellationToken::new(),
                    );
                    let result = runtime.block_on(registry.execute(input));
                    let text = result.text();
                    let mut report = report.lock().unwrap_or_else(PoisonError::into_inner);
                    report.cases += 1;
                    if let Some(message) =
                        panicked.lock().unwrap_or_else(PoisonError::into_inner).take()
                    {
                        return Err(TestCaseError::fail(format!("the body panicked: {message}")));
                    }
                    let code = result.code();
                    if !valid {
                        report.invalid += 1;
                        if code != Some(codes::INVALID_ARGS) {
                            return Err(TestCaseError::fail(format!(
                                "the schema rejects these arguments, but the call did not fail with INVALID_ARGS: {text}"
                            )));
                        }
                        return Ok(());
                    }
                    report.valid += 1;
                    if code == Some(codes::INVALID_ARGS)
                        || text.starts_with("Error: validated arguments did not decode")
                    {
                        return Err(TestCaseError::fail(format!(
                            "the schema accepts these arguments, but the call refused them: {text}"
                        )));
                    }
                    if code == Some(codes::INVALID_TOOL_OUTPUT) {
                        return Err(TestCaseError::fail(format!(
                            "the output does not validate: {text}"
                        )));
                    }
                    if result.is_error() {
                        report.tool_errors += 1;
                    }
                    Ok(())
                });
                let report = *report.lock().unwrap_or_else(PoisonError::into_inner);
                Ok::<_, String>((result, report))
            });
        match thread {
            Ok(thread) => thread
                .join()
                .map_err(|_| "the fuzzing thread panicked".to_owned()),
            Err(e) => Err(format!("no thread for fuzzing: {e}")),
        }
    });
    let (result, report) = match outcome {
        Ok(Ok(done)) => done,
        Ok(Err(message)) | Err(message) => return Err(failure(Value::Null, message)),
    };
    match result {
        Ok(()) => Ok(FuzzReport {
            cases: config.cases,
            ..report
        }),
        Err(TestError::Fail(reason, arguments)) => Err(failure(arguments, reason.to_string())),
        Err(TestError::Abort(reason)) => Err(failure(Value::Null, reason.to_string())),
    }
}

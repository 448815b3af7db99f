//! The code-runtime seam (Code Mode spec §3): what a runtime is asked, what it answers, the six
//! failure kinds, binding namespaces and their validation, and the runtime configuration. No
//! engine here: backends (an embedded JavaScript engine, a process) implement [`CodeRuntime`].

use crate::call::BoxFuture;
use serde_json::Value;
use std::fmt;
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

/// A host function a program calls through a namespace: one lossless JSON argument, a lossless
/// JSON resolution or a failure message.
pub type HostFn = Arc<dyn Fn(Value) -> BoxFuture<Result<Value, String>> + Send + Sync>;

/// The error class a namespace's rejections are instances of (spec §3.6.4): `new Name(member,
/// message)`, with the called member's name under `member_name_property`. Code Mode declares
/// `{name: "ToolCallError", member_name_property: "toolName"}`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ErrorClass {
    /// The class name the program sees.
    pub name: String,
    /// The own property holding the called member's name.
    pub member_name_property: String,
}

/// One global object of async functions the program sees (spec §3.2.2).
#[derive(Clone)]
pub struct Namespace {
    /// The program-visible name.
    pub global: String,
    /// Member name → host function, in declaration order (names are arbitrary strings).
    pub functions: Vec<(String, HostFn)>,
    /// The class of this namespace's rejections, if any.
    pub error_class: Option<ErrorClass>,
}

impl fmt::Debug for Namespace {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names: Vec<&str> = self.functions.iter().map(|(n, _)| n.as_str()).collect();
        f.debug_struct("Namespace")
            .field("global", &self.global)
            .field("functions", &names)
            .field("error_class", &self.error_class)
            .finish()
    }
}

/// One run: the program, its bindings in order, and an optional cancellation signal.
#[derive(Clone, Debug)]
pub struct CodeRequest {
    /// The program text, in the runtime's [`language`](CodeRuntime::language).
    pub program: String,
    /// The namespaces, in the order the program function receives them.
    pub bindings: Vec<Namespace>,
    /// Cancelling it aborts the run (`abort`).
    pub signal: Option<CancellationToken>,
}

/// How a run failed (spec §3.4): exactly one applies.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FailureKind {
    /// The program threw, or failed to parse or type-strip.
    Exception,
    /// A time budget expired (the message says which).
    Timeout,
    /// The request's signal fired, or the runtime was disposed.
    Abort,
    /// The substrate died without settling (out of memory, forced exit).
    WorkerExit,
    /// The completion was not lossless JSON.
    InvalidOutput,
    /// Logs and completion (or the failure message) exceeded the output cap.
    OutputLimit,
}

impl FailureKind {
    /// The wire name (`exception`, `timeout`, `abort`, `worker-exit`, `invalid-output`,
    /// `output-limit`).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Exception => "exception",
            Self::Timeout => "timeout",
            Self::Abort => "abort",
            Self::WorkerExit => "worker-exit",
            Self::InvalidOutput => "invalid-output",
            Self::OutputLimit => "output-limit",
        }
    }

    /// The kind named `name`, if any.
    pub fn parse(name: &str) -> Option<Self> {
        [
            Self::Exception,
            Self::Timeout,
            Self::Abort,
            Self::WorkerExit,
            Self::InvalidOutput,
            Self::OutputLimit,
        ]
        .into_iter()
        .find(|k| k.as_str() == name)
    }
}

impl fmt::Display for FailureKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A failed run: its kind and message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CodeFailure {
    /// Which of the six.
    pub kind: FailureKind,
    /// The message (for `exception`, the engine's text).
    pub message: String,
}

/// What a run produced (spec §3.2.4): the logs in emission order, and a value or a failure
/// (never both). A program's own fault is a failure here, never an `Err` from
/// [`CodeRuntime::run`].
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CodeResult {
    /// Log entries, as plain strings.
    pub logs: Vec<String>,
    /// The completion, when the program completed with a value other than `undefined`.
    pub value: Option<Value>,
    /// Why the run failed.
    pub error: Option<CodeFailure>,
}

/// Misuse of the seam (spec §3.1.3), or a backend that could not run a program: an unusable or
/// duplicate namespace, a budget out of range, a run after disposal. The text is the spec's
/// exact message, starting with the backend's name.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SeamError {
    /// A binding namespace cannot be injected ([`validate_bindings`]).
    #[error("{backend}: {problem}")]
    Binding {
        /// The backend's name.
        backend: String,
        /// What is wrong with the namespace.
        problem: BindingProblem,
    },
    /// A budget is out of range ([`CodeRuntimeConfig::validate`]).
    #[error("{backend}: {problem}")]
    Config {
        /// The backend's name.
        backend: String,
        /// Which budget, and its value.
        problem: ConfigProblem,
    },
    /// `run()` after the runtime was disposed.
    #[error("{backend}: run() after disposal")]
    Disposed {
        /// The backend's name.
        backend: String,
    },
    /// The backend could not run the program for a reason of its own (an engine that did not
    /// start, a worker that is gone).
    #[error("{backend}: {message}")]
    Backend {
        /// The backend's name.
        backend: String,
        /// What went wrong, in the backend's words.
        message: String,
    },
}

impl SeamError {
    /// A backend's own failure: `"{backend}: {message}"`.
    pub fn backend(backend: impl Into<String>, message: impl Into<String>) -> Self {
        Self::Backend {
            backend: backend.into(),
            message: message.into(),
        }
    }
}

/// Why a binding namespace cannot be injected (spec §3.6.1). Each names the identifier, quoted
/// as JSON.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum BindingProblem {
    /// A global that is not `^[A-Za-z_][A-Za-z0-9_]*$`, or is a reserved word.
    #[error("binding global {} is not a usable identifier", quoted(.0))]
    GlobalNotIdentifier(String),
    /// An error class name that is not a usable identifier.
    #[error("binding error class {} is not a usable identifier", quoted(.0))]
    ClassNotIdentifier(String),
    /// A global (or error class) every backend keeps for itself (`console`, ...).
    #[error("reserved binding global {}", quoted(.0))]
    Reserved(String),
    /// Two namespaces with one global.
    #[error("duplicate binding global {}", quoted(.0))]
    DuplicateGlobal(String),
    /// An error class named like a global or another class.
    #[error("duplicate injected global {}", quoted(.0))]
    DuplicateInjected(String),
    /// An error class's member-name property that is empty, reserved or a dunder.
    #[error("binding error member property {} is not usable", quoted(.0))]
    MemberNotUsable(String),
}

/// Why a [`CodeRuntimeConfig`] budget was refused (spec §3.5.2). Values are written as
/// JavaScript writes numbers.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ConfigProblem {
    /// A budget that is not a finite number above zero.
    #[error("config.{field} must be a positive number, got {got}")]
    NotPositive {
        /// The budget's name in the spec (`computeMs`, ...).
        field: &'static str,
        /// Its value.
        got: String,
    },
    /// `maxOutputBytes` that is not an integer from 4 to 2^53 - 1.
    #[error("config.maxOutputBytes must be a safe integer of at least 4, got {got}")]
    OutputBytes {
        /// Its value.
        got: String,
    },
}

/// A code runtime: runs one program with its bindings and reports what happened.
pub trait CodeRuntime: Send + Sync + 'static {
    /// The source language `run` expects (`typescript`).
    fn language(&self) -> &str;
    /// The execution substrate, a diagnostic label (never a security claim).
    fn isolation(&self) -> &str;
    /// Runs `request`. Fails only for seam misuse ([`validate_bindings`] first, before anything
    /// else); every program outcome is a [`CodeResult`].
    fn run(&self, request: CodeRequest) -> BoxFuture<Result<CodeResult, SeamError>>;

    /// Runs `request` while polling `companion`, the caller's work that answers the program's
    /// calls (the `run_code` bridge's lane, which starts, dispatches and commits them). Returns
    /// the run's outcome, and the companion when it has not completed: the caller polls it on.
    ///
    /// A runtime may poll the companion on the program's own thread, so that a call's answer
    /// reaches the program without waking another thread (the QuickJS runtime does). The default
    /// polls it beside [`run`](Self::run) on the caller's task.
    fn run_with(&self, request: CodeRequest, companion: Companion) -> BoxFuture<RunWithOutcome> {
        Box::pin(Beside {
            run: self.run(request),
            companion: Some(companion),
        })
    }
}

/// Work polled while a program runs: see [`CodeRuntime::run_with`].
pub type Companion = BoxFuture<()>;

/// What [`CodeRuntime::run_with`] returns: the run's outcome, and the companion unless it
/// completed.
pub type RunWithOutcome = (Result<CodeResult, SeamError>, Option<Companion>);

/// A run and its companion polled together on one task.
struct Beside {
    run: BoxFuture<Result<CodeResult, SeamError>>,
    companion: Option<Companion>,
}

impl std::future::Future for Beside {
    type Output = RunWithOutcome;

    fn poll(
        self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Self::Output> {
        let this = self.get_mut();
        if let Some(companion) = this.companion.as_mut()
            && companion.as_mut().poll(cx).is_ready()
        {
            this.companion = None;
        }
        match this.run.as_mut().poll(cx) {
            std::task::Poll::Ready(outcome) => {
                std::task::Poll::Ready((outcome, this.companion.take()))
            }
            std::task::Poll::Pending => std::task::Poll::Pending,
        }
    }
}

/// Words no namespace global or error class may be (portable across JavaScript and Python).
const RESERVED_WORDS: &[&str] = &[
    "await",
    "break",
    "case",
    "catch",
    "class",
    "const",
    "continue",
    "debugger",
    "default",
    "delete",
    "do",
    "else",
    "enum",
    "export",
    "extends",
    "false",
    "finally",
    "for",
    "function",
    "if",
    "import",
    "in",
    "instanceof",
    "new",
    "null",
    "return",
    "super",
    "switch",
    "this",
    "throw",
    "true",
    "try",
    "typeof",
    "var",
    "void",
    "while",
    "with",
    "yield",
    "let",
    "static",
    "implements",
    "interface",
    "package",
    "private",
    "protected",
    "public",
    "arguments",
    "eval",
    "False",
    "None",
    "True",
    "and",
    "as",
    "assert",
    "async",
    "def",
    "del",
    "elif",
    "except",
    "from",
    "global",
    "is",
    "lambda",
    "nonlocal",
    "not",
    "or",
    "pass",
    "raise",
    "match",
    "type",
    "_",
];

/// Valid identifiers every backend refuses as a binding global.
const RESERVED_GLOBALS: &[&str] = &[
    "console",
    "__dsh_main__",
    "__builtins__",
    "__name__",
    "__debug__",
];

/// Member-name properties an error class may not use.
const RESERVED_MEMBERS: &[&str] = &[
    "name",
    "message",
    "stack",
    "args",
    "with_traceback",
    "add_note",
];

/// `^[A-Za-z_][A-Za-z0-9_]*$` and not a reserved word.
fn usable_identifier(s: &str) -> bool {
    let mut chars = s.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
        && !RESERVED_WORDS.contains(&s)
}

fn quoted(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_default()
}

/// The namespace checks of spec §3.3.3, in order, first failure wins; `backend` prefixes the
/// message.
///
/// ```
/// use dsh_tools::code::{Namespace, validate_bindings};
///
/// let ns = |global: &str| Namespace { global: global.into(), functions: vec![], error_class: None };
/// assert!(validate_bindings("my-backend", &[ns("tools")]).is_ok());
/// let err = validate_bindings("my-backend", &[ns("tools"), ns("tools")]).unwrap_err();
/// assert_eq!(err.to_string(), r#"my-backend: duplicate binding global "tools""#);
/// ```
pub fn validate_bindings(backend: &str, bindings: &[Namespace]) -> Result<(), SeamError> {
    let fail = |problem: BindingProblem| {
        Err(SeamError::Binding {
            backend: backend.to_owned(),
            problem,
        })
    };
    let mut globals: Vec<&str> = Vec::new();
    for ns in bindings {
        let g = ns.global.as_str();
        if !usable_identifier(g) {
            return fail(BindingProblem::GlobalNotIdentifier(g.to_owned()));
        }
        if RESERVED_GLOBALS.contains(&g) {
            return fail(BindingProblem::Reserved(g.to_owned()));
        }
        if globals.contains(&g) {
            return fail(BindingProblem::DuplicateGlobal(g.to_owned()));
        }
        globals.push(g);
    }
    let mut classes: Vec<&str> = Vec::new();
    for class in bindings.iter().filter_map(|ns| ns.error_class.as_ref()) {
        let n = class.name.as_str();
        if !usable_identifier(n) {
            return fail(BindingProblem::ClassNotIdentifier(n.to_owned()));
        }
        if RESERVED_GLOBALS.contains(&n) {
            return fail(BindingProblem::Reserved(n.to_owned()));
        }
        if globals.contains(&n) || classes.contains(&n) {
            return fail(BindingProblem::DuplicateInjected(n.to_owned()));
        }
        classes.push(n);
        let m = class.member_name_property.as_str();
        let dunder = m.len() > 4 && m.starts_with("__") && m.ends_with("__");
        if m.is_empty() || RESERVED_MEMBERS.contains(&m) || dunder {
            return fail(BindingProblem::MemberNotUsable(m.to_owned()));
        }
    }
    Ok(())
}

/// A runtime's budgets (spec §3.5.1), validated by [`CodeRuntimeConfig::validate`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CodeRuntimeConfig {
    /// Busy (CPU) time of the program, in milliseconds: 60,000.
    pub compute_ms: f64,
    /// Wall-clock ceiling from the start, in milliseconds: 600,000.
    pub max_wall_ms: f64,
    /// The output ledger's cap (logs + completion or message), in bytes: 64 MiB.
    pub max_output_bytes: f64,
    /// The engine's heap cap, in MiB: 512 (exceeding it is `worker-exit`).
    pub max_old_generation_size_mb: f64,
}

impl Default for CodeRuntimeConfig {
    fn default() -> Self {
        Self {
            compute_ms: 60_000.0,
            max_wall_ms: 600_000.0,
            max_output_bytes: 67_108_864.0,
            max_old_generation_size_mb: 512.0,
        }
    }
}

impl CodeRuntimeConfig {
    /// The checks of spec §3.5.2 (the Node timer bound on `max_wall_ms` is dropped, §6.5), with
    /// `backend` as the message prefix.
    ///
    /// ```
    /// use dsh_tools::code::CodeRuntimeConfig;
    ///
    /// let bad = CodeRuntimeConfig { compute_ms: 0.0, ..Default::default() };
    /// assert_eq!(
    ///     bad.validate("b").unwrap_err().to_string(),
    ///     "b: config.computeMs must be a positive number, got 0"
    /// );
    /// ```
    pub fn validate(&self, backend: &str) -> Result<(), SeamError> {
        let fields = [
            ("computeMs", self.compute_ms),
            ("maxWallMs", self.max_wall_ms),
            ("maxOutputBytes", self.max_output_bytes),
            ("maxOldGenerationSizeMb", self.max_old_generation_size_mb),
        ];
        for (name, value) in fields {
            if !(value.is_finite() && value > 0.0) {
                return Err(SeamError::Config {
                    backend: backend.to_owned(),
                    problem: ConfigProblem::NotPositive {
                        field: name,
                        got: super::number::js_number(value),
                    },
                });
            }
        }
        let bytes = self.max_output_bytes;
        if bytes.fract() != 0.0 || !(4.0..=9_007_199_254_740_991.0).contains(&bytes) {
            return Err(SeamError::Config {
                backend: backend.to_owned(),
                problem: ConfigProblem::OutputBytes {
                    got: super::number::js_number(bytes),
                },
            });
        }
        Ok(())
    }
}

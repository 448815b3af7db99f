//! [`FakeRuntime`]: a code runtime without an engine, driven by a closure, for testing what is
//! built on the seam (the `run_code` tool, the bridge, hosts).

use crate::call::BoxFuture;
use crate::code::{
    CodeRequest, CodeResult, CodeRuntime, FailureKind, Namespace, OutputLedger, SeamError,
    validate_bindings,
};
use serde_json::Value;
use std::sync::{Arc, Mutex};

/// How a fake program ended.
#[derive(Clone, Debug, PartialEq)]
pub enum FakeOutcome {
    /// It returned a value (`None`: `undefined`, no value).
    Return(Option<Value>),
    /// It threw; the message is what the runtime reports as the `exception`.
    Throw(String),
    /// It returned something that is not JSON (a function): `invalid-output`.
    Lossy,
    /// Any other failure (a timeout, a dead substrate), as the runtime would report it.
    Fail(FailureKind, String),
}

/// What a fake program can do while it runs: log, and call its bindings.
#[derive(Clone)]
pub struct FakeRun {
    ledger: Arc<Mutex<Option<OutputLedger>>>,
    bindings: Arc<Vec<Namespace>>,
}

impl FakeRun {
    /// Appends one log entry (through the output ledger; `false` once the cap is passed).
    pub fn log(&self, entry: impl Into<String>) -> bool {
        let mut ledger = self.ledger.lock().unwrap_or_else(|e| e.into_inner());
        ledger.as_mut().is_some_and(|l| l.log(entry.into()))
    }

    /// Calls `global.name(arg)` as a program would (spec §3.6.3): a non-lossless argument is
    /// refused without calling the host, and so is a non-lossless resolution.
    pub async fn call(&self, global: &str, name: &str, arg: Value) -> Result<Value, String> {
        let namespace = self.bindings.iter().find(|ns| ns.global == global);
        let host = namespace
            .and_then(|ns| ns.functions.iter().find(|(n, _)| n == name))
            .map(|(_, f)| Arc::clone(f))
            .ok_or_else(|| {
                let names: Vec<&str> = namespace
                    .map(|ns| ns.functions.iter().map(|(n, _)| n.as_str()).collect())
                    .unwrap_or_default();
                crate::code::missing::not_a_tool(global, name, &names)
            })?;
        if !crate::json::is_lossless(&arg) {
            return Err("binding arguments must be lossless JSON".to_owned());
        }
        let resolved = host(arg).await?;
        if !crate::json::is_lossless(&resolved) {
            return Err("binding resolution must be lossless JSON".to_owned());
        }
        Ok(resolved)
    }
}

type Script = Arc<dyn Fn(CodeRequest, FakeRun) -> BoxFuture<FakeOutcome> + Send + Sync>;

/// A [`CodeRuntime`] whose "program" is a closure: it validates the bindings as every backend
/// must, honours a pre-cancelled signal, and sends logs and the outcome through a real
/// [`OutputLedger`].
///
/// ```
/// use dsh_tools::code::{CodeRequest, CodeRuntime};
/// use dsh_tools::testing::{FakeOutcome, FakeRuntime};
/// use serde_json::json;
///
/// let runtime = FakeRuntime::new(|_request, run| async move {
///     run.log("hello");
///     FakeOutcome::Return(Some(json!(42)))
/// });
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let request = CodeRequest { program: "…".into(), bindings: vec![], signal: None };
/// let result = runtime.run(request).await.unwrap();
/// assert_eq!(result.logs, ["hello"]);
/// assert_eq!(result.value, Some(json!(42)));
/// # });
/// ```
pub struct FakeRuntime {
    script: Script,
    max_output_bytes: usize,
}

impl std::fmt::Debug for FakeRuntime {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FakeRuntime")
            .field("max_output_bytes", &self.max_output_bytes)
            .finish_non_exhaustive()
    }
}

/// The fake backend's name, the prefix of its seam-misuse messages.
pub const FAKE_BACKEND: &str = "dsh-code-runtime-fake";

impl FakeRuntime {
    /// A runtime running `script` for every request, with the default 64 MiB output cap.
    pub fn new<F, Fut>(script: F) -> Self
    where
        F: Fn(CodeRequest, FakeRun) -> Fut + Send + Sync + 'static,
        Fut: std::future::Future<Output = FakeOutcome> + Send + 'static,
    {
        Self {
            script: Arc::new(move |request, run| Box::pin(script(request, run))),
            max_output_bytes: 64 << 20,
        }
    }

    /// Sets the output ledger's cap.
    pub fn max_output_bytes(mut self, bytes: usize) -> Self {
        self.max_output_bytes = bytes;
        self
    }
}

impl CodeRuntime for FakeRuntime {
    fn language(&self) -> &str {
        "typescript"
    }

    fn isolation(&self) -> &str {
        "none (test double)"
    }

    fn run(&self, request: CodeRequest) -> BoxFuture<Result<CodeResult, SeamError>> {
        let script = Arc::clone(&self.script);
        let cap = self.max_output_bytes;
        Box::pin(async move {
            validate_bindings(FAKE_BACKEND, &request.bindings)?;
            let ledger = Arc::new(Mutex::new(Some(OutputLedger::new(cap))));
            let take = |ledger: &Arc<Mutex<Option<OutputLedger>>>| {
                ledger
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .take()
                    .unwrap_or_else(|| OutputLedger::new(cap))
            };
            let aborted = crate::code::ABORT_REASON.to_owned();
            if request.signal.as_ref().is_some_and(|s| s.is_cancelled()) {
                return Ok(take(&ledger).fail(FailureKind::Abort, aborted));
            }
            let run = FakeRun {
                ledger: Arc::clone(&ledger),
                bindings: Arc::new(request.bindings.clone()),
            };
            let signal = request.signal.clone();
            let program = script(request, run);
            let outcome = match signal {
                Some(signal) => tokio::select! {
                    outcome = program => outcome,
                    () = signal.cancelled() => FakeOutcome::Fail(FailureKind::Abort, aborted),
                },
                None => program.await,
            };
            let ledger = take(&ledger);
            Ok(match outcome {
                FakeOutcome::Return(value) => match value {
                    Some(v) if !crate::json::is_lossless(&v) => ledger.fail(
                        FailureKind::InvalidOutput,
                        "program completion must be lossless JSON".to_owned(),
                    ),
                    value => ledger.complete(value),
                },
                FakeOutcome::Throw(message) => ledger.fail(FailureKind::Exception, message),
                FakeOutcome::Lossy => ledger.fail(
                    FailureKind::InvalidOutput,
                    "program completion must be lossless JSON".to_owned(),
                ),
                FakeOutcome::Fail(kind, message) => ledger.fail(kind, message),
            })
        })
    }
}

//! [`QuickJsRuntime`]: Code Mode programs in an embedded QuickJS-ng engine (feature `quickjs`;
//! TypeScript with feature `typescript`).
//!
//! Each run gets its own thread and its own engine, dropped when the run ends: no state survives
//! between runs. Nothing ambient exists in the sandbox: no module loader, no timers, no I/O, no
//! `process`, `require` or `fetch`; the only way out is the request's bindings. Values cross the
//! boundary as lossless JSON, converted without recursion. Budgets: the program thread's CPU time
//! (`compute_ms`; awaiting a binding costs nothing), a wall-clock ceiling, the engine's heap
//! (exhausting it is `worker-exit`), a stack limit (deep recursion is a catchable error) and the
//! output ledger. The engine's interrupt handler, polled in hot loops and inside the regular
//! expression engine, stops a program at a budget, a cancellation or a disposal.
//!
//! The isolation label is `quickjs-thread`: a description of the substrate, not a security claim.
//!
//! ```
//! use dsh_tools::code::quickjs::QuickJsRuntime;
//! use dsh_tools::code::{CodeRequest, CodeRuntime, CodeRuntimeConfig};
//! use serde_json::json;
//!
//! # tokio::runtime::Runtime::new().unwrap().block_on(async {
//! let runtime = QuickJsRuntime::new(CodeRuntimeConfig::default()).unwrap();
//! let request = CodeRequest {
//!     program: "console.log('adding'); return 1 + 2".into(),
//!     bindings: vec![],
//!     signal: None,
//! };
//! let result = runtime.run(request).await.unwrap();
//! assert_eq!(result.logs, ["adding"]);
//! assert_eq!(result.value, Some(json!(3)));
//! # });
//! ```

mod convert;
mod engine;
#[cfg(feature = "typescript")]
mod typescript;

use super::{CodeRequest, CodeResult, CodeRuntime, CodeRuntimeConfig, FailureKind, OutputLedger};
use super::{SeamError, validate_bindings};
use crate::call::BoxFuture;
use engine::EngineLimits;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::{oneshot, watch};
use tokio_util::sync::CancellationToken;

/// The backend's name: the prefix of its seam-misuse and configuration messages.
pub const BACKEND: &str = "dsh-code-runtime-quickjs";

/// The engine's stack limit: deeper recursion is a catchable error.
const STACK_BYTES: usize = 4 << 20;
/// The run thread's own stack (the engine's limit plus room for the host's frames).
const THREAD_STACK_BYTES: usize = 16 << 20;

struct Active {
    disposed: CancellationToken,
    exited: watch::Receiver<bool>,
}

#[derive(Default)]
struct Runs {
    disposed: bool,
    next: u64,
    active: HashMap<u64, Active>,
}

/// A [`CodeRuntime`] on QuickJS-ng: see the [module docs](self).
pub struct QuickJsRuntime {
    limits: EngineLimits,
    runs: Arc<Mutex<Runs>>,
}

impl std::fmt::Debug for QuickJsRuntime {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("QuickJsRuntime")
            .field("limits", &self.limits)
            .finish_non_exhaustive()
    }
}

impl QuickJsRuntime {
    /// A runtime with `config`'s budgets, validated (spec §3.5.2; messages prefixed with
    /// [`BACKEND`]).
    ///
    /// ```
    /// use dsh_tools::code::quickjs::QuickJsRuntime;
    /// use dsh_tools::code::CodeRuntimeConfig;
    ///
    /// let bad = CodeRuntimeConfig { max_output_bytes: 3.0, ..Default::default() };
    /// assert_eq!(
    ///     QuickJsRuntime::new(bad).unwrap_err().to_string(),
    ///     "dsh-code-runtime-quickjs: config.maxOutputBytes must be a safe integer of at least 4, got 3"
    /// );
    /// ```
    pub fn new(config: CodeRuntimeConfig) -> Result<Self, SeamError> {
        config.validate(BACKEND)?;
        let ms = |x: f64| Duration::from_secs_f64(x / 1000.0);
        let memory = (config.max_old_generation_size_mb * 1024.0 * 1024.0).min(usize::MAX as f64);
        Ok(Self {
            limits: EngineLimits {
                compute: ms(config.compute_ms),
                wall: ms(config.max_wall_ms),
                max_output_bytes: config.max_output_bytes as usize,
                memory_bytes: memory as usize,
                stack_bytes: STACK_BYTES,
            },
            runs: Arc::default(),
        })
    }

    /// How many runs this runtime has started (for tests and metrics).
    pub fn runs_started(&self) -> u64 {
        self.runs.lock().unwrap_or_else(|e| e.into_inner()).next
    }

    /// How many runs are in flight (their threads not yet exited).
    pub fn runs_in_flight(&self) -> usize {
        self.runs
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .active
            .len()
    }

    /// Disposes the runtime (spec §3.1.4): every in-flight run fails with `abort` (`runtime
    /// disposed`), and the returned future completes once each run's thread has exited. A later
    /// [`run`](CodeRuntime::run) fails with `run() after disposal`.
    pub async fn dispose(&self) {
        let waits: Vec<watch::Receiver<bool>> = {
            let mut runs = self.runs.lock().unwrap_or_else(|e| e.into_inner());
            runs.disposed = true;
            runs.active
                .values()
                .map(|a| {
                    a.disposed.cancel();
                    a.exited.clone()
                })
                .collect()
        };
        for mut exited in waits {
            let _ = exited.wait_for(|done| *done).await;
        }
    }
}

impl CodeRuntime for QuickJsRuntime {
    fn language(&self) -> &str {
        if cfg!(feature = "typescript") {
            "typescript"
        } else {
            "javascript"
        }
    }

    fn isolation(&self) -> &str {
        "quickjs-thread"
    }

    fn run(&self, request: CodeRequest) -> BoxFuture<Result<CodeResult, SeamError>> {
        let limits = self.limits;
        let runs = Arc::clone(&self.runs);
        let checked = validate_bindings(BACKEND, &request.bindings);
        let registered = checked.and_then(|()| {
            let mut r = runs.lock().unwrap_or_else(|e| e.into_inner());
            if r.disposed {
                return Err(SeamError(format!("{BACKEND}: run() after disposal")));
            }
            r.next += 1;
            let id = r.next;
            let disposed = CancellationToken::new();
            let (exited_tx, exited) = watch::channel(false);
            r.active.insert(
                id,
                Active {
                    disposed: disposed.clone(),
                    exited,
                },
            );
            Ok((id, disposed, exited_tx))
        });
        Box::pin(async move {
            let (id, disposed, exited_tx) = registered?;
            let signal = request.signal.clone().unwrap_or_default();
            let forget = {
                let runs = Arc::clone(&runs);
                move || {
                    runs.lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .active
                        .remove(&id);
                }
            };
            if signal.is_cancelled() {
                forget();
                let _ = exited_tx.send(true);
                return Ok(OutputLedger::new(limits.max_output_bytes)
                    .fail(FailureKind::Abort, super::ABORT_REASON.to_owned()));
            }
            let host = tokio::runtime::Handle::current();
            // The run stops when this future is dropped.
            let run_signal = signal.child_token();
            let _stop_on_drop = run_signal.clone().drop_guard();
            let job = engine::Job {
                program: request.program,
                bindings: request.bindings,
                signal: run_signal,
                disposed,
                limits,
                host,
            };
            let (result_tx, result_rx) = oneshot::channel();
            let spawned = std::thread::Builder::new()
                .name("dsh-code-run".to_owned())
                .stack_size(THREAD_STACK_BYTES)
                .spawn(move || {
                    let result = engine::run(job);
                    // The engine is gone: the run no longer counts as in flight, then its result.
                    forget();
                    let _ = exited_tx.send(true);
                    let _ = result_tx.send(result);
                });
            if let Err(e) = spawned {
                runs.lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .active
                    .remove(&id);
                return Ok(OutputLedger::new(limits.max_output_bytes).fail(
                    FailureKind::WorkerExit,
                    format!("worker error: could not start the run's thread: {e}"),
                ));
            }
            Ok(result_rx.await.unwrap_or_else(|_| {
                OutputLedger::new(limits.max_output_bytes).fail(
                    FailureKind::WorkerExit,
                    "worker error: the run's thread ended without a result".to_owned(),
                )
            }))
        })
    }
}

//! [`QuickJsRuntime`]: Code Mode programs in an embedded QuickJS-ng engine (feature `quickjs`;
//! TypeScript with feature `typescript`).
//!
//! Each run gets its own thread and its own engine, dropped when the run ends: no state survives
//! between runs. Engines are made ahead of their runs ([`EnginePool::warm`] of them wait, each on
//! its thread, refilled in the background), and at most [`EnginePool::max_runs`] runs go at once
//! (later ones queue). A run polls its binding calls and the `run_code` lane on its own thread,
//! so a call whose stages and body are ready is answered without waking another thread. Nothing ambient exists in the sandbox: no module loader, no timers, no I/O, no
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
mod event_loop;
mod host;
mod pool;
mod start;
mod state;
#[cfg(feature = "typescript")]
mod typescript;
mod walk;

use super::{CodeRequest, CodeResult, CodeRuntime, CodeRuntimeConfig, FailureKind, OutputLedger};
use super::{Companion, RunWithOutcome, SeamError, validate_bindings};
use crate::call::BoxFuture;
use engine::EngineLimits;
use pool::{Pool, Work};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::{Semaphore, oneshot, watch};
use tokio_util::sync::CancellationToken;

/// The backend's name: the prefix of its seam-misuse and configuration messages.
pub const BACKEND: &str = "dsh-code-runtime-quickjs";

/// The engine's stack limit: deeper recursion is a catchable error.
const STACK_BYTES: usize = 4 << 20;

/// How many engines a [`QuickJsRuntime`] keeps warm, and how many runs it lets go at once.
///
/// A warm engine is a thread that made its engine (runtime, context, bootstrap) before any run
/// asked for it: a run that finds one starts at once, and the pool is refilled behind it. An
/// engine serves one run and is dropped with it. An idle warm engine costs a thread (its stack
/// reserved, little of it touched) and the engine's start-up heap, about 350 KiB resident
/// (BENCHMARKS.md, `code`, issue 35). Runs past `max_runs` wait for a slot (cancelling such a
/// run ends its wait as `abort`), so the threads a runtime holds stay under `max_runs + warm`,
/// plus briefly one per slot while a finished run's thread ends, and one short-lived
/// type-stripping thread per TypeScript run starting.
///
/// ```
/// use dsh_tools::code::quickjs::{EnginePool, QuickJsRuntime};
///
/// let pool = EnginePool::default().warm(4).max_runs(8);
/// assert_eq!((pool.warm_engines(), pool.run_slots()), (4, 8));
/// // Out of range: clamped, never a panic or a thousand threads.
/// let wide = EnginePool::default().warm(usize::MAX).max_runs(0);
/// assert_eq!((wide.warm_engines(), wide.run_slots()), (EnginePool::MAX_WARM, 1));
/// let runtime = QuickJsRuntime::with_pool(Default::default(), pool).unwrap();
/// # drop(runtime);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EnginePool {
    warm: usize,
    max_runs: usize,
}

impl Default for EnginePool {
    /// Two warm engines, sixteen runs at once.
    fn default() -> Self {
        Self {
            warm: 2,
            max_runs: 16,
        }
    }
}

impl EnginePool {
    /// The most engines kept warm ([`warm`](Self::warm) is clamped to it).
    pub const MAX_WARM: usize = 64;
    /// The most run slots ([`max_runs`](Self::max_runs) is clamped to it).
    pub const MAX_RUNS: usize = 4_096;

    /// Keeps `engines` warm (0: every run makes its engine, as it starts; at most
    /// [`MAX_WARM`](Self::MAX_WARM)).
    pub fn warm(mut self, engines: usize) -> Self {
        self.warm = engines.min(Self::MAX_WARM);
        self
    }

    /// Lets at most `runs` go at once (1 to [`MAX_RUNS`](Self::MAX_RUNS)); later runs wait for a
    /// slot.
    pub fn max_runs(mut self, runs: usize) -> Self {
        self.max_runs = runs.clamp(1, Self::MAX_RUNS);
        self
    }

    /// The engines kept warm.
    pub fn warm_engines(&self) -> usize {
        self.warm
    }

    /// The runs let go at once.
    pub fn run_slots(&self) -> usize {
        self.max_runs
    }
}

/// A run counted in flight (in [`Runs::active`]) until this is dropped.
struct InFlight {
    runs: Arc<Mutex<Runs>>,
    id: u64,
}

impl Drop for InFlight {
    fn drop(&mut self) {
        self.runs
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .active
            .remove(&self.id);
    }
}

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
    pool: Arc<Pool>,
    slots: Arc<Semaphore>,
    options: EnginePool,
}

impl std::fmt::Debug for QuickJsRuntime {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("QuickJsRuntime")
            .field("limits", &self.limits)
            .field("pool", &self.options)
            .finish_non_exhaustive()
    }
}

impl Drop for QuickJsRuntime {
    fn drop(&mut self) {
        // Idle engines' threads exit now; runs in flight finish as they would.
        self.pool.close();
    }
}

impl QuickJsRuntime {
    /// A runtime with `config`'s budgets, validated (spec §3.5.2; messages prefixed with
    /// [`BACKEND`]), and the default [`EnginePool`].
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
        Self::with_pool(config, EnginePool::default())
    }

    /// A runtime with `config`'s budgets and `pool`'s warm engines and run slots. The warm
    /// engines are made now, in the background.
    pub fn with_pool(config: CodeRuntimeConfig, pool: EnginePool) -> Result<Self, SeamError> {
        config.validate(BACKEND)?;
        let ms = |x: f64| Duration::from_secs_f64(x / 1000.0);
        let memory = (config.max_old_generation_size_mb * 1024.0 * 1024.0).min(usize::MAX as f64);
        let limits = EngineLimits {
            compute: ms(config.compute_ms),
            wall: ms(config.max_wall_ms),
            max_output_bytes: config.max_output_bytes as usize,
            memory_bytes: memory as usize,
            stack_bytes: STACK_BYTES,
        };
        Ok(Self {
            limits,
            runs: Arc::default(),
            pool: Pool::new(limits, pool.warm),
            slots: Arc::new(Semaphore::new(pool.max_runs)),
            options: pool,
        })
    }

    /// How many runs this runtime has started (for tests and metrics).
    pub fn runs_started(&self) -> u64 {
        self.runs.lock().unwrap_or_else(|e| e.into_inner()).next
    }

    /// How many runs are in flight (waiting for a slot, or their threads not yet exited).
    pub fn runs_in_flight(&self) -> usize {
        self.runs
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .active
            .len()
    }

    /// How many warm engines wait for a run now.
    pub fn warm_engines(&self) -> usize {
        self.pool.idle()
    }

    /// How many threads this runtime holds now: runs, warm engines and engines being made (a
    /// thread counts until its last act; the kernel may take a moment more to reap it). At most
    /// [`EnginePool::run_slots`] plus [`EnginePool::warm_engines`], and briefly one more per slot
    /// while a finished run's thread ends.
    pub fn threads(&self) -> usize {
        self.pool.threads()
    }

    /// Disposes the runtime (spec §3.1.4): every in-flight run fails with `abort` (`runtime
    /// disposed`), warm engines are let go, and the returned future completes once each run's
    /// thread has exited. A later [`run`](CodeRuntime::run) fails with `run() after disposal`.
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
        self.pool.close();
        for mut exited in waits {
            let _ = exited.wait_for(|done| *done).await;
        }
    }

    /// Runs `request` with `companion` polled on the run's thread.
    fn start(
        &self,
        request: CodeRequest,
        companion: Option<Companion>,
    ) -> BoxFuture<RunWithOutcome> {
        let limits = self.limits;
        let runs = Arc::clone(&self.runs);
        let pool = Arc::clone(&self.pool);
        let slots = Arc::clone(&self.slots);
        let checked = validate_bindings(BACKEND, &request.bindings);
        let registered = checked.and_then(|()| {
            let mut r = runs.lock().unwrap_or_else(|e| e.into_inner());
            if r.disposed {
                return Err(SeamError::Disposed {
                    backend: BACKEND.to_owned(),
                });
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
            let (id, disposed, exited_tx) = match registered {
                Ok(registered) => registered,
                Err(e) => return (Err(e), companion),
            };
            let signal = request.signal.clone().unwrap_or_default();
            // Counts the run as in flight until dropped: by its thread once the engine is freed,
            // or here if the run ends (or this future is dropped) before it has one.
            let counted = InFlight {
                runs: Arc::clone(&runs),
                id,
            };
            let aborted = |message: &str| {
                OutputLedger::new(limits.max_output_bytes)
                    .fail(FailureKind::Abort, message.to_owned())
            };
            // A slot first: past `max_runs`, the run waits here (cancellable).
            let slot = match Arc::clone(&slots).try_acquire_owned() {
                Ok(slot) => Some(slot),
                Err(_) => tokio::select! {
                    slot = Arc::clone(&slots).acquire_owned() => slot.ok(),
                    () = signal.cancelled() => None,
                    () = disposed.cancelled() => None,
                },
            };
            let Some(slot) = slot.filter(|_| !signal.is_cancelled() && !disposed.is_cancelled())
            else {
                drop(counted);
                let _ = exited_tx.send(true);
                let reason = if disposed.is_cancelled() {
                    "runtime disposed"
                } else {
                    super::ABORT_REASON
                };
                return (Ok(aborted(reason)), companion);
            };
            let host = tokio::runtime::Handle::current();
            // The run stops when this future is dropped.
            let run_signal = signal.child_token();
            let _stop_on_drop = run_signal.clone().drop_guard();
            let job = engine::Job {
                program: request.program,
                bindings: request.bindings,
                signal: run_signal,
                disposed,
                host,
                companion,
            };
            let (result_tx, result_rx) = oneshot::channel();
            let deliver: engine::Deliver = Box::new(move |result, companion| {
                let _ = result_tx.send((result, companion));
            });
            // Once the engine is freed: the run no longer counts as in flight, and its slot
            // goes to the next run.
            let release = Box::new(move || {
                drop(counted);
                let _ = exited_tx.send(true);
                drop(slot);
            });
            let work = Work {
                job,
                deliver,
                release,
            };
            pool.run(work);
            match result_rx.await {
                Ok((result, companion)) => (Ok(result), companion),
                Err(_) => (
                    Ok(OutputLedger::new(limits.max_output_bytes).fail(
                        FailureKind::WorkerExit,
                        "worker error: the run's thread ended without a result".to_owned(),
                    )),
                    None,
                ),
            }
        })
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
        let started = self.start(request, None);
        Box::pin(async move { started.await.0 })
    }

    fn run_with(&self, request: CodeRequest, companion: Companion) -> BoxFuture<RunWithOutcome> {
        self.start(request, Some(companion))
    }
}

//! Warm engines: threads that each made one engine ahead of a run (runtime, context, bootstrap,
//! host functions) and wait for it. A run takes one, and the pool is refilled in the background
//! by new threads; no engine ever serves a second run. Without a warm engine, a run makes its own
//! on a thread of its own, as every run did before the pool.

use super::engine::{self, Deliver, EngineLimits, Job, Prepared};
use crate::code::{FailureKind, OutputLedger};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex, Weak};

/// The run thread's own stack (the engine's limit plus room for the host's frames).
const THREAD_STACK_BYTES: usize = 16 << 20;

/// One run handed to a thread: the job, what receives its result, and what the thread does
/// last, once its engine is freed (it holds the run's slot).
pub(super) struct Work {
    pub(super) job: Job,
    pub(super) deliver: Deliver,
    pub(super) release: Box<dyn FnOnce() + Send>,
}

impl Work {
    fn run(self, prepared: Result<Prepared, engine::NotPrepared>, limits: &EngineLimits) {
        let Work {
            job,
            deliver,
            release,
        } = self;
        engine::run(prepared, job, limits, deliver);
        release();
    }
}

/// A thread whose engine is made, waiting for its run.
struct Warm {
    work: mpsc::Sender<Work>,
}

#[derive(Default)]
struct Slots {
    idle: Vec<Warm>,
    /// Threads making an engine for the pool.
    preparing: usize,
    /// Disposed or dropped: nothing is kept warm any more.
    closed: bool,
    /// An engine could not be made (the configuration leaves no room for the bootstrap, say):
    /// refilling would fail again, so the pool stops refilling and runs make their own engines,
    /// each reporting why it failed.
    failed: bool,
}

/// The warm engines of one runtime.
pub(super) struct Pool {
    limits: EngineLimits,
    target: usize,
    slots: Mutex<Slots>,
    /// Threads started and not yet at their end (running, warm or making an engine).
    threads: Arc<AtomicUsize>,
}

/// Counts a thread until its closure ends.
struct Counted(Arc<AtomicUsize>);

impl Counted {
    fn new(threads: &Arc<AtomicUsize>) -> Self {
        threads.fetch_add(1, Ordering::AcqRel);
        Self(Arc::clone(threads))
    }
}

impl Drop for Counted {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}

impl Pool {
    /// A pool keeping `target` engines warm, filled now.
    pub(super) fn new(limits: EngineLimits, target: usize) -> Arc<Self> {
        let pool = Arc::new(Self {
            limits,
            target,
            slots: Mutex::default(),
            threads: Arc::default(),
        });
        pool.refill();
        pool
    }

    fn slots(&self) -> std::sync::MutexGuard<'_, Slots> {
        self.slots.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Idle warm engines now (for tests and metrics).
    pub(super) fn idle(&self) -> usize {
        self.slots().idle.len()
    }

    /// Threads this pool started that have not ended.
    pub(super) fn threads(&self) -> usize {
        self.threads.load(Ordering::Acquire)
    }

    /// Lets every idle engine go (their threads exit) and keeps none from now on.
    pub(super) fn close(&self) {
        let idle = {
            let mut slots = self.slots();
            slots.closed = true;
            std::mem::take(&mut slots.idle)
        };
        drop(idle);
    }

    /// Runs `work` on a warm engine, or on a new thread with an engine of its own; then tops the
    /// pool up. When no thread can be started, the run fails with `worker-exit`.
    pub(super) fn run(self: &Arc<Self>, work: Work) {
        let mut work = work;
        loop {
            let warm = self.slots().idle.pop();
            let Some(warm) = warm else {
                break;
            };
            match warm.work.send(work) {
                Ok(()) => {
                    self.refill();
                    return;
                }
                // Its thread is gone: try the next one.
                Err(mpsc::SendError(back)) => work = back,
            }
        }
        let limits = self.limits;
        let cold = Arc::new(Mutex::new(Some(work)));
        let handed = Arc::clone(&cold);
        let spawned = self.spawn("dsh-code-run", move || {
            let work = handed.lock().unwrap_or_else(|e| e.into_inner()).take();
            if let Some(work) = work {
                work.run(Prepared::new(&limits), &limits);
            }
        });
        self.refill();
        if let Err(e) = spawned {
            // A thread that did not start took nothing.
            let work = cold.lock().unwrap_or_else(|e| e.into_inner()).take();
            if let Some(Work {
                job,
                deliver,
                release,
            }) = work
            {
                let failed = OutputLedger::new(self.limits.max_output_bytes).fail(
                    FailureKind::WorkerExit,
                    format!("worker error: could not start the run's thread: {e}"),
                );
                deliver(failed, job.companion);
                release();
            }
        }
    }

    /// Starts a thread named `name` with the run's stack, counted in [`threads`](Self::threads)
    /// until `body` returns.
    fn spawn(&self, name: &str, body: impl FnOnce() + Send + 'static) -> std::io::Result<()> {
        let counted = Counted::new(&self.threads);
        std::thread::Builder::new()
            .name(name.to_owned())
            .stack_size(THREAD_STACK_BYTES)
            .spawn(move || {
                let _counted = counted;
                body();
            })
            .map(drop)
    }

    /// Starts threads until `target` engines are idle or being made.
    fn refill(self: &Arc<Self>) {
        let wanted = {
            let mut slots = self.slots();
            if slots.closed || slots.failed {
                return;
            }
            let have = slots.idle.len() + slots.preparing;
            let wanted = self.target.saturating_sub(have);
            slots.preparing += wanted;
            wanted
        };
        for _ in 0..wanted {
            let pool = Arc::downgrade(self);
            let limits = self.limits;
            let spawned = self.spawn("dsh-code-warm", move || warm(pool, limits));
            if spawned.is_err() {
                let mut slots = self.slots();
                slots.preparing -= 1;
            }
        }
    }
}

/// A warm thread: makes its engine, offers it, and runs the one run it is given (or exits when
/// the pool lets it go).
fn warm(pool: Weak<Pool>, limits: EngineLimits) {
    let prepared = Prepared::new(&limits);
    let (work, waiting) = mpsc::channel::<Work>();
    {
        // The pool is not kept alive by its idle threads.
        let Some(pool) = pool.upgrade() else {
            return;
        };
        let mut slots = pool.slots();
        slots.preparing = slots.preparing.saturating_sub(1);
        if prepared.is_err() {
            slots.failed = true;
            return;
        }
        if slots.closed {
            return;
        }
        slots.idle.push(Warm { work });
    }
    if let Ok(work) = waiting.recv() {
        work.run(prepared, &limits);
    }
}

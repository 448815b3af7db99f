//! Tasks (issue 36, part 1): a call started as a task runs its policies first, its body
//! detached, post-execute and the observers once when it settles; owners, cancellation (here
//! and from another instance), progress, a store that fails, an instance that dies.

use dsh_tools::pipeline::{BoxFuture, Caller};
use dsh_tools::task::{
    MemoryTaskStore, Started, TaskConfig, TaskError, TaskPage, TaskRecord, TaskStatus, TaskStore,
    TaskStoreError, TaskSupport, Tasks,
};
use dsh_tools::{
    CancellationToken, OutputDecl, PreToolDecision, Registry, ToolDefinition, ToolExecution,
    ToolExecutionInput, ToolExecutionResult,
};
use serde_json::json;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::Notify;

/// A registry with `build` (waits for `release`, reporting progress first, then returns
/// "built"; sees its signal), `now` (task-forbidden) and counters of bodies, post-execute
/// hooks and observers.
struct Fixture {
    registry: Registry,
    release: Arc<Notify>,
    bodies: Arc<AtomicUsize>,
    posts: Arc<AtomicUsize>,
    observed: Arc<Mutex<Vec<String>>>,
    body_cancelled: Arc<AtomicBool>,
}

fn fixture() -> Fixture {
    let registry = Registry::new();
    let release = Arc::new(Notify::new());
    let bodies = Arc::new(AtomicUsize::new(0));
    let body_cancelled = Arc::new(AtomicBool::new(false));
    let (r, b, c) = (
        Arc::clone(&release),
        Arc::clone(&bodies),
        Arc::clone(&body_cancelled),
    );
    registry
        .register(
            ToolDefinition::new(
                "build",
                "Builds",
                json!({"type": "object"}),
                OutputDecl::text(),
                move |_, ctx| {
                    let (release, bodies, cancelled) = (r.clone(), b.clone(), c.clone());
                    async move {
                        bodies.fetch_add(1, Ordering::SeqCst);
                        ctx.report_progress(1.0, Some(4.0), Some("compiling"));
                        tokio::select! {
                            () = release.notified() => Ok(json!("built")),
                            () = ctx.signal().cancelled() => {
                                cancelled.store(true, Ordering::SeqCst);
                                Err(dsh_tools::ToolError::aborted())
                            }
                        }
                    }
                },
            )
            .task_support(TaskSupport::Optional),
        )
        .unwrap();
    registry
        .register(ToolDefinition::new(
            "now",
            "In place",
            json!({"type": "object"}),
            OutputDecl::text(),
            |_, _| async { Ok(json!("in place")) },
        ))
        .unwrap();
    let posts = Arc::new(AtomicUsize::new(0));
    let p = Arc::clone(&posts);
    registry
        .on_post_execute(move |_exec: Arc<ToolExecution>, _result, next| {
            p.fetch_add(1, Ordering::SeqCst);
            async move { next.run().await }
        })
        .keep();
    let observed = Arc::new(Mutex::new(Vec::new()));
    let o = Arc::clone(&observed);
    registry
        .on_result(move |exec: &ToolExecution, result: &ToolExecutionResult| {
            o.lock()
                .unwrap()
                .push(format!("{} {}", exec.name(), result.code().unwrap_or("ok")));
            Ok(())
        })
        .keep();
    Fixture {
        registry,
        release,
        bodies,
        posts,
        observed,
        body_cancelled,
    }
}

fn input(name: &str) -> ToolExecutionInput {
    ToolExecutionInput::new("c1", name, json!({}), CancellationToken::new())
}

fn as_task(started: Started) -> TaskRecord {
    match started {
        Started::Task(task) => task,
        Started::Settled(result) => panic!("settled, not a task: {}", result.text()),
    }
}

async fn eventually(mut check: impl FnMut() -> bool) {
    for _ in 0..500 {
        if check() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("the condition never held");
}

#[tokio::test]
async fn a_task_runs_detached_and_settles_once() {
    let f = fixture();
    let tasks = Tasks::new(&f.registry);
    let task = as_task(tasks.start(input("build"), None).await);
    assert_eq!(task.status, TaskStatus::Working);
    assert_eq!(task.tool, "build");
    assert_eq!(task.ttl_ms, Some(3_600_000));
    // The body runs (and reports) while the starter has gone on.
    eventually(|| f.bodies.load(Ordering::SeqCst) == 1).await;
    let seen = tasks.get(&task.id, None).await.unwrap();
    assert_eq!(seen.status, TaskStatus::Working);
    assert!(
        f.observed.lock().unwrap().is_empty(),
        "observed before it settled"
    );
    f.release.notify_one();
    let done = tasks
        .wait(&task.id, None, &CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(done.status, TaskStatus::Completed);
    assert_eq!(done.result.as_ref().unwrap().text(), "built");
    assert_eq!(done.progress.as_ref().unwrap().total, Some(4.0));
    // Read again: the store has the same end.
    let again = tasks.get(&task.id, None).await.unwrap();
    assert_eq!(again.status, TaskStatus::Completed);
    assert_eq!(f.posts.load(Ordering::SeqCst), 1);
    assert_eq!(*f.observed.lock().unwrap(), vec!["build ok".to_owned()]);
    assert_eq!(f.bodies.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn policies_run_before_a_task_exists() {
    let f = fixture();
    f.registry
        .on_pre_execute(|_e, _next| async { Ok(PreToolDecision::deny("not today")) })
        .keep();
    let tasks = Tasks::new(&f.registry);
    let Started::Settled(result) = tasks.start(input("build"), None).await else {
        panic!("a denied call became a task");
    };
    assert!(result.is_error());
    assert!(result.text().contains("not today"), "{}", result.text());
    assert_eq!(f.bodies.load(Ordering::SeqCst), 0);
    assert!(tasks.list(None, None, 10).await.unwrap().tasks.is_empty());
}

#[tokio::test]
async fn a_caller_cancelling_while_approval_waits_starts_nothing() {
    let f = fixture();
    f.registry
        .on_pre_execute(|_e, _next| async { Ok(PreToolDecision::ask(Some("sure?"))) })
        .keep();
    // An approval service that answers only when the call is cancelled.
    f.registry
        .set_approval_service(|req: dsh_tools::ApprovalRequest| async move {
            req.signal.cancelled().await;
            Ok(dsh_tools::ApprovalOutcome::Cancelled)
        });
    let tasks = Tasks::new(&f.registry);
    let signal = CancellationToken::new();
    let mut call = input("build").agent("coder");
    call.signal = signal.clone();
    let cancel = tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(50)).await;
        signal.cancel();
    });
    let Started::Settled(result) = tasks.start(call, None).await else {
        panic!("became a task");
    };
    cancel.await.unwrap();
    assert!(result.is_error(), "{}", result.text());
    assert_eq!(
        result.code(),
        Some("ABORTED_BEFORE_DISPATCH"),
        "{}",
        result.text()
    );
    assert_eq!(f.bodies.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn a_tool_that_does_not_run_as_a_task_runs_in_place() {
    let f = fixture();
    let tasks = Tasks::new(&f.registry);
    assert_eq!(tasks.support("now", None), TaskSupport::Forbidden);
    assert_eq!(tasks.support("build", None), TaskSupport::Optional);
    let Started::Settled(result) = tasks.start(input("now"), None).await else {
        panic!("a forbidden tool became a task");
    };
    assert_eq!(result.text(), "in place");
    let Started::Settled(missing) = tasks.start(input("nope"), None).await else {
        panic!("an unknown tool became a task");
    };
    assert_eq!(missing.code(), Some("UNKNOWN_TOOL"));
}

#[tokio::test]
async fn cancelling_ends_the_task_now_and_the_body_hears_it() {
    let f = fixture();
    let tasks = Tasks::new(&f.registry);
    let task = as_task(tasks.start(input("build"), None).await);
    eventually(|| f.bodies.load(Ordering::SeqCst) == 1).await;
    let cancelled = tasks.cancel(&task.id, None).await.unwrap();
    assert_eq!(cancelled.status, TaskStatus::Cancelled);
    assert_eq!(cancelled.result.as_ref().unwrap().code(), Some("ABORTED"));
    eventually(|| f.body_cancelled.load(Ordering::SeqCst)).await;
    eventually(|| f.observed.lock().unwrap().len() == 1).await;
    assert_eq!(
        *f.observed.lock().unwrap(),
        vec!["build ABORTED".to_owned()]
    );
    let read = tasks.get(&task.id, None).await.unwrap();
    assert_eq!(
        read.status,
        TaskStatus::Cancelled,
        "the body's end did not overwrite it"
    );
    match tasks.cancel(&task.id, None).await {
        Err(TaskError::Ended(ended)) => assert_eq!(ended.status, TaskStatus::Cancelled),
        other => panic!("{other:?}"),
    }
    assert_eq!(f.posts.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn another_owner_sees_nothing() {
    let f = fixture();
    let tasks = Tasks::new(&f.registry);
    let alice = input("build").caller(Caller::new("alice"));
    let task = as_task(tasks.start(alice, None).await);
    assert_eq!(task.owner.as_deref(), Some("alice"));
    for owner in [Some("bob"), None] {
        assert!(matches!(
            tasks.get(&task.id, owner).await,
            Err(TaskError::NotFound(_))
        ));
        assert!(matches!(
            tasks.cancel(&task.id, owner).await,
            Err(TaskError::NotFound(_))
        ));
        assert!(tasks.list(owner, None, 10).await.unwrap().tasks.is_empty());
    }
    let mine = tasks.list(Some("alice"), None, 10).await.unwrap();
    assert_eq!(mine.tasks.len(), 1);
    assert!(matches!(
        tasks.get("0123", Some("alice")).await,
        Err(TaskError::NotFound(_))
    ));
    f.release.notify_one();
}

#[tokio::test]
async fn progress_reaches_the_record_and_the_callers_sink() {
    let f = fixture();
    let tasks = Tasks::new(&f.registry);
    let heard = Arc::new(Mutex::new(Vec::new()));
    let h = Arc::clone(&heard);
    let call = input("build").progress(dsh_tools::pipeline::ProgressSink::new(move |p| {
        h.lock().unwrap().push(p.message.unwrap_or_default());
    }));
    let task = as_task(tasks.start(call, None).await);
    let mut read = None;
    for _ in 0..300 {
        let task = tasks.get(&task.id, None).await.unwrap();
        if task.progress.is_some() {
            read = Some(task);
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let read = read.expect("progress never reached the record");
    assert_eq!(read.progress.unwrap().progress, 1.0);
    assert_eq!(read.status_message.as_deref(), Some("compiling"));
    assert_eq!(*heard.lock().unwrap(), vec!["compiling".to_owned()]);
    f.release.notify_one();
}

#[tokio::test]
async fn ttls_are_capped_and_lists_page() {
    let f = fixture();
    let tasks = Tasks::new(&f.registry).config(TaskConfig::new().max_ttl(Duration::from_secs(60)));
    let task = as_task(
        tasks
            .start(input("build"), Some(Duration::from_secs(3600)))
            .await,
    );
    assert_eq!(task.ttl_ms, Some(60_000));
    as_task(tasks.start(input("build"), None).await);
    as_task(tasks.start(input("build"), None).await);
    let first = tasks.list(None, None, 2).await.unwrap();
    assert_eq!(first.tasks.len(), 2);
    assert_eq!(first.tasks[0].id, task.id, "oldest first");
    let second = tasks.list(None, first.next, 2).await.unwrap();
    assert_eq!(second.tasks.len(), 1);
    assert!(second.next.is_none());
    assert!(matches!(
        tasks.list(None, Some("x".into()), 2).await,
        Err(TaskError::Store(TaskStoreError::BadCursor(_)))
    ));
    for _ in 0..3 {
        f.release.notify_one();
    }
}

#[tokio::test]
async fn a_full_store_refuses_the_task_before_its_body_runs() {
    let f = fixture();
    let tasks = Tasks::with_store(&f.registry, MemoryTaskStore::new(1));
    as_task(tasks.start(input("build"), None).await);
    let Started::Settled(refused) = tasks.start(input("build"), None).await else {
        panic!("started past the store's bound");
    };
    assert_eq!(refused.code(), Some("TRANSIENT"));
    assert!(refused.text().contains("full"), "{}", refused.text());
    eventually(|| f.bodies.load(Ordering::SeqCst) == 1).await;
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert_eq!(
        f.bodies.load(Ordering::SeqCst),
        1,
        "the refused call's body ran"
    );
    // It settled through the pipeline's end: the observers saw it.
    assert_eq!(
        *f.observed.lock().unwrap(),
        vec!["build TRANSIENT".to_owned()]
    );
    f.release.notify_one();
}

#[tokio::test]
async fn a_task_that_outlives_its_ttl_keeps_its_result_for_the_ttl_after_it_ends() {
    let f = fixture();
    let tasks = Tasks::new(&f.registry);
    let task = as_task(
        tasks
            .start(input("build"), Some(Duration::from_millis(1000)))
            .await,
    );
    tokio::time::sleep(Duration::from_millis(1100)).await;
    f.release.notify_one();
    let done = tasks
        .wait(&task.id, None, &CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(done.status, TaskStatus::Completed);
    // Read again once the store has the end: still there (kept 1 s from the end).
    eventually(|| f.observed.lock().unwrap().len() == 1).await;
    tokio::time::sleep(Duration::from_millis(20)).await;
    let read = tasks.get(&task.id, None).await.unwrap();
    assert_eq!(read.result.unwrap().text(), "built");
    tokio::time::sleep(Duration::from_millis(1100)).await;
    assert!(matches!(
        tasks.get(&task.id, None).await,
        Err(TaskError::NotFound(_))
    ));
}

/// A store in front of another that fails `replace` while `down` is set.
#[derive(Clone)]
struct Flaky {
    store: Arc<MemoryTaskStore>,
    down: Arc<AtomicBool>,
    failed: Arc<AtomicUsize>,
}

impl TaskStore for Flaky {
    fn create(&self, task: TaskRecord) -> BoxFuture<Result<(), TaskStoreError>> {
        self.store.create(task)
    }
    fn get(&self, id: &str) -> BoxFuture<Result<Option<TaskRecord>, TaskStoreError>> {
        self.store.get(id)
    }
    fn replace(&self, task: TaskRecord, expected: u64) -> BoxFuture<Result<bool, TaskStoreError>> {
        if self.down.load(Ordering::SeqCst) {
            self.failed.fetch_add(1, Ordering::SeqCst);
            return Box::pin(async { Err(TaskStoreError::Unavailable("down".into())) });
        }
        self.store.replace(task, expected)
    }
    fn list(
        &self,
        owner: Option<String>,
        cursor: Option<String>,
        limit: usize,
    ) -> BoxFuture<Result<TaskPage, TaskStoreError>> {
        self.store.list(owner, cursor, limit)
    }
}

#[tokio::test]
async fn a_result_outlives_a_store_that_is_down_when_it_settles() {
    let f = fixture();
    let flaky = Flaky {
        store: Arc::new(MemoryTaskStore::default()),
        down: Arc::new(AtomicBool::new(false)),
        failed: Arc::new(AtomicUsize::new(0)),
    };
    let tasks = Tasks::with_store(&f.registry, flaky.clone());
    let task = as_task(tasks.start(input("build"), None).await);
    eventually(|| f.bodies.load(Ordering::SeqCst) == 1).await;
    flaky.down.store(true, Ordering::SeqCst);
    f.release.notify_one();
    eventually(|| flaky.failed.load(Ordering::SeqCst) >= 2).await;
    // The store still says working; the waiter here is not kept waiting for it.
    let kept = flaky.store.get(&task.id).await.unwrap().unwrap();
    assert_eq!(kept.status, TaskStatus::Working);
    flaky.down.store(false, Ordering::SeqCst);
    let done = tasks
        .wait(&task.id, None, &CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(done.result.unwrap().text(), "built");
    // Once the store is back, the retry writes the end, once.
    let mut stored = None;
    for _ in 0..300 {
        let kept = flaky.store.get(&task.id).await.unwrap().unwrap();
        if kept.status.is_terminal() {
            stored = Some(kept);
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let stored = stored.expect("the end was never written");
    assert_eq!(stored.status, TaskStatus::Completed);
    assert_eq!(stored.result.unwrap().text(), "built");
    assert_eq!(f.observed.lock().unwrap().len(), 1);
}

/// Two instances sharing one store: a task started on one is read and cancelled on the other.
#[tokio::test]
async fn another_instance_reads_and_cancels_a_task() {
    let f = fixture();
    let store: Arc<dyn TaskStore> = Arc::new(MemoryTaskStore::default());
    let config = TaskConfig::new().lease(Duration::from_millis(300));
    let a = Tasks::with_shared_store(&f.registry, Arc::clone(&store)).config(config.clone());
    let other = fixture();
    let b = Tasks::with_shared_store(&other.registry, store).config(config);
    let task = as_task(a.start(input("build"), None).await);
    let read = b.get(&task.id, None).await.unwrap();
    assert_eq!(read.status, TaskStatus::Working);
    let cancelled = b.cancel(&task.id, None).await.unwrap();
    assert_eq!(cancelled.status, TaskStatus::Cancelled);
    // The running instance hears of it when it renews its lease (a third of 300 ms).
    eventually(|| f.body_cancelled.load(Ordering::SeqCst)).await;
    eventually(|| f.observed.lock().unwrap().len() == 1).await;
    assert_eq!(
        a.get(&task.id, None).await.unwrap().status,
        TaskStatus::Cancelled
    );
}

/// An instance that dies with a task running: once its lease passes, the task reads `failed`
/// with the reason, on the instance that is left.
#[test]
fn a_task_whose_instance_died_ends_failed() {
    let f = fixture();
    let store: Arc<dyn TaskStore> = Arc::new(MemoryTaskStore::default());
    let config = TaskConfig::new().lease(Duration::from_millis(200));
    let dying = tokio::runtime::Runtime::new().unwrap();
    let a = Tasks::with_shared_store(&f.registry, Arc::clone(&store)).config(config.clone());
    let task = dying.block_on(async { as_task(a.start(input("build"), None).await) });
    dying.block_on(async {
        eventually(|| f.bodies.load(Ordering::SeqCst) == 1).await;
    });
    // The instance's runtime goes: the body and its lease keeper with it.
    dying.shutdown_background();
    let alive = tokio::runtime::Runtime::new().unwrap();
    alive.block_on(async {
        let other = fixture();
        let b = Tasks::with_shared_store(&other.registry, store).config(config);
        assert_eq!(
            b.get(&task.id, None).await.unwrap().status,
            TaskStatus::Working
        );
        let mut failed = None;
        for _ in 0..100 {
            let read = b.get(&task.id, None).await.unwrap();
            if read.status != TaskStatus::Working {
                failed = Some(read);
                break;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        let failed = failed.expect("still working long after its lease");
        assert_eq!(failed.status, TaskStatus::Failed);
        let message = failed.status_message.unwrap();
        assert!(message.contains("stopped before it ended"), "{message}");
        let waited = b
            .wait(&task.id, None, &CancellationToken::new())
            .await
            .unwrap();
        assert_eq!(waited.status, TaskStatus::Failed);
    });
}

#[tokio::test]
async fn a_wait_can_be_cancelled_and_the_task_goes_on() {
    let f = fixture();
    let tasks = Tasks::new(&f.registry);
    let task = as_task(tasks.start(input("build"), None).await);
    let signal = CancellationToken::new();
    signal.cancel();
    assert!(matches!(
        tasks.wait(&task.id, None, &signal).await,
        Err(TaskError::WaitCancelled(_))
    ));
    assert_eq!(
        tasks.get(&task.id, None).await.unwrap().status,
        TaskStatus::Working
    );
    f.release.notify_one();
    let done = tasks
        .wait(&task.id, None, &CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(done.status, TaskStatus::Completed);
}

#[tokio::test]
async fn a_body_that_finishes_after_a_cancel_does_not_undo_it() {
    let f = fixture();
    let release = Arc::new(Notify::new());
    let r = Arc::clone(&release);
    let started = Arc::new(AtomicBool::new(false));
    let s = Arc::clone(&started);
    f.registry
        .register(
            ToolDefinition::new(
                "stubborn",
                "Ignores its signal",
                json!({"type": "object"}),
                OutputDecl::text(),
                move |_, _| {
                    let (release, started) = (r.clone(), s.clone());
                    async move {
                        started.store(true, Ordering::SeqCst);
                        release.notified().await;
                        Ok(json!("finished anyway"))
                    }
                },
            )
            .task_support(TaskSupport::Required),
        )
        .unwrap();
    let tasks = Tasks::new(&f.registry);
    let task = as_task(tasks.start(input("stubborn"), None).await);
    eventually(|| started.load(Ordering::SeqCst)).await;
    tasks.cancel(&task.id, None).await.unwrap();
    release.notify_one();
    eventually(|| f.observed.lock().unwrap().len() == 1).await;
    // The pipeline ran to its end once (the body's success, cancelled: ABORTED) ...
    assert_eq!(
        *f.observed.lock().unwrap(),
        vec!["stubborn ABORTED".to_owned()]
    );
    tokio::time::sleep(Duration::from_millis(50)).await;
    // ... and the task stays as its cancel left it.
    let read = tasks.get(&task.id, None).await.unwrap();
    assert_eq!(read.status, TaskStatus::Cancelled);
    assert_eq!(read.result.unwrap().code(), Some("ABORTED"));
}

/// An end another instance wrote (here: `failed`, as a lease read writes it) is never replaced
/// by the body's late result.
#[tokio::test]
async fn an_ended_task_stays_ended_when_its_body_returns_late() {
    let f = fixture();
    let store = Arc::new(MemoryTaskStore::default());
    let tasks = Tasks::with_shared_store(&f.registry, store.clone() as Arc<dyn TaskStore>);
    let task = as_task(tasks.start(input("build"), None).await);
    eventually(|| f.bodies.load(Ordering::SeqCst) == 1).await;
    let kept = store.get(&task.id).await.unwrap().unwrap();
    let mut failed = kept.clone();
    failed.status = TaskStatus::Failed;
    failed.status_message = Some("its lease passed".into());
    failed.version = kept.version + 1;
    assert!(store.replace(failed, kept.version).await.unwrap());
    f.release.notify_one();
    eventually(|| f.observed.lock().unwrap().len() == 1).await;
    let done = tasks
        .wait(&task.id, None, &CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(done.status, TaskStatus::Failed);
    let read = store.get(&task.id).await.unwrap().unwrap();
    assert_eq!(read.status, TaskStatus::Failed);
    assert!(read.result.is_none());
}

// ------------------------------------------------ In Redis (`durable::RedisTaskStore`; the `mcp` test feature brings `redis`)
//
// `#[ignore]`d here: they need a Redis server, which `.ci/redis-fleet.sh` installs under
// `target/`, starts, and points `REDIS_URL` at before running them with `--ignored`.

#[cfg(feature = "mcp")]
mod redis {
    use super::*;
    use dsh_tools::durable::RedisTaskStore;

    async fn store(what: &str) -> RedisTaskStore {
        let url = std::env::var("REDIS_URL").expect("REDIS_URL names the Redis server to use");
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos();
        RedisTaskStore::connect(&url).await.unwrap().prefix(format!(
            "dsh-tools-test:{what}:{}:{nanos}:",
            std::process::id()
        ))
    }

    fn record(id: &str, owner: Option<&str>) -> TaskRecord {
        serde_json::from_value(json!({
            "id": id, "tool": "build", "call_id": "c", "owner": owner, "status": "working",
            "created_at_ms": 1, "updated_at_ms": 1, "ttl_ms": 60_000, "poll_interval_ms": 1000,
            "lease_until_ms": u64::MAX, "version": 0
        }))
        .unwrap()
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    #[ignore = "needs a Redis server: .ci/redis-fleet.sh starts one and runs this with REDIS_URL"]
    async fn the_redis_task_store_keeps_the_contract() {
        let store = store("contract").await.max(3);
        store.create(record("a", Some("alice"))).await.unwrap();
        store.create(record("b", Some("alice"))).await.unwrap();
        store.create(record("c", None)).await.unwrap();
        assert_eq!(
            store.create(record("a", Some("alice"))).await,
            Err(TaskStoreError::Full(3))
        );
        // Compare-and-set: of two writers from one read, one wins.
        let read = store.get("a").await.unwrap().unwrap();
        let mut first = read.clone();
        first.version = 1;
        first.status_message = Some("first".into());
        let mut second = first.clone();
        second.status_message = Some("second".into());
        assert!(store.replace(first, read.version).await.unwrap());
        assert!(!store.replace(second, read.version).await.unwrap());
        assert_eq!(
            store
                .get("a")
                .await
                .unwrap()
                .unwrap()
                .status_message
                .as_deref(),
            Some("first")
        );
        assert!(!store.replace(record("nope", None), 0).await.unwrap());
        // Pages per owner, oldest first.
        let page = store.list(Some("alice".into()), None, 1).await.unwrap();
        assert_eq!(page.tasks.len(), 1);
        assert_eq!(page.tasks[0].id, "a");
        let rest = store
            .list(Some("alice".into()), page.next, 5)
            .await
            .unwrap();
        assert_eq!(
            rest.tasks.iter().map(|t| t.id.as_str()).collect::<Vec<_>>(),
            ["b"]
        );
        let anonymous = store.list(None, None, 5).await.unwrap();
        assert_eq!(anonymous.tasks.len(), 1);
        assert!(
            store
                .list(Some("bob".into()), None, 5)
                .await
                .unwrap()
                .tasks
                .is_empty()
        );
        assert!(matches!(
            store.list(None, Some("x".into()), 5).await,
            Err(TaskStoreError::BadCursor(_))
        ));
        // An ended task expires, and its place is free again.
        let read = store.get("c").await.unwrap().unwrap();
        let mut ended = read.clone();
        ended.version = 1;
        ended.status = TaskStatus::Completed;
        ended.ttl_ms = Some(1);
        ended.created_at_ms = 1;
        ended.updated_at_ms = 1;
        assert!(store.replace(ended, read.version).await.unwrap());
        assert!(store.get("c").await.unwrap().is_none());
        store.create(record("d", None)).await.unwrap();
        // A record past the bound is refused, whole.
        let read = store.get("d").await.unwrap().unwrap();
        let mut huge = read.clone();
        huge.version = 1;
        huge.status_message = Some("x".repeat(9 * 1024 * 1024));
        assert!(matches!(
            store.replace(huge, read.version).await,
            Err(TaskStoreError::TooLarge(_, _))
        ));
        assert_eq!(store.get("d").await.unwrap().unwrap().version, 0);
    }

    /// A fleet of two instances on one Redis: a task started on one is read, waited for and
    /// cancelled on the other; one whose instance dies ends failed.
    #[test]
    #[ignore = "needs a Redis server: .ci/redis-fleet.sh starts one and runs this with REDIS_URL"]
    fn a_fleet_shares_its_tasks_through_redis() {
        let config = TaskConfig::new().lease(Duration::from_millis(300));
        let alive = tokio::runtime::Runtime::new().unwrap();
        let shared = alive.block_on(store("fleet"));
        let f = fixture();
        let a = Tasks::with_store(&f.registry, shared.clone()).config(config.clone());
        let other = fixture();
        let b = Tasks::with_store(&other.registry, shared.clone()).config(config.clone());
        alive.block_on(async {
            // Completed on A, read on B.
            let task = as_task(
                a.start(input("build").caller(Caller::new("alice")), None)
                    .await,
            );
            assert!(matches!(
                b.get(&task.id, Some("bob")).await,
                Err(TaskError::NotFound(_))
            ));
            eventually(|| f.bodies.load(Ordering::SeqCst) == 1).await;
            f.release.notify_one();
            let done = b
                .wait(&task.id, Some("alice"), &CancellationToken::new())
                .await
                .unwrap();
            assert_eq!(done.result.unwrap().text(), "built");
            // Cancelled on B, heard on A at its next renewal.
            let task = as_task(a.start(input("build"), None).await);
            eventually(|| f.bodies.load(Ordering::SeqCst) == 2).await;
            assert_eq!(
                b.cancel(&task.id, None).await.unwrap().status,
                TaskStatus::Cancelled
            );
            eventually(|| f.body_cancelled.load(Ordering::SeqCst)).await;
        });
        // An instance that dies with a task running.
        let dying = tokio::runtime::Runtime::new().unwrap();
        let g = fixture();
        let c = dying.block_on(async {
            let c = Tasks::with_store(&g.registry, shared.clone()).config(config.clone());
            let task = as_task(c.start(input("build"), None).await);
            eventually(|| g.bodies.load(Ordering::SeqCst) == 1).await;
            task
        });
        dying.shutdown_background();
        alive.block_on(async {
            let mut read = b.get(&c.id, None).await.unwrap();
            for _ in 0..100 {
                if read.status != TaskStatus::Working {
                    break;
                }
                tokio::time::sleep(Duration::from_millis(20)).await;
                read = b.get(&c.id, None).await.unwrap();
            }
            assert_eq!(read.status, TaskStatus::Failed);
            assert!(
                read.status_message
                    .unwrap()
                    .contains("stopped before it ended")
            );
        });
    }
}

/// The turn scheduler with tasks (issue 36, part 1): `slow` (parallel, may run as a task,
/// waits for its release), `read` (parallel), `write` (exclusive), `deploy` (exclusive, may
/// run as a task); each notes when its body starts and ends.
mod turns {
    use super::*;
    use dsh_tools::schedule::{TurnCall, TurnScheduler};

    type Events = Arc<Mutex<Vec<String>>>;

    fn noting(
        name: &'static str,
        events: &Events,
        release: Option<Arc<Notify>>,
        parallel: bool,
        task: bool,
    ) -> ToolDefinition {
        let events = Arc::clone(events);
        let mut definition = ToolDefinition::new(
            name,
            name,
            json!({"type": "object"}),
            OutputDecl::text(),
            move |_, _| {
                let (events, release) = (Arc::clone(&events), release.clone());
                async move {
                    events.lock().unwrap().push(format!("{name} start"));
                    if let Some(release) = release {
                        release.notified().await;
                    }
                    events.lock().unwrap().push(format!("{name} end"));
                    Ok(json!(format!("{name} done")))
                }
            },
        );
        if parallel {
            definition = definition.concurrency_safe(|_| true);
        }
        if task {
            definition = definition.task_support(TaskSupport::Optional);
        }
        definition
    }

    fn turn_registry(events: &Events, release: &Arc<Notify>) -> Registry {
        let registry = Registry::new();
        for definition in [
            noting("slow", events, Some(Arc::clone(release)), true, true),
            noting("read", events, None, true, false),
            noting("write", events, None, false, false),
            noting("deploy", events, None, false, true),
        ] {
            registry.register(definition).unwrap().keep();
        }
        registry
    }

    fn calls(names: &[&str], turn: &CancellationToken) -> Vec<ToolExecutionInput> {
        names
            .iter()
            .enumerate()
            .map(|(i, name)| {
                ToolExecutionInput::new(format!("c{i}"), *name, json!({}), turn.clone())
            })
            .collect()
    }

    #[tokio::test]
    async fn a_task_is_left_running_and_an_exclusive_call_waits_for_it() {
        let events = Events::default();
        let release = Arc::new(Notify::new());
        let registry = turn_registry(&events, &release);
        let scheduler = TurnScheduler::new(registry.clone()).tasks(Tasks::new(&registry));
        let turn = CancellationToken::new();
        let run = tokio::spawn({
            let (scheduler, calls) = (
                scheduler.clone(),
                calls(&["slow", "read", "write", "deploy"], &turn),
            );
            let turn = turn.clone();
            async move { scheduler.run_detached(calls, &turn).await }
        });
        // `read` ran beside the task; `write` waits for it.
        for _ in 0..200 {
            if events.lock().unwrap().contains(&"read end".to_owned()) {
                break;
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
        assert_eq!(
            *events.lock().unwrap(),
            ["slow start", "read start", "read end"]
        );
        release.notify_one();
        let done = run.await.unwrap();
        let events = events.lock().unwrap().clone();
        assert_eq!(
            events,
            [
                "slow start",
                "read start",
                "read end",
                "slow end",
                "write start",
                "write end",
                "deploy start",
                "deploy end"
            ]
        );
        // The task's place holds the task; the exclusive `deploy` ran in place.
        let TurnCall::Task { task } = &done.calls[0] else {
            panic!("{:?}", done.calls[0]);
        };
        assert_eq!(task.tool, "slow");
        assert!(
            matches!(&done.calls[3], TurnCall::Settled { result } if result.text() == "deploy done")
        );
        assert_eq!(done.tasks().count(), 1);
        assert!(done.results().is_none());
        let mut collected = done;
        scheduler.collect(&mut collected, None).await.unwrap();
        let texts: Vec<String> = collected
            .results()
            .unwrap()
            .iter()
            .map(|r| r.text())
            .collect();
        assert_eq!(
            texts,
            ["slow done", "read done", "write done", "deploy done"]
        );
    }

    #[tokio::test]
    async fn a_refused_call_settles_and_a_cancelled_turn_stops_the_waiting_exclusive() {
        let events = Events::default();
        let release = Arc::new(Notify::new());
        let registry = turn_registry(&events, &release);
        registry
            .on_pre_execute(
                |e: Arc<ToolExecution>, next: dsh_tools::PreNext| async move {
                    if e.call_id() == "c1" {
                        return Ok(PreToolDecision::deny("not this one"));
                    }
                    next.run().await
                },
            )
            .keep();
        let scheduler = TurnScheduler::new(registry.clone()).tasks(Tasks::new(&registry));
        let turn = CancellationToken::new();
        let run = tokio::spawn({
            let (scheduler, calls) = (scheduler.clone(), calls(&["slow", "slow", "write"], &turn));
            let turn = turn.clone();
            async move { scheduler.run_detached(calls, &turn).await }
        });
        tokio::time::sleep(Duration::from_millis(50)).await;
        turn.cancel();
        let done = run.await.unwrap();
        assert!(
            matches!(done.calls[0], TurnCall::Task { .. }),
            "{:?}",
            done.calls[0]
        );
        let TurnCall::Settled { result } = &done.calls[1] else {
            panic!("a refused call became a task: {:?}", done.calls[1]);
        };
        assert!(
            result.is_error() && result.text().contains("not this one"),
            "{result:?}"
        );
        let TurnCall::Settled { result } = &done.calls[2] else {
            panic!("{:?}", done.calls[2]);
        };
        assert_eq!(
            result.code(),
            Some(dsh_tools::error::codes::ABORTED_BEFORE_DISPATCH)
        );
        assert!(!events.lock().unwrap().contains(&"write start".to_owned()));
        // The task goes on after the turn's end: released, it is collected.
        release.notify_one();
        let mut collected = done;
        scheduler
            .collect(&mut collected, Some(&CancellationToken::new()))
            .await
            .unwrap();
        assert!(
            matches!(&collected.calls[0], TurnCall::Settled { result } if result.text() == "slow done")
        );
    }

    #[tokio::test]
    async fn a_task_gone_before_it_is_collected_settles_as_a_failure_saying_so() {
        let events = Events::default();
        let release = Arc::new(Notify::new());
        release.notify_one();
        let registry = turn_registry(&events, &release);
        let tasks =
            Tasks::new(&registry).config(TaskConfig::new().default_ttl(Duration::from_millis(1)));
        let scheduler = TurnScheduler::new(registry.clone()).tasks(tasks.clone());
        let turn = CancellationToken::new();
        let mut done = scheduler.run_detached(calls(&["slow"], &turn), &turn).await;
        let id = done.tasks().next().expect("a task").id.clone();
        // Its TTL is 1 ms: on a busy machine it may be gone before the wait asks (it ended, and
        // is past its TTL, which is what this test needs).
        match tasks.wait(&id, None, &CancellationToken::new()).await {
            Ok(ended) => assert_eq!(ended.status, TaskStatus::Completed),
            Err(e) => assert!(
                matches!(e, dsh_tools::task::TaskError::NotFound(_)),
                "{e:?}"
            ),
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
        scheduler.collect(&mut done, None).await.unwrap();
        let TurnCall::Settled { result } = &done.calls[0] else {
            panic!("{:?}", done.calls[0]);
        };
        assert!(
            result.is_error() && result.text().contains("is gone"),
            "{result:?}"
        );
    }
}

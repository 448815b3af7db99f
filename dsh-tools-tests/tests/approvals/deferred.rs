//! Deferred approvals (issue 33, part 2): an `ask` that does not block, kept in a store,
//! answered later (maybe by another instance sharing the store), resumed exactly once with
//! every later stage; a whole turn deferred, serialized and resumed.

use dsh_tools::pipeline::{
    ApprovalAnswer, ApprovalPage, ApprovalStore, ApprovalStoreError, BoxFuture, Caller, Deferred,
    MemoryApprovalStore, PendingApproval, ResumeError,
};
use dsh_tools::schedule::{DeferredTurn, TurnScheduler};
use dsh_tools::{
    ApprovalOutcome, ApprovalRequest, CancellationToken, GrantDecision, OutputDecl,
    PreToolDecision, Registry, ToolDefinition, ToolError, ToolExecution, ToolExecutionInput,
    ToolExecutionResult,
};
use serde_json::{Value, json};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

type Log = Arc<Mutex<Vec<String>>>;

/// A registry where every tool named `ask*` asks; every tool logs its runs as `name(args)`.
fn registry(log: &Log, store: Arc<dyn ApprovalStore>) -> Registry {
    let registry = Registry::new();
    registry.set_approval_store(SharedStore(store));
    for name in ["read", "ask_write", "ask_rm", "ask_edit"] {
        let log = Arc::clone(log);
        let tool = ToolDefinition::new(
            name,
            "logs its run",
            json!({"type": "object", "properties": {"path": {"type": "string"}},
                   "additionalProperties": false}),
            OutputDecl::text(),
            move |args: Arc<Value>, _| {
                let line = format!("{name}({})", args);
                log.lock().unwrap().push(line.clone());
                async move { Ok(json!(line)) }
            },
        )
        .editable_arguments(name == "ask_edit");
        registry.register(tool).unwrap().keep();
    }
    registry
        .on_pre_execute(
            |e: Arc<ToolExecution>, next: dsh_tools::PreNext| async move {
                if e.name().starts_with("ask") {
                    return Ok(PreToolDecision::ask(Some("it writes")));
                }
                next.run().await
            },
        )
        .keep();
    registry
}

/// A store handed to several registries (instances sharing one store).
struct SharedStore(Arc<dyn ApprovalStore>);

impl ApprovalStore for SharedStore {
    fn put(&self, a: PendingApproval) -> BoxFuture<Result<(), ApprovalStoreError>> {
        self.0.put(a)
    }
    fn get(&self, id: &str) -> BoxFuture<Result<Option<PendingApproval>, ApprovalStoreError>> {
        self.0.get(id)
    }
    fn claim(&self, id: &str) -> BoxFuture<Result<Option<PendingApproval>, ApprovalStoreError>> {
        self.0.claim(id)
    }
    fn remove(&self, id: &str) -> BoxFuture<Result<(), ApprovalStoreError>> {
        self.0.remove(id)
    }
    fn list(
        &self,
        cursor: Option<String>,
        limit: usize,
    ) -> BoxFuture<Result<ApprovalPage, ApprovalStoreError>> {
        self.0.list(cursor, limit)
    }
}

fn input(id: &str, name: &str, args: Value) -> ToolExecutionInput {
    ToolExecutionInput::new(id, name, args, CancellationToken::new()).agent("a")
}

fn memory() -> Arc<dyn ApprovalStore> {
    Arc::new(MemoryApprovalStore::default())
}

#[tokio::test]
async fn an_ask_settles_pending_and_is_resumed_exactly_once() {
    let log: Log = Arc::default();
    let registry = registry(&log, memory());
    let observed = Arc::new(AtomicUsize::new(0));
    let seen = Arc::clone(&observed);
    registry
        .on_result(move |_e: &ToolExecution, _r: &ToolExecutionResult| {
            seen.fetch_add(1, Ordering::SeqCst);
            Ok(())
        })
        .keep();
    let Deferred::Pending(pending) = registry
        .execute_deferred(input("c1", "ask_write", json!({"path": "a.txt"})))
        .await
    else {
        panic!("an ask settles pending");
    };
    assert_eq!(pending.tool, "ask_write");
    assert_eq!(pending.call_id, "c1");
    assert_eq!(pending.arguments, json!({"path": "a.txt"}));
    assert_eq!(pending.reason.as_deref(), Some("it writes"));
    assert_eq!(pending.agent.to_string(), "a");
    assert_eq!(pending.id.len(), 32);
    assert!(!pending.claimed);
    assert!(log.lock().unwrap().is_empty(), "nothing ran");
    assert_eq!(
        observed.load(Ordering::SeqCst),
        0,
        "observers wait for the answer"
    );
    let page = registry.pending_approvals(None, 10).await.unwrap();
    assert_eq!(page.approvals, vec![pending.clone()]);
    // A call that does not ask settles at once.
    let Deferred::Settled(read) = registry
        .execute_deferred(input("c2", "read", json!({})))
        .await
    else {
        panic!("no ask, no wait");
    };
    assert_eq!(read.text(), "read({})");

    let answer = ApprovalAnswer::new(&pending.id, ApprovalOutcome::AllowedOnce, "a");
    let result = registry.resume(answer.clone()).await.unwrap();
    assert_eq!(result.text(), r#"ask_write({"path":"a.txt"})"#);
    assert_eq!(
        observed.load(Ordering::SeqCst),
        2,
        "observers ran once per call"
    );
    assert_eq!(
        registry.resume(answer).await.unwrap_err(),
        ResumeError::Unknown(pending.id.clone())
    );
    assert_eq!(log.lock().unwrap().len(), 2, "the call ran once");
    assert!(
        registry
            .pending_approvals(None, 10)
            .await
            .unwrap()
            .approvals
            .is_empty()
    );
}

#[tokio::test]
async fn answers_from_another_agent_or_caller_are_refused_and_the_approval_waits() {
    let log: Log = Arc::default();
    let registry = registry(&log, memory());
    let mut call = input("c1", "ask_rm", json!({}));
    call.caller = Some(Arc::new(Caller::new("alice").issuer("https://idp")));
    let Deferred::Pending(pending) = registry.execute_deferred(call).await else {
        panic!()
    };
    let answer =
        |agent: &str| ApprovalAnswer::new(&pending.id, ApprovalOutcome::AllowedOnce, agent);
    assert!(matches!(
        registry.resume(answer("b")).await,
        Err(ResumeError::WrongAgent { .. })
    ));
    assert_eq!(
        registry.resume(answer("a")).await.unwrap_err(),
        ResumeError::WrongCaller(pending.id.clone()),
        "no caller at all"
    );
    let mallory = Caller::new("mallory").issuer("https://idp");
    assert!(matches!(
        registry.resume(answer("a").caller(mallory)).await,
        Err(ResumeError::WrongCaller(_))
    ));
    assert!(
        registry
            .resume(ApprovalAnswer::new(
                "0123",
                ApprovalOutcome::AllowedOnce,
                "a"
            ))
            .await
            .is_err_and(|e| matches!(e, ResumeError::Unknown(_)))
    );
    assert!(log.lock().unwrap().is_empty());
    // The same principal with another token (other scopes) answers it.
    let alice = Caller::new("alice")
        .issuer("https://idp")
        .scopes(["files:write"]);
    let result = registry.resume(answer("a").caller(alice)).await.unwrap();
    assert!(!result.is_error(), "{}", result.text());
}

#[tokio::test]
async fn every_outcome_applies_on_resume_as_it_would_at_once() {
    let log: Log = Arc::default();
    let registry = registry(&log, memory());
    registry
        .guard(|e: &ToolExecution| {
            (e.arguments().and_then(|a| a.get("path")) == Some(&json!("/etc")))
                .then(|| "outside the workspace".to_owned())
        })
        .keep();
    let ask = |id: &str, name: &str, args: Value| {
        let registry = registry.clone();
        let call = input(id, name, args);
        async move {
            match registry.execute_deferred(call).await {
                Deferred::Pending(p) => p,
                Deferred::Settled(r) => panic!("settled: {}", r.text()),
                Deferred::Program(p) => panic!("a program: {p:?}"),
            }
        }
    };
    let resume =
        |p: &PendingApproval, outcome| registry.resume(ApprovalAnswer::new(&p.id, outcome, "a"));
    let p = ask("c1", "ask_write", json!({})).await;
    assert_eq!(
        resume(&p, ApprovalOutcome::Rejected).await.unwrap().text(),
        "Error: the user rejected tool \"ask_write\""
    );
    // Edited, and then the guard still decides.
    let p = ask("c2", "ask_edit", json!({"path": "a"})).await;
    assert!(p.editable);
    let edited = resume(
        &p,
        ApprovalOutcome::AllowedWithArgs(json!({"path": "/etc"})),
    )
    .await;
    assert_eq!(edited.unwrap().text(), "Error: outside the workspace");
    let p = ask("c3", "ask_edit", json!({"path": "a"})).await;
    let edited = resume(&p, ApprovalOutcome::AllowedWithArgs(json!({"path": "b"}))).await;
    assert_eq!(edited.unwrap().text(), r#"ask_edit({"path":"b"})"#);
    let p = ask("c4", "ask_edit", json!({"path": "a"})).await;
    let invalid = resume(&p, ApprovalOutcome::AllowedWithArgs(json!({"path": 1}))).await;
    assert_eq!(invalid.unwrap().code(), Some("INVALID_ARGS"));
    // Remembered: the next call is answered by the grant, not deferred.
    let p = ask("c5", "ask_rm", json!({})).await;
    resume(&p, ApprovalOutcome::AllowedAlways(None))
        .await
        .unwrap();
    assert_eq!(registry.grants()[0].decision, GrantDecision::Allow);
    let again = registry
        .execute_deferred(input("c6", "ask_rm", json!({})))
        .await;
    assert!(matches!(again, Deferred::Settled(r) if !r.is_error()));
    assert_eq!(
        *log.lock().unwrap(),
        [r#"ask_edit({"path":"b"})"#, "ask_rm({})", "ask_rm({})"]
    );
}

#[tokio::test]
async fn another_instance_sharing_the_store_answers_and_two_answers_run_once() {
    let log: Log = Arc::default();
    let store = memory();
    let asking = registry(&log, Arc::clone(&store));
    let Deferred::Pending(pending) = asking
        .execute_deferred(input("c1", "ask_write", json!({})))
        .await
    else {
        panic!()
    };
    // Through JSON, as a web app would hand it to a person and back.
    let pending: PendingApproval =
        serde_json::from_str(&serde_json::to_string(&pending).unwrap()).unwrap();
    let other = registry(&log, Arc::clone(&store));
    let answer = ApprovalAnswer::new(&pending.id, ApprovalOutcome::AllowedOnce, "a");
    let (one, two) = tokio::join!(other.resume(answer.clone()), asking.resume(answer));
    let outcomes = [one.is_ok(), two.is_ok()];
    assert_eq!(
        outcomes.iter().filter(|ok| **ok).count(),
        1,
        "{one:?} {two:?}"
    );
    assert_eq!(log.lock().unwrap().len(), 1, "the call ran once");
}

/// A store that fails while `down` is set.
struct Flaky {
    inner: MemoryApprovalStore,
    down: Arc<AtomicBool>,
}

impl Flaky {
    fn gate<T: Send + 'static>(
        &self,
        f: impl FnOnce() -> BoxFuture<Result<T, ApprovalStoreError>>,
    ) -> BoxFuture<Result<T, ApprovalStoreError>> {
        if self.down.load(Ordering::SeqCst) {
            return Box::pin(async {
                Err(ApprovalStoreError::Unavailable("connection refused".into()))
            });
        }
        f()
    }
}

impl ApprovalStore for Flaky {
    fn put(&self, a: PendingApproval) -> BoxFuture<Result<(), ApprovalStoreError>> {
        self.gate(|| self.inner.put(a))
    }
    fn get(&self, id: &str) -> BoxFuture<Result<Option<PendingApproval>, ApprovalStoreError>> {
        self.gate(|| self.inner.get(id))
    }
    fn claim(&self, id: &str) -> BoxFuture<Result<Option<PendingApproval>, ApprovalStoreError>> {
        self.gate(|| self.inner.claim(id))
    }
    fn remove(&self, id: &str) -> BoxFuture<Result<(), ApprovalStoreError>> {
        self.gate(|| self.inner.remove(id))
    }
    fn list(
        &self,
        cursor: Option<String>,
        limit: usize,
    ) -> BoxFuture<Result<ApprovalPage, ApprovalStoreError>> {
        self.gate(|| self.inner.list(cursor, limit))
    }
}

#[tokio::test]
async fn a_store_that_is_down_loses_nothing_and_runs_nothing_twice() {
    let log: Log = Arc::default();
    let down = Arc::new(AtomicBool::new(true));
    let store: Arc<dyn ApprovalStore> = Arc::new(Flaky {
        inner: MemoryApprovalStore::default(),
        down: Arc::clone(&down),
    });
    let registry = registry(&log, store);
    // Asking while the store is down: the call fails, unrun, saying why.
    let Deferred::Settled(failed) = registry
        .execute_deferred(input("c1", "ask_write", json!({})))
        .await
    else {
        panic!("nothing could be kept")
    };
    assert_eq!(failed.code(), Some("APPROVAL_NOT_KEPT"));
    assert!(
        failed.text().contains("connection refused"),
        "{}",
        failed.text()
    );
    down.store(false, Ordering::SeqCst);
    let Deferred::Pending(pending) = registry
        .execute_deferred(input("c2", "ask_write", json!({})))
        .await
    else {
        panic!()
    };
    // Answering while it is down: an error, the approval kept.
    down.store(true, Ordering::SeqCst);
    let answer = ApprovalAnswer::new(&pending.id, ApprovalOutcome::AllowedOnce, "a");
    assert!(matches!(
        registry.resume(answer.clone()).await,
        Err(ResumeError::Store(_))
    ));
    down.store(false, Ordering::SeqCst);
    assert!(!registry.resume(answer.clone()).await.unwrap().is_error());
    assert!(registry.resume(answer).await.is_err());
    assert_eq!(log.lock().unwrap().len(), 1);
}

#[tokio::test]
async fn ten_thousand_pending_approvals_are_bounded_and_listed_by_page() {
    let log: Log = Arc::default();
    let registry = registry(&log, Arc::new(MemoryApprovalStore::new(10_000)));
    for i in 0..10_000 {
        let call = input(&format!("c{i}"), "ask_write", json!({}));
        assert!(matches!(
            registry.execute_deferred(call).await,
            Deferred::Pending(_)
        ));
    }
    let Deferred::Settled(full) = registry
        .execute_deferred(input("c10000", "ask_write", json!({})))
        .await
    else {
        panic!("the store is full")
    };
    assert!(
        full.text().contains("10000 pending approvals"),
        "{}",
        full.text()
    );
    let mut seen = std::collections::HashSet::new();
    let mut cursor = None;
    let mut pages = 0;
    loop {
        let page = registry.pending_approvals(cursor, 1_000).await.unwrap();
        pages += 1;
        for approval in &page.approvals {
            assert!(seen.insert(approval.call_id.clone()), "listed once");
        }
        match page.next {
            Some(next) => cursor = Some(next),
            None => break,
        }
    }
    assert_eq!((seen.len(), pages), (10_000, 10));
    assert!(
        registry
            .pending_approvals(Some("x".into()), 1)
            .await
            .is_err()
    );
}

/// Eight calls, three of which ask, as one turn.
fn turn_calls() -> Vec<ToolExecutionInput> {
    let names = [
        "read",
        "ask_write",
        "read",
        "ask_rm",
        "read",
        "read",
        "ask_edit",
        "read",
    ];
    names
        .iter()
        .enumerate()
        .map(|(i, name)| input(&format!("t{i}"), name, json!({"path": format!("f{i}")})))
        .collect()
}

#[tokio::test]
async fn a_deferred_turn_serialized_and_resumed_elsewhere_ends_as_the_inline_turn() {
    // Inline: the approval service answers at once.
    let inline_log: Log = Arc::default();
    let inline = registry(&inline_log, memory());
    inline.set_approval_service(|r: ApprovalRequest| async move {
        Ok::<_, ToolError>(match r.tool_name.as_str() {
            "ask_rm" => ApprovalOutcome::Rejected,
            "ask_edit" => ApprovalOutcome::AllowedWithArgs(json!({"path": "edited"})),
            _ => ApprovalOutcome::AllowedOnce,
        })
    });
    let turn = CancellationToken::new();
    let expected = TurnScheduler::new(inline).run(turn_calls(), &turn).await;

    // Deferred: the turn ends with three pending approvals.
    let log: Log = Arc::default();
    let store = memory();
    let first = registry(&log, Arc::clone(&store));
    let deferred = TurnScheduler::new(first)
        .run_deferred(turn_calls(), &turn)
        .await;
    assert_eq!(deferred.pending().count(), 3);
    assert_eq!(
        log.lock().unwrap().len(),
        5,
        "the five calls that did not ask ran"
    );
    let saved = serde_json::to_string(&deferred).unwrap();

    // Another instance reads it back and answers.
    let second = registry(&log, store);
    let restored: DeferredTurn = serde_json::from_str(&saved).unwrap();
    let answers: Vec<ApprovalAnswer> = restored
        .pending()
        .map(|p| {
            let outcome = match p.tool.as_str() {
                "ask_rm" => ApprovalOutcome::Rejected,
                "ask_edit" => ApprovalOutcome::AllowedWithArgs(json!({"path": "edited"})),
                _ => ApprovalOutcome::AllowedOnce,
            };
            ApprovalAnswer::new(&p.id, outcome, "a")
        })
        .collect();
    let scheduler = TurnScheduler::new(second);
    let resumed = scheduler
        .resume(restored.clone(), answers.clone())
        .await
        .unwrap();
    let results = resumed.results().expect("every call settled");
    let as_json = |rs: &[ToolExecutionResult]| serde_json::to_value(rs).unwrap();
    assert_eq!(as_json(&results), as_json(&expected));
    // The same calls ran, each once (the asking ones after the others, at resume).
    let sorted = |log: &Log| {
        let mut lines = log.lock().unwrap().clone();
        lines.sort();
        lines
    };
    assert_eq!(sorted(&log), sorted(&inline_log));
    // Resuming the same turn again is an error, and runs nothing.
    let again = scheduler.resume(restored, answers).await.unwrap_err();
    assert_eq!(again.errors.len(), 3, "{again}");
    assert!(again.turn.pending().count() == 3);
    assert_eq!(log.lock().unwrap().len(), 7);
}

#[tokio::test]
async fn deferred_arguments_deeper_than_a_store_reads_are_refused_unrun() {
    let log: Log = Arc::default();
    let registry = registry(&log, memory());
    let mut deep = json!(0);
    for _ in 0..121 {
        deep = Value::Array(vec![deep]);
    }
    let Deferred::Settled(refused) = registry
        .execute_deferred(input("c1", "ask_write", json!({"path": "a", "deep": deep})))
        .await
    else {
        panic!("not kept")
    };
    assert_eq!(refused.code(), Some("APPROVAL_NOT_KEPT"));
    assert!(
        refused.text().contains("deeper than 120 levels"),
        "{}",
        refused.text()
    );
    assert!(log.lock().unwrap().is_empty());
}

#[tokio::test]
async fn a_cancelled_answer_leaves_the_approval_waiting() {
    let log: Log = Arc::default();
    let registry = registry(&log, memory());
    let Deferred::Pending(pending) = registry
        .execute_deferred(input("c1", "ask_write", json!({})))
        .await
    else {
        panic!()
    };
    let gone = CancellationToken::new();
    gone.cancel();
    let answer = ApprovalAnswer::new(&pending.id, ApprovalOutcome::AllowedOnce, "a");
    assert_eq!(
        registry
            .resume(answer.clone().signal(gone))
            .await
            .unwrap_err(),
        ResumeError::Cancelled(pending.id.clone())
    );
    assert!(!registry.resume(answer).await.unwrap().is_error());
    assert_eq!(log.lock().unwrap().len(), 1);
}

#[tokio::test]
async fn a_resumed_call_follows_the_tool_as_registered_now() {
    let log: Log = Arc::default();
    let registry = registry(&log, memory());
    let Deferred::Pending(pending) = registry
        .execute_deferred(input("c1", "ask_edit", json!({"path": "a"})))
        .await
    else {
        panic!()
    };
    assert!(pending.editable);
    // Replaced meanwhile by a version that takes no edits.
    let replacement = ToolDefinition::new(
        "ask_edit",
        "no edits now",
        json!({"type": "object"}),
        OutputDecl::text(),
        |_, _| async { Ok(json!("ran")) },
    );
    registry.scope("a").register(replacement).unwrap().keep();
    let answer = ApprovalAnswer::new(
        &pending.id,
        ApprovalOutcome::AllowedWithArgs(json!({"path": "b"})),
        "a",
    );
    let refused = registry.resume(answer).await.unwrap();
    assert!(
        refused.text().contains("does not accept edited arguments"),
        "{}",
        refused.text()
    );
}

#[tokio::test]
async fn the_answering_callers_current_token_is_the_one_the_call_runs_with() {
    let log: Log = Arc::default();
    let registry = registry(&log, memory());
    let scopes: Arc<Mutex<Vec<Vec<String>>>> = Arc::default();
    let seen = Arc::clone(&scopes);
    registry
        .guard(move |e: &ToolExecution| {
            seen.lock().unwrap().push(
                e.caller()
                    .map(|c| c.granted().map(str::to_owned).collect())
                    .unwrap_or_default(),
            );
            None
        })
        .keep();
    let mut call = input("c1", "ask_write", json!({}));
    call.caller = Some(Arc::new(
        Caller::new("alice")
            .issuer("https://idp")
            .scopes(["files:write", "admin"]),
    ));
    let Deferred::Pending(pending) = registry.execute_deferred(call).await else {
        panic!()
    };
    let kept = pending.caller.as_ref().unwrap();
    assert_eq!(kept.granted().count(), 0, "who, not what they may do");
    let now = Caller::new("alice")
        .issuer("https://idp")
        .scopes(["files:write"]);
    let answer = ApprovalAnswer::new(&pending.id, ApprovalOutcome::AllowedOnce, "a").caller(now);
    assert!(!registry.resume(answer).await.unwrap().is_error());
    assert_eq!(
        *scopes.lock().unwrap(),
        vec![vec!["files:write".to_owned()]]
    );
}

#[tokio::test]
async fn the_memory_store_refuses_a_kept_id_and_any_cursor_is_safe() {
    let store = MemoryApprovalStore::default();
    let log: Log = Arc::default();
    let registry = registry(&log, memory());
    let Deferred::Pending(pending) = registry
        .execute_deferred(input("c1", "ask_write", json!({})))
        .await
    else {
        panic!()
    };
    store.put(pending.clone()).await.unwrap();
    assert!(store.put(pending).await.is_err(), "an id kept already");
    let page = store.list(Some(u64::MAX.to_string()), 10).await.unwrap();
    assert!(page.approvals.is_empty() && page.next.is_none());
    assert!(
        registry
            .resume(ApprovalAnswer::new(
                "../../etc",
                ApprovalOutcome::AllowedOnce,
                "a"
            ))
            .await
            .is_err_and(|e| matches!(e, ResumeError::Unknown(_)))
    );
}

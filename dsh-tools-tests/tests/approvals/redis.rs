//! Deferred approvals in a real Redis (`durable::RedisApprovalStore`): the store's contract,
//! and a turn of 8 calls (3 of which ask) deferred, serialized and resumed in a fresh process,
//! ending with exactly the results of the same turn answered inline.
//!
//! `#[ignore]`d here: they need a Redis server, which `.ci/redis-fleet.sh` installs under
//! `target/`, starts, and points `REDIS_URL` at before running them with `--ignored`.

use dsh_tools::durable::RedisApprovalStore;
use dsh_tools::pipeline::{ApprovalAnswer, ApprovalStore, ApprovalStoreError, PendingApproval};
use dsh_tools::schedule::{DeferredTurn, TurnScheduler};
use dsh_tools::{
    AgentId, ApprovalOutcome, ApprovalRequest, CancellationToken, OutputDecl, PreToolDecision,
    Registry, ToolDefinition, ToolError, ToolExecution, ToolExecutionInput, ToolExecutionResult,
};
use serde_json::{Value, json};
use std::sync::Arc;

const NEEDS_REDIS: &str = "needs a Redis server: .ci/redis-fleet.sh starts one";

fn url() -> String {
    std::env::var("REDIS_URL").expect("REDIS_URL names the Redis server to use")
}

/// A prefix no other run shares.
fn prefix(what: &str) -> String {
    format!(
        "dsh-tools-test:{what}:{}:{}:",
        std::process::id(),
        dsh_tools_now()
    )
}

fn dsh_tools_now() -> u128 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos()
}

fn approval(id: &str, call: &str) -> PendingApproval {
    PendingApproval {
        id: id.to_owned(),
        call_id: call.to_owned(),
        root_call_id: None,
        tool: "write".to_owned(),
        arguments: json!({"path": call}),
        reason: Some("writes".to_owned()),
        agent: AgentId::new("a"),
        caller: None,
        grant: None,
        editable: false,
        asked_at_ms: 1,
        claimed: false,
        program: None,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs a Redis server: .ci/redis-fleet.sh starts one and runs this with REDIS_URL"]
async fn the_redis_store_keeps_claims_once_and_pages() {
    let _ = NEEDS_REDIS;
    let store = RedisApprovalStore::connect(&url())
        .await
        .unwrap()
        .prefix(prefix("contract"))
        .max(25);
    for i in 0..25 {
        store
            .put(approval(&format!("id{i:02}"), &format!("c{i}")))
            .await
            .unwrap();
    }
    assert_eq!(
        store.put(approval("one-more", "c")).await.unwrap_err(),
        ApprovalStoreError::Full(25)
    );
    let got = store.get("id03").await.unwrap().unwrap();
    assert_eq!(got, approval("id03", "c3"));
    // Two claims race from two connections: one wins.
    let other = store.clone();
    let (one, two) = tokio::join!(store.claim("id03"), other.claim("id03"));
    let won = [one.unwrap(), two.unwrap()];
    assert_eq!(won.iter().filter(|w| w.is_some()).count(), 1, "{won:?}");
    assert!(store.get("id03").await.unwrap().unwrap().claimed);
    assert!(store.claim("nope").await.unwrap().is_none());
    // Pages, oldest first, each approval once.
    let mut seen = Vec::new();
    let mut cursor = None;
    loop {
        let page = store.list(cursor, 10).await.unwrap();
        seen.extend(page.approvals.iter().map(|a| (a.id.clone(), a.claimed)));
        match page.next {
            Some(next) => cursor = Some(next),
            None => break,
        }
    }
    assert_eq!(seen.len(), 25);
    assert_eq!(seen[3], ("id03".to_owned(), true));
    assert!(seen.windows(2).all(|w| w[0].0 < w[1].0));
    store.remove("id03").await.unwrap();
    assert!(store.get("id03").await.unwrap().is_none());
    // A late claim of a settled approval wins nothing (and leaves no marker behind).
    assert!(store.claim("id03").await.unwrap().is_none());
    assert!(store.get("id03").await.unwrap().is_none());
    assert!(store.list(Some("x".into()), 10).await.is_err());
    for i in 0..25 {
        store.remove(&format!("id{i:02}")).await.unwrap();
    }
    // A server that is not there: a clear error at once.
    let down = RedisApprovalStore::connect("redis+unix:///nonexistent/dsh-tools.sock").await;
    assert!(down.is_err());
}

type Log = Arc<std::sync::Mutex<Vec<String>>>;

/// The turn's registry, built the same way in both processes.
fn registry(log: &Log) -> Registry {
    let registry = Registry::new();
    for name in ["read", "ask_write", "ask_rm", "ask_edit"] {
        let log = Arc::clone(log);
        let tool = ToolDefinition::new(
            name,
            "logs its run",
            json!({"type": "object", "properties": {"path": {"type": "string"}},
                   "additionalProperties": false}),
            OutputDecl::text(),
            move |args: Arc<Value>, _| {
                let line = format!("{name}({args})");
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

fn calls() -> Vec<ToolExecutionInput> {
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
        .map(|(i, name)| {
            ToolExecutionInput::new(
                format!("t{i}"),
                *name,
                json!({"path": format!("f{i}")}),
                CancellationToken::new(),
            )
            .agent("a")
        })
        .collect()
}

/// The person's answers, by tool.
fn answer_for(tool: &str) -> ApprovalOutcome {
    match tool {
        "ask_rm" => ApprovalOutcome::Rejected,
        "ask_edit" => ApprovalOutcome::AllowedWithArgs(json!({"path": "edited"})),
        _ => ApprovalOutcome::AllowedOnce,
    }
}

const CHILD: &str = "DSH_TOOLS_RESUME_CHILD";

/// Parent: runs the turn inline and deferred, writes the deferred turn to a file and has a
/// fresh process (this test again, as the child) resume it against the same Redis.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs a Redis server: .ci/redis-fleet.sh starts one and runs this with REDIS_URL"]
async fn a_deferred_turn_resumed_in_a_fresh_process_ends_as_the_inline_turn() {
    if let Ok(dir) = std::env::var(CHILD) {
        return child(std::path::Path::new(&dir)).await;
    }
    let turn = CancellationToken::new();
    let inline_log: Log = Arc::default();
    let inline = registry(&inline_log);
    inline.set_approval_service(|r: ApprovalRequest| async move {
        Ok::<_, ToolError>(answer_for(&r.tool_name))
    });
    let expected = TurnScheduler::new(inline).run(calls(), &turn).await;

    let prefix = prefix("turn");
    let log: Log = Arc::default();
    let asking = registry(&log);
    asking.set_approval_store(
        RedisApprovalStore::connect(&url())
            .await
            .unwrap()
            .prefix(&prefix),
    );
    let deferred = TurnScheduler::new(asking)
        .run_deferred(calls(), &turn)
        .await;
    assert_eq!(deferred.pending().count(), 3);
    let dir = std::env::temp_dir().join(format!("dsh-resume-{}", dsh_tools_now()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("turn.json"),
        serde_json::to_vec(&deferred).unwrap(),
    )
    .unwrap();
    std::fs::write(dir.join("prefix"), &prefix).unwrap();

    // The test's name as the harness knows it: its module path without the crate's name.
    let name = format!(
        "{}::a_deferred_turn_resumed_in_a_fresh_process_ends_as_the_inline_turn",
        module_path!()
            .split_once("::")
            .map_or("", |(_, module)| module)
    );
    let status = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["--exact", name.as_str(), "--ignored", "--nocapture"])
        .env(CHILD, &dir)
        .status()
        .unwrap();
    assert!(status.success(), "the child process failed");
    let resumed: Vec<ToolExecutionResult> =
        serde_json::from_slice(&std::fs::read(dir.join("results.json")).unwrap()).unwrap();
    assert_eq!(
        serde_json::to_value(&resumed).unwrap(),
        serde_json::to_value(&expected).unwrap()
    );
    // The child ran the three answered calls; the parent the five that did not ask.
    let child_ran: Vec<String> =
        serde_json::from_slice(&std::fs::read(dir.join("ran.json")).unwrap()).unwrap();
    let mut ran: Vec<String> = log
        .lock()
        .unwrap()
        .iter()
        .cloned()
        .chain(child_ran)
        .collect();
    let mut inline_ran = inline_log.lock().unwrap().clone();
    ran.sort();
    inline_ran.sort();
    assert_eq!(
        ran, inline_ran,
        "each call ran once, in one process or the other"
    );
    // The store is empty again, and a second resume of the same turn is refused.
    let store = RedisApprovalStore::connect(&url())
        .await
        .unwrap()
        .prefix(&prefix);
    assert!(store.list(None, 10).await.unwrap().approvals.is_empty());
    let again = registry(&Log::default());
    again.set_approval_store(store);
    let answers = answers(&deferred);
    let refused = TurnScheduler::new(again)
        .resume(deferred, answers)
        .await
        .unwrap_err();
    assert_eq!(refused.errors.len(), 3, "{refused}");
    let _ = std::fs::remove_dir_all(&dir);
}

fn answers(turn: &DeferredTurn) -> Vec<ApprovalAnswer> {
    turn.pending()
        .map(|p| ApprovalAnswer::new(&p.id, answer_for(&p.tool), "a"))
        .collect()
}

/// The fresh process: reads the turn, answers it against the same Redis, writes the results.
async fn child(dir: &std::path::Path) {
    let turn: DeferredTurn =
        serde_json::from_slice(&std::fs::read(dir.join("turn.json")).unwrap()).unwrap();
    let prefix = std::fs::read_to_string(dir.join("prefix")).unwrap();
    let log: Log = Arc::default();
    let registry = registry(&log);
    registry.set_approval_store(
        RedisApprovalStore::connect(&url())
            .await
            .unwrap()
            .prefix(prefix),
    );
    let answers = answers(&turn);
    let resumed = TurnScheduler::new(registry)
        .resume(turn, answers)
        .await
        .unwrap();
    let results = resumed.results().expect("every call settled");
    std::fs::write(
        dir.join("results.json"),
        serde_json::to_vec(&results).unwrap(),
    )
    .unwrap();
    let ran = log.lock().unwrap().clone();
    std::fs::write(dir.join("ran.json"), serde_json::to_vec(&ran).unwrap()).unwrap();
}

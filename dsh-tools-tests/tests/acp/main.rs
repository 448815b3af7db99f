//! The ACP bridge: golden updates for every card (insta), the working-directory rules, each
//! approval outcome, hostile input, and a round trip through the official SDK's own connection.

use dsh_tools::acp::schema::{
    ClientCapabilities, PermissionOptionId, RequestPermissionOutcome, RequestPermissionRequest,
    RequestPermissionResponse, SelectedPermissionOutcome, SessionNotification, SessionUpdate,
};
use dsh_tools::acp::{
    AcpBridge, AcpClient, SessionView, agent_client_protocol, fenced, tool_call,
    tool_call_in_progress, tool_call_result,
};
use dsh_tools::pipeline::BoxFuture;
use dsh_tools::present::{
    FileDiff, FileLocation, ReadFileLine, SearchFile, SearchMatch, SearchResult, TerminalExit,
    TerminalResult, ToolCallKind, ToolCallView, ToolResultView, WebResult, WebSource,
};
use dsh_tools::provider::ProviderExport;
use dsh_tools::{
    CancellationToken, ContentBlock, OutputDecl, PreNext, PreToolDecision, Registry,
    ToolDefinition, ToolError, ToolExecution, ToolExecutionInput, ToolExecutionResult,
};
use serde_json::{Value, json};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

fn view() -> SessionView {
    SessionView::new("/work/app")
}

fn wire(value: impl serde::Serialize) -> Value {
    serde_json::to_value(value).unwrap()
}

// ---------------------------------------------------------------------------------------------
// Golden updates.

#[test]
fn call_cards_become_pending_tool_calls() {
    let args = json!({"path": "src/main.rs", "offset": 3});
    let generic = ToolCallView::Generic {
        title: "Read /work/app/src/main.rs".into(),
        kind: Some(ToolCallKind::Read),
        raw_input: None,
        content: Some(vec![
            ContentBlock::text("from line 3"),
            ContentBlock::image("iVBORw0KGgo=", "image/png").unwrap(),
        ]),
        locations: Some(vec![FileLocation {
            path: "src/main.rs".into(),
            line: Some(3),
        }]),
    };
    insta::assert_json_snapshot!(
        "call_generic",
        wire(tool_call("call_1", "read_file", &args, &generic, &view()))
    );
    let fallback = ToolCallView::fallback("mystery", &json!({"x": 1}));
    insta::assert_json_snapshot!(
        "call_fallback",
        wire(tool_call(
            "call_2",
            "mystery",
            &json!({"x": 1}),
            &fallback,
            &view()
        ))
    );
    let terminal = ToolCallView::Terminal {
        title: "cargo test".into(),
        description: Some("Run the tests".into()),
        cwd: Some("crates/core".into()),
    };
    let args = json!({"command": "cargo test"});
    insta::assert_json_snapshot!(
        "call_terminal_meta",
        wire(tool_call(
            "call_3",
            "bash",
            &args,
            &terminal,
            &view().terminal_output(true)
        ))
    );
    insta::assert_json_snapshot!(
        "call_terminal_plain",
        wire(tool_call("call_3", "bash", &args, &terminal, &view()))
    );
    let diff = ToolCallView::Diff {
        title: "Edit /work/app/src/lib.rs".into(),
        diffs: vec![
            FileDiff {
                path: "/work/app/src/lib.rs".into(),
                old_text: Some("fn a() {}\n".into()),
                new_text: "fn b() {}\n".into(),
            },
            FileDiff {
                path: "notes/new.md".into(),
                old_text: None,
                new_text: "# New\n".into(),
            },
        ],
        locations: None,
    };
    insta::assert_json_snapshot!(
        "call_diff",
        wire(tool_call(
            "call_4",
            "edit_file",
            &json!({"path": "src/lib.rs"}),
            &diff,
            &view()
        ))
    );
}

fn settle(card: &ToolResultView, result: &ToolExecutionResult, session: &SessionView) -> Value {
    wire(tool_call_result("call_9", card, result, session))
}

#[test]
fn result_cards_become_settling_updates() {
    let ok = ToolExecutionResult::success(json!({"done": true}));
    let failed =
        ToolExecutionResult::failure(ToolError::coded("IoError", "ENOENT", "no such file"));

    let generic = ToolResultView::fallback(&[ContentBlock::text("3 files")]);
    insta::assert_json_snapshot!("result_generic_ok", settle(&generic, &ok, &view()));
    let generic = ToolResultView::fallback(failed.content());
    insta::assert_json_snapshot!("result_generic_failed", settle(&generic, &failed, &view()));

    let exited = ToolResultView::Terminal(TerminalResult {
        title: Some("cargo test -p /work/app/crates/core".into()),
        output: Some("running 2 tests\n```\ntest result: FAILED\n".into()),
        exit: Some(TerminalExit::Code(101)),
    });
    insta::assert_json_snapshot!(
        "result_terminal_meta",
        settle(&exited, &failed, &view().terminal_output(true))
    );
    insta::assert_json_snapshot!("result_terminal_plain", settle(&exited, &failed, &view()));
    let killed = ToolResultView::Terminal(TerminalResult {
        title: None,
        output: None,
        exit: Some(TerminalExit::Signal("SIGKILL".into())),
    });
    insta::assert_json_snapshot!("result_terminal_signal", settle(&killed, &failed, &view()));

    let diff = ToolResultView::Diff {
        title: Some("Wrote /work/app/notes/new.md".into()),
        diffs: vec![FileDiff {
            path: "notes/new.md".into(),
            old_text: None,
            new_text: "# New\n".into(),
        }],
    };
    insta::assert_json_snapshot!("result_diff_new_file", settle(&diff, &ok, &view()));

    let read = ToolResultView::Read {
        title: None,
        path: "src/main.rs".into(),
        offset: 2,
        lines: vec![
            ReadFileLine {
                number: 2,
                text: "fn main() {".into(),
            },
            ReadFileLine {
                number: 3,
                text: "}".into(),
            },
        ],
        total_lines: 3,
        lang: Some("rust".into()),
        content: None,
    };
    insta::assert_json_snapshot!("result_read", settle(&read, &ok, &view()));

    let matches = ToolResultView::Search(SearchResult::Matches {
        title: None,
        files: vec![SearchFile {
            path: "src/lib.rs".into(),
            matches: vec![SearchMatch {
                line_number: 7,
                line: "fn answer() -> u32".into(),
            }],
        }],
        truncated: true,
        total: 12,
    });
    insta::assert_json_snapshot!("result_search_matches", settle(&matches, &ok, &view()));
    let paths = ToolResultView::Search(SearchResult::Paths {
        title: Some("Found 2 files".into()),
        paths: vec!["/work/app/a.rs".into(), "b.rs".into()],
        truncated: false,
        total: 2,
    });
    insta::assert_json_snapshot!("result_search_paths", settle(&paths, &ok, &view()));

    let web = ToolResultView::Web(WebResult::Search {
        title: None,
        sources: vec![WebSource {
            url: "https://agentclientprotocol.com".into(),
            title: Some("ACP".into()),
            snippet: Some("A protocol for editors and agents".into()),
            published_at: None,
        }],
        answer: Some("ACP is JSON-RPC over stdio.".into()),
        truncated: false,
    });
    insta::assert_json_snapshot!("result_web_search", settle(&web, &ok, &view()));
    let page = ToolExecutionResult::success(json!("<html>"))
        .with_content(vec![ContentBlock::text("Example Domain")]);
    let fetch = ToolResultView::Web(WebResult::Fetch {
        title: None,
        url: "https://example.com".into(),
        status_code: 200,
        truncated: false,
    });
    insta::assert_json_snapshot!("result_web_fetch", settle(&fetch, &page, &view()));
}

#[test]
fn in_progress_is_a_status_patch() {
    assert_eq!(
        wire(tool_call_in_progress("call_1")),
        json!({"toolCallId": "call_1", "status": "in_progress"})
    );
}

#[test]
fn every_update_parses_back_as_the_sdk_reads_it() {
    // What the client's SDK deserializes: the same crate's types, from our JSON.
    let card = ToolCallView::Terminal {
        title: "ls".into(),
        description: None,
        cwd: None,
    };
    let call = wire(tool_call(
        "c",
        "bash",
        &json!({}),
        &card,
        &view().terminal_output(true),
    ));
    let update = json!({"sessionUpdate": "tool_call"})
        .as_object()
        .unwrap()
        .clone()
        .into_iter()
        .chain(call.as_object().unwrap().clone())
        .collect::<serde_json::Map<_, _>>();
    let parsed: SessionUpdate = serde_json::from_value(Value::Object(update)).unwrap();
    assert!(matches!(parsed, SessionUpdate::ToolCall(c) if c.title == "ls"));
}

// ---------------------------------------------------------------------------------------------
// Working-directory rules.

#[test]
fn titles_are_relative_to_the_working_directory_only_under_it() {
    let v = view();
    for (title, shown) in [
        ("Read /work/app/src/main.rs", "Read src/main.rs"),
        ("/work/app/README.md", "README.md"),
        (
            "Edit `/work/app/a.rs` and `/work/app/b.rs`",
            "Edit `a.rs` and `b.rs`",
        ),
        ("diff /work/app/a.rs /etc/hosts", "diff a.rs /etc/hosts"),
        // Not under it: a sibling with the same prefix, a path climbing out, a nested match.
        ("Read /work/apple/x.rs", "Read /work/apple/x.rs"),
        (
            "Read /work/app/../etc/passwd",
            "Read /work/app/../etc/passwd",
        ),
        ("Read /mnt/work/app/x.rs", "Read /mnt/work/app/x.rs"),
        // A doubled slash would read as another absolute path once the prefix is gone.
        ("Read /work/app//etc/passwd", "Read /work/app//etc/passwd"),
        // The directory itself and text without paths.
        ("ls /work/app", "ls /work/app"),
        ("cargo test", "cargo test"),
    ] {
        assert_eq!(v.relative_title(title), shown, "{title}");
    }
    // A trailing slash on the working directory changes nothing.
    assert_eq!(
        SessionView::new("/work/app/").relative_title("Read /work/app/x"),
        "Read x"
    );
    // `/`, a relative directory and no directory leave titles alone.
    for session in [
        SessionView::new("/"),
        SessionView::new("work/app"),
        SessionView::without_cwd(),
    ] {
        assert_eq!(
            session.relative_title("Read /work/app/x"),
            "Read /work/app/x"
        );
    }
}

#[cfg(unix)]
#[test]
fn a_working_directory_that_is_not_utf8_leaves_titles_alone() {
    use std::os::unix::ffi::OsStrExt;
    let cwd = std::ffi::OsStr::from_bytes(b"/work/\xff");
    let session = SessionView::new(cwd);
    assert_eq!(
        session.relative_title("Read /work/\u{fffd}/x"),
        "Read /work/\u{fffd}/x"
    );
    // Locations still join under it, byte for byte.
    assert_eq!(
        session.absolute("x").as_os_str().as_bytes(),
        b"/work/\xff/x"
    );
}

#[test]
fn locations_are_absolute_and_lexically_clean() {
    let v = view();
    for (path, absolute) in [
        ("src/main.rs", "/work/app/src/main.rs"),
        ("./src/../Cargo.toml", "/work/app/Cargo.toml"),
        ("/etc/hosts", "/etc/hosts"),
        ("../../../../x", "/x"),
        ("/a/./b/../c", "/a/c"),
        ("/../x", "/x"),
        ("/../../../x", "/x"),
        ("../../../x", "/x"),
    ] {
        assert_eq!(v.absolute(path).to_str(), Some(absolute), "{path}");
    }
    for (path, kept) in [("a/../b", "b"), ("../x", "../x"), ("a/../../x", "../x")] {
        assert_eq!(
            SessionView::without_cwd().absolute(path).to_str(),
            Some(kept),
            "{path}"
        );
    }
}

#[test]
fn the_terminal_convention_follows_the_clients_capabilities() {
    let with: ClientCapabilities =
        serde_json::from_value(json!({"_meta": {"terminal_output": true}})).unwrap();
    let without: ClientCapabilities = serde_json::from_value(json!({"terminal": true})).unwrap();
    assert!(view().with_capabilities(&with).has_terminal_output());
    assert!(!view().with_capabilities(&without).has_terminal_output());
}

#[test]
fn fences_outgrow_the_backticks_inside() {
    assert_eq!(fenced("console", "ok"), "```console\nok\n```");
    assert_eq!(fenced("", "a ```` b\n"), "`````\na ```` b\n`````");
    assert_eq!(fenced("rust", ""), "```rust\n```");
}

// ---------------------------------------------------------------------------------------------
// Approvals and the session, through a scripted client.

/// A client that records every update and answers permission requests from a script.
#[derive(Clone, Default)]
struct Scripted {
    updates: Arc<Mutex<Vec<Value>>>,
    requests: Arc<Mutex<Vec<Value>>>,
    answers: Arc<Mutex<Vec<Answer>>>,
    dropped: Arc<AtomicBool>,
}

enum Answer {
    Select(&'static str),
    Cancelled,
    ConnectionGone,
    Never,
}

struct DropFlag(Arc<AtomicBool>);

impl Drop for DropFlag {
    fn drop(&mut self) {
        self.0.store(true, Ordering::SeqCst);
    }
}

impl AcpClient for Scripted {
    fn session_update(
        &self,
        notification: SessionNotification,
    ) -> Result<(), agent_client_protocol::Error> {
        self.updates.lock().unwrap().push(wire(notification));
        Ok(())
    }

    fn request_permission(
        &self,
        request: RequestPermissionRequest,
    ) -> BoxFuture<Result<RequestPermissionResponse, agent_client_protocol::Error>> {
        self.requests.lock().unwrap().push(wire(&request));
        let answer = self.answers.lock().unwrap().remove(0);
        let flag = DropFlag(self.dropped.clone());
        Box::pin(async move {
            let _flag = flag;
            match answer {
                Answer::Select(id) => Ok(RequestPermissionResponse::new(
                    RequestPermissionOutcome::Selected(SelectedPermissionOutcome::new(
                        PermissionOptionId::new(id),
                    )),
                )),
                Answer::Cancelled => Ok(RequestPermissionResponse::new(
                    RequestPermissionOutcome::Cancelled,
                )),
                Answer::ConnectionGone => Err(agent_client_protocol::Error::internal_error()),
                Answer::Never => std::future::pending().await,
            }
        })
    }
}

impl Scripted {
    fn answering(answers: Vec<Answer>) -> Self {
        let client = Self::default();
        *client.answers.lock().unwrap() = answers;
        client
    }

    fn statuses(&self) -> Vec<String> {
        self.updates
            .lock()
            .unwrap()
            .iter()
            .map(|n| {
                let u = &n["update"];
                // A `tool_call` without a status is `pending`: ACP's default, which the SDK omits.
                let status = match (u["sessionUpdate"].as_str(), u["status"].as_str()) {
                    (Some("tool_call"), None) => "pending",
                    (_, status) => status.unwrap_or("-"),
                };
                format!("{}:{status}", u["sessionUpdate"].as_str().unwrap())
            })
            .collect()
    }
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct WriteArgs {
    path: String,
}

/// A registry with `write_file`, which asks for approval.
fn registry(runs: Arc<AtomicUsize>) -> Registry {
    registry_with(runs, dsh_tools::GrantPolicy::default())
}

/// [`registry`] with `write_file`'s grant policy.
fn registry_with(runs: Arc<AtomicUsize>, policy: dsh_tools::GrantPolicy) -> Registry {
    let registry = Registry::new();
    let write = ToolDefinition::typed(
        "write_file",
        "Write a file.",
        move |args: WriteArgs, _ctx| {
            let runs = runs.clone();
            async move {
                runs.fetch_add(1, Ordering::SeqCst);
                Ok::<_, ToolError>(format!("wrote {}", args.path))
            }
        },
    )
    .unwrap()
    .grant_policy(policy)
    .present_call(Arc::new(|args: &Value| {
        Some(ToolCallView::Diff {
            title: format!("Write {}", args["path"].as_str()?),
            diffs: vec![FileDiff {
                path: args["path"].as_str()?.to_owned(),
                old_text: None,
                new_text: "new".into(),
            }],
            locations: None,
        })
    }));
    registry.register(write).unwrap().keep();
    registry
        .on_pre_execute(|exec: Arc<ToolExecution>, next: PreNext| async move {
            if exec.name() == "write_file" {
                return Ok(PreToolDecision::ask(Some("writes need approval")));
            }
            next.run().await
        })
        .keep();
    registry
}

fn write_call(id: &str, signal: CancellationToken) -> ToolExecutionInput {
    ToolExecutionInput::new(id, "write_file", json!({"path": "a.txt"}), signal)
}

#[tokio::test]
async fn allow_once_runs_the_call_and_reports_pending_then_running_then_completed() {
    let runs = Arc::new(AtomicUsize::new(0));
    let registry = registry(runs.clone());
    let bridge = AcpBridge::new(&registry);
    let client = Scripted::answering(vec![
        Answer::Select("allow_once"),
        Answer::Select("allow_once"),
    ]);
    let session = bridge.open_session(client.clone(), "s1", view());
    let result = session
        .execute(write_call("c1", CancellationToken::new()))
        .await;
    assert_eq!(result.text(), "wrote a.txt");
    assert_eq!(
        client.statuses(),
        [
            "tool_call:pending",
            "tool_call_update:in_progress",
            "tool_call_update:completed"
        ]
    );
    let request = client.requests.lock().unwrap()[0].clone();
    insta::assert_json_snapshot!("permission_request", request);
    // Once means once: the next call asks again.
    session
        .execute(write_call("c2", CancellationToken::new()))
        .await;
    assert_eq!(client.requests.lock().unwrap().len(), 2);
    assert_eq!(runs.load(Ordering::SeqCst), 2);
}

#[tokio::test]
async fn always_answers_are_remembered_per_tool_for_the_session() {
    let runs = Arc::new(AtomicUsize::new(0));
    let registry = registry(runs.clone());
    let bridge = AcpBridge::new(&registry);
    let client = Scripted::answering(vec![Answer::Select("allow_always")]);
    let session = bridge.open_session(client.clone(), "s1", view());
    for id in ["c1", "c2", "c3"] {
        let result = session
            .execute(write_call(id, CancellationToken::new()))
            .await;
        assert!(!result.is_error(), "{}", result.text());
    }
    assert_eq!(client.requests.lock().unwrap().len(), 1);
    assert_eq!(runs.load(Ordering::SeqCst), 3);
    assert_eq!(session.remembered().get("write_file"), Some(&true));
    // Kept as the registry's grant for the session's agent.
    assert_eq!(
        registry.grants(),
        [dsh_tools::Grant {
            key: dsh_tools::GrantKey::new("write_file").agent(dsh_tools::AgentId::new("s1")),
            decision: dsh_tools::GrantDecision::Allow,
        }]
    );

    // Another session of the same bridge does not inherit it.
    let other = Scripted::answering(vec![Answer::Select("reject_always")]);
    let second = bridge.open_session(other.clone(), "s2", view());
    for id in ["c4", "c5"] {
        let result = second
            .execute(write_call(id, CancellationToken::new()))
            .await;
        assert_eq!(
            result.text(),
            "Error: the user rejected tool \"write_file\""
        );
    }
    assert_eq!(other.requests.lock().unwrap().len(), 1);
    assert_eq!(runs.load(Ordering::SeqCst), 3);
    assert_eq!(
        other.statuses(),
        [
            "tool_call:pending",
            "tool_call_update:failed",
            "tool_call:pending",
            "tool_call_update:failed"
        ]
    );
}

#[tokio::test]
async fn always_is_offered_only_where_the_tool_allows_a_grant_and_ends_with_the_session() {
    let runs = Arc::new(AtomicUsize::new(0));
    let registry = registry(runs.clone());
    let bridge = AcpBridge::new(&registry);
    let client = Scripted::answering(vec![Answer::Select("allow_always")]);
    let session = bridge.open_session(client.clone(), "s1", view());
    session
        .execute(write_call("c1", CancellationToken::new()))
        .await;
    assert_eq!(registry.grants().len(), 1);
    drop(session);
    assert!(
        registry.grants().is_empty(),
        "the session's grants end with it"
    );

    // A tool whose every call asks: only the once options.
    let registry = registry_with(runs, dsh_tools::GrantPolicy::Never);
    let bridge = AcpBridge::new(&registry);
    let client = Scripted::answering(vec![Answer::Select("allow_always")]);
    let session = bridge.open_session(client.clone(), "s2", view());
    let refused = session
        .execute(write_call("c2", CancellationToken::new()))
        .await;
    let kinds: Vec<String> = client.requests.lock().unwrap()[0]["options"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["kind"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(kinds, ["allow_once", "reject_once"]);
    assert!(
        refused.text().contains("which it was not offered"),
        "{}",
        refused.text()
    );
    assert!(registry.grants().is_empty());
}

#[tokio::test]
async fn each_other_outcome_maps_to_the_pipelines() {
    let cases: Vec<(Answer, &str)> = vec![
        (
            Answer::Select("reject_once"),
            "Error: the user rejected tool \"write_file\"",
        ),
        (
            Answer::Cancelled,
            "Error: approval for tool \"write_file\" was cancelled",
        ),
        (
            Answer::ConnectionGone,
            "Error: tool \"write_file\" requires approval, but no approval channel is available",
        ),
        (
            Answer::Select("yes please"),
            "Error: the client answered the permission request for tool \"write_file\" with option \"yes please\", which it was not offered",
        ),
    ];
    for (answer, text) in cases {
        let runs = Arc::new(AtomicUsize::new(0));
        let registry = registry(runs.clone());
        let bridge = AcpBridge::new(&registry);
        let client = Scripted::answering(vec![answer]);
        let session = bridge.open_session(client.clone(), "s1", view());
        let result = session
            .execute(write_call("c1", CancellationToken::new()))
            .await;
        assert_eq!(result.text(), text);
        assert_eq!(runs.load(Ordering::SeqCst), 0, "{text}");
        assert!(session.remembered().is_empty());
    }
}

#[tokio::test]
async fn a_client_that_never_answers_does_not_hold_a_cancelled_call() {
    let registry = registry(Arc::new(AtomicUsize::new(0)));
    let bridge = AcpBridge::new(&registry);
    let client = Scripted::answering(vec![Answer::Never]);
    let session = bridge.open_session(client.clone(), "s1", view());
    let signal = CancellationToken::new();
    let cancel = signal.clone();
    tokio::spawn(async move {
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        cancel.cancel();
    });
    let result = session.execute(write_call("c1", signal)).await;
    assert_eq!(result.code(), Some("ABORTED_BEFORE_DISPATCH"));
    // The pending request was dropped (the SDK's connection sends `$/cancel_request` then).
    assert!(client.dropped.load(Ordering::SeqCst));
    assert_eq!(
        client.statuses(),
        ["tool_call:pending", "tool_call_update:failed"]
    );
}

#[tokio::test]
async fn an_ask_for_a_closed_or_unknown_session_is_unavailable() {
    let registry = registry(Arc::new(AtomicUsize::new(0)));
    let bridge = AcpBridge::new(&registry);
    let session = bridge.open_session(Scripted::default(), "s1", view());
    drop(session);
    let unavailable =
        "Error: tool \"write_file\" requires approval, but no approval channel is available";
    for agent in ["s1", "someone-else"] {
        let result = registry
            .execute(write_call("c", CancellationToken::new()).agent(agent))
            .await;
        assert_eq!(result.text(), unavailable);
    }
}

#[tokio::test]
async fn a_reopened_session_id_and_a_dropped_bridge_keep_approvals_working() {
    let runs = Arc::new(AtomicUsize::new(0));
    let registry = registry(runs.clone());
    let bridge = AcpBridge::new(&registry);
    let first = Scripted::answering(vec![]);
    let old = bridge.open_session(first.clone(), "s1", view());
    let second = Scripted::answering(vec![
        Answer::Select("allow_once"),
        Answer::Select("allow_once"),
    ]);
    let new = bridge.open_session(second.clone(), "s1", view());
    // The old session going away must not close the new one; the bridge value may go too.
    drop(old);
    drop(bridge);
    let result = new
        .execute(write_call("c1", CancellationToken::new()))
        .await;
    assert_eq!(result.text(), "wrote a.txt");
    assert!(first.requests.lock().unwrap().is_empty());
    assert_eq!(second.requests.lock().unwrap().len(), 1);
    // One `in_progress`, from the open session only.
    assert_eq!(
        second.statuses(),
        [
            "tool_call:pending",
            "tool_call_update:in_progress",
            "tool_call_update:completed"
        ]
    );
    assert!(first.updates.lock().unwrap().is_empty());
}

#[tokio::test]
async fn while_both_are_open_only_the_newest_session_reports() {
    let registry = registry(Arc::new(AtomicUsize::new(0)));
    let bridge = AcpBridge::new(&registry);
    let first = Scripted::answering(vec![]);
    let _old = bridge.open_session(first.clone(), "s1", view());
    let second = Scripted::answering(vec![Answer::Select("allow_once")]);
    let new = bridge.open_session(second.clone(), "s1", view());
    new.execute(write_call("c1", CancellationToken::new()))
        .await;
    assert!(
        first.updates.lock().unwrap().is_empty(),
        "{:?}",
        first.statuses()
    );
    assert_eq!(second.statuses().len(), 3, "{:?}", second.statuses());
}

#[tokio::test]
async fn an_unknown_tool_and_bad_arguments_settle_as_failed_calls() {
    let registry = registry(Arc::new(AtomicUsize::new(0)));
    let bridge = AcpBridge::new(&registry);
    let client = Scripted::answering(vec![Answer::Select("allow_once")]);
    let session = bridge.open_session(client.clone(), "s1", view());
    let unknown = session
        .execute(ToolExecutionInput::new(
            "c1",
            "nope",
            json!({}),
            CancellationToken::new(),
        ))
        .await;
    assert_eq!(unknown.code(), Some("UNKNOWN_TOOL"));
    let invalid = session
        .execute(ToolExecutionInput::new(
            "c2",
            "write_file",
            json!({"path": 7}),
            CancellationToken::new(),
        ))
        .await;
    assert_eq!(invalid.code(), Some("INVALID_ARGS"), "{}", invalid.text());
    // Unknown tools and arguments are both found in dispatch (the pipeline's order: wrappers see
    // every call), so each call runs, then fails with the message the model reads.
    assert_eq!(
        client.statuses(),
        [
            "tool_call:pending",
            "tool_call_update:in_progress",
            "tool_call_update:failed",
            "tool_call:pending",
            "tool_call_update:in_progress",
            "tool_call_update:failed",
        ]
    );
    let updates = client.updates.lock().unwrap().clone();
    assert_eq!(updates[0]["update"]["title"], "nope");
    for (update, result) in [(&updates[2], &unknown), (&updates[5], &invalid)] {
        assert_eq!(
            update["update"]["content"][0]["content"]["text"],
            result.text()
        );
    }
}

#[test]
fn a_presenter_that_panics_falls_back_to_the_generic_card() {
    let registry = Registry::new();
    let tool = ToolDefinition::new(
        "t",
        "T.",
        json!({"type": "object"}),
        OutputDecl::text(),
        |_, _| async { Ok::<_, ToolError>(json!("ok")) },
    )
    .present_call(Arc::new(|_: &Value| panic!("presenter bug")));
    registry.register(tool).unwrap().keep();
    let card = registry.present_call("t", &json!({"a": 1}), None);
    let call = wire(tool_call("c", "t", &json!({"a": 1}), &card, &view()));
    assert_eq!(call["title"], "t");
    assert_eq!(call["rawInput"], json!({"a": 1}));
}

// ---------------------------------------------------------------------------------------------
// Hostile input.

fn deep(levels: usize) -> Value {
    let mut v = json!(1);
    for _ in 0..levels {
        v = Value::Array(vec![v]);
    }
    v
}

#[test]
fn deep_arguments_and_outputs_are_cut_before_they_reach_the_wire() {
    // On a small stack: the SDK's serializer is recursive, ours must hand it a bounded value.
    std::thread::Builder::new()
        .stack_size(2 << 20)
        .spawn(|| {
            let args = deep(100_000);
            let card = ToolCallView::fallback("t", &args);
            let call = tool_call("c", "t", &args, &card, &view());
            let text = serde_json::to_string(&call).unwrap();
            assert!(text.contains("\"…\""));
            let result = ToolExecutionResult::success(deep(100_000));
            let settled = tool_call_result("c", &ToolResultView::fallback(&[]), &result, &view());
            assert!(serde_json::to_string(&settled).unwrap().len() < 10_000);
            dsh_tools::json::drop_deep(args);
            drop(card);
            drop(call);
            drop(result);
        })
        .unwrap()
        .join()
        .unwrap();
}

#[test]
fn deep_arguments_through_a_session_on_a_small_stack() {
    std::thread::Builder::new()
        .stack_size(2 << 20)
        .spawn(|| {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap();
            runtime.block_on(async {
                let registry = Registry::new();
                let bridge = AcpBridge::new(&registry);
                let client = Scripted::default();
                let session = bridge.open_session(client.clone(), "s", view());
                let result = session
                    .execute(ToolExecutionInput::new(
                        "c",
                        "t",
                        deep(100_000),
                        CancellationToken::new(),
                    ))
                    .await;
                assert_eq!(result.code(), Some("UNKNOWN_TOOL"));
                let statuses = client.statuses();
                assert_eq!(
                    statuses.first().map(String::as_str),
                    Some("tool_call:pending")
                );
                assert_eq!(
                    statuses.last().map(String::as_str),
                    Some("tool_call_update:failed")
                );
            });
        })
        .unwrap()
        .join()
        .unwrap();
}

// ---------------------------------------------------------------------------------------------
// Through the official SDK: our agent side on its connection, its client on the other end.

#[tokio::test]
async fn a_round_trip_through_the_sdks_own_connection() {
    use agent_client_protocol::v1::ConnectionTo;
    use agent_client_protocol::{Agent, Channel, Client};

    let (agent_end, client_end) = Channel::duplex();
    let seen: Arc<Mutex<Vec<Value>>> = Arc::default();
    let asked: Arc<Mutex<Vec<Value>>> = Arc::default();
    let (done_tx, done_rx) = tokio::sync::oneshot::channel::<()>();

    let client = {
        let seen = seen.clone();
        let asked = asked.clone();
        Client
            .v1()
            .on_receive_notification(
                async move |n: SessionNotification, _cx| {
                    seen.lock().unwrap().push(wire(n));
                    Ok(())
                },
                agent_client_protocol::on_receive_notification!(),
            )
            .on_receive_request(
                async move |r: RequestPermissionRequest, responder, _cx| {
                    asked.lock().unwrap().push(wire(&r));
                    responder.respond(RequestPermissionResponse::new(
                        RequestPermissionOutcome::Selected(SelectedPermissionOutcome::new(
                            PermissionOptionId::new("allow_once"),
                        )),
                    ))
                },
                agent_client_protocol::on_receive_request!(),
            )
            .connect_with(client_end, async |_cx| {
                let _ = done_rx.await;
                Ok(())
            })
    };
    let runs = Arc::new(AtomicUsize::new(0));
    let registry = registry(runs.clone());
    let agent = Agent
        .v1()
        .connect_with(agent_end, async |cx: ConnectionTo<Client>| {
            let bridge = AcpBridge::new(&registry);
            let session = bridge.open_session(cx.clone(), "sess_1", view());
            let result = session
                .execute(write_call("call_1", CancellationToken::new()))
                .await;
            assert_eq!(result.text(), "wrote a.txt");
            let _ = done_tx.send(());
            Ok(())
        });
    let (a, c) = tokio::join!(agent, client);
    a.unwrap();
    c.unwrap();
    assert_eq!(runs.load(Ordering::SeqCst), 1);
    let asked = asked.lock().unwrap();
    assert_eq!(asked.len(), 1);
    assert_eq!(asked[0]["toolCall"]["title"], "Write a.txt");
    assert_eq!(
        asked[0]["toolCall"]["content"][0],
        // A new file: no `oldText` (the SDK omits `None`; ACP reads absent and null alike).
        json!({"type": "diff", "path": "/work/app/a.txt", "newText": "new"})
    );
    let statuses: Vec<Value> = seen
        .lock()
        .unwrap()
        .iter()
        .map(|n| n["update"]["status"].clone())
        .collect();
    assert_eq!(
        statuses,
        [Value::Null, json!("in_progress"), json!("completed")]
    );
}

#[tokio::test]
async fn run_code_sub_calls_are_shown_as_their_own_tool_calls() {
    use dsh_tools::registry::PresentationMode;
    use dsh_tools::testing::{FakeOutcome, FakeRuntime};
    let registry = Registry::new();
    let echo = ToolDefinition::new(
        "echo",
        "Echo.",
        json!({"type": "object"}),
        OutputDecl::text(),
        |args, _| async move { Ok(args["text"].clone()) },
    );
    registry.register(echo).unwrap().keep();
    registry.set_presentation_mode(PresentationMode::Code);
    registry.set_code_runtime(FakeRuntime::new(|_, run| async move {
        let a = run.call("tools", "echo", json!({"text": "one"})).await;
        let b = run.call("tools", "echo", json!({"text": "two"})).await;
        FakeOutcome::Return(Some(json!([a.ok(), b.ok()])))
    }));
    let bridge = AcpBridge::new(&registry);
    let client = Scripted::default();
    let session = bridge.open_session(client.clone(), "s1", view());
    let args = json!({"code": "…", "description": "Echo twice"});
    let result = session
        .execute(ToolExecutionInput::new(
            "c1",
            "run_code",
            args,
            CancellationToken::new(),
        ))
        .await;
    assert!(!result.is_error(), "{}", result.text());
    let updates = client.updates.lock().unwrap().clone();
    let seen: Vec<(String, String)> = updates
        .iter()
        .map(|n| {
            let u = &n["update"];
            (
                u["toolCallId"].as_str().unwrap_or("").to_owned(),
                format!(
                    "{}:{}",
                    u["sessionUpdate"].as_str().unwrap(),
                    u["status"].as_str().unwrap_or("pending")
                ),
            )
        })
        .collect();
    let expect = |id: &str, s: &str| (id.to_owned(), s.to_owned());
    assert_eq!(
        seen,
        [
            expect("c1", "tool_call:pending"),
            expect("c1", "tool_call_update:in_progress"),
            expect("c1:code:1", "tool_call:pending"),
            expect("c1:code:1", "tool_call_update:in_progress"),
            expect("c1:code:1", "tool_call_update:completed"),
            expect("c1:code:2", "tool_call:pending"),
            expect("c1:code:2", "tool_call_update:in_progress"),
            expect("c1:code:2", "tool_call_update:completed"),
            expect("c1", "tool_call_update:completed"),
        ]
    );
    // The outer call's card is run_code's: its description as title, the program as input.
    assert_eq!(updates[0]["update"]["title"], "Echo twice");
    assert_eq!(updates[0]["update"]["kind"], "execute");
    assert_eq!(updates[2]["update"]["rawInput"], json!({"text": "one"}));
}

#[tokio::test]
async fn a_grant_the_host_made_outlives_the_session() {
    let runs = Arc::new(AtomicUsize::new(0));
    let registry = registry(runs.clone());
    let bridge = AcpBridge::new(&registry);
    let hosts = dsh_tools::Grant {
        key: dsh_tools::GrantKey::new("write_file")
            .agent(dsh_tools::AgentId::new("s1"))
            .argument(dsh_tools::ArgumentMatch::equals("/path", json!("keep.txt"))),
        decision: dsh_tools::GrantDecision::Allow,
    };
    registry.grant(hosts.clone());
    let client = Scripted::answering(vec![Answer::Select("allow_always")]);
    let session = bridge.open_session(client.clone(), "s1", view());
    session
        .execute(write_call("c1", CancellationToken::new()))
        .await;
    assert_eq!(registry.grants().len(), 2);
    drop(session);
    assert_eq!(
        registry.grants(),
        [hosts],
        "only the session's own answer ends with it"
    );
}

/// A call shown while its arguments stream: one `tool_call` as soon as it starts (`pending`,
/// the raw input so far), `tool_call_update`s as the card grows (the presenter's card once the
/// path has arrived), and when the finished call runs, an update in place of a second
/// `tool_call`; then the call's own progress as usual.
#[tokio::test]
async fn a_streaming_call_is_shown_once_and_updated_as_it_grows() {
    use dsh_tools::provider::{Dialect, Provider};
    let runs = Arc::new(AtomicUsize::new(0));
    let registry = registry(runs.clone());
    let bridge = AcpBridge::new(&registry);
    let client = Scripted::answering(vec![Answer::Select("allow_once")]);
    let session = bridge.open_session(client.clone(), "s1", view());
    let tools = registry
        .provider_tools(Some(session.agent()), Dialect::new(Provider::Anthropic))
        .unwrap();
    let mut stream = tools.call_stream();
    stream
        .feed(
            &json!({"type": "content_block_start", "index": 0, "content_block":
            {"type": "tool_use", "id": "toolu_1", "name": "write_file", "input": {}}}),
        )
        .unwrap();
    let show = |stream: &dsh_tools::provider::CallStream<'_>| {
        let partial = stream.calls()[0].partial().unwrap_or_else(|| json!({}));
        session.stream_call("toolu_1", stream.tool_name(0).unwrap(), &partial);
    };
    show(&stream);
    for piece in ["{\"pa", "th\": \"notes/to", "do.txt\"}"] {
        stream
            .feed(&json!({"type": "content_block_delta", "index": 0,
                "delta": {"type": "input_json_delta", "partial_json": piece}}))
            .unwrap();
        show(&stream);
    }
    stream.feed(&json!({"type": "message_stop"})).unwrap();
    let calls = stream.finish().unwrap();
    let input = calls
        .into_iter()
        .next()
        .unwrap()
        .into_input(CancellationToken::new())
        .unwrap();
    let result = session.execute(input).await;
    assert_eq!(result.text(), "wrote notes/todo.txt");
    assert_eq!(
        client.statuses(),
        [
            "tool_call:pending",
            "tool_call_update:pending",
            "tool_call_update:pending",
            "tool_call_update:pending",
            "tool_call_update:pending",
            "tool_call_update:in_progress",
            "tool_call_update:completed"
        ]
    );
    let updates = client.updates.lock().unwrap().clone();
    // Before the path arrives the presenter declines: the generic card, raw input so far.
    assert_eq!(updates[0]["update"]["title"], "write_file");
    assert_eq!(
        updates[2]["update"]["rawInput"],
        json!({"path": "notes/to"})
    );
    assert_eq!(updates[3]["update"]["title"], "Write notes/todo.txt");
    assert_eq!(updates[4]["update"]["title"], "Write notes/todo.txt");
    // A late redraw of a call that ran changes nothing.
    session.stream_call("toolu_1", "write_file", &json!({"path": "notes/todo.txt"}));
    assert_eq!(client.statuses().len(), 7);
    // A streamed call that will not run is marked failed, once.
    session.stream_call("toolu_2", "write_file", &json!({"pa": 1}));
    session.abandon_stream("toolu_2");
    session.abandon_stream("toolu_2");
    session.abandon_stream("never_shown");
    assert_eq!(
        &client.statuses()[7..],
        ["tool_call:pending", "tool_call_update:failed"]
    );
    assert_eq!(runs.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn a_long_calls_progress_reaches_the_client_as_updates_each_report_once() {
    let registry = Registry::new();
    registry
        .register(dsh_tools::ToolDefinition::new(
            "build",
            "Builds.",
            json!({"type": "object"}),
            dsh_tools::OutputDecl::text(),
            |_, ctx| async move {
                ctx.report_progress(1.0, Some(2.0), Some("compiling"));
                ctx.report_progress(1.0, Some(2.0), Some("compiling"));
                ctx.report_progress(2.0, Some(2.0), Some("linking"));
                Ok(json!("built"))
            },
        ))
        .unwrap()
        .keep();
    let bridge = AcpBridge::new(&registry);
    let client = Scripted::answering(vec![]);
    let session = bridge.open_session(client.clone(), "s1", view());
    let seen = Arc::new(Mutex::new(Vec::new()));
    let sink = {
        let seen = Arc::clone(&seen);
        dsh_tools::pipeline::ProgressSink::new(move |p: dsh_tools::pipeline::Progress| {
            seen.lock().unwrap().push(p.progress);
        })
    };
    let input =
        ToolExecutionInput::new("c1", "build", json!({}), CancellationToken::new()).progress(sink);
    assert_eq!(session.execute(input).await.text(), "built");
    assert_eq!(
        client.statuses(),
        [
            "tool_call:pending",
            "tool_call_update:in_progress",
            "tool_call_update:in_progress",
            "tool_call_update:in_progress",
            "tool_call_update:completed"
        ]
    );
    let shown: Vec<Value> = client
        .updates
        .lock()
        .unwrap()
        .iter()
        .filter_map(|n| {
            n["update"]["content"][0]["content"]["text"]
                .as_str()
                .map(Value::from)
        })
        .collect();
    assert_eq!(
        shown[..2],
        [json!("compiling (1 of 2)"), json!("linking (2 of 2)")]
    );
    // The host's own sink still hears every report.
    assert_eq!(*seen.lock().unwrap(), [1.0, 1.0, 2.0]);
}

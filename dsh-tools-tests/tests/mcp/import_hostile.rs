//! Importing from a server we do not control: a hand-written JSON-RPC peer on in-process pipes
//! that never answers, answers what rmcp cannot decode, pages forever, repeats names, sends
//! names a terminal would misread, and claims our own error codes.

use dsh_tools::mcp::rmcp::service::ClientLifecycleMode;
use dsh_tools::mcp::{ImportError, ImportLimits, ImportOptions, McpImport};
use dsh_tools::provider::ProviderExport;
use dsh_tools::registry::ChangeEvent;
use dsh_tools::{CancellationToken, Registry, ToolExecutionInput, ToolExecutionResult, wrappers};
use serde_json::{Map, Value, json};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

/// What the fake server answers to one request: the lines to write (none: stay silent).
type Answer = Arc<dyn Fn(&str, &Value, &Value) -> Vec<String> + Send + Sync>;

fn result(id: &Value, result: Value) -> String {
    json!({"jsonrpc": "2.0", "id": id, "result": result}).to_string()
}

fn tool(name: &str) -> Value {
    json!({"name": name, "description": "d", "inputSchema": {"type": "object"}})
}

/// A peer that answers `initialize` (unless `answer` handles it) and hands every other request
/// (method, id, params) to `answer`. Lines sent on the returned sender go out unasked.
fn spawn_server(
    answer: Answer,
) -> (
    tokio::io::DuplexStream,
    tokio::io::DuplexStream,
    tokio::sync::mpsc::UnboundedSender<String>,
) {
    let (client_read, mut server_write) = tokio::io::duplex(1 << 22);
    let (server_read, client_write) = tokio::io::duplex(1 << 22);
    let (push, mut pushed) = tokio::sync::mpsc::unbounded_channel::<String>();
    tokio::spawn(async move {
        let mut lines = BufReader::new(server_read).lines();
        loop {
            let out = tokio::select! {
                line = lines.next_line() => {
                    let Ok(Some(line)) = line else { return };
                    let Ok(message) = serde_json::from_str::<Value>(&line) else {
                        continue;
                    };
                    let (Some(method), Some(id)) = (message["method"].as_str(), message.get("id"))
                    else {
                        continue; // a notification
                    };
                    let mut out = answer(method, id, &message["params"]);
                    if out.is_empty() && method == "initialize" {
                        out.push(result(
                            id,
                            json!({
                                "protocolVersion": "2025-06-18",
                                "capabilities": {"tools": {"listChanged": true}},
                                "serverInfo": {"name": "hostile", "version": "0"}
                            }),
                        ));
                    }
                    out
                }
                Some(line) = pushed.recv() => vec![line],
            };
            for line in out {
                if server_write.write_all(line.as_bytes()).await.is_err()
                    || server_write.write_all(b"\n").await.is_err()
                {
                    return;
                }
            }
        }
    });
    (client_read, client_write, push)
}

async fn connect(limits: ImportLimits, answer: Answer) -> Result<McpImport, ImportError> {
    let (read, write, _push) = spawn_server(answer);
    McpImport::with_limits(limits)
        .connect_io(read, write, ClientLifecycleMode::Initialize)
        .await
}

fn short() -> ImportLimits {
    ImportLimits::default()
        .handshake_timeout(Duration::from_millis(300))
        .request_timeout(Duration::from_millis(300))
        .call_timeout(Duration::from_millis(300))
}

async fn call(registry: &Registry, name: &str) -> ToolExecutionResult {
    let input = ToolExecutionInput::new("c1", name, json!({}), CancellationToken::new());
    registry.execute(input).await
}

/// A list with the given tools, and `call` answered by `on_call`.
fn lister(
    tools: Vec<Value>,
    on_call: impl Fn(&Value, &Value) -> Vec<String> + Send + Sync + 'static,
) -> Answer {
    Arc::new(move |method, id, params| match method {
        "tools/list" => vec![result(id, json!({"tools": tools}))],
        "tools/call" => on_call(id, params),
        _ => Vec::new(),
    })
}

/// A value nested `depth` levels deep, built without recursion.
fn deep(depth: usize) -> String {
    format!("{}{}", "[".repeat(depth), "]".repeat(depth))
}

#[tokio::test]
async fn a_server_that_never_answers_times_out_at_every_step() {
    let silent: Answer = Arc::new(|_, _, _| vec![String::new()]); // a blank line: no answer
    let Err(error) = connect(short(), silent).await else {
        panic!("the handshake must time out");
    };
    assert!(
        matches!(
            error,
            ImportError::Timeout {
                what: "the handshake",
                ..
            }
        ),
        "{error}"
    );

    let no_list: Answer = Arc::new(|_, _, _| Vec::new());
    let import = connect(short(), no_list).await.unwrap();
    let error = import.list_tools().await.unwrap_err();
    assert!(
        matches!(
            error,
            ImportError::Timeout {
                what: "tools/list",
                ..
            }
        ),
        "{error}"
    );

    let import = connect(short(), lister(vec![tool("hang")], |_, _| Vec::new()))
        .await
        .unwrap();
    let local = Registry::new();
    let _imported = import
        .import_into(&local, ImportOptions::default())
        .await
        .unwrap();
    let outcome = call(&local, "hang").await;
    assert_eq!(outcome.code(), Some("MCP_TIMEOUT"), "{}", outcome.text());
    assert!(
        outcome.text().contains("ImportLimits::call_timeout"),
        "{}",
        outcome.text()
    );
}

#[tokio::test]
async fn answers_rmcp_cannot_decode_fail_their_call_at_once() {
    // Timeouts long enough that only the filter can make these calls end in time.
    let patient = ImportLimits::default()
        .call_timeout(Duration::from_secs(600))
        .max_message_bytes(256 * 1024);
    let answers = lister(vec![tool("deep"), tool("huge")], |id, params| {
        let body = if params["name"] == "deep" {
            format!(
                "{{\"jsonrpc\":\"2.0\",\"id\":{id},\"result\":{{\"content\":[],\"structuredContent\":{{\"v\":{}}}}}}}",
                deep(100_000)
            )
        } else {
            format!(
                "{{\"jsonrpc\":\"2.0\",\"id\":{id},\"result\":{{\"content\":[{{\"type\":\"text\",\"text\":\"{}\"}}]}}}}",
                "x".repeat(1 << 20)
            )
        };
        vec![body]
    });
    let import = connect(patient, answers).await.unwrap();
    let local = Registry::new();
    let _imported = import
        .import_into(&local, ImportOptions::default())
        .await
        .unwrap();
    let mut seen = Vec::new();
    for name in ["deep", "huge", "deep", "huge"] {
        let outcome = tokio::time::timeout(Duration::from_secs(60), call(&local, name))
            .await
            .expect("an undecodable answer must not leave the call waiting");
        assert_eq!(
            outcome.code(),
            Some("MCP_TRANSPORT_ERROR"),
            "{}",
            outcome.text()
        );
        seen.push(outcome.text());
    }
    assert!(
        seen.iter().any(|t| t.contains("nests deeper than")),
        "{seen:?}"
    );
    assert!(
        seen.iter().any(|t| t.contains("longer than 262144 bytes")),
        "{seen:?}"
    );
    // The connection is still usable after both.
    assert_eq!(import.list_tools().await.unwrap().len(), 2);
}

#[tokio::test]
async fn listings_stop_at_a_repeated_cursor_and_at_the_caps() {
    let pages = Arc::new(AtomicUsize::new(0));
    let seen = Arc::clone(&pages);
    let repeating: Answer = Arc::new(move |method, id, _| {
        if method != "tools/list" {
            return Vec::new();
        }
        let n = seen.fetch_add(1, Ordering::SeqCst);
        vec![result(
            id,
            json!({"tools": [tool(&format!("t{n}"))], "nextCursor": "same"}),
        )]
    });
    let import = connect(short(), repeating).await.unwrap();
    let tools = import.list_tools().await.unwrap();
    assert_eq!(
        tools.len(),
        2,
        "the first page and the one the cursor led to"
    );
    assert_eq!(pages.load(Ordering::SeqCst), 2);

    let endless: Answer = Arc::new(move |method, id, params| {
        if method != "tools/list" {
            return Vec::new();
        }
        let next = params["cursor"]
            .as_str()
            .map_or(0, |c| c.parse::<u64>().unwrap() + 1);
        vec![result(
            id,
            json!({"tools": [tool(&format!("t{next}"))], "nextCursor": next.to_string()}),
        )]
    });
    let import = connect(short().max_pages(20), endless).await.unwrap();
    let error = import.list_tools().await.unwrap_err();
    assert!(matches!(error, ImportError::TooLarge(_)), "{error}");
    assert!(error.to_string().contains("more than 20 pages"), "{error}");

    let many = lister((0..50).map(|i| tool(&format!("t{i}"))).collect(), |_, _| {
        Vec::new()
    });
    let import = connect(short().max_tools(49), many).await.unwrap();
    let error = import
        .import_into(&Registry::new(), ImportOptions::default())
        .await
        .unwrap_err();
    assert!(error.to_string().contains("more than 49 tools"), "{error}");
}

#[tokio::test]
async fn hostile_and_repeated_names_are_skipped_and_reported_escaped() {
    let names = [
        "ok",
        "",
        "esc\u{1b}[2Jclear",
        "bell\u{7}",
        "nul\u{0}",
        "new\nline",
        "rtl\u{202e}txt.exe",
        "ok",
    ];
    let mut tools: Vec<Value> = names.iter().map(|n| tool(n)).collect();
    tools.push(tool(&"n".repeat(100_000)));
    let import = connect(short(), lister(tools, |_, _| Vec::new()))
        .await
        .unwrap();
    let local = Registry::new();
    let imported = import
        .import_into(&local, ImportOptions::default())
        .await
        .unwrap();
    assert_eq!(imported.names(), ["ok"]);
    assert_eq!(local.tools(None).len(), 1);
    let skipped = imported.skipped();
    assert_eq!(skipped.len(), names.len(), "{skipped:?}");
    for (name, why) in &skipped {
        assert!(
            name.chars().all(|c| !c.is_control() && c != '\u{202e}'),
            "reported escaped: {name:?}"
        );
        assert!(name.len() < 300, "reported short");
        assert!(!why.is_empty());
    }
    assert!(
        skipped
            .iter()
            .any(|(n, w)| n == "ok" && w.contains("more than once"))
    );
    assert!(
        skipped.iter().any(|(n, _)| n == "esc\\u{1b}[2Jclear"),
        "{skipped:?}"
    );
    assert!(skipped.iter().any(|(_, w)| w.contains("empty")));
    assert!(skipped.iter().any(|(_, w)| w.contains("longer than 128")));
}

#[tokio::test]
async fn remote_claims_of_our_own_codes_are_kept_as_data_and_not_acted_on() {
    let calls = Arc::new(AtomicUsize::new(0));
    let counted = Arc::clone(&calls);
    let peer: Answer = Arc::new(move |method, id, params| match method {
        "tools/list" => vec![result(
            id,
            json!({"tools": [tool("flaky"), tool("aborted"), tool("own"), tool("args"), tool("junk")]}),
        )],
        "tools/call" => {
            counted.fetch_add(1, Ordering::SeqCst);
            let (name, code) = match params["name"].as_str().unwrap() {
                "flaky" => ("TransientError", "TRANSIENT".to_owned()),
                "aborted" => ("AbortError", "ABORTED_BEFORE_DISPATCH".to_owned()),
                "own" => ("HarnessError", "ENOSPC".to_owned()),
                "args" => ("ToolArgsError", "INVALID_ARGS".to_owned()),
                _ => ("X\u{1b}", "C".repeat(10_000)),
            };
            let mut meta = Map::new();
            meta.insert(
                "dev.dsh-tools/error".to_owned(),
                json!({"name": name, "code": code}),
            );
            vec![result(
                id,
                json!({"content": [{"type": "text", "text": "Error: nope"}], "isError": true, "_meta": meta}),
            )]
        }
        _ => Vec::new(),
    });
    let import = connect(short(), peer).await.unwrap();
    let local = Registry::new();
    let _imported = import
        .import_into(&local, ImportOptions::default())
        .await
        .unwrap();
    local.on_execute(wrappers::retry(3)).keep();

    let flaky = call(&local, "flaky").await;
    assert_eq!(flaky.code(), Some("REMOTE_TRANSIENT"));
    assert_eq!(
        calls.load(Ordering::SeqCst),
        1,
        "a remote TRANSIENT claim is not retried"
    );
    let aborted = call(&local, "aborted").await;
    assert_eq!(aborted.code(), Some("REMOTE_ABORTED_BEFORE_DISPATCH"));
    assert_eq!(
        aborted.error().unwrap().info().unwrap().name,
        "McpToolError"
    );
    let own = call(&local, "own").await;
    assert_eq!(own.code(), Some("ENOSPC"), "the tool's own codes cross");
    assert_eq!(own.error().unwrap().info().unwrap().name, "HarnessError");
    assert_eq!(call(&local, "args").await.code(), Some("INVALID_ARGS"));
    assert_eq!(call(&local, "junk").await.code(), Some("MCP_TOOL_ERROR"));
}

#[tokio::test]
async fn a_changed_tool_is_replaced_in_place_and_removals_are_one_pass() {
    let version = Arc::new(AtomicUsize::new(0));
    let v = Arc::clone(&version);
    let peer: Answer = Arc::new(move |method, id, _| match method {
        "tools/list" => {
            let n = v.load(Ordering::SeqCst);
            let mut tools = vec![json!({
                "name": "changing",
                "description": format!("version {n}"),
                "inputSchema": {"type": "object"}
            })];
            if n == 0 {
                tools.extend((0..2_000).map(|i| tool(&format!("gone_{i}"))));
            }
            vec![result(id, json!({"tools": tools}))]
        }
        _ => Vec::new(),
    });
    let (read, write, push) = spawn_server(peer);
    let import = McpImport::with_limits(short())
        .connect_io(read, write, ClientLifecycleMode::Initialize)
        .await
        .unwrap();
    let local = Registry::new();
    let imported = import
        .import_into(&local, ImportOptions::default())
        .await
        .unwrap();
    assert_eq!(local.tools(None).len(), 2_001);

    // Every change the registry announces: at no moment may `changing` be missing.
    let missing = Arc::new(Mutex::new(Vec::new()));
    let events = Arc::new(AtomicUsize::new(0));
    let (seen, counted) = (Arc::clone(&missing), Arc::clone(&events));
    let watched = local.clone();
    local
        .on_change(move |event: &ChangeEvent| {
            counted.fetch_add(1, Ordering::SeqCst);
            if watched.get("changing", None).is_none() {
                seen.lock().unwrap().push(event.clone());
            }
            Ok(())
        })
        .keep();
    version.store(1, Ordering::SeqCst);
    push.send(json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}).to_string())
        .unwrap();
    for _ in 0..500 {
        if local.tools(None).len() == 1
            && local.get("changing", None).unwrap().description() == "version 1"
        {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(local.tools(None).len(), 1);
    assert_eq!(
        local.get("changing", None).unwrap().description(),
        "version 1"
    );
    assert_eq!(imported.names(), ["changing"]);
    assert!(
        missing.lock().unwrap().is_empty(),
        "{:?}",
        missing.lock().unwrap().first()
    );
    // 2,000 removals and one replacement, each announced once.
    assert_eq!(events.load(Ordering::SeqCst), 2_001);
    drop(imported);
    assert!(
        local.tools(None).is_empty(),
        "dropping the handle unregisters in one pass"
    );
}

#[tokio::test]
async fn a_remote_schema_a_dialect_cannot_express_leaves_only_that_tool_out() {
    use dsh_tools::provider::{Dialect, Provider};
    // A map (schema-valued additionalProperties): strict OpenAI cannot express it.
    let map = json!({"name": "tags", "description": "d", "inputSchema": {"type": "object",
        "properties": {"labels": {"type": "object", "additionalProperties": {"type": "string"}}}}});
    let tools = vec![tool("fine"), map];
    let dialect = Dialect::strict(Provider::OpenAiChat);

    let import = connect(short(), lister(tools.clone(), |_, _| Vec::new()))
        .await
        .unwrap();
    let local = Registry::new();
    let _imported = import
        .import_into(&local, ImportOptions::default())
        .await
        .unwrap();
    let exported = local.provider_tools(None, dialect).unwrap();
    let names: Vec<&str> = exported.tools().iter().map(|t| t.name()).collect();
    assert_eq!(names, ["fine"]);
    assert_eq!(exported.skipped().len(), 1);
    assert_eq!(exported.skipped()[0].0, "tags");
    assert!(
        exported.skipped()[0].1.message.contains("map"),
        "{:?}",
        exported.skipped()
    );
    // The non-strict dialect takes both.
    assert_eq!(
        local
            .provider_tools(None, Dialect::new(Provider::OpenAiChat))
            .unwrap()
            .tools()
            .len(),
        2
    );

    // Asked for, the old behaviour: one tool that cannot be expressed fails the export.
    let import = connect(short(), lister(tools, |_, _| Vec::new()))
        .await
        .unwrap();
    let strict = Registry::new();
    let _imported = import
        .import_into(&strict, ImportOptions::default().require_export(true))
        .await
        .unwrap();
    let error = strict.provider_tools(None, dialect).unwrap_err();
    assert_eq!(error.problems[0].0, "tags");
}

use crate::stack;
use stack::{deep_array as deep_value, on_worker_stack};

#[test]
fn arguments_no_server_could_read_are_refused_before_sending() {
    on_worker_stack(|| async {
        let calls = Arc::new(AtomicUsize::new(0));
        let seen = Arc::clone(&calls);
        // A free-form schema: any value is valid locally, so only the send can refuse it.
        let answers = lister(vec![tool("free")], move |id, _| {
            seen.fetch_add(1, Ordering::SeqCst);
            vec![result(id, json!({"content": []}))]
        });
        let import = connect(ImportLimits::default(), answers).await.unwrap();
        let local = Registry::new();
        let _imported = import
            .import_into(&local, ImportOptions::default())
            .await
            .unwrap();
        let send = |arguments: Value| {
            let local = local.clone();
            async move {
                let input =
                    ToolExecutionInput::new("c1", "free", arguments, CancellationToken::new());
                tokio::time::timeout(Duration::from_secs(60), local.execute(input))
                    .await
                    .expect("a refused call ends at once")
            }
        };
        // 3,000 levels aborted the process (a recursive clone on a worker's stack); 100,000 is
        // what a program builds in a second.
        for depth in [3_000, 100_000] {
            let mut map = Map::new();
            map.insert("v".to_owned(), deep_value(depth));
            let outcome = send(Value::Object(map)).await;
            assert_eq!(outcome.code(), Some("INVALID_ARGS"), "{}", outcome.text());
            assert!(
                outcome.text().contains("deeper than 124 levels"),
                "{}",
                outcome.text()
            );
        }
        // One more than a server can read: args at 125 levels put the message at 127.
        let mut map = Map::new();
        map.insert("v".to_owned(), deep_value(124));
        let outcome = send(Value::Object(map)).await;
        assert_eq!(outcome.code(), Some("INVALID_ARGS"), "{}", outcome.text());
        // Larger than any server's line limit.
        let outcome = send(json!({"v": "x".repeat(17 << 20)})).await;
        assert_eq!(outcome.code(), Some("INVALID_ARGS"), "{}", outcome.text());
        assert!(
            outcome.text().contains("bytes or more as JSON"),
            "{}",
            outcome.text()
        );
        assert_eq!(calls.load(Ordering::SeqCst), 0, "nothing was sent");
        // The limit itself goes out and is answered.
        let mut map = Map::new();
        map.insert("v".to_owned(), deep_value(123));
        let outcome = send(Value::Object(map)).await;
        assert!(!outcome.is_error(), "{}", outcome.text());
        assert_eq!(calls.load(Ordering::SeqCst), 1);
    });
}

#[cfg(feature = "code")]
#[test]
fn a_program_passing_deep_arguments_to_an_imported_tool_gets_an_error_not_an_abort() {
    use dsh_tools::code::CodeRuntimeConfig;
    use dsh_tools::code::quickjs::QuickJsRuntime;
    use dsh_tools::registry::PresentationMode;
    on_worker_stack(|| async {
        let calls = Arc::new(AtomicUsize::new(0));
        let seen = Arc::clone(&calls);
        let answers = lister(vec![tool("free")], move |id, _| {
            seen.fetch_add(1, Ordering::SeqCst);
            vec![result(
                id,
                json!({"content": [{"type": "text", "text": "ok"}]}),
            )]
        });
        let import = connect(ImportLimits::default(), answers).await.unwrap();
        let local = Registry::new();
        let _imported = import
            .import_into(&local, ImportOptions::default())
            .await
            .unwrap();
        local.set_presentation_mode(PresentationMode::Code);
        local.set_code_runtime(QuickJsRuntime::new(CodeRuntimeConfig::default()).unwrap());
        // The attack of issue 43: nest 3,000 (then 100,000) levels and hand it to the import.
        let program = r#"
            const out = [];
            for (const depth of [3000, 100000]) {
              let v = 0;
              for (let i = 0; i < depth; i++) v = [v];
              try { await tools.free({ v }); out.push('sent'); }
              catch (e) { out.push(e.message); }
            }
            out.push((await tools.free({ v: [[1]] })).content[0].text);
            return out;
        "#;
        let args = json!({"code": program, "description": "deep arguments"});
        let input = ToolExecutionInput::new("outer", "run_code", args, CancellationToken::new());
        let outcome = tokio::time::timeout(Duration::from_secs(120), local.execute(input))
            .await
            .expect("the run ended");
        assert!(!outcome.is_error(), "{}", outcome.text());
        let text = outcome.text();
        assert_eq!(text.matches("deeper than 124 levels").count(), 2, "{text}");
        assert!(text.contains("\"ok\""), "{text}");
        assert_eq!(
            calls.load(Ordering::SeqCst),
            1,
            "only the shallow call was sent"
        );
    });
}

#[tokio::test]
async fn answers_with_a_lone_surrogate_or_invalid_utf8_fail_their_call_at_once_saying_why() {
    let patient = ImportLimits::default().call_timeout(Duration::from_secs(600));
    // Node writes `\ud800` when a string is cut through an emoji; a Latin-1 file name is one
    // invalid byte. rmcp drops both lines without answering.
    let answers = lister(
        vec![tool("cut"), tool("latin1"), tool("low")],
        |id, params| {
            let text = match params["name"].as_str() {
                Some("cut") => "\\ud83d".to_owned(),
                Some("low") => "a\\udc00b".to_owned(),
                _ => "caf\u{fffd}".to_owned(),
            };
            let line = format!(
                "{{\"jsonrpc\":\"2.0\",\"id\":{id},\"result\":{{\"content\":[{{\"type\":\"text\",\"text\":\"{text}\"}}]}}}}"
            );
            vec![line]
        },
    );
    let (read, write, _push) = spawn_server(answers);
    // The Latin-1 byte is written raw: `spawn_server` sends strings, so swap it in on the way.
    let read = Latin1(read);
    let import = McpImport::with_limits(patient)
        .connect_io(read, write, ClientLifecycleMode::Initialize)
        .await
        .unwrap();
    let local = Registry::new();
    let _imported = import
        .import_into(&local, ImportOptions::default())
        .await
        .unwrap();
    for (name, why) in [
        ("cut", "lone leading surrogate"),
        ("low", "lone trailing surrogate"),
        ("latin1", "not valid UTF-8"),
    ] {
        let outcome = tokio::time::timeout(Duration::from_secs(60), call(&local, name))
            .await
            .expect("an undecodable answer must not leave the call waiting");
        assert_eq!(
            outcome.code(),
            Some("MCP_TRANSPORT_ERROR"),
            "{}",
            outcome.text()
        );
        assert!(outcome.text().contains(why), "{name}: {}", outcome.text());
        assert!(
            !outcome.text().contains("did not answer"),
            "{}",
            outcome.text()
        );
    }
    assert_eq!(import.list_tools().await.unwrap().len(), 3);
}

/// A reader that turns every U+FFFD (as UTF-8, `EF BF BD`) into the single Latin-1 byte `E9`.
struct Latin1<R>(R);

impl<R: tokio::io::AsyncRead + Unpin> tokio::io::AsyncRead for Latin1<R> {
    fn poll_read(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        // Read into a scratch buffer of the same room, then copy with the swap.
        let mut scratch = vec![0u8; buf.remaining()];
        let mut inner = tokio::io::ReadBuf::new(&mut scratch);
        let poll = std::pin::Pin::new(&mut self.0).poll_read(cx, &mut inner);
        if let std::task::Poll::Ready(Ok(())) = &poll {
            let filled = inner.filled();
            let mut i = 0;
            while i < filled.len() {
                if filled[i..].starts_with(&[0xEF, 0xBF, 0xBD]) {
                    buf.put_slice(&[0xE9]);
                    i += 3;
                } else {
                    buf.put_slice(&filled[i..=i]);
                    i += 1;
                }
            }
        }
        poll
    }
}

#[tokio::test]
async fn a_listing_with_bad_entries_keeps_the_good_ones_and_reports_each_bad_one() {
    let tools = vec![
        tool("good"),
        json!({"name": "no_schema", "description": "d"}),
        json!({"name": "string_schema", "inputSchema": "object"}),
        json!({"name": 5, "inputSchema": {"type": "object"}}),
        tool("also_good"),
    ];
    let import = connect(short(), lister(tools, |_, _| Vec::new()))
        .await
        .unwrap();
    let local = Registry::new();
    let imported = import
        .import_into(&local, ImportOptions::default())
        .await
        .expect("one bad tool does not spoil the server");
    assert_eq!(imported.names(), ["good", "also_good"]);
    let skipped = imported.skipped();
    assert_eq!(skipped.len(), 3, "{skipped:?}");
    assert!(
        skipped
            .iter()
            .any(|(n, w)| n == "no_schema" && w.contains("inputSchema")),
        "{skipped:?}"
    );
    assert!(
        skipped.iter().any(|(n, _)| n == "string_schema"),
        "{skipped:?}"
    );
    assert!(skipped.iter().any(|(n, _)| n == "#3"), "{skipped:?}");
    assert_eq!(import.list_tools().await.unwrap().len(), 2);
}

#[tokio::test]
async fn a_listing_of_millions_of_bad_entries_is_refused_and_a_few_are_reported() {
    // 20,000 entries that are not tools, 50 of them with a 100 KB schema serde would quote.
    let mut tools: Vec<Value> = (0..20_000).map(|_| json!({})).collect();
    for entry in tools.iter_mut().take(50) {
        *entry = json!({"name": "big", "inputSchema": "x".repeat(100_000)});
    }
    // The listing is 7 MB: its decode is not what `short()`'s 300 ms are for (under a loaded
    // test run it took longer).
    let slow_list = || short().request_timeout(Duration::from_secs(30));
    let too_many = connect(slow_list(), lister(tools.clone(), |_, _| Vec::new()))
        .await
        .unwrap();
    let error = too_many
        .import_into(&Registry::new(), ImportOptions::default())
        .await
        .expect_err("20,000 entries are more than max_tools");
    assert!(
        error.to_string().contains("ImportLimits::max_tools"),
        "{error}"
    );
    // Within max_tools: every bad entry counted, at most 100 reported, each cut to a line.
    let limits = slow_list().max_tools(30_000);
    let import = connect(limits, lister(tools, |_, _| Vec::new()))
        .await
        .unwrap();
    let imported = import
        .import_into(&Registry::new(), ImportOptions::default())
        .await
        .unwrap();
    let skipped = imported.skipped();
    assert_eq!(skipped.len(), 100);
    assert!(
        skipped.iter().all(|(_, why)| why.len() < 300),
        "{:?}",
        &skipped[0]
    );
}

#[tokio::test]
async fn line_and_paragraph_separators_in_names_are_skipped_like_other_invisible_characters() {
    let tools = vec![
        tool("ok"),
        tool("a\u{2028}b"),
        tool("a\u{2029}b"),
        tool("tag\u{e0041}smuggled"),
        tool("soft\u{ad}hyphen"),
    ];
    let import = connect(short(), lister(tools, |_, _| Vec::new()))
        .await
        .unwrap();
    let local = Registry::new();
    let imported = import
        .import_into(&local, ImportOptions::default())
        .await
        .unwrap();
    assert_eq!(imported.names(), ["ok"]);
    assert_eq!(imported.skipped().len(), 4, "{:?}", imported.skipped());
}

#[tokio::test]
async fn a_protocol_version_this_client_does_not_speak_is_refused_at_the_handshake() {
    let answer: Answer = Arc::new(|method, id, _| match method {
        "initialize" => vec![result(
            id,
            json!({
                "protocolVersion": "1999-01-01",
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "ancient", "version": "0"}
            }),
        )],
        _ => Vec::new(),
    });
    let error = connect(short(), answer)
        .await
        .expect_err("1999-01-01 is no MCP version");
    let message = error.to_string();
    assert!(message.contains("\"1999-01-01\""), "{message}");
    assert!(
        message.contains("2025-11-25"),
        "names the versions it speaks: {message}"
    );
}

#[tokio::test]
async fn an_answer_whose_id_is_a_string_for_a_numeric_request_fails_that_call_at_once() {
    let patient = ImportLimits::default().call_timeout(Duration::from_secs(600));
    let answers = lister(vec![tool("stringly")], |id, _| {
        let quoted = Value::String(id.to_string());
        vec![result(&quoted, json!({"content": []}))]
    });
    let import = connect(patient, answers).await.unwrap();
    let local = Registry::new();
    let _imported = import
        .import_into(&local, ImportOptions::default())
        .await
        .unwrap();
    let outcome = tokio::time::timeout(Duration::from_secs(60), call(&local, "stringly"))
        .await
        .expect("a mistyped id must not leave the call waiting");
    assert_eq!(
        outcome.code(),
        Some("MCP_TRANSPORT_ERROR"),
        "{}",
        outcome.text()
    );
    assert!(outcome.text().contains("a string"), "{}", outcome.text());
}

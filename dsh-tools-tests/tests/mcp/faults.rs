//! Hostile or broken peers: raw JSON-RPC lines at our server, garbage from a remote server, and
//! the example server over a real child process.

use crate::support;

use dsh_tools::mcp::rmcp::ServiceExt;
use dsh_tools::mcp::{ImportOptions, McpImport, McpServer};
use dsh_tools::{CancellationToken, Registry, ToolExecutionInput};
use serde_json::{Value, json};
use std::sync::Arc;
use support::{Era, Probe, registry};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream, Lines};

/// A raw line-level client of an in-process server.
struct Raw {
    writer: tokio::io::WriteHalf<DuplexStream>,
    lines: Lines<BufReader<tokio::io::ReadHalf<DuplexStream>>>,
}

impl Raw {
    async fn start(registry: Registry) -> Self {
        let (a, b) = tokio::io::duplex(1 << 16);
        let server = McpServer::new(registry);
        tokio::spawn(async move {
            if let Ok(running) = server.serve(a).await {
                let _ = running.waiting().await;
            }
        });
        let (reader, writer) = tokio::io::split(b);
        let mut raw = Self {
            writer,
            lines: BufReader::new(reader).lines(),
        };
        raw.send(
            &json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "raw", "version": "1"}}}),
        )
        .await;
        let init = raw.response(0).await;
        assert_eq!(init["result"]["serverInfo"]["name"], "dsh-tools");
        raw.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            .await;
        raw
    }

    async fn line(&mut self, line: &[u8]) {
        self.writer.write_all(line).await.unwrap();
        self.writer.write_all(b"\n").await.unwrap();
    }

    async fn send(&mut self, message: &Value) {
        self.line(serde_json::to_string(message).unwrap().as_bytes())
            .await;
    }

    /// The next message with this id (skipping notifications and other responses).
    async fn response(&mut self, id: i64) -> Value {
        let read = async {
            while let Some(line) = self.lines.next_line().await.unwrap() {
                let message: Value = serde_json::from_str(&line).unwrap();
                if message["id"] == json!(id) {
                    return message;
                }
            }
            panic!("the server closed the connection before answering {id}");
        };
        tokio::time::timeout(std::time::Duration::from_secs(20), read)
            .await
            .expect("an answer")
    }

    async fn call(&mut self, id: i64, name: &str, arguments: Value) -> Value {
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": name, "arguments": arguments}}))
            .await;
        self.response(id).await
    }
}

#[tokio::test]
async fn malformed_lines_unknown_methods_and_bad_arguments_leave_the_session_usable() {
    let probe = Arc::new(Probe::default());
    let mut raw = Raw::start(registry(&probe)).await;
    raw.line(b"{not json").await;
    raw.line(b"[1, 2, 3]").await;
    raw.line(br#"{"jsonrpc": "2.0", "id": 1}"#).await;
    raw.send(&json!({"jsonrpc": "2.0", "id": 2, "method": "no/such/method"}))
        .await;
    let unknown = raw.response(2).await;
    assert_eq!(unknown["error"]["code"], -32601, "{unknown}");
    // Arguments that are not an object never reach the registry.
    raw.send(&json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
        "params": {"name": "add", "arguments": [2, 3]}}))
        .await;
    let not_object = raw.response(3).await;
    assert!(not_object.get("error").is_some(), "{not_object}");
    let wrong_types = raw.call(4, "add", json!({"a": true, "b": {}})).await;
    assert_eq!(wrong_types["result"]["isError"], true);
    assert_eq!(
        wrong_types["result"]["_meta"]["dev.dsh-tools/error"]["code"],
        "INVALID_ARGS"
    );
    let ok = raw.call(5, "add", json!({"a": 2, "b": 3})).await;
    assert_eq!(ok["result"]["content"][0]["text"], "5", "{ok}");
}

#[tokio::test]
async fn deeply_nested_arguments_are_refused_without_overflowing_the_stack() {
    let probe = Arc::new(Probe::default());
    let mut raw = Raw::start(registry(&probe)).await;
    let depth = 100_000;
    let mut line = String::with_capacity(depth * 2 + 100);
    line.push_str(r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"#);
    line.extend(std::iter::repeat_n('[', depth));
    line.extend(std::iter::repeat_n(']', depth));
    line.push_str("}}}");
    raw.line(line.as_bytes()).await;
    let ok = raw.call(2, "add", json!({"a": 1, "b": 1})).await;
    assert_eq!(ok["result"]["content"][0]["text"], "2", "{ok}");
}

#[tokio::test]
async fn a_line_over_16_mib_leaves_other_sessions_of_the_registry_usable() {
    let probe = Arc::new(Probe::default());
    let registry = registry(&probe);
    let mut raw = Raw::start(registry.clone()).await;
    let mut huge = Vec::with_capacity(17 << 20);
    huge.extend_from_slice(br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":""#);
    huge.resize(17 << 20, b'x');
    huge.extend_from_slice(br#""}}}"#);
    // rmcp's line limit is 16 MiB: the session ends (or refuses the line), nothing else.
    let _ = raw.writer.write_all(&huge).await;
    let _ = raw.writer.write_all(b"\n").await;
    drop(huge);
    // Other sessions of the same registry are unaffected.
    let mut other = Raw::start(registry).await;
    let ok = other.call(2, "add", json!({"a": 20, "b": 22})).await;
    assert_eq!(ok["result"]["content"][0]["text"], "42");
}

/// A fake server: a correct handshake and tool list, then garbage for every call.
async fn garbage_server(stream: DuplexStream) {
    let (reader, mut writer) = tokio::io::split(stream);
    let mut lines = BufReader::new(reader).lines();
    while let Ok(Some(line)) = lines.next_line().await {
        let Ok(message) = serde_json::from_str::<Value>(&line) else {
            continue;
        };
        let id = message["id"].clone();
        let reply = match message["method"].as_str() {
            Some("initialize") => json!({"jsonrpc": "2.0", "id": id, "result": {
                "protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
                "serverInfo": {"name": "garbage", "version": "0"}}}),
            Some("tools/list") => json!({"jsonrpc": "2.0", "id": id, "result": {"tools": [
                {"name": "g", "inputSchema": {"type": "object"}}]}}),
            Some("tools/call") => {
                writer.write_all(b"\x00\xff garbage {{{\n").await.unwrap();
                json!({"jsonrpc": "2.0", "id": id, "result": {"content": "not an array"}})
            }
            _ => continue,
        };
        let mut bytes = serde_json::to_vec(&reply).unwrap();
        bytes.push(b'\n');
        if writer.write_all(&bytes).await.is_err() {
            return;
        }
    }
}

#[tokio::test]
async fn a_remote_server_answering_garbage_fails_the_call_with_a_code() {
    let (a, b) = tokio::io::duplex(1 << 16);
    tokio::spawn(garbage_server(a));
    let import = McpImport::connect_with(b, Era::Legacy.lifecycle())
        .await
        .unwrap();
    let local = Registry::new();
    let imported = import
        .import_into(&local, ImportOptions::default())
        .await
        .unwrap();
    assert_eq!(imported.names(), ["g"]);
    let input = ToolExecutionInput::new("c1", "g", json!({}), CancellationToken::new());
    let result = tokio::time::timeout(std::time::Duration::from_secs(30), local.execute(input))
        .await
        .expect("the call settles");
    assert!(result.is_error());
    let code = result.code().unwrap_or_default().to_owned();
    assert!(code.starts_with("MCP_"), "{code}: {}", result.text());
}

/// The example binary, built by cargo for this test run (examples are not `CARGO_BIN_EXE_*`).
fn example_binary() -> Option<std::path::PathBuf> {
    let test_exe = std::env::current_exe().ok()?;
    let profile_dir = test_exe.parent()?.parent()?;
    let binary = profile_dir.join("examples").join("mcp_server");
    binary.exists().then_some(binary)
}

#[tokio::test]
async fn the_example_server_serves_over_stdio() {
    // `cargo test --workspace --all-features` builds every example before running tests.
    let binary = example_binary().expect(
        "target/<profile>/examples/mcp_server is missing: run the workspace tests \
         (`cargo test --workspace --all-features`) or `cargo build -p examples --features mcp --examples` first",
    );
    let root = std::env::temp_dir().join(format!("dsh-mcp-example-{}", std::process::id()));
    std::fs::create_dir_all(&root).unwrap();
    let mut command = tokio::process::Command::new(binary);
    // `write_file` asks the client's user by default; this import answers no elicitation.
    command.arg("--root").arg(&root).arg("--no-ask");
    let server = McpImport::connect_stdio(command).await.unwrap();
    let local = Registry::new();
    let imported = server
        .import_into(&local, ImportOptions::default())
        .await
        .unwrap();
    assert_eq!(
        imported.names(),
        [
            "read_file",
            "write_file",
            "list_files",
            "count_files",
            "echo",
            "add"
        ]
    );
    let run = |name: &str, args: Value| {
        let input = ToolExecutionInput::new("c", name, args, CancellationToken::new());
        let local = local.clone();
        async move { local.execute(input).await }
    };
    let wrote = run(
        "write_file",
        json!({"path": "a/b.txt", "content": "one\ntwo"}),
    )
    .await;
    assert_eq!(wrote.text(), "wrote 7 bytes to a/b.txt");
    assert_eq!(
        std::fs::read_to_string(root.join("a/b.txt")).unwrap(),
        "one\ntwo"
    );
    let read = run("read_file", json!({"path": "a/b.txt", "offset": 2})).await;
    assert_eq!(
        read.value().unwrap()["structuredContent"],
        json!({"path": "a/b.txt", "offset": 2, "lines": ["two"]})
    );
    let escape = run("read_file", json!({"path": "../../etc/passwd"})).await;
    assert_eq!(escape.code(), Some("OUTSIDE_WORKSPACE"));
    let _ = std::fs::remove_dir_all(root);
}

/// Without `--root` the example serves a fresh private directory: a random name created
/// exclusively with mode 0700 (a predictable name under the shared temporary directory could
/// be planted beforehand as a link by another local user), removed when the server exits.
#[cfg(unix)]
#[tokio::test]
async fn the_example_servers_scratch_workspace_is_private() {
    use std::os::unix::fs::PermissionsExt;
    use tokio::io::AsyncBufReadExt;
    let binary = example_binary().expect("target/<profile>/examples/mcp_server is missing");
    let mut child = tokio::process::Command::new(binary)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut stderr = tokio::io::BufReader::new(child.stderr.take().unwrap()).lines();
    let line = tokio::time::timeout(std::time::Duration::from_secs(30), stderr.next_line())
        .await
        .expect("the server says where its workspace is")
        .unwrap()
        .unwrap();
    let dir = std::path::PathBuf::from(
        line.strip_prefix("mcp_server: workspace ")
            .unwrap_or_else(|| panic!("unexpected first line: {line}")),
    );
    let name = dir.file_name().unwrap().to_string_lossy().into_owned();
    assert!(name.starts_with("dsh-tools-mcp-"), "{name}");
    assert_ne!(name, format!("dsh-tools-mcp-{}", child.id().unwrap()));
    let meta = std::fs::symlink_metadata(&dir).unwrap();
    assert!(meta.is_dir(), "a real directory, not a link");
    assert_eq!(meta.permissions().mode() & 0o777, 0o700);
    assert!(dir.join("README.md").is_file());
    // Closing stdin ends the stdio session (before `initialize`: the server exits with an
    // error); the scratch directory goes with the server either way.
    drop(child.stdin.take());
    tokio::time::timeout(std::time::Duration::from_secs(30), child.wait())
        .await
        .expect("the server exits when its stdin closes")
        .unwrap();
    assert!(!dir.exists(), "{} is left behind", dir.display());
}

/// `[[[…0…]]]`, `depth` levels, built without recursion.
fn deep_array(depth: usize) -> Value {
    let mut v = json!(0);
    for _ in 0..depth {
        v = Value::Array(vec![v]);
    }
    v
}

/// A tool's output 100,000 levels deep (JSON fetched from the web, say), and a card 10,000 deep:
/// the server answers on a tokio worker's 2 MiB stack, fails the deep value as
/// `INVALID_TOOL_OUTPUT` instead of sending a message no client can parse, cuts the card, and
/// keeps serving.
#[test]
fn deep_results_and_cards_do_not_take_the_server_down() {
    use dsh_tools::{OutputDecl, ToolDefinition};
    use support::{ERAS, call, connect, texts};
    std::thread::Builder::new()
        .stack_size(2 * 1024 * 1024)
        .spawn(|| {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap();
            runtime.block_on(async {
                let registry = Registry::new();
                let deep = ToolDefinition::new(
                    "deep",
                    "returns deep JSON",
                    json!({"type": "object"}),
                    OutputDecl::json(json!({})),
                    |_, _| async { Ok(deep_array(100_000)) },
                );
                let carded = ToolDefinition::new(
                    "carded",
                    "a deep card",
                    json!({"type": "object"}),
                    OutputDecl::json(json!({})).presentation_meta(|_, _| {
                        // Built in place: `json!` would copy the deep part recursively.
                        let mut card = serde_json::Map::new();
                        card.insert("kind".into(), json!("generic"));
                        card.insert("raw".into(), deep_array(10_000));
                        Value::Object(card)
                    }),
                    |_, _| async { Ok(json!({"ok": true})) },
                );
                registry.register(deep).unwrap().keep();
                registry.register(carded).unwrap().keep();
                for era in ERAS {
                    let (client, _) = connect(McpServer::new(registry.clone()), era).await;
                    let failed = client.call_tool(call("deep", json!({}))).await.unwrap();
                    assert_eq!(failed.is_error, Some(true), "{era:?}");
                    let text = texts(&failed).join("");
                    assert!(text.contains("deeper than 120 levels"), "{era:?}: {text}");
                    let meta = failed
                        .meta
                        .as_ref()
                        .expect("the error code travels in _meta");
                    assert_eq!(
                        meta.0["dev.dsh-tools/error"]["code"], "INVALID_TOOL_OUTPUT",
                        "{era:?}"
                    );
                    let ok = client.call_tool(call("carded", json!({}))).await.unwrap();
                    assert_ne!(ok.is_error, Some(true), "{era:?}: {:?}", texts(&ok));
                    let card = &ok.meta.as_ref().unwrap().0["dev.dsh-tools/presentation"];
                    assert_eq!(card["kind"], "generic");
                    // Still serving.
                    let again = client.call_tool(call("carded", json!({}))).await.unwrap();
                    assert_ne!(again.is_error, Some(true));
                    drop(failed);
                    drop(ok);
                    drop(again);
                    let _ = client.cancel().await;
                }
            });
        })
        .unwrap()
        .join()
        .expect("the server ran out of stack or panicked");
}

#[tokio::test]
async fn a_server_that_logs_bytes_that_are_not_utf8_keeps_running() {
    let binary = example_binary().expect("target/<profile>/examples/mcp_server is missing");
    let root = std::env::temp_dir().join(format!("dsh-mcp-stderr-{}", std::process::id()));
    std::fs::create_dir_all(&root).unwrap();
    // A Latin-1 file name in a log line, then more log than a pipe buffers (64 KiB): only a
    // reader that is still reading lets it through; a reader that stopped closed the pipe,
    // the write fails and the shell exits before the server starts.
    let script = r#"printf 'opened caf\351.txt\n' >&2; head -c 300000 /dev/zero | tr '\0' x >&2 || exit 7; printf '\nstill here\n' >&2 || exit 7; exec "$0" --root "$1""#;
    let mut command = tokio::process::Command::new("sh");
    command.arg("-c").arg(script).arg(&binary).arg(&root);
    let server = McpImport::connect_stdio(command)
        .await
        .expect("the server outlived its own log line");
    let local = Registry::new();
    let _imported = server
        .import_into(&local, ImportOptions::default())
        .await
        .unwrap();
    let input =
        ToolExecutionInput::new("c", "echo", json!({"text": "hi"}), CancellationToken::new());
    let echoed = local.execute(input).await;
    assert!(!echoed.is_error(), "{}", echoed.text());
    let _ = std::fs::remove_dir_all(&root);
}

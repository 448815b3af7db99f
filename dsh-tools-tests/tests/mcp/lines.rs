//! `McpServer::serve_io` (what `serve_stdio` runs): an answer for every line rmcp would drop,
//! backpressure against a client that never reads, results too large for any client, and the
//! example server over a real pipe under 600 reads of a FIFO.

use dsh_tools::mcp::{ImportOptions, MAX_IN_FLIGHT, McpImport, McpServer};
use dsh_tools::{CancellationToken, OutputDecl, Registry, ToolDefinition, ToolExecutionInput};
use serde_json::{Value, json};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

fn registry(calls: &Arc<AtomicUsize>) -> Registry {
    let registry = Registry::new();
    let counted = Arc::clone(calls);
    registry
        .register(ToolDefinition::new(
            "big",
            "returns `kb` kilobytes of text",
            json!({"type": "object", "properties": {"kb": {"type": "integer"}}, "required": ["kb"]}),
            OutputDecl::text(),
            move |args, _| {
                counted.fetch_add(1, Ordering::SeqCst);
                let kb = args["kb"].as_u64().unwrap_or(0) as usize;
                async move { Ok(json!("x".repeat(kb * 1024))) }
            },
        ))
        .unwrap()
        .keep();
    registry
}

/// A raw client of `serve_io` over in-process pipes of `buffer` bytes.
async fn start(
    registry: Registry,
    buffer: usize,
) -> (
    tokio::io::WriteHalf<tokio::io::DuplexStream>,
    tokio::io::Lines<BufReader<tokio::io::ReadHalf<tokio::io::DuplexStream>>>,
) {
    let (a, b) = tokio::io::duplex(buffer);
    let (server_read, server_write) = tokio::io::split(a);
    tokio::spawn(McpServer::new(registry).serve_io(server_read, server_write));
    let (read, mut write) = tokio::io::split(b);
    let mut lines = BufReader::new(read).lines();
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "raw", "version": "1"}}});
    write
        .write_all(format!("{init}\n").as_bytes())
        .await
        .unwrap();
    let answer: Value = serde_json::from_str(&lines.next_line().await.unwrap().unwrap()).unwrap();
    assert_eq!(answer["id"], 0);
    write
        .write_all(b"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n")
        .await
        .unwrap();
    (write, lines)
}

async fn next(
    lines: &mut tokio::io::Lines<BufReader<tokio::io::ReadHalf<tokio::io::DuplexStream>>>,
) -> Value {
    let line = tokio::time::timeout(Duration::from_secs(30), lines.next_line())
        .await
        .expect("an answer")
        .unwrap()
        .expect("the server is still there");
    serde_json::from_str(&line).unwrap()
}

#[tokio::test]
async fn every_line_rmcp_would_drop_gets_an_answer() {
    let calls = Arc::new(AtomicUsize::new(0));
    let (mut write, mut lines) = start(registry(&calls), 1 << 20).await;
    let sent = [
        "{not json".to_owned(),
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"big","arguments":[1]}}"#
            .to_owned(),
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{"cursor":"forged"}}"#.to_owned(),
        format!(
            r#"{{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{{"name":"big","arguments":{{"kb":{}1{}}}}}}}"#,
            "[".repeat(5000),
            "]".repeat(5000)
        ),
        r#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"big","arguments":{"kb":1}}}"#
            .to_owned(),
    ];
    for line in &sent {
        write
            .write_all(format!("{line}\n").as_bytes())
            .await
            .unwrap();
    }
    let mut answers = Vec::new();
    for _ in 0..sent.len() {
        answers.push(next(&mut lines).await);
    }
    let by_id = |id: Value| answers.iter().find(|a| a["id"] == id).cloned().unwrap();
    assert_eq!(by_id(Value::Null)["error"]["code"], -32700);
    assert_eq!(
        by_id(json!(1))["error"]["code"],
        -32602,
        "arguments not an object"
    );
    let cursor = by_id(json!(2));
    assert_eq!(cursor["error"]["code"], -32602, "{cursor}");
    assert!(
        cursor["error"]["message"]
            .as_str()
            .unwrap()
            .contains("forged")
    );
    assert_eq!(by_id(json!(3))["error"]["code"], -32600, "too deep");
    assert_eq!(
        by_id(json!(4))["result"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .len(),
        1024
    );
    assert_eq!(calls.load(Ordering::SeqCst), 1, "only the good call ran");
}

#[tokio::test]
async fn a_client_that_never_reads_is_not_read_either() {
    let calls = Arc::new(AtomicUsize::new(0));
    let (mut write, mut lines) = start(registry(&calls), 64 * 1024).await;
    const SENT: usize = 600;
    let writer = tokio::spawn(async move {
        for id in 1..=SENT {
            // 2 KB requests: the pipes' buffers cannot hold them all.
            let call = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                "params": {"name": "big", "arguments": {"kb": 100, "pad": "p".repeat(2048)}}});
            write
                .write_all(format!("{call}\n").as_bytes())
                .await
                .unwrap();
        }
        write
    });
    // Nobody reads: the server answers what fits in the pipe and then stops reading.
    let mut last = 0;
    for _ in 0..100 {
        tokio::time::sleep(Duration::from_millis(20)).await;
        let now = calls.load(Ordering::SeqCst);
        if now == last && now > 0 {
            break;
        }
        last = now;
    }
    tokio::time::sleep(Duration::from_millis(200)).await;
    let ran = calls.load(Ordering::SeqCst);
    assert!(
        ran <= MAX_IN_FLIGHT + 2,
        "{ran} calls ran for a client that read nothing (at most {MAX_IN_FLIGHT} in flight)"
    );
    assert!(!writer.is_finished(), "the client's writes are held back");
    // Reading again lets everything through, in full.
    let mut answered = 0;
    while answered < SENT {
        let answer = next(&mut lines).await;
        assert_eq!(
            answer["result"]["content"][0]["text"]
                .as_str()
                .unwrap()
                .len(),
            100 * 1024
        );
        answered += 1;
    }
    writer.await.unwrap();
    assert_eq!(calls.load(Ordering::SeqCst), SENT);
}

#[tokio::test]
async fn a_result_no_client_can_read_fails_as_invalid_tool_output() {
    let calls = Arc::new(AtomicUsize::new(0));
    let (mut write, mut lines) = start(registry(&calls), 1 << 20).await;
    let call = |id: u64, kb: u64| {
        json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": "big", "arguments": {"kb": kb}}})
    };
    write
        .write_all(format!("{}\n", call(1, 20 * 1024)).as_bytes())
        .await
        .unwrap();
    let answer = next(&mut lines).await;
    assert_eq!(answer["result"]["isError"], true);
    assert_eq!(
        answer["result"]["_meta"]["dev.dsh-tools/error"]["code"],
        "INVALID_TOOL_OUTPUT"
    );
    let text = answer["result"]["content"][0]["text"].as_str().unwrap();
    assert!(text.contains("more than MCP clients read"), "{text}");
    write
        .write_all(format!("{}\n", call(2, 1)).as_bytes())
        .await
        .unwrap();
    assert_eq!(
        next(&mut lines).await["result"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .len(),
        1024
    );
}

fn example_binary() -> std::path::PathBuf {
    let test_exe = std::env::current_exe().unwrap();
    let binary = test_exe
        .parent()
        .unwrap()
        .parent()
        .unwrap()
        .join("examples")
        .join("mcp_server");
    assert!(
        binary.exists(),
        "target/<profile>/examples/mcp_server is missing: run the workspace tests"
    );
    binary
}

/// 600 reads of a FIFO at once used to take every thread of tokio's blocking pool, which the
/// stdio transport also read through: the server never answered again.
#[cfg(unix)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_example_server_answers_after_600_reads_of_a_fifo() {
    let root = std::env::temp_dir().join(format!("dsh-mcp-fifo-{}", std::process::id()));
    std::fs::create_dir_all(&root).unwrap();
    let fifo = root.join("pipe");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(made.success());
    let mut command = tokio::process::Command::new(example_binary());
    command.arg("--root").arg(&root);
    let server = McpImport::connect_stdio(command).await.unwrap();
    let local = Registry::new();
    let _imported = server
        .import_into(&local, ImportOptions::default())
        .await
        .unwrap();
    let run = |name: &'static str, args: Value| {
        let local = local.clone();
        async move {
            let input = ToolExecutionInput::new("c", name, args, CancellationToken::new());
            local.execute(input).await
        }
    };
    let reads: Vec<_> = (0..600)
        .map(|_| tokio::spawn(run("read_file", json!({"path": "pipe"}))))
        .collect();
    for read in reads {
        let result = tokio::time::timeout(Duration::from_secs(60), read)
            .await
            .unwrap()
            .unwrap();
        assert_eq!(
            result.code(),
            Some("NOT_A_REGULAR_FILE"),
            "{}",
            result.text()
        );
    }
    let echo = tokio::time::timeout(
        Duration::from_secs(30),
        run("echo", json!({"text": "still here"})),
    )
    .await
    .expect("the server still answers");
    assert!(echo.text().contains("still here"), "{}", echo.text());
    let _ = std::fs::remove_dir_all(&root);
}

#[tokio::test]
async fn progress_for_a_slow_client_keeps_the_latest_reports_only() {
    let registry = Registry::new();
    registry
        .register(ToolDefinition::new(
            "chatty",
            "reports progress a million times without yielding",
            json!({"type": "object"}),
            OutputDecl::text(),
            |_, ctx| async move {
                for i in 0..1_000_000u32 {
                    ctx.report_progress(f64::from(i), Some(1e6), None);
                }
                Ok(json!("done"))
            },
        ))
        .unwrap()
        .keep();
    let (mut write, mut lines) = start(registry, 1 << 20).await;
    let call = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "chatty", "arguments": {}, "_meta": {"progressToken": "p"}}});
    write
        .write_all(format!("{call}\n").as_bytes())
        .await
        .unwrap();
    let mut seen = Vec::new();
    let response = loop {
        let message = next(&mut lines).await;
        if message["method"] == "notifications/progress" {
            seen.push(message["params"]["progress"].as_f64().unwrap());
        } else {
            break message;
        }
    };
    assert_eq!(response["result"]["content"][0]["text"], "done");
    assert!(
        seen.len() <= dsh_tools::mcp::MAX_PENDING_PROGRESS + 1,
        "{} reports were queued for one call",
        seen.len()
    );
    assert_eq!(
        seen.last(),
        Some(&999_999.0),
        "the latest report goes out before the answer"
    );
    assert!(seen.windows(2).all(|w| w[0] < w[1]), "in order");
}

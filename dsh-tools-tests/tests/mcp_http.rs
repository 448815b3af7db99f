//! The streamable HTTP server over a real loopback socket.

#[path = "mcp/support.rs"]
mod support;

use dsh_tools::mcp::{HttpConfig, McpServer};
use serde_json::{Value, json};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::sync::Arc;
use std::time::{Duration, Instant};
use support::{Probe, registry};

/// A keep-alive HTTP/1.1 client on a plain socket, as most MCP clients are (Nagle's algorithm
/// on, nothing sent while an answer arrives).
struct RawHttp {
    stream: TcpStream,
    host: String,
    session: Option<String>,
}

impl RawHttp {
    fn connect(addr: std::net::SocketAddr) -> Self {
        let stream = TcpStream::connect(addr).unwrap();
        stream
            .set_read_timeout(Some(Duration::from_secs(20)))
            .unwrap();
        Self {
            stream,
            host: addr.to_string(),
            session: None,
        }
    }

    /// POSTs one JSON-RPC message and reads the whole answer (an SSE stream, chunked, to its
    /// last chunk; or a plain body).
    fn post(&mut self, message: &Value) -> String {
        let body = message.to_string();
        let mut head = format!(
            "POST /mcp HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\n\
             Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2025-11-25\r\n\
             Content-Length: {}\r\n",
            self.host,
            body.len()
        );
        if let Some(session) = &self.session {
            head.push_str(&format!("Mcp-Session-Id: {session}\r\n"));
        }
        head.push_str("\r\n");
        // One write: a second small write would wait for the server's delayed ACK here.
        head.push_str(&body);
        self.stream.write_all(head.as_bytes()).unwrap();
        let mut buffer = Vec::new();
        let mut chunk = [0u8; 8192];
        loop {
            let n = self.stream.read(&mut chunk).expect("the answer arrives");
            assert!(n > 0, "the server closed the connection");
            buffer.extend_from_slice(&chunk[..n]);
            let text = String::from_utf8_lossy(&buffer);
            let Some((head, rest)) = text.split_once("\r\n\r\n") else {
                continue;
            };
            let lower = head.to_ascii_lowercase();
            if let Some(line) = lower.lines().find(|l| l.starts_with("mcp-session-id:")) {
                let start = head.len() - lower.len() + lower.find(line).unwrap();
                let value = &head[start + "mcp-session-id:".len()..start + line.len()];
                self.session = Some(value.trim().to_owned());
            }
            let done = if lower.contains("transfer-encoding: chunked") {
                rest.ends_with("0\r\n\r\n")
            } else if let Some(line) = lower.lines().find(|l| l.starts_with("content-length:")) {
                let length: usize = line["content-length:".len()..].trim().parse().unwrap();
                rest.len() >= length
            } else {
                false
            };
            if done {
                return rest.to_owned();
            }
        }
    }
}

/// Every answer leaves at once. Without `TCP_NODELAY` on accepted connections, rmcp's later
/// writes of an SSE answer wait for the client's delayed ACK: about 44 ms per call on Linux
/// (seen with this client and with the Python and TypeScript SDKs; rmcp's own client happens
/// not to trigger it). The median of 50 sequential calls is compared with 20 ms, under half the
/// stall: a call takes a few milliseconds in a debug build, and the median ignores the odd call
/// slowed by a busy machine.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http_calls_do_not_wait_for_a_delayed_ack() {
    let probe = Arc::new(Probe::default());
    let server = McpServer::new(registry(&probe))
        .bind_http("127.0.0.1:0", HttpConfig::default())
        .await
        .unwrap();
    let addr = server.local_addr();
    let stop = server.shutdown_token();
    let running = tokio::spawn(server.run());

    let took = tokio::task::spawn_blocking(move || {
        let mut client = RawHttp::connect(addr);
        let init = client.post(&json!({"jsonrpc": "2.0", "id": 0, "method": "initialize",
            "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                       "clientInfo": {"name": "raw", "version": "1"}}}));
        assert!(init.contains("serverInfo"), "{init}");
        assert!(client.session.is_some(), "no Mcp-Session-Id header");
        client.post(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        let mut took = Vec::new();
        for i in 1..=50 {
            let start = Instant::now();
            let answer = client.post(&json!({"jsonrpc": "2.0", "id": i, "method": "tools/call",
                "params": {"name": "add", "arguments": {"a": i, "b": 1}}}));
            took.push(start.elapsed());
            assert!(
                answer.contains(&format!("\"text\":\"{}\"", i + 1)),
                "{answer}"
            );
        }
        took
    })
    .await
    .unwrap();
    let mut sorted = took.clone();
    sorted.sort();
    let median = sorted[sorted.len() / 2];
    assert!(
        median < Duration::from_millis(20),
        "the median call over HTTP took {median:?} (all: {took:?}): TCP_NODELAY missing?"
    );
    stop.cancel();
    running.await.unwrap().unwrap();
}

/// A request with two `Host` headers is refused: the DNS-rebinding check reads one of them, and
/// a proxy in front may route by the other.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_host_headers_are_refused() {
    let probe = Arc::new(Probe::default());
    let server = McpServer::new(registry(&probe))
        .bind_http("127.0.0.1:0", HttpConfig::default())
        .await
        .unwrap();
    let addr = server.local_addr();
    let stop = server.shutdown_token();
    let running = tokio::spawn(server.run());
    let answer = tokio::task::spawn_blocking(move || {
        let mut stream = TcpStream::connect(addr).unwrap();
        stream
            .set_read_timeout(Some(Duration::from_secs(20)))
            .unwrap();
        let body = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize",
            "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                       "clientInfo": {"name": "raw", "version": "1"}}})
        .to_string();
        let request = format!(
            "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nHost: evil.example\r\n\
             Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n\
             Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        );
        stream.write_all(request.as_bytes()).unwrap();
        let mut answer = String::new();
        let _ = stream.read_to_string(&mut answer);
        answer
    })
    .await
    .unwrap();
    assert!(answer.starts_with("HTTP/1.1 400"), "{answer}");
    assert!(answer.contains("more than one Host header"), "{answer}");
    stop.cancel();
    running.await.unwrap().unwrap();
}

//! The streamable HTTP server over a real loopback socket.

use crate::support;

use dsh_tools::mcp::{HttpConfig, McpServer};
use serde_json::{Value, json};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::sync::Arc;
use std::time::{Duration, Instant};
use support::{MemoryStore, Probe, registry};

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

/// Sends one bodiless request on a connection of its own (`Connection: close`) and returns the
/// status code and the body.
fn one_shot(addr: std::net::SocketAddr, method: &str, session: Option<&str>) -> (u16, String) {
    let (status, _, body) = send(addr, addr, session, method, None);
    (status, body)
}

/// `DELETE` ends a session with `204` (rmcp answers `202`, which Python's client logs as a
/// failed termination); a session this server does not hold, or no longer holds, is `404`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn delete_answers_204_for_a_session_and_404_for_an_unknown_one() {
    let probe = Arc::new(Probe::default());
    let server = McpServer::new(registry(&probe))
        .bind_http("127.0.0.1:0", HttpConfig::default())
        .await
        .unwrap();
    let addr = server.local_addr();
    let stop = server.shutdown_token();
    let running = tokio::spawn(server.run());
    tokio::task::spawn_blocking(move || {
        let mut client = RawHttp::connect(addr);
        client.post(&json!({"jsonrpc": "2.0", "id": 0, "method": "initialize",
            "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                       "clientInfo": {"name": "raw", "version": "1"}}}));
        let session = client.session.clone().expect("a session id");
        assert_eq!(one_shot(addr, "DELETE", Some("not-a-session")).0, 404);
        assert_eq!(
            one_shot(addr, "DELETE", Some(&session)),
            (204, String::new())
        );
        // Gone: a second DELETE, and a request in it, find no session.
        let (status, body) = one_shot(addr, "DELETE", Some(&session));
        assert_eq!((status, body.as_str()), (404, "session not found"));
        // Without a session header rmcp's own answer stands.
        assert_eq!(one_shot(addr, "DELETE", None).0, 400);
    })
    .await
    .unwrap();
    stop.cancel();
    running.await.unwrap().unwrap();
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

/// Serves `registry(probe)` with `config` on a free loopback port.
async fn serve(
    probe: &Arc<Probe>,
    config: HttpConfig,
) -> (
    std::net::SocketAddr,
    tokio_util::sync::CancellationToken,
    tokio::task::JoinHandle<std::io::Result<()>>,
) {
    let server = McpServer::new(registry(probe))
        .bind_http("127.0.0.1:0", config)
        .await
        .unwrap();
    let addr = server.local_addr();
    let stop = server.shutdown_token();
    (addr, stop, tokio::spawn(server.run()))
}

/// Writes `request` on a connection of its own and reads the answer to its end (the server
/// closes): the status and the body.
fn exchange(addr: std::net::SocketAddr, request: &str) -> (u16, String) {
    let (status, _, body) = exchange_parts(addr, request);
    (status, body)
}

/// [`exchange`], with the answer's head too.
fn exchange_parts(addr: std::net::SocketAddr, request: &str) -> (u16, String, String) {
    support::exchange(addr, request)
}

fn initialize(addr: std::net::SocketAddr) -> (u16, String) {
    let body = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                   "clientInfo": {"name": "raw", "version": "1"}}})
    .to_string();
    exchange(
        addr,
        &format!(
            "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n\
             Accept: application/json, text/event-stream\r\nConnection: close\r\n\
             Content-Length: {}\r\n\r\n{body}",
            body.len()
        ),
    )
}

/// A body declared over the limit is refused from its `Content-Length`, none of it sent.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_oversized_body_is_413_before_it_is_read() {
    let probe = Arc::new(Probe::default());
    let (addr, stop, running) = serve(&probe, HttpConfig::default()).await;
    let answer = tokio::task::spawn_blocking(move || {
        exchange(
            addr,
            &format!(
                "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n\
                 Accept: application/json, text/event-stream\r\nConnection: close\r\n\
                 Content-Length: 100000000\r\n\r\n"
            ),
        )
    })
    .await
    .unwrap();
    assert_eq!(
        answer,
        (
            413,
            "request body too large (the limit is 4194304 bytes)".to_owned()
        )
    );
    stop.cancel();
    running.await.unwrap().unwrap();
}

/// Past the session cap an `initialize` is `503`, and the cap frees up when a session ends.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sessions_past_the_cap_are_refused() {
    let probe = Arc::new(Probe::default());
    let (addr, stop, running) = serve(&probe, HttpConfig::default().max_sessions(2)).await;
    tokio::task::spawn_blocking(move || {
        let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize",
            "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                       "clientInfo": {"name": "raw", "version": "1"}}});
        let (status, first, _) = send(addr, addr, None, "POST", Some(&init));
        assert_eq!(status, 200);
        assert_eq!(initialize(addr).0, 200);
        assert_eq!(initialize(addr), (503, "too many sessions".to_owned()));
        let first = first.expect("a session id");
        assert_eq!(send(addr, addr, Some(&first), "DELETE", None).0, 204);
        assert_eq!(initialize(addr).0, 200);
    })
    .await
    .unwrap();
    stop.cancel();
    running.await.unwrap().unwrap();
}

/// A client that never finishes its headers is disconnected at the header deadline, and
/// connections past the limit get `503` at once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slow_headers_are_cut_off_and_connections_are_limited() {
    let probe = Arc::new(Probe::default());
    let config = HttpConfig::default()
        .header_read_timeout(Duration::from_millis(200))
        .max_connections(2);
    let (addr, stop, running) = serve(&probe, config).await;
    tokio::task::spawn_blocking(move || {
        // Two slowloris connections hold both places...
        let mut slow: Vec<TcpStream> = (0..2)
            .map(|_| {
                let mut s = TcpStream::connect(addr).unwrap();
                s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
                s.write_all(b"POST /mcp HTTP/1.1\r\nHost: ").unwrap();
                s
            })
            .collect();
        // ...so a third is refused (the accept loop may not have taken both yet: retry).
        let mut refused = (0, String::new());
        for _ in 0..50 {
            refused = initialize(addr);
            if refused.0 == 503 {
                break;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        assert_eq!(refused, (503, "too many connections".to_owned()));
        // The deadline closes them: the server ends each (EOF or a 408), never waits forever.
        for s in &mut slow {
            let mut rest = Vec::new();
            let read = s.read_to_end(&mut rest);
            assert!(read.is_ok(), "{read:?}");
            let text = String::from_utf8_lossy(&rest);
            assert!(
                text.is_empty() || text.starts_with("HTTP/1.1 408"),
                "{text}"
            );
        }
        // And their places are free again.
        let mut served = (0, String::new());
        for _ in 0..50 {
            served = initialize(addr);
            if served.0 == 200 {
                break;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        assert_eq!(served.0, 200, "{served:?}");
    })
    .await
    .unwrap();
    stop.cancel();
    running.await.unwrap().unwrap();
}

/// Past the in-flight limit a request is `503`; an answer streamed over SSE counts until its
/// stream ends (here: the client goes away).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn requests_past_the_in_flight_limit_are_refused() {
    let probe = Arc::new(Probe::default());
    let (addr, stop, running) =
        serve(&probe, HttpConfig::default().max_requests_in_flight(2)).await;
    let started = Arc::clone(&probe);
    tokio::task::spawn_blocking(move || {
        let mut client = RawHttp::connect(addr);
        client.post(&json!({"jsonrpc": "2.0", "id": 0, "method": "initialize",
            "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                       "clientInfo": {"name": "raw", "version": "1"}}}));
        client.post(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        let session = client.session.clone().unwrap();
        // Two slow calls hold both places while their streams stay open.
        let call = |id: u32| {
            let body = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                "params": {"name": "slow", "arguments": {}}})
            .to_string();
            let mut s = TcpStream::connect(addr).unwrap();
            s.write_all(
                format!(
                    "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n\
                     Accept: application/json, text/event-stream\r\n\
                     MCP-Protocol-Version: 2025-11-25\r\nMcp-Session-Id: {session}\r\n\
                     Content-Length: {}\r\n\r\n{body}",
                    body.len()
                )
                .as_bytes(),
            )
            .unwrap();
            s
        };
        // The session's standalone GET stream stays open and does not count.
        let mut listen = TcpStream::connect(addr).unwrap();
        listen
            .write_all(
                format!(
                    "GET /mcp HTTP/1.1\r\nHost: {addr}\r\nAccept: text/event-stream\r\n\
                     MCP-Protocol-Version: 2025-11-25\r\nMcp-Session-Id: {session}\r\n\r\n"
                )
                .as_bytes(),
            )
            .unwrap();
        let held: Vec<TcpStream> = vec![call(1), call(2)];
        for _ in 0..500 {
            if started.started.load(std::sync::atomic::Ordering::SeqCst) >= 2 {
                break;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        assert_eq!(
            initialize(addr),
            (503, "too many requests in flight".to_owned())
        );
        drop(held);
        drop(listen);
        let mut served = (0, String::new());
        for _ in 0..100 {
            served = initialize(addr);
            if served.0 == 200 {
                break;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        assert_eq!(served.0, 200, "{served:?}");
    })
    .await
    .unwrap();
    stop.cancel();
    running.await.unwrap().unwrap();
}

/// A round-robin TCP proxy over `upstreams`: each connection goes to the next one, no affinity.
async fn round_robin(upstreams: Vec<std::net::SocketAddr>) -> std::net::SocketAddr {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        let mut next = 0usize;
        while let Ok((mut client, _)) = listener.accept().await {
            let upstream = upstreams[next % upstreams.len()];
            next += 1;
            tokio::spawn(async move {
                if let Ok(mut server) = tokio::net::TcpStream::connect(upstream).await {
                    let _ = tokio::io::copy_bidirectional(&mut client, &mut server).await;
                }
            });
        }
    });
    addr
}

/// One JSON-RPC message over its own connection (so the proxy sends it to the next instance):
/// the status, the session id the answer carries, and the body.
fn send(
    proxy: std::net::SocketAddr,
    host: std::net::SocketAddr,
    session: Option<&str>,
    method: &str,
    message: Option<&Value>,
) -> (u16, Option<String>, String) {
    let body = message.map(Value::to_string).unwrap_or_default();
    let mut head = format!(
        "{method} /mcp HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2025-11-25\r\n\
         Connection: close\r\nContent-Length: {}\r\n",
        body.len()
    );
    if let Some(session) = session {
        head.push_str(&format!("Mcp-Session-Id: {session}\r\n"));
    }
    let (status, head, body) = exchange_parts(proxy, &format!("{head}\r\n{body}"));
    let session = head.lines().find_map(|line| {
        let (name, value) = line.split_once(':')?;
        name.eq_ignore_ascii_case("mcp-session-id")
            .then(|| value.trim().to_owned())
    });
    (status, session, body)
}

/// Two instances behind a round-robin proxy: with a shared session store every request of a
/// 2025-11-25 session is served whichever instance it lands on; without one, the second
/// instance does not know the session.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_instances_behind_a_round_robin_proxy_share_sessions_through_a_store() {
    for shared in [true, false] {
        let probe = Arc::new(Probe::default());
        let store: Arc<MemoryStore> = Arc::default();
        let config = || {
            let config = HttpConfig::default();
            if shared {
                config.session_store(store.clone())
            } else {
                config
            }
        };
        let (a, stop_a, run_a) = serve(&probe, config()).await;
        let (b, stop_b, run_b) = serve(&probe, config()).await;
        let proxy = round_robin(vec![a, b]).await;
        // The Host the instances check is the proxy's (loopback, allowed).
        tokio::task::spawn_blocking(move || {
            let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize",
                "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                           "clientInfo": {"name": "raw", "version": "1"}}});
            let (status, session, _) = send(proxy, proxy, None, "POST", Some(&init));
            assert_eq!(status, 200);
            let session = session.expect("a session id");
            let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
            let (status, _, body) = send(proxy, proxy, Some(&session), "POST", Some(&initialized));
            if !shared {
                // Instance B never saw the session.
                assert_eq!(status, 404, "{body}");
                return;
            }
            assert_eq!(status, 202, "{body}");
            for i in 1..=4 {
                let call = json!({"jsonrpc": "2.0", "id": i, "method": "tools/call",
                    "params": {"name": "add", "arguments": {"a": i, "b": 1}}});
                let (status, _, body) = send(proxy, proxy, Some(&session), "POST", Some(&call));
                assert_eq!(status, 200, "call {i}: {body}");
                assert!(
                    body.contains(&format!("\"text\":\"{}\"", i + 1)),
                    "call {i}: {body}"
                );
            }
            let (status, _, _) = send(proxy, proxy, Some(&session), "DELETE", None);
            assert_eq!(status, 204);
        })
        .await
        .unwrap();
        if shared {
            assert!(
                store.0.lock().unwrap().is_empty(),
                "DELETE removes the stored session"
            );
        }
        stop_a.cancel();
        stop_b.cancel();
        run_a.await.unwrap().unwrap();
        run_b.await.unwrap().unwrap();
    }
}

/// A session refused past the cap leaves nothing in the shared store for another instance to
/// restore.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_refused_past_the_cap_is_not_left_in_the_store() {
    let probe = Arc::new(Probe::default());
    let store: Arc<MemoryStore> = Arc::default();
    let config = HttpConfig::default()
        .max_sessions(1)
        .session_store(store.clone());
    let (addr, stop, running) = serve(&probe, config).await;
    tokio::task::spawn_blocking(move || {
        assert_eq!(initialize(addr).0, 200);
        assert_eq!(initialize(addr), (503, "too many sessions".to_owned()));
    })
    .await
    .unwrap();
    assert_eq!(store.0.lock().unwrap().len(), 1);
    stop.cancel();
    running.await.unwrap().unwrap();
}

/// A body that trickles in is cut off at the body deadline (`408`); a chunked body, which
/// declares no length, is refused (`413`) as soon as it passes the limit.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slow_bodies_are_408_and_unsized_bodies_over_the_limit_413() {
    let probe = Arc::new(Probe::default());
    let config = HttpConfig::default()
        .body_read_timeout(Duration::from_millis(300))
        .max_request_body_bytes(1024);
    let (addr, stop, running) = serve(&probe, config).await;
    tokio::task::spawn_blocking(move || {
        // Ten bytes of a declared hundred, then nothing.
        let (status, body) = exchange(
            addr,
            &format!(
                "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n\
                 Accept: application/json, text/event-stream\r\nConnection: close\r\n\
                 Content-Length: 100\r\n\r\n{{\"jsonrpc\""
            ),
        );
        assert_eq!(status, 408, "{body}");
        assert_eq!(body, "the request body did not arrive within 300 ms");
        let chunk = "x".repeat(2000);
        let (status, body) = exchange(
            addr,
            &format!(
                "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n\
                 Accept: application/json, text/event-stream\r\nConnection: close\r\n\
                 Transfer-Encoding: chunked\r\n\r\n{:x}\r\n{chunk}\r\n0\r\n\r\n",
                chunk.len()
            ),
        );
        assert_eq!(status, 413, "{body}");
        assert_eq!(body, "request body too large (the limit is 1024 bytes)");
        // A whole request within both still works.
        assert_eq!(initialize(addr).0, 200);
    })
    .await
    .unwrap();
    stop.cancel();
    running.await.unwrap().unwrap();
}

/// A session no request used for the idle timeout is closed: its id is then unknown (`404`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_idle_session_is_closed_after_the_idle_timeout() {
    let probe = Arc::new(Probe::default());
    let config = HttpConfig::default().session_idle_timeout(Duration::from_millis(300));
    let (addr, stop, running) = serve(&probe, config).await;
    let session = tokio::task::spawn_blocking(move || {
        let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize",
            "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                       "clientInfo": {"name": "raw", "version": "1"}}});
        let (status, session, _) = send(addr, addr, None, "POST", Some(&init));
        assert_eq!(status, 200);
        let session = session.expect("a session");
        let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        assert_eq!(
            send(addr, addr, Some(&session), "POST", Some(&initialized)).0,
            202
        );
        session
    })
    .await
    .unwrap();
    tokio::time::sleep(Duration::from_millis(1_500)).await;
    tokio::task::spawn_blocking(move || {
        let list = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"});
        let (status, _, body) = send(addr, addr, Some(&session), "POST", Some(&list));
        assert_eq!(status, 404, "the idle session is gone: {body}");
    })
    .await
    .unwrap();
    stop.cancel();
    running.await.unwrap().unwrap();
}

/// A `POST` of `body` (as `application/json` unless `content_type` says otherwise), with these
/// extra header lines: the status, the head and the body of the answer.
fn post_raw(
    addr: std::net::SocketAddr,
    content_type: &str,
    extra: &str,
    body: &str,
) -> (u16, String, String) {
    exchange_parts(
        addr,
        &format!(
            "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: {content_type}\r\n\
             Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2025-11-25\r\n\
             Connection: close\r\n{extra}Content-Length: {}\r\n\r\n{body}",
            body.len()
        ),
    )
}

/// A body that is not JSON is `400` with a JSON-RPC parse error (`-32700`, id `null`); JSON
/// that is no JSON-RPC message is `400` with `-32600` (rmcp answers both `415 Unsupported
/// Media Type`, which is about the `Content-Type`, and that one still stands).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_malformed_body_is_400_with_a_json_rpc_error() {
    let probe = Arc::new(Probe::default());
    let (addr, stop, running) = serve(&probe, HttpConfig::default()).await;
    tokio::task::spawn_blocking(move || {
        let json = "application/json";
        for (body, code, id) in [
            ("{\"jsonrpc\":", -32700, Value::Null),
            ("not json", -32700, Value::Null),
            ("", -32700, Value::Null),
            ("{\"hello\": 1}", -32600, Value::Null),
            ("[1, 2]", -32600, Value::Null),
            (
                "{\"jsonrpc\": \"2.0\", \"id\": 7, \"method\": 3}",
                -32600,
                json!(7),
            ),
        ] {
            let (status, head, answer) = post_raw(addr, json, "", body);
            assert_eq!(status, 400, "{body}: {head}\n{answer}");
            assert!(
                head.to_ascii_lowercase()
                    .contains("content-type: application/json"),
                "{body}: {head}"
            );
            let answer: Value = serde_json::from_str(&answer).expect("a JSON-RPC answer");
            assert_eq!(answer["jsonrpc"], "2.0", "{body}: {answer}");
            assert_eq!(answer["id"], id, "{body}: {answer}");
            assert_eq!(answer["error"]["code"], code, "{body}: {answer}");
        }
        // In a session too.
        let (status, session, _) = send(
            addr,
            addr,
            None,
            "POST",
            Some(&json!({"jsonrpc": "2.0", "id": 0, "method": "initialize",
                "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                           "clientInfo": {"name": "raw", "version": "1"}}})),
        );
        assert_eq!(status, 200);
        let extra = format!("Mcp-Session-Id: {}\r\n", session.expect("a session"));
        let (status, _, answer) = post_raw(addr, json, &extra, "{\"jsonrpc\":");
        assert_eq!(status, 400, "{answer}");
        // The wrong media type is still rmcp's 415, whatever the body.
        let good = "{\"jsonrpc\": \"2.0\", \"id\": 1, \"method\": \"ping\"}";
        for body in [good, "not json"] {
            let (status, _, answer) = post_raw(addr, "text/plain", "", body);
            assert_eq!(status, 415, "{body}: {answer}");
        }
        // A good message is still served.
        let (status, _, answer) = post_raw(addr, json, &extra, good);
        assert_eq!(status, 200, "{answer}");
    })
    .await
    .unwrap();
    stop.cancel();
    running.await.unwrap().unwrap();
}

/// A request names one session: two `Mcp-Session-Id` headers (which one the server used and
/// which one a proxy or log saw is anyone's guess), or one that is not visible ASCII, are `400`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_session_id_headers_are_refused() {
    let probe = Arc::new(Probe::default());
    let (addr, stop, running) = serve(&probe, HttpConfig::default()).await;
    tokio::task::spawn_blocking(move || {
        let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize",
            "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                       "clientInfo": {"name": "raw", "version": "1"}}});
        let (status, session, _) = send(addr, addr, None, "POST", Some(&init));
        assert_eq!(status, 200);
        let session = session.expect("a session");
        let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        assert_eq!(
            send(addr, addr, Some(&session), "POST", Some(&initialized)).0,
            202
        );
        let list = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}).to_string();
        let json = "application/json";
        for extra in [
            format!("Mcp-Session-Id: {session}\r\nMcp-Session-Id: other\r\n"),
            format!("Mcp-Session-Id: other\r\nMcp-Session-Id: {session}\r\n"),
            format!("Mcp-Session-Id: {session}\r\nMcp-Session-Id: {session}\r\n"),
        ] {
            let (status, _, answer) = post_raw(addr, json, &extra, &list);
            assert_eq!(
                (status, answer.as_str()),
                (400, "more than one Mcp-Session-Id header"),
                "{extra}"
            );
        }
        // Not visible ASCII: rmcp would read no session at all, and open a new one.
        let init = init.to_string();
        let (status, _, answer) = post_raw(addr, json, "Mcp-Session-Id: s\u{e9}ance\r\n", &init);
        assert_eq!(
            (status, answer.as_str()),
            (400, "the Mcp-Session-Id header is not visible ASCII")
        );
        // DELETE and GET alike.
        for method in ["DELETE", "GET"] {
            let (status, _, answer) = exchange_parts(
                addr,
                &format!(
                    "{method} /mcp HTTP/1.1\r\nHost: {addr}\r\n\
                     Accept: application/json, text/event-stream\r\n\
                     MCP-Protocol-Version: 2025-11-25\r\nMcp-Session-Id: {session}\r\n\
                     Mcp-Session-Id: other\r\nConnection: close\r\n\r\n"
                ),
            );
            assert_eq!(status, 400, "{method}: {answer}");
        }
        // One header: served.
        let extra = format!("Mcp-Session-Id: {session}\r\n");
        let (status, _, answer) = post_raw(addr, json, &extra, &list);
        assert_eq!(status, 200, "{answer}");
    })
    .await
    .unwrap();
    stop.cancel();
    running.await.unwrap().unwrap();
}

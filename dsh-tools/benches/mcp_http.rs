//! `mcp_http/c{1,16}/{dsh,rmcp}`: `tools/call` of the same echo tool over streamable HTTP on
//! loopback, at concurrency 1 and 16 (that many keep-alive connections, one 2025-11-25 session
//! each, every connection making its calls one after another). `dsh` is `McpServer::bind_http`
//! (every limit of `HttpConfig` on, defaults); `rmcp` is a plain rmcp 3.11 `#[tool_router]`
//! server behind rmcp's `StreamableHttpService`, served by hyper the way rmcp's examples serve
//! it, with `TCP_NODELAY` on its sockets too. Both servers and the client run in one process
//! and one Tokio runtime (two workers), measured in the same run; the client is a minimal
//! HTTP/1.1 writer and reader, the same for both. One iteration is one call: criterion's time
//! per iteration is the inverse of throughput.
//!
//! ```text
//! cargo bench -p dsh-tools --features mcp-http --bench mcp_http
//! ```
//!
//! With `MCP_HTTP_MEMORY=1` it measures memory instead: each server runs in a child process
//! (this binary again), and its resident set (`VmRSS`) is read idle, after 10,000 calls over 16
//! connections, after 1,000 sessions opened and abandoned (no `DELETE`), and after 2,000 more
//! (past `HttpConfig`'s default cap of 1,000 for `dsh`; `rmcp` has no cap).
//!
//! With `MCP_HTTP_EXTERNAL="ts=HOST:PORT py=HOST:PORT"` it measures servers running elsewhere
//! (the official TypeScript SDK's and Python's, `benches/external/`) beside the two in-process
//! ones, with the same client: calls per second at concurrency 1 and 16, from a fixed number of
//! calls after a warm-up.

use criterion::{Criterion, criterion_group};
use dsh_tools::Registry;
use dsh_tools::mcp::{HttpConfig, McpServer};
use hyper_util::rt::TokioIo;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use serde_json::json;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::Mutex;

#[path = "common/echo.rs"]
mod echo;
use echo::{Echo, RmcpEcho};

async fn serve_dsh() -> SocketAddr {
    let registry = Registry::new();
    registry.register(Echo).unwrap();
    let server = McpServer::new(registry)
        .bind_http("127.0.0.1:0", HttpConfig::default())
        .await
        .unwrap();
    let addr = server.local_addr();
    tokio::spawn(server.run());
    addr
}

async fn serve_rmcp() -> SocketAddr {
    let service = StreamableHttpService::new(
        || Ok(RmcpEcho),
        Arc::new(LocalSessionManager::default()),
        StreamableHttpServerConfig::default(),
    );
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            stream.set_nodelay(true).unwrap();
            let service = service.clone();
            tokio::spawn(async move {
                let handler = hyper::service::service_fn(move |request| {
                    let service = service.clone();
                    async move { Ok::<_, std::convert::Infallible>(service.handle(request).await) }
                });
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), handler)
                    .await;
            });
        }
    });
    addr
}

/// One keep-alive connection with its session.
struct Conn {
    stream: TcpStream,
    host: String,
    session: Option<String>,
    buffer: Vec<u8>,
    next_id: u64,
}

impl Conn {
    async fn open(addr: SocketAddr) -> Self {
        let stream = TcpStream::connect(addr).await.unwrap();
        stream.set_nodelay(true).unwrap();
        let mut conn = Self {
            stream,
            host: addr.to_string(),
            session: None,
            buffer: Vec::with_capacity(16 * 1024),
            next_id: 1,
        };
        let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize",
            "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                       "clientInfo": {"name": "bench", "version": "1"}}});
        let (status, _) = conn.post(&init.to_string()).await;
        assert_eq!(status, 200);
        assert!(conn.session.is_some(), "no session id");
        let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        let (status, _) = conn.post(&initialized.to_string()).await;
        assert_eq!(status, 202);
        conn
    }

    async fn call(&mut self) {
        let id = self.next_id;
        self.next_id += 1;
        let body = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": "echo", "arguments": {"text": "hello", "count": 3, "flag": true}}})
        .to_string();
        let (status, answer) = self.post(&body).await;
        assert!(
            status == 200 && answer.contains("\"result\"") && answer.contains("hello"),
            "{status} {answer}"
        );
    }

    /// POSTs `body` and reads the answer to its end: the status and the body.
    async fn post(&mut self, body: &str) -> (u16, String) {
        let mut request = format!(
            "POST /mcp HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\n\
             Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2025-11-25\r\n\
             Content-Length: {}\r\n",
            self.host,
            body.len()
        );
        if let Some(session) = &self.session {
            request.push_str("Mcp-Session-Id: ");
            request.push_str(session);
            request.push_str("\r\n");
        }
        request.push_str("\r\n");
        request.push_str(body);
        self.stream.write_all(request.as_bytes()).await.unwrap();
        self.buffer.clear();
        let mut chunk = [0u8; 8192];
        loop {
            let n = self.stream.read(&mut chunk).await.unwrap();
            assert!(n > 0, "the server closed the connection");
            self.buffer.extend_from_slice(&chunk[..n]);
            let Some(end) = self.buffer.windows(4).position(|w| w == b"\r\n\r\n") else {
                continue;
            };
            let head = String::from_utf8_lossy(&self.buffer[..end]).to_ascii_lowercase();
            let rest = &self.buffer[end + 4..];
            let done = if head.contains("transfer-encoding: chunked") {
                rest.ends_with(b"0\r\n\r\n")
            } else if let Some(line) = head.lines().find(|l| l.starts_with("content-length:")) {
                let length: usize = line["content-length:".len()..].trim().parse().unwrap();
                rest.len() >= length
            } else {
                true
            };
            if !done {
                continue;
            }
            let status = head
                .split(' ')
                .nth(1)
                .and_then(|s| s.parse().ok())
                .unwrap_or(0);
            if let Some(line) = head.lines().find(|l| l.starts_with("mcp-session-id:")) {
                let start = end - head.len() + head.find(line).unwrap() + "mcp-session-id:".len();
                let raw = String::from_utf8_lossy(
                    &self.buffer[start..start + line.len() - "mcp-session-id:".len()],
                );
                self.session = Some(raw.trim().to_owned());
            }
            return (status, String::from_utf8_lossy(rest).into_owned());
        }
    }
}

/// `calls` calls spread over `conns` (each connection's share made in sequence, all
/// connections at once).
async fn run(conns: &[Arc<Mutex<Conn>>], calls: u64) -> Duration {
    let n = conns.len() as u64;
    let start = Instant::now();
    let tasks: Vec<_> = conns
        .iter()
        .enumerate()
        .map(|(i, conn)| {
            let conn = Arc::clone(conn);
            let share = calls / n + u64::from((i as u64) < calls % n);
            tokio::spawn(async move {
                let mut conn = conn.lock().await;
                for _ in 0..share {
                    conn.call().await;
                }
            })
        })
        .collect();
    for task in tasks {
        task.await.unwrap();
    }
    start.elapsed()
}

fn bench(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let (dsh, rmcp) = rt.block_on(async { (serve_dsh().await, serve_rmcp().await) });
    for concurrency in [1usize, 16] {
        let mut group = c.benchmark_group(format!("mcp_http/c{concurrency}"));
        group.sample_size(20);
        group.measurement_time(Duration::from_secs(4));
        for (name, addr) in [("dsh", dsh), ("rmcp", rmcp)] {
            let conns: Vec<Arc<Mutex<Conn>>> = rt.block_on(async {
                let mut conns = Vec::new();
                for _ in 0..concurrency {
                    conns.push(Arc::new(Mutex::new(Conn::open(addr).await)));
                }
                conns
            });
            group.bench_function(name, |b| {
                b.iter_custom(|calls| rt.block_on(run(&conns, calls)));
            });
        }
        group.finish();
    }
}

criterion_group!(benches, bench);

/// Serves one of the two in this process, printing its address, until killed.
fn serve_child(which: &str) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let addr = match which {
            "rmcp" => serve_rmcp().await,
            _ => serve_dsh().await,
        };
        println!("{addr}");
        std::future::pending::<()>().await;
    });
}

/// The resident set of `pid`, in MiB.
fn rss_mib(pid: u32) -> f64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let kib: f64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap();
    kib / 1024.0
}

fn memory() {
    use std::io::BufRead;
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    println!(
        "| server | idle | after 10,000 calls | after 1,000 abandoned sessions | after 2,000 more |"
    );
    println!("|---|---|---|---|---|");
    for which in ["dsh", "rmcp"] {
        let mut child = std::process::Command::new(std::env::current_exe().unwrap())
            .env("MCP_HTTP_SERVE", which)
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let mut line = String::new();
        std::io::BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let addr: SocketAddr = line.trim().parse().unwrap();
        let pid = child.id();
        let idle = rss_mib(pid);
        let (calls, abandoned, more) = rt.block_on(async {
            let mut conns = Vec::new();
            for _ in 0..16 {
                conns.push(Arc::new(Mutex::new(Conn::open(addr).await)));
            }
            run(&conns, 10_000).await;
            drop(conns);
            tokio::time::sleep(Duration::from_millis(200)).await;
            let calls = rss_mib(pid);
            let mut refused = 0;
            let mut abandoned = 0.0;
            for i in 0..3_000 {
                // `initialize` on a connection of its own, never closed with `DELETE`.
                let stream = TcpStream::connect(addr).await.unwrap();
                let mut conn = Conn {
                    stream,
                    host: addr.to_string(),
                    session: None,
                    buffer: Vec::new(),
                    next_id: 1,
                };
                let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize",
                    "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                               "clientInfo": {"name": "bench", "version": "1"}}});
                let (status, _) = conn.post(&init.to_string()).await;
                refused += usize::from(status == 503);
                if i == 999 {
                    tokio::time::sleep(Duration::from_millis(200)).await;
                    abandoned = rss_mib(pid);
                    println!("<!-- {which}: {refused} refused of the first 1,000 -->");
                }
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
            println!("<!-- {which}: {refused} refused of 3,000 -->");
            (calls, abandoned, rss_mib(pid))
        });
        println!(
            "| {which} | {idle:.1} MiB | {calls:.1} MiB | {abandoned:.1} MiB | {more:.1} MiB |"
        );
        let _ = child.kill();
        let _ = child.wait();
    }
}

/// Calls per second of each server (the in-process two and those named in `spec`).
fn external(spec: &str) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let mut servers: Vec<(String, SocketAddr)> = rt.block_on(async {
        vec![
            ("dsh".to_owned(), serve_dsh().await),
            ("rmcp".to_owned(), serve_rmcp().await),
        ]
    });
    for item in spec.split_whitespace() {
        let (name, addr) = item.split_once('=').expect("NAME=HOST:PORT");
        servers.push((name.to_owned(), addr.parse().expect("HOST:PORT")));
    }
    println!("| server | concurrency 1 | concurrency 16 |");
    println!("|---|---|---|");
    for (name, addr) in servers {
        let mut rates = Vec::new();
        for (concurrency, calls) in [(1usize, 2_000u64), (16, 8_000)] {
            let rate = rt.block_on(async {
                let mut conns = Vec::new();
                for _ in 0..concurrency {
                    conns.push(Arc::new(Mutex::new(Conn::open(addr).await)));
                }
                run(&conns, calls / 10).await;
                let took = run(&conns, calls).await;
                calls as f64 / took.as_secs_f64()
            });
            rates.push(format!("{rate:.0} calls/s"));
        }
        println!("| {name} | {} | {} |", rates[0], rates[1]);
    }
}

fn main() {
    if let Ok(spec) = std::env::var("MCP_HTTP_EXTERNAL") {
        return external(&spec);
    }
    if let Ok(which) = std::env::var("MCP_HTTP_SERVE") {
        return serve_child(&which);
    }
    if std::env::var_os("MCP_HTTP_MEMORY").is_some() {
        return memory();
    }
    benches();
    Criterion::default().configure_from_args().final_summary();
}

//! Two server instances behind a round-robin TCP proxy (no affinity), as a load balancer would
//! put them, with an rmcp client whose every request opens a new connection (so consecutive
//! requests land on different instances). Each instance has its own registry with the same
//! tools, as a fleet has. Both eras, calls and `tools/list_changed`.
//!
//! The Redis variants are `#[ignore]`d here: they need a Redis server, which `.ci/redis-fleet.sh`
//! installs under `target/`, starts, and points `REDIS_URL` at before running them with
//! `--ignored`.

use crate::support;

use dsh_tools::Registry;
use dsh_tools::mcp::rmcp::model::{ServerNotification, SubscriptionFilter};
use dsh_tools::mcp::rmcp::service::ClientServiceExt;
use dsh_tools::mcp::rmcp::transport::StreamableHttpClientTransport;
use dsh_tools::mcp::rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use dsh_tools::mcp::rmcp::transport::streamable_http_server::session::store::{
    SessionState, SessionStore,
};
use dsh_tools::mcp::{HttpConfig, McpServer};
use serde_json::json;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;
use support::{Era, MemoryStore, Probe, Recorder, call, eventually, registry, texts};

/// A round-robin proxy over `upstreams`, counting the connections each one got.
async fn round_robin(upstreams: Vec<SocketAddr>) -> (SocketAddr, Arc<Vec<AtomicUsize>>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let counts: Arc<Vec<AtomicUsize>> =
        Arc::new(upstreams.iter().map(|_| AtomicUsize::new(0)).collect());
    let seen = Arc::clone(&counts);
    tokio::spawn(async move {
        let mut next = 0usize;
        while let Ok((mut client, _)) = listener.accept().await {
            let i = next % upstreams.len();
            next += 1;
            seen[i].fetch_add(1, Ordering::SeqCst);
            let upstream = upstreams[i];
            tokio::spawn(async move {
                if let Ok(mut server) = tokio::net::TcpStream::connect(upstream).await {
                    let _ = tokio::io::copy_bidirectional(&mut client, &mut server).await;
                }
            });
        }
    });
    (addr, counts)
}

/// Two instances (each its own registry) sharing `store`, behind a proxy; a client of `era`
/// makes 12 calls, then both registries gain a tool and the client must hear of it.
async fn fleet(era: Era, store: Option<Arc<dyn SessionStore>>) {
    let probe = Arc::new(Probe::default());
    let mut registries: Vec<Registry> = Vec::new();
    let mut addrs = Vec::new();
    let mut stops = Vec::new();
    for _ in 0..2 {
        let registry = registry(&probe);
        let mut config = HttpConfig::default();
        if let Some(store) = &store {
            config = config.session_store(Arc::clone(store));
        }
        let server = McpServer::new(registry.clone())
            .bind_http("127.0.0.1:0", config)
            .await
            .unwrap();
        addrs.push(server.local_addr());
        stops.push(server.shutdown_token());
        tokio::spawn(server.run());
        registries.push(registry);
    }
    let (proxy, counts) = round_robin(addrs).await;
    // No pooled connections: every request is a new connection, so the proxy alternates.
    let http = dsh_tools_reqwest_client();
    let transport = StreamableHttpClientTransport::with_client(
        http,
        // No silent new session when a restore fails: the test must see the failure.
        StreamableHttpClientTransportConfig::with_uri(format!("http://{proxy}/mcp"))
            .reinit_on_expired_session(false),
    );
    let recorder = Recorder::default();
    let client = recorder
        .clone()
        .serve_with_lifecycle(transport, era.lifecycle())
        .await
        .unwrap_or_else(|e| panic!("{era:?}: the client connects through the proxy: {e}"));
    for i in 1..=12 {
        let added = client
            .peer()
            .call_tool(call("add", json!({"a": i, "b": 1})))
            .await
            .unwrap_or_else(|e| panic!("{era:?}: call {i}: {e}"));
        assert_eq!(texts(&added), [format!("{}", i + 1)], "{era:?}: call {i}");
    }
    let served: Vec<usize> = counts.iter().map(|c| c.load(Ordering::SeqCst)).collect();
    assert!(
        served.iter().all(|&n| n >= 6),
        "{era:?}: both instances served calls: {served:?}"
    );
    // Every instance registers the same new tool; the client hears of it from whichever
    // instance holds its stream.
    match era {
        Era::Modern => {
            let mut subscription = client
                .peer()
                .listen(SubscriptionFilter::builder().tools_list_changed().build())
                .await
                .unwrap();
            for registry in &registries {
                registry.register(support_extra("later")).unwrap().keep();
            }
            let notification = tokio::time::timeout(Duration::from_secs(10), subscription.next())
                .await
                .expect("a notification arrives")
                .unwrap()
                .expect("the subscription is open");
            assert!(
                matches!(
                    notification,
                    ServerNotification::ToolListChangedNotification(_)
                ),
                "{notification:?}"
            );
        }
        Era::Legacy => {
            // The client opens its GET stream on its own schedule, and a change made before
            // it is open is not replayed: change again until one arrives (bounded).
            for round in 0..20 {
                for registry in &registries {
                    let name = if round == 0 {
                        "later".to_owned()
                    } else {
                        format!("later_{round}")
                    };
                    registry.register(support_extra(&name)).unwrap().keep();
                }
                tokio::time::sleep(Duration::from_millis(500)).await;
                if recorder.list_changed.load(Ordering::SeqCst) >= 1 {
                    break;
                }
            }
            let list_changed = Arc::clone(&recorder.list_changed);
            eventually("list_changed through the proxy", || {
                list_changed.load(Ordering::SeqCst) >= 1
            })
            .await;
        }
    }
    let tools = client.peer().list_all_tools().await.unwrap();
    assert!(tools.iter().any(|t| t.name == "later"), "{era:?}");
    client.cancel().await.unwrap();
    for stop in stops {
        stop.cancel();
    }
}

fn support_extra(name: &str) -> dsh_tools::ToolDefinition {
    dsh_tools::ToolDefinition::new(
        name,
        "Added later.",
        json!({"type": "object"}),
        dsh_tools::OutputDecl::text(),
        |_, _| async { Ok(json!("later")) },
    )
}

/// A reqwest client that never reuses a connection.
fn dsh_tools_reqwest_client() -> reqwest::Client {
    reqwest::Client::builder()
        .pool_max_idle_per_host(0)
        .build()
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_2026_era_needs_no_store_behind_a_round_robin_proxy() {
    fleet(Era::Modern, None).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_2025_era_shares_sessions_through_a_store_behind_a_round_robin_proxy() {
    fleet(Era::Legacy, Some(Arc::new(MemoryStore::default()))).await;
}

/// The order that lost notifications: `initialize` on instance A, `notifications/initialized`
/// on B, then the `GET` stream on A again. A never saw `initialized`, yet it holds the stream,
/// so it must know the session from its `initialize`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_get_stream_on_the_instance_that_never_saw_initialized_hears_changes() {
    use std::io::{Read, Write};
    let probe = Arc::new(Probe::default());
    let store: Arc<dyn SessionStore> = Arc::new(MemoryStore::default());
    let mut registries = Vec::new();
    let mut addrs = Vec::new();
    for _ in 0..2 {
        let registry = registry(&probe);
        let server = McpServer::new(registry.clone())
            .bind_http(
                "127.0.0.1:0",
                HttpConfig::default().session_store(Arc::clone(&store)),
            )
            .await
            .unwrap();
        addrs.push(server.local_addr());
        tokio::spawn(server.run());
        registries.push(registry);
    }
    let (proxy, counts) = round_robin(addrs).await;
    let post = move |session: Option<&str>, body: &serde_json::Value| -> (u16, String) {
        let body = body.to_string();
        let mut head = format!(
            "POST /mcp HTTP/1.1\r\nHost: {proxy}\r\nContent-Type: application/json\r\n\
             Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2025-11-25\r\n\
             Connection: close\r\nContent-Length: {}\r\n",
            body.len()
        );
        if let Some(session) = session {
            head.push_str(&format!("Mcp-Session-Id: {session}\r\n"));
        }
        let mut stream = std::net::TcpStream::connect(proxy).unwrap();
        stream
            .write_all(format!("{head}\r\n{body}").as_bytes())
            .unwrap();
        let mut answer = String::new();
        let _ = stream.read_to_string(&mut answer);
        let status = answer
            .split(' ')
            .nth(1)
            .and_then(|c| c.parse().ok())
            .unwrap_or(0);
        (status, answer)
    };
    let (ready_tx, ready_rx) = tokio::sync::oneshot::channel();
    let reader = tokio::task::spawn_blocking(move || {
        let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize",
            "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                       "clientInfo": {"name": "raw", "version": "1"}}});
        let (status, answer) = post(None, &init);
        assert_eq!(status, 200, "{answer}");
        let session = answer
            .lines()
            .find_map(|l| {
                let (name, value) = l.split_once(':')?;
                name.eq_ignore_ascii_case("mcp-session-id")
                    .then(|| value.trim().to_owned())
            })
            .expect("a session id");
        let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        let (status, answer) = post(Some(&session), &initialized);
        assert_eq!(status, 202, "{answer}");
        let mut stream = std::net::TcpStream::connect(proxy).unwrap();
        stream
            .set_read_timeout(Some(Duration::from_secs(10)))
            .unwrap();
        write!(
            stream,
            "GET /mcp HTTP/1.1\r\nHost: {proxy}\r\nAccept: text/event-stream\r\n\
             MCP-Protocol-Version: 2025-11-25\r\nMcp-Session-Id: {session}\r\n\r\n"
        )
        .unwrap();
        let mut seen = Vec::new();
        let mut chunk = [0u8; 4096];
        let mut ready = Some(ready_tx);
        loop {
            let n = stream.read(&mut chunk).unwrap_or(0);
            if n == 0 {
                return String::from_utf8_lossy(&seen).into_owned();
            }
            seen.extend_from_slice(&chunk[..n]);
            let text = String::from_utf8_lossy(&seen);
            if text.contains("\r\n\r\n")
                && let Some(tx) = ready.take()
            {
                assert!(text.starts_with("HTTP/1.1 200"), "{text}");
                let _ = tx.send(());
            }
            if text.contains("notifications/tools/list_changed") {
                return text.into_owned();
            }
        }
    });
    ready_rx.await.expect("the GET stream opened");
    let served: Vec<usize> = counts.iter().map(|c| c.load(Ordering::SeqCst)).collect();
    assert_eq!(
        served,
        [2, 1],
        "initialize and the GET on A, initialized on B"
    );
    for registry in &registries {
        registry.register(support_extra("later")).unwrap().keep();
    }
    let stream = reader.await.unwrap();
    assert!(
        stream.contains("notifications/tools/list_changed"),
        "{stream}"
    );
}

async fn redis_store() -> Arc<dyn SessionStore> {
    let url = std::env::var("REDIS_URL").expect("REDIS_URL names the Redis server to use");
    // A prefix of this run's own: the server may be shared.
    let prefix = format!("dsh-tools-test:{}:", std::process::id());
    Arc::new(
        dsh_tools::mcp::RedisSessionStore::connect(&url)
            .await
            .unwrap()
            .prefix(prefix),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs a Redis server: .ci/redis-fleet.sh starts one and runs this with REDIS_URL"]
async fn redis_the_2025_era_behind_a_round_robin_proxy() {
    fleet(Era::Legacy, Some(redis_store().await)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs a Redis server: .ci/redis-fleet.sh starts one and runs this with REDIS_URL"]
/// The 2026 era keeps no session, so the store is configured but unused: what this shows is
/// that a fleet configured for both eras serves 2026 clients too.
async fn redis_the_2026_era_behind_a_round_robin_proxy() {
    fleet(Era::Modern, Some(redis_store().await)).await;
}

/// The store itself: a stored session is read back, unknown ids are `None`, `DELETE` removes,
/// and keys expire after the TTL.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs a Redis server: .ci/redis-fleet.sh starts one and runs this with REDIS_URL"]
async fn redis_store_round_trip_and_expiry() {
    use dsh_tools::mcp::rmcp::model::{
        ClientCapabilities, Implementation, InitializeRequestParams,
    };
    let url = std::env::var("REDIS_URL").expect("REDIS_URL");
    let store = dsh_tools::mcp::RedisSessionStore::connect(&url)
        .await
        .unwrap()
        .prefix(format!("dsh-tools-test:{}:rt:", std::process::id()))
        .ttl(Duration::from_secs(1));
    let state = SessionState::new(InitializeRequestParams::new(
        ClientCapabilities::default(),
        Implementation::new("client", "1.0"),
    ));
    assert!(store.load("s1").await.unwrap().is_none());
    store.store("s1", &state).await.unwrap();
    let back = store.load("s1").await.unwrap().expect("stored");
    assert_eq!(
        serde_json::to_value(&back.initialize_params).unwrap(),
        serde_json::to_value(&state.initialize_params).unwrap()
    );
    store.delete("s1").await.unwrap();
    assert!(store.load("s1").await.unwrap().is_none());
    store.store("s2", &state).await.unwrap();
    tokio::time::sleep(Duration::from_millis(2_200)).await;
    assert!(store.load("s2").await.unwrap().is_none(), "expired");
}

//! `mcp/call/{dsh,rmcp}`: one `tools/call` round trip of the same echo tool (a 3-field argument
//! struct, returned as structured content) from one rmcp client over an in-process pipe, served
//! by our `McpServer` over a `#[tool]` (which validates every argument) and by rmcp's own
//! `#[tool_router]` (which only deserializes). `mcp/list/{dsh,rmcp}`: `tools/list` of 100 such
//! tools. Both servers run in the same process and runtime, measured in the same run.
//!
//! `MCP_PAIRED=1` measures `mcp/call` and `mcp/list` with the servers interleaved (see
//! [`paired`]), `mcp/call/dsh_plain` among them; `MCP_BENCH_ONLY=dsh|dsh_plain|rmcp|rmcp_stored|rmcp_value|rmcp_pipeline`
//! makes calls for valgrind to count (see [`only`]).

use criterion::{Criterion, criterion_group};
use dsh_tools::mcp::McpServer;
use dsh_tools::{Registry, ToolDefinition, ToolError};
use rmcp::handler::server::wrapper::{Json, Parameters};
use rmcp::model::CallToolRequestParams;
use rmcp::service::RunningService;
use rmcp::{RoleClient, ServiceExt, tool_router};
use serde_json::json;
use std::hint::black_box;

#[path = "common/echo.rs"]
mod echo;
use echo::{Echo, EchoArgs, RmcpEcho, RmcpEchoStored};

/// rmcp's server with 100 echo tools.
#[derive(Clone)]
struct RmcpHundred;

macro_rules! hundred {
    ($($name:ident)*) => {
        #[tool_router(server_handler)]
        impl RmcpHundred {
            $(
                #[rmcp::tool(description = "Echo the arguments back.")]
                async fn $name(&self, Parameters(args): Parameters<EchoArgs>) -> Json<EchoArgs> {
                    Json(args)
                }
            )*
        }
    };
}

hundred!(
    e00 e01 e02 e03 e04 e05 e06 e07 e08 e09 e10 e11 e12 e13 e14 e15 e16 e17 e18 e19
    e20 e21 e22 e23 e24 e25 e26 e27 e28 e29 e30 e31 e32 e33 e34 e35 e36 e37 e38 e39
    e40 e41 e42 e43 e44 e45 e46 e47 e48 e49 e50 e51 e52 e53 e54 e55 e56 e57 e58 e59
    e60 e61 e62 e63 e64 e65 e66 e67 e68 e69 e70 e71 e72 e73 e74 e75 e76 e77 e78 e79
    e80 e81 e82 e83 e84 e85 e86 e87 e88 e89 e90 e91 e92 e93 e94 e95 e96 e97 e98 e99
);

fn hundred_dsh() -> Registry {
    let registry = Registry::new();
    for i in 0..100 {
        let tool = ToolDefinition::typed(
            format!("e{i:02}"),
            "Echo the arguments back.",
            |args: EchoArgs, _| async move { Ok::<_, ToolError>(args) },
        )
        .unwrap();
        registry.register(tool).unwrap().keep();
    }
    registry
}

/// The single-threaded runtime every measurement here runs on (both ends of each pipe).
fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

/// Connects an rmcp client to `server` over an in-process pipe.
async fn connect<S: rmcp::ServerHandler>(server: S) -> RunningService<RoleClient, ()> {
    let (a, b) = tokio::io::duplex(1 << 20);
    tokio::spawn(async move {
        let running = server.serve(a).await.unwrap();
        let _ = running.waiting().await;
    });
    ().serve(b).await.unwrap()
}

/// A registry serving `echo` untyped: parameters `{"type": "object"}`, an output schema that
/// accepts any value, the arguments handed back as they came.
fn plain() -> Registry {
    let registry = Registry::new();
    let tool = ToolDefinition::new(
        "echo",
        "Echo the arguments back.",
        json!({"type": "object"}),
        dsh_tools::OutputDecl::json(json!({})),
        |args: std::sync::Arc<serde_json::Value>, _| async move { Ok((*args).clone()) },
    );
    registry.register(tool).unwrap().keep();
    registry
}

/// rmcp's own server (router kept, as `RmcpEchoStored`) over untyped arguments and value
/// (`Parameters<JsonObject>`, `Json<Value>`). With a registry (`rmcp_pipeline`), the echo runs
/// the arguments through our pipeline ([`Registry::execute`] on [`plain`]'s untyped echo) and
/// answers the value; without one (`rmcp_value`), it answers them as they came. The two apart:
/// the pipeline's own price on rmcp's path, with none of `McpServer`'s mapping (the floor under
/// `dsh_plain` ÷ `rmcp_stored`).
#[derive(Clone)]
struct RmcpUntyped {
    tool_router: rmcp::handler::server::router::tool::ToolRouter<Self>,
    registry: Option<Registry>,
}

impl RmcpUntyped {
    fn new(registry: Option<Registry>) -> Self {
        Self {
            tool_router: Self::untyped_router(),
            registry,
        }
    }
}

#[tool_router(router = untyped_router)]
impl RmcpUntyped {
    #[rmcp::tool(name = "echo", description = "Echo the arguments back.")]
    async fn echo_untyped(
        &self,
        Parameters(args): Parameters<rmcp::model::JsonObject>,
    ) -> Result<Json<serde_json::Value>, String> {
        let args = serde_json::Value::Object(args);
        let Some(registry) = &self.registry else {
            return Ok(Json(args));
        };
        let input = dsh_tools::ToolExecutionInput::new(
            "c",
            "echo",
            args,
            tokio_util::sync::CancellationToken::new(),
        );
        let result = registry.execute(input).await;
        match result.value() {
            Some(value) => Ok(Json(value.clone())),
            None => Err(result.text()),
        }
    }
}

#[rmcp::tool_handler(router = self.tool_router)]
impl rmcp::ServerHandler for RmcpUntyped {}

fn request_arguments() -> serde_json::Value {
    json!({"text": "hello, world", "count": 42, "flag": true})
}

fn request() -> CallToolRequestParams {
    let args = request_arguments();
    let serde_json::Value::Object(args) = args else {
        unreachable!()
    };
    CallToolRequestParams::new("echo").with_arguments(args)
}

fn bench(c: &mut Criterion) {
    let rt = runtime();
    let registry = Registry::new();
    registry.register(Echo).unwrap().keep();
    let dsh = rt.block_on(connect(McpServer::new(registry)));
    let rmcp = rt.block_on(connect(RmcpEcho));
    let stored = rt.block_on(connect(RmcpEchoStored::new()));
    // Same answer from all: structured content equal to the arguments.
    for client in [&dsh, &rmcp, &stored] {
        let out = rt.block_on(client.peer().call_tool(request())).unwrap();
        assert_eq!(
            out.structured_content,
            Some(json!({"text": "hello, world", "count": 42, "flag": true}))
        );
    }
    let mut group = c.benchmark_group("mcp/call");
    group.bench_function("dsh", |b| {
        b.iter(|| black_box(rt.block_on(dsh.peer().call_tool(request())).unwrap()))
    });
    group.bench_function("rmcp", |b| {
        b.iter(|| black_box(rt.block_on(rmcp.peer().call_tool(request())).unwrap()))
    });
    group.bench_function("rmcp_stored", |b| {
        b.iter(|| black_box(rt.block_on(stored.peer().call_tool(request())).unwrap()))
    });
    group.finish();

    let dsh = rt.block_on(connect(McpServer::new(hundred_dsh())));
    let rmcp = rt.block_on(connect(RmcpHundred));
    for client in [&dsh, &rmcp] {
        let tools = rt.block_on(client.peer().list_tools(None)).unwrap();
        assert_eq!(tools.tools.len(), 100);
    }
    let mut group = c.benchmark_group("mcp/list");
    group.bench_function("dsh", |b| {
        b.iter(|| black_box(rt.block_on(dsh.peer().list_tools(None)).unwrap()))
    });
    group.bench_function("rmcp", |b| {
        b.iter(|| black_box(rt.block_on(rmcp.peer().list_tools(None)).unwrap()))
    });
    group.finish();
}

/// `MCP_BENCH_ONLY=dsh|dsh_plain|rmcp|rmcp_stored|rmcp_value|rmcp_pipeline` runs `MCP_BENCH_CALLS` (default 1,000) calls
/// against one server and exits, for instruction counts under `valgrind --tool=callgrind`
/// (steadier than wall time on a shared machine).
fn only(which: &str) {
    let rt = runtime();
    let client = match which {
        "dsh" => {
            let registry = Registry::new();
            registry.register(Echo).unwrap().keep();
            rt.block_on(connect(McpServer::new(registry)))
        }
        "rmcp_stored" => rt.block_on(connect(RmcpEchoStored::new())),
        "dsh_plain" => rt.block_on(connect(McpServer::new(plain()))),
        "rmcp_pipeline" => rt.block_on(connect(RmcpUntyped::new(Some(plain())))),
        "rmcp_value" => rt.block_on(connect(RmcpUntyped::new(None))),
        _ => rt.block_on(connect(RmcpEcho)),
    };
    let calls = env_or("MCP_BENCH_CALLS", 1_000);
    if std::env::var("MCP_BENCH_SHOW").is_ok() {
        let out = rt.block_on(client.peer().call_tool(request())).unwrap();
        eprintln!("{}", serde_json::to_string(&out).unwrap());
    }
    for _ in 0..calls {
        black_box(rt.block_on(client.peer().call_tool(request())).unwrap());
    }
}

/// `MCP_PAIRED=1`: `mcp/call` and `mcp/list` with the servers interleaved, round after round
/// (criterion samples one benchmark after another, and on a shared VM the speed drifts between
/// them by more than the ratio being measured). Each round times `MCP_PAIRED_CALLS` (default
/// 200) calls per server, in a rotating order (a tenth as many lists); printed are each server's
/// fastest round and the median over rounds of dsh's time divided by each baseline's in the
/// same round.
///
/// `mcp/call/dsh_plain` is our server over an untyped echo whose schemas accept any object and
/// any value ([`plain`]): no argument validation, typed decode, output check or typed encode,
/// the price of those measured apart. `rmcp_value` and `rmcp_pipeline` ([`RmcpUntyped`]) are
/// rmcp's own server over untyped arguments, without and with our pipeline: the pipeline's price
/// on rmcp's path. Printed too: dsh_plain, rmcp_value and rmcp_pipeline ÷ rmcp_stored,
/// rmcp_pipeline ÷ rmcp_value, dsh_plain ÷ rmcp_pipeline.
fn paired() {
    let rounds = env_or("MCP_PAIRED_ROUNDS", 60).max(1);
    let calls = env_or("MCP_PAIRED_CALLS", 200);
    let rt = runtime();
    let registry = Registry::new();
    registry.register(Echo).unwrap().keep();
    let clients = [
        ("dsh", rt.block_on(connect(McpServer::new(registry)))),
        ("rmcp", rt.block_on(connect(RmcpEcho))),
        ("rmcp_stored", rt.block_on(connect(RmcpEchoStored::new()))),
        ("dsh_plain", rt.block_on(connect(McpServer::new(plain())))),
        ("rmcp_value", rt.block_on(connect(RmcpUntyped::new(None)))),
        (
            "rmcp_pipeline",
            rt.block_on(connect(RmcpUntyped::new(Some(plain())))),
        ),
    ];
    for (_, client) in &clients {
        let out = rt.block_on(client.peer().call_tool(request())).unwrap();
        assert_eq!(out.structured_content, Some(request_arguments()));
    }
    let times = interleave("mcp/call", rounds, &clients, |client| {
        for _ in 0..calls {
            black_box(rt.block_on(client.peer().call_tool(request())).unwrap());
        }
        calls
    });
    for (a, b) in [(3, 2), (4, 2), (5, 2), (5, 4), (3, 5)] {
        println!(
            "mcp/call: {} / {}: median of rounds {:.3}",
            clients[a].0,
            clients[b].0,
            median_ratio(&times[a], &times[b])
        );
    }
    let clients = [
        ("dsh", rt.block_on(connect(McpServer::new(hundred_dsh())))),
        ("rmcp", rt.block_on(connect(RmcpHundred))),
    ];
    interleave("mcp/list", rounds, &clients, |client| {
        let lists = (calls / 10).max(1);
        for _ in 0..lists {
            black_box(rt.block_on(client.peer().list_tools(None)).unwrap());
        }
        lists
    });
}

/// Runs `batch` on each client in turn, `rounds` times after one round of warm-up, and prints
/// [`paired`]'s figures, dsh being the first client.
fn interleave(
    group: &str,
    rounds: usize,
    clients: &[(&str, RunningService<RoleClient, ()>)],
    mut batch: impl FnMut(&RunningService<RoleClient, ()>) -> usize,
) -> Vec<Vec<f64>> {
    let mut times = vec![Vec::with_capacity(rounds); clients.len()];
    for round in 0..=rounds {
        for k in 0..clients.len() {
            let i = (round + k) % clients.len();
            let start = std::time::Instant::now();
            let n = batch(&clients[i].1);
            if round > 0 {
                times[i].push(start.elapsed().as_secs_f64() / n as f64);
            }
        }
    }
    let best = |t: &[f64]| t.iter().copied().fold(f64::INFINITY, f64::min);
    for (i, (name, _)) in clients.iter().enumerate() {
        print!("{group}/{name}: best {:.2} us", best(&times[i]) * 1e6);
        if i > 0 {
            print!(
                "; dsh / {name}: median of rounds {:.3}, of bests {:.3}",
                median_ratio(&times[0], &times[i]),
                best(&times[0]) / best(&times[i])
            );
        }
        println!();
    }
    times
}

/// The median over rounds of `a`'s time divided by `b`'s in the same round.
fn median_ratio(a: &[f64], b: &[f64]) -> f64 {
    let mut ratios: Vec<f64> = a.iter().zip(b).map(|(a, b)| a / b).collect();
    ratios.sort_by(f64::total_cmp);
    ratios[ratios.len() / 2]
}

fn env_or(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(default)
}

criterion_group!(benches, bench);

fn main() {
    if let Ok(which) = std::env::var("MCP_BENCH_ONLY") {
        return only(&which);
    }
    if std::env::var("MCP_PAIRED").is_ok() {
        return paired();
    }
    benches();
    Criterion::default().configure_from_args().final_summary();
}

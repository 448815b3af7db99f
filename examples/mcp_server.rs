//! The quickstart's file tools, served over MCP: real files under a workspace directory.
//!
//! ```text
//! cargo run -p examples --features mcp --example mcp_server -- [--root DIR] [--stdio | --http ADDR] [--conformance-fixtures] [--no-ask] [--defer]
//! ```
//!
//! `--stdio` (the default) serves one client on standard input and output, which is how MCP
//! clients launch local servers. `--http 127.0.0.1:8765` serves the streamable HTTP transport at
//! `/mcp` (loopback hosts and origins only); the first line on standard output is then exactly
//! `listening on http://HOST:PORT/mcp`, with the port actually bound when ADDR ends in `:0`.
//! `--conformance-fixtures` also registers the tools the official MCP conformance suite calls.
//! `--auth-issuer ISSUER --auth-jwks FILE` (with `--http`) requires a bearer token on every
//! request: a JWT of `ISSUER`, signed by a key of the JWKS in `FILE`, for the resource
//! `http://ADDR/mcp` (so give ADDR a fixed port); `write_file` then needs the scope
//! `files:write`. Logs go to standard error.
//!
//! `write_file` asks before it runs: a client that declared form elicitation (the MCP
//! Inspector, Claude Desktop, the SDKs' clients given an elicitation callback) shows its user a
//! form (approve, a reason, the arguments to edit); other clients get a refusal naming the
//! missing approval. `--no-ask` turns the question off.
//!
//! `--defer` shows progressive discovery: `write_file` and `list_files` are deferred, so the
//! list holds the other tools and `tool_search`; a search that finds them lists them for the
//! session (announced by `tools/list_changed`), or, for a 2026-07-28 client, returns their
//! input schemas.
//!
//! `count_files` walks the workspace and takes at least the seconds it is given (1 to 30): a
//! 2026-07-28 client that declares the tasks extension (`io.modelcontextprotocol/tasks`) gets a
//! task back at once, polls `tasks/get` (progress in its status message) and may
//! `tasks/cancel` it; a 2025-11-25 client that sends a `task` param gets that revision's task
//! (`tasks/get`, `tasks/result`, `tasks/list`, `tasks/cancel`, progress under its token);
//! other clients wait for the result.

#[path = "mcp_server/fixtures.rs"]
mod fixtures;

use dsh_tools::mcp::{Authorization, HttpConfig, JwtVerifier, McpServer};
use dsh_tools::pipeline::ScopeRules;
use dsh_tools::present::ToolResultView;
use dsh_tools::registry::DeferRule;
use dsh_tools::workspace::{EntryKind, Workspace};
use dsh_tools::{
    PreToolDecision, Registry, State, Tool, ToolDefinition, ToolError, ToolExecution,
    ToolRunContext, tool,
};
use schemars::JsonSchema;
use serde::Serialize;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

#[derive(Serialize, JsonSchema)]
struct ReadOutput {
    path: String,
    offset: u32,
    lines: Vec<String>,
}

/// The most lines one `read_file` returns when `limit` is not given.
const DEFAULT_READ_LINES: u32 = 2_000;

/// Read a text file of the workspace (at most 8 MiB), from a line on.
#[tool(title = "Read file", read_only, concurrency_safe, timeout_ms = 30_000)]
async fn read_file(
    State(ws): State<Workspace>,
    /// File path, relative to the workspace
    path: String,
    /// First line to read, 1-based
    offset: Option<u32>,
    /// How many lines to read at most (2,000 when absent)
    limit: Option<u32>,
) -> Result<ReadOutput, ToolError> {
    let text = ws.read_to_string(&path).await?;
    let offset = offset.unwrap_or(1).max(1);
    let lines = text
        .lines()
        .skip(offset as usize - 1)
        .take(limit.unwrap_or(DEFAULT_READ_LINES) as usize)
        .map(str::to_owned)
        .collect();
    Ok(ReadOutput {
        path,
        offset,
        lines,
    })
}

/// Write a text file of the workspace (created or replaced).
#[tool(title = "Write file", destructive, idempotent, timeout_ms = 30_000)]
async fn write_file(
    State(ws): State<Workspace>,
    /// File path, relative to the workspace
    path: String,
    /// The new contents
    content: String,
) -> Result<String, ToolError> {
    ws.write(&path, content.as_bytes()).await?;
    Ok(format!("wrote {} bytes to {path}", content.len()))
}

/// List the files of a workspace directory.
#[tool(title = "List files", read_only, concurrency_safe, timeout_ms = 30_000)]
async fn list_files(
    State(ws): State<Workspace>,
    /// Directory, relative to the workspace ("" for the root)
    dir: String,
) -> Result<Vec<String>, ToolError> {
    let names = ws
        .list(&dir)
        .await?
        .into_iter()
        .map(|entry| match entry.kind {
            EntryKind::Dir => format!("{}/", entry.name),
            EntryKind::Symlink => format!("{}@", entry.name),
            EntryKind::File | EntryKind::Other => entry.name,
        });
    Ok(names.collect())
}

#[derive(Serialize, JsonSchema)]
struct FileCount {
    files: u64,
    directories: u64,
}

/// The most entries `count_files` walks.
const MAX_COUNTED: u64 = 100_000;

/// Count the files and directories of the workspace, walking it one directory at a time and
/// taking at least `seconds` so that a long call can be tried: an MCP client that takes tasks
/// gets a task to poll, with progress, and may cancel it.
#[tool(title = "Count files", read_only, concurrency_safe, task = "optional")]
async fn count_files(
    State(ws): State<Workspace>,
    /// How long the walk takes at least, in seconds (1 to 30)
    seconds: u8,
    ctx: ToolRunContext,
) -> Result<FileCount, ToolError> {
    if !(1..=30).contains(&seconds) {
        return Err(ToolError::new(format!(
            "seconds must be 1 to 30, not {seconds}"
        )));
    }
    let mut count = FileCount {
        files: 0,
        directories: 0,
    };
    let mut pending = vec![String::new()];
    while let Some(dir) = pending.pop() {
        if ctx.signal().is_cancelled() || count.files + count.directories >= MAX_COUNTED {
            break;
        }
        for entry in ws.list(&dir).await? {
            match entry.kind {
                EntryKind::Dir => {
                    count.directories += 1;
                    pending.push(if dir.is_empty() {
                        entry.name
                    } else {
                        format!("{dir}/{}", entry.name)
                    });
                }
                _ => count.files += 1,
            }
        }
    }
    let total = f64::from(seconds);
    for second in 1..=seconds {
        tokio::select! {
            () = ctx.signal().cancelled() => return Err(ToolError::aborted()),
            () = tokio::time::sleep(std::time::Duration::from_secs(1)) => {}
        }
        let message = format!("{} files, {} directories", count.files, count.directories);
        ctx.report_progress(f64::from(second), Some(total), Some(&message));
    }
    Ok(count)
}

#[derive(Serialize, JsonSchema)]
struct Echoed {
    text: String,
}

/// Echo the text back.
#[tool(read_only, idempotent, open_world = false)]
async fn echo(
    /// What to echo
    text: String,
) -> Result<Echoed, ToolError> {
    Ok(Echoed { text })
}

/// Add two integers.
#[tool(read_only, idempotent, open_world = false)]
async fn add(
    /// First term
    a: i64,
    /// Second term
    b: i64,
) -> Result<i64, ToolError> {
    // `fuzz_tool` found `a + b` panicking on overflow (i64::MAX + 1).
    a.checked_add(b)
        .ok_or_else(|| ToolError::new(format!("{a} + {b} overflows a 64-bit integer")))
}

/// The read and diff cards as presentation metadata (`_meta["dev.dsh-tools/presentation"]`), drawn
/// from the typed arguments and output.
fn with_cards(registry: &Registry, ws: &Workspace) -> Result<(), Box<dyn std::error::Error>> {
    registry.register(
        ReadFile::with(ws.clone()).result_card(|args, out: &ReadOutput| {
            let lines = out.lines.iter().map(String::as_str);
            Some(ToolResultView::read(
                &args.path,
                u64::from(out.offset),
                lines,
            ))
        }),
    )?;
    // The person approving a write may change what is written where.
    registry.register(
        ToolDefinition::from(
            WriteFile::with(ws.clone())
                .result_card(|args, _| Some(ToolResultView::created(&args.path, &args.content))),
        )
        .editable_arguments(true),
    )?;
    registry.register(ListFiles::with(ws.clone()))?;
    registry.register(CountFiles::with(ws.clone()))?;
    registry.register(Echo)?;
    registry.register(Add)?;
    Ok(())
}

struct Options {
    root: Option<PathBuf>,
    http: Option<String>,
    fixtures: bool,
    ask: bool,
    defer: bool,
    auth_issuer: Option<String>,
    auth_jwks: Option<PathBuf>,
}

fn parse() -> Result<Options, String> {
    let mut options = Options {
        root: None,
        http: None,
        fixtures: false,
        ask: true,
        defer: false,
        auth_issuer: None,
        auth_jwks: None,
    };
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--root" => options.root = Some(args.next().ok_or("--root needs a directory")?.into()),
            "--http" => options.http = Some(args.next().ok_or("--http needs an address")?),
            "--stdio" => options.http = None,
            "--conformance-fixtures" => options.fixtures = true,
            "--no-ask" => options.ask = false,
            "--defer" => options.defer = true,
            "--auth-issuer" => {
                options.auth_issuer = Some(args.next().ok_or("--auth-issuer needs a URL")?);
            }
            "--auth-jwks" => {
                options.auth_jwks = Some(args.next().ok_or("--auth-jwks needs a file")?.into());
            }
            "--help" | "-h" => {
                return Err(
                    "usage: mcp_server [--root DIR] [--stdio | --http ADDR [--auth-issuer ISSUER --auth-jwks FILE]] [--conformance-fixtures] [--no-ask] [--defer]"
                        .to_owned(),
                );
            }
            other => return Err(format!("unknown argument {other:?} (see --help)")),
        }
    }
    if options.auth_issuer.is_some() != options.auth_jwks.is_some()
        || (options.auth_issuer.is_some() && options.http.is_none())
    {
        return Err("--auth-issuer and --auth-jwks go together, with --http".to_owned());
    }
    Ok(options)
}

fn main() -> ExitCode {
    let options = match parse() {
        Ok(o) => o,
        Err(message) => {
            eprintln!("{message}");
            return ExitCode::from(2);
        }
    };
    // Traces and metrics over OTLP when OTEL_EXPORTER_OTLP_ENDPOINT is set (nothing otherwise),
    // made outside the runtime; the guard outlives it and flushes when `main` returns: stdin
    // closed on stdio, SIGTERM or ctrl-c on HTTP.
    let _telemetry = match dsh_tools::telemetry::init_from_env("dsh-tools-mcp-server") {
        Ok(guard) => guard,
        Err(e) => {
            eprintln!("mcp_server: telemetry: {e}");
            return ExitCode::FAILURE;
        }
    };
    let runtime = match tokio::runtime::Runtime::new() {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("mcp_server: {e}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(run(options)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("mcp_server: {e}");
            ExitCode::FAILURE
        }
    }
}

async fn run(options: Options) -> Result<(), Box<dyn std::error::Error>> {
    // Without --root: a fresh private directory (random name, created exclusively, mode 0700),
    // removed when the server exits. A predictable name in the shared temporary directory could
    // be planted beforehand by another local user as a link to a directory of theirs choosing.
    let mut scratch = None;
    let ws = match options.root {
        Some(root) => {
            std::fs::create_dir_all(&root)?;
            Workspace::open(&root)?
        }
        None => {
            let mut builder = tempfile::Builder::new();
            builder.prefix("dsh-tools-mcp-");
            #[cfg(unix)]
            builder.permissions(std::os::unix::fs::PermissionsExt::from_mode(0o700));
            let dir = builder.tempdir()?;
            let ws = Workspace::open(dir.path())?;
            ws.write("README.md", b"# A scratch workspace\n").await?;
            scratch = Some(dir);
            ws
        }
    };
    eprintln!("mcp_server: workspace {}", ws.root().display());
    let registry = Registry::new();
    with_cards(&registry, &ws)?;
    if options.fixtures {
        fixtures::register(&registry)?;
    }
    if options.ask {
        // The person decides on every write (the MCP server puts it to the client's user).
        registry
            .on_pre_execute(|e: Arc<ToolExecution>, _next| async move {
                Ok(if e.name() == "write_file" {
                    PreToolDecision::ask(Some("it writes to the workspace"))
                } else {
                    PreToolDecision::Allow
                })
            })
            .keep();
    }
    let mut config = HttpConfig::default();
    if let (Some(issuer), Some(jwks), Some(addr)) =
        (options.auth_issuer, options.auth_jwks, &options.http)
    {
        let keys = serde_json::from_slice(&std::fs::read(&jwks)?)?;
        let auth = Authorization::new(
            format!("http://{addr}/mcp"),
            JwtVerifier::new(issuer.clone(), keys),
        )?
        .authorization_server(issuer)
        .scopes_supported(["files:write"]);
        config = config.authorization(auth);
        registry.guard(
            ScopeRules::new()
                .require_caller(true)
                .tool("write_file", ["files:write"])
                .guard(),
        );
    }
    let mut server = McpServer::new(registry.clone());
    if options.defer {
        // A large catalog in miniature: the file-writing tools are found by `tool_search`
        // (progressive discovery) instead of being listed up front.
        registry.defer_loading(DeferRule::tools(["write_file", "list_files"]));
        server = server
            .progressive_discovery(true)
            .list_ttl(std::time::Duration::from_secs(30));
    }
    match options.http {
        None => server.serve_stdio().await?,
        Some(addr) => {
            let http = server.bind_http(addr.as_str(), config).await?;
            // The first line on stdout, exactly: scripts read the bound port from it.
            println!("listening on {}", http.url());
            use std::io::Write;
            std::io::stdout().flush()?;
            let stop = http.shutdown_token();
            tokio::spawn(async move {
                stopped().await;
                stop.cancel();
            });
            http.run().await?;
        }
    }
    drop(scratch);
    Ok(())
}

/// Completes on ctrl-c, or on SIGTERM (how a service manager stops a server).
async fn stopped() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        if let Ok(mut term) = signal(SignalKind::terminate()) {
            tokio::select! {
                _ = tokio::signal::ctrl_c() => {}
                _ = term.recv() => {}
            }
            return;
        }
    }
    let _ = tokio::signal::ctrl_c().await;
}

#[cfg(test)]
mod tests {
    use super::*;
    use dsh_tools::testing;
    use serde_json::json;

    fn workspace() -> (Workspace, PathBuf) {
        let dir = std::env::temp_dir().join(format!(
            "dsh-tools-mcp-server-test-{}-{:?}",
            std::process::id(),
            std::thread::current().id()
        ));
        std::fs::create_dir_all(&dir).unwrap();
        let dir = dir.canonicalize().unwrap();
        (Workspace::open(&dir).unwrap(), dir)
    }

    #[tokio::test]
    async fn file_tools_stay_in_their_workspace() {
        let (ws, dir) = workspace();
        let wrote = testing::call(
            WriteFile::with(ws.clone()),
            json!({"path": "notes/a.txt", "content": "one\ntwo\n"}),
        )
        .await;
        assert_eq!(wrote.text(), "wrote 8 bytes to notes/a.txt");
        let read = testing::call(
            ReadFile::with(ws.clone()),
            json!({"path": "notes/a.txt", "offset": 2}),
        )
        .await;
        assert_eq!(
            read.value(),
            Some(&json!({"path": "notes/a.txt", "offset": 2, "lines": ["two"]}))
        );
        let listed = testing::call(ListFiles::with(ws.clone()), json!({"dir": ""})).await;
        assert_eq!(listed.value(), Some(&json!(["notes/"])));
        let escaped =
            testing::call(ReadFile::with(ws.clone()), json!({"path": "../etc/passwd"})).await;
        assert_eq!(escaped.code(), Some("OUTSIDE_WORKSPACE"));
        let made_up = testing::call(
            WriteFile::with(ws),
            json!({"path": "b", "content": "", "append": true}),
        )
        .await;
        assert_eq!(made_up.code(), Some("INVALID_ARGS"));
        std::fs::remove_dir_all(dir).unwrap();
    }

    /// `count_files` counts the workspace as a task, with progress, and refuses a duration
    /// out of range.
    #[tokio::test]
    async fn count_files_runs_as_a_task() {
        use dsh_tools::task::{Started, TaskStatus, Tasks};
        use dsh_tools::{CancellationToken, ToolExecutionInput};
        let (ws, dir) = workspace();
        std::fs::create_dir_all(dir.join("count/a")).unwrap();
        std::fs::write(dir.join("count/a/one.txt"), "1").unwrap();
        std::fs::write(dir.join("count/two.txt"), "2").unwrap();
        let counting = Workspace::open(dir.join("count")).unwrap();
        for seconds in [0, 31] {
            let refused =
                testing::call(CountFiles::with(ws.clone()), json!({"seconds": seconds})).await;
            assert!(refused.is_error(), "{seconds}: {}", refused.text());
        }
        let registry = Registry::new();
        registry
            .register(CountFiles::with(counting))
            .unwrap()
            .keep();
        let tasks = Tasks::new(&registry);
        let input = ToolExecutionInput::new(
            "c",
            "count_files",
            json!({"seconds": 1}),
            CancellationToken::new(),
        );
        let Started::Task(task) = tasks.start(input, None).await else {
            panic!("count_files did not run as a task");
        };
        let done = tasks
            .wait(&task.id, None, &CancellationToken::new())
            .await
            .unwrap();
        assert_eq!(done.status, TaskStatus::Completed);
        assert_eq!(
            done.result.unwrap().value(),
            Some(&json!({"files": 2, "directories": 1}))
        );
        assert_eq!(
            done.progress.unwrap().message.as_deref(),
            Some("2 files, 1 directories")
        );
        std::fs::remove_dir_all(dir).unwrap();
    }

    /// The escapes a lexical check let through (a workspace is usually a cloned repository, and
    /// git stores links): each is refused and nothing outside is read or touched.
    #[cfg(unix)]
    #[tokio::test]
    async fn links_do_not_lead_out_of_the_workspace() {
        use std::os::unix::fs::symlink;
        let (ws, dir) = workspace();
        let outside = dir.with_extension("outside");
        std::fs::create_dir_all(&outside).unwrap();
        std::fs::write(outside.join("secret.txt"), "secret").unwrap();
        symlink(outside.join("secret.txt"), dir.join("notes.txt")).unwrap();
        symlink(&outside, dir.join("docs")).unwrap();
        symlink("/proc/self/fd/1", dir.join("stdout")).unwrap();
        let read = |path: &str| testing::call(ReadFile::with(ws.clone()), json!({"path": path}));
        let write = |path: &str| {
            testing::call(
                WriteFile::with(ws.clone()),
                json!({"path": path, "content": "clobbered"}),
            )
        };
        assert_eq!(read("notes.txt").await.code(), Some("NOT_A_REGULAR_FILE"));
        assert_eq!(
            read("docs/secret.txt").await.code(),
            Some("OUTSIDE_WORKSPACE")
        );
        assert_eq!(write("notes.txt").await.code(), Some("NOT_A_REGULAR_FILE"));
        assert_eq!(
            write("docs/secret.txt").await.code(),
            Some("OUTSIDE_WORKSPACE")
        );
        assert_eq!(
            write("docs/new/file.txt").await.code(),
            Some("OUTSIDE_WORKSPACE")
        );
        assert_eq!(write("stdout").await.code(), Some("NOT_A_REGULAR_FILE"));
        let listed = testing::call(ListFiles::with(ws.clone()), json!({"dir": "docs"})).await;
        assert_eq!(listed.code(), Some("NOT_A_REGULAR_FILE"));
        assert_eq!(
            std::fs::read_to_string(outside.join("secret.txt")).unwrap(),
            "secret"
        );
        assert!(!outside.join("new").exists());
        std::fs::remove_dir_all(outside).unwrap();
        std::fs::remove_dir_all(dir).unwrap();
    }

    /// Every tool, fuzzed from its own schema on a scratch workspace: rejected arguments never
    /// reach a body, accepted ones decode, no body panics, every output validates.
    #[test]
    fn every_tool_survives_fuzzing() {
        let (ws, dir) = workspace();
        let config = testing::FuzzConfig::default().cases(128);
        for report in [
            testing::fuzz_tool(ReadFile::with(ws.clone()), config),
            testing::fuzz_tool(WriteFile::with(ws.clone()), config),
            testing::fuzz_tool(ListFiles::with(ws.clone()), config),
            testing::fuzz_tool(Echo, config),
            testing::fuzz_tool(Add, config),
        ] {
            let report = report.unwrap_or_else(|failure| panic!("{failure}"));
            assert!(report.valid > 0 && report.invalid > 0, "{report:?}");
        }
        std::fs::remove_dir_all(dir).unwrap();
    }
}

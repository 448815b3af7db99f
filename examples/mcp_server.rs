//! The quickstart's file tools, served over MCP: real files under a workspace directory.
//!
//! ```text
//! cargo run -p examples --features mcp --example mcp_server -- [--root DIR] [--stdio | --http ADDR] [--conformance-fixtures]
//! ```
//!
//! `--stdio` (the default) serves one client on standard input and output, which is how MCP
//! clients launch local servers. `--http 127.0.0.1:8765` serves the streamable HTTP transport at
//! `/mcp` (loopback hosts and origins only); the first line on standard output is then exactly
//! `listening on http://HOST:PORT/mcp`, with the port actually bound when ADDR ends in `:0`.
//! `--conformance-fixtures` also registers the tools the official MCP conformance suite calls.
//! Logs go to standard error.

#[path = "mcp_server/fixtures.rs"]
mod fixtures;

use dsh_tools::mcp::{HttpConfig, McpServer};
use dsh_tools::present::{FileDiff, ReadFileLine, ToolResultView};
use dsh_tools::{Registry, State, Tool, ToolError, tool};
use schemars::JsonSchema;
use serde::Serialize;
use serde_json::Value;
use std::path::{Component, Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

/// The workspace every file tool is confined to: the file tools' state.
#[derive(Clone)]
struct Workspace(Arc<PathBuf>);

/// `path` (relative to the workspace, or absolute inside it) as a path under the root.
fn resolve(ws: &Workspace, path: &str) -> Result<PathBuf, ToolError> {
    let root: &PathBuf = &ws.0;
    let relative = Path::new(path)
        .strip_prefix(root)
        .unwrap_or(Path::new(path));
    let relative = relative.strip_prefix("/").unwrap_or(relative);
    let mut out = root.clone();
    for part in relative.components() {
        match part {
            Component::Normal(p) => out.push(p),
            Component::CurDir => {}
            _ => {
                return Err(ToolError::coded(
                    "PathError",
                    "OUTSIDE_WORKSPACE",
                    format!("{path} leaves the workspace"),
                ));
            }
        }
    }
    Ok(out)
}

#[derive(Serialize, JsonSchema)]
struct ReadOutput {
    path: String,
    offset: u32,
    lines: Vec<String>,
}

/// Read a text file of the workspace, from a line on.
#[tool(title = "Read file", read_only, concurrency_safe)]
async fn read_file(
    State(ws): State<Workspace>,
    /// File path, relative to the workspace
    path: String,
    /// First line to read, 1-based
    offset: Option<u32>,
) -> Result<ReadOutput, ToolError> {
    let text = tokio::fs::read_to_string(resolve(&ws, &path)?).await?;
    let offset = offset.unwrap_or(1).max(1);
    let lines = text
        .lines()
        .skip(offset as usize - 1)
        .map(str::to_owned)
        .collect();
    Ok(ReadOutput {
        path,
        offset,
        lines,
    })
}

/// Write a text file of the workspace (created or replaced).
#[tool(title = "Write file", destructive, idempotent)]
async fn write_file(
    State(ws): State<Workspace>,
    /// File path, relative to the workspace
    path: String,
    /// The new contents
    content: String,
) -> Result<String, ToolError> {
    let target = resolve(&ws, &path)?;
    if let Some(parent) = target.parent() {
        tokio::fs::create_dir_all(parent).await?;
    }
    tokio::fs::write(&target, &content).await?;
    Ok(format!("wrote {} bytes to {path}", content.len()))
}

/// List the files of a workspace directory.
#[tool(title = "List files", read_only, concurrency_safe)]
async fn list_files(
    State(ws): State<Workspace>,
    /// Directory, relative to the workspace ("" for the root)
    dir: String,
) -> Result<Vec<String>, ToolError> {
    let mut entries = tokio::fs::read_dir(resolve(&ws, &dir)?).await?;
    let mut names = Vec::new();
    while let Some(entry) = entries.next_entry().await? {
        let mut name = entry.file_name().to_string_lossy().into_owned();
        if entry.file_type().await?.is_dir() {
            name.push('/');
        }
        names.push(name);
    }
    names.sort();
    Ok(names)
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

/// The read and diff cards as presentation metadata (`_meta["dev.dsh-tools/presentation"]`).
fn with_cards(registry: &Registry, ws: &Workspace) -> Result<(), Box<dyn std::error::Error>> {
    let read =
        ReadFile::with(ws.clone())
            .definition()
            .presentation_meta(|args: &Value, value: &Value| {
                let offset = value["offset"].as_u64().unwrap_or(1);
                let lines: Vec<ReadFileLine> = value["lines"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .zip(offset..)
                    .map(|(l, number)| ReadFileLine {
                        number,
                        text: l.as_str().unwrap_or("").to_owned(),
                    })
                    .collect();
                let card = ToolResultView::Read {
                    title: None,
                    path: args["path"].as_str().unwrap_or("?").to_owned(),
                    offset,
                    total_lines: lines.len() as u64 + offset - 1,
                    lines,
                    lang: None,
                    content: None,
                };
                serde_json::to_value(card).unwrap_or(Value::Null)
            });
    registry.register(read)?.keep();
    let write = WriteFile::with(ws.clone())
        .definition()
        .presentation_meta(|args: &Value, _| {
            let card = ToolResultView::Diff {
                title: None,
                diffs: vec![FileDiff {
                    path: args["path"].as_str().unwrap_or("?").to_owned(),
                    old_text: None,
                    new_text: args["content"].as_str().unwrap_or("").to_owned(),
                }],
            };
            serde_json::to_value(card).unwrap_or(Value::Null)
        });
    registry.register(write)?.keep();
    registry.register(ListFiles::with(ws.clone()))?.keep();
    registry.register(Echo)?.keep();
    registry.register(Add)?.keep();
    Ok(())
}

struct Options {
    root: Option<PathBuf>,
    http: Option<String>,
    fixtures: bool,
}

fn parse() -> Result<Options, String> {
    let mut options = Options {
        root: None,
        http: None,
        fixtures: false,
    };
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--root" => options.root = Some(args.next().ok_or("--root needs a directory")?.into()),
            "--http" => options.http = Some(args.next().ok_or("--http needs an address")?),
            "--stdio" => options.http = None,
            "--conformance-fixtures" => options.fixtures = true,
            "--help" | "-h" => {
                return Err(
                    "usage: mcp_server [--root DIR] [--stdio | --http ADDR] [--conformance-fixtures]"
                        .to_owned(),
                );
            }
            other => return Err(format!("unknown argument {other:?} (see --help)")),
        }
    }
    Ok(options)
}

#[tokio::main]
async fn main() -> ExitCode {
    let options = match parse() {
        Ok(o) => o,
        Err(message) => {
            eprintln!("{message}");
            return ExitCode::from(2);
        }
    };
    match run(options).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("mcp_server: {e}");
            ExitCode::FAILURE
        }
    }
}

async fn run(options: Options) -> Result<(), Box<dyn std::error::Error>> {
    let root = match options.root {
        Some(root) => {
            std::fs::create_dir_all(&root)?;
            root.canonicalize()?
        }
        None => {
            let dir = std::env::temp_dir().join(format!("dsh-tools-mcp-{}", std::process::id()));
            std::fs::create_dir_all(&dir)?;
            std::fs::write(dir.join("README.md"), "# A scratch workspace\n")?;
            dir.canonicalize()?
        }
    };
    eprintln!("mcp_server: workspace {}", root.display());
    let registry = Registry::new();
    with_cards(&registry, &Workspace(Arc::new(root)))?;
    if options.fixtures {
        fixtures::register(&registry)?;
    }
    let server = McpServer::new(registry);
    match options.http {
        None => server.serve_stdio().await?,
        Some(addr) => {
            let http = server
                .bind_http(addr.as_str(), HttpConfig::default())
                .await?;
            // The first line on stdout, exactly: scripts read the bound port from it.
            println!("listening on {}", http.url());
            use std::io::Write;
            std::io::stdout().flush()?;
            let stop = http.shutdown_token();
            tokio::spawn(async move {
                let _ = tokio::signal::ctrl_c().await;
                stop.cancel();
            });
            http.run().await?;
        }
    }
    Ok(())
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
        (Workspace(Arc::new(dir.clone())), dir)
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

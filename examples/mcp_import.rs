//! Imports an MCP server's tools into a registry and calls them through our pipeline.
//!
//! ```text
//! cargo run -p examples --features mcp --example mcp_import -- \
//!     [--prefix P] [--modern] [--approve yes|no] [--call NAME JSON]... \
//!     (--url http://HOST:PORT/mcp | -- COMMAND ARGS...)
//! ```
//!
//! `--modern` speaks 2026-07-28 to a child over its pipes (the handshake era otherwise; `--url`
//! negotiates). `--approve yes|no` answers the questions a remote tool asks during its call
//! (form elicitation) with this host's approval service, printing `asked: REASON` to standard
//! error each time; the calls are then made as agent `importer`, the scope whose service that
//! is. Without it a remote question is answered `cancel`.
//!
//! Prints the negotiated protocol version (`protocol VERSION`), one line per imported tool (`tool NAME converted|passed-through: DESCRIPTION`, with
//! control characters in the description escaped), one per skipped tool (`skipped NAME: WHY`), then
//! one line per call: `call NAME -> <the result as JSON>` (our `ToolExecutionResult` shape:
//! `content`, `isError`, `value` or `error`). Exits 1 when connecting or listing fails.

use dsh_tools::mcp::rmcp::model::ProtocolVersion;
use dsh_tools::mcp::rmcp::service::ClientLifecycleMode;
use dsh_tools::mcp::{ImportLimits, ImportOptions, McpImport};
use dsh_tools::{
    ApprovalOutcome, ApprovalRequest, CancellationToken, Registry, ToolError, ToolExecutionInput,
};
use serde_json::Value;
use std::process::ExitCode;

struct Options {
    prefix: Option<String>,
    modern: bool,
    approve: Option<bool>,
    calls: Vec<(String, Value)>,
    url: Option<String>,
    command: Vec<String>,
}

fn parse() -> Result<Options, String> {
    let mut options = Options {
        prefix: None,
        modern: false,
        approve: None,
        calls: Vec::new(),
        url: None,
        command: Vec::new(),
    };
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--prefix" => options.prefix = Some(args.next().ok_or("--prefix needs a value")?),
            "--url" => options.url = Some(args.next().ok_or("--url needs a value")?),
            "--modern" => options.modern = true,
            "--approve" => {
                options.approve = match args.next().as_deref() {
                    Some("yes") => Some(true),
                    Some("no") => Some(false),
                    _ => return Err("--approve needs yes or no".to_owned()),
                };
            }
            "--call" => {
                let name = args.next().ok_or("--call needs a tool name")?;
                let json = args.next().ok_or("--call needs JSON arguments")?;
                let value =
                    serde_json::from_str(&json).map_err(|e| format!("--call {name}: {e}"))?;
                options.calls.push((name, value));
            }
            "--" => {
                options.command = args.by_ref().collect();
            }
            other => return Err(format!("unknown argument {other:?}")),
        }
    }
    if options.url.is_none() && options.command.is_empty() {
        return Err("give --url URL or -- COMMAND ARGS...".to_owned());
    }
    Ok(options)
}

#[tokio::main]
async fn main() -> ExitCode {
    let options = match parse() {
        Ok(o) => o,
        Err(e) => {
            eprintln!("mcp_import: {e}");
            return ExitCode::from(2);
        }
    };
    match run(options).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("mcp_import: {e}");
            ExitCode::FAILURE
        }
    }
}

async fn run(options: Options) -> Result<(), Box<dyn std::error::Error>> {
    let server = match &options.url {
        Some(url) => McpImport::connect_http(url).await?,
        None => {
            let mut command = tokio::process::Command::new(&options.command[0]);
            command.args(&options.command[1..]);
            let lifecycle = if options.modern {
                ClientLifecycleMode::Discover {
                    preferred_versions: vec![ProtocolVersion::V_2026_07_28],
                }
            } else {
                ClientLifecycleMode::Initialize
            };
            McpImport::with_limits(ImportLimits::default())
                .connect_stdio_with(command, lifecycle)
                .await?
        }
    };
    if let Some(info) = server.peer().peer_info() {
        println!("protocol {}", info.protocol_version);
    }
    let registry = Registry::new();
    if let Some(yes) = options.approve {
        registry.set_approval_service(move |request: ApprovalRequest| {
            eprintln!(
                "asked: {}",
                printable(request.reason.as_deref().unwrap_or_default())
            );
            let outcome = if yes {
                ApprovalOutcome::AllowedOnce
            } else {
                ApprovalOutcome::Rejected
            };
            async move { Ok::<_, ToolError>(outcome) }
        });
    }
    let mut import = ImportOptions::default();
    if let Some(prefix) = options.prefix {
        import = import.prefix(prefix);
    }
    let imported = server.import_into(&registry, import).await?;
    let passed: Vec<String> = imported.passed_through().into_iter().map(|p| p.0).collect();
    for tool in registry.tools(None) {
        let how = if passed.iter().any(|n| n == tool.name()) {
            "passed-through"
        } else {
            "converted"
        };
        // A remote description may hold terminal escapes: print it escaped.
        println!(
            "tool {} {how}: {}",
            tool.name(),
            printable(tool.description())
        );
    }
    for (name, why) in imported.skipped() {
        println!("skipped {name}: {why}");
    }
    for (i, (name, args)) in options.calls.into_iter().enumerate() {
        let mut input =
            ToolExecutionInput::new(format!("call_{i}"), &name, args, CancellationToken::new());
        if options.approve.is_some() {
            input = input.agent("importer");
        }
        let result = registry.execute(input).await;
        println!("call {name} -> {}", serde_json::to_string(&result)?);
    }
    Ok(())
}

/// `text` with control, invisible and bidirectional-override characters escaped.
fn printable(text: &str) -> String {
    text.chars()
        .map(|c| {
            let hidden = c.is_control()
                || matches!(c, '\u{200b}'..='\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2060}'..='\u{2069}' | '\u{feff}');
            if hidden {
                c.escape_unicode().to_string()
            } else {
                c.to_string()
            }
        })
        .collect()
}

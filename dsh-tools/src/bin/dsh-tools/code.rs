//! `dsh-tools code types|sdk|run`: what a model is shown in Code Mode, and running a program
//! against the tools of MCP servers.

use crate::io::{EMPTY_OBJECT, InputError, out, read_json};
use clap::Subcommand;
use dsh_tools::code::{SdkTool, render_sdk, schema_to_ts};
use serde_json::Value;

#[derive(Subcommand)]
pub(crate) enum CodeCommand {
    /// Print the TypeScript type of one schema, as the SDK renders it.
    Types {
        /// The indentation level: 0 standalone, 1 inside `ToolArgsMap`.
        #[arg(long, default_value_t = 0)]
        indent: usize,
        /// The schema (`-` for standard input).
        schema: String,
    },
    /// Print the SDK section for a JSON array of `{name, description, parameters, output?}`.
    Sdk {
        /// The tools (`-` for standard input).
        tools: String,
    },
    /// Run a program in the sandbox against the tools of MCP servers started over stdio; print
    /// the `run_code` result text. Exit 0 when the run succeeded, 1 when it failed.
    Run {
        /// An MCP server: its command line, split as a shell would, or the URL of a streamable
        /// HTTP endpoint (`http://host:port/mcp`); repeatable. `NAME=CMD` names
        /// the server: its tools become `NAME_tool` (NAME: a letter, then letters, digits or
        /// `_`). A tool name two servers expose is an error unless they are named.
        #[arg(long = "server", value_name = "[NAME=]CMD")]
        servers: Vec<String>,
        /// Let the servers' read-only tools (`readOnlyHint`) run concurrently under
        /// `Promise.all`. Without it every imported call runs alone, in order: a server's
        /// annotations are its claims.
        #[arg(long)]
        trust_hints: bool,
        /// The environment variable holding the bearer token sent to every HTTP `--server`
        /// (a token never goes on the command line, where other users can read it).
        #[arg(long, value_name = "VAR")]
        bearer_env: Option<String>,
        /// The program's CPU budget, in milliseconds.
        #[arg(long, value_name = "N", default_value_t = 60_000)]
        compute_ms: u64,
        /// The wall-clock ceiling, in milliseconds.
        #[arg(long, value_name = "N", default_value_t = 600_000)]
        wall_ms: u64,
        /// The engine's heap limit, in MiB.
        #[arg(long, value_name = "N", default_value_t = 512)]
        memory_mb: u64,
        /// The program, TypeScript (`-` for standard input).
        program: String,
    },
}

pub(crate) fn run(command: CodeCommand, stdin_used: &mut bool) -> Result<u8, InputError> {
    match command {
        CodeCommand::Types { indent, schema } => {
            let schema = read_json(&schema, stdin_used)?;
            out!("{}", schema_to_ts(&schema, indent));
            Ok(0)
        }
        CodeCommand::Sdk { tools } => {
            let doc = read_json(&tools, stdin_used)?;
            let tools = sdk_tools(&doc)?;
            out!("{}", render_sdk(&tools));
            Ok(0)
        }
        CodeCommand::Run {
            servers,
            trust_hints,
            bearer_env,
            compute_ms,
            wall_ms,
            memory_mb,
            program,
        } => {
            let program = crate::io::read_text(&program, stdin_used)?;
            let run_options = RunOptions {
                compute_ms,
                wall_ms,
                memory_mb,
                trust_hints,
                bearer_env,
            };
            run_program(&servers, run_options, program)
        }
    }
}

/// The tools of `code sdk`: each `{name, description, parameters, output?}` (`output` absent:
/// `{}`, rendered `JsonValue`).
fn sdk_tools(doc: &Value) -> Result<Vec<SdkTool<'_>>, InputError> {
    let Some(items) = doc.as_array() else {
        return Err(InputError(
            "TOOLS must be a JSON array of {name, description, parameters, output?}".into(),
        ));
    };
    items
        .iter()
        .enumerate()
        .map(|(i, item)| {
            let field = |key: &str| item.get(key);
            let name = field("name").and_then(Value::as_str);
            let description = field("description").and_then(Value::as_str);
            let parameters = field("parameters");
            match (name, description, parameters) {
                (Some(name), Some(description), Some(parameters)) => Ok(SdkTool {
                    name,
                    description,
                    parameters,
                    output: field("output").unwrap_or(&EMPTY_OBJECT),
                }),
                _ => Err(InputError(format!(
                    "TOOLS[{i}] needs a string \"name\", a string \"description\" and \"parameters\""
                ))),
            }
        })
        .collect()
}

#[cfg_attr(not(all(feature = "typescript", feature = "mcp")), allow(dead_code))]
struct RunOptions {
    compute_ms: u64,
    wall_ms: u64,
    memory_mb: u64,
    trust_hints: bool,
    bearer_env: Option<String>,
}

#[cfg(all(feature = "typescript", feature = "mcp"))]
fn run_program(
    servers: &[String],
    run_options: RunOptions,
    program: String,
) -> Result<u8, InputError> {
    use dsh_tools::code::CodeRuntimeConfig;
    use dsh_tools::code::quickjs::QuickJsRuntime;
    use dsh_tools::mcp::ImportOptions;
    use dsh_tools::registry::PresentationMode;
    use dsh_tools::{CancellationToken, Registry, ToolExecutionInput};

    let config = CodeRuntimeConfig {
        compute_ms: run_options.compute_ms as f64,
        max_wall_ms: run_options.wall_ms as f64,
        max_old_generation_size_mb: run_options.memory_mb as f64,
        ..CodeRuntimeConfig::default()
    };
    let engine = QuickJsRuntime::new(config).map_err(|e| InputError(e.to_string()))?;
    let token = match &run_options.bearer_env {
        None => None,
        Some(var) => Some(bearer_token(var)?),
    };
    let mut commands = Vec::new();
    for server in servers {
        let (name, line) = server_name(server);
        if let Some(name) = name
            && commands.iter().any(|(n, _)| *n == Some(name))
        {
            return Err(InputError(format!(
                "--server {name}=…: two servers are named {name}"
            )));
        }
        let url = line.trim();
        if url.starts_with("http://") || url.starts_with("https://") {
            commands.push((name, Target::Http(url.to_owned())));
            continue;
        }
        let words = shlex::split(line)
            .filter(|w| !w.is_empty())
            .ok_or_else(|| {
                InputError(format!(
                    "--server {}: not a command line",
                    crate::io::printable(server)
                ))
            })?;
        commands.push((name, Target::Stdio(words)));
    }
    if token.is_some() && !commands.iter().any(|(_, t)| matches!(t, Target::Http(_))) {
        return Err(InputError(
            "--bearer-env: no --server is an HTTP URL to send the token to".into(),
        ));
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| InputError(format!("cannot start the async runtime: {e}")))?;
    runtime.block_on(async move {
        let registry = Registry::new();
        let mut connections = Vec::new();
        // Which server registered each name, to name both when another exposes it too.
        let mut owners: std::collections::HashMap<String, String> = Default::default();
        for (name, target) in &commands {
            let shown = match target {
                Target::Stdio(words) => crate::io::printable(&words.join(" ")),
                Target::Http(url) => crate::io::printable(url),
            };
            let shown = match name {
                Some(name) => format!("{name}={shown}"),
                None => shown,
            };
            let import = connect(target, token.as_deref())
                .await
                .map_err(|e| InputError(format!("--server {shown}: {e}")))?;
            let mut options = ImportOptions::default().trust_hints(run_options.trust_hints);
            if let Some(name) = name {
                options = options.prefix(format!("{name}_"));
            }
            let tools = import
                .import_into(&registry, options)
                .await
                .map_err(|e| InputError(format!("--server {shown}: {e}")))?;
            let collisions = tools.collisions();
            if let Some(taken) = collisions.first() {
                let tool = crate::io::printable(taken);
                let more = match collisions.len() - 1 {
                    0 => String::new(),
                    n => format!(" (and {n} more)"),
                };
                let first = owners.get(taken.as_str()).map_or_else(
                    || "a name the registry reserves".to_owned(),
                    |owner| format!("--server {owner}"),
                );
                return Err(InputError(format!(
                    "tool {tool}{more} is exposed by both {first} and --server {shown}; name \
                     the servers to keep both (--server a=CMD makes its tools a_{tool})"
                )));
            }
            for local in tools.names() {
                owners.insert(local, shown.clone());
            }
            for (name, why) in tools.skipped() {
                let _ = std::io::Write::write_all(
                    &mut std::io::stderr(),
                    format!(
                        "dsh-tools: --server {shown}: tool {} skipped: {}\n",
                        crate::io::printable(&name),
                        crate::io::printable(&why)
                    )
                    .as_bytes(),
                );
            }
            connections.push((import, tools));
        }
        registry.set_presentation_mode(PresentationMode::Code);
        registry.set_code_runtime(engine);
        let program_text = program.clone();
        let args = serde_json::json!({"code": program, "description": "dsh-tools code run"});
        let input = ToolExecutionInput::new("cli", "run_code", args, CancellationToken::new());
        let result = registry.execute(input).await;
        drop(connections);
        // Text for a terminal: what the program or a remote tool put in it cannot drive it.
        let text = result.text();
        out!("{}", crate::io::terminal_text(&text));
        if result.is_error()
            && let Some((line, column)) = position(&text)
            && let Some(excerpt) = excerpt(&program_text, line, column)
        {
            let _ = std::io::Write::write_all(&mut std::io::stderr(), excerpt.as_bytes());
        }
        Ok(u8::from(result.is_error()))
    })
}

/// The first position a failure names: `(line L, column C)` (a syntax error) or
/// `<program>:L:C` (a stack frame).
#[cfg_attr(not(all(feature = "typescript", feature = "mcp")), allow(dead_code))]
fn position(text: &str) -> Option<(usize, usize)> {
    let number = |s: &str| -> Option<(usize, usize)> {
        let digits = s.bytes().take_while(u8::is_ascii_digit).count();
        Some((s.get(..digits)?.parse().ok()?, digits))
    };
    let syntax = text.find("(line ").and_then(|i| {
        let rest = &text[i + 6..];
        let (line, n) = number(rest)?;
        let (column, _) = number(rest[n..].strip_prefix(", column ")?)?;
        Some((i, line, column))
    });
    let frame = text.find("<program>:").and_then(|i| {
        let rest = &text[i + 10..];
        let (line, n) = number(rest)?;
        let (column, _) = number(rest[n..].strip_prefix(':')?)?;
        Some((i, line, column))
    });
    let first = match (syntax, frame) {
        (Some(a), Some(b)) => Some(if a.0 <= b.0 { a } else { b }),
        (a, b) => a.or(b),
    }?;
    Some((first.1, first.2)).filter(|(l, c)| *l >= 1 && *c >= 1)
}

/// The program's `line` with a caret under `column`, as rustc and node show a failure: at most
/// 100 characters of the line around the column, escaped for a terminal.
#[cfg_attr(not(all(feature = "typescript", feature = "mcp")), allow(dead_code))]
fn excerpt(program: &str, line: usize, column: usize) -> Option<String> {
    const WIDTH: usize = 100;
    let text = program.split('\n').nth(line - 1)?.trim_end_matches('\r');
    let chars: Vec<char> = text.chars().collect();
    let at = (column - 1).min(chars.len());
    let start = at.saturating_sub(WIDTH / 2);
    let end = (start + WIDTH).min(chars.len());
    let shown: String = chars[start..end].iter().collect();
    let shown = crate::io::printable(&shown);
    let lead = if start > 0 { "…" } else { "" };
    let trail = if end < chars.len() { "…" } else { "" };
    let caret_at = lead.chars().count()
        + crate::io::printable(&chars[start..at].iter().collect::<String>())
            .chars()
            .count();
    let gutter = line.to_string().len();
    Some(format!(
        "{pad} --> program:{line}:{column}\n{pad} |\n{line} | {lead}{shown}{trail}\n{pad} | {spaces}^\n",
        pad = " ".repeat(gutter),
        spaces = " ".repeat(caret_at),
    ))
}

/// Where a `--server` is.
#[cfg_attr(not(all(feature = "typescript", feature = "mcp")), allow(dead_code))]
enum Target {
    /// A command line, started and spoken to over stdio.
    Stdio(Vec<String>),
    /// A streamable HTTP endpoint.
    Http(String),
}

#[cfg(all(feature = "typescript", feature = "mcp"))]
async fn connect(
    target: &Target,
    token: Option<&str>,
) -> Result<dsh_tools::mcp::McpImport, String> {
    use dsh_tools::mcp::McpImport;
    match target {
        Target::Stdio(words) => {
            let mut command = tokio::process::Command::new(&words[0]);
            command.args(&words[1..]).kill_on_drop(true);
            McpImport::connect_stdio(command)
                .await
                .map_err(|e| e.to_string())
        }
        #[cfg(feature = "mcp-http")]
        Target::Http(url) => match token {
            Some(token) => McpImport::with_limits(Default::default())
                .connect_http_bearer(url, token)
                .await
                .map_err(|e| e.to_string()),
            None => McpImport::connect_http(url)
                .await
                .map_err(|e| e.to_string()),
        },
        #[cfg(not(feature = "mcp-http"))]
        Target::Http(_) => {
            let _ = token;
            Err("an HTTP server needs the CLI built with --features mcp-http".to_owned())
        }
    }
}

/// The token in `var`: set, not empty, one line.
#[cfg_attr(not(all(feature = "typescript", feature = "mcp")), allow(dead_code))]
fn bearer_token(var: &str) -> Result<String, InputError> {
    let shown = crate::io::printable(var);
    match std::env::var(var) {
        Err(std::env::VarError::NotPresent) => Err(InputError(format!(
            "--bearer-env {shown}: the variable is not set"
        ))),
        Err(std::env::VarError::NotUnicode(_)) => Err(InputError(format!(
            "--bearer-env {shown}: the variable is not text"
        ))),
        Ok(token) if token.trim().is_empty() => Err(InputError(format!(
            "--bearer-env {shown}: the variable is empty"
        ))),
        Ok(token) if token.trim().contains(char::is_control) => Err(InputError(format!(
            "--bearer-env {shown}: the token holds control characters"
        ))),
        Ok(token) => Ok(token.trim().to_owned()),
    }
}

/// `NAME=CMD`'s name and command; `None` and the whole text when it does not start with a name
/// (a letter, then letters, digits or `_`) and `=`.
#[cfg_attr(not(all(feature = "typescript", feature = "mcp")), allow(dead_code))]
fn server_name(server: &str) -> (Option<&str>, &str) {
    let Some((name, line)) = server.split_once('=') else {
        return (None, server);
    };
    let named = name.starts_with(|c: char| c.is_ascii_alphabetic())
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        && !line.trim().is_empty();
    if named {
        (Some(name), line)
    } else {
        (None, server)
    }
}

#[cfg(not(all(feature = "typescript", feature = "mcp")))]
fn run_program(_: &[String], _: RunOptions, _: String) -> Result<u8, InputError> {
    Err(InputError(
        "`code run` needs the engine and MCP: build with --features cli,typescript,mcp".into(),
    ))
}

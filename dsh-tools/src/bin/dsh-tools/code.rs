//! `dsh-tools code types|sdk|run`: what a model is shown in Code Mode, and running a program
//! against the tools of MCP servers.

use crate::io::{InputError, out, read_json};
use clap::Subcommand;
use dsh_tools::code::{SdkTool, foreign_tool, render_overlap, render_sdk, schema_to_ts};
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
    /// Print the SDK section a program is shown: for the tools of a JSON file, or (`--server`)
    /// for the tools of MCP servers exactly as `code run` imports them. Schemas are converted
    /// as the importer converts them; what the SDK cannot show is named on standard error, per
    /// tool, with its path. `--trust-hints` also applies to TOOLS: the closing section on
    /// what overlaps then counts the MCP tools marked `readOnlyHint`, as `code run` would.
    Sdk {
        /// The tools (`-` for standard input): a JSON array of `{name, description?,
        /// parameters, output?}`, or an MCP `tools/list` result (`{"tools": [{name,
        /// description?, inputSchema, outputSchema?}]}`, or its array), typed as an imported
        /// call's value. Not with `--server`.
        tools: Option<String>,
        #[command(flatten)]
        servers: crate::servers::ServerArgs,
        /// Fail (exit 1, no SDK printed) when a schema had something the SDK cannot show.
        #[arg(long)]
        strict: bool,
    },
    /// Run a program in the sandbox against the tools of MCP servers; print the `run_code`
    /// result text. Exit 0 when the run succeeded, 1 when it failed.
    Run {
        #[command(flatten)]
        servers: crate::servers::ServerArgs,
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
        CodeCommand::Sdk {
            tools,
            servers,
            strict,
        } => match (tools, servers.servers.is_empty()) {
            (Some(_), false) => Err(InputError("give TOOLS or --server, not both".into())),
            (None, true) => Err(InputError("give TOOLS (a file or -) or --server".into())),
            (Some(tools), true) => {
                if servers.bearer_env.is_some() {
                    return Err(InputError("--bearer-env goes with --server".into()));
                }
                let doc = read_json(&tools, stdin_used)?;
                file_sdk(&doc, strict, servers.trust_hints)
            }
            (None, false) => server_sdk(&servers, strict),
        },
        CodeCommand::Run {
            servers,
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
            };
            run_program(&servers, run_options, program)
        }
    }
}

/// `code sdk TOOLS`: each tool converted as the importer converts it, and which may overlap as
/// `code run` would import them (an MCP tool marked `readOnlyHint`, under `--trust-hints`).
fn file_sdk(doc: &Value, strict: bool, trust_hints: bool) -> Result<u8, InputError> {
    const SHAPE: &str = "TOOLS must be a JSON array of {name, description?, parameters, output?} \
                         or an MCP tools/list result ({\"tools\": [...]})";
    let items = match doc {
        Value::Array(items) => items,
        Value::Object(map) => match map.get("tools") {
            Some(Value::Array(items)) => items,
            _ => return Err(InputError(SHAPE.into())),
        },
        _ => return Err(InputError(SHAPE.into())),
    };
    let mut shown = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        let field = |key: &str| item.get(key);
        let name = field("name").and_then(Value::as_str);
        let description = match field("description") {
            None | Some(Value::Null) => Some(""),
            Some(d) => d.as_str(),
        };
        // An MCP tool names its schemas `inputSchema` / `outputSchema`.
        let (parameters, output, mcp) = match field("inputSchema") {
            Some(input) => (Some(input), field("outputSchema"), true),
            None => (field("parameters"), field("output"), false),
        };
        let (Some(name), Some(description), Some(parameters)) = (name, description, parameters)
        else {
            return Err(InputError(format!(
                "TOOLS[{i}] needs a string \"name\" and \"parameters\" (or \"inputSchema\"); \
                 \"description\", if given, a string"
            )));
        };
        let output = output.filter(|o| !o.is_null());
        let read_only = mcp
            && trust_hints
            && item.pointer("/annotations/readOnlyHint") == Some(&Value::Bool(true));
        shown.push((
            name,
            description,
            foreign_tool(parameters, output, mcp),
            read_only,
        ));
    }
    let mut dropped = 0;
    for (name, _, tool, _) in &shown {
        for what in &tool.dropped {
            dropped += 1;
            crate::servers::warn_dropped(name, what);
        }
    }
    if strict && dropped > 0 {
        return Ok(strict_failure(dropped));
    }
    let tools: Vec<SdkTool<'_>> = shown
        .iter()
        .map(|(name, description, tool, _)| SdkTool {
            name,
            description,
            parameters: &tool.parameters,
            output: &tool.output,
        })
        .collect();
    let overlap: Vec<(&str, bool)> = shown.iter().map(|t| (t.0, t.3)).collect();
    if overlap.is_empty() {
        out!("{}", render_sdk(&tools));
    } else {
        out!("{}\n\n{}", render_sdk(&tools), render_overlap(&overlap));
    }
    Ok(0)
}

/// `--strict`'s failure, after the list on standard error: exit 1, nothing printed.
fn strict_failure(dropped: usize) -> u8 {
    crate::io::warn(&format!(
        "--strict: the SDK leaves out {dropped} part{} of the tools' schemas (listed above)",
        if dropped == 1 { "" } else { "s" }
    ));
    1
}

/// `code sdk --server`: the SDK section of a registry the servers' tools were imported into,
/// as `code run` builds it.
#[cfg(all(feature = "typescript", feature = "mcp"))]
fn server_sdk(args: &crate::servers::ServerArgs, strict: bool) -> Result<u8, InputError> {
    use dsh_tools::Registry;
    use dsh_tools::code::CodeRuntimeConfig;
    use dsh_tools::code::quickjs::QuickJsRuntime;
    use dsh_tools::registry::PresentationMode;

    let (servers, token) = crate::servers::parse(args)?;
    let engine =
        QuickJsRuntime::new(CodeRuntimeConfig::default()).map_err(|e| InputError(e.to_string()))?;
    crate::servers::runtime()?.block_on(async move {
        let registry = Registry::new();
        let (connections, dropped) = crate::servers::import_all(
            &registry,
            &servers,
            token.as_deref(),
            args.trust_hints,
            true,
        )
        .await?;
        if strict && dropped > 0 {
            return Ok(strict_failure(dropped));
        }
        registry.set_presentation_mode(PresentationMode::Code);
        registry.set_code_runtime(engine);
        let sections = registry
            .code_prompt_sections(None)
            .map_err(|e| InputError(e.to_string()))?;
        drop(connections);
        // What a program is shown about the tools (not that `run_code` is the only tool).
        let sdk: Vec<String> = sections
            .into_iter()
            .filter(|s| s.id != "tools:code-only")
            .map(|s| s.text)
            .collect();
        out!("{}", sdk.join("\n\n"));
        Ok(0)
    })
}

#[cfg(not(all(feature = "typescript", feature = "mcp")))]
fn server_sdk(_: &crate::servers::ServerArgs, _: bool) -> Result<u8, InputError> {
    Err(InputError(
        "`code sdk --server` needs the engine and MCP: build with --features cli,typescript,mcp"
            .into(),
    ))
}

#[cfg_attr(not(all(feature = "typescript", feature = "mcp")), allow(dead_code))]
struct RunOptions {
    compute_ms: u64,
    wall_ms: u64,
    memory_mb: u64,
}

#[cfg(all(feature = "typescript", feature = "mcp"))]
fn run_program(
    args: &crate::servers::ServerArgs,
    run_options: RunOptions,
    program: String,
) -> Result<u8, InputError> {
    use dsh_tools::code::CodeRuntimeConfig;
    use dsh_tools::code::quickjs::QuickJsRuntime;
    use dsh_tools::registry::PresentationMode;
    use dsh_tools::{CancellationToken, Registry, ToolExecutionInput};

    let (servers, token) = crate::servers::parse(args)?;
    let config = CodeRuntimeConfig {
        compute_ms: run_options.compute_ms as f64,
        max_wall_ms: run_options.wall_ms as f64,
        max_old_generation_size_mb: run_options.memory_mb as f64,
        ..CodeRuntimeConfig::default()
    };
    let engine = QuickJsRuntime::new(config).map_err(|e| InputError(e.to_string()))?;
    crate::servers::runtime()?.block_on(async move {
        let registry = Registry::new();
        let (connections, _) = crate::servers::import_all(
            &registry,
            &servers,
            token.as_deref(),
            args.trust_hints,
            false,
        )
        .await?;
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

#[cfg(not(all(feature = "typescript", feature = "mcp")))]
fn run_program(_: &crate::servers::ServerArgs, _: RunOptions, _: String) -> Result<u8, InputError> {
    Err(InputError(
        "`code run` needs the engine and MCP: build with --features cli,typescript,mcp".into(),
    ))
}

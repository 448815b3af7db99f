//! `dsh-tools`: lint JSON Schemas and author specs without writing Rust.
//!
//! ```text
//! dsh-tools schema check [--json] [--object-root] FILE
//! dsh-tools schema validate [--json] [--root LABEL | --parameters] SCHEMA VALUE
//! dsh-tools dsl compile [--json] (--value | --parameters) FILE
//! dsh-tools provider export --dialect D [--strict] --name N --description TEXT SCHEMA
//! dsh-tools provider lint --dialect D [--strict] [--json] SCHEMA
//! dsh-tools provider restore --dialect D [--strict] SCHEMA ARGS
//! dsh-tools code types [--indent N] SCHEMA
//! dsh-tools code sdk [--strict] (TOOLS | --server [NAME=]CMD... [--trust-hints] [--bearer-env VAR])
//! dsh-tools code run [--server [NAME=]CMD]... [--trust-hints] [--bearer-env VAR] [--compute-ms N] [--wall-ms N] [--memory-mb N] PROGRAM
//! dsh-tools tools search [--limit N] [--json] TOOLS QUERY
//! ```
//!
//! `code run` and `code sdk --server` need the features `typescript` and `mcp` besides `cli`.
//!
//! Exit status: 0 supported / valid / compiled / portable / run succeeded / found, 1 not, 2 usage errors, unreadable
//! input or invalid JSON (one line on standard error). A `FILE` of `-` reads standard input.
//! `D` is one of `openai-chat`, `openai-responses`, `anthropic`, `gemini`, `gemini-openapi`,
//! `deepseek`.

mod code;
mod dsl;
mod io;
mod provider;
mod schema;
mod servers;
mod tools;

use clap::{Parser, Subcommand};
use io::{DEFAULT_MAX_INPUT_BYTES, InputError, MAX_INPUT, OUTPUT, printable};
use std::io::Write;
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    name = "dsh-tools",
    version,
    about = "Lint JSON Schemas and author specs for dsh-tools"
)]
struct Cli {
    /// Largest input file accepted, in bytes (default 16 MiB; `0` for no limit).
    #[arg(long, global = true, value_name = "BYTES", default_value_t = DEFAULT_MAX_INPUT_BYTES)]
    max_input_bytes: u64,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// JSON Schema subset checks and validation.
    #[command(subcommand)]
    Schema(schema::SchemaCommand),
    /// The author DSL.
    #[command(subcommand)]
    Dsl(dsl::DslCommand),
    /// Model-provider dialects: export, lint, restore.
    #[command(subcommand)]
    Provider(provider::ProviderCommand),
    /// Code Mode: the SDK text a model is shown, and running a program against MCP servers.
    #[command(subcommand)]
    Code(code::CodeCommand),
    /// Tool lists: which tools a search finds.
    #[command(subcommand)]
    Tools(tools::ToolsCommand),
}

fn run(cli: Cli) -> Result<u8, InputError> {
    let mut stdin_used = false;
    match cli.command {
        Command::Schema(command) => schema::run(command, &mut stdin_used),
        Command::Dsl(command) => dsl::run(command, &mut stdin_used),
        Command::Provider(command) => provider::run(command, &mut stdin_used),
        Command::Code(command) => code::run(command, &mut stdin_used),
        Command::Tools(command) => tools::run(command, &mut stdin_used),
    }
}

fn main() -> ExitCode {
    ExitCode::from(cli_main(std::env::args_os(), &mut std::io::stdout()))
}

/// The whole CLI: parses `args` (the program name first), runs, writes the output to `out` at
/// the end and messages to standard error; returns the exit status (0 ok, 1 violations found,
/// 2 bad usage, unreadable input or unwritable output). Also the fuzz target's entry.
pub(crate) fn cli_main<I, T>(args: I, out: &mut dyn Write) -> u8
where
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString> + Clone,
{
    OUTPUT.with(|o| o.borrow_mut().clear());
    let cli = match Cli::try_parse_from(args) {
        Ok(cli) => cli,
        Err(e) => {
            // `--help` and `--version` are not errors; a closed stream is not worth a panic.
            let _ = e.print();
            return u8::from(e.use_stderr()) * 2;
        }
    };
    MAX_INPUT.with(|m| m.set(cli.max_input_bytes));
    let code = match run(cli) {
        Ok(code) => code,
        Err(InputError(message)) => {
            OUTPUT.with(|o| o.borrow_mut().clear());
            // Standard error may be closed too: nothing left to tell then.
            let _ = writeln!(
                std::io::stderr(),
                "dsh-tools: {}",
                printable(&message.replace('\n', " "))
            );
            return 2;
        }
    };
    let text = OUTPUT.with(|o| std::mem::take(&mut *o.borrow_mut()));
    if let Err(e) = out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        let _ = writeln!(std::io::stderr(), "dsh-tools: cannot write the output: {e}");
        return 2;
    }
    code
}

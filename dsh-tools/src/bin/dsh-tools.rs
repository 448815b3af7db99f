//! `dsh-tools`: lint JSON Schemas and author specs without writing Rust.
//!
//! ```text
//! dsh-tools schema check [--json] [--object-root] FILE
//! dsh-tools schema validate [--json] [--root LABEL | --parameters] SCHEMA VALUE
//! dsh-tools dsl compile [--json] (--value | --parameters) FILE
//! dsh-tools provider export --dialect D [--strict] --name N --description TEXT SCHEMA
//! dsh-tools provider lint --dialect D [--strict] [--json] SCHEMA
//! dsh-tools provider restore --dialect D [--strict] SCHEMA ARGS
//! ```
//!
//! Exit status: 0 supported / valid / compiled / portable, 1 not, 2 usage errors, unreadable
//! input or invalid JSON (one line on standard error). A `FILE` of `-` reads standard input.
//! `D` is one of `openai-chat`, `openai-responses`, `anthropic`, `gemini`, `gemini-openapi`,
//! `deepseek`.

use clap::{Args, Parser, Subcommand};
use dsh_tools::json::{drop_deep, to_compact_string};
use dsh_tools::provider::{self, Dialect, Problem};
use dsh_tools::schema::dsl::{compile_parameter_spec, compile_value_spec};
use dsh_tools::schema::{CompiledSchema, Root, assert_object_schema, assert_supported};
use serde::Deserialize;
use serde_json::Value;
use std::io::{Read, Write};
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

/// The default input-size limit: 16 MiB. Parsing needs memory proportional to the input, and
/// more per level of nesting (the parser's stack grows on the heap).
const DEFAULT_MAX_INPUT_BYTES: u64 = 16 << 20;

thread_local! {
    /// Everything printed to standard output, written once at the end (so a closed or full
    /// standard output is an error we report, never a panic).
    static OUTPUT: std::cell::RefCell<String> = const { std::cell::RefCell::new(String::new()) };
    /// The input-size limit of this run.
    static MAX_INPUT: std::cell::Cell<u64> = const { std::cell::Cell::new(DEFAULT_MAX_INPUT_BYTES) };
}

/// Appends one line to the output.
macro_rules! out {
    ($($arg:tt)*) => {
        OUTPUT.with(|o| {
            use std::fmt::Write as _;
            let mut o = o.borrow_mut();
            let _ = writeln!(o, $($arg)*);
        })
    };
}

/// Text for a terminal: control characters (escape sequences, bells, newlines inside a name)
/// written as `\u{..}` escapes, so input can never drive the terminal.
fn printable(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if c.is_control() {
            out.push_str(&c.escape_unicode().to_string());
        } else {
            out.push(c);
        }
    }
    out
}

/// A parsed document, freed without recursion whatever path drops it.
struct Doc(Value);

impl std::ops::Deref for Doc {
    type Target = Value;
    fn deref(&self) -> &Value {
        &self.0
    }
}

impl std::ops::DerefMut for Doc {
    fn deref_mut(&mut self) -> &mut Value {
        &mut self.0
    }
}

impl Drop for Doc {
    fn drop(&mut self) {
        drop_deep(std::mem::take(&mut self.0));
    }
}

#[derive(Subcommand)]
enum Command {
    /// JSON Schema subset checks and validation.
    #[command(subcommand)]
    Schema(SchemaCommand),
    /// The author DSL.
    #[command(subcommand)]
    Dsl(DslCommand),
    /// Model-provider dialects: export, lint, restore.
    #[command(subcommand)]
    Provider(ProviderCommand),
}

#[derive(Args)]
struct DialectArgs {
    /// openai-chat, openai-responses, anthropic, gemini, gemini-openapi or deepseek.
    #[arg(long, value_parser = parse_dialect)]
    dialect: Dialect,
    /// The provider's strict mode.
    #[arg(long)]
    strict: bool,
}

impl DialectArgs {
    fn dialect(&self) -> Dialect {
        if self.strict {
            Dialect::strict(self.dialect.provider())
        } else {
            self.dialect
        }
    }
}

fn parse_dialect(s: &str) -> Result<Dialect, String> {
    s.parse::<Dialect>().map_err(|e| e.to_string())
}

#[derive(Subcommand)]
enum ProviderCommand {
    /// Print the provider's tool entry for a parameters schema.
    Export {
        #[command(flatten)]
        dialect: DialectArgs,
        /// The tool's name.
        #[arg(long)]
        name: String,
        /// The tool's description.
        #[arg(long)]
        description: String,
        /// The parameters schema (`-` for standard input).
        schema: String,
    },
    /// List, per path, what the provider would reject, drop or loosen.
    Lint {
        #[command(flatten)]
        dialect: DialectArgs,
        #[command(flatten)]
        output: Output,
        /// The parameters schema (`-` for standard input).
        schema: String,
    },
    /// Map arguments produced under the exported schema back to SCHEMA's, and print them.
    Restore {
        #[command(flatten)]
        dialect: DialectArgs,
        /// The parameters schema (`-` for standard input).
        schema: String,
        /// The arguments (`-` for standard input).
        args: String,
    },
}

#[derive(Subcommand)]
enum SchemaCommand {
    /// Is FILE a schema of the supported subset? Lists every violation.
    Check {
        #[command(flatten)]
        output: Output,
        /// Apply the structured-output assertion: the root must be `{"type": "object"}`.
        #[arg(long)]
        object_root: bool,
        /// The schema (`-` for standard input).
        file: String,
    },
    /// Validate VALUE against SCHEMA, listing every violation with its path.
    Validate {
        #[command(flatten)]
        output: Output,
        /// The label paths start with (default `value`).
        #[arg(long, value_name = "LABEL", conflicts_with = "parameters")]
        root: Option<String>,
        /// Parameter-root mode, as for tool arguments (`missing required property "path"`).
        #[arg(long)]
        parameters: bool,
        /// The schema (`-` for standard input).
        schema: String,
        /// The value (`-` for standard input).
        value: String,
    },
}

#[derive(Subcommand)]
enum DslCommand {
    /// Compile an author spec into its JSON Schema.
    Compile {
        #[command(flatten)]
        output: Output,
        #[command(flatten)]
        kind: Kind,
        /// The spec (`-` for standard input).
        file: String,
    },
}

#[derive(Args)]
struct Output {
    /// Print one JSON object instead of text for people.
    #[arg(long)]
    json: bool,
}

#[derive(Args)]
#[group(required = true, multiple = false)]
struct Kind {
    /// FILE is a value spec (`ValueSchemaSpec`).
    #[arg(long)]
    value: bool,
    /// FILE is a parameter spec (`ParameterSchemaSpec`).
    #[arg(long)]
    parameters: bool,
}

/// Input that could not be read or parsed: exit status 2.
struct InputError(String);

/// Reads and parses one JSON document, without a nesting limit (schemas and values of any depth
/// are checked iteratively; parsing grows the stack on the heap as it needs).
fn read_json(path: &str, stdin_used: &mut bool) -> Result<Doc, InputError> {
    let name = if path == "-" {
        "standard input".to_owned()
    } else {
        printable(path)
    };
    let limit = MAX_INPUT.with(std::cell::Cell::get);
    let reader: Box<dyn Read> = if path == "-" {
        if std::mem::replace(stdin_used, true) {
            return Err(InputError("standard input can be read only once".into()));
        }
        Box::new(std::io::stdin())
    } else {
        Box::new(
            std::fs::File::open(path)
                .map_err(|e| InputError(format!("cannot read {name}: {e}")))?,
        )
    };
    let mut text = String::new();
    let cap = if limit == 0 { u64::MAX } else { limit + 1 };
    reader
        .take(cap)
        .read_to_string(&mut text)
        .map_err(|e| InputError(format!("cannot read {name}: {e}")))?;
    if limit != 0 && text.len() as u64 > limit {
        return Err(InputError(format!(
            "{name} is larger than {limit} bytes (raise the limit with --max-input-bytes)"
        )));
    }
    let mut de = serde_json::Deserializer::from_str(&text);
    de.disable_recursion_limit();
    let value = Value::deserialize(serde_stacker::Deserializer::new(&mut de))
        .map_err(|e| InputError(format!("{name} is not valid JSON: {e}")))?;
    // Owned from here on: freed without recursion on every path, errors included.
    let doc = Doc(value);
    de.end()
        .map_err(|e| InputError(format!("{name} is not valid JSON: {e}")))?;
    Ok(doc)
}

/// Indented JSON for people; compact past a nesting depth where the recursive pretty printer
/// would need a deep stack.
fn pretty(value: &Value) -> String {
    let mut depth = 0;
    let mut level: Vec<&Value> = vec![value];
    while !level.is_empty() && depth <= 64 {
        level = level
            .into_iter()
            .flat_map(|v| match v {
                Value::Array(items) => items.iter().collect::<Vec<_>>(),
                Value::Object(map) => map.values().collect(),
                _ => Vec::new(),
            })
            .collect();
        depth += 1;
    }
    if depth <= 64 {
        serde_json::to_string_pretty(value).unwrap_or_else(|_| to_compact_string(value))
    } else {
        to_compact_string(value)
    }
}

fn json_list(items: &[String]) -> String {
    to_compact_string(&Value::from(items.to_vec()))
}

/// Prints the result and returns the exit status (0 when `ok`).
fn report(json: bool, ok: bool, key: &str, violations: &[String], good: &str) -> u8 {
    if json {
        out!(
            "{{\"{key}\":{ok},\"violations\":{}}}",
            json_list(violations)
        );
    } else if ok {
        out!("{good}");
    } else {
        for v in violations {
            out!("{}", printable(v));
        }
    }
    if ok { 0 } else { 1 }
}

fn run(cli: Cli) -> Result<u8, InputError> {
    let mut stdin_used = false;
    Ok(match cli.command {
        Command::Provider(command) => return run_provider(command, &mut stdin_used),
        Command::Schema(SchemaCommand::Check {
            output,
            object_root,
            file,
        }) => {
            let schema = read_json(&file, &mut stdin_used)?;
            let result = if object_root {
                assert_object_schema(&schema)
            } else {
                assert_supported(&schema)
            };
            drop(schema);
            let violations = result
                .err()
                .map(|e| e.into_violations())
                .unwrap_or_default();
            report(
                output.json,
                violations.is_empty(),
                "supported",
                &violations,
                "supported",
            )
        }
        Command::Schema(SchemaCommand::Validate {
            output,
            root,
            parameters,
            schema,
            value,
        }) => {
            let schema_json = read_json(&schema, &mut stdin_used)?;
            let value = read_json(&value, &mut stdin_used)?;
            let compiled = CompiledSchema::compile(&schema_json);
            drop(schema_json);
            let compiled = match compiled {
                Ok(c) => c,
                Err(e) => return Err(InputError(format!("{schema}: {e}"))),
            };
            let root = match (&root, parameters) {
                (_, true) => Root::Parameters,
                (Some(label), false) => Root::Label(label),
                (None, false) => Root::Value,
            };
            let violations = compiled.validate_at(&value, root);
            drop(value);
            report(
                output.json,
                violations.is_empty(),
                "valid",
                &violations,
                "valid",
            )
        }
        Command::Dsl(DslCommand::Compile { output, kind, file }) => {
            let spec = read_json(&file, &mut stdin_used)?;
            let result = if kind.value {
                compile_value_spec(&spec)
            } else {
                compile_parameter_spec(&spec)
            };
            drop(spec);
            match result {
                Ok(schema) => {
                    if output.json {
                        out!("{{\"ok\":true,\"schema\":{}}}", to_compact_string(&schema));
                    } else {
                        out!("{}", pretty(&schema));
                    }
                    drop_deep(schema);
                    0
                }
                Err(e) => {
                    if output.json {
                        out!(
                            "{{\"ok\":false,\"error\":{}}}",
                            to_compact_string(&Value::from(e.to_string()))
                        );
                    } else {
                        out!("{}", printable(&e.to_string()));
                    }
                    1
                }
            }
        }
    })
}

fn problems_text(problems: &[Problem]) -> String {
    let lines: Vec<String> = problems
        .iter()
        .map(|p| printable(&format!("{}: {}", p.path, p.message)))
        .collect();
    lines.join("\n")
}

fn run_provider(command: ProviderCommand, stdin_used: &mut bool) -> Result<u8, InputError> {
    Ok(match command {
        ProviderCommand::Export {
            dialect,
            name,
            description,
            schema,
        } => {
            let parameters = read_json(&schema, stdin_used)?;
            let result = provider::export_tool(&name, &description, &parameters, dialect.dialect());
            drop(parameters);
            match result {
                Ok(entry) => {
                    out!("{}", pretty(&entry));
                    drop_deep(entry);
                    0
                }
                Err(problems) => {
                    out!("{}", problems_text(&problems));
                    1
                }
            }
        }
        ProviderCommand::Lint {
            dialect,
            output,
            schema,
        } => {
            let parameters = read_json(&schema, stdin_used)?;
            let issues = provider::lint(&parameters, dialect.dialect());
            drop(parameters);
            let portable = issues.is_empty();
            if output.json {
                let body = serde_json::json!({"portable": portable, "issues": issues});
                out!("{}", to_compact_string(&body));
            } else if portable {
                out!("portable to {}", dialect.dialect());
            } else {
                out!("{}", problems_text(&issues));
            }
            if portable { 0 } else { 1 }
        }
        ProviderCommand::Restore {
            dialect,
            schema,
            args,
        } => {
            let parameters = read_json(&schema, stdin_used)?;
            let mut arguments = read_json(&args, stdin_used)?;
            let result =
                provider::restore_arguments(&parameters, dialect.dialect(), &mut arguments);
            drop(parameters);
            match result {
                Ok(()) => {
                    out!("{}", to_compact_string(&arguments));
                    drop(arguments);
                    0
                }
                Err(problems) => {
                    drop(arguments);
                    out!("{}", problems_text(&problems));
                    1
                }
            }
        }
    })
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

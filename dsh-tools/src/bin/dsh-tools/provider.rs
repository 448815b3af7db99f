//! `dsh-tools provider export|lint|restore|stream`: the provider dialects from the command line.

use crate::io::{InputError, Output, out, pretty, printable, read_json};
use clap::{Args, Subcommand};
use dsh_tools::json::{drop_deep, to_compact_string};
use dsh_tools::provider::ProviderExport;
use dsh_tools::provider::{self, Dialect, Problem};

#[derive(Args)]
pub(crate) struct DialectArgs {
    /// openai-chat, openai-responses, anthropic, gemini, gemini-openapi or deepseek.
    #[arg(long, value_parser = parse_dialect)]
    pub(crate) dialect: Dialect,
    /// The provider's strict mode.
    #[arg(long)]
    pub(crate) strict: bool,
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

pub(crate) fn parse_dialect(s: &str) -> Result<Dialect, String> {
    s.parse::<Dialect>().map_err(|e| e.to_string())
}

#[derive(Subcommand)]
pub(crate) enum ProviderCommand {
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
    /// Assemble the tool calls of a streamed reply: EVENTS holds one stream event a line (an
    /// SSE `data:` payload; `data: ` prefixes, `event:` lines and `[DONE]` are skipped). Prints
    /// the calls as one JSON array of `{name, provider_name, call_id, provider_call_id,
    /// arguments}` (or `error` in place of `arguments`), in model order. Exit 1 when the
    /// stream ends inside a call or has events for calls that never started.
    Stream {
        #[command(flatten)]
        dialect: DialectArgs,
        /// Instead, one JSON line per partial state: `{provider_call_id, name, partial}`.
        #[arg(long)]
        partials: bool,
        /// The events, a JSON payload a line (`-` for standard input).
        events: String,
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

pub(crate) fn problems_text(problems: &[Problem]) -> String {
    let lines: Vec<String> = problems
        .iter()
        .map(|p| printable(&format!("{}: {}", p.path, p.message)))
        .collect();
    lines.join("\n")
}

pub(crate) fn run(command: ProviderCommand, stdin_used: &mut bool) -> Result<u8, InputError> {
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
        ProviderCommand::Stream {
            dialect,
            partials,
            events,
        } => stream(dialect.dialect(), partials, &events, stdin_used)?,
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

/// `provider stream`: the calls of a recorded stream (see [`ProviderCommand::Stream`]).
fn stream(
    dialect: Dialect,
    partials: bool,
    path: &str,
    stdin_used: &mut bool,
) -> Result<u8, InputError> {
    use serde_json::{Value, json};
    let text = crate::io::read_text(path, stdin_used)?;
    // No registry: names are mapped by nothing, so ours are the provider's.
    let tools = dsh_tools::Registry::new()
        .provider_tools(None, dialect)
        .map_err(|e| InputError(e.to_string()))?;
    let mut stream = tools.call_stream();
    let mut status = 0;
    for (n, line) in text.lines().enumerate() {
        let line = line.trim();
        let line = line.strip_prefix("data:").map_or(line, str::trim_start);
        if line.is_empty()
            || line == "[DONE]"
            || line.starts_with("event:")
            || line.starts_with(':')
        {
            continue;
        }
        let event: Value = serde_json::from_str(line)
            .map_err(|e| InputError(format!("line {} is not a JSON event: {e}", n + 1)))?;
        let updates = match stream.feed(&event) {
            Ok(updates) => updates,
            Err(e) => {
                eprintln!("line {}: {}", n + 1, printable(&e.to_string()));
                status = 1;
                Vec::new()
            }
        };
        drop_deep(event);
        if partials {
            for update in updates {
                if let provider::StreamUpdate::Grew(i) = update {
                    let call = &stream.calls()[i];
                    let line = json!({"provider_call_id": call.provider_call_id(),
                        "name": call.provider_name(), "partial": call.partial()});
                    out!("{}", to_compact_string(&line));
                    drop_deep(line);
                }
            }
        }
    }
    let calls = match stream.finish() {
        Ok(calls) => calls,
        Err(e) => {
            eprintln!("{}", printable(&e.to_string()));
            return Ok(1);
        }
    };
    if !partials {
        let list: Vec<Value> = calls
            .iter()
            .map(|c| {
                let mut entry = json!({"name": c.name(), "provider_name": c.provider_name(),
                    "call_id": c.call_id(), "provider_call_id": c.provider_call_id()});
                match (c.arguments(), c.error()) {
                    (Some(arguments), _) => {
                        entry["arguments"] = dsh_tools::json::clone_deep(arguments)
                    }
                    (None, Some(error)) => entry["error"] = json!(error.message()),
                    (None, None) => {}
                }
                entry
            })
            .collect();
        let list = Value::Array(list);
        out!("{}", to_compact_string(&list));
        drop_deep(list);
    }
    Ok(status)
}

//! `dsh-tools provider export|lint|restore`: the provider dialects from the command line.

use crate::io::{InputError, Output, out, pretty, printable, read_json};
use clap::{Args, Subcommand};
use dsh_tools::json::{drop_deep, to_compact_string};
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

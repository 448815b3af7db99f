//! `dsh-tools dsl compile`: author specs to JSON Schema.

use crate::io::{InputError, Kind, Output, out, pretty, printable, read_json};
use clap::Subcommand;
use dsh_tools::json::{drop_deep, to_compact_string};
use dsh_tools::schema::dsl::{compile_parameter_spec, compile_value_spec};
use serde_json::Value;

#[derive(Subcommand)]
pub(crate) enum DslCommand {
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

pub(crate) fn run(command: DslCommand, stdin_used: &mut bool) -> Result<u8, InputError> {
    Ok(match command {
        DslCommand::Compile { output, kind, file } => {
            let spec = read_json(&file, stdin_used)?;
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

//! `dsh-tools schema check|validate`: the supported subset, and validation with every
//! violation listed.

use crate::io::{InputError, Output, read_json, report};
use clap::Subcommand;
use dsh_tools::schema::{CompiledSchema, Root, assert_object_schema, assert_supported};

#[derive(Subcommand)]
pub(crate) enum SchemaCommand {
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

pub(crate) fn run(command: SchemaCommand, stdin_used: &mut bool) -> Result<u8, InputError> {
    Ok(match command {
        SchemaCommand::Check {
            output,
            object_root,
            file,
        } => {
            let schema = read_json(&file, stdin_used)?;
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
        SchemaCommand::Validate {
            output,
            root,
            parameters,
            schema,
            value,
        } => {
            let schema_json = read_json(&schema, stdin_used)?;
            let value = read_json(&value, stdin_used)?;
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
    })
}

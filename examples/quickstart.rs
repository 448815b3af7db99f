//! The schema core, end to end: a Rust argument type becomes the model-facing JSON Schema, a
//! model's arguments are validated against it (every violation, with its path), and a tool
//! defined at run time from a config file gets the same treatment through the author DSL.
//!
//! Run it with `cargo run --example quickstart`.

use dsh_tools::json::to_compact_string;
use dsh_tools::schema::dsl::ParameterSchemaSpec;
use dsh_tools::schema::{CompiledSchema, OutputSchema, Root, ToolArgsError, bridge};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

/// Arguments of a `read_file` tool, as an author writes them.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)] // printed with Debug only
struct ReadFileArgs {
    /// Absolute file path
    path: String,
    /// First line to read, 1-based
    offset: Option<u32>,
    /// How many lines to read
    limit: Option<u16>,
}

/// What `read_file` returns.
#[derive(Serialize, JsonSchema)]
struct ReadFileOutput {
    lines: Vec<String>,
    total_lines: u32,
}

/// A model's tool call, checked and decoded the way the registry will do it.
fn call_read_file(params: &CompiledSchema, args: &Value) -> Result<ReadFileArgs, ToolArgsError> {
    let violations = params.validate_at(args, Root::Parameters);
    if !violations.is_empty() {
        return Err(ToolArgsError::new(violations));
    }
    // A value that validates always decodes (the bridge's contract, property-tested).
    // `json::decode` reads `2.0` as the integer the schema accepted.
    Ok(dsh_tools::json::decode(args).expect("validated arguments decode"))
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    println!("== 1. The model-facing schema of a Rust type (schemars, through the bridge)");
    let parameters = bridge::schema_for::<ReadFileArgs>()?;
    println!("{}\n", serde_json::to_string_pretty(&parameters)?);
    let params = CompiledSchema::compile(&parameters)?;

    println!("== 2. Arguments from the model");
    let calls = [
        json!({"path": "/etc/hosts", "offset": 1, "limit": 20}),
        json!({"path": "/etc/hosts", "offset": 2.0}),
        json!({"offset": -1, "limit": 70000, "follow": true}),
        json!("read /etc/hosts please"),
    ];
    for args in &calls {
        match call_read_file(&params, args) {
            Ok(decoded) => println!(
                "ok      {}\n        -> {decoded:?}",
                to_compact_string(args)
            ),
            Err(e) => println!(
                "{:<7} {}\n        -> {e}",
                e.code(),
                to_compact_string(args)
            ),
        }
    }

    println!("\n== 3. Output validation");
    let output = OutputSchema::new(&bridge::schema_for::<ReadFileOutput>()?)?;
    let good = serde_json::to_value(ReadFileOutput {
        lines: vec!["127.0.0.1 localhost".into()],
        total_lines: 1,
    })?;
    println!("valid output: {}", output.check("read_file", &good).is_ok());
    let bad = json!({"lines": ["a", 2], "total_lines": -1});
    if let Err(e) = output.check("read_file", &bad) {
        println!("{}: {e}", e.code());
    }

    println!("\n== 4. A tool defined at run time (a plugin's config file, in the author DSL)");
    let config = r#"{
        "query": {"type": "string", "required": true, "description": "What to search for"},
        "max_results": {"type": "integer", "enum": [10, 20, 50]},
        "scope": {"type": "object", "additionalProperties": false,
                  "properties": {"repo": {"type": "string", "required": true}}}
    }"#;
    let spec: ParameterSchemaSpec = serde_json::from_str(config)?;
    let schema = spec.to_json_schema()?;
    println!("{}", to_compact_string(&schema));
    let search = CompiledSchema::compile(&schema)?;
    let args = json!({"max_results": 15, "scope": {"repository": "x"}});
    for violation in search.validate_at(&args, Root::Parameters) {
        println!("  {violation}");
    }

    println!("\n== 5. A config mistake is reported, not ignored");
    let broken = r#"{"query": {"type": "string", "required": "yes"}}"#;
    match serde_json::from_str::<ParameterSchemaSpec>(broken) {
        Ok(_) => println!("unexpectedly accepted"),
        Err(e) => println!("{e}"),
    }
    Ok(())
}

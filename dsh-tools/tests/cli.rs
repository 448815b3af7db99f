//! The `dsh-tools` binary's interface: outputs, exit statuses, standard input, bad input.
#![cfg(feature = "cli")]

use serde_json::{Value, json};
use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Stdio};

struct Run {
    code: i32,
    stdout: String,
    stderr: String,
}

fn run(args: &[&str], stdin: &str) -> Run {
    let mut child = Command::new(env!("CARGO_BIN_EXE_dsh-tools"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the binary starts");
    let mut input = child.stdin.take().unwrap();
    // The binary may exit before reading standard input (a command that takes files only):
    // writing then fails with a broken pipe, which is not the test's concern.
    if let Err(e) = input.write_all(stdin.as_bytes()) {
        assert_eq!(e.kind(), std::io::ErrorKind::BrokenPipe, "{e}");
    }
    drop(input);
    let out = child.wait_with_output().unwrap();
    Run {
        code: out.status.code().unwrap(),
        stdout: String::from_utf8(out.stdout).unwrap(),
        stderr: String::from_utf8(out.stderr).unwrap(),
    }
}

fn json_out(r: &Run) -> Value {
    serde_json::from_str(&r.stdout).unwrap_or_else(|e| panic!("{e}: {:?}", r.stdout))
}

/// A file in a fresh temporary directory, removed with it.
struct TempFile(PathBuf);

impl TempFile {
    fn new(name: &str, text: &str) -> Self {
        let dir = std::env::temp_dir().join(format!("dsh-tools-cli-{}-{name}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join(name);
        std::fs::write(&path, text).unwrap();
        Self(path)
    }

    fn path(&self) -> &str {
        self.0.to_str().unwrap()
    }
}

impl Drop for TempFile {
    fn drop(&mut self) {
        if let Some(dir) = self.0.parent() {
            let _ = std::fs::remove_dir_all(dir);
        }
    }
}

#[test]
fn schema_check_json_and_text() {
    let bad =
        r#"{"type": "object", "format": "x", "properties": {"a": {"type": ["string", "null"]}}}"#;
    let r = run(&["schema", "check", "--json", "-"], bad);
    assert_eq!(r.code, 1);
    let out = json_out(&r);
    assert_eq!(out["supported"], json!(false));
    assert_eq!(out["violations"].as_array().unwrap().len(), 2);
    assert!(
        out["violations"][0]
            .as_str()
            .unwrap()
            .starts_with("schema.format is not a supported keyword")
    );

    let r = run(&["schema", "check", "-"], bad);
    assert_eq!(r.code, 1);
    assert_eq!(r.stdout.lines().count(), 2, "one violation a line");

    let r = run(&["schema", "check", "--json", "-"], r#"{"type": "string"}"#);
    assert_eq!(
        (r.code, json_out(&r)),
        (0, json!({"supported": true, "violations": []}))
    );
}

#[test]
fn schema_check_object_root() {
    let r = run(
        &["schema", "check", "--json", "--object-root", "-"],
        r#"{"type": "string"}"#,
    );
    assert_eq!(r.code, 1);
    assert_eq!(
        json_out(&r)["violations"],
        json!(["schema.type must be \"object\" (structured output is object-rooted)"])
    );
    let r = run(
        &["schema", "check", "--object-root", "-"],
        r#"{"type": "object"}"#,
    );
    assert_eq!((r.code, r.stdout.trim()), (0, "supported"));
}

#[test]
fn schema_validate_modes() {
    let schema = TempFile::new(
        "schema.json",
        r#"{"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}"#,
    );
    let r = run(
        &[
            "schema",
            "validate",
            "--json",
            "--parameters",
            schema.path(),
            "-",
        ],
        "{}",
    );
    assert_eq!(r.code, 1);
    assert_eq!(
        json_out(&r),
        json!({"valid": false, "violations": ["missing required property \"path\""]})
    );

    let r = run(
        &["schema", "validate", "--json", schema.path(), "-"],
        r#"{"path": 1}"#,
    );
    assert_eq!(
        json_out(&r)["violations"],
        json!(["\"value.path\" must be a string"])
    );

    let r = run(
        &["schema", "validate", "--root", "args", schema.path(), "-"],
        r#"{"path": 1}"#,
    );
    assert_eq!(
        (r.code, r.stdout.trim()),
        (1, "\"args.path\" must be a string")
    );

    let r = run(
        &["schema", "validate", schema.path(), "-"],
        r#"{"path": "/a"}"#,
    );
    assert_eq!((r.code, r.stdout.trim()), (0, "valid"));

    let r = run(
        &[
            "schema",
            "validate",
            "--root",
            "x",
            "--parameters",
            schema.path(),
            "-",
        ],
        "{}",
    );
    assert_eq!(r.code, 2, "--root and --parameters conflict");
}

#[test]
fn dsl_compile_outputs() {
    let spec = r#"{"path": {"type": "string", "required": true}}"#;
    let r = run(&["dsl", "compile", "--json", "--parameters", "-"], spec);
    assert_eq!(r.code, 0);
    assert_eq!(
        r.stdout.trim(),
        r#"{"ok":true,"schema":{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}}"#
    );
    let r = run(
        &["dsl", "compile", "--json", "--value", "-"],
        r#"{"type": "object"}"#,
    );
    assert_eq!(r.code, 1);
    assert_eq!(
        json_out(&r),
        json!({"ok": false, "error": "unsupported JSON schema: schema.additionalProperties must be explicitly true or false"})
    );
    let r = run(&["dsl", "compile", "--value", "-"], r#"{"type": "string"}"#);
    assert_eq!(
        serde_json::from_str::<Value>(&r.stdout).unwrap(),
        json!({"type": "string"})
    );
    let r = run(&["dsl", "compile", "-"], spec);
    assert_eq!(r.code, 2, "one of --value / --parameters is required");
}

#[test]
fn unreadable_and_invalid_input_exit_2_with_one_line() {
    let r = run(
        &["schema", "check", "/nonexistent/dsh-tools/schema.json"],
        "",
    );
    assert_eq!(r.code, 2);
    assert_eq!(r.stderr.lines().count(), 1);
    assert!(
        r.stderr
            .starts_with("dsh-tools: cannot read /nonexistent/dsh-tools/schema.json")
    );

    let r = run(&["schema", "check", "-"], "{\"type\": ");
    assert_eq!(r.code, 2);
    assert_eq!(r.stderr.lines().count(), 1);
    assert!(r.stderr.contains("is not valid JSON"), "{}", r.stderr);

    let r = run(&["schema", "check", "-"], "{} {}");
    assert_eq!(r.code, 2, "trailing data is invalid JSON");

    let r = run(&["schema", "validate", "-", "-"], "{}");
    assert_eq!(r.code, 2, "standard input is read once");
}

#[test]
fn deep_documents_are_handled() {
    let depth = 50_000;
    let schema = format!(
        "{}{{}}{}",
        r#"{"type":"array","items":"#.repeat(depth),
        "}".repeat(depth)
    );
    let schema = TempFile::new("deep.json", &schema);
    let value = format!("{}1{}", "[".repeat(depth), "]".repeat(depth));
    let r = run(&["schema", "validate", schema.path(), "-"], &value);
    assert_eq!((r.code, r.stdout.trim()), (0, "valid"), "{}", r.stderr);
    let bad = format!("{}-0{}", "[".repeat(depth), "]".repeat(depth));
    let r = run(&["schema", "validate", "--json", schema.path(), "-"], &bad);
    assert_eq!(r.code, 1);
    // The path is cut in the middle past 4 KiB (`schema::MAX_PATH_BYTES`).
    let violations = json_out(&r)["violations"].clone();
    let v = violations[0].as_str().unwrap();
    assert_eq!(violations.as_array().unwrap().len(), 1);
    assert!(v.starts_with("\"value[0][0][0]"), "{}", &v[..40]);
    assert!(v.contains(" bytes of path)…"));
    assert!(v.ends_with("[0][0]\" must be a lossless JSON value"));
    assert!(v.len() < 8 * 1024);
}

const GREET: &str = r#"{"type": "object", "properties": {
    "name": {"type": "string", "minLength": 1},
    "times": {"type": "integer", "minimum": 1}}, "required": ["name"]}"#;

#[test]
fn provider_export_prints_the_wire_entry() {
    let schema = TempFile::new("greet.json", GREET);
    let r = run(
        &[
            "provider",
            "export",
            "--dialect",
            "openai-chat",
            "--strict",
            "--name",
            "greet",
            "--description",
            "Greet someone.",
            schema.path(),
        ],
        "",
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let entry = json_out(&r);
    assert_eq!(entry["type"], "function");
    assert_eq!(entry["function"]["strict"], true);
    assert_eq!(
        entry["function"]["parameters"]["required"],
        json!(["name", "times"])
    );
    assert_eq!(
        entry["function"]["parameters"]["properties"]["times"],
        json!({"anyOf": [{"type": "integer", "minimum": 1}, {"type": "null"}]})
    );
    let anthropic = run(
        &[
            "provider",
            "export",
            "--dialect",
            "anthropic",
            "--name",
            "greet",
            "--description",
            "d",
            "-",
        ],
        GREET,
    );
    assert_eq!(
        json_out(&anthropic)["input_schema"]["required"],
        json!(["name"])
    );
    // Not expressible: exit 1 with the path and the fix.
    let union = r#"{"oneOf": [{"type": "object"}, {"type": "string"}]}"#;
    let r = run(
        &[
            "provider",
            "export",
            "--dialect",
            "anthropic",
            "--name",
            "u",
            "--description",
            "d",
            "-",
        ],
        union,
    );
    assert_eq!(r.code, 1);
    assert!(r.stdout.starts_with("#: "), "{}", r.stdout);
}

#[test]
fn provider_lint_lists_issues_per_path() {
    let r = run(
        &[
            "provider",
            "lint",
            "--dialect",
            "anthropic",
            "--strict",
            "--json",
            "-",
        ],
        GREET,
    );
    assert_eq!(r.code, 1);
    let out = json_out(&r);
    assert_eq!(out["portable"], false);
    let paths: Vec<&str> = out["issues"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["path"].as_str().unwrap())
        .collect();
    assert_eq!(paths, ["#/properties/name", "#/properties/times"]);
    let r = run(
        &[
            "provider",
            "lint",
            "--dialect",
            "openai-chat",
            "--json",
            "-",
        ],
        GREET,
    );
    assert_eq!(r.code, 0);
    assert_eq!(json_out(&r), json!({"portable": true, "issues": []}));
    let r = run(&["provider", "lint", "--dialect", "mistral", "-"], GREET);
    assert_eq!(r.code, 2, "an unknown dialect is a usage error");
}

#[test]
fn provider_restore_maps_strict_arguments_back_and_they_validate() {
    let schema = TempFile::new("greet-restore.json", GREET);
    let r = run(
        &[
            "provider",
            "restore",
            "--dialect",
            "deepseek",
            "--strict",
            schema.path(),
            "-",
        ],
        r#"{"name": "Ada", "times": null}"#,
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(json_out(&r), json!({"name": "Ada"}));
    let valid = run(
        &["schema", "validate", "--parameters", schema.path(), "-"],
        &r.stdout,
    );
    assert_eq!(valid.code, 0, "{}", valid.stdout);
}

/// `[` × n, `]` × n: a document nested `n` deep.
fn deep_text(n: usize) -> String {
    format!("{}{}", "[".repeat(n), "]".repeat(n))
}

#[test]
fn deep_input_on_error_paths_fails_cleanly() {
    // Trailing garbage after a 200,000-deep value (400 KB).
    let trailing = TempFile::new("deep-trailing.json", &(deep_text(200_000) + "x"));
    let r = run(&["schema", "check", trailing.path()], "");
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert_eq!(r.stderr.lines().count(), 1);
    assert!(r.stderr.contains("trailing characters"), "{}", r.stderr);
    // A deep schema with a missing value file.
    let mut schema = String::new();
    for _ in 0..100_000 {
        schema.push_str(r#"{"type":"array","items":"#);
    }
    schema.push_str(r#"{"type":"string"}"#);
    schema.push_str(&"}".repeat(100_000));
    let deep_schema = TempFile::new("deep-schema.json", &schema);
    let r = run(
        &[
            "schema",
            "validate",
            deep_schema.path(),
            "/nonexistent/value.json",
        ],
        "",
    );
    assert_eq!(r.code, 2, "{}", r.stderr);
    // An unsupported schema with a deep value.
    let unsupported = TempFile::new(
        "unsupported.json",
        r#"{"type": "string", "format": "uuid"}"#,
    );
    let deep_value = TempFile::new("deep-value.json", &deep_text(200_000));
    let r = run(
        &["schema", "validate", unsupported.path(), deep_value.path()],
        "",
    );
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("format"), "{}", r.stderr);
}

/// User values 60,000 levels deep (a 120 KB file) in `default`, `examples` and the arguments
/// of `provider export|lint|restore`: copied, transformed and freed without recursion (the
/// process used to abort on the main thread's 8 MiB stack). The `run` helper unwraps the exit
/// code, so a death by signal fails the test.
#[test]
fn provider_commands_survive_deep_user_values() {
    let deep = deep_text(60_000);
    let default = TempFile::new(
        "deep-default.json",
        &format!(r#"{{"type":"object","properties":{{"a":{{"type":"array","default":{deep}}}}}}}"#),
    );
    let examples = TempFile::new(
        "deep-examples.json",
        &format!(r#"{{"type":"object","properties":{{"a":{{"examples":[{deep}]}}}}}}"#),
    );
    let union = TempFile::new(
        "union.json",
        r#"{"type":"object","properties":{"a":{"anyOf":[{"type":"string"},{"type":"array"}]},"b":{"type":"string"}},"required":["a"]}"#,
    );
    let args = TempFile::new("deep-args.json", &format!(r#"{{"a":{deep}}}"#));
    for dialect in [
        &["--dialect", "anthropic"][..],
        &["--dialect", "openai-chat", "--strict"],
    ] {
        for schema in [&default, &examples] {
            let mut export = vec!["provider", "export"];
            export.extend(dialect);
            export.extend(["--name", "t", "--description", "d", schema.path()]);
            let r = run(&export, "");
            assert!(r.code <= 1, "{export:?}: {} {}", r.code, r.stderr);
            let mut lint = vec!["provider", "lint"];
            lint.extend(dialect);
            lint.push(schema.path());
            let r = run(&lint, "");
            assert!(r.code <= 1, "{lint:?}: {} {}", r.code, r.stderr);
        }
        let mut restore = vec!["provider", "restore"];
        restore.extend(dialect);
        restore.extend([union.path(), args.path()]);
        let r = run(&restore, "");
        assert_eq!(r.code, 0, "{restore:?}: {}", r.stderr);
        assert!(
            r.stdout.starts_with(r#"{"a":[[[["#),
            "{}",
            &r.stdout[..40.min(r.stdout.len())]
        );
    }
}

#[test]
fn a_closed_or_full_standard_output_is_a_clear_error() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_dsh-tools"))
        .args(["schema", "check", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take()); // nobody reads: the write fails with a broken pipe
    let mut input = child.stdin.take().unwrap();
    let _ = input.write_all(br#"{"type": "string"}"#);
    drop(input);
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(
        stderr.starts_with("dsh-tools: cannot write the output"),
        "{stderr}"
    );
    if let Ok(full) = std::fs::OpenOptions::new().write(true).open("/dev/full") {
        let out = Command::new(env!("CARGO_BIN_EXE_dsh-tools"))
            .args(["dsl", "compile", "--json", "--value", "-"])
            .stdin(Stdio::piped())
            .stdout(Stdio::from(full))
            .stderr(Stdio::piped())
            .spawn()
            .and_then(|mut c| {
                let _ = c.stdin.take().unwrap().write_all(br#"{"type": "string"}"#);
                c.wait_with_output()
            })
            .unwrap();
        assert_eq!(out.status.code(), Some(2));
        assert!(String::from_utf8_lossy(&out.stderr).contains("cannot write the output"));
    }
}

#[test]
fn input_larger_than_the_limit_is_refused_and_the_flag_raises_it() {
    let big = TempFile::new("big.json", &format!("[{}0]", "0, ".repeat(100)));
    let r = run(
        &["--max-input-bytes", "100", "schema", "check", big.path()],
        "",
    );
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("larger than 100 bytes"), "{}", r.stderr);
    assert!(r.stderr.contains("--max-input-bytes"));
    let r = run(
        &["schema", "check", "--max-input-bytes", "0", big.path()],
        "",
    );
    assert_eq!(r.code, 1, "unlimited: read, and not a schema: {}", r.stderr);
}

#[test]
fn text_output_escapes_control_characters_from_the_input() {
    let key = "a\\u001b[31mb\\nc\\u0007";
    let schema = format!(
        "{{\"type\": \"object\", \"properties\": {{\"{key}\": {{\"type\": \"string\"}}}}, \"required\": [\"{key}\"]}}"
    );
    let value = TempFile::new("empty-object.json", "{}");
    let r = run(
        &["schema", "validate", "--parameters", "-", value.path()],
        &schema,
    );
    assert_eq!(r.code, 1);
    assert!(
        !r.stdout.contains('\u{1b}') && !r.stdout.contains('\u{7}'),
        "{:?}",
        r.stdout
    );
    assert_eq!(r.stdout.lines().count(), 1, "{:?}", r.stdout);
    // The validator writes such a key as a bracketed JSON string.
    assert!(
        r.stdout.contains(r#"["a\u001b[31mb\nc\u0007"]"#),
        "{:?}",
        r.stdout
    );
}

#[test]
fn code_types_prints_the_typescript_of_one_schema() {
    let schema = r#"{"type": "object", "properties": {"path": {"type": "string", "description": "Where"}, "n": {"type": "integer", "minimum": 0}}, "required": ["path"]}"#;
    let r = run(&["code", "types", "-"], schema);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let parsed: Value = serde_json::from_str(schema).unwrap();
    assert_eq!(
        r.stdout,
        format!("{}\n", dsh_tools::code::schema_to_ts(&parsed, 0))
    );
    let r = run(&["code", "types", "--indent", "1", "-"], schema);
    assert_eq!(
        r.stdout,
        format!("{}\n", dsh_tools::code::schema_to_ts(&parsed, 1))
    );
    assert!(r.stdout.contains("/** Where */"), "{}", r.stdout);
    let r = run(&["code", "types", "-"], "{not json");
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("not valid JSON"), "{}", r.stderr);
}

#[test]
fn code_sdk_prints_the_section() {
    let tools = r#"[{"name": "echo", "description": "Echo.", "parameters": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"], "additionalProperties": false}, "output": {"type": "string"}},
                    {"name": "ping", "description": "Ping.", "parameters": {"type": "object", "additionalProperties": false}}]"#;
    let r = run(&["code", "sdk", "-"], tools);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.starts_with("## Writing code for run_code\n"));
    assert!(
        r.stdout.ends_with(
            "```\n\nNo tool above overlaps: every call runs alone, in submission order, also under `Promise.all`.\n"
        ),
        "the SDK, what overlaps and one newline: {}",
        r.stdout
    );
    assert!(
        r.stdout.contains("  echo: {\n    text: string;\n  };"),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout.contains("  ping: JsonValue;"),
        "no output renders JsonValue: {}",
        r.stdout
    );
    for bad in [r#"{"name": "x"}"#, r#"[{"name": "x"}]"#] {
        let r = run(&["code", "sdk", "-"], bad);
        assert_eq!(r.code, 2, "{bad}");
        assert!(r.stderr.starts_with("dsh-tools: TOOLS"), "{}", r.stderr);
    }
    let r = run(&["code", "sdk"], "");
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("give TOOLS"), "{}", r.stderr);
    let r = run(&["code", "sdk", "--bearer-env", "T", "-"], tools);
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("goes with --server"), "{}", r.stderr);
}

/// Issue 39.1: `code sdk` converted nothing, so one keyword outside the subset (`$schema`, which
/// every TypeScript server sends) made a whole tool `unknown`, silently. It now takes an MCP
/// `tools/list` result and converts each schema as the importer does: what it can express
/// becomes types and doc tags, what it cannot is left out and named on standard error with its
/// path, and `--strict` makes that a failure.
#[test]
fn code_sdk_converts_an_mcp_tool_list_as_the_importer_does() {
    let list = serde_json::json!({"tools": [
        {"name": "git_log", "description": "Shows the commit logs",
         "inputSchema": {"$schema": "http://json-schema.org/draft-07/schema#", "$id": "urn:git_log",
            "title": "GitLog", "type": "object",
            "properties": {
                "repo_path": {"type": "string", "title": "Repo Path"},
                "max_count": {"type": "integer", "default": 10, "title": "Max Count"},
                "since": {"anyOf": [{"type": "string", "format": "date-time"}, {"type": "null"}], "default": null},
                "author": {"$ref": "#/$defs/Person", "deprecated": true},
                "labels": {"type": "object", "patternProperties": {"^x-": {"type": "string"}}}
            },
            "required": ["repo_path"], "additionalProperties": false,
            "$defs": {"Person": {"type": "object", "properties": {"name": {"type": "string", "examples": ["Ada"]}}}}},
         "outputSchema": {"type": "object", "properties": {"commits": {"type": "array", "items": {"type": "string"}}},
            "required": ["commits"]}},
        {"name": "a.b/c", "inputSchema": {"type": "object", "properties": {"x": {"not": {"type": "null"}}}}}
    ]});
    let r = run(&["code", "sdk", "-"], &list.to_string());
    assert_eq!(r.code, 0, "{}", r.stderr);
    let sdk = &r.stdout;
    assert!(!sdk.contains("unknown"), "{sdk}");
    for text in [
        "  /** Shows the commit logs */\n  git_log: {\n    repo_path: string;\n    /** @default 10 */\n    max_count?: number;\n    /** @format date-time */\n    since?: string | null;\n    /** @deprecated */\n    author?: {\n      /** @example \"Ada\" */\n      name?: string;\n    } & Record<string, JsonValue>;\n    labels?: Record<string, JsonValue>;\n  };",
        // With an `outputSchema`, a call resolves to the structured value (issue 39.8);
        // without, to the result, its content blocks typed (issue 39.2).
        "  git_log: {\n    commits: string[];\n  } & Record<string, JsonValue>;",
        "  \"a.b/c\": McpResult;",
        // Issue 39.2: the content blocks typed, declared once.
        "\ntype McpContent = (\n  | { type: \"text\"; text: string }\n",
        "\ninterface McpResult<T = JsonValue> {\n  content: McpContent[];\n  structuredContent?: T;\n}\n",
        "  \"a.b/c\": {\n    x?: JsonValue;\n  } & Record<string, JsonValue>;",
    ] {
        assert!(sdk.contains(text), "{text}\n---\n{sdk}");
    }
    assert_eq!(
        r.stderr,
        "dsh-tools: tool git_log: parameters #/properties/labels: `patternProperties` left out: the subset has no word for it\n\
         dsh-tools: tool a.b/c: parameters #/properties/x: `not` left out: the subset has no word for it\n",
        "in the tools' order"
    );
    let strict = run(&["code", "sdk", "--strict", "-"], &list.to_string());
    assert_eq!(strict.code, 1, "{}", strict.stderr);
    assert_eq!(strict.stdout, "", "nothing printed under --strict");
    assert!(
        strict.stderr.ends_with(
            "dsh-tools: --strict: the SDK leaves out 2 parts of the tools' schemas (listed above)\n"
        ),
        "{}",
        strict.stderr
    );
    // The same conversion for the `{name, parameters}` shape (no MCP result around the output).
    let plain = serde_json::json!([{"name": "t", "description": "T.",
        "parameters": list["tools"][0]["inputSchema"], "output": list["tools"][0]["outputSchema"]}]);
    let r = run(&["code", "sdk", "-"], &plain.to_string());
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stdout
            .contains("    /** @format date-time */\n    since?: string | null;"),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout
            .contains("  t: {\n    commits: string[];\n  } & Record<string, JsonValue>;"),
        "{}",
        r.stdout
    );
}

/// Hostile schemas in `code sdk`: a `$ref` that loops, a 10,000-deep schema and a root that is
/// not a schema are each bounded and named on standard error; the other tools still render.
#[test]
fn code_sdk_bounds_hostile_schemas() {
    let mut deep = String::new();
    for _ in 0..10_000 {
        deep.push_str(r#"{"type": "object", "properties": {"a": "#);
    }
    deep.push_str(r#"{"type": "string"}"#);
    for _ in 0..10_000 {
        deep.push_str("}}");
    }
    let list = format!(
        r##"{{"tools": [
            {{"name": "loop", "inputSchema": {{"type": "object", "properties": {{"self": {{"$ref": "#"}}, "n": {{"type": "integer"}}}}}}}},
            {{"name": "deep", "inputSchema": {deep}}},
            {{"name": "odd", "inputSchema": 5}},
            {{"name": "fine", "inputSchema": {{"type": "object", "properties": {{"n": {{"type": "integer"}}}}}}}}
        ]}}"##
    );
    let r = run(&["code", "sdk", "-"], &list);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(!r.stdout.contains("unknown"), "{}", r.stdout);
    assert!(
        r.stdout
            .contains("  loop: {\n    self?: JsonValue;\n    n?: number;\n  }"),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout.contains("  fine: {\n    n?: number;\n  }"),
        "{}",
        r.stdout
    );
    assert!(r.stdout.contains("  odd: JsonValue;"), "{}", r.stdout);
    assert!(
        r.stderr.contains(r#"dsh-tools: tool loop: parameters #/properties/self: shown as any value: recursive type"#),
        "{}",
        r.stderr
    );
    assert!(
        r.stderr
            .contains("dsh-tools: tool deep: parameters #/properties/a/")
            && r.stderr.contains("nested more than 64 levels deep"),
        "{}",
        r.stderr
    );
    assert!(
        r.stderr
            .contains("dsh-tools: tool odd: parameters #: shown as any value: "),
        "{}",
        r.stderr
    );
    assert!(
        r.stderr.len() < 8 << 10,
        "bounded: {} bytes",
        r.stderr.len()
    );
}

#[test]
fn tools_search_ranks_a_tool_list() {
    let tools = r#"[{"name": "read_file", "description": "Read a file from disk", "namespace": "fs"},
                    {"name": "send_message", "description": "Post a message to a channel", "namespace": "slack",
                     "parameters": {"type": "object", "properties": {"channel": {"type": "string"}}}},
                    {"name": "evil\u001b[2J", "description": "Post a message too"}]"#;
    let r = run(&["tools", "search", "-", "post in a slack channel"], tools);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(r.stdout, "send_message\nevil\\u{1b}[2J\n");
    let r = run(
        &[
            "tools",
            "search",
            "--json",
            "--limit",
            "1",
            "-",
            "read_file",
        ],
        tools,
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let out = json_out(&r);
    assert_eq!(out[0]["name"], "read_file");
    assert_eq!(out[0]["namespace"], "fs");
    assert_eq!(out[0]["matched"], "name");
    assert_eq!(out.as_array().unwrap().len(), 1);
    let r = run(&["tools", "search", "-", "!!!"], tools);
    assert_eq!((r.code, r.stdout.as_str()), (1, ""));
    for bad in [
        r#"{"name": "x"}"#,
        r#"[{"name": "x"}]"#,
        r#"[{"name": "x", "description": "d", "namespace": 3}]"#,
    ] {
        let r = run(&["tools", "search", "-", "q"], bad);
        assert_eq!(r.code, 2, "{bad}");
        assert!(r.stderr.starts_with("dsh-tools: TOOLS"), "{}", r.stderr);
    }
}

#[cfg(all(feature = "typescript", feature = "mcp"))]
#[test]
fn code_run_runs_a_program_and_reports_its_outcome() {
    let r = run(
        &["code", "run", "-"],
        "const n: number = 20; console.log('computing'); return n + 22;",
    );
    assert_eq!(
        (r.code, r.stdout.as_str()),
        (0, "computing\n42\n"),
        "{}",
        r.stderr
    );
    let r = run(&["code", "run", "-"], "throw new Error('boom')");
    assert_eq!(r.code, 1);
    assert!(
        r.stdout
            .starts_with("Error: code run failed (exception): Error: boom"),
        "{}",
        r.stdout
    );
    let r = run(&["code", "run", "--compute-ms", "100", "-"], "for (;;) {}");
    assert_eq!(
        (r.code, r.stdout.as_str()),
        (
            1,
            "Error: code run failed (timeout): compute budget exhausted (100ms busy)\n"
        )
    );
    let r = run(&["code", "run", "/nonexistent/program.ts"], "");
    assert_eq!(r.code, 2);
    let r = run(
        &["code", "run", "--server", "'unterminated", "-"],
        "return 1",
    );
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("not a command line"), "{}", r.stderr);
    let r = run(
        &["code", "run", "--server", "/nonexistent/server", "-"],
        "return 1",
    );
    assert_eq!(r.code, 2);
    assert!(
        r.stderr.contains("--server /nonexistent/server"),
        "{}",
        r.stderr
    );
}

#[test]
fn provider_stream_assembles_a_recorded_stream() {
    // An OpenAI Chat stream as SSE lines: two parallel calls, their fragments interleaved.
    let events = r#"data: {"choices":[{"index":0,"delta":{"role":"assistant","tool_calls":[{"index":0,"id":"call_a","type":"function","function":{"name":"read_file","arguments":""}}]}}]}

data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"id":"call_b","type":"function","function":{"name":"list_dir","arguments":"{\"pa"}}]}}]}
data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"path\": \"src/ma"}}]}}]}
data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"function":{"arguments":"th\": \".\"}"}}]}}]}
data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"in.rs\"}"}}]}}]}
data: {"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}
data: [DONE]
"#;
    let r = run(
        &["provider", "stream", "--dialect", "openai-chat", "-"],
        events,
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(
        json_out(&r),
        json!([
            {"name": "read_file", "provider_name": "read_file", "call_id": "call_a",
             "provider_call_id": "call_a", "arguments": {"path": "src/main.rs"}},
            {"name": "list_dir", "provider_name": "list_dir", "call_id": "call_b",
             "provider_call_id": "call_b", "arguments": {"path": "."}}
        ])
    );
    let r = run(
        &[
            "provider",
            "stream",
            "--dialect",
            "openai-chat",
            "--partials",
            "-",
        ],
        events,
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let partials: Vec<Value> = r
        .stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(
        partials[1],
        json!({"provider_call_id": "call_a", "name": "read_file", "partial": {"path": "src/ma"}})
    );
    assert_eq!(partials.len(), 4);

    // A stream cut inside a call: an error naming it, exit 1, no call printed.
    let cut: String = events.lines().take(5).collect::<Vec<_>>().join("\n");
    let r = run(
        &["provider", "stream", "--dialect", "openai-chat", "-"],
        &cut,
    );
    assert_eq!(r.code, 1);
    assert_eq!(r.stdout, "");
    assert!(
        r.stderr
            .contains("ended inside the call(s) \"read_file\" (call_a), \"list_dir\" (call_b)"),
        "{}",
        r.stderr
    );
    // A line that is not JSON: unreadable input, exit 2.
    let r = run(
        &["provider", "stream", "--dialect", "anthropic", "-"],
        "data: {not json",
    );
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(
        r.stderr.contains("line 1 is not a JSON event"),
        "{}",
        r.stderr
    );
}

/// Issue 39.1: a recursive type is declared once by name and referred to where it recurs; two
/// tools whose types share a name but not a shape get distinct names; `$describe`'s text
/// declares what it names.
#[test]
fn code_sdk_names_recursive_types() {
    let tree = |leaf: &str| {
        serde_json::json!({"type": "object",
            "properties": {"root": {"$ref": "#/$defs/Tree"}},
            "$defs": {"Tree": {"type": "object", "properties": {
                leaf: {"type": "string"},
                "kids": {"type": "array", "items": {"$ref": "#/$defs/Tree"}}},
                "required": [leaf], "additionalProperties": false}}})
    };
    let list = serde_json::json!([
        {"name": "a", "parameters": tree("label")},
        {"name": "b", "parameters": tree("label")},
        {"name": "c", "parameters": tree("id")}
    ]);
    let r = run(&["code", "sdk", "-"], &list.to_string());
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(r.stderr, "", "nothing left out");
    let sdk = &r.stdout;
    assert!(!sdk.contains("unknown"), "{sdk}");
    assert!(
        sdk.contains("\ntype Tree = {\n  label: string;\n  kids?: Tree[];\n}\n\ntype Tree_2 = {\n  id: string;\n  kids?: Tree_2[];\n}\n"),
        "{sdk}"
    );
    assert_eq!(sdk.matches("type Tree = ").count(), 1, "the same type once");
    assert!(
        sdk.contains(
            "  c: {\n    root?: {\n      id: string;\n      kids?: Tree_2[];\n    };\n  }"
        ),
        "{sdk}"
    );
}

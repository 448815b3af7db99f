//! `dsh-tools code run --server …`: Code Mode for any MCP server, from a terminal. The program
//! calls the example MCP server's tools (started over stdio by the CLI) inside the sandbox.

use std::io::Write;
use std::process::{Command, Stdio};

/// A binary cargo built for this test run, next to the test executable's profile directory.
fn built(path: &[&str]) -> std::path::PathBuf {
    let test_exe = std::env::current_exe().unwrap();
    let mut binary = test_exe.parent().unwrap().parent().unwrap().to_path_buf();
    for part in path {
        binary.push(part);
    }
    assert!(
        binary.exists(),
        "{} is missing: run the workspace tests (`cargo test --workspace --all-features`), which build it",
        binary.display()
    );
    binary
}

#[test]
fn code_run_calls_the_tools_of_an_mcp_server() {
    let server = built(&["examples", "mcp_server"]);
    let root = std::env::temp_dir().join(format!("dsh-code-cli-{}", std::process::id()));
    std::fs::create_dir_all(&root).unwrap();
    std::fs::write(root.join("notes.txt"), "alpha\nbeta\n").unwrap();
    let server_cmd = format!("'{}' --root '{}'", server.display(), root.display());
    let program = "const sum = await tools.add({a: 2, b: 40});\n\
        const listing = await tools.list_files({dir: '.'});\n\
        const [one, two] = await Promise.all([tools.echo({text: 'x'}), tools.echo({text: 'y'})]);\n\
        let failed = '';\n\
        try { await tools.add({a: 'not a number', b: 1}) } catch (e) { failed = e.name + ': ' + e.message }\n\
        console.log(JSON.stringify(listing).includes('notes.txt'));\n\
        return {sum: sum.content[0].text, echoed: [one.text, two.text], failed};";
    let (status, stdout, stderr) = code_run_with(&["--server", &server_cmd], program);
    assert_eq!(status, Some(0), "{stdout}\n{stderr}");
    let (first, rest) = stdout.split_once('\n').unwrap();
    assert_eq!(first, "true", "the listing holds the file");
    let value: serde_json::Value = serde_json::from_str(rest.trim_end()).unwrap();
    // An object value is what the tool returned (issue 39.8), as in-process; over stdio the
    // import speaks 2025-11-25, which gives a number no `outputSchema`: `add`'s value is the
    // MCP result there.
    assert_eq!(value["sum"], "42");
    assert_eq!(value["echoed"], serde_json::json!(["x", "y"]));
    assert!(
        value["failed"]
            .as_str()
            .unwrap()
            .starts_with("ToolCallError: invalid arguments"),
        "{value}"
    );
    let _ = std::fs::remove_dir_all(&root);
}

/// `dsh-tools code run PROGRAM` with the example MCP server: the exit status, standard output
/// and standard error.
fn code_run(program: &str) -> (Option<i32>, String, String) {
    let server = built(&["examples", "mcp_server"]);
    let root = std::env::temp_dir().join(format!("dsh-code-cli-esc-{}", std::process::id()));
    std::fs::create_dir_all(&root).unwrap();
    let server_cmd = format!("'{}' --root '{}'", server.display(), root.display());
    let out = code_run_with(&["--wall-ms", "60000", "--server", &server_cmd], program);
    let _ = std::fs::remove_dir_all(&root);
    out
}

/// A character a terminal would act on or hide: controls (but `\n` and `\t`), bidirectional
/// overrides and isolates, line and paragraph separators, invisible format characters.
fn hidden(c: char) -> bool {
    (c.is_control() && c != '\n' && c != '\t')
        || matches!(
            c,
            '\u{00ad}'
                | '\u{061c}'
                | '\u{180e}'
                | '\u{200b}'..='\u{200f}'
                | '\u{2028}'..='\u{202e}'
                | '\u{2060}'..='\u{206f}'
                | '\u{feff}'
                | '\u{fff9}'..='\u{fffb}'
                | '\u{e0000}'..='\u{e007f}'
        )
}

/// Issue 43.8: the result text (logs, a tool's echoed text, the returned value, a thrown
/// message) reached the terminal raw: escape sequences, U+202E and NUL included. Now each such
/// character is printed as a JSON-style `\uXXXX` escape; newlines and tabs stay, and the JSON
/// of a structured value still parses to the same value.
#[test]
fn code_run_escapes_what_would_drive_the_terminal() {
    let remote = "remote \u{1b}]0;owned\u{7} \u{202e}\u{2066} nul:\0 csi:\u{9b} sep:\u{2029}";
    let program = r#"const echoed = await tools.echo({text: 'remote \x1b]0;owned\x07 \u202e\u2066 nul:\0 csi:\x9b sep:\u2029'});
        console.log('log \x1b[31mred\x1b[0m\tkept tab');
        console.log('cr\r ls\u2028 zw\u200b bom\ufeff tag\u{E0041} shy\u00ad');
        console.log(echoed.text);
        return {text: echoed.text};"#;
    let (status, stdout, stderr) = code_run(program);
    assert_eq!(status, Some(0), "{stdout}\n{stderr}");
    assert!(!stdout.contains(hidden), "{stdout:?}");
    let mut lines = stdout.splitn(4, '\n');
    assert_eq!(
        lines.next().unwrap(),
        "log \\u001b[31mred\\u001b[0m\tkept tab"
    );
    assert_eq!(
        lines.next().unwrap(),
        "cr\\u000d ls\\u2028 zw\\u200b bom\\ufeff tag\\udb40\\udc41 shy\\u00ad"
    );
    assert_eq!(
        lines.next().unwrap(),
        "remote \\u001b]0;owned\\u0007 \\u202e\\u2066 nul:\\u0000 csi:\\u009b sep:\\u2029"
    );
    let value: serde_json::Value = serde_json::from_str(lines.next().unwrap().trim_end()).unwrap();
    assert_eq!(value, serde_json::json!({"text": remote}), "the same value");

    let (status, stdout, stderr) = code_run(r#"throw new Error('boom \x1b[2J\u202e\0')"#);
    assert_eq!(status, Some(1), "{stdout}\n{stderr}");
    assert!(!stdout.contains(hidden), "{stdout:?}");
    assert!(
        stdout.contains("Error: boom \\u001b[2J\\u202e\\u0000"),
        "{stdout:?}"
    );
}

#[test]
fn code_run_reports_every_tool_it_skipped() {
    // One good tool, one whose name holds U+2028 and one entry without an `inputSchema`.
    let dir = std::env::temp_dir().join(format!("dsh-code-cli-bad-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (script, file) = (dir.join("server.sh"), dir.join("tools.json"));
    std::fs::write(&script, LISTS_A_FILE).unwrap();
    std::fs::write(
        &file,
        r#"{"tools":[{"name":"ok","inputSchema":{"type":"object"}},{"name":"a\u2028b","inputSchema":{"type":"object"}},{"name":"broken"}]}"#,
    )
    .unwrap();
    let server_cmd = format!("sh '{}' '{}'", script.display(), file.display());
    let (status, stdout, stderr) =
        code_run_with(&["--server", &server_cmd], "return Object.keys(tools)");
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(status, Some(0), "{stdout}\n{stderr}");
    let names: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(names, serde_json::json!(["ok"]), "{stderr}");
    assert!(stderr.contains(r"tool a\u{2028}b skipped: "), "{stderr}");
    assert!(
        stderr.contains("tool broken skipped: the server's entry is not a tool"),
        "{stderr}"
    );
}

/// Runs `dsh-tools code run` with `args` before the program (read from standard input).
fn code_run_with(args: &[&str], program: &str) -> (Option<i32>, String, String) {
    code_run_in_env(args, &[], program)
}

/// [`code_run_with`], each variable of `env` set to its value or, for `None`, removed.
fn code_run_in_env(
    args: &[&str],
    env: &[(&str, Option<&str>)],
    program: &str,
) -> (Option<i32>, String, String) {
    let cli = built(&["dsh-tools"]);
    let mut command = Command::new(&cli);
    command
        .args(["code", "run"])
        .args(args)
        .arg("-")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (name, value) in env {
        match value {
            Some(value) => command.env(name, value),
            None => command.env_remove(name),
        };
    }
    let mut child = command.spawn().unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(program.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    let stdout = String::from_utf8(out.stdout).unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    (out.status.code(), stdout, stderr)
}

/// Issue 39.6: two servers exposing one tool name skipped the second's silently. Now that is an
/// error naming the tool and both servers, before any program runs; named servers
/// (`--server NAME=CMD`) keep both, as `NAME_tool`; two servers of one name are refused.
#[test]
fn code_run_refuses_a_name_two_servers_expose_unless_they_are_named() {
    let server = built(&["examples", "mcp_server"]);
    let root = std::env::temp_dir().join(format!("dsh-code-cli-two-{}", std::process::id()));
    std::fs::create_dir_all(&root).unwrap();
    let cmd = format!("'{}' --root '{}'", server.display(), root.display());
    let program = "return Object.keys(tools).filter((n) => n.endsWith('_add') || n === 'add')";

    let (status, stdout, stderr) = code_run_with(&["--server", &cmd, "--server", &cmd], program);
    assert_eq!(status, Some(2), "{stdout}\n{stderr}");
    assert!(stdout.is_empty(), "nothing ran: {stdout}");
    assert!(
        stderr.contains("tool read_file (and ")
            && stderr.contains(" more) is exposed by both --server ")
            && stderr.contains(
                "name the servers to keep both (--server a=CMD makes its tools a_read_file)"
            ),
        "{stderr}"
    );
    assert_eq!(
        stderr.matches(&*server.display().to_string()).count(),
        2,
        "{stderr}"
    );

    let (first, second) = (format!("one={cmd}"), format!("two={cmd}"));
    let (status, stdout, stderr) =
        code_run_with(&["--server", &first, "--server", &second], program);
    assert_eq!(status, Some(0), "{stdout}\n{stderr}");
    let names: serde_json::Value = serde_json::from_str(stdout.trim_end()).unwrap();
    assert_eq!(names, serde_json::json!(["one_add", "two_add"]));

    let (status, _, stderr) = code_run_with(&["--server", &first, "--server", &first], program);
    assert_eq!(status, Some(2));
    assert!(stderr.contains("two servers are named one"), "{stderr}");

    // A command whose first word holds `=` but is not a name stays a command line.
    let (status, _, stderr) = code_run_with(&["--server", "./x=1 y"], program);
    assert_eq!(status, Some(2));
    assert!(stderr.contains("--server ./x=1 y"), "{stderr}");
    let _ = std::fs::remove_dir_all(&root);
}

/// Issue 39.7: `code run` reaches a streamable-HTTP server, with a bearer token read from an
/// environment variable: the example server with JWT authorization (RS256, a JWKS file) answers
/// a program when the token is good, refuses the connection without one, and the CLI refuses an
/// unset or empty variable before connecting.
#[test]
fn code_run_reaches_an_http_server_with_a_bearer_token_from_the_environment() {
    use jsonwebtoken::jwk::{Jwk, JwkSet};
    use jsonwebtoken::{Algorithm, EncodingKey, Header};
    use std::io::BufRead;

    const ISSUER: &str = "https://auth.test";
    let key = EncodingKey::from_rsa_pem(include_bytes!("../data/auth/rsa.pem")).unwrap();
    let mut jwk = Jwk::from_encoding_key(&key, Algorithm::RS256).unwrap();
    jwk.common.key_id = Some("rsa-1".to_owned());
    let root = std::env::temp_dir().join(format!("dsh-code-cli-http-{}", std::process::id()));
    std::fs::create_dir_all(&root).unwrap();
    let jwks = root.join("jwks.json");
    std::fs::write(
        &jwks,
        serde_json::to_vec(&JwkSet { keys: vec![jwk] }).unwrap(),
    )
    .unwrap();
    // The resource the tokens are for names the port: take a free one.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let addr = format!("127.0.0.1:{port}");
    let mut server = Command::new(built(&["examples", "mcp_server"]))
        .args(["--root", &root.display().to_string(), "--http", &addr])
        .args([
            "--auth-issuer",
            ISSUER,
            "--auth-jwks",
            &jwks.display().to_string(),
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut first = String::new();
    std::io::BufReader::new(server.stdout.take().unwrap())
        .read_line(&mut first)
        .unwrap();
    let url = format!("http://{addr}/mcp");
    assert_eq!(first.trim_end(), format!("listening on {url}"));

    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    let claims = serde_json::json!({"iss": ISSUER, "aud": url, "sub": "cli-user", "scope": "",
        "iat": now, "exp": now + 3600});
    let mut header = Header::new(Algorithm::RS256);
    header.kid = Some("rsa-1".to_owned());
    let token = jsonwebtoken::encode(&header, &claims, &key).unwrap();

    let program = "return await tools.add({a: 2, b: 40})";
    let run = |env: Option<&str>, args: &[&str]| {
        let mut all = vec!["--server", url.as_str()];
        all.extend_from_slice(args);
        code_run_in_env(&all, &[("DSH_TEST_TOKEN", env)], program)
    };
    let (status, stdout, stderr) = run(Some(&token), &["--bearer-env", "DSH_TEST_TOKEN"]);
    let without = run(None, &[]);
    let unset = run(None, &["--bearer-env", "DSH_TEST_TOKEN"]);
    let empty = run(Some("  "), &["--bearer-env", "DSH_TEST_TOKEN"]);
    let _ = server.kill();
    let _ = server.wait();
    let _ = std::fs::remove_dir_all(&root);

    assert_eq!(status, Some(0), "{stdout}\n{stderr}");
    assert_eq!(stdout.trim_end(), "42", "{stderr}");
    assert_eq!(without.0, Some(2), "no token, no connection: {without:?}");
    assert!(
        without.2.contains(&format!("--server {url}: ")),
        "{without:?}"
    );
    assert_eq!(unset.0, Some(2));
    assert!(
        unset
            .2
            .contains("--bearer-env DSH_TEST_TOKEN: the variable is not set"),
        "{unset:?}"
    );
    assert_eq!(empty.0, Some(2));
    assert!(
        empty
            .2
            .contains("--bearer-env DSH_TEST_TOKEN: the variable is empty"),
        "{empty:?}"
    );
}

/// Issue 39.3: a failed run prints the offending line with a caret under the column, as rustc
/// and node do, bounded for a long line.
#[test]
fn code_run_shows_the_offending_line_with_a_caret() {
    let program = "function f() {\n  const z = 1;\n  return z.q.y;\n}\nreturn f();";
    let (status, _, stderr) = code_run_with(&[], program);
    assert_eq!(status, Some(1));
    assert!(
        stderr.contains("  --> program:3:10\n  |\n3 |   return z.q.y;\n  |          ^\n"),
        "{stderr}"
    );
    let long = format!("const q = {};\nconst b = ;", "1+".repeat(30_000) + "1");
    let (status, _, stderr) = code_run_with(&[], &long);
    assert_eq!(status, Some(1));
    assert!(stderr.contains("  --> program:2:11\n"), "{stderr}");
    let (status, _, stderr) = code_run_with(&[], &format!("const q = {}+;", "x+".repeat(30_000)));
    assert_eq!(status, Some(1));
    assert!(stderr.lines().all(|l| l.chars().count() < 200), "{stderr}");
    assert!(stderr.contains("…"), "{stderr}");
    // A syntax error at line 10,000: the position in the result and the excerpt name it.
    let far = format!("{}const late = ;", "let a = 1;\n".repeat(9_999));
    let (status, stdout, stderr) = code_run_with(&[], &far);
    assert_eq!(status, Some(1));
    assert!(stdout.contains("(line 10000, column "), "{stdout}");
    assert!(
        stderr.contains(" --> program:10000:") && stderr.contains("10000 | const late = ;"),
        "{stderr}"
    );
}

/// A stdio MCP server in POSIX `sh` that lists the `tools/list` result in the file `$1` and
/// answers every call with a text block naming the tool it was asked for.
const LISTS_A_FILE: &str = r#"while IFS= read -r line; do
  id=$(printf '%s' "$line" | sed -n 's/.*"id":\([0-9][0-9]*\).*/\1/p')
  case "$line" in
    *'"initialize"'*) printf '{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"s","version":"0"}}}\n' "$id";;
    *'"tools/list"'*) printf '{"jsonrpc":"2.0","id":%s,"result":' "$id"; cat "$1"; printf '}\n';;
    *'"tools/call"'*) name=$(printf '%s' "$line" | sed -n 's/.*"name":"\([^"]*\)".*/\1/p'); printf '{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"called %s"}]}}\n' "$id" "$name";;
  esac
done
"#;

/// Issue 39.1: `code sdk --server CMD` prints exactly the SDK a program is shown in `code run`
/// (one conversion, the importer's), and the same text as `code sdk` given the server's
/// `tools/list` result; what it leaves out is named the same way. Tool names JavaScript gives
/// meaning to (`constructor`, `__proto__`, `then`, a keyword) or that hold `-`, `.` or `/`
/// are typed and callable.
#[test]
fn code_sdk_with_a_server_prints_what_code_run_imports() {
    let names = [
        "git_log",
        "constructor",
        "__proto__",
        "then",
        "delete",
        "my-tool",
        "a.b/c",
    ];
    let tools: Vec<serde_json::Value> = names
        .iter()
        .map(|name| {
            serde_json::json!({
                "name": name,
                "description": format!("The {name} tool."),
                "inputSchema": {
                    "$schema": "http://json-schema.org/draft-07/schema#",
                    "type": "object",
                    "properties": {
                        "max_count": {"type": "integer", "default": 10},
                        "since": {"anyOf": [{"type": "string", "format": "date"}, {"type": "null"}]},
                        "labels": {"type": "object", "propertyNames": {"pattern": "^x"}}
                    },
                    "additionalProperties": false
                },
                "annotations": {"readOnlyHint": true}
            })
        })
        .collect();
    let list = serde_json::json!({ "tools": tools });
    let dir = std::env::temp_dir().join(format!("dsh-code-sdk-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (script, file) = (dir.join("server.sh"), dir.join("tools.json"));
    std::fs::write(&script, LISTS_A_FILE).unwrap();
    std::fs::write(&file, list.to_string()).unwrap();
    let server_cmd = format!("sh '{}' '{}'", script.display(), file.display());
    let cli = built(&["dsh-tools"]);
    let sdk = |args: &[&str]| {
        let out = Command::new(&cli)
            .args(["code", "sdk"])
            .args(args)
            .output()
            .unwrap();
        (
            out.status.code(),
            String::from_utf8(out.stdout).unwrap(),
            String::from_utf8(out.stderr).unwrap(),
        )
    };
    let from_server = sdk(&["--server", &server_cmd]);
    let from_file = sdk(&[file.to_str().unwrap()]);
    assert_eq!(from_server.0, Some(0), "{}", from_server.2);
    assert_eq!(from_server.1, from_file.1, "one SDK path");
    assert_eq!(from_server.2, from_file.2, "the same report");
    let text = &from_server.1;
    assert!(!text.contains("unknown"), "{text}");
    assert!(
        text.contains("  \"a.b/c\": {\n    /** @default 10 */\n    max_count?: number;\n    /** @format date */\n    since?: string | null;\n    labels?: Record<string, JsonValue>;\n  };"),
        "{text}"
    );
    for name in ["constructor", "__proto__", "then", "delete"] {
        assert!(
            text.contains(&format!("\n  {name}: {{\n")),
            "{name}: {text}"
        );
    }
    assert!(text.contains("\n  \"my-tool\": {\n"), "{text}");
    assert_eq!(
        from_server.2.lines().count(),
        names.len(),
        "one line per tool: {}",
        from_server.2
    );
    assert!(
        from_server.2.contains(
            "dsh-tools: tool then: parameters #/properties/labels: `propertyNames` left out"
        ),
        "{}",
        from_server.2
    );
    assert!(
        text.ends_with("\n\nNo tool above overlaps: every call runs alone, in submission order, also under `Promise.all`.\n"),
        "imported calls run alone unless hints are trusted: {text}"
    );
    // Issue 39.5: with the servers' hints trusted, the section says the read-only tools overlap.
    let trusted = sdk(&["--trust-hints", "--server", &server_cmd]);
    assert_eq!(trusted.1, sdk(&["--trust-hints", file.to_str().unwrap()]).1);
    assert!(
        trusted
            .1
            .ends_with("\n\nEvery tool above may overlap under `Promise.all`.\n"),
        "{}",
        trusted.1
    );
    let strict = sdk(&["--strict", "--server", &server_cmd]);
    assert_eq!((strict.0, strict.1.as_str()), (Some(1), ""), "{}", strict.2);

    // Every one of those names is called through the namespace as the SDK types it.
    let program = r#"const out = [];
        for (const name of ["git_log", "constructor", "__proto__", "then", "delete", "my-tool", "a.b/c"]) {
          out.push((await tools[name]({})).content[0].text);
        }
        out.push((await tools.constructor({max_count: 1})).content[0].text);
        out.push((await tools.then({})).content[0].text);
        return out;"#;
    let (status, stdout, stderr) = code_run_with(&["--server", &server_cmd], program);
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(status, Some(0), "{stdout}\n{stderr}");
    let called: Vec<String> = serde_json::from_str(stdout.trim_end()).unwrap();
    let mut expected: Vec<String> = names.iter().map(|n| format!("called {n}")).collect();
    expected.extend(["called constructor".into(), "called then".into()]);
    assert_eq!(called, expected);
}

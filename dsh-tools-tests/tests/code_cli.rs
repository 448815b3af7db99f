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
    let cli = built(&["dsh-tools"]);
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
        return {sum: sum.content[0].text, echoed: [one.structuredContent.text, two.structuredContent.text], failed};";
    let mut child = Command::new(&cli)
        .args(["code", "run", "--server", &server_cmd, "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(program.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    let stdout = String::from_utf8(out.stdout).unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}");
    let (first, rest) = stdout.split_once('\n').unwrap();
    assert_eq!(first, "true", "the listing holds the file");
    let value: serde_json::Value = serde_json::from_str(rest.trim_end()).unwrap();
    // An imported tool's value is `{content, structuredContent?}` (its declared output).
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

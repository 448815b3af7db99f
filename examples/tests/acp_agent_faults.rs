//! `examples/acp_agent` over real stdio, fed what a broken or hostile client sends: garbage lines,
//! requests out of order, bad working directories, paths that climb out, file names that are not
//! UTF-8. Every one gets a clear error or a failed tool call, and the agent keeps serving.

use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::time::Duration;

/// The example binary, built by `cargo test --workspace --all-features` before tests run.
fn agent_binary() -> PathBuf {
    let test_exe = std::env::current_exe().unwrap();
    let binary = test_exe
        .parent()
        .and_then(|deps| deps.parent())
        .unwrap()
        .join("examples")
        .join("acp_agent");
    assert!(
        binary.exists(),
        "{} is missing: run `cargo test --workspace --all-features` (which builds the examples)",
        binary.display()
    );
    binary
}

struct Agent {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
    /// Every `session/request_permission` the agent sent, in order.
    permissions: Vec<Value>,
}

impl Agent {
    fn start() -> Self {
        let mut child = Command::new(agent_binary())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, lines) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Self {
            stdin: child.stdin.take(),
            child,
            lines,
            permissions: Vec::new(),
        }
    }

    fn send_raw(&mut self, line: &str) {
        let stdin = self.stdin.as_mut().unwrap();
        writeln!(stdin, "{line}").unwrap();
        stdin.flush().unwrap();
    }

    fn send(&mut self, message: Value) {
        self.send_raw(&message.to_string());
    }

    /// The next message from the agent (failing the test after 20 s of silence).
    fn next(&self) -> Value {
        match self.lines.recv_timeout(Duration::from_secs(20)) {
            Ok(line) => serde_json::from_str(&line).unwrap(),
            Err(RecvTimeoutError::Timeout) => panic!("the agent said nothing for 20 s"),
            Err(RecvTimeoutError::Disconnected) => panic!("the agent closed its stdout"),
        }
    }

    /// Sends a request and returns its response, answering permission requests with `allow_once`
    /// and collecting the session updates sent meanwhile.
    fn request(&mut self, id: u64, method: &str, params: Value) -> (Value, Vec<Value>) {
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        let mut updates = Vec::new();
        loop {
            let message = self.next();
            match message["method"].as_str() {
                Some("session/update") => updates.push(message["params"]["update"].clone()),
                Some("session/request_permission") => {
                    self.permissions.push(message["params"].clone());
                    let answer =
                        json!({"outcome": {"outcome": "selected", "optionId": "allow_once"}});
                    self.send(json!({"jsonrpc": "2.0", "id": message["id"], "result": answer}));
                }
                _ if message["id"] == json!(id) => return (message, updates),
                _ => panic!("unexpected message {message}"),
            }
        }
    }

    fn finish(mut self) -> i32 {
        drop(self.stdin.take());
        self.child.wait().unwrap().code().unwrap_or(-1)
    }
}

fn error_code(response: &Value) -> Option<i64> {
    response["error"]["code"].as_i64()
}

#[test]
fn broken_clients_get_errors_and_the_agent_keeps_serving() {
    let dir = std::env::temp_dir().join(format!("dsh-acp-faults-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let dir = dir.canonicalize().unwrap();
    let mut agent = Agent::start();

    // Not JSON: a parse error, nothing else.
    agent.send_raw("this is not json");
    assert_eq!(error_code(&agent.next()), Some(-32700));
    // A prompt before `initialize` is refused.
    let (early, _) = agent.request(1, "session/prompt", json!({"sessionId": "x", "prompt": []}));
    assert_eq!(error_code(&early), Some(-32600), "{early}");

    let (init, _) = agent.request(2, "initialize", json!({"protocolVersion": 1}));
    assert_eq!(init["result"]["protocolVersion"], 1, "{init}");

    // Working directories that cannot be a session's.
    for (id, cwd) in [
        (3, json!("relative/dir")),
        (4, json!(dir.join("missing").to_str().unwrap())),
        (
            5,
            json!(
                dir.join("..")
                    .join("..")
                    .join("no-such-dir")
                    .to_str()
                    .unwrap()
            ),
        ),
    ] {
        let (response, _) = agent.request(id, "session/new", json!({"cwd": cwd, "mcpServers": []}));
        assert_eq!(error_code(&response), Some(-32602), "{response}");
    }
    // A malformed session/new (cwd is not a string) is invalid params too.
    let (malformed, _) = agent.request(6, "session/new", json!({"cwd": 42}));
    assert_eq!(error_code(&malformed), Some(-32602), "{malformed}");
    // A prompt for a session that does not exist.
    let (orphan, _) = agent.request(
        7,
        "session/prompt",
        json!({"sessionId": "sess_nope", "prompt": [{"type": "text", "text": "read a"}]}),
    );
    assert_eq!(error_code(&orphan), Some(-32602), "{orphan}");

    let (created, _) = agent.request(
        8,
        "session/new",
        json!({"cwd": dir.to_str().unwrap(), "mcpServers": []}),
    );
    let session = created["result"]["sessionId"].as_str().unwrap().to_owned();

    // Paths that climb out, and a verb the scripted model does not know.
    let (turn, updates) = agent.request(
        9,
        "session/prompt",
        json!({"sessionId": session, "prompt": [{"type": "text", "text": "read ../../etc/passwd\nwrite ../x: y\ndance"}]}),
    );
    assert_eq!(turn["result"]["stopReason"], "end_turn", "{turn}");
    let failed: Vec<&Value> = updates.iter().filter(|u| u["status"] == "failed").collect();
    assert_eq!(failed.len(), 2, "{updates:?}");
    for update in failed {
        let text = update["content"][0]["content"]["text"].as_str().unwrap();
        assert!(text.contains("is outside the workspace"), "{text}");
    }
    assert!(!dir.parent().unwrap().join("x").exists());
    assert!(
        updates
            .iter()
            .any(|u| u["sessionUpdate"] == "agent_message_chunk"
                && u["content"]["text"].as_str().unwrap().contains("\"dance\"")),
        "{updates:?}"
    );

    // A file name that is not UTF-8 shows up lossily in a command's output.
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        let name = std::ffi::OsStr::from_bytes(b"caf\xe9.txt");
        std::fs::write(dir.join(name), "x").unwrap();
        let (turn, updates) = agent.request(
            10,
            "session/prompt",
            json!({"sessionId": session, "prompt": [{"type": "text", "text": "run ls"}]}),
        );
        assert_eq!(turn["result"]["stopReason"], "end_turn", "{turn}");
        let done = updates
            .iter()
            .rfind(|u| u["sessionUpdate"] == "tool_call_update")
            .unwrap();
        assert_eq!(done["status"], "completed", "{done}");
        let text = done["content"][0]["content"]["text"].as_str().unwrap();
        assert!(text.contains("caf\u{fffd}.txt"), "{text}");
    }

    assert_eq!(agent.finish(), 0);
    let _ = std::fs::remove_dir_all(dir);
}

/// Links in the session's directory (a cloned repository holds whatever links its author
/// committed) lead nowhere outside it: a read through one fails without asking, a write through a
/// linked directory asks with the refusal in its title and changes nothing outside, and a write
/// through a link inside the workspace asks about where it really leads.
#[cfg(unix)]
#[test]
fn links_in_the_working_directory_do_not_lead_out() {
    use std::os::unix::fs::symlink;
    let base = std::env::temp_dir().join(format!("dsh-acp-links-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&base);
    let (dir, outside) = (base.join("ws"), base.join("outside"));
    std::fs::create_dir_all(dir.join("real")).unwrap();
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(outside.join("secret.txt"), "secret").unwrap();
    symlink(outside.join("secret.txt"), dir.join("notes.txt")).unwrap();
    symlink(&outside, dir.join("docs")).unwrap();
    symlink("real", dir.join("alias")).unwrap();
    let dir = dir.canonicalize().unwrap();

    let mut agent = Agent::start();
    agent.request(1, "initialize", json!({"protocolVersion": 1}));
    let (created, _) = agent.request(
        2,
        "session/new",
        json!({"cwd": dir.to_str().unwrap(), "mcpServers": []}),
    );
    let session = created["result"]["sessionId"].as_str().unwrap().to_owned();
    let prompt = "read notes.txt\nread docs/secret.txt\nwrite docs/secret.txt: clobbered\nwrite alias/a.txt: fine";
    let (turn, updates) = agent.request(
        3,
        "session/prompt",
        json!({"sessionId": session, "prompt": [{"type": "text", "text": prompt}]}),
    );
    assert_eq!(turn["result"]["stopReason"], "end_turn", "{turn}");
    let statuses: Vec<&str> = updates
        .iter()
        .filter(|u| u["sessionUpdate"] == "tool_call_update")
        .filter_map(|u| u["status"].as_str())
        .filter(|s| *s == "completed" || *s == "failed")
        .collect();
    assert_eq!(
        statuses,
        ["failed", "failed", "failed", "completed"],
        "{updates:?}"
    );
    // Reads need no permission; each write asked once, about where the path really leads.
    let titles: Vec<&str> = agent
        .permissions
        .iter()
        .map(|p| p["toolCall"]["title"].as_str().unwrap_or_default())
        .collect();
    assert_eq!(titles.len(), 2, "{titles:?}");
    assert!(
        titles[0].contains("docs/secret.txt (refused: docs/secret.txt is outside the workspace)"),
        "{titles:?}"
    );
    assert!(
        titles[1].contains("alias/a.txt (resolves to real/a.txt)"),
        "{titles:?}"
    );
    assert_eq!(
        std::fs::read_to_string(outside.join("secret.txt")).unwrap(),
        "secret"
    );
    assert_eq!(
        std::fs::read_to_string(dir.join("real/a.txt")).unwrap(),
        "fine"
    );
    assert_eq!(agent.finish(), 0);
    let _ = std::fs::remove_dir_all(base);
}

/// A command that prints megabytes keeps only its last 64 KiB (said in the card), and sessions
/// are freed: `session/close` ends one, and a client that never closes cannot grow the agent
/// past its cap (the least recently used idle session goes).
#[test]
fn command_output_is_capped_and_sessions_are_freed() {
    let dir = std::env::temp_dir().join(format!("dsh-acp-caps-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let dir = dir.canonicalize().unwrap();
    let mut agent = Agent::start();
    let (init, _) = agent.request(1, "initialize", json!({"protocolVersion": 1}));
    assert!(
        init["result"]["agentCapabilities"]["sessionCapabilities"]["close"].is_object(),
        "{init}"
    );
    let new_session = |agent: &mut Agent, id: u64| {
        let (created, _) = agent.request(
            id,
            "session/new",
            json!({"cwd": dir.to_str().unwrap(), "mcpServers": []}),
        );
        created["result"]["sessionId"].as_str().unwrap().to_owned()
    };
    let first = new_session(&mut agent, 2);
    let (turn, updates) = agent.request(
        3,
        "session/prompt",
        json!({"sessionId": first, "prompt": [{"type": "text",
            "text": "run yes 0123456789 | head -c 20000000; echo the-end"}]}),
    );
    assert_eq!(turn["result"]["stopReason"], "end_turn", "{turn}");
    let done = updates
        .iter()
        .rfind(|u| u["sessionUpdate"] == "tool_call_update")
        .unwrap();
    assert_eq!(done["status"], "completed", "{done}");
    let text = done["content"][0]["content"]["text"].as_str().unwrap();
    assert!(
        text.len() < 70 * 1024,
        "{} bytes of output sent",
        text.len()
    );
    assert!(
        text.contains("[19934472 earlier bytes not shown]"),
        "{}",
        &text[..80]
    );
    assert!(text.contains("the-end\n"), "the latest output is kept");

    // Closed: gone.
    let (closed, _) = agent.request(4, "session/close", json!({"sessionId": first}));
    assert!(closed.get("result").is_some(), "{closed}");
    let (gone, _) = agent.request(
        5,
        "session/prompt",
        json!({"sessionId": first, "prompt": [{"type": "text", "text": "read x"}]}),
    );
    assert_eq!(error_code(&gone), Some(-32602), "{gone}");

    // Never closed: the oldest idle one goes past the cap; the newest stay usable.
    let sessions: Vec<String> = (0..70).map(|i| new_session(&mut agent, 100 + i)).collect();
    let (evicted, _) = agent.request(
        6,
        "session/prompt",
        json!({"sessionId": sessions[0], "prompt": [{"type": "text", "text": "read x"}]}),
    );
    assert_eq!(error_code(&evicted), Some(-32602), "{evicted}");
    let (kept, _) = agent.request(
        7,
        "session/prompt",
        json!({"sessionId": sessions[69], "prompt": [{"type": "text", "text": "read missing.txt"}]}),
    );
    assert_eq!(kept["result"]["stopReason"], "end_turn", "{kept}");
    assert_eq!(agent.finish(), 0);
    let _ = std::fs::remove_dir_all(dir);
}

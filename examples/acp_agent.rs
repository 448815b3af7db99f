//! An Agent Client Protocol agent over stdio: the quickstart's file tools on the session's working
//! directory, shown in the editor with their cards, with approvals asked through the editor.
//!
//! ```text
//! cargo build -p examples --features acp --example acp_agent
//! ```
//!
//! Point an ACP client at the binary (`target/debug/examples/acp_agent`); for Zed, in
//! `settings.json`:
//! `"agent_servers": {"dsh-tools": {"type": "custom", "command": "/abs/path/to/acp_agent", "args": []}}`.
//!
//! Its "model" is scripted, so it runs without an API key: each line of a prompt is one call.
//!
//! - `read PATH` reads a file (a read card: the lines, the file as location);
//! - `write PATH: TEXT` writes a file (`\n` in TEXT is a newline; a diff card, asks first);
//! - `edit PATH: OLD => NEW` replaces the one occurrence of OLD (a diff card, asks first);
//! - `run COMMAND` runs `sh -c COMMAND` in the working directory (a terminal card, asks first);
//! - `demo` is the quickstart's turn: write `hello.txt`, read it, edit it, run `cat hello.txt`.
//!
//! Paths are relative to the session's working directory and cannot leave it. Logs go to
//! standard error.

use dsh_tools::acp::agent_client_protocol::{self as acp, Agent, Stdio};
use dsh_tools::acp::schema::{
    AgentCapabilities, CancelNotification, ClientCapabilities, CloseSessionRequest,
    CloseSessionResponse, ContentBlock, ContentChunk, Implementation, InitializeRequest,
    InitializeResponse, NewSessionRequest, NewSessionResponse, PromptRequest, PromptResponse,
    SessionCapabilities, SessionCloseCapabilities, SessionId, SessionUpdate, StopReason,
    TextContent,
};
use dsh_tools::acp::{AcpBridge, AcpSession, SessionView};
use dsh_tools::present::{
    FileDiff, FileLocation, ReadFileLine, TerminalExit, TerminalResult, ToolCallKind, ToolCallView,
    ToolResultView,
};
use dsh_tools::workspace::Workspace;
use dsh_tools::{
    CancellationToken, PreToolDecision, Registry, ScopedRegistration, State, Tool, ToolError,
    ToolExecutionInput, tool, wrappers,
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use std::collections::HashMap;
use std::process::ExitCode;
use std::sync::{Arc, Mutex};

#[derive(Serialize, Deserialize, JsonSchema)]
struct ReadOutput {
    path: String,
    offset: u32,
    lines: Vec<String>,
}

/// The most lines one `read_file` returns when `limit` is not given.
const DEFAULT_READ_LINES: u32 = 2_000;

/// Read a text file of the workspace (at most 8 MiB), from a line on.
#[tool(title = "Read file", read_only, concurrency_safe, timeout_ms = 30_000)]
async fn read_file(
    State(ws): State<Workspace>,
    /// File path, relative to the workspace
    path: String,
    /// First line to read, 1-based
    offset: Option<u32>,
    /// How many lines to read at most (2,000 when absent)
    limit: Option<u32>,
) -> Result<ReadOutput, ToolError> {
    let text = ws.read_to_string(&path).await?;
    let offset = offset.unwrap_or(1).max(1);
    let lines = text
        .lines()
        .skip(offset as usize - 1)
        .take(limit.unwrap_or(DEFAULT_READ_LINES) as usize)
        .map(str::to_owned)
        .collect();
    Ok(ReadOutput {
        path,
        offset,
        lines,
    })
}

/// A file change: the whole text before (absent for a new file) and after.
#[derive(Serialize, Deserialize, JsonSchema)]
struct Change {
    path: String,
    old_text: Option<String>,
    new_text: String,
}

/// Write a text file of the workspace (created or replaced).
#[tool(title = "Write file", destructive, idempotent, timeout_ms = 30_000)]
async fn write_file(
    State(ws): State<Workspace>,
    /// File path, relative to the workspace
    path: String,
    /// The new contents
    content: String,
) -> Result<Change, ToolError> {
    let old_text = ws.read_to_string(&path).await.ok();
    ws.write(&path, content.as_bytes()).await?;
    Ok(Change {
        path,
        old_text,
        new_text: content,
    })
}

/// Replace the one occurrence of a text in a file of the workspace.
#[tool(title = "Edit file", destructive, timeout_ms = 30_000)]
async fn edit_file(
    State(ws): State<Workspace>,
    /// File path, relative to the workspace
    path: String,
    /// The text to replace: it must occur exactly once
    old: String,
    /// Its replacement
    new: String,
) -> Result<Change, ToolError> {
    let before = ws.read_to_string(&path).await?;
    let found = before.matches(old.as_str()).count();
    if old.is_empty() || found != 1 {
        return Err(ToolError::new(format!(
            "{:?} occurs {found} times in {path}; it must occur exactly once",
            old
        )));
    }
    let after = before.replacen(old.as_str(), &new, 1);
    ws.write(&path, after.as_bytes()).await?;
    Ok(Change {
        path,
        old_text: Some(before),
        new_text: after,
    })
}

#[derive(Serialize, Deserialize, JsonSchema)]
struct RunOutput {
    /// Standard output and error as they came, the last `OUTPUT_LIMIT` bytes of them.
    output: String,
    /// How many earlier bytes were left out.
    truncated_bytes: u64,
    exit_code: Option<i32>,
    signal: Option<String>,
}

/// The most output `run` keeps: its last 64 KiB (what an editor shows; ACP's terminals cut
/// from the start the same way with their `outputByteLimit`). The rest is read and dropped,
/// so a command printing gigabytes neither fills memory nor blocks on a full pipe.
const OUTPUT_LIMIT: usize = 64 * 1024;

/// Run a shell command in the workspace (`sh -c`): its output (the last 64 KiB) and exit
/// status.
#[tool(title = "Run command", destructive, timeout_ms = 30_000)]
async fn run_command(
    State(ws): State<Workspace>,
    /// The command line
    command: String,
) -> Result<RunOutput, ToolError> {
    use tokio::io::AsyncReadExt;
    let mut child = tokio::process::Command::new("sh")
        .arg("-c")
        .arg(&command)
        .current_dir(ws.root())
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()?;
    let (mut stdout, mut stderr) = (child.stdout.take(), child.stderr.take());
    let mut tail: std::collections::VecDeque<u8> = std::collections::VecDeque::new();
    let mut dropped = 0u64;
    let (mut out_buf, mut err_buf) = (vec![0u8; 16 * 1024], vec![0u8; 16 * 1024]);
    while stdout.is_some() || stderr.is_some() {
        // Both pipes at once, in the order the bytes come.
        let read = tokio::select! {
            n = async { stdout.as_mut()?.read(&mut out_buf).await.ok() }, if stdout.is_some() => (0, n),
            n = async { stderr.as_mut()?.read(&mut err_buf).await.ok() }, if stderr.is_some() => (1, n),
        };
        let chunk = match read {
            (0, Some(n)) if n > 0 => &out_buf[..n],
            (1, Some(n)) if n > 0 => &err_buf[..n],
            (0, _) => {
                stdout = None;
                continue;
            }
            _ => {
                stderr = None;
                continue;
            }
        };
        tail.extend(chunk);
        if tail.len() > OUTPUT_LIMIT {
            let extra = tail.len() - OUTPUT_LIMIT;
            tail.drain(..extra);
            dropped += extra as u64;
        }
    }
    let status = child.wait().await?;
    let bytes: Vec<u8> = tail.into();
    // Cut on a character boundary: a cut code point shows as one replacement character.
    let output = String::from_utf8_lossy(&bytes).into_owned();
    #[cfg(unix)]
    let signal =
        std::os::unix::process::ExitStatusExt::signal(&status).map(|s| format!("signal {s}"));
    #[cfg(not(unix))]
    let signal = None;
    Ok(RunOutput {
        output,
        truncated_bytes: dropped,
        exit_code: status.code(),
        signal,
    })
}

/// What a call card (and so the editor's permission dialog) shows for a path: where it really
/// leads inside the workspace, with every link resolved, or why the call will be refused.
fn shown_path(ws: &Workspace, path: &str) -> String {
    match ws.resolve(path) {
        Ok(resolved) if resolved.as_os_str() == path => path.to_owned(),
        Ok(resolved) => format!("{path} (resolves to {})", resolved.display()),
        Err(e) => format!("{path} (refused: {e})"),
    }
}

fn diff_card(path: &str, change: &Change) -> Option<ToolResultView> {
    Some(ToolResultView::Diff {
        title: None,
        diffs: vec![FileDiff {
            path: path.to_owned(),
            old_text: change.old_text.clone(),
            new_text: change.new_text.clone(),
        }],
    })
}

/// The session's file tools, bound to its working directory, with cards drawn from their typed
/// arguments and outputs.
fn register_tools(
    registry: &Registry,
    session: &AcpSession,
    ws: &Workspace,
) -> Vec<ScopedRegistration> {
    let scope = registry.scope(session.agent().clone());
    let (ws_read, ws_write, ws_edit) = (ws.clone(), ws.clone(), ws.clone());
    let read = ReadFile::with(ws.clone())
        .call_card(move |args| {
            Some(ToolCallView::Generic {
                title: format!("Read {}", shown_path(&ws_read, &args.path)),
                kind: Some(ToolCallKind::Read),
                raw_input: None,
                content: None,
                locations: Some(vec![FileLocation {
                    path: args.path.clone(),
                    line: args.offset.map(u64::from),
                }]),
            })
        })
        .result_card(|args, out| {
            let offset = u64::from(out.offset);
            let lines: Vec<ReadFileLine> = (offset..)
                .zip(&out.lines)
                .map(|(number, text)| ReadFileLine {
                    number,
                    text: text.clone(),
                })
                .collect();
            Some(ToolResultView::Read {
                title: None,
                total_lines: offset + lines.len() as u64 - 1,
                path: args.path.clone(),
                offset,
                lines,
                lang: None,
                content: None,
            })
        });
    let write = WriteFile::with(ws.clone())
        .call_card(move |args| {
            Some(ToolCallView::Generic {
                title: format!("Write {}", shown_path(&ws_write, &args.path)),
                kind: Some(ToolCallKind::Edit),
                raw_input: None,
                content: None,
                locations: Some(vec![FileLocation {
                    path: args.path.clone(),
                    line: None,
                }]),
            })
        })
        .result_card(|args, change| diff_card(&args.path, change));
    let edit = EditFile::with(ws.clone())
        .call_card(move |args| {
            Some(ToolCallView::Diff {
                title: format!("Edit {}", shown_path(&ws_edit, &args.path)),
                diffs: vec![FileDiff {
                    path: args.path.clone(),
                    old_text: Some(args.old.clone()),
                    new_text: args.new.clone(),
                }],
                locations: None,
            })
        })
        .result_card(|args, change| diff_card(&args.path, change));
    let run = RunCommand::with(ws.clone())
        .call_card(|args| {
            Some(ToolCallView::Terminal {
                title: args.command.clone(),
                description: None,
                cwd: None,
            })
        })
        .result_card(|_args, out| {
            let exit = match (out.exit_code, &out.signal) {
                (Some(code), _) => Some(TerminalExit::Code(i64::from(code))),
                (None, Some(signal)) => Some(TerminalExit::Signal(signal.clone())),
                (None, None) => None,
            };
            let output = if out.truncated_bytes > 0 {
                format!(
                    "[{} earlier bytes not shown]\n{}",
                    out.truncated_bytes, out.output
                )
            } else {
                out.output.clone()
            };
            Some(ToolResultView::Terminal(TerminalResult {
                title: None,
                output: Some(output),
                exit,
            }))
        });
    [
        read.definition(),
        write.definition(),
        edit.definition(),
        run.definition(),
    ]
    .into_iter()
    .map(|definition| {
        scope
            .register(definition)
            .expect("the file tools are valid")
            .scoped()
    })
    .collect()
}

/// One line of a prompt as a call, or why it is not one.
fn parse_line(line: &str) -> Result<(&'static str, Value), String> {
    let (verb, rest) = line.split_once(' ').unwrap_or((line, ""));
    let rest = rest.trim();
    let split = |rest: &str| -> Option<(String, String)> {
        let (path, text) = rest.split_once(':')?;
        Some((path.trim().to_owned(), text.trim_start().to_owned()))
    };
    match verb {
        "read" => Ok(("read_file", json!({ "path": rest }))),
        "write" => {
            let (path, text) = split(rest).ok_or("write PATH: TEXT")?;
            Ok((
                "write_file",
                json!({ "path": path, "content": text.replace("\\n", "\n") }),
            ))
        }
        "edit" => {
            let (path, change) = split(rest).ok_or("edit PATH: OLD => NEW")?;
            let (old, new) = change.split_once(" => ").ok_or("edit PATH: OLD => NEW")?;
            Ok(("edit_file", json!({ "path": path, "old": old, "new": new })))
        }
        "run" => Ok(("run_command", json!({ "command": rest }))),
        _ => Err(format!(
            "I don't know {verb:?}. Each line is one of: read PATH / write PATH: TEXT / \
             edit PATH: OLD => NEW / run COMMAND / demo"
        )),
    }
}

const DEMO: &str = "write hello.txt: hello, world\\n\nread hello.txt\nedit hello.txt: hello => goodbye\nrun cat hello.txt";

/// What the agent keeps per connection.
#[derive(Default)]
struct Agents {
    client: ClientCapabilities,
    sessions: HashMap<SessionId, Entry>,
    next_id: u64,
}

/// Open sessions kept per connection. A client that never sends `session/close` would grow the
/// agent without end: past this, `session/new` closes the least recently used idle session.
const MAX_SESSIONS: usize = 64;

struct Entry {
    session: Arc<AcpSession>,
    _tools: Vec<ScopedRegistration>,
    /// The running prompt's signal (`session/cancel` trips it).
    running: Option<CancellationToken>,
    /// When the session was last used (a counter), for evicting the idlest.
    used: u64,
}

impl Agents {
    /// Makes room for one more session: closes the least recently used idle one when full.
    /// `false` when every session is busy.
    fn make_room(&mut self) -> bool {
        if self.sessions.len() < MAX_SESSIONS {
            return true;
        }
        let idlest = self
            .sessions
            .iter()
            .filter(|(_, e)| e.running.is_none())
            .min_by_key(|(_, e)| e.used)
            .map(|(id, _)| id.clone());
        match idlest {
            Some(id) => {
                self.sessions.remove(&id);
                true
            }
            None => false,
        }
    }

    fn tick(&mut self) -> u64 {
        self.next_id += 1;
        self.next_id
    }
}

fn text_chunk(text: impl Into<String>) -> SessionUpdate {
    SessionUpdate::AgentMessageChunk(ContentChunk::new(ContentBlock::Text(TextContent::new(
        text,
    ))))
}

fn invalid_params(message: String) -> acp::Error {
    acp::Error::invalid_params().data(json!({ "message": message }))
}

/// Runs one prompt: each line is a call, in order; stops early when cancelled.
async fn run_prompt(
    session: Arc<AcpSession>,
    text: String,
    signal: CancellationToken,
) -> StopReason {
    let script = if text.trim() == "demo" {
        DEMO.to_owned()
    } else {
        text
    };
    let mut calls = 0;
    let mut failed = 0;
    for line in script.lines().map(str::trim).filter(|l| !l.is_empty()) {
        if signal.is_cancelled() {
            return StopReason::Cancelled;
        }
        let (name, args) = match parse_line(line) {
            Ok(call) => call,
            Err(help) => {
                session.send(text_chunk(help));
                continue;
            }
        };
        calls += 1;
        let id = format!("call_{}_{calls}", std::process::id());
        let result = session
            .execute(ToolExecutionInput::new(id, name, args, signal.clone()))
            .await;
        if result.is_error() {
            failed += 1;
        }
    }
    if signal.is_cancelled() {
        return StopReason::Cancelled;
    }
    session.send(text_chunk(format!("Done: {calls} calls, {failed} failed.")));
    StopReason::EndTurn
}

#[tokio::main]
async fn main() -> ExitCode {
    let registry = Registry::new();
    registry.on_execute(wrappers::timeout(&registry));
    // Policy: reading is free; writing, editing and running commands ask the user.
    registry.on_pre_execute(|exec, next| async move {
        match exec.name() {
            "write_file" | "edit_file" | "run_command" => Ok(PreToolDecision::ask(Some(
                "changes files or runs a command",
            ))),
            _ => next.run().await,
        }
    });
    let bridge = AcpBridge::new(&registry);
    let agents: Arc<Mutex<Agents>> = Arc::default();

    let served = Agent
        .v1()
        .name("dsh-tools-acp-agent")
        .on_receive_request(
            {
                let agents = agents.clone();
                async move |request: InitializeRequest, responder, _cx| {
                    agents.lock().unwrap().client = request.client_capabilities.clone();
                    responder.respond(
                        InitializeResponse::new(request.protocol_version)
                            .agent_capabilities(AgentCapabilities::new().session_capabilities(
                                SessionCapabilities::new().close(SessionCloseCapabilities::new()),
                            ))
                            .agent_info(Implementation::new(
                                "dsh-tools-acp-agent",
                                env!("CARGO_PKG_VERSION"),
                            )),
                    )
                }
            },
            acp::on_receive_request!(),
        )
        .on_receive_request(
            {
                let (agents, bridge, registry) = (agents.clone(), bridge.clone(), registry.clone());
                async move |request: NewSessionRequest, responder, cx| {
                    let cwd = request.cwd.clone();
                    if !cwd.is_absolute() {
                        return responder.respond_with_error(invalid_params(format!(
                            "cwd must be an absolute path, not {}",
                            cwd.display()
                        )));
                    }
                    // The file tools' confinement: a handle on the directory, every path
                    // resolved beneath it by the kernel.
                    let Ok(ws) = Workspace::open(&cwd) else {
                        return responder.respond_with_error(invalid_params(format!(
                            "cwd {} does not exist or is not a directory",
                            cwd.display()
                        )));
                    };
                    let mut state = agents.lock().unwrap();
                    if !state.make_room() {
                        return responder.respond_with_error(invalid_params(format!(
                            "{MAX_SESSIONS} sessions are running prompts: close one first (session/close)"
                        )));
                    }
                    let used = state.tick();
                    let id = SessionId::new(format!("sess_{}_{used}", std::process::id()));
                    let view = SessionView::new(cwd).with_capabilities(&state.client);
                    let session = Arc::new(bridge.open_session(cx.clone(), id.clone(), view));
                    let tools = register_tools(&registry, &session, &ws);
                    state.sessions.insert(
                        id.clone(),
                        Entry {
                            session,
                            _tools: tools,
                            running: None,
                            used,
                        },
                    );
                    responder.respond(NewSessionResponse::new(id))
                }
            },
            acp::on_receive_request!(),
        )
        .on_receive_request(
            {
                let agents = agents.clone();
                async move |request: PromptRequest, responder, _cx| {
                    let session_id = request.session_id.clone();
                    let signal = CancellationToken::new();
                    let session = {
                        let mut state = agents.lock().unwrap();
                        let used = state.tick();
                        let Some(entry) = state.sessions.get_mut(&request.session_id) else {
                            return responder.respond_with_error(invalid_params(format!(
                                "no session {:?}: call session/new first",
                                request.session_id.0
                            )));
                        };
                        if entry.running.is_some() {
                            return responder.respond_with_error(invalid_params(format!(
                                "session {:?} is already running a prompt",
                                request.session_id.0
                            )));
                        }
                        entry.running = Some(signal.clone());
                        entry.used = used;
                        entry.session.clone()
                    };
                    let text: Vec<&str> = request
                        .prompt
                        .iter()
                        .filter_map(|block| match block {
                            ContentBlock::Text(t) => Some(t.text.as_str()),
                            _ => None,
                        })
                        .collect();
                    let text = text.join("\n");
                    // The calls wait on the client (permission requests): off the dispatch loop.
                    let agents = agents.clone();
                    tokio::spawn(async move {
                        let stop = run_prompt(session, text, signal).await;
                        // One prompt at a time per session: this one is over.
                        if let Some(entry) = agents.lock().unwrap().sessions.get_mut(&session_id) {
                            entry.running = None;
                        }
                        if let Err(error) = responder.respond(PromptResponse::new(stop)) {
                            eprintln!("acp_agent: the prompt's answer was not sent: {error}");
                        }
                    });
                    Ok(())
                }
            },
            acp::on_receive_request!(),
        )
        .on_receive_request(
            {
                let agents = agents.clone();
                async move |request: CloseSessionRequest, responder, _cx| {
                    // Closing cancels a running prompt and frees the session and its tools.
                    let entry = agents.lock().unwrap().sessions.remove(&request.session_id);
                    match entry {
                        Some(entry) => {
                            if let Some(signal) = &entry.running {
                                signal.cancel();
                            }
                            drop(entry);
                            responder.respond(CloseSessionResponse::new())
                        }
                        None => responder.respond_with_error(invalid_params(format!(
                            "no session {:?}",
                            request.session_id.0
                        ))),
                    }
                }
            },
            acp::on_receive_request!(),
        )
        .on_receive_notification(
            {
                let agents = agents.clone();
                async move |cancel: CancelNotification, _cx| {
                    let state = agents.lock().unwrap();
                    if let Some(signal) = state
                        .sessions
                        .get(&cancel.session_id)
                        .and_then(|e| e.running.as_ref())
                    {
                        signal.cancel();
                    }
                    Ok(())
                }
            },
            acp::on_receive_notification!(),
        )
        .connect_to(Stdio::new())
        .await;
    // Close the sessions (and their scoped tools) before the runtime goes.
    agents.lock().unwrap().sessions.clear();
    match served {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("acp_agent: {error}");
            ExitCode::FAILURE
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use dsh_tools::testing::{FuzzConfig, fuzz_tool};

    /// The file tools, fuzzed from their own schemas on a scratch workspace. `run_command` is
    /// left out: its valid arguments are any shell command line.
    #[test]
    fn the_file_tools_survive_fuzzing() {
        let dir = std::env::temp_dir().join(format!("dsh-acp-agent-fuzz-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let ws = Workspace::open(&dir).unwrap();
        std::fs::write(ws.root().join("a.txt"), "alpha\nbeta\n").unwrap();
        let config = FuzzConfig::default().cases(128);
        for report in [
            fuzz_tool(ReadFile::with(ws.clone()), config),
            fuzz_tool(WriteFile::with(ws.clone()), config),
            fuzz_tool(EditFile::with(ws.clone()), config),
        ] {
            let report = report.unwrap_or_else(|failure| panic!("{failure}"));
            assert!(report.valid > 0 && report.invalid > 0, "{report:?}");
        }
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn prompt_lines_become_calls() {
        assert_eq!(
            parse_line("edit a.txt: x => y").unwrap(),
            (
                "edit_file",
                json!({"path": "a.txt", "old": "x", "new": "y"})
            )
        );
        assert_eq!(
            parse_line("write a.txt: one\\ntwo").unwrap(),
            (
                "write_file",
                json!({"path": "a.txt", "content": "one\ntwo"})
            )
        );
        assert!(
            parse_line("edit a.txt x y")
                .unwrap_err()
                .contains("OLD => NEW")
        );
        assert!(parse_line("dance").unwrap_err().contains("\"dance\""));
    }
}

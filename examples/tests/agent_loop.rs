//! The agent example's loop against a scripted local chat-completions server: recorded replies
//! in order (a parallel step, a malformed arguments string next to a guarded path and a sandbox
//! command, a write, then the answer); the requests the server received are checked message by
//! message.

// The example reads parts of the loop this test does not.
#[allow(dead_code)]
#[path = "../agent/loop.rs"]
mod agent_loop;
#[allow(dead_code)]
#[path = "../agent/approvals.rs"]
mod approvals;

use agent_loop::{AgentConfig, Saved, fresh_workspace, resume_agent, run_agent, seed_workspace};
use dsh_tools::ApprovalOutcome;
use dsh_tools::provider::{Dialect, Provider};
use serde_json::{Value, json};
use std::sync::{Arc, Mutex};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpListener;

/// One request as the server read it.
#[derive(Clone, Debug)]
struct Recorded {
    method: String,
    path: String,
    authorization: Option<String>,
    body: Value,
}

/// A chat-completions server on 127.0.0.1 that answers each request with the next reply of
/// the script (HTTP/1.1, one request per connection), and 500 once the script is spent.
async fn scripted_server(replies: Vec<Value>) -> (String, Arc<Mutex<Vec<Recorded>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let base = format!("http://{}", listener.local_addr().expect("address"));
    let recorded = Arc::new(Mutex::new(Vec::new()));
    let log = Arc::clone(&recorded);
    tokio::spawn(async move {
        let mut replies = replies.into_iter();
        while let Ok((stream, _)) = listener.accept().await {
            let mut stream = BufReader::new(stream);
            let mut request_line = String::new();
            if stream.read_line(&mut request_line).await.unwrap_or(0) == 0 {
                continue;
            }
            let mut parts = request_line.split_whitespace();
            let method = parts.next().unwrap_or_default().to_owned();
            let path = parts.next().unwrap_or_default().to_owned();
            let mut length = 0usize;
            let mut authorization = None;
            loop {
                let mut line = String::new();
                if stream.read_line(&mut line).await.unwrap_or(0) == 0 {
                    break;
                }
                let line = line.trim_end();
                if line.is_empty() {
                    break;
                }
                if let Some((name, value)) = line.split_once(':') {
                    match name.trim().to_ascii_lowercase().as_str() {
                        "content-length" => length = value.trim().parse().unwrap_or(0),
                        "authorization" => authorization = Some(value.trim().to_owned()),
                        _ => {}
                    }
                }
            }
            let mut body = vec![0; length];
            if stream.read_exact(&mut body).await.is_err() {
                continue;
            }
            log.lock().expect("log").push(Recorded {
                method: method.clone(),
                path: path.clone(),
                authorization,
                body: serde_json::from_slice(&body).unwrap_or(Value::Null),
            });
            let (status, reply) = match replies.next() {
                Some(reply) if method == "POST" && path == "/chat/completions" => {
                    ("200 OK", reply.to_string())
                }
                _ => (
                    "500 Internal Server Error",
                    json!({"error": {"message": "unexpected request"}}).to_string(),
                ),
            };
            let response = format!(
                "HTTP/1.1 {status}\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{reply}",
                reply.len()
            );
            let mut stream = stream.into_inner();
            let _ = stream.write_all(response.as_bytes()).await;
            let _ = stream.shutdown().await;
        }
    });
    (base, recorded)
}

/// A recorded chat completion whose message makes these calls (`(id, name, arguments string)`).
fn tool_reply(content: Option<&str>, calls: &[(&str, &str, &str)]) -> Value {
    let tool_calls: Vec<Value> = calls
        .iter()
        .enumerate()
        .map(|(index, (id, name, arguments))| {
            json!({"index": index, "id": id, "type": "function",
                   "function": {"name": name, "arguments": arguments}})
        })
        .collect();
    json!({
        "id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": "scripted",
        "choices": [{"index": 0, "finish_reason": "tool_calls",
                     "message": {"role": "assistant", "content": content, "tool_calls": tool_calls}}],
        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}
    })
}

fn answer_reply(text: &str) -> Value {
    json!({
        "id": "chatcmpl-2", "object": "chat.completion", "created": 2, "model": "scripted",
        "choices": [{"index": 0, "finish_reason": "stop",
                     "message": {"role": "assistant", "content": text}}],
        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}
    })
}

const FIXED: &str =
    "/// The sum of `a` and `b`.\npub fn add(a: i32, b: i32) -> i32 {\n    a + b\n}\n";
const ANSWER: &str = "Fixed `add` in src/lib.rs: it subtracted, now it adds.";

/// The script: what a model fixing the seeded bug might send.
fn script() -> Vec<Value> {
    vec![
        // Step 1: two reads in one reply (both parallel-safe).
        tool_reply(
            Some("Reading the note and the code."),
            &[
                ("call_r1", "read_file", r#"{"path": "notes.txt"}"#),
                (
                    "call_r2",
                    "read_file",
                    r#"{"path": "src/lib.rs", "offset": 2}"#,
                ),
            ],
        ),
        // Step 2: a truncated arguments string, a path outside the workspace, a sandbox command.
        tool_reply(
            None,
            &[
                ("call_w1", "write_file", r#"{"path": "#),
                ("call_r3", "read_file", r#"{"path": "../secret.txt"}"#),
                ("call_b1", "bash", r#"{"command": "grep a src/lib.rs"}"#),
            ],
        ),
        // Step 3: the write, well formed this time.
        tool_reply(
            Some(""),
            &[(
                "call_w2",
                "write_file",
                &json!({"path": "src/lib.rs", "content": FIXED}).to_string(),
            )],
        ),
        answer_reply(ANSWER),
    ]
}

/// A call of the transcript: id, tool, error code, whether it failed.
type CallSummary<'a> = (&'a str, &'a str, Option<&'a str>, bool);

fn tool_messages(messages: &[Value]) -> Vec<(String, String)> {
    messages
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| {
            (
                m["tool_call_id"].as_str().unwrap_or_default().to_owned(),
                m["content"].as_str().unwrap_or_default().to_owned(),
            )
        })
        .collect()
}

async fn scripted_run(dialect: Dialect) {
    let (base_url, recorded) = scripted_server(script()).await;
    let workspace = fresh_workspace("agent-loop-test").expect("workspace");
    seed_workspace(&workspace).expect("seed");
    let config = AgentConfig {
        base_url,
        api_key: "test-key".to_owned(),
        model: "scripted-model".to_owned(),
        dialect,
        workspace: workspace.clone(),
        max_steps: 8,
        code_mode: false,
        defer: None,
    };
    let mut out = Vec::new();
    let transcript = run_agent(&config, "fix the bug", &mut out)
        .await
        .unwrap_or_else(|e| panic!("the loop failed: {e}"));
    let out = String::from_utf8(out).expect("utf-8 output");
    let requests = recorded.lock().expect("log").clone();
    let written = std::fs::read_to_string(workspace.join("src/lib.rs")).expect("lib.rs");
    let _ = std::fs::remove_dir_all(&workspace);

    // Four requests, each a chat completion with the key, the model and the three tools.
    assert_eq!(requests.len(), 4, "{out}");
    for r in &requests {
        assert_eq!(
            (r.method.as_str(), r.path.as_str()),
            ("POST", "/chat/completions")
        );
        assert_eq!(r.authorization.as_deref(), Some("Bearer test-key"));
        assert_eq!(r.body["model"], "scripted-model");
        let names: Vec<&str> = r.body["tools"]
            .as_array()
            .expect("tools")
            .iter()
            .map(|t| {
                assert_eq!(t["type"], "function");
                t["function"]["name"].as_str().expect("name")
            })
            .collect();
        assert_eq!(names, ["read_file", "write_file", "bash"]);
        // Non-strict: no `parallel_tool_calls: false`.
        assert!(r.body.get("parallel_tool_calls").is_none());
    }
    let tools = &requests[0].body["tools"];
    assert_eq!(
        tools[0]["function"]["parameters"]["required"],
        json!(["path"])
    );
    match dialect.provider() {
        Provider::OpenAiChat => assert_eq!(tools[0]["function"]["strict"], false),
        _ => assert!(tools[0]["function"].get("strict").is_none()),
    }

    // Request 1: the system prompt and the task.
    let first = requests[0].body["messages"].as_array().expect("messages");
    assert_eq!(first.len(), 2);
    assert_eq!(first[0]["role"], "system");
    assert_eq!(first[1], json!({"role": "user", "content": "fix the bug"}));

    // Request 2: the parallel step's assistant message as received, then both results in order.
    let second = requests[1].body["messages"].as_array().expect("messages");
    assert_eq!(second.len(), 5);
    assert_eq!(second[..2], first[..]);
    assert_eq!(
        second[2],
        script()[0]["choices"][0]["message"],
        "the assistant message goes back as received"
    );
    let step1 = tool_messages(second);
    assert_eq!(
        step1.iter().map(|(id, _)| id.as_str()).collect::<Vec<_>>(),
        ["call_r1", "call_r2"]
    );
    let notes: Value = serde_json::from_str(&step1[0].1).expect("read_file output");
    assert_eq!(notes["path"], "notes.txt");
    assert!(
        notes["lines"][0]
            .as_str()
            .unwrap()
            .starts_with("TODO: `add`")
    );
    let lib: Value = serde_json::from_str(&step1[1].1).expect("read_file output");
    assert_eq!(
        lib,
        json!({"path": "src/lib.rs", "offset": 2, "total_lines": 4,
               "lines": ["pub fn add(a: i32, b: i32) -> i32 {", "    a - b", "}"]})
    );

    // Request 3: the malformed call is answered in its place, as INVALID_ARGS; then the guard's
    // refusal and the sandbox's output, in model order.
    let third = requests[2].body["messages"].as_array().expect("messages");
    assert_eq!(third.len(), 9);
    assert_eq!(third[..5], second[..]);
    assert_eq!(
        third[5]["tool_calls"][0]["function"]["arguments"], r#"{"path": "#,
        "the malformed arguments go back as the model sent them"
    );
    let step2 = tool_messages(&third[5..]);
    assert_eq!(
        step2.iter().map(|(id, _)| id.as_str()).collect::<Vec<_>>(),
        ["call_w1", "call_r3", "call_b1"]
    );
    assert!(
        step2[0]
            .1
            .starts_with("Error: invalid arguments: the arguments are not valid JSON ("),
        "{}",
        step2[0].1
    );
    assert!(
        step2[0]
            .1
            .ends_with("); send one JSON object, such as {\"name\": \"value\"}"),
        "{}",
        step2[0].1
    );
    assert_eq!(
        step2[1].1,
        "Error: ../secret.txt is outside the workspace: use a path relative to the workspace root, such as src/lib.rs"
    );
    let grep: Value = serde_json::from_str(&step2[2].1).expect("bash output");
    assert_eq!(
        grep,
        json!({"output": "1:/// The sum of `a` and `b`.\n2:pub fn add(a: i32, b: i32) -> i32 {\n3:    a - b\n", "exit_code": 0})
    );

    // Request 4: the write's result; the file on disk is fixed.
    let fourth = requests[3].body["messages"].as_array().expect("messages");
    assert_eq!(fourth.len(), 11);
    assert_eq!(fourth[..9], third[..]);
    assert_eq!(
        tool_messages(&fourth[9..]),
        [(
            "call_w2".to_owned(),
            format!("wrote {} bytes to src/lib.rs", FIXED.len())
        )]
    );
    assert_eq!(written, FIXED);

    // The transcript: every request's messages plus the answer; per step, the calls.
    assert_eq!(transcript.answer.as_deref(), Some(ANSWER));
    assert_eq!(transcript.messages.len(), 12);
    assert_eq!(transcript.messages[..11], fourth[..]);
    assert_eq!(
        transcript.messages[11],
        script()[3]["choices"][0]["message"]
    );
    let steps: Vec<Vec<CallSummary<'_>>> = transcript
        .steps
        .iter()
        .map(|calls| {
            calls
                .iter()
                .map(|c| {
                    (
                        c.call_id.as_str(),
                        c.name.as_str(),
                        c.result.code(),
                        c.result.is_error(),
                    )
                })
                .collect()
        })
        .collect();
    assert_eq!(
        steps,
        [
            vec![
                ("call_r1", "read_file", None, false),
                ("call_r2", "read_file", None, false),
            ],
            vec![
                ("call_w1", "write_file", Some("INVALID_ARGS"), true),
                ("call_r3", "read_file", None, true),
                ("call_b1", "bash", None, false),
            ],
            vec![("call_w2", "write_file", None, false)],
        ]
    );
    assert_eq!(transcript.steps[1][0].arguments, None);
    assert_eq!(
        transcript.steps[0][1].arguments,
        Some(json!({"path": "src/lib.rs", "offset": 2}))
    );

    // The printed cards: each call's, then each result's, in model order within a step.
    let wrote = format!(
        "  ◂ call_w2 write_file (ok): result\n        wrote {} bytes to src/lib.rs",
        FIXED.len()
    );
    let expected_in_order = [
        "── step 1: scripted-model (2 messages)",
        "  model: Reading the note and the code.",
        "  ▸ call_r1 [read] Read notes.txt",
        "  ▸ call_r2 [read] Read src/lib.rs",
        "  ◂ call_r1 read_file (ok): read\n        notes.txt:1, 1 line of 1",
        "  ◂ call_r2 read_file (ok): read\n        src/lib.rs:2, 3 lines of 4",
        "── step 2: scripted-model (5 messages)",
        "  ▸ call_w1 write_file (arguments unreadable)",
        "  ◂ call_w1 write_file (error INVALID_ARGS): result\n        Error: invalid arguments: the arguments are not valid JSON",
        "  ▸ call_r3 [read] Read ../secret.txt",
        "  ▸ call_b1 $ grep a src/lib.rs\n        in the workspace",
        "  ◂ call_r3 read_file (error): result\n        Error: ../secret.txt is outside the workspace",
        "  ◂ call_b1 bash (ok): terminal\n        1:/// The sum",
        "── step 3: scripted-model (9 messages)",
        "  ▸ call_w2 Write src/lib.rs\n        src/lib.rs +1 -1",
        &wrote,
        "── step 4: scripted-model (11 messages)",
        "── answer:\nFixed `add`",
    ];
    let mut rest = out.as_str();
    for expected in expected_in_order {
        let at = rest
            .find(expected)
            .unwrap_or_else(|| panic!("{expected:?} missing (in order) from:\n{out}"));
        rest = &rest[at + expected.len()..];
    }
}

#[tokio::test]
async fn deepseek_loop_against_a_scripted_server() {
    scripted_run(Dialect::new(Provider::DeepSeek)).await;
}

#[tokio::test]
async fn openai_chat_loop_against_a_scripted_server() {
    scripted_run(Dialect::new(Provider::OpenAiChat)).await;
}

#[tokio::test]
async fn step_limit_and_error_status() {
    // A model that never stops calling tools: the loop ends after max_steps requests.
    let looping = tool_reply(None, &[("call_1", "bash", r#"{"command": "ls"}"#)]);
    let (base_url, recorded) = scripted_server(vec![looping.clone(), looping.clone()]).await;
    let workspace = fresh_workspace("agent-loop-limit").expect("workspace");
    seed_workspace(&workspace).expect("seed");
    let mut config = AgentConfig {
        base_url,
        api_key: "k".to_owned(),
        model: "m".to_owned(),
        dialect: Dialect::new(Provider::DeepSeek),
        workspace: workspace.clone(),
        max_steps: 2,
        code_mode: false,
        defer: None,
    };
    let mut out = Vec::new();
    let transcript = run_agent(&config, "go", &mut out).await.expect("ran");
    assert_eq!(transcript.answer, None);
    assert_eq!(transcript.steps.len(), 2);
    assert_eq!(recorded.lock().unwrap().len(), 2);
    let ls: Value =
        serde_json::from_str(&transcript.steps[0][0].result.text()).expect("bash output");
    assert_eq!(ls, json!({"output": "notes.txt\nsrc/\n", "exit_code": 0}));
    assert!(String::from_utf8(out).unwrap().contains("── stopped"));

    // The script is spent: the server answers 500, and the loop reports it.
    config.max_steps = 8;
    let error = run_agent(&config, "go", &mut Vec::new())
        .await
        .expect_err("a 500");
    let _ = std::fs::remove_dir_all(&workspace);
    assert_eq!(
        error.to_string(),
        r#"the API answered 500: {"error":{"message":"unexpected request"}}"#
    );
}

#[tokio::test]
async fn code_mode_sends_run_code_and_the_sdk_and_runs_the_program() {
    // One program fixes the bug: read, replace, write; then the answer.
    let program = "const file = await tools.read_file({path: 'src/lib.rs'});\n\
        const text = file.lines.join('\\n') + '\\n';\n\
        await tools.write_file({path: 'src/lib.rs', content: text.replace('a - b', 'a + b')});\n\
        console.log(`fixed ${file.path}`);\n\
        return file.total_lines;";
    let arguments = json!({"code": program, "description": "Fix add in src/lib.rs"}).to_string();
    let (base_url, recorded) = scripted_server(vec![
        tool_reply(None, &[("call_c1", "run_code", &arguments)]),
        answer_reply("Fixed."),
    ])
    .await;
    let workspace = fresh_workspace("agent-loop-code").expect("workspace");
    seed_workspace(&workspace).expect("seed");
    let config = AgentConfig {
        base_url,
        api_key: "k".to_owned(),
        model: "m".to_owned(),
        dialect: Dialect::new(Provider::DeepSeek),
        workspace: workspace.clone(),
        max_steps: 4,
        code_mode: true,
        defer: None,
    };
    let transcript = run_agent(&config, "fix the bug", &mut Vec::new())
        .await
        .expect("ran");
    let fixed = std::fs::read_to_string(workspace.join("src/lib.rs")).unwrap();
    let _ = std::fs::remove_dir_all(&workspace);
    assert_eq!(transcript.answer.as_deref(), Some("Fixed."));
    assert_eq!(fixed, FIXED);
    let requests = recorded.lock().unwrap().clone();
    let first = &requests[0].body;
    let names: Vec<&str> = first["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["run_code"], "only run_code is sent");
    let system = first["messages"][0]["content"].as_str().unwrap();
    assert!(system.contains("`run_code` is the only tool you can call directly"));
    assert!(system.contains("  read_file: {"), "{system}");
    assert_eq!(
        tool_messages(transcript.messages.as_slice()),
        [("call_c1".to_owned(), "fixed src/lib.rs\n4".to_owned())]
    );
}

/// The deferred script: a read and a write in one step (the write waits for a person), then
/// the answer.
fn deferred_script() -> Vec<Value> {
    vec![
        tool_reply(
            Some("Reading and fixing."),
            &[
                ("call_r1", "read_file", r#"{"path": "notes.txt"}"#),
                (
                    "call_w1",
                    "write_file",
                    &json!({"path": "src/lib.rs", "content": FIXED}).to_string(),
                ),
            ],
        ),
        answer_reply(ANSWER),
    ]
}

#[tokio::test]
async fn deferred_approvals_save_the_turn_and_a_resume_in_a_fresh_session_finishes_it() {
    // The same script answered inline: what the model must see after the resume.
    let (base_url, inline_recorded) = scripted_server(deferred_script()).await;
    let inline_ws = fresh_workspace("agent-loop-inline").expect("workspace");
    seed_workspace(&inline_ws).expect("seed");
    let config = |base_url: String, workspace: std::path::PathBuf, defer| AgentConfig {
        base_url,
        api_key: "k".to_owned(),
        model: "m".to_owned(),
        dialect: Dialect::new(Provider::DeepSeek),
        workspace,
        max_steps: 8,
        code_mode: false,
        defer,
    };
    let inline = run_agent(
        &config(base_url, inline_ws.clone(), None),
        "fix",
        &mut Vec::new(),
    )
    .await
    .expect("inline run");
    assert_eq!(inline.answer.as_deref(), Some(ANSWER));

    let (base_url, recorded) = scripted_server(deferred_script()).await;
    let workspace = fresh_workspace("agent-loop-deferred").expect("workspace");
    seed_workspace(&workspace).expect("seed");
    let file = workspace.with_extension("turn.json");
    let config = config(base_url, workspace.clone(), Some(file.clone()));
    let mut out = Vec::new();
    let waiting = run_agent(&config, "fix", &mut out)
        .await
        .expect("first run");
    let out = String::from_utf8(out).unwrap();
    assert_eq!(waiting.answer, None, "{out}");
    assert_eq!(waiting.pending.len(), 1, "{out}");
    assert_eq!(waiting.pending[0].tool, "write_file");
    assert_eq!(waiting.pending[0].call_id, "call_w1");
    assert!(
        out.contains("⏸ call_w1 write_file waits for approval"),
        "{out}"
    );
    assert!(file.is_file() && Saved::approvals_dir(&file).is_dir());
    // Nothing written yet; one request made.
    let unfixed = std::fs::read_to_string(workspace.join("src/lib.rs")).unwrap();
    assert!(unfixed.contains("a - b"));
    assert_eq!(recorded.lock().unwrap().len(), 1);
    let copy = workspace.with_extension("copy.json");
    std::fs::copy(&file, &copy).unwrap();

    // A fresh session (nothing in memory but what the files hold) answers and goes on.
    let mut asked = Vec::new();
    let mut out = Vec::new();
    let done = resume_agent(
        &config,
        |p| {
            asked.push(p.tool.clone());
            Some(ApprovalOutcome::AllowedOnce)
        },
        &mut out,
    )
    .await
    .unwrap_or_else(|e| panic!("resume: {e}"));
    assert_eq!(asked, ["write_file"]);
    assert_eq!(done.answer.as_deref(), Some(ANSWER));
    assert_eq!(
        std::fs::read_to_string(workspace.join("src/lib.rs")).unwrap(),
        FIXED
    );
    assert!(!file.exists(), "the saved turn is gone once answered");
    // The model saw exactly what the inline run's model saw.
    let sent = recorded.lock().unwrap().clone();
    let inline_sent = inline_recorded.lock().unwrap().clone();
    assert_eq!(sent.len(), 2);
    let tools_of = |r: &Recorded| tool_messages(r.body["messages"].as_array().unwrap());
    assert_eq!(tools_of(&sent[1]), tools_of(&inline_sent[1]));
    assert_eq!(tools_of(&sent[1]).len(), 2);

    // The same turn answered again (a copy of the file): refused, nothing runs twice.
    std::fs::write(workspace.join("src/lib.rs"), "changed since").unwrap();
    let again = AgentConfig {
        defer: Some(copy.clone()),
        ..config.clone()
    };
    let error = resume_agent(
        &again,
        |_| Some(ApprovalOutcome::AllowedOnce),
        &mut Vec::new(),
    )
    .await
    .expect_err("answered already");
    assert!(error.to_string().contains("approval"), "{error}");
    assert_eq!(
        std::fs::read_to_string(workspace.join("src/lib.rs")).unwrap(),
        "changed since"
    );
    let _ = std::fs::remove_file(&copy);
    let _ = std::fs::remove_dir_all(Saved::approvals_dir(&file));
    let _ = std::fs::remove_dir_all(&workspace);
    let _ = std::fs::remove_dir_all(&inline_ws);
}

#[tokio::test]
async fn a_rejected_write_is_what_the_model_reads_and_an_unanswered_one_keeps_waiting() {
    let (base_url, recorded) = scripted_server(deferred_script()).await;
    let workspace = fresh_workspace("agent-loop-rejected").expect("workspace");
    seed_workspace(&workspace).expect("seed");
    let file = workspace.with_extension("turn.json");
    let config = AgentConfig {
        base_url,
        api_key: "k".to_owned(),
        model: "m".to_owned(),
        dialect: Dialect::new(Provider::DeepSeek),
        workspace: workspace.clone(),
        max_steps: 8,
        code_mode: false,
        defer: Some(file.clone()),
    };
    run_agent(&config, "fix", &mut Vec::new())
        .await
        .expect("first run");
    // Not answered: still waiting, saved again.
    let later = resume_agent(&config, |_| None, &mut Vec::new())
        .await
        .expect("resume without answers");
    assert_eq!(later.pending.len(), 1);
    assert!(file.is_file());
    // Rejected: the model reads the refusal; nothing was written.
    let done = resume_agent(
        &config,
        |_| Some(ApprovalOutcome::Rejected),
        &mut Vec::new(),
    )
    .await
    .expect("resume");
    assert_eq!(done.answer.as_deref(), Some(ANSWER));
    let sent = recorded.lock().unwrap().clone();
    let tools = tool_messages(sent[1].body["messages"].as_array().unwrap());
    assert_eq!(tools[1].0, "call_w1");
    assert!(
        tools[1].1.contains("the user rejected tool \"write_file\""),
        "{tools:?}"
    );
    assert!(
        std::fs::read_to_string(workspace.join("src/lib.rs"))
            .unwrap()
            .contains("a - b")
    );
    let _ = std::fs::remove_dir_all(Saved::approvals_dir(&file));
    let _ = std::fs::remove_dir_all(&workspace);
}

#[tokio::test]
async fn a_code_mode_program_that_writes_waits_and_its_resume_replays_the_read() {
    let program = "const file = await tools.read_file({path: 'src/lib.rs'});\n\
        const text = file.lines.join('\\n') + '\\n';\n\
        await tools.write_file({path: 'src/lib.rs', content: text.replace('a - b', 'a + b')});\n\
        console.log(`fixed ${file.path}`);\n\
        return file.total_lines;";
    let arguments = json!({"code": program, "description": "Fix add in src/lib.rs"}).to_string();
    let (base_url, recorded) = scripted_server(vec![
        tool_reply(None, &[("call_c1", "run_code", &arguments)]),
        answer_reply("Fixed."),
    ])
    .await;
    let workspace = fresh_workspace("agent-loop-code-deferred").expect("workspace");
    seed_workspace(&workspace).expect("seed");
    let file = workspace.with_extension("turn.json");
    let config = AgentConfig {
        base_url,
        api_key: "k".to_owned(),
        model: "m".to_owned(),
        dialect: Dialect::new(Provider::DeepSeek),
        workspace: workspace.clone(),
        max_steps: 4,
        code_mode: true,
        defer: Some(file.clone()),
    };
    let waiting = run_agent(&config, "fix the bug", &mut Vec::new())
        .await
        .expect("first run");
    assert_eq!(waiting.pending.len(), 1);
    assert_eq!(waiting.pending[0].tool, "write_file");
    assert_eq!(waiting.pending[0].program.as_deref(), Some("call_c1"));
    assert!(
        std::fs::read_to_string(workspace.join("src/lib.rs"))
            .unwrap()
            .contains("a - b")
    );
    let done = resume_agent(
        &config,
        |_| Some(ApprovalOutcome::AllowedOnce),
        &mut Vec::new(),
    )
    .await
    .unwrap_or_else(|e| panic!("resume: {e}"));
    assert_eq!(done.answer.as_deref(), Some("Fixed."));
    assert_eq!(
        std::fs::read_to_string(workspace.join("src/lib.rs")).unwrap(),
        FIXED
    );
    // The model reads the one replayed run's output, as if it had never waited.
    let sent = recorded.lock().unwrap().clone();
    assert_eq!(
        tool_messages(sent[1].body["messages"].as_array().unwrap()),
        [("call_c1".to_owned(), "fixed src/lib.rs\n4".to_owned())]
    );
    let _ = std::fs::remove_dir_all(Saved::approvals_dir(&file));
    let _ = std::fs::remove_dir_all(&workspace);
}

#[tokio::test]
async fn the_file_store_claims_once_lists_oldest_first_in_pages_and_skips_a_bad_file() {
    use dsh_tools::pipeline::{ApprovalStore, PendingApproval};
    let dir = fresh_workspace("agent-loop-store").expect("dir");
    let store = approvals::FileApprovalStore::open(&dir).unwrap();
    let approval = |id: &str, at: u64| -> PendingApproval {
        serde_json::from_value(json!({
            "id": id, "callId": "c", "tool": "write_file", "arguments": {}, "agent": "agent",
            "editable": false, "askedAtMs": at
        }))
        .unwrap()
    };
    // Ids out of time order: the listing follows the time.
    for (id, at) in [("cc", 1), ("aa", 3), ("bb", 2)] {
        store.put(approval(id, at)).await.unwrap();
    }
    std::fs::write(dir.join("dd.json"), b"{ not json").unwrap();
    let first = store.list(None, 2).await.unwrap();
    let ids: Vec<&str> = first.approvals.iter().map(|a| a.id.as_str()).collect();
    assert_eq!(ids, ["cc", "bb"]);
    let second = store.list(first.next.clone(), 2).await.unwrap();
    let ids: Vec<&str> = second.approvals.iter().map(|a| a.id.as_str()).collect();
    assert_eq!(ids, ["aa"]);
    assert_eq!(second.next, None);
    assert!(store.list(Some("nonsense".into()), 2).await.is_err());
    // A claim is won once; the claimed record stays visible until removed.
    assert!(store.claim("bb").await.unwrap().is_some());
    assert!(store.claim("bb").await.unwrap().is_none());
    assert!(store.get("bb").await.unwrap().unwrap().claimed);
    store.remove("bb").await.unwrap();
    assert!(store.get("bb").await.unwrap().is_none());
    // Ids are never paths.
    assert!(store.get("../etc").await.is_err());
    let _ = std::fs::remove_dir_all(&dir);
}

/// The recorded stream the example replays: the write's card grows as its arguments arrive
/// (the generic card until the path is whole, then the diff card with more of the content),
/// and the last card drawn while streaming is the finished call's.
#[test]
fn a_recorded_stream_replays_as_growing_cards() {
    let workspace = fresh_workspace("replay-test").unwrap();
    seed_workspace(&workspace).unwrap();
    let registry = agent_loop::workspace_tools(&workspace);
    let text = include_str!("../agent/stream.jsonl");
    let mut out = Vec::new();
    let cards = agent_loop::replay_stream(
        &registry,
        Dialect::new(Provider::OpenAiChat),
        text,
        &mut out,
    )
    .unwrap();
    let printed = String::from_utf8(out).unwrap();
    assert!(cards.len() > 4, "{printed}");
    assert!(cards[0].contains("write_file"), "{printed}");
    let last_streamed = &cards[cards.len() - 2];
    let finished = &cards[cards.len() - 1];
    assert_eq!(last_streamed, finished, "{printed}");
    assert!(finished.contains("notes/todo.md"), "{printed}");
    assert!(printed.contains("▸ call_w1"), "{printed}");
    std::fs::remove_dir_all(&workspace).ok();
}

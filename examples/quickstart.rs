//! One scripted model turn through the registry and the scheduler: parallel reads, an
//! exclusive write that needs approval, a shell command a policy denies, a call with invalid
//! arguments, a guard, and a timeout. Each result is printed with its card.
//!
//! Run it with `cargo run --example quickstart`.

use dsh_tools::present::{FileDiff, ReadFileLine, ResultSummary, ToolCallView, ToolResultView};
use dsh_tools::schedule::TurnScheduler;
use dsh_tools::*;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::Duration;

/// Arguments of `read_file`.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct ReadFileArgs {
    /// Absolute file path
    path: String,
    /// First line to read, 1-based
    offset: Option<u32>,
}

#[derive(Serialize, JsonSchema)]
struct ReadFileOutput {
    path: String,
    offset: u32,
    lines: Vec<String>,
}

/// Arguments of `write_file`.
#[derive(Deserialize, JsonSchema)]
struct WriteFileArgs {
    /// Absolute file path
    path: String,
    /// The new contents
    content: String,
}

/// Arguments of `bash`.
#[derive(Deserialize, JsonSchema)]
struct BashArgs {
    /// The command line
    command: String,
}

fn fake_file(path: &str) -> Vec<String> {
    match path {
        "/etc/hosts" => vec!["127.0.0.1 localhost".into(), "::1 localhost".into()],
        _ => vec![format!("// {path}"), "fn main() {}".into()],
    }
}

fn read_file() -> ToolDefinition {
    ToolDefinition::typed(
        "read_file",
        "Read a file from disk.",
        |args: ReadFileArgs, _ctx| async move {
            let offset = args.offset.unwrap_or(1);
            let lines = fake_file(&args.path)
                .into_iter()
                .skip(offset as usize - 1)
                .collect();
            Ok(ReadFileOutput {
                path: args.path,
                offset,
                lines,
            })
        },
    )
    .expect("ReadFileArgs bridges")
    .concurrency_safe(|_| true)
    .present_call(Arc::new(|args: &Value| {
        Some(ToolCallView::Generic {
            title: format!("Read {}", args.get("path")?.as_str()?),
            kind: Some(present::ToolCallKind::Read),
            raw_input: None,
            content: None,
            locations: None,
        })
    }))
    .present_result(Arc::new(|args: &Value, result: &ResultSummary| {
        if result.is_error {
            return None;
        }
        let text = result.content.first()?.as_text()?;
        let out: Value = serde_json::from_str(text).ok()?;
        let offset = out["offset"].as_u64()?;
        let lines: Vec<ReadFileLine> = out["lines"]
            .as_array()?
            .iter()
            .zip(offset..)
            .map(|(l, number)| ReadFileLine {
                number,
                text: l.as_str().unwrap_or("").to_owned(),
            })
            .collect();
        Some(ToolResultView::Read {
            title: None,
            path: args.get("path")?.as_str()?.to_owned(),
            offset,
            total_lines: lines.len() as u64 + offset - 1,
            lines,
            lang: None,
            content: None,
        })
    }))
}

fn write_file() -> ToolDefinition {
    ToolDefinition::typed(
        "write_file",
        "Write a file.",
        |args: WriteFileArgs, _ctx| async move {
            Ok(format!(
                "wrote {} bytes to {}",
                args.content.len(),
                args.path
            ))
        },
    )
    .expect("WriteFileArgs bridges")
    .present_result(Arc::new(|args: &Value, result: &ResultSummary| {
        (!result.is_error).then(|| ToolResultView::Diff {
            title: None,
            diffs: vec![FileDiff {
                path: args["path"].as_str().unwrap_or("?").to_owned(),
                old_text: None,
                new_text: args["content"].as_str().unwrap_or("").to_owned(),
            }],
        })
    }))
}

fn bash() -> ToolDefinition {
    ToolDefinition::typed(
        "bash",
        "Run a shell command.",
        |args: BashArgs, ctx| async move {
            // A long-running command that honours cancellation.
            if args.command.starts_with("sleep") {
                ctx.signal().cancelled().await;
                return Ok("interrupted".to_owned());
            }
            Ok(format!("ran `{}`", args.command))
        },
    )
    .expect("BashArgs bridges")
    .timeout(Duration::from_millis(100))
    .present_call(Arc::new(|args: &Value| {
        Some(ToolCallView::Terminal {
            title: args.get("command")?.as_str()?.to_owned(),
            description: None,
            cwd: None,
        })
    }))
}

fn main() {
    let runtime = tokio::runtime::Runtime::new().expect("a tokio runtime");
    runtime.block_on(turn());
}

async fn turn() {
    let registry = Registry::new();
    for tool in [read_file(), write_file(), bash()] {
        registry.register(tool).expect("valid definition");
    }
    // Each tool's declared timeout is enforced on every call: no wrapper to install.
    // Policy: writes need a human; destructive shell commands are denied outright.
    registry.on_pre_execute(|exec, next| async move {
        let command = exec
            .arguments()
            .and_then(|a| a.get("command"))
            .and_then(Value::as_str);
        match (exec.name(), command) {
            ("write_file", _) => Ok(PreToolDecision::ask(Some("writes need approval"))),
            ("bash", Some(c)) if c.contains("rm -rf") => {
                Ok(PreToolDecision::deny("refusing a recursive delete"))
            }
            _ => next.run().await,
        }
    });
    // A guard can only deny: nothing outside /etc and /src is readable.
    registry.guard(|exec| {
        let path = exec.arguments()?.get("path")?.as_str()?;
        (!path.starts_with("/etc") && !path.starts_with("/src"))
            .then(|| format!("{path} is outside the workspace"))
    });
    // The approval service: here, a user who approves every write.
    registry.set_approval_service(|request: ApprovalRequest| async move {
        println!(
            "  [approval] {} asks to run {} ({:?}): approved",
            request.agent, request.tool_name, request.reason
        );
        Ok(ApprovalOutcome::AllowedOnce)
    });

    println!(
        "The model sees {} tools:",
        registry.schemas(None).map(|s| s.len()).unwrap_or(0)
    );
    for schema in registry.schemas(None).unwrap_or_default() {
        println!("  {}: {}", schema.name, schema.description);
    }

    let signal = CancellationToken::new();
    let script: Vec<(&str, Value)> = vec![
        ("read_file", json!({"path": "/etc/hosts"})),
        ("read_file", json!({"path": "/src/main.rs", "offset": 2})),
        ("read_file", json!({"path": "/home/me/.ssh/id_rsa"})),
        (
            "write_file",
            json!({"path": "/src/lib.rs", "content": "pub fn answer() -> u32 { 42 }\n"}),
        ),
        ("bash", json!({"command": "rm -rf /"})),
        ("read_file", json!({"offset": 0, "verbose": true})),
        ("bash", json!({"command": "sleep 60"})),
    ];
    let calls: Vec<ToolExecutionInput> = script
        .iter()
        .enumerate()
        .map(|(i, (name, args))| {
            ToolExecutionInput::new(format!("call_{i}"), *name, args.clone(), signal.clone())
                .agent("main")
        })
        .collect();
    for (i, (name, args)) in script.iter().enumerate() {
        let mode = registry.execution_mode(name, args, Some(&AgentId::new("main")), None);
        println!("call_{i} {name} ({mode:?})");
    }
    println!("\nRunning the turn (pool of 4)...\n");
    let results = TurnScheduler::new(registry.clone())
        .width(4)
        .run(calls, &signal)
        .await;

    let agent = AgentId::new("main");
    for (i, ((name, args), result)) in script.iter().zip(&results).enumerate() {
        println!("── call_{i}: {name} {args}");
        println!(
            "   card:   {}",
            indent(&registry.present_call(name, args, Some(&agent)).to_string())
        );
        let status = match result.code() {
            Some(code) => format!("error {code}"),
            None if result.is_error() => "error".to_owned(),
            None => "ok".to_owned(),
        };
        println!("   {status}: {}", result.text());
        println!(
            "   result: {}\n",
            indent(
                &registry
                    .present_result(name, args, result, Some(&agent))
                    .to_string()
            )
        );
    }
}

fn indent(text: &str) -> String {
    text.replace('\n', "\n           ")
}

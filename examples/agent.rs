//! A real agent loop: the quickstart's tools (on files in a temporary workspace, with a
//! read-only sandboxed `bash`) sent to a chat-completions API, the model's calls run through the
//! turn scheduler with their cards printed, until the model answers.
//!
//! DeepSeek by default; any OpenAI-compatible API with `OPENAI_BASE_URL` and `OPENAI_API_KEY`:
//!
//! ```text
//! DEEPSEEK_API_KEY=sk-... cargo run -p examples --features agent --example agent -- "task"
//! OPENAI_BASE_URL=https://api.openai.com/v1 OPENAI_API_KEY=sk-... OPENAI_MODEL=gpt-4o-mini \
//!     cargo run -p examples --features agent --example agent
//! ```
//!
//! `--code-mode` (first) presents the tools as Code Mode: the model is sent only `run_code` and
//! writes one TypeScript program that calls them, run in the QuickJS sandbox.
//!
//! `--defer-approvals FILE` makes `write_file` wait for a person without blocking the turn: a
//! step whose calls wait ends the run with the turn saved in `FILE` (the approvals in
//! `FILE.approvals/`, one JSON file each). `--resume FILE`, in this process's place or after a
//! restart, asks on the terminal about each waiting call (`y` yes, `n` no, `a` always, an empty
//! line to leave it waiting), runs what was approved, and goes on with the task:
//!
//! ```text
//! DEEPSEEK_API_KEY=sk-... cargo run -p examples --features agent --example agent -- --defer-approvals turn.json "task"
//! DEEPSEEK_API_KEY=sk-... cargo run -p examples --features agent --example agent -- --resume turn.json
//! ```
//!
//! `--replay-stream FILE` needs no key: it replays a recorded model stream (one SSE `data:`
//! payload a line, OpenAI Chat chunks) against the workspace tools and prints each call's card
//! as its arguments arrive, as a UI would draw it; `examples/agent/stream.jsonl` is one:
//!
//! ```text
//! cargo run -p examples --features agent --example agent -- --replay-stream examples/agent/stream.jsonl
//! ```
//!
//! `DEEPSEEK_MODEL` overrides the DeepSeek model (`deepseek-chat`). Without a key it says how to
//! set one and exits 0. The loop itself is `agent/loop.rs`, which `tests/agent_loop.rs` runs
//! against a scripted local server.

// The test reads parts of the transcript this example does not.
#[allow(dead_code)]
#[path = "agent/loop.rs"]
mod agent_loop;
#[allow(dead_code)]
#[path = "agent/approvals.rs"]
mod approvals;

use agent_loop::{
    AgentConfig, AgentError, DEFAULT_TASK, Saved, Transcript, fresh_workspace, resume_agent,
    run_agent, seed_workspace,
};
use dsh_tools::ApprovalOutcome;
use dsh_tools::pipeline::PendingApproval;
use dsh_tools::provider::{Dialect, Provider};
use std::io::BufRead;
use std::process::ExitCode;

const DEEPSEEK_BASE_URL: &str = "https://api.deepseek.com";
const DEEPSEEK_MODEL: &str = "deepseek-chat";
const OPENAI_BASE_URL: &str = "https://api.openai.com/v1";
const OPENAI_MODEL: &str = "gpt-4o-mini";
const MAX_STEPS: usize = 8;

/// A set, non-empty environment variable.
fn env(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.trim().is_empty())
}

/// `(base URL, key, model, dialect)` from the environment: `OPENAI_*` when `OPENAI_BASE_URL` or
/// `OPENAI_API_KEY` is set without a DeepSeek key, else DeepSeek.
fn endpoint() -> Option<(String, String, String, Dialect)> {
    let openai = env("OPENAI_BASE_URL").is_some()
        || (env("OPENAI_API_KEY").is_some() && env("DEEPSEEK_API_KEY").is_none());
    if openai {
        return Some((
            env("OPENAI_BASE_URL").unwrap_or_else(|| OPENAI_BASE_URL.to_owned()),
            env("OPENAI_API_KEY")?,
            env("OPENAI_MODEL").unwrap_or_else(|| OPENAI_MODEL.to_owned()),
            Dialect::new(Provider::OpenAiChat),
        ));
    }
    Some((
        DEEPSEEK_BASE_URL.to_owned(),
        env("DEEPSEEK_API_KEY")?,
        env("DEEPSEEK_MODEL").unwrap_or_else(|| DEEPSEEK_MODEL.to_owned()),
        Dialect::new(Provider::DeepSeek),
    ))
}

/// A fresh workspace holding the seed files, or `None` (said on standard error).
fn seeded_workspace(label: &str) -> Option<std::path::PathBuf> {
    match fresh_workspace(label).and_then(|dir| {
        seed_workspace(&dir)?;
        Ok(dir)
    }) {
        Ok(dir) => Some(dir),
        Err(e) => {
            eprintln!("cannot make the workspace: {e}");
            None
        }
    }
}

/// `--replay-stream FILE`: the cards of a recorded stream as they grow.
fn replay(file: &str) -> ExitCode {
    let text = match std::fs::read_to_string(file) {
        Ok(text) => text,
        Err(e) => {
            eprintln!("cannot read {file}: {e}");
            return ExitCode::from(2);
        }
    };
    let Some(workspace) = seeded_workspace("replay") else {
        return ExitCode::FAILURE;
    };
    let registry = agent_loop::workspace_tools(&workspace);
    let dialect = Dialect::new(Provider::OpenAiChat);
    let replayed = agent_loop::replay_stream(&registry, dialect, &text, &mut std::io::stdout());
    let _ = std::fs::remove_dir_all(&workspace);
    match replayed {
        Ok(_) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("{file}: {e}");
            ExitCode::FAILURE
        }
    }
}

fn main() -> ExitCode {
    // Traces over OTLP when OTEL_EXPORTER_OTLP_ENDPOINT is set (nothing otherwise); the guard
    // flushes them when `main` returns.
    let _telemetry = match dsh_tools::telemetry::init_from_env("dsh-tools-agent") {
        Ok(guard) => guard,
        Err(e) => {
            eprintln!("telemetry: {e}");
            return ExitCode::FAILURE;
        }
    };
    let argv: Vec<String> = std::env::args().skip(1).collect();
    if argv.first().map(String::as_str) == Some("--replay-stream") {
        return match argv.get(1) {
            Some(file) => replay(file),
            None => {
                eprintln!("--replay-stream needs a file");
                ExitCode::from(2)
            }
        };
    }
    let Some((base_url, api_key, model, dialect)) = endpoint() else {
        println!(
            "No API key: nothing to run.\n\n\
             DeepSeek (the default):\n  \
             DEEPSEEK_API_KEY=sk-... cargo run -p examples --features agent --example agent -- \"your task\"\n\n\
             Any OpenAI-compatible API:\n  \
             OPENAI_BASE_URL=https://api.openai.com/v1 OPENAI_API_KEY=sk-... [OPENAI_MODEL={OPENAI_MODEL}] \\\n    \
             cargo run -p examples --features agent --example agent -- \"your task\"\n\n\
             Without a task the agent fixes a small bug in a scratch workspace."
        );
        return ExitCode::SUCCESS;
    };
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let mut code_mode = false;
    let mut defer = None;
    let mut resume = None;
    loop {
        match args.first().map(String::as_str) {
            Some("--code-mode") => {
                code_mode = true;
                args.remove(0);
            }
            Some(flag @ ("--defer-approvals" | "--resume")) if args.len() >= 2 => {
                let resuming = flag == "--resume";
                let file = std::path::PathBuf::from(args.remove(1));
                if resuming {
                    resume = Some(file);
                } else {
                    defer = Some(file);
                }
                args.remove(0);
            }
            Some("--defer-approvals" | "--resume") => {
                eprintln!("--defer-approvals and --resume need a file");
                return ExitCode::from(2);
            }
            _ => break,
        }
    }
    if let Some(file) = resume {
        return resume_from(file, base_url, api_key, model, dialect);
    }
    let prompt = if args.is_empty() {
        DEFAULT_TASK.to_owned()
    } else {
        args.join(" ")
    };
    let Some(workspace) = seeded_workspace("agent") else {
        return ExitCode::FAILURE;
    };
    println!("{model} at {base_url} ({})", dialect.name());
    println!("workspace: {}", workspace.display());
    println!(
        "task: {prompt}{}\n",
        if code_mode { " (Code Mode)" } else { "" }
    );
    let config = AgentConfig {
        base_url,
        api_key,
        model,
        dialect,
        workspace: workspace.clone(),
        max_steps: MAX_STEPS,
        code_mode,
        defer,
    };
    let runtime = tokio::runtime::Runtime::new().expect("a tokio runtime");
    let outcome = runtime.block_on(run_agent(&config, &prompt, &mut std::io::stdout()));
    report(outcome, &workspace)
}

/// Prints how the run ended.
fn report(outcome: Result<Transcript, AgentError>, workspace: &std::path::Path) -> ExitCode {
    match outcome {
        Ok(transcript) if !transcript.pending.is_empty() => {
            println!(
                "\n{} calls wait for approval; answer them with --resume FILE",
                transcript.pending.len()
            );
            ExitCode::SUCCESS
        }
        Ok(transcript) => {
            let calls: usize = transcript.steps.iter().map(Vec::len).sum();
            println!(
                "\n{} tool steps, {calls} calls; the workspace is kept at {}",
                transcript.steps.len(),
                workspace.display()
            );
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("\nthe agent stopped: {e}");
            ExitCode::FAILURE
        }
    }
}

/// `--resume FILE`: the person answers each waiting call on the terminal.
fn resume_from(
    file: std::path::PathBuf,
    base_url: String,
    api_key: String,
    model: String,
    dialect: Dialect,
) -> ExitCode {
    let saved = match Saved::load(&file) {
        Ok(saved) => saved,
        Err(e) => {
            eprintln!("cannot resume: {e}");
            return ExitCode::FAILURE;
        }
    };
    let workspace = saved.workspace.clone();
    println!("{model} at {base_url} ({})", dialect.name());
    println!("workspace: {}\n", workspace.display());
    let config = AgentConfig {
        base_url,
        api_key,
        model,
        dialect,
        workspace: workspace.clone(),
        max_steps: MAX_STEPS,
        code_mode: saved.code_mode,
        defer: Some(file),
    };
    let stdin = std::io::stdin();
    let ask = |p: &PendingApproval| -> Option<ApprovalOutcome> {
        // What the model chose, shown as it is: a bidi override or a zero-width character
        // in a path must not pass for something else in the very prompt that approves it.
        let shown = dsh_tools::present::escape_hidden;
        println!(
            "approve {} {}? ({}) [y]es / [n]o / [a]lways / empty: later",
            shown(&p.tool),
            shown(&p.arguments.to_string()),
            shown(p.reason.as_deref().unwrap_or("no reason given"))
        );
        let mut line = String::new();
        stdin.lock().read_line(&mut line).ok()?;
        match line.trim() {
            "y" | "yes" => Some(ApprovalOutcome::AllowedOnce),
            "a" | "always" => Some(ApprovalOutcome::AllowedAlways(None)),
            "n" | "no" => Some(ApprovalOutcome::Rejected),
            _ => None,
        }
    };
    let runtime = tokio::runtime::Runtime::new().expect("a tokio runtime");
    let outcome = runtime.block_on(resume_agent(&config, ask, &mut std::io::stdout()));
    report(outcome, &workspace)
}

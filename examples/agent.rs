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
//! `DEEPSEEK_MODEL` overrides the DeepSeek model (`deepseek-chat`). Without a key it says how to
//! set one and exits 0. The loop itself is `agent/loop.rs`, which `tests/agent_loop.rs` runs
//! against a scripted local server.

// The test reads parts of the transcript this example does not.
#[allow(dead_code)]
#[path = "agent/loop.rs"]
mod agent_loop;

use agent_loop::{AgentConfig, DEFAULT_TASK, fresh_workspace, run_agent, seed_workspace};
use dsh_tools::provider::{Dialect, Provider};
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

fn main() -> ExitCode {
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
    let code_mode = args.first().is_some_and(|a| a == "--code-mode");
    if code_mode {
        args.remove(0);
    }
    let prompt = if args.is_empty() {
        DEFAULT_TASK.to_owned()
    } else {
        args.join(" ")
    };
    let workspace = match fresh_workspace("agent").and_then(|dir| {
        seed_workspace(&dir)?;
        Ok(dir)
    }) {
        Ok(dir) => dir,
        Err(e) => {
            eprintln!("cannot make the workspace: {e}");
            return ExitCode::FAILURE;
        }
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
    };
    let runtime = tokio::runtime::Runtime::new().expect("a tokio runtime");
    let outcome = runtime.block_on(run_agent(&config, &prompt, &mut std::io::stdout()));
    match outcome {
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

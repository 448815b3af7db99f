//! The agent loop of `examples/agent.rs`, shared with its test (`tests/agent_loop.rs`), which
//! runs it against a scripted local server.
//!
//! One step: POST `{model, messages, tools}` to `{base}/chat/completions`, parse the reply's
//! calls with the dialect, run them through the [`TurnScheduler`] (a call whose arguments could
//! not be read gets its `INVALID_ARGS` failure in its place), print the step's call cards in
//! model order and then each result's card as the scheduler commits it, then append the
//! assistant message and the results' messages. The loop ends when the model answers without calls, or after
//! `max_steps` requests.
//!
//! The tools are the quickstart's, made real but confined: `read_file` and `write_file` work on
//! files under a workspace directory, and `bash` runs a handful of read-only commands (`ls`,
//! `cat`, `grep`, `wc -l`, `echo`) itself, in Rust: no shell is ever started.

use dsh_tools::pipeline::{ApprovalAnswer, PendingApproval};
use dsh_tools::present::{
    FileDiff, ReadFileLine, ResultSummary, TerminalExit, TerminalResult, ToolCallKind,
    ToolCallView, ToolResultView,
};
use dsh_tools::provider::ProviderExport;
use dsh_tools::provider::{Dialect, ExportError, ParseError, ParsedCall, Provider, format_results};
use dsh_tools::schedule::{DeferredTurn, TurnScheduler};
use dsh_tools::{
    ApprovalOutcome, CancellationToken, PreToolDecision, Registry, ToolDefinition, ToolError,
    ToolExecution, ToolExecutionInput, ToolExecutionResult, wrappers,
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use std::fmt;
use std::io::Write;
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::mpsc;
use tracing::Instrument;

/// The task when none is given on the command line.
pub(crate) const DEFAULT_TASK: &str = "Read notes.txt in the workspace and do what it asks. \
     When you are done, answer with a short summary of what you changed.";

const SYSTEM_PROMPT: &str = "You are a careful coding agent. You work in a small workspace \
     through tools: every path is relative to the workspace root (for example `src/lib.rs`). \
     Call independent tools in parallel when you can. When the task is done, answer without \
     calling tools.";

/// Where the model is and how to talk to it.
#[derive(Clone, Debug)]
pub(crate) struct AgentConfig {
    /// The API base URL, without `/chat/completions` (e.g. `https://api.deepseek.com`).
    pub(crate) base_url: String,
    /// Sent as `Authorization: Bearer <key>`.
    pub(crate) api_key: String,
    /// The model name.
    pub(crate) model: String,
    /// The tools' dialect: `deepseek` or `openai-chat`.
    pub(crate) dialect: Dialect,
    /// The directory the file tools are confined to.
    pub(crate) workspace: PathBuf,
    /// The most requests to make.
    pub(crate) max_steps: usize,
    /// Code Mode: the model is sent only `run_code` and writes one TypeScript program that calls
    /// the tools (run in the QuickJS sandbox); the SDK text goes in the system prompt.
    pub(crate) code_mode: bool,
    /// Deferred approvals: `write_file` asks, and a turn with calls waiting for a person ends
    /// the run, saved to this file (the approvals themselves in `FILE.approvals/`), to be
    /// answered by [`resume_agent`], in this process or another.
    pub(crate) defer: Option<PathBuf>,
}

/// The agent the deferred calls run as (an approval is answered for an agent).
pub(crate) const AGENT: &str = "agent";

/// A step waiting for a person, as saved between processes.
#[derive(Serialize, Deserialize)]
pub(crate) struct Saved {
    /// The workspace the tools work on.
    pub(crate) workspace: PathBuf,
    /// Whether the tools were presented as Code Mode.
    pub(crate) code_mode: bool,
    /// The waiting step's number.
    pub(crate) step: usize,
    /// The conversation up to and including the step's assistant message.
    pub(crate) messages: Vec<Value>,
    /// The step's reply, to read its calls again.
    pub(crate) reply: Value,
    /// Per call of the step, its result when it got one before the scheduler (unreadable
    /// arguments).
    pub(crate) early: Vec<Option<ToolExecutionResult>>,
    /// The scheduler's calls: their positions in the step, and the turn.
    pub(crate) positions: Vec<usize>,
    pub(crate) turn: DeferredTurn,
}

impl Saved {
    /// The approvals' directory beside the saved file.
    pub(crate) fn approvals_dir(file: &Path) -> PathBuf {
        let mut dir = file.as_os_str().to_owned();
        dir.push(".approvals");
        PathBuf::from(dir)
    }

    pub(crate) fn load(file: &Path) -> Result<Self, AgentError> {
        let bytes = std::fs::read(file)?;
        serde_json::from_slice(&bytes)
            .map_err(|e| AgentError::Resume(format!("{} is not a saved turn: {e}", file.display())))
    }

    fn save(&self, file: &Path) -> Result<(), AgentError> {
        let bytes = serde_json::to_vec_pretty(self)
            .map_err(|e| AgentError::Resume(format!("the turn could not be saved: {e}")))?;
        let mut partial = file.as_os_str().to_owned();
        partial.push(".partial");
        std::fs::write(&partial, bytes)?;
        std::fs::rename(&partial, file)?;
        Ok(())
    }
}

/// One call of a step as it went: what the model asked and what it got back.
#[derive(Clone, Debug)]
pub(crate) struct CallRecord {
    /// The provider's call id.
    pub(crate) call_id: String,
    /// Our tool name.
    pub(crate) name: String,
    /// The arguments as read (`None`: they could not be read).
    pub(crate) arguments: Option<Value>,
    /// The result.
    pub(crate) result: ToolExecutionResult,
}

/// What happened: every message sent or received, per step the calls, and the final answer.
#[derive(Clone, Debug)]
pub(crate) struct Transcript {
    /// The conversation: system, user, then assistant messages and tool messages, ending with
    /// the final assistant message.
    pub(crate) messages: Vec<Value>,
    /// The calls of each step that had any, in model order.
    pub(crate) steps: Vec<Vec<CallRecord>>,
    /// The model's final text, or `None` when the step limit ended the loop (or a step waits).
    pub(crate) answer: Option<String>,
    /// The approvals a saved step waits for (deferred mode), in model order.
    pub(crate) pending: Vec<PendingApproval>,
}

/// Why the loop stopped early.
#[derive(Debug)]
pub(crate) enum AgentError {
    /// The tools could not be exported to the dialect.
    Export(ExportError),
    /// The request failed (connection, TLS, timeout, a body that is not JSON).
    Http(reqwest::Error),
    /// The API answered with an error status.
    Status { status: u16, body: String },
    /// The reply is not a chat completion.
    Reply(String),
    /// The dialect could not read the reply.
    Parse(ParseError),
    /// Writing the output failed.
    Output(std::io::Error),
    /// A saved turn could not be saved, read or resumed.
    Resume(String),
}

impl fmt::Display for AgentError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Export(e) => write!(f, "{e}"),
            Self::Http(e) => {
                write!(f, "request failed: {e}")?;
                // reqwest's message names the URL; the cause is in the sources.
                let mut source = std::error::Error::source(e);
                while let Some(cause) = source {
                    write!(f, ": {cause}")?;
                    source = cause.source();
                }
                Ok(())
            }
            Self::Status { status, body } => write!(f, "the API answered {status}: {body}"),
            Self::Reply(message) => write!(f, "unexpected reply: {message}"),
            Self::Parse(e) => write!(f, "{e}"),
            Self::Output(e) => write!(f, "cannot write the output: {e}"),
            Self::Resume(message) => write!(f, "{message}"),
        }
    }
}

impl std::error::Error for AgentError {}

impl From<std::io::Error> for AgentError {
    fn from(e: std::io::Error) -> Self {
        Self::Output(e)
    }
}

/// A fresh, empty directory under the system's temporary directory.
pub(crate) fn fresh_workspace(label: &str) -> std::io::Result<PathBuf> {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    let dir =
        std::env::temp_dir().join(format!("dsh-tools-{label}-{}-{nanos}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    Ok(dir)
}

/// The files the default task works on: a note and a small bug.
pub(crate) fn seed_workspace(dir: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(dir.join("src"))?;
    std::fs::write(
        dir.join("notes.txt"),
        "TODO: `add` in src/lib.rs returns the wrong result. Fix it, keeping its signature.\n",
    )?;
    std::fs::write(
        dir.join("src/lib.rs"),
        "/// The sum of `a` and `b`.\npub fn add(a: i32, b: i32) -> i32 {\n    a - b\n}\n",
    )
}

// ---- the tools ------------------------------------------------------------------------------

/// Why `path` may not be used: absolute, or leaving the workspace. `None` when it is fine.
fn outside(path: &str) -> Option<String> {
    let p = Path::new(path);
    let escapes = p.is_absolute()
        || p.components()
            .any(|c| !matches!(c, Component::Normal(_) | Component::CurDir));
    escapes.then(|| {
        format!(
            "{path} is outside the workspace: use a path relative to the workspace root, such as src/lib.rs"
        )
    })
}

fn resolve(workspace: &Path, path: &str) -> Result<PathBuf, ToolError> {
    match outside(path) {
        Some(reason) => Err(ToolError::new(reason)),
        None => Ok(workspace.join(path)),
    }
}

fn io_error(path: &str, e: &std::io::Error) -> ToolError {
    ToolError::new(format!("{path}: {e}"))
}

/// Arguments of `read_file`.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct ReadFileArgs {
    /// File path, relative to the workspace root
    path: String,
    /// First line to read, 1-based (default 1)
    offset: Option<u32>,
}

#[derive(Serialize, JsonSchema)]
struct ReadFileOutput {
    path: String,
    offset: u32,
    total_lines: u32,
    lines: Vec<String>,
}

/// Arguments of `write_file`.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct WriteFileArgs {
    /// File path, relative to the workspace root
    path: String,
    /// The whole new contents of the file
    content: String,
}

/// Arguments of `bash`.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct BashArgs {
    /// One command line: ls [DIR], cat FILE..., grep PATTERN FILE, wc -l FILE or echo TEXT
    command: String,
}

#[derive(Serialize, JsonSchema)]
struct BashOutput {
    output: String,
    exit_code: i32,
}

fn read_file(workspace: Arc<Path>) -> ToolDefinition {
    ToolDefinition::typed(
        "read_file",
        "Read a text file of the workspace, from a line on.",
        move |args: ReadFileArgs, _ctx| {
            let workspace = Arc::clone(&workspace);
            async move {
                let file = resolve(&workspace, &args.path)?;
                let text = tokio::fs::read_to_string(&file)
                    .await
                    .map_err(|e| io_error(&args.path, &e))?;
                let offset = args.offset.unwrap_or(1).max(1);
                let all: Vec<&str> = text.lines().collect();
                Ok(ReadFileOutput {
                    total_lines: u32::try_from(all.len()).unwrap_or(u32::MAX),
                    lines: all
                        .iter()
                        .skip(offset as usize - 1)
                        .map(|l| (*l).to_owned())
                        .collect(),
                    path: args.path,
                    offset,
                })
            }
        },
    )
    .expect("ReadFileArgs bridges")
    .timeout(Duration::from_secs(10))
    .concurrency_safe(|_| true)
    .present_call(Arc::new(|args: &Value| {
        Some(ToolCallView::Generic {
            title: format!("Read {}", args.get("path")?.as_str()?),
            kind: Some(ToolCallKind::Read),
            raw_input: None,
            content: None,
            locations: None,
        })
    }))
    .present_result(Arc::new(|args: &Value, result: &ResultSummary| {
        if result.is_error {
            return None;
        }
        let out: Value = serde_json::from_str(result.content.first()?.as_text()?).ok()?;
        let offset = out["offset"].as_u64()?;
        let lines = out["lines"]
            .as_array()?
            .iter()
            .zip(offset..)
            .map(|(l, number)| ReadFileLine {
                number,
                text: l.as_str().unwrap_or_default().to_owned(),
            })
            .collect();
        Some(ToolResultView::Read {
            title: None,
            path: args.get("path")?.as_str()?.to_owned(),
            offset,
            total_lines: out["total_lines"].as_u64()?,
            lines,
            lang: None,
            content: None,
        })
    }))
}

fn write_file(workspace: Arc<Path>) -> ToolDefinition {
    let before = Arc::clone(&workspace);
    ToolDefinition::typed(
        "write_file",
        "Create or replace a text file of the workspace with the given contents.",
        move |args: WriteFileArgs, _ctx| {
            let workspace = Arc::clone(&workspace);
            async move {
                let file = resolve(&workspace, &args.path)?;
                if let Some(parent) = file.parent() {
                    tokio::fs::create_dir_all(parent)
                        .await
                        .map_err(|e| io_error(&args.path, &e))?;
                }
                tokio::fs::write(&file, &args.content)
                    .await
                    .map_err(|e| io_error(&args.path, &e))?;
                Ok(format!(
                    "wrote {} bytes to {}",
                    args.content.len(),
                    args.path
                ))
            }
        },
    )
    .expect("WriteFileArgs bridges")
    .timeout(Duration::from_secs(10))
    // The call card is a diff against the file as it is before the write.
    .present_call(Arc::new(move |args: &Value| {
        let path = args.get("path")?.as_str()?;
        let old_text = resolve(&before, path)
            .ok()
            .and_then(|file| std::fs::read_to_string(file).ok());
        Some(ToolCallView::Diff {
            title: format!("Write {path}"),
            diffs: vec![FileDiff {
                path: path.to_owned(),
                old_text,
                new_text: args.get("content")?.as_str()?.to_owned(),
            }],
            locations: None,
        })
    }))
}

/// The sandbox's commands, run in Rust on the workspace's files.
async fn sandbox(workspace: &Path, command: &str) -> Result<BashOutput, ToolError> {
    let done = |output: String, exit_code| Ok(BashOutput { output, exit_code });
    if command.contains(['|', ';', '&', '>', '<', '$', '`']) {
        return done(
            "bash: this sandbox runs one simple command, without pipes, redirection or expansion"
                .to_owned(),
            2,
        );
    }
    let words: Vec<&str> = command.split_whitespace().collect();
    let read = |path: &str| {
        let path = path.to_owned();
        async move {
            let file = resolve(workspace, &path)?;
            tokio::fs::read_to_string(file)
                .await
                .map_err(|e| io_error(&path, &e))
        }
    };
    match words.as_slice() {
        ["echo", rest @ ..] => done(rest.join(" ") + "\n", 0),
        ["ls"] | ["ls", _] => {
            let dir = words.get(1).copied().unwrap_or(".");
            let path = resolve(workspace, dir)?;
            let mut entries = tokio::fs::read_dir(&path)
                .await
                .map_err(|e| io_error(dir, &e))?;
            let mut names = Vec::new();
            while let Some(entry) = entries.next_entry().await.map_err(|e| io_error(dir, &e))? {
                let mut name = entry.file_name().to_string_lossy().into_owned();
                if entry.file_type().await.is_ok_and(|t| t.is_dir()) {
                    name.push('/');
                }
                names.push(name);
            }
            names.sort();
            done(names.iter().map(|n| format!("{n}\n")).collect(), 0)
        }
        ["cat", files @ ..] if !files.is_empty() => {
            let mut output = String::new();
            for file in files {
                output.push_str(&read(file).await?);
            }
            done(output, 0)
        }
        ["wc", "-l", file] => {
            let lines = read(file).await?.lines().count();
            done(format!("{lines} {file}\n"), 0)
        }
        ["grep", pattern, file] => {
            let text = read(file).await?;
            let hits: String = text
                .lines()
                .enumerate()
                .filter(|(_, l)| l.contains(pattern))
                .map(|(i, l)| format!("{}:{l}\n", i + 1))
                .collect();
            let code = if hits.is_empty() { 1 } else { 0 };
            done(hits, code)
        }
        [name, ..] => done(
            format!(
                "bash: {name}: not available in this sandbox (ls, cat, grep PATTERN FILE, wc -l, echo)"
            ),
            127,
        ),
        [] => done(String::new(), 0),
    }
}

fn bash(workspace: Arc<Path>) -> ToolDefinition {
    ToolDefinition::typed(
        "bash",
        "Run one read-only command in the workspace: ls [DIR], cat FILE..., grep PATTERN FILE, \
         wc -l FILE or echo TEXT. No pipes or redirection.",
        move |args: BashArgs, _ctx| {
            let workspace = Arc::clone(&workspace);
            async move { sandbox(&workspace, &args.command).await }
        },
    )
    .expect("BashArgs bridges")
    .timeout(Duration::from_secs(10))
    // Every command of the sandbox only reads.
    .concurrency_safe(|_| true)
    .present_call(Arc::new(|args: &Value| {
        Some(ToolCallView::Terminal {
            title: args.get("command")?.as_str()?.to_owned(),
            description: None,
            cwd: Some("the workspace".to_owned()),
        })
    }))
    .present_result(Arc::new(|_args: &Value, result: &ResultSummary| {
        if result.is_error {
            return None;
        }
        let out: Value = serde_json::from_str(result.content.first()?.as_text()?).ok()?;
        Some(ToolResultView::Terminal(TerminalResult {
            title: None,
            output: out["output"].as_str().map(str::to_owned),
            exit: out["exit_code"].as_i64().map(TerminalExit::Code),
        }))
    }))
}

/// A registry with the three tools on `workspace`, each call's timeout enforced, and a guard
/// that refuses any `path` outside the workspace before the body runs.
pub(crate) fn workspace_tools(workspace: &Path) -> Registry {
    let registry = Registry::new();
    let root: Arc<Path> = Arc::from(workspace);
    for tool in [
        read_file(Arc::clone(&root)),
        write_file(Arc::clone(&root)),
        bash(root),
    ] {
        registry.register(tool).expect("valid definition");
    }
    registry.on_execute(wrappers::timeout(&registry));
    registry.guard(|exec| outside(exec.arguments()?.get("path")?.as_str()?));
    registry
}

// ---- the loop -------------------------------------------------------------------------------

fn indent(text: &str) -> String {
    text.replace('\n', "\n      ")
}

fn status(result: &ToolExecutionResult) -> String {
    match result.code() {
        Some(code) => format!("error {code}"),
        None if result.is_error() => "error".to_owned(),
        None => "ok".to_owned(),
    }
}

/// The step's calls, for printing results as they are committed.
struct Cards<'a> {
    registry: &'a Registry,
    calls: &'a [ParsedCall],
    printed: Vec<bool>,
}

impl Cards<'_> {
    fn call(&self, out: &mut impl Write, call: &ParsedCall) -> std::io::Result<()> {
        let Some(args) = call.arguments() else {
            return writeln!(
                out,
                "  ▸ {} {} (arguments unreadable)",
                call.call_id(),
                call.name()
            );
        };
        let card = self.registry.present_call(call.name(), args, None);
        writeln!(out, "  ▸ {} {}", call.call_id(), indent(&card.to_string()))
    }

    /// The result card of call `i`.
    fn result(
        &mut self,
        out: &mut impl Write,
        i: usize,
        result: &ToolExecutionResult,
    ) -> std::io::Result<()> {
        self.printed[i] = true;
        let call = &self.calls[i];
        let args = call.arguments().unwrap_or(&Value::Null);
        let card = self
            .registry
            .present_result(call.name(), args, result, None);
        writeln!(
            out,
            "  ◂ {} {} ({}): {}",
            call.call_id(),
            call.name(),
            status(result),
            indent(&card.to_string())
        )
    }

    /// The result card of the first call with `call_id` not yet printed.
    fn committed(
        &mut self,
        out: &mut impl Write,
        call_id: &str,
        result: &ToolExecutionResult,
    ) -> std::io::Result<()> {
        match (0..self.calls.len())
            .find(|&i| !self.printed[i] && self.calls[i].call_id() == call_id)
        {
            Some(i) => self.result(out, i, result),
            None => Ok(()),
        }
    }
}

/// `gen_ai.provider.name` of a dialect's provider, as the GenAI conventions spell it.
pub(crate) fn provider_name(provider: Provider) -> &'static str {
    match provider {
        Provider::OpenAiChat | Provider::OpenAiResponses => "openai",
        Provider::Anthropic => "anthropic",
        Provider::Gemini | Provider::GeminiOpenApi => "gcp.gemini",
        Provider::DeepSeek => "deepseek",
        _ => "_OTHER",
    }
}

/// One chat request, as a `chat {model}` span (kind client) in the GenAI conventions.
async fn complete(
    client: &reqwest::Client,
    url: &str,
    api_key: &str,
    provider: Provider,
    request: &Value,
) -> Result<Value, AgentError> {
    let model = request["model"].as_str().unwrap_or_default();
    let span = tracing::info_span!(
        "chat",
        "otel.name" = %format_args!("chat {model}"),
        "otel.kind" = "client",
        "otel.status_code" = tracing::field::Empty,
        "gen_ai.operation.name" = "chat",
        "gen_ai.provider.name" = provider_name(provider),
        "gen_ai.request.model" = model,
        "gen_ai.response.model" = tracing::field::Empty,
        "gen_ai.response.id" = tracing::field::Empty,
        "gen_ai.response.finish_reasons" = tracing::field::Empty,
        "gen_ai.usage.input_tokens" = tracing::field::Empty,
        "gen_ai.usage.output_tokens" = tracing::field::Empty,
        "error.type" = tracing::field::Empty,
    );
    let reply = post(client, url, api_key, request)
        .instrument(span.clone())
        .await;
    match &reply {
        Ok(reply) => {
            if let Some(model) = reply["model"].as_str() {
                span.record("gen_ai.response.model", model);
            }
            if let Some(id) = reply["id"].as_str() {
                span.record("gen_ai.response.id", id);
            }
            if let Some(reason) = reply
                .pointer("/choices/0/finish_reason")
                .and_then(Value::as_str)
            {
                span.record("gen_ai.response.finish_reasons", reason);
            }
            if let Some(n) = reply
                .pointer("/usage/prompt_tokens")
                .and_then(Value::as_u64)
            {
                span.record("gen_ai.usage.input_tokens", n);
            }
            if let Some(n) = reply
                .pointer("/usage/completion_tokens")
                .and_then(Value::as_u64)
            {
                span.record("gen_ai.usage.output_tokens", n);
            }
        }
        Err(e) => {
            let kind = match e {
                AgentError::Status { status, .. } => status.to_string(),
                _ => "transport_error".to_owned(),
            };
            span.record("error.type", kind.as_str());
            span.record("otel.status_code", "ERROR");
        }
    }
    reply
}

async fn post(
    client: &reqwest::Client,
    url: &str,
    api_key: &str,
    request: &Value,
) -> Result<Value, AgentError> {
    let response = client
        .post(url)
        .bearer_auth(api_key)
        .json(request)
        .send()
        .await
        .map_err(AgentError::Http)?;
    let status = response.status();
    if !status.is_success() {
        let mut body = response.text().await.unwrap_or_default();
        if body.len() > 2000 {
            let mut cut = 2000;
            while !body.is_char_boundary(cut) {
                cut -= 1;
            }
            body.truncate(cut);
        }
        return Err(AgentError::Status {
            status: status.as_u16(),
            body,
        });
    }
    response.json().await.map_err(AgentError::Http)
}

/// The system prompt: ours, then what the tools need (Code Mode's sections, when on).
fn system_prompt(tools: &dsh_tools::provider::ProviderTools) -> String {
    match tools.system_prompt() {
        "" => SYSTEM_PROMPT.to_owned(),
        extra => format!("{SYSTEM_PROMPT}\n\n{extra}"),
    }
}

/// What every step uses: the tools, the scheduler, the HTTP client.
struct Session {
    registry: Registry,
    tools: dsh_tools::provider::ProviderTools,
    scheduler: TurnScheduler,
    client: reqwest::Client,
    url: String,
    /// Results as they are committed (model order within a step).
    settled: mpsc::UnboundedReceiver<(String, ToolExecutionResult)>,
}

impl Session {
    fn new(config: &AgentConfig) -> Result<Self, AgentError> {
        let registry = workspace_tools(&config.workspace);
        if config.code_mode {
            let engine = dsh_tools::code::quickjs::QuickJsRuntime::new(Default::default())
                .map_err(|e| AgentError::Reply(e.to_string()))?;
            registry.set_code_runtime(engine);
            registry.set_presentation_mode(dsh_tools::registry::PresentationMode::Code);
        }
        if let Some(file) = &config.defer {
            // Writes wait for a person; the approvals are kept on disk beside the saved turn.
            let store = crate::approvals::FileApprovalStore::open(Saved::approvals_dir(file))?;
            registry.set_approval_store(store);
            registry
                .on_pre_execute(|exec: Arc<ToolExecution>, _next| async move {
                    Ok(if exec.name() == "write_file" {
                        PreToolDecision::ask(Some("it writes to the workspace"))
                    } else {
                        PreToolDecision::Allow
                    })
                })
                .keep();
        }
        let (committed, settled) = mpsc::unbounded_channel::<(String, ToolExecutionResult)>();
        registry.on_result(move |exec: &ToolExecution, result: &ToolExecutionResult| {
            let _ = committed.send((exec.call_id().to_owned(), result.clone()));
            Ok(())
        });
        let tools = registry
            .provider_tools(None, config.dialect)
            .map_err(AgentError::Export)?;
        let scheduler = TurnScheduler::new(registry.clone()).width(4);
        let client = reqwest::Client::builder()
            .timeout(Duration::from_secs(300))
            .build()
            .map_err(AgentError::Http)?;
        let url = format!("{}/chat/completions", config.base_url.trim_end_matches('/'));
        Ok(Self {
            registry,
            tools,
            scheduler,
            client,
            url,
            settled,
        })
    }

    /// Prints the result cards committed so far (the scheduler's observers have run).
    fn print_committed(
        &mut self,
        cards: &mut Cards<'_>,
        out: &mut impl Write,
    ) -> std::io::Result<()> {
        while let Ok((call_id, result)) = self.settled.try_recv() {
            cards.committed(out, &call_id, &result)?;
        }
        Ok(())
    }
}

/// Runs `prompt` to an answer: at most `config.max_steps` requests, the cards printed to `out`.
/// In deferred mode ([`AgentConfig::defer`]) a step whose calls wait for a person ends the run
/// with the turn saved and `Transcript::pending` listing what waits.
pub(crate) async fn run_agent(
    config: &AgentConfig,
    prompt: &str,
    out: &mut impl Write,
) -> Result<Transcript, AgentError> {
    let mut session = Session::new(config)?;
    let messages = vec![
        json!({"role": "system", "content": system_prompt(&session.tools)}),
        json!({"role": "user", "content": prompt}),
    ];
    drive(config, &mut session, messages, Vec::new(), 1, out).await
}

/// Answers the approvals a saved step waits for (`answer` decides each, in model order),
/// finishes that step, and goes on as [`run_agent`] does. An approval without an answer
/// (`None`) keeps waiting: the step is saved again. A saved turn is answered once: its
/// approvals are claimed in the store, so a second resume of the same file runs nothing.
pub(crate) async fn resume_agent(
    config: &AgentConfig,
    mut answer: impl FnMut(&PendingApproval) -> Option<ApprovalOutcome>,
    out: &mut impl Write,
) -> Result<Transcript, AgentError> {
    let Some(file) = config.defer.clone() else {
        return Err(AgentError::Resume(
            "resuming needs the saved turn's file".to_owned(),
        ));
    };
    let saved = Saved::load(&file)?;
    let mut session = Session::new(config)?;
    let calls = session
        .tools
        .parse_calls(&saved.reply)
        .map_err(AgentError::Parse)?;
    let answers: Vec<ApprovalAnswer> = saved
        .turn
        .pending()
        .filter_map(|p| answer(p).map(|outcome| ApprovalAnswer::new(&p.id, outcome, AGENT)))
        .collect();
    writeln!(
        out,
        "── step {} resumed ({} answers)",
        saved.step,
        answers.len()
    )?;
    // An answer not applied (answered already elsewhere, a store that failed) ends the resume
    // with an error, but what the other answers ran is saved first, never lost.
    let turn = match session.scheduler.resume(saved.turn.clone(), answers).await {
        Ok(turn) => turn,
        Err(e) => {
            let message = e.to_string();
            Saved {
                turn: e.turn,
                ..saved
            }
            .save(&file)?;
            return Err(AgentError::Resume(message));
        }
    };
    let registry = session.registry.clone();
    let mut cards = Cards {
        registry: &registry,
        calls: &calls,
        printed: vec![false; calls.len()],
    };
    session.print_committed(&mut cards, out)?;
    let Some(ran) = turn.results() else {
        let pending: Vec<PendingApproval> = turn.pending().cloned().collect();
        Saved { turn, ..saved }.save(&file)?;
        return Ok(Transcript {
            messages: Vec::new(),
            steps: Vec::new(),
            answer: None,
            pending,
        });
    };
    let mut messages = saved.messages;
    let record = finish_step(
        &session,
        &calls,
        saved.early,
        saved.positions,
        ran,
        &mut messages,
    );
    std::fs::remove_file(&file)?;
    // Gone when empty (a claimed approval left by a process that stopped mid-call stays).
    let _ = std::fs::remove_dir(Saved::approvals_dir(&file));
    drive(
        config,
        &mut session,
        messages,
        vec![record],
        saved.step + 1,
        out,
    )
    .await
}

/// Appends the step's results to `messages` and returns its calls as they went.
fn finish_step(
    session: &Session,
    calls: &[ParsedCall],
    mut results: Vec<Option<ToolExecutionResult>>,
    positions: Vec<usize>,
    ran: Vec<ToolExecutionResult>,
    messages: &mut Vec<Value>,
) -> Vec<CallRecord> {
    for (i, result) in positions.into_iter().zip(ran) {
        results[i] = Some(result);
    }
    let results: Vec<ToolExecutionResult> = results
        .into_iter()
        .map(|r| r.expect("every call has a result"))
        .collect();
    let pairs: Vec<(&ParsedCall, &ToolExecutionResult)> = calls.iter().zip(&results).collect();
    messages.extend(format_results(session.tools.dialect(), &pairs));
    calls
        .iter()
        .zip(results)
        .map(|(call, result)| CallRecord {
            call_id: call.call_id().to_owned(),
            name: call.name().to_owned(),
            arguments: call.arguments().cloned(),
            result,
        })
        .collect()
}

/// The loop, from step `first` on.
async fn drive(
    config: &AgentConfig,
    session: &mut Session,
    messages: Vec<Value>,
    steps: Vec<Vec<CallRecord>>,
    first: usize,
    out: &mut impl Write,
) -> Result<Transcript, AgentError> {
    // The whole run, the root of its trace: the chat requests and every tool call (each an
    // `execute_tool` span the pipeline opens) are its children.
    let span = tracing::info_span!(
        "invoke_agent",
        "otel.name" = %format_args!("invoke_agent {AGENT}"),
        "otel.kind" = "internal",
        "gen_ai.operation.name" = "invoke_agent",
        "gen_ai.agent.name" = AGENT,
        "gen_ai.provider.name" = provider_name(config.dialect.provider()),
        "gen_ai.request.model" = config.model.as_str(),
    );
    drive_in_span(config, session, messages, steps, first, out)
        .instrument(span)
        .await
}

async fn drive_in_span(
    config: &AgentConfig,
    session: &mut Session,
    mut messages: Vec<Value>,
    mut steps: Vec<Vec<CallRecord>>,
    first: usize,
    out: &mut impl Write,
) -> Result<Transcript, AgentError> {
    for step in first..=config.max_steps {
        let mut request = json!({"model": config.model, "messages": messages});
        if let (Some(request), Value::Object(fields)) =
            (request.as_object_mut(), session.tools.request_fields())
        {
            request.extend(fields);
        }
        writeln!(
            out,
            "── step {step}: {} ({} messages)",
            config.model,
            messages.len()
        )?;
        let reply = complete(
            &session.client,
            &session.url,
            &config.api_key,
            config.dialect.provider(),
            &request,
        )
        .await?;
        let Some(message) = reply
            .pointer("/choices/0/message")
            .filter(|m| m.is_object())
        else {
            return Err(AgentError::Reply(format!(
                "no `choices[0].message` in {reply}"
            )));
        };
        // Sent back as received: DeepSeek's thinking mode needs its `reasoning_content` back
        // in a tool loop, and a malformed arguments string is what the model must see it sent.
        let mut message = message.clone();
        message["role"] = json!("assistant");
        let calls = session
            .tools
            .parse_calls(&reply)
            .map_err(AgentError::Parse)?;
        let text = message["content"].as_str().unwrap_or_default().to_owned();
        messages.push(message);
        if calls.is_empty() {
            writeln!(out, "── answer:\n{text}")?;
            return Ok(Transcript {
                messages,
                steps,
                answer: Some(text),
                pending: Vec::new(),
            });
        }
        if !text.trim().is_empty() {
            writeln!(out, "  model: {}", indent(text.trim()))?;
        }

        // The call cards in model order; calls whose arguments could not be read get their
        // failure now, the others go to the scheduler.
        let turn = CancellationToken::new();
        let registry = session.registry.clone();
        let mut cards = Cards {
            registry: &registry,
            calls: &calls,
            printed: vec![false; calls.len()],
        };
        let mut results: Vec<Option<ToolExecutionResult>> = vec![None; calls.len()];
        let mut inputs: Vec<ToolExecutionInput> = Vec::new();
        let mut positions = Vec::new();
        for (i, call) in calls.iter().enumerate() {
            cards.call(out, call)?;
            match call.clone().into_input(turn.clone()) {
                Ok(input) if config.defer.is_some() => {
                    inputs.push(input.agent(AGENT));
                    positions.push(i);
                }
                Ok(input) => {
                    inputs.push(input);
                    positions.push(i);
                }
                Err(failure) => {
                    cards.result(out, i, &failure)?;
                    results[i] = Some(failure);
                }
            }
        }
        let ran = if let Some(file) = &config.defer {
            let deferred = session.scheduler.run_deferred(inputs, &turn).await;
            session.print_committed(&mut cards, out)?;
            match deferred.results() {
                Some(ran) => ran,
                None => {
                    let pending: Vec<PendingApproval> = deferred.pending().cloned().collect();
                    for p in &pending {
                        writeln!(
                            out,
                            "  ⏸ {} {} waits for approval ({})",
                            p.call_id,
                            p.tool,
                            p.reason.as_deref().unwrap_or("no reason given")
                        )?;
                    }
                    Saved {
                        workspace: config.workspace.clone(),
                        code_mode: config.code_mode,
                        step,
                        messages: messages.clone(),
                        reply,
                        early: results,
                        positions,
                        turn: deferred,
                    }
                    .save(file)?;
                    writeln!(out, "── waiting: the turn is saved in {}", file.display())?;
                    return Ok(Transcript {
                        messages,
                        steps,
                        answer: None,
                        pending,
                    });
                }
            }
        } else {
            let run = session.scheduler.run(inputs, &turn);
            tokio::pin!(run);
            let ran = loop {
                tokio::select! {
                    ran = &mut run => break ran,
                    Some((call_id, result)) = session.settled.recv() => cards.committed(out, &call_id, &result)?,
                }
            };
            // Observers run before the scheduler returns: whatever is left is ready.
            while let Ok((call_id, result)) = session.settled.try_recv() {
                cards.committed(out, &call_id, &result)?;
            }
            ran
        };
        for (i, result) in positions.iter().zip(&ran) {
            if !cards.printed[*i] {
                cards.result(out, *i, result)?;
            }
        }
        let record = finish_step(session, &calls, results, positions, ran, &mut messages);
        steps.push(record);
    }
    writeln!(
        out,
        "── stopped: the model was still calling tools after {} steps",
        config.max_steps
    )?;
    Ok(Transcript {
        messages,
        steps,
        answer: None,
        pending: Vec::new(),
    })
}

// ---- a recorded stream, replayed ----------------------------------------------------------

/// Replays a recorded model stream (`text`: one event a line, SSE `data:` prefixes and
/// `[DONE]` allowed) against the workspace tools, as a UI would show it: each call's card as
/// its arguments grow (a line whenever the card changes), then the finished calls as the loop
/// prints them. Returns the calls' cards in the order printed.
pub(crate) fn replay_stream(
    registry: &Registry,
    dialect: Dialect,
    text: &str,
    out: &mut impl Write,
) -> Result<Vec<String>, String> {
    let tools = registry
        .provider_tools(None, dialect)
        .map_err(|e| e.to_string())?;
    let mut stream = tools.call_stream();
    let mut shown: Vec<Option<String>> = Vec::new();
    let mut printed = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let line = line.trim();
        // SSE: only `data:` lines carry events (`event:` names and `:` keep-alives do not).
        if line.starts_with("event:") || line.starts_with(':') {
            continue;
        }
        let line = line.strip_prefix("data:").map_or(line, str::trim_start);
        if line.is_empty() || line == "[DONE]" {
            continue;
        }
        let event: Value =
            serde_json::from_str(line).map_err(|e| format!("line {}: {e}", n + 1))?;
        let updates = stream
            .feed(&event)
            .map_err(|e| format!("line {}: {e}", n + 1))?;
        for update in updates {
            let (dsh_tools::provider::StreamUpdate::Started(i)
            | dsh_tools::provider::StreamUpdate::Grew(i)) = update
            else {
                continue;
            };
            let Some(card) = stream.card(i, registry) else {
                continue;
            };
            let text = card.to_string();
            if shown.len() <= i {
                shown.resize(i + 1, None);
            }
            if shown[i].as_deref() != Some(text.as_str()) {
                let id = stream.calls()[i].provider_call_id().unwrap_or("?");
                writeln!(out, "  ▹ {id} {}", indent(&text)).map_err(|e| e.to_string())?;
                printed.push(text.clone());
                shown[i] = Some(text);
            }
        }
    }
    let calls = stream.finish().map_err(|e| e.to_string())?;
    for call in &calls {
        let Some(args) = call.arguments() else {
            writeln!(
                out,
                "  ▸ {} {} (arguments unreadable)",
                call.call_id(),
                call.name()
            )
            .map_err(|e| e.to_string())?;
            continue;
        };
        let card = registry.present_call(call.name(), args, None).to_string();
        writeln!(out, "  ▸ {} {}", call.call_id(), indent(&card)).map_err(|e| e.to_string())?;
        printed.push(card);
    }
    Ok(printed)
}

//! The same multi-step task solved by a scripted model twice: natively (one tool call per step,
//! every result appended to the conversation) and in Code Mode (one `run_code` program), on real
//! tools over files in a temporary workspace. Measures what the conversation costs.
//!
//! The task: "which of the 20 source files mention TODO, and what do those lines say?" Natively
//! the model lists the files, greps each (20 calls in one turn), reads the 3 hits, then answers:
//! 4 requests. In Code Mode it writes one program that does all of it and prints the summary:
//! 2 requests.

use dsh_tools::code::quickjs::QuickJsRuntime;
use dsh_tools::provider::ProviderExport;
use dsh_tools::registry::PresentationMode;
use dsh_tools::schedule::TurnScheduler;
use dsh_tools::{CancellationToken, Registry, ToolDefinition, ToolError, ToolExecutionInput};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

/// What one way of solving the task cost.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct Cost {
    /// Requests sent to the model.
    pub(crate) model_requests: usize,
    /// Bytes of tool results appended to the conversation.
    pub(crate) tool_result_bytes: usize,
    /// Bytes of every request (each re-sends the whole conversation and the tools).
    pub(crate) cumulative_input_bytes: usize,
    /// Bytes the model wrote (its messages and tool calls).
    pub(crate) output_bytes: usize,
    /// Time spent running tools, in milliseconds.
    pub(crate) tool_phase_ms: f64,
    /// The final answer.
    pub(crate) answer: String,
}

const FILES: usize = 20;
const HITS: [usize; 3] = [3, 11, 17];

/// A fresh workspace of 20 source files, three with a TODO.
pub(crate) fn seed(dir: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    for i in 0..FILES {
        let mut text = String::new();
        for line in 0..40 {
            text.push_str(&format!(
                "fn f{i}_{line}() {{ /* module {i}, line {line} */ }}\n"
            ));
        }
        if HITS.contains(&i) {
            text.push_str(&format!("// TODO(module {i}): handle the error case\n"));
        }
        std::fs::write(dir.join(format!("mod{i:02}.rs")), text)?;
    }
    Ok(())
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct ListArgs {}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct GrepArgs {
    /// File name in the workspace
    path: String,
    /// Text to find
    pattern: String,
}

#[derive(Serialize, JsonSchema)]
struct GrepHit {
    line: u32,
    text: String,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct ReadArgs {
    /// File name in the workspace
    path: String,
}

fn within(root: &Path, name: &str) -> Result<PathBuf, ToolError> {
    if name.contains('/') || name.contains("..") || name.is_empty() {
        return Err(ToolError::new(format!(
            "{name}: not a file of the workspace"
        )));
    }
    Ok(root.join(name))
}

/// The three tools on `root`: `list_files`, `grep_file` (parallel-safe) and `read_file`.
pub(crate) fn tools(root: &Path) -> Registry {
    let registry = Registry::new();
    let root: Arc<Path> = Arc::from(root);
    let r = Arc::clone(&root);
    let list = ToolDefinition::typed(
        "list_files",
        "List the workspace's files.",
        move |_: ListArgs, _| {
            let r = Arc::clone(&r);
            async move {
                let mut names: Vec<String> = std::fs::read_dir(&*r)
                    .map_err(|e| ToolError::new(e.to_string()))?
                    .filter_map(|e| e.ok()?.file_name().into_string().ok())
                    .collect();
                names.sort();
                Ok::<_, ToolError>(names)
            }
        },
    )
    .expect("list_files");
    let r = Arc::clone(&root);
    let grep = ToolDefinition::typed(
        "grep_file",
        "Lines of one file containing a pattern.",
        move |args: GrepArgs, _| {
            let r = Arc::clone(&r);
            async move {
                let text = std::fs::read_to_string(within(&r, &args.path)?)
                    .map_err(|e| ToolError::new(format!("{}: {e}", args.path)))?;
                Ok::<_, ToolError>(
                    text.lines()
                        .enumerate()
                        .filter(|(_, l)| l.contains(&args.pattern))
                        .map(|(i, l)| GrepHit {
                            line: i as u32 + 1,
                            text: l.to_owned(),
                        })
                        .collect::<Vec<_>>(),
                )
            }
        },
    )
    .expect("grep_file")
    .concurrency_safe(|_| true);
    let r = Arc::clone(&root);
    let read = ToolDefinition::typed(
        "read_file",
        "A file's whole text.",
        move |args: ReadArgs, _| {
            let r = Arc::clone(&r);
            async move {
                std::fs::read_to_string(within(&r, &args.path)?)
                    .map_err(|e| ToolError::new(format!("{}: {e}", args.path)))
            }
        },
    )
    .expect("read_file")
    .concurrency_safe(|_| true);
    for tool in [list, grep, read] {
        registry.register(tool).expect("registered");
    }
    registry
}

/// A conversation with a scripted model: requests counted and measured as sent.
struct Conversation {
    messages: Vec<Value>,
    tools: Value,
    cost: Cost,
}

impl Conversation {
    fn new(system: String, tools: Value) -> Self {
        Self {
            messages: vec![
                json!({"role": "system", "content": system}),
                json!({"role": "user", "content": "Which source files mention TODO, and what do those lines say?"}),
            ],
            tools,
            cost: Cost::default(),
        }
    }

    /// One request: the model "replies" with `reply` (its message).
    fn request(&mut self, reply: Value) {
        let body = json!({"model": "scripted", "messages": self.messages, "tools": self.tools});
        self.cost.model_requests += 1;
        self.cost.cumulative_input_bytes += body.to_string().len();
        self.cost.output_bytes += reply.to_string().len();
        self.messages.push(reply);
    }

    fn tool_result(&mut self, id: &str, text: String) {
        self.cost.tool_result_bytes += text.len();
        self.messages
            .push(json!({"role": "tool", "tool_call_id": id, "content": text}));
    }
}

fn calls(calls: &[(String, &str, Value)]) -> Value {
    let tool_calls: Vec<Value> = calls
        .iter()
        .map(|(id, name, args)| {
            json!({"id": id, "type": "function", "function": {"name": name, "arguments": args.to_string()}})
        })
        .collect();
    json!({"role": "assistant", "content": null, "tool_calls": tool_calls})
}

async fn run_turn(
    registry: &Registry,
    conversation: &mut Conversation,
    turn: Vec<(String, &str, Value)>,
) -> Vec<String> {
    conversation.request(calls(&turn));
    let signal = CancellationToken::new();
    let inputs = turn
        .iter()
        .map(|(id, name, args)| {
            ToolExecutionInput::new(id.clone(), *name, args.clone(), signal.clone())
        })
        .collect();
    let started = Instant::now();
    let results = TurnScheduler::new(registry.clone())
        .run(inputs, &signal)
        .await;
    conversation.cost.tool_phase_ms += started.elapsed().as_secs_f64() * 1000.0;
    let texts: Vec<String> = results.iter().map(|r| r.text()).collect();
    for ((id, _, _), text) in turn.iter().zip(&texts) {
        conversation.tool_result(id, text.clone());
    }
    texts
}

/// The task solved natively.
pub(crate) async fn native(root: &Path) -> Cost {
    let registry = tools(root);
    let exported = registry
        .provider_tools(
            None,
            dsh_tools::provider::Dialect::new(dsh_tools::provider::Provider::OpenAiChat),
        )
        .expect("exportable");
    let mut c = Conversation::new(
        "You work through tools.".into(),
        exported.request_fields()["tools"].clone(),
    );
    let listing = run_turn(
        &registry,
        &mut c,
        vec![("c1".into(), "list_files", json!({}))],
    )
    .await;
    let files: Vec<String> = serde_json::from_str(&listing[0]).expect("a list");
    let greps = files
        .iter()
        .enumerate()
        .map(|(i, f)| {
            (
                format!("g{i}"),
                "grep_file",
                json!({"path": f, "pattern": "TODO"}),
            )
        })
        .collect();
    let found = run_turn(&registry, &mut c, greps).await;
    let hits: Vec<&String> = files
        .iter()
        .zip(&found)
        .filter(|(_, text)| text.as_str() != "[]")
        .map(|(f, _)| f)
        .collect();
    let reads = hits
        .iter()
        .enumerate()
        .map(|(i, f)| (format!("r{i}"), "read_file", json!({"path": f})))
        .collect();
    let texts = run_turn(&registry, &mut c, reads).await;
    let mut answer = String::new();
    for (file, text) in hits.iter().zip(&texts) {
        for line in text.lines().filter(|l| l.contains("TODO")) {
            answer.push_str(&format!("{file}: {}\n", line.trim()));
        }
    }
    c.request(json!({"role": "assistant", "content": answer}));
    c.cost.answer = answer;
    c.cost
}

/// The program the scripted model writes in Code Mode.
pub(crate) const PROGRAM: &str = "const files: string[] = await tools.list_files({});
const found = await Promise.all(files.map(path => tools.grep_file({path, pattern: 'TODO'})));
for (let i = 0; i < files.length; i++) {
  if (found[i].length === 0) continue;
  const text = await tools.read_file({path: files[i]});
  for (const line of text.split('\\n').filter(l => l.includes('TODO'))) console.log(`${files[i]}: ${line.trim()}`);
}";

/// The task solved in Code Mode.
pub(crate) async fn code(root: &Path) -> Cost {
    let registry = tools(root);
    registry.set_code_runtime(QuickJsRuntime::new(Default::default()).expect("a runtime"));
    registry.set_presentation_mode(PresentationMode::Code);
    let exported = registry
        .provider_tools(
            None,
            dsh_tools::provider::Dialect::new(dsh_tools::provider::Provider::OpenAiChat),
        )
        .expect("exportable");
    let system = format!("You work through tools.\n\n{}", exported.system_prompt());
    let mut c = Conversation::new(system, exported.request_fields()["tools"].clone());
    let args = json!({"code": PROGRAM, "description": "Find the TODO lines"});
    let out = run_turn(&registry, &mut c, vec![("c1".into(), "run_code", args)]).await;
    let answer = format!("{}\n", out[0].trim_end());
    c.request(json!({"role": "assistant", "content": answer}));
    c.cost.answer = answer;
    c.cost
}

/// The Markdown table of the two runs.
pub(crate) fn table(native: &Cost, code: &Cost) -> String {
    let mut t = String::from("| metric | native | code |\n|---|---:|---:|\n");
    let rows: [(&str, String, String); 5] = [
        (
            "model requests",
            native.model_requests.to_string(),
            code.model_requests.to_string(),
        ),
        (
            "tool-result bytes",
            native.tool_result_bytes.to_string(),
            code.tool_result_bytes.to_string(),
        ),
        (
            "cumulative input bytes",
            native.cumulative_input_bytes.to_string(),
            code.cumulative_input_bytes.to_string(),
        ),
        (
            "output bytes",
            native.output_bytes.to_string(),
            code.output_bytes.to_string(),
        ),
        (
            "tool phase ms",
            format!("{:.1}", native.tool_phase_ms),
            format!("{:.1}", code.tool_phase_ms),
        ),
    ];
    for (name, a, b) in rows {
        t.push_str(&format!("| {name} | {a} | {b} |\n"));
    }
    t
}

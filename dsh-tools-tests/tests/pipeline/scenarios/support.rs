//! Fixtures and helpers shared by the pipeline scenarios (`conformance/pipeline.md`,
//! "Notation and fixtures"), the property tests and the stress test.

#![allow(dead_code, unreachable_pub)]

use dsh_tools::schema::dsl::{compile_parameter_spec, compile_value_spec};
use dsh_tools::schema::{CompiledSchema, Root, ToolArgsError};
use dsh_tools::*;
use serde_json::{Value, json};
use std::future::Future;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// A generous bound that only turns a hang into a failure; nothing asserts wall-clock time.
pub const HANG: Duration = Duration::from_secs(60);

/// `T(x)` = `[{type:'text', text:x}]`, as JSON.
pub fn t(text: &str) -> Value {
    json!([{"type": "text", "text": text}])
}

/// `T(x)` as content blocks.
pub fn blocks(text: &str) -> Vec<ContentBlock> {
    text_content(text)
}

/// A result as the spec writes it.
pub fn to_json(result: &ToolExecutionResult) -> Value {
    serde_json::to_value(result).expect("results serialize")
}

/// `call(name, args)` with call id `c1` and a fresh, never-cancelled signal.
pub fn call(name: &str, args: Value) -> ToolExecutionInput {
    ToolExecutionInput::new("c1", name, args, CancellationToken::new())
}

/// `call(name, args, {signal})`.
pub fn call_with(name: &str, args: Value, signal: &CancellationToken) -> ToolExecutionInput {
    ToolExecutionInput::new("c1", name, args, signal.clone())
}

/// Runs one call, failing (instead of hanging) if it never settles.
pub async fn exec(registry: &Registry, input: ToolExecutionInput) -> ToolExecutionResult {
    tokio::time::timeout(HANG, registry.execute(input))
        .await
        .expect("the call never settled")
}

/// Registers a definition for the registry's lifetime.
pub fn keep(registry: &Registry, definition: ToolDefinition) {
    registry.register(definition).expect("registers").keep();
}

/// **um(tag)**: `{id, role:'user', content:T(tag), source:{kind:'plugin', plugin:tag}}`.
pub fn um(tag: &str) -> UserMessage {
    um_from(tag, tag)
}

/// A user message with `text` from `plugin`.
pub fn um_from(text: &str, plugin: &str) -> UserMessage {
    UserMessage::new(
        format!("m-{text}"),
        blocks(text),
        json!({"kind": "plugin", "plugin": plugin}),
    )
}

/// The `source.plugin` of every context of a result.
pub fn context_sources(result: &ToolExecutionResult) -> Vec<String> {
    result
        .additional_contexts()
        .unwrap_or_default()
        .iter()
        .map(|m| m.source["plugin"].as_str().unwrap_or_default().to_owned())
        .collect()
}

/// `v` as a JSON number `-0` (serde_json's `-0.0`), the one non-lossless `Value`.
pub fn negative_zero() -> Value {
    json!(-0.0)
}

/// **echo**: `{text?: string}` → `args.text ?? ''`, rendered as one text block.
pub fn echo() -> ToolDefinition {
    define_tool(
        "echo",
        "echo arguments back",
        json!({"text": {"type": "string"}}),
        OutputDecl::text(),
        |args, _| async move { Ok(args.get("text").cloned().unwrap_or(json!(""))) },
    )
}

/// **echo** whose body logs `body` to `trace`.
pub fn traced_echo(trace: &Trace) -> ToolDefinition {
    define_tool_traced(
        Some(trace.clone()),
        "echo",
        "echo arguments back",
        json!({"text": {"type": "string"}}),
        OutputDecl::text(),
        |args, _| async move { Ok(args.get("text").cloned().unwrap_or(json!(""))) },
    )
}

/// **raw(name)**: raw definition, empty object parameters, string output, replies `ran:<name>`.
pub fn raw(name: &str) -> ToolDefinition {
    raw_reply(name, &format!("ran:{name}"))
}

/// **raw(name, reply)**.
pub fn raw_reply(name: &str, reply: &str) -> ToolDefinition {
    let reply = json!(reply);
    ToolDefinition::new(
        name,
        format!("raw {name}"),
        json!({"type": "object", "properties": {}}),
        OutputDecl::text(),
        move |_, _| {
            let reply = reply.clone();
            async move { Ok(reply) }
        },
    )
}

/// A raw tool that counts its body runs and replies `ran:<name>`.
pub fn counted(name: &str, runs: &Counter) -> ToolDefinition {
    let runs = runs.clone();
    let reply = json!(format!("ran:{name}"));
    ToolDefinition::new(
        name,
        format!("raw {name}"),
        json!({"type": "object", "properties": {}}),
        OutputDecl::text(),
        move |_, _| {
            runs.bump();
            let reply = reply.clone();
            async move { Ok(reply) }
        },
    )
}

/// A raw tool whose body returns `value`.
pub fn returning(name: &str, output: OutputDecl, value: Value) -> ToolDefinition {
    ToolDefinition::new(
        name,
        "returns a fixed value",
        json!({"type": "object"}),
        output,
        move |_, _| {
            let value = value.clone();
            async move { Ok(value) }
        },
    )
}

/// The content fixture's output: `{type:'array', items:{}}` (compiled from
/// `{type:'array', items:{type:'json'}}`), rendered as the value itself.
pub fn content_output() -> OutputDecl {
    let schema =
        compile_value_spec(&json!({"type": "array", "items": {"type": "json"}})).expect("compiles");
    assert_eq!(schema, json!({"type": "array", "items": {}}));
    OutputDecl::new(schema, |_, value| {
        serde_json::from_value(value.clone()).expect("the fixture's value is content")
    })
}

/// **fixture(name, body)**: a content fixture (raw parameters `{type:'object'}`).
pub fn fixture<F, Fut>(name: &str, body: F) -> ToolDefinition
where
    F: Fn(Arc<Value>, ToolRunContext) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<Value, ToolError>> + Send + 'static,
{
    ToolDefinition::new(
        name,
        format!("fixture {name}"),
        json!({"type": "object"}),
        content_output(),
        body,
    )
}

/// What `defineTool` builds (spec §1.4): the parameter spec compiled to the model-facing
/// schema, and a body that validates its arguments in parameter-root mode before running,
/// failing with `ToolArgsError` (`INVALID_ARGS`).
pub fn define_tool<F, Fut>(
    name: &str,
    description: &str,
    parameters: Value,
    output: OutputDecl,
    body: F,
) -> ToolDefinition
where
    F: Fn(Arc<Value>, ToolRunContext) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<Value, ToolError>> + Send + 'static,
{
    define_tool_traced(None, name, description, parameters, output, body)
}

/// [`define_tool`] whose body logs `body` to `trace` when it starts (before validating).
pub fn define_tool_traced<F, Fut>(
    trace: Option<Trace>,
    name: &str,
    description: &str,
    parameters: Value,
    output: OutputDecl,
    body: F,
) -> ToolDefinition
where
    F: Fn(Arc<Value>, ToolRunContext) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<Value, ToolError>> + Send + 'static,
{
    let schema = compile_parameter_spec(&parameters).expect("the parameter spec compiles");
    let compiled = Arc::new(CompiledSchema::compile(&schema).expect("the schema compiles"));
    let body = Arc::new(body);
    ToolDefinition::new(name, description, schema, output, move |args, ctx| {
        if let Some(trace) = &trace {
            trace.push("body");
        }
        let violations = compiled.validate_at(&args, Root::Parameters);
        let body = Arc::clone(&body);
        async move {
            if !violations.is_empty() {
                return Err(ToolArgsError::new(violations).into());
            }
            body(args, ctx).await
        }
    })
}

/// An ordered log of what ran.
#[derive(Clone, Default)]
pub struct Trace(Arc<Mutex<Vec<String>>>);

impl Trace {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn push(&self, entry: impl Into<String>) {
        self.0.lock().unwrap().push(entry.into());
    }

    pub fn get(&self) -> Vec<String> {
        self.0.lock().unwrap().clone()
    }

    pub fn take(&self) -> Vec<String> {
        std::mem::take(&mut *self.0.lock().unwrap())
    }
}

/// A shared counter.
#[derive(Clone, Default)]
pub struct Counter(Arc<AtomicUsize>);

impl Counter {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn bump(&self) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }

    pub fn get(&self) -> usize {
        self.0.load(Ordering::SeqCst)
    }
}

/// A slot that records what a hook saw.
#[derive(Clone)]
pub struct Seen<T>(Arc<Mutex<Vec<T>>>);

impl<T: Clone> Seen<T> {
    pub fn new() -> Self {
        Self(Arc::new(Mutex::new(Vec::new())))
    }

    pub fn put(&self, value: T) {
        self.0.lock().unwrap().push(value);
    }

    pub fn all(&self) -> Vec<T> {
        self.0.lock().unwrap().clone()
    }

    pub fn only(&self) -> T {
        let all = self.all();
        assert_eq!(all.len(), 1, "expected exactly one observation");
        all[0].clone()
    }
}

impl<T: Clone> Default for Seen<T> {
    fn default() -> Self {
        Self::new()
    }
}

/// Whether `a` and `b` are clones of one token (cancelling a clone cancels every clone; a child
/// token does not cancel its parent). Cancels both.
pub fn same_token(a: &Signal, b: &CancellationToken) -> bool {
    assert!(
        !a.is_cancelled() && !b.is_cancelled(),
        "compare live tokens"
    );
    b.cancel();
    a.is_cancelled()
}

/// Whether `observed` is the caller's signal as hooks see it (spec §8.1): live, and fired by
/// the caller's abort. (A read-only `Signal`: a hook cannot cancel the caller's.)
/// Cancels `caller`.
pub fn fires_with(observed: &Signal, caller: &CancellationToken) -> bool {
    assert!(
        !observed.is_cancelled() && !caller.is_cancelled(),
        "compare live tokens"
    );
    caller.cancel();
    observed.is_cancelled()
}

/// Registers the traced pass-through hooks of the scenarios' traces: **pre**, **guard**,
/// **around** (`around:before` / `around:after`), **post** and **result**. Each entry names the
/// error code (or `ok`) the post and result hooks saw, as `post:<code>` / `result:<code>`.
pub fn trace_all(registry: &Registry, trace: &Trace) {
    let tr = trace.clone();
    registry
        .on_pre_execute(move |_e, next: PreNext| {
            tr.push("pre");
            next.run()
        })
        .keep();
    let tr = trace.clone();
    registry
        .guard(move |_e: &ToolExecution| {
            tr.push("guard");
            None
        })
        .keep();
    let tr = trace.clone();
    registry
        .on_execute(move |_c, next: ExecuteNext| {
            let tr = tr.clone();
            async move {
                tr.push("around:before");
                let r = next.run().await;
                tr.push("around:after");
                r
            }
        })
        .keep();
    let tr = trace.clone();
    registry
        .on_post_execute(move |_e, r: ToolExecutionResult, next: PostNext| {
            tr.push(format!("post:{}", code_of(&r)));
            next.run()
        })
        .keep();
    let tr = trace.clone();
    registry
        .on_result(move |_e: &ToolExecution, r: &ToolExecutionResult| {
            tr.push(format!("result:{}", code_of(r)));
            Ok(())
        })
        .keep();
}

/// `ok`, the error code, or `error` for a failure without one.
pub fn code_of(result: &ToolExecutionResult) -> String {
    match (result.is_error(), result.code()) {
        (false, _) => "ok".to_owned(),
        (true, Some(code)) => code.to_owned(),
        (true, None) => "error".to_owned(),
    }
}

/// The exact `ABORTED_BEFORE_DISPATCH` failure.
pub fn aborted_before_dispatch() -> Value {
    json!({
        "content": t("Error: tool call aborted before dispatch"),
        "isError": true,
        "error": {"message": "tool call aborted before dispatch",
                  "info": {"name": "AbortError", "code": "ABORTED_BEFORE_DISPATCH"}}
    })
}

/// The exact `ABORTED` failure.
pub fn aborted() -> Value {
    json!({
        "content": t("Error: tool call aborted"),
        "isError": true,
        "error": {"message": "tool call aborted",
                  "info": {"name": "AbortError", "code": "ABORTED"}}
    })
}

/// A plain (info-less) failure with `Error: <message>` content.
pub fn plain_failure(message: &str) -> Value {
    json!({
        "content": t(&format!("Error: {message}")),
        "isError": true,
        "error": {"message": message}
    })
}

/// A routable failure with `Error: <message>` content.
pub fn coded_failure(message: &str, name: &str, code: &str) -> Value {
    json!({
        "content": t(&format!("Error: {message}")),
        "isError": true,
        "error": {"message": message, "info": {"name": name, "code": code}}
    })
}

/// `json` with `key` set to `value` (for "⊇" shapes that add one field).
pub fn with(mut json: Value, key: &str, value: Value) -> Value {
    json[key] = value;
    json
}

/// Runs `input`, aborting its signal once `reached` fires (a hook or body cancels `reached`
/// when it is at the point where the scenario cancels).
pub async fn abort_at(
    registry: &Registry,
    input: ToolExecutionInput,
    reached: &CancellationToken,
) -> ToolExecutionResult {
    let caller = input.signal.clone();
    let (r, ()) = tokio::join!(exec(registry, input), async {
        reached.cancelled().await;
        caller.cancel();
    });
    r
}

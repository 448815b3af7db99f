//! The `run_code` tool (Code Mode spec §2, §4.1–§4.3): one definition shared by every scope that
//! presents it, running the model's program on the registry's code runtime with the calling
//! scope's tools bound as `tools.<name>(args)`. Every binding call is a nested call through the
//! whole pipeline (pre-execute, approvals, guards, wrappers, post-execute), so Code Mode is
//! never a way around a policy.
//!
//! Not yet here: the scheduler of spec §4.4 (binding calls dispatch as the program makes them),
//! abandonment and draining (§4.5), and the images and contexts handed to the outer result (§4.7).

use crate::call::{ToolExecutionInput, ToolRunContext};
use crate::code::{
    CODE_RUN_FAILED, CodeRequest, ErrorClass, HostFn, Namespace, RUN_CODE, RUN_CODE_DESCRIPTION,
    canonical_value, failure_message, render_success, run_code_call_card, run_code_output_schema,
    run_code_parameters,
};
use crate::content::ContentBlock;
use crate::definition::{OutputDecl, ToolDefinition};
use crate::error::ToolError;
use serde_json::Value;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

/// The message when a scope presents `code` or `both` and the registry has no runtime (spec
/// §5.1.4; the remedy names this crate's API, §6.3).
pub(crate) fn missing_runtime(mode: &str) -> String {
    format!(
        "dsh-tools: mode \"{mode}\" requires a code runtime — give the registry one with \
         Registry::set_code_runtime (a dsh_tools::code::CodeRuntime) or set the presentation \
         mode to \"native\""
    )
}

/// The `run_code` definition.
pub(crate) fn definition() -> ToolDefinition {
    let output = OutputDecl::new(run_code_output_schema(), |_args, value| {
        vec![ContentBlock::text(render_success(value))]
    });
    ToolDefinition::new(
        RUN_CODE,
        RUN_CODE_DESCRIPTION,
        run_code_parameters(),
        output,
        |args: Arc<Value>, ctx: ToolRunContext| run(args, ctx),
    )
    .present_call(Arc::new(|args: &Value| {
        serde_json::from_value(run_code_call_card(args)?).ok()
    }))
}

/// The parameters, compiled once (the ordinary typed path's validation, spec §2.3.1).
fn parameters() -> Option<&'static crate::schema::CompiledSchema> {
    static COMPILED: std::sync::OnceLock<Option<crate::schema::CompiledSchema>> =
        std::sync::OnceLock::new();
    COMPILED
        .get_or_init(|| crate::schema::CompiledSchema::compile(&run_code_parameters()).ok())
        .as_ref()
}

async fn run(args: Arc<Value>, ctx: ToolRunContext) -> Result<Value, ToolError> {
    if let Some(compiled) = parameters() {
        let violations = compiled.validate_at(&args, crate::schema::Root::Parameters);
        if !violations.is_empty() {
            return Err(crate::schema::ToolArgsError::new(violations).into());
        }
    }
    let description = args
        .get("description")
        .and_then(Value::as_str)
        .unwrap_or("");
    if description.trim_matches(crate::code::js_space).is_empty() {
        return Err(ToolError::new(
            "invalid description: expected a non-empty string",
        ));
    }
    let code = args
        .get("code")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_owned();
    drop(args);
    let registry = ctx.registry();
    let exec = ctx.execution();
    let agent = exec.agent().cloned();
    let Some(runtime) = registry.code_runtime() else {
        let mode = registry.presentation_mode(agent.as_ref());
        return Err(ToolError::new(missing_runtime(mode.as_str())));
    };
    // The run-scoped signal: the outer call's, and cancelled once the run settles. Its reason
    // (spec §4.2, §6.4): the outer cancellation's text when the outer call was cancelled.
    let run_signal = ctx.signal().child_token();
    let outer_signal = ctx.signal().token().clone();
    let counter = Arc::new(AtomicUsize::new(0));
    let outer_id = exec.call_id().to_owned();
    let root_id = exec.root_call_id().to_owned();
    let parent = exec.token();
    let functions: Vec<(String, HostFn)> = registry
        .tools(agent.as_ref())
        .iter()
        .filter(|t| t.name() != RUN_CODE)
        .map(|tool| {
            let name = tool.name().to_owned();
            let (registry, counter, signal) =
                (registry.clone(), Arc::clone(&counter), run_signal.clone());
            let (outer_id, root_id, agent) = (outer_id.clone(), root_id.clone(), agent.clone());
            let outer_signal = outer_signal.clone();
            let tool_name = name.clone();
            let host: HostFn = Arc::new(move |arg: Value| {
                let (registry, counter, signal) =
                    (registry.clone(), Arc::clone(&counter), signal.clone());
                let (outer_id, root_id, agent, name) =
                    (outer_id.clone(), root_id.clone(), agent.clone(), tool_name.clone());
                let outer_signal = outer_signal.clone();
                let reason = move || {
                    if outer_signal.is_cancelled() {
                        "AbortError: This operation was aborted"
                    } else {
                        "run_code settled"
                    }
                };
                Box::pin(async move {
                    if signal.is_cancelled() {
                        return Err(format!("run_code run is over ({}); {name} not dispatched", reason()));
                    }
                    if !crate::json::is_lossless(&arg) {
                        return Err("tool arguments must be lossless JSON (call the tool with an arguments object, e.g. `{}`)".to_owned());
                    }
                    let n = counter.fetch_add(1, Ordering::SeqCst) + 1;
                    let mut input =
                        ToolExecutionInput::new(format!("{outer_id}:code:{n}"), &name, arg, signal.clone())
                            .parent(parent)
                            .root_call_id(root_id);
                    if let Some(agent) = agent {
                        input = input.agent(agent);
                    }
                    let result = registry.execute(input).await;
                    if signal.is_cancelled() {
                        return Err(format!("run_code run is over ({}); {name} result discarded", reason()));
                    }
                    match (result.value(), result.error()) {
                        (Some(value), _) => Ok(crate::json::clone_deep(value)),
                        (None, Some(error)) => Err(error.message().to_owned()),
                        (None, None) => Err(format!("{name} failed")),
                    }
                })
            });
            (name, host)
        })
        .collect();
    let request = CodeRequest {
        program: code,
        bindings: vec![Namespace {
            global: "tools".to_owned(),
            functions,
            error_class: Some(ErrorClass {
                name: "ToolCallError".to_owned(),
                member_name_property: "toolName".to_owned(),
            }),
        }],
        signal: Some(run_signal.clone()),
    };
    let outcome = runtime.run(request).await;
    run_signal.cancel(); // the run settled: late binding results are discarded
    let result = outcome.map_err(|e| ToolError::new(e.0))?;
    match failure_message(&result) {
        Some(message) => Err(ToolError::coded(
            "CodeRunFailedError",
            CODE_RUN_FAILED,
            message,
        )),
        None => Ok(canonical_value(&result)),
    }
}

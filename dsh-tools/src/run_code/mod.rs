//! The `run_code` tool (Code Mode spec §2, §4.1–§4.3): one definition shared by every scope that
//! presents it, running the model's program on the registry's code runtime with the calling
//! scope's tools bound as `tools.<name>(args)`. Every binding call is a nested call through the
//! whole pipeline (pre-execute, approvals, guards, wrappers, post-execute), so Code Mode is
//! never a way around a policy.
//! The calls are scheduled by the run's [`lane`]: starts and commits in submission order,
//! dispatches overlapping up to the registry's `max_parallel_sub_calls`, exclusive calls alone.

use crate::call::ToolRunContext;
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
use tokio_util::sync::CancellationToken;

pub(crate) mod lane;
pub(crate) mod placement;
pub(crate) mod replay;
pub(crate) mod run;

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
    let registry = ctx.registry();
    let exec = ctx.execution();
    // Deferred mode: a call that asks stops the program; a resumed one replays its journal.
    let replay: Option<replay::Replay> = crate::call::RunState::take(&exec.run.replay);
    let deferred = replay.is_some() || exec.run.defers.load(std::sync::atomic::Ordering::Acquire);
    if deferred
        && exec
            .run
            .program_ran
            .swap(true, std::sync::atomic::Ordering::AcqRel)
    {
        // A wrapper ran the body again (a retry): the program's calls must not run twice.
        return Err(ToolError::coded(
            "CodeRunFailedError",
            CODE_RUN_FAILED,
            "run_code: in deferred mode a program runs once per call, and this one ran \
             already (a wrapper ran the body again); its calls are not run twice",
        ));
    }
    // Kept for the record a stopped program leaves.
    let arguments = deferred.then(|| crate::json::clone_deep(&args));
    drop(args);
    let agent = exec.agent().cloned();
    let Some(runtime) = registry.code_runtime() else {
        let mode = registry.presentation_mode(agent.as_ref());
        return Err(ToolError::new(missing_runtime(mode.as_str())));
    };
    let limits = registry.code_host_limits();
    let (run, inbox) = run::Run::new(
        ctx.signal().token().clone(),
        exec.call_id().to_owned(),
        exec.root_call_id().to_owned(),
        agent.clone(),
        exec.caller_arc().cloned(),
        exec.token(),
        run::Mode {
            span: exec.span().clone(),
            limits,
            deferred,
            replay,
        },
    );
    // The bindings: the calling scope's visible tools in view order, never `run_code` (§4.1).
    let mut functions: Vec<(String, HostFn)> = registry
        .tools(agent.as_ref())
        .iter()
        .filter(|t| t.name() != RUN_CODE)
        .map(|tool| {
            let name = tool.name().to_owned();
            let run = Arc::clone(&run);
            // Shared: each call's answer keeps the name for its messages, without a copy.
            let member: Arc<str> = Arc::from(name.as_str());
            let host: HostFn = Arc::new(move |arg: Value| run.call(Arc::clone(&member), arg));
            (name, host)
        })
        .collect();
    // With deferred tools in the view, two members find and describe them (issue 34); the
    // names are reserved, so no tool takes them.
    if !registry.deferred_tools(agent.as_ref()).is_empty() {
        let caller = exec.caller_arc().cloned();
        let (r, a, c) = (registry.clone(), agent.clone(), caller.clone());
        let search: HostFn = Arc::new(move |arg: Value| {
            let found = r.program_search(&arg, a.as_ref(), c.as_deref());
            Box::pin(async move { found })
        });
        let (r, a, c) = (registry.clone(), agent.clone(), caller);
        let describe: HostFn = Arc::new(move |arg: Value| {
            let found = r.program_describe(&arg, a.as_ref(), c.as_deref());
            Box::pin(async move { found })
        });
        functions.push((crate::code::PROGRAM_SEARCH.to_owned(), search));
        functions.push((crate::code::PROGRAM_DESCRIBE.to_owned(), describe));
    }
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
        signal: Some(run.signal().clone()),
    };
    let drain = CancellationToken::new();
    // The lane is the runtime's companion: the QuickJS runtime polls it on the program's own
    // thread (a call's answer reaches the program without waking another thread); what is left
    // of it when the program is over is polled here.
    let companion = lane::lane(
        registry,
        Arc::clone(&run),
        ctx.clone(),
        inbox,
        drain.clone(),
    );
    let (outcome, left) = runtime.run_with(request, Box::pin(companion)).await;
    // Settled: late binding calls are refused, queued ones abandoned, started ones drained and
    // committed before the outer result exists (spec §4.5.1).
    run.settle();
    drain.cancel();
    if let Some(lane) = left {
        lane.await;
    }
    let left_out = run.left_out();
    if left_out > 0 {
        let text = format!(
            "dsh-tools: {left_out} image-bearing tool result{} of this run {} not attached: a \
             run attaches at most {} results and {} bytes (CodeHostLimits)",
            if left_out == 1 { "" } else { "s" },
            if left_out == 1 { "was" } else { "were" },
            limits.max_attached_results,
            limits.max_attached_bytes
        );
        ctx.defer_context(crate::content::UserMessage::new(
            format!("{}:images-left-out", exec.call_id()),
            vec![ContentBlock::text(text)],
            serde_json::json!({"kind": "plugin", "plugin": "tools-code-mode"}),
        ));
    }
    let (stop, journal) = run.take_stop();
    match stop {
        Some(run::Stop::Waiting { n, approval, .. }) => {
            let message = format!(
                "run_code waits for approval of {} (call {n} of its program)",
                approval.tool
            );
            let program = crate::call::PendingProgram {
                approval: *approval,
                waiting: n,
                call_id: exec.call_id().to_owned(),
                root_call_id: exec.root_call_id.clone(),
                arguments: arguments.unwrap_or_default(),
                journal,
            };
            crate::call::RunState::put(&exec.run.stopped, program);
            return Err(ToolError::coded(
                "ApprovalPendingError",
                crate::error::codes::APPROVAL_PENDING,
                message,
            ));
        }
        Some(run::Stop::Failed(message)) => {
            return Err(ToolError::coded(
                "CodeRunFailedError",
                CODE_RUN_FAILED,
                message,
            ));
        }
        None => {
            for call in journal {
                crate::json::free(call.arguments);
            }
            if let Some(message) = run.unfinished_replay() {
                return Err(ToolError::coded(
                    "CodeRunFailedError",
                    CODE_RUN_FAILED,
                    message,
                ));
            }
        }
    }
    if let Some(arguments) = arguments {
        crate::json::free(arguments);
    }
    let mut result = outcome.map_err(|e| ToolError::new(e.to_string()))?;
    let outcome = match failure_message(&result) {
        Some(message) => Err(ToolError::coded(
            "CodeRunFailedError",
            CODE_RUN_FAILED,
            message,
        )),
        None => Ok(canonical_value(&result)),
    };
    // A completion may be deep: freed without recursion.
    if let Some(value) = result.value.take() {
        crate::json::free(value);
    }
    outcome
}

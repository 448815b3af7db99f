//! The execution pipeline on arbitrary (deep) model-controlled JSON, on a 2 MiB stack (a tokio
//! worker's).
//!
//! Input: one JSON document of any depth, used as the arguments of calls to four tools (a typed
//! tool with a `serde_json::Value` field, a raw tool that returns its arguments, a typed tool
//! with a struct, an enum and an `Option`, an unknown name), to present each call and result,
//! and, as the `arguments` string of an OpenAI chat reply, through `parse_calls` and
//! `format_results`.
//!
//! Invariants: nothing panics or overflows; a call of a registered tool settles with a result
//! ; an unknown tool is `UNKNOWN_TOOL`; the typed tool's body only ever
//! sees arguments that validated; results clone and drop. Every error has a code except the
//! spec's `tool execution arguments must be losslessly JSON-serializable` (`-0`).
#![no_main]

use dsh_tools::json::{clone_deep, drop_deep, to_compact_string};
use dsh_tools::provider::ProviderExport;
use dsh_tools::provider::{Dialect, Provider, format_results};
use dsh_tools::{
    CancellationToken, OutputDecl, Registry, ToolDefinition, ToolError, ToolExecutionInput,
};
use dsh_tools_fuzz::parse_json;
use libfuzzer_sys::fuzz_target;
use serde_json::{Value, json};

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Anything {
    value: Value,
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
enum Mode {
    Read,
    Write,
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Typed {
    path: String,
    limit: Option<u32>,
    mode: Mode,
    tags: Vec<String>,
}

fn registry() -> Registry {
    let registry = Registry::new();
    let any = ToolDefinition::typed("any", "takes any JSON", |a: Anything, _| async move {
        drop_deep(a.value);
        Ok::<_, ToolError>("ok")
    })
    .unwrap();
    let echo = ToolDefinition::new(
        "echo",
        "returns its arguments",
        json!({"type": "object"}),
        OutputDecl::json(json!({"type": "object"})),
        |arguments, _| async move { Ok(clone_deep(&arguments)) },
    );
    let typed = ToolDefinition::typed("typed", "a struct", |t: Typed, _| async move {
        let _ = (t.path, t.limit, matches!(t.mode, Mode::Read), t.tags.len());
        Ok::<_, ToolError>("typed ok")
    })
    .unwrap();
    for tool in [any, echo, typed] {
        registry.register(tool).unwrap().keep();
    }
    registry
}

fn check(arguments: &Value) {
    let registry = registry();
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    rt.block_on(async {
        for name in ["any", "echo", "typed", "missing"] {
            let input = ToolExecutionInput::new(
                "c1",
                name,
                clone_deep(arguments),
                CancellationToken::new(),
            );
            let result = registry.execute(input).await;
            // Every error has a code but the spec's one for non-lossless arguments (`-0`),
            // which has none (spec 6.13).
            if result.is_error() && result.code().is_none() {
                assert_eq!(
                    result.text(),
                    "Error: tool execution arguments must be losslessly JSON-serializable",
                    "{name}: an error without a code"
                );
            }
            if name == "missing" && result.code().is_some() {
                assert_eq!(result.code(), Some("UNKNOWN_TOOL"));
            }
            if name == "typed" && !result.is_error() {
                assert_eq!(result.text(), "typed ok");
            }
            let copy = result.clone();
            drop(registry.present_call(name, arguments, None));
            drop(registry.present_result(name, arguments, &copy, None));
            drop(copy);
            drop(result);
        }
        // Through a provider: the arguments as the model's JSON string.
        let tools = registry.provider_tools(None, Dialect::new(Provider::OpenAiChat)).unwrap();
        let reply = json!({"choices": [{"message": {"role": "assistant", "tool_calls": [
            {"id": "call_1", "type": "function", "function": {"name": "typed", "arguments": to_compact_string(arguments)}}
        ]}}]});
        if let Ok(calls) = tools.parse_calls(&reply) {
            let mut results = Vec::new();
            for call in &calls {
                results.push(call.execute(&registry, CancellationToken::new()).await);
            }
            let pairs: Vec<_> = calls.iter().zip(results.iter()).collect();
            drop(format_results(Dialect::new(Provider::OpenAiChat), &pairs));
        }
    });
}

fuzz_target!(|data: &[u8]| {
    let Some(input) = parse_json(data) else {
        return;
    };
    let arguments: &Value = &input;
    std::thread::scope(|s| {
        std::thread::Builder::new()
            .stack_size(2 * 1024 * 1024)
            .spawn_scoped(s, || check(arguments))
            .unwrap()
            .join()
            .unwrap();
    });
});

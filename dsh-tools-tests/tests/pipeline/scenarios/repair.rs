//! Repairs before validation (issue 38, part 4): each switched on by itself, kept only when
//! the result validates, told to the model in a context, and seen by the hooks as repaired.

use super::support::*;
use dsh_tools::pipeline::Repair;
use dsh_tools::provider::ProviderExport;
use dsh_tools::provider::{Dialect, Provider};
use dsh_tools::*;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use std::sync::{Arc, Mutex};

#[derive(Deserialize, JsonSchema)]
struct ReadArgs {
    /// The file
    path: String,
    /// First line
    offset: Option<u32>,
    /// Follow links
    #[serde(default)]
    follow: bool,
}

fn read() -> ToolDefinition {
    ToolDefinition::typed("read_file", "Read a file.", |a: ReadArgs, _| async move {
        Ok::<_, ToolError>(format!("{} {:?} {}", a.path, a.offset, a.follow))
    })
    .unwrap()
}

fn repaired_note(result: &ToolExecutionResult) -> Option<String> {
    let contexts = serde_json::to_value(result.additional_contexts()?).unwrap();
    contexts
        .as_array()?
        .iter()
        .find(|c| c["source"]["kind"] == "repair")
        .map(|c| {
            c["content"][0]["text"]
                .as_str()
                .unwrap_or_default()
                .to_owned()
        })
}

#[tokio::test]
async fn scalar_strings_are_repaired_only_where_switched_on_and_unambiguous() {
    let registry = Registry::new();
    keep(&registry, read());
    let args = json!({"path": "a.rs", "offset": "3", "follow": "true"});
    // Off by default: the model's arguments fail as they always have.
    let failed = registry.execute(call("read_file", args.clone())).await;
    assert_eq!(failed.code(), Some("INVALID_ARGS"));

    registry.repair(Repair::ScalarStrings);
    let seen = Arc::new(Mutex::new(Vec::new()));
    let hooks_saw = Arc::clone(&seen);
    registry
        .on_pre_execute(move |e: Arc<ToolExecution>, next: PreNext| {
            hooks_saw
                .lock()
                .unwrap()
                .push(e.arguments().cloned().unwrap_or(Value::Null));
            async move { next.run().await }
        })
        .keep();
    let ran = registry.execute(call("read_file", args)).await;
    assert_eq!(ran.text(), "a.rs Some(3) true");
    assert_eq!(
        seen.lock().unwrap()[0],
        json!({"path": "a.rs", "offset": 3, "follow": true})
    );
    let note = repaired_note(&ran).unwrap();
    assert!(note.contains("repaired (scalar-strings)"), "{note}");
    // Not what the string spells: no repair, the call fails as the model sent it.
    let refused = registry
        .execute(call("read_file", json!({"path": "a.rs", "offset": "3.5"})))
        .await;
    assert_eq!(refused.code(), Some("INVALID_ARGS"));
    assert!(repaired_note(&refused).is_none());
    assert_eq!(registry.repairs(), [Repair::ScalarStrings]);
}

#[tokio::test]
async fn text_and_empty_arguments_are_read_as_the_object_they_spell() {
    let registry = Registry::new();
    keep(&registry, read());
    registry.repair(Repair::TextArguments);
    registry.repair(Repair::ScalarStrings);
    let fenced = json!("```json\n{\"path\": \"b.rs\", \"offset\": \"2\",}\n```");
    let ran = registry.execute(call("read_file", fenced)).await;
    assert_eq!(ran.text(), "b.rs Some(2) false");
    let note = repaired_note(&ran).unwrap();
    assert!(note.contains("(text-arguments, scalar-strings)"), "{note}");

    // From a provider reply: a fenced arguments string, which parse_calls cannot read, runs
    // once the registry repairs text arguments.
    let tools = registry
        .provider_tools(None, Dialect::new(Provider::OpenAiChat))
        .unwrap();
    let reply = json!({"choices": [{"message": {"tool_calls": [{"id": "c1", "type": "function",
        "function": {"name": "read_file", "arguments": "```json\n{\"path\": \"c.rs\"}\n```"}}]}}]});
    let calls = tools.parse_calls(&reply).unwrap();
    assert!(calls[0].error().is_some());
    let result = calls[0].execute(&registry, CancellationToken::new()).await;
    assert_eq!(result.text(), "c.rs None false");

    let ping = ToolDefinition::new(
        "ping",
        "Ping.",
        json!({"type": "object", "properties": {"loud": {"type": "boolean"}}}),
        OutputDecl::text(),
        |_, _| async { Ok(json!("pong")) },
    );
    keep(&registry, ping);
    registry.repair(Repair::EmptyArguments);
    let ran = registry.execute(call("ping", json!(""))).await;
    assert_eq!(ran.text(), "pong");
    let note = repaired_note(&ran).unwrap();
    assert!(note.contains("(empty-arguments): {}"), "{note}");
    // A tool with required parameters is not given `{}` for nothing.
    let refused = registry.execute(call("read_file", json!(null))).await;
    assert_eq!(refused.code(), Some("INVALID_ARGS"));
}

/// The host's own repair: it sees the arguments and the violations; what it returns is
/// validated again (never trusted), and a hook that panics repairs nothing while the turn
/// goes on.
#[tokio::test]
async fn a_hook_repairs_what_the_built_ins_cannot_and_is_never_trusted() {
    use dsh_tools::pipeline::InvalidCall;
    let registry = Registry::new();
    keep(&registry, read());
    let seen = Arc::new(Mutex::new(Vec::new()));
    let saw = Arc::clone(&seen);
    registry.on_invalid_call(move |call: &InvalidCall<'_>| {
        saw.lock().unwrap().push(call.violations.to_vec());
        match call.arguments.get("input") {
            Some(inner) => Some(inner.clone()),
            None if call.arguments.get("boom").is_some() => panic!("a bug in the host's hook"),
            None => Some(json!({"path": 7})),
        }
    });
    let ran = registry
        .execute(call("read_file", json!({"input": {"path": "d.rs"}})))
        .await;
    assert_eq!(ran.text(), "d.rs None false");
    assert!(repaired_note(&ran).unwrap().contains("(on_invalid_call)"));
    assert!(
        seen.lock().unwrap()[0]
            .iter()
            .any(|v| v.contains("missing required property \"path\"")),
        "{:?}",
        seen.lock().unwrap()
    );
    // An invalid repair is not used: the call fails as the model sent it.
    let refused = registry
        .execute(call("read_file", json!({"wrong": 1})))
        .await;
    assert_eq!(refused.code(), Some("INVALID_ARGS"));
    assert!(repaired_note(&refused).is_none());
    // A panicking hook repairs nothing, and the registry goes on.
    let panicked = registry
        .execute(call("read_file", json!({"boom": true})))
        .await;
    assert_eq!(panicked.code(), Some("INVALID_ARGS"));
    let again = registry
        .execute(call("read_file", json!({"input": {"path": "e.rs"}})))
        .await;
    assert_eq!(again.text(), "e.rs None false");
}

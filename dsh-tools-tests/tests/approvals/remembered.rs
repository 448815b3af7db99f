//! Approvals beyond the spec's four outcomes (issue 33, part 1): remembered answers (grants)
//! keyed by the tool's policy, consulted before the approval service, listable and revocable,
//! never widening a guard; and edited arguments, validated again and visible to the model.

use dsh_tools::{
    AgentId, ApprovalOutcome, ApprovalRequest, ArgumentMatch, CancellationToken, Grant,
    GrantDecision, GrantKey, GrantPolicy, OutputDecl, PreToolDecision, Registry, ToolDefinition,
    ToolError, ToolExecution, ToolExecutionInput, ToolExecutionResult, tool,
};
use serde_json::{Value, json};

use crate::stack;
use std::sync::{Arc, Mutex};

type Asked = Arc<Mutex<Vec<ApprovalRequest>>>;

/// A registry whose every call asks, answered by `answer` (which sees how often it was asked).
fn asking(answer: impl Fn(usize) -> ApprovalOutcome + Send + Sync + 'static) -> (Registry, Asked) {
    let registry = Registry::new();
    registry
        .on_pre_execute(|_e: Arc<ToolExecution>, _next| async {
            Ok(PreToolDecision::ask(Some("writes")))
        })
        .keep();
    let asked: Asked = Arc::default();
    let seen = Arc::clone(&asked);
    registry.set_approval_service(move |request: ApprovalRequest| {
        let n = {
            let mut seen = seen.lock().unwrap();
            seen.push(request);
            seen.len()
        };
        let outcome = answer(n);
        async move { Ok::<_, ToolError>(outcome) }
    });
    (registry, asked)
}

/// A raw tool that echoes its arguments.
fn echo(name: &str) -> ToolDefinition {
    ToolDefinition::new(
        name,
        "echoes",
        json!({"type": "object", "properties": {"path": {"type": "string"}, "command": {"type": "string"}},
               "additionalProperties": false}),
        OutputDecl::json(json!({"type": "object"})),
        |args: Arc<Value>, _| async move { Ok((*args).clone()) },
    )
}

async fn call(registry: &Registry, name: &str, args: Value, agent: &str) -> ToolExecutionResult {
    let input = ToolExecutionInput::new("c1", name, args, CancellationToken::new()).agent(agent);
    registry.execute(input).await
}

#[tokio::test]
async fn allowed_always_is_remembered_for_the_tool_and_the_agent() {
    let (registry, asked) = asking(|_| ApprovalOutcome::AllowedAlways(None));
    registry.register(echo("write")).unwrap().keep();
    registry.register(echo("other")).unwrap().keep();
    assert!(!call(&registry, "write", json!({}), "a").await.is_error());
    assert_eq!(asked.lock().unwrap().len(), 1);
    let request = asked.lock().unwrap()[0].clone();
    assert_eq!(
        request.grant,
        Some(GrantKey::new("write").agent(AgentId::new("a")))
    );
    assert!(!request.editable);
    // The same tool and agent: answered by the grant.
    assert!(
        !call(&registry, "write", json!({"path": "x"}), "a")
            .await
            .is_error()
    );
    assert_eq!(asked.lock().unwrap().len(), 1, "not asked again");
    // Another agent, another tool: asked.
    call(&registry, "write", json!({}), "b").await;
    call(&registry, "other", json!({}), "a").await;
    assert_eq!(asked.lock().unwrap().len(), 3);
    let grants = registry.grants();
    assert_eq!(grants.len(), 3);
    assert!(grants.iter().all(|g| g.decision == GrantDecision::Allow));
    // Revoked: asked again.
    assert!(registry.revoke(&GrantKey::new("write").agent(AgentId::new("a"))));
    assert!(!registry.revoke(&GrantKey::new("write").agent(AgentId::new("a"))));
    call(&registry, "write", json!({}), "a").await;
    assert_eq!(asked.lock().unwrap().len(), 4);
}

#[tokio::test]
async fn rejected_always_refuses_later_calls_without_asking_and_wins_over_an_allowance() {
    let (registry, asked) = asking(|_| ApprovalOutcome::RejectedAlways(None));
    registry.register(echo("write")).unwrap().keep();
    let first = call(&registry, "write", json!({}), "a").await;
    assert_eq!(first.text(), "Error: the user rejected tool \"write\"");
    // An allowance for every agent does not override the agent's rejection.
    registry.grant(Grant {
        key: GrantKey::new("write"),
        decision: GrantDecision::Allow,
    });
    let second = call(&registry, "write", json!({}), "a").await;
    assert_eq!(second.text(), "Error: the user rejected tool \"write\"");
    assert_eq!(asked.lock().unwrap().len(), 1);
    // For another agent, the allowance answers.
    assert!(!call(&registry, "write", json!({}), "b").await.is_error());
    assert_eq!(asked.lock().unwrap().len(), 1);
}

#[tokio::test]
async fn an_argument_policy_keys_the_grant_on_those_arguments() {
    let (registry, asked) = asking(|_| ApprovalOutcome::AllowedAlways(None));
    registry
        .register(echo("shell").grant_policy(GrantPolicy::Arguments(vec!["/command".into()])))
        .unwrap()
        .keep();
    call(&registry, "shell", json!({"command": "git status"}), "a").await;
    call(&registry, "shell", json!({"command": "git status"}), "a").await;
    assert_eq!(asked.lock().unwrap().len(), 1);
    call(&registry, "shell", json!({"command": "rm -rf /"}), "a").await;
    assert_eq!(asked.lock().unwrap().len(), 2);
    // A call without the pointer cannot be remembered: the request offers no key.
    call(&registry, "shell", json!({}), "a").await;
    let asked = asked.lock().unwrap();
    assert_eq!(asked.len(), 3);
    assert_eq!(asked[2].grant, None);
    assert_eq!(
        asked[0].grant.as_ref().unwrap().arguments,
        vec![ArgumentMatch::equals("/command", json!("git status"))]
    );
}

#[tokio::test]
async fn a_service_chosen_key_and_a_never_policy() {
    // The service remembers more broadly than the request's key: every `git` command.
    let (registry, asked) = asking(|_| {
        ApprovalOutcome::AllowedAlways(Some(
            GrantKey::new("shell").argument(ArgumentMatch::starts_with("/command", "git ")),
        ))
    });
    registry.register(echo("shell")).unwrap().keep();
    registry
        .register(echo("rm").grant_policy(GrantPolicy::Never))
        .unwrap()
        .keep();
    call(&registry, "shell", json!({"command": "git status"}), "a").await;
    call(&registry, "shell", json!({"command": "git log"}), "b").await;
    assert_eq!(asked.lock().unwrap().len(), 1);
    // `Never`: no key offered; an "always" answer without a key of its own holds once.
    let (never, never_asked) = asking(|_| ApprovalOutcome::AllowedAlways(None));
    never
        .register(echo("rm").grant_policy(GrantPolicy::Never))
        .unwrap()
        .keep();
    assert!(!call(&never, "rm", json!({}), "a").await.is_error());
    assert!(!call(&never, "rm", json!({}), "a").await.is_error());
    assert_eq!(never_asked.lock().unwrap().len(), 2);
    assert_eq!(never_asked.lock().unwrap()[0].grant, None);
    assert!(never.grants().is_empty());
}

#[tokio::test]
async fn a_grant_never_widens_a_guard_or_a_denial() {
    let (registry, asked) = asking(|_| ApprovalOutcome::AllowedOnce);
    registry.register(echo("write")).unwrap().keep();
    registry.grant(Grant {
        key: GrantKey::new("write"),
        decision: GrantDecision::Allow,
    });
    registry
        .guard(|e: &ToolExecution| {
            (e.arguments().and_then(|a| a.get("path")) == Some(&json!("/etc/passwd")))
                .then(|| "outside the workspace".to_owned())
        })
        .keep();
    let guarded = call(&registry, "write", json!({"path": "/etc/passwd"}), "a").await;
    assert_eq!(guarded.text(), "Error: outside the workspace");
    assert!(
        asked.lock().unwrap().is_empty(),
        "the grant answered the ask"
    );
    // A pre-execute denial is never an `ask`: no grant is consulted.
    let denying = Registry::new();
    denying.register(echo("write")).unwrap().keep();
    denying.grant(Grant {
        key: GrantKey::new("write"),
        decision: GrantDecision::Allow,
    });
    denying
        .on_pre_execute(|_e: Arc<ToolExecution>, _next| async {
            Ok(PreToolDecision::deny("not today"))
        })
        .keep();
    assert_eq!(
        call(&denying, "write", json!({}), "a").await.text(),
        "Error: not today"
    );
}

#[tokio::test]
async fn grants_round_trip_through_json() {
    let registry = Registry::new();
    registry.grant(Grant {
        key: GrantKey::new("shell")
            .agent(AgentId::new("coder"))
            .argument(ArgumentMatch::starts_with("/command", "git ")),
        decision: GrantDecision::Allow,
    });
    registry.grant(Grant {
        key: GrantKey::new("rm"),
        decision: GrantDecision::Reject,
    });
    let saved = serde_json::to_value(registry.grants()).unwrap();
    assert_eq!(
        saved,
        json!([
            {"key": {"tool": "shell", "agent": "coder",
                     "arguments": [{"pointer": "/command", "rule": {"startsWith": "git "}}]},
             "decision": "allow"},
            {"key": {"tool": "rm"}, "decision": "reject"}
        ])
    );
    let restored = Registry::new();
    for grant in serde_json::from_value::<Vec<Grant>>(saved).unwrap() {
        restored.grant(grant);
    }
    assert_eq!(restored.grants(), registry.grants());
    // The same key replaces.
    assert!(restored.grant(Grant {
        key: GrantKey::new("rm"),
        decision: GrantDecision::Allow,
    }));
    assert_eq!(restored.grants().len(), 2);
}

#[tokio::test]
async fn edited_arguments_run_validated_and_the_model_is_told() {
    let (registry, asked) = asking(|_| ApprovalOutcome::AllowedWithArgs(json!({"path": "b.txt"})));
    registry
        .register(echo("write").editable_arguments(true))
        .unwrap()
        .keep();
    let seen: Arc<Mutex<Vec<Value>>> = Arc::default();
    let guard_saw = Arc::clone(&seen);
    registry
        .guard(move |e: &ToolExecution| {
            guard_saw
                .lock()
                .unwrap()
                .push(e.arguments().cloned().unwrap());
            None
        })
        .keep();
    let result = call(&registry, "write", json!({"path": "a.txt"}), "a").await;
    assert!(!result.is_error(), "{}", result.text());
    assert!(asked.lock().unwrap()[0].editable);
    assert_eq!(
        result.value(),
        Some(&json!({"path": "b.txt"})),
        "the body ran the edit"
    );
    assert_eq!(
        *seen.lock().unwrap(),
        vec![json!({"path": "b.txt"})],
        "guards see the edit"
    );
    let contexts = result.additional_contexts().unwrap();
    assert_eq!(contexts.len(), 1);
    assert_eq!(
        contexts[0].content[0].as_text(),
        Some(
            "The user approved this call of tool \"write\" with edited arguments: {\"path\":\"b.txt\"}"
        )
    );
    assert_eq!(
        contexts[0].source,
        json!({"kind": "approval", "tool": "write", "editedArguments": {"path": "b.txt"}})
    );
}

#[tokio::test]
async fn an_invalid_edit_is_invalid_args_saying_so_and_nothing_runs() {
    let (registry, _) =
        asking(|_| ApprovalOutcome::AllowedWithArgs(json!({"path": 5, "extra": 1})));
    let ran = Arc::new(Mutex::new(0));
    let count = Arc::clone(&ran);
    registry
        .register(
            ToolDefinition::new(
                "write",
                "writes",
                json!({"type": "object", "properties": {"path": {"type": "string"}},
                       "additionalProperties": false}),
                OutputDecl::text(),
                move |_, _| {
                    *count.lock().unwrap() += 1;
                    async { Ok(json!("wrote")) }
                },
            )
            .editable_arguments(true),
        )
        .unwrap()
        .keep();
    let result = call(&registry, "write", json!({"path": "a.txt"}), "a").await;
    assert_eq!(result.code(), Some("INVALID_ARGS"));
    assert!(
        result
            .text()
            .starts_with("Error: invalid arguments (edited on approval): "),
        "{}",
        result.text()
    );
    assert!(result.text().contains("\"path\""), "{}", result.text());
    assert_eq!(*ran.lock().unwrap(), 0);
}

#[tokio::test]
async fn a_tool_that_takes_no_edits_refuses_an_edited_approval() {
    let (registry, _) = asking(|_| ApprovalOutcome::AllowedWithArgs(json!({"path": "b.txt"})));
    registry.register(echo("write")).unwrap().keep();
    let result = call(&registry, "write", json!({"path": "a.txt"}), "a").await;
    assert!(result.is_error());
    assert_eq!(
        result.text(),
        "Error: the approval edited the arguments of tool \"write\", which does not accept \
         edited arguments (ToolDefinition::editable_arguments)"
    );
}

/// Write `text` to `path`.
#[tool]
async fn write_file(
    /// where
    path: String,
    /// what
    text: String,
) -> Result<String, ToolError> {
    Ok(format!("{path}: {text}"))
}

#[tokio::test]
async fn a_typed_tool_validates_the_edit_with_its_own_validator() {
    let (registry, _) = asking(|n| match n {
        1 => ApprovalOutcome::AllowedWithArgs(json!({"path": "b.txt", "text": "hi"})),
        _ => ApprovalOutcome::AllowedWithArgs(json!({"path": "b.txt"})),
    });
    registry
        .register(dsh_tools::Tool::definition(WriteFile).editable_arguments(true))
        .unwrap()
        .keep();
    let ok = call(
        &registry,
        "write_file",
        json!({"path": "a.txt", "text": "hi"}),
        "a",
    )
    .await;
    assert_eq!(ok.text(), "b.txt: hi");
    let bad = call(
        &registry,
        "write_file",
        json!({"path": "a.txt", "text": "hi"}),
        "a",
    )
    .await;
    assert_eq!(
        bad.text(),
        "Error: invalid arguments (edited on approval): missing required property \"text\""
    );
}

/// A value freed without recursion when the closure holding it is dropped.
struct Deep(Value);

impl Drop for Deep {
    fn drop(&mut self) {
        dsh_tools::json::drop_deep(std::mem::take(&mut self.0));
    }
}

#[test]
fn an_edit_nested_100_000_deep_is_handled_on_a_small_stack() {
    stack::on_worker_stack(|| async {
        let mut edited = serde_json::Map::new();
        edited.insert("v".to_owned(), stack::deep_array(100_000));
        let edited = Deep(Value::Object(edited));
        let (registry, _) = asking(move |_| {
            ApprovalOutcome::AllowedWithArgs(dsh_tools::json::clone_deep(&edited.0))
        });
        let tool = ToolDefinition::new(
            "any",
            "takes anything",
            json!({"type": "object"}),
            OutputDecl::text(),
            |args: Arc<Value>, _| async move { Ok(json!(args.get("v").is_some().to_string())) },
        )
        .editable_arguments(true);
        registry.register(tool).unwrap().keep();
        let result = call(&registry, "any", json!({}), "a").await;
        assert_eq!(result.text(), "true");
        let context = &result.additional_contexts().unwrap()[0];
        let text = context.content[0].as_text().unwrap();
        assert!(text.len() < 2_200, "the message is cut: {}", text.len());
        drop(result);
    });
}

#[tokio::test]
async fn one_persons_always_is_not_anothers() {
    let (registry, asked) = asking(|_| ApprovalOutcome::AllowedAlways(None));
    registry.register(echo("write")).unwrap().keep();
    let as_who = |who: &str| {
        let mut input =
            ToolExecutionInput::new("c", "write", json!({}), CancellationToken::new()).agent("a");
        input.caller = Some(Arc::new(
            dsh_tools::pipeline::Caller::new(who).issuer("https://idp"),
        ));
        input
    };
    assert!(!registry.execute(as_who("alice")).await.is_error());
    assert!(!registry.execute(as_who("alice")).await.is_error());
    assert_eq!(
        asked.lock().unwrap().len(),
        1,
        "alice's grant answers alice"
    );
    registry.execute(as_who("mallory")).await;
    assert_eq!(asked.lock().unwrap().len(), 2, "and not mallory");
    let key = &registry.grants()[0].key;
    assert_eq!(key.caller.as_ref().unwrap().subject, "alice");
}

#[tokio::test]
async fn a_grant_never_answers_a_call_without_an_agent() {
    let (registry, asked) = asking(|_| ApprovalOutcome::AllowedOnce);
    registry.register(echo("write")).unwrap().keep();
    registry.grant(Grant {
        key: GrantKey::new("write"),
        decision: GrantDecision::Allow,
    });
    let anonymous = ToolExecutionInput::new("c", "write", json!({}), CancellationToken::new());
    let result = registry.execute(anonymous).await;
    assert_eq!(
        result.text(),
        "Error: tool \"write\" requires approval, but the call has no agent to route it through"
    );
    assert!(asked.lock().unwrap().is_empty());
}

#[tokio::test]
async fn a_key_the_service_chooses_is_kept_only_for_the_tool_and_agent_asked() {
    let (registry, _) = asking(|n| match n {
        1 => ApprovalOutcome::AllowedAlways(Some(GrantKey::new("other"))),
        _ => ApprovalOutcome::AllowedAlways(Some(GrantKey::new("write").agent(AgentId::new("b")))),
    });
    registry.register(echo("write")).unwrap().keep();
    call(&registry, "write", json!({}), "a").await;
    call(&registry, "write", json!({}), "a").await;
    assert!(registry.grants().is_empty(), "{:?}", registry.grants());
}

#[tokio::test]
async fn a_never_policy_ignores_every_grant() {
    let (registry, asked) = asking(|_| ApprovalOutcome::AllowedOnce);
    registry
        .register(echo("rm").grant_policy(GrantPolicy::Never))
        .unwrap()
        .keep();
    registry.grant(Grant {
        key: GrantKey::new("rm").agent(AgentId::new("a")),
        decision: GrantDecision::Allow,
    });
    call(&registry, "rm", json!({}), "a").await;
    assert_eq!(
        asked.lock().unwrap().len(),
        1,
        "asked, whatever was granted"
    );
}

#[tokio::test]
async fn an_edit_goes_through_pre_execute_again_and_a_denial_wins() {
    let registry = Registry::new();
    registry
        .on_pre_execute(|e: Arc<ToolExecution>, _next| async move {
            let path = e.arguments().and_then(|a| a.get("path")).cloned();
            Ok(match path {
                Some(p) if p == json!("/etc/passwd") => PreToolDecision::deny("not there"),
                _ => PreToolDecision::ask(Some("writes")),
            })
        })
        .keep();
    registry.set_approval_service(|_r: ApprovalRequest| async {
        Ok::<_, ToolError>(ApprovalOutcome::AllowedWithArgs(
            json!({"path": "/etc/passwd"}),
        ))
    });
    registry
        .register(echo("write").editable_arguments(true))
        .unwrap()
        .keep();
    let result = call(&registry, "write", json!({"path": "a.txt"}), "a").await;
    assert_eq!(result.text(), "Error: not there");
    // The model still learns what the edit was.
    let contexts = result
        .additional_contexts()
        .expect("the edited-arguments note");
    assert!(
        contexts[0].content[0]
            .as_text()
            .unwrap()
            .contains("edited arguments")
    );
}

#[tokio::test]
async fn a_rejection_with_a_reason_tells_the_model_why_bounded_and_a_blank_one_is_plain() {
    for (why, want) in [
        (
            "  not that file \n".to_owned(),
            "the user rejected tool \"write\": not that file".to_owned(),
        ),
        (
            " \t ".to_owned(),
            "the user rejected tool \"write\"".to_owned(),
        ),
        (
            "é".repeat(5_000),
            format!("the user rejected tool \"write\": {}", "é".repeat(1_000)),
        ),
    ] {
        let (registry, asked) = asking(move |_| ApprovalOutcome::RejectedBecause(why.clone()));
        registry.register(echo("write")).unwrap().keep();
        let result = call(&registry, "write", json!({"path": "a"}), "coder").await;
        assert!(result.is_error());
        assert_eq!(result.text(), format!("Error: {want}"));
        assert_eq!(asked.lock().unwrap().len(), 1);
    }
}

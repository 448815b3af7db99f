//! An imported server that asks (issue 33, part 4): its question reaches *our* registry's
//! approval service (the scope of the local call), and the answer goes back as the form's, in
//! both eras (2025-11-25 `elicitation/create` during the call, 2026-07-28 `input_required`
//! and a retry). The remote server here is a dsh-tools `McpServer` whose `write` asks.

use crate::support::{ERAS, Era};
use dsh_tools::mcp::rmcp::ServiceExt;
use dsh_tools::mcp::{ImportOptions, McpImport, McpServer};
use dsh_tools::{
    ApprovalOutcome, ApprovalRequest, CancellationToken, OutputDecl, PreToolDecision, Registry,
    ToolDefinition, ToolError, ToolExecution, ToolExecutionInput,
};
use serde_json::{Value, json};
use std::sync::{Arc, Mutex};

/// A remote registry whose `write` asks (and records what it ran with).
fn remote() -> (Registry, Arc<Mutex<Vec<Value>>>) {
    let registry = Registry::new();
    let ran: Arc<Mutex<Vec<Value>>> = Arc::default();
    let seen = Arc::clone(&ran);
    let write = ToolDefinition::new(
        "write",
        "Writes.",
        json!({"type": "object", "properties": {"path": {"type": "string"}}}),
        OutputDecl::text(),
        move |args: Arc<Value>, _| {
            seen.lock().unwrap().push((*args).clone());
            async move { Ok(json!("written")) }
        },
    );
    registry.register(write).unwrap().keep();
    registry
        .on_pre_execute(|_e: Arc<ToolExecution>, _next| async {
            Ok(PreToolDecision::ask(Some("it writes")))
        })
        .keep();
    (registry, ran)
}

type Asked = Arc<Mutex<Vec<ApprovalRequest>>>;

/// A local registry importing `remote` in `era`, whose approval service answers `answer`.
async fn local(
    remote: &Registry,
    era: Era,
    answer: impl Fn() -> ApprovalOutcome + Send + Sync + 'static,
) -> (Registry, Asked, McpImport) {
    let (a, b) = tokio::io::duplex(1 << 20);
    let server = McpServer::new(remote.clone()).server_info("remote-files", "1");
    tokio::spawn(async move {
        if let Ok(running) = server.serve(a).await {
            let _ = running.waiting().await;
        }
    });
    let import = McpImport::connect_with(b, era.lifecycle()).await.unwrap();
    let registry = Registry::new();
    let imported = import
        .import_into(&registry, ImportOptions::default())
        .await
        .unwrap();
    std::mem::forget(imported);
    let asked: Asked = Arc::default();
    let seen = Arc::clone(&asked);
    registry.set_approval_service(move |request: ApprovalRequest| {
        seen.lock().unwrap().push(request);
        let outcome = answer();
        async move { Ok::<_, ToolError>(outcome) }
    });
    (registry, asked, import)
}

async fn write(registry: &Registry, agent: Option<&str>) -> dsh_tools::ToolExecutionResult {
    let mut input = ToolExecutionInput::new(
        "c1",
        "write",
        json!({"path": "a.txt"}),
        CancellationToken::new(),
    );
    if let Some(agent) = agent {
        input = input.agent(agent);
    }
    registry.execute(input).await
}

#[tokio::test]
async fn a_remote_question_reaches_our_approval_service_and_its_yes_runs_the_remote_tool() {
    for era in ERAS {
        let (remote, ran) = remote();
        let (registry, asked, _import) = local(&remote, era, || ApprovalOutcome::AllowedOnce).await;
        let result = write(&registry, Some("coder")).await;
        assert!(!result.is_error(), "{era:?}: {}", result.text());
        assert_eq!(
            *ran.lock().unwrap(),
            vec![json!({"path": "a.txt"})],
            "{era:?}"
        );
        let asked = asked.lock().unwrap();
        assert_eq!(asked.len(), 1, "{era:?}");
        assert_eq!(asked[0].tool_name, "write");
        assert_eq!(asked[0].agent.as_str(), "coder");
        assert!(!asked[0].editable);
        let reason = asked[0].reason.as_deref().unwrap_or_default();
        assert!(
            reason.starts_with(
                "the MCP server \"remote-files\" asks: The MCP server \"remote-files\" asks to run tool \"write\""
            ),
            "{era:?}: {reason}"
        );
    }
}

#[tokio::test]
async fn our_no_reaches_the_remote_server_and_nothing_runs() {
    for era in ERAS {
        let (remote, ran) = remote();
        let (registry, _asked, _import) = local(&remote, era, || ApprovalOutcome::Rejected).await;
        let result = write(&registry, Some("coder")).await;
        assert!(result.is_error(), "{era:?}");
        assert!(
            result.text().contains("the user rejected tool \"write\""),
            "{era:?}: {}",
            result.text()
        );
        assert!(ran.lock().unwrap().is_empty(), "{era:?}");
    }
}

#[tokio::test]
async fn a_call_with_no_one_to_ask_answers_cancel() {
    for era in ERAS {
        let (remote, ran) = remote();
        let (registry, asked, _import) = local(&remote, era, || ApprovalOutcome::AllowedOnce).await;
        // No agent: no scope to ask in.
        let result = write(&registry, None).await;
        assert!(result.is_error(), "{era:?}");
        assert!(
            result
                .text()
                .contains("approval for tool \"write\" was cancelled"),
            "{era:?}: {}",
            result.text()
        );
        assert!(asked.lock().unwrap().is_empty() && ran.lock().unwrap().is_empty());
    }
}

#[tokio::test]
async fn an_always_answer_to_a_remote_question_counts_once_and_keeps_no_grant() {
    for era in ERAS {
        let (remote, ran) = remote();
        let (registry, asked, _import) =
            local(&remote, era, || ApprovalOutcome::AllowedAlways(None)).await;
        for _ in 0..2 {
            let result = write(&registry, Some("coder")).await;
            assert!(!result.is_error(), "{era:?}: {}", result.text());
        }
        assert_eq!(ran.lock().unwrap().len(), 2, "{era:?}");
        // Asked each time, offered no "always", and nothing kept.
        let asked = asked.lock().unwrap();
        assert_eq!(asked.len(), 2, "{era:?}");
        assert!(asked.iter().all(|r| r.grant.is_none()), "{era:?}");
        assert!(registry.grants().is_empty(), "{era:?}");
    }
}

#[tokio::test]
async fn a_grant_for_the_tool_does_not_answer_a_remote_question() {
    use dsh_tools::{Grant, GrantDecision, GrantPolicy};
    let (remote, ran) = remote();
    let (registry, asked, _import) =
        local(&remote, Era::Modern, || ApprovalOutcome::Rejected).await;
    let key = GrantPolicy::default()
        .key_for("write", Some(&"coder".into()), None, &json!({}))
        .unwrap();
    registry.grant(Grant {
        key,
        decision: GrantDecision::Allow,
    });
    let result = write(&registry, Some("coder")).await;
    assert!(result.is_error(), "{}", result.text());
    assert_eq!(asked.lock().unwrap().len(), 1, "the person was asked");
    assert!(ran.lock().unwrap().is_empty());
}

#[tokio::test]
async fn remote_progress_reaches_each_calls_report_progress_in_both_eras() {
    use dsh_tools::pipeline::{Progress, ProgressSink};
    for era in ERAS {
        let probe = Arc::new(crate::support::Probe::default());
        let remote = crate::support::registry(&probe);
        let (registry, _asked, _import) =
            local(&remote, era, || ApprovalOutcome::AllowedOnce).await;
        // Two calls at once: each sees its own three reports, in order.
        let run = |id: &str| {
            let seen: Arc<Mutex<Vec<Progress>>> = Arc::default();
            let sink = Arc::clone(&seen);
            let input =
                ToolExecutionInput::new(id, "progress", json!({}), CancellationToken::new())
                    .progress(ProgressSink::new(move |p| sink.lock().unwrap().push(p)));
            let registry = registry.clone();
            async move { (registry.execute(input).await, seen) }
        };
        let ((a, seen_a), (b, seen_b)) = tokio::join!(run("p1"), run("p2"));
        for (result, seen) in [(a, seen_a), (b, seen_b)] {
            assert!(!result.is_error(), "{era:?}: {}", result.text());
            let seen = seen.lock().unwrap();
            let steps: Vec<(f64, Option<f64>, Option<&str>)> = seen
                .iter()
                .map(|p| (p.progress, p.total, p.message.as_deref()))
                .collect();
            assert_eq!(
                steps,
                [
                    (1.0, Some(3.0), Some("step 1")),
                    (2.0, Some(3.0), Some("step 2")),
                    (3.0, Some(3.0), Some("step 3"))
                ],
                "{era:?}"
            );
        }
    }
}

/// A server that asks six questions in one 2026-07-28 round, then answers with what it got.
#[derive(Clone)]
struct Asker;

impl dsh_tools::mcp::rmcp::ServerHandler for Asker {
    fn get_info(&self) -> dsh_tools::mcp::rmcp::model::ServerConfig {
        dsh_tools::mcp::rmcp::model::ServerConfig::new(
            dsh_tools::mcp::rmcp::model::ServerCapabilities::builder()
                .enable_tools()
                .build(),
        )
    }

    async fn list_tools(
        &self,
        _request: Option<dsh_tools::mcp::rmcp::model::PaginatedRequestParams>,
        _cx: dsh_tools::mcp::rmcp::service::RequestContext<dsh_tools::mcp::rmcp::RoleServer>,
    ) -> Result<dsh_tools::mcp::rmcp::model::ListToolsResult, dsh_tools::mcp::rmcp::ErrorData> {
        let tool: dsh_tools::mcp::rmcp::model::Tool =
            serde_json::from_value(json!({"name": "ask", "inputSchema": {"type": "object"}}))
                .unwrap();
        Ok(dsh_tools::mcp::rmcp::model::ListToolsResult::with_all_items(vec![tool]))
    }

    async fn call_tool(
        &self,
        request: dsh_tools::mcp::rmcp::model::CallToolRequestParams,
        _cx: dsh_tools::mcp::rmcp::service::RequestContext<dsh_tools::mcp::rmcp::RoleServer>,
    ) -> Result<dsh_tools::mcp::rmcp::model::CallToolResponse, dsh_tools::mcp::rmcp::ErrorData>
    {
        use dsh_tools::mcp::rmcp::model::{CallToolResult, InputRequests, InputRequiredResult};
        match request.input_responses {
            None => {
                let mut asked = InputRequests::new();
                for i in 0..6 {
                    asked.insert(
                        format!("q{i}"),
                        serde_json::from_value(json!({
                            "method": "elicitation/create",
                            "params": {"mode": "form", "message": format!("question {i}?"),
                                       "requestedSchema": {"type": "object",
                                           "properties": {"ok": {"type": "boolean"}},
                                           "required": ["ok"]}}
                        }))
                        .unwrap(),
                    );
                }
                Ok(InputRequiredResult::new(Some(asked), Some("s".to_owned())).into())
            }
            Some(answers) => {
                let actions: serde_json::Map<String, Value> = answers
                    .into_iter()
                    .map(|(k, v)| (k, v["action"].clone()))
                    .collect();
                Ok(CallToolResult::structured(Value::Object(actions)).into())
            }
        }
    }
}

#[tokio::test]
async fn a_server_asking_many_questions_in_a_round_gets_a_few_asked_and_the_rest_cancelled() {
    let (a, b) = tokio::io::duplex(1 << 20);
    tokio::spawn(async move {
        if let Ok(running) = Asker.serve(a).await {
            let _ = running.waiting().await;
        }
    });
    let import = McpImport::connect_with(b, Era::Modern.lifecycle())
        .await
        .unwrap();
    let registry = Registry::new();
    std::mem::forget(
        import
            .import_into(&registry, ImportOptions::default())
            .await
            .unwrap(),
    );
    let asked = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let count = Arc::clone(&asked);
    registry.set_approval_service(move |_r: ApprovalRequest| {
        count.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        async { Ok::<_, ToolError>(ApprovalOutcome::AllowedOnce) }
    });
    let input =
        ToolExecutionInput::new("c1", "ask", json!({}), CancellationToken::new()).agent("coder");
    let result = registry.execute(input).await;
    assert!(!result.is_error(), "{}", result.text());
    let actions = &result.value().unwrap()["structuredContent"];
    let accepted = (0..6)
        .filter(|i| actions[format!("q{i}")] == "accept")
        .count();
    let cancelled = (0..6)
        .filter(|i| actions[format!("q{i}")] == "cancel")
        .count();
    assert_eq!((accepted, cancelled), (4, 2), "{actions}");
    assert_eq!(asked.load(std::sync::atomic::Ordering::SeqCst), 4);
}

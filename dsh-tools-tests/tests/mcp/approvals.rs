//! Approvals that reach the MCP client's user (issue 33, part 3): an `ask` becomes a form
//! elicitation, sent while the call waits (2025-11-25) or returned as `input_required` with a
//! sealed `requestState` the client retries with (2026-07-28); the answer's outcome is applied
//! as an approval service's would be. Hostile retries (tampered, replayed, for other arguments,
//! another view or another key, expired) are refused.

use crate::support::{ERAS, Era, call, texts};
use dsh_tools::mcp::rmcp::model::{
    CallToolResponse, ClientCapabilities, ClientConfig, ElicitRequestParams, ElicitResult,
    ElicitationAction, ElicitationCapability, ErrorCode, FormElicitationCapability, InputResponses,
};
use dsh_tools::mcp::rmcp::service::{
    ClientServiceExt, RequestContext, RunningService, ServiceError,
};
use dsh_tools::mcp::rmcp::{ClientHandler, ErrorData, RoleClient, ServiceExt};
use dsh_tools::mcp::{APPROVAL_INPUT_KEY, McpServer, ServerApprovals};
use dsh_tools::{
    ApprovalOutcome, ApprovalRequest, OutputDecl, PreToolDecision, Registry, ToolDefinition,
    ToolError, ToolExecution,
};
use serde_json::{Value, json};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// What the person answers: `None` never answers.
type Answer = Arc<dyn Fn(&Value) -> Option<ElicitResult> + Send + Sync>;

/// A client whose user answers every form elicitation with `answer` (and records it).
#[derive(Clone)]
struct Person {
    answer: Answer,
    elicit: bool,
    /// When set, each answer waits for a permit.
    gate: Option<Arc<tokio::sync::Semaphore>>,
    asked: Arc<Mutex<Vec<(String, Value)>>>,
}

impl Person {
    fn new(answer: impl Fn(&Value) -> Option<ElicitResult> + Send + Sync + 'static) -> Self {
        Self {
            answer: Arc::new(answer),
            elicit: true,
            gate: None,
            asked: Arc::default(),
        }
    }

    fn accepting(content: Value) -> Self {
        Self::new(move |_| {
            Some(ElicitResult::new(ElicitationAction::Accept).with_content(content.clone()))
        })
    }

    fn asked(&self) -> Vec<(String, Value)> {
        self.asked.lock().unwrap().clone()
    }
}

impl ClientHandler for Person {
    fn get_info(&self) -> ClientConfig {
        let mut caps = ClientCapabilities::default();
        if self.elicit {
            caps.elicitation =
                Some(ElicitationCapability::new().with_form(FormElicitationCapability::default()));
        }
        ClientConfig::new(
            caps,
            dsh_tools::mcp::rmcp::model::Implementation::new("person", "1"),
        )
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        _cx: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        let ElicitRequestParams::FormElicitationParams {
            message,
            requested_schema,
            ..
        } = request
        else {
            return Ok(ElicitResult::new(ElicitationAction::Decline));
        };
        let schema = serde_json::to_value(&requested_schema).unwrap();
        self.asked.lock().unwrap().push((message, schema.clone()));
        if let Some(gate) = &self.gate {
            gate.acquire().await.unwrap().forget();
        }
        match (self.answer)(&schema) {
            Some(answer) => Ok(answer),
            None => std::future::pending().await,
        }
    }
}

type Client = RunningService<RoleClient, Person>;

async fn connect(server: McpServer, era: Era, person: Person) -> Client {
    let (a, b) = tokio::io::duplex(1 << 20);
    tokio::spawn(async move {
        if let Ok(running) = server.serve(a).await {
            let _ = running.waiting().await;
        }
    });
    person
        .serve_with_lifecycle(b, era.lifecycle())
        .await
        .expect("client connects")
}

/// A registry with `write` (asks; takes edits; records the arguments it ran with) and `echo`
/// (allowed).
fn asking_registry() -> (Registry, Arc<Mutex<Vec<Value>>>) {
    registry_with(true)
}

fn registry_with(editable: bool) -> (Registry, Arc<Mutex<Vec<Value>>>) {
    let registry = Registry::new();
    let ran: Arc<Mutex<Vec<Value>>> = Arc::default();
    let seen = Arc::clone(&ran);
    let write = ToolDefinition::new(
        "write",
        "Writes a file.",
        json!({"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"],
               "additionalProperties": false}),
        OutputDecl::text(),
        move |args: Arc<Value>, _| {
            seen.lock().unwrap().push((*args).clone());
            async move {
                Ok(json!(format!(
                    "wrote {}",
                    args["path"].as_str().unwrap_or("?")
                )))
            }
        },
    )
    .editable_arguments(editable);
    registry.register(write).unwrap().keep();
    let echo = ToolDefinition::new(
        "echo",
        "Echoes.",
        json!({"type": "object"}),
        OutputDecl::text(),
        |_, _| async { Ok(json!("echoed")) },
    );
    registry.register(echo).unwrap().keep();
    registry
        .on_pre_execute(|e: Arc<ToolExecution>, _next| async move {
            Ok(if e.name() == "write" {
                PreToolDecision::ask(Some("it writes to disk"))
            } else {
                PreToolDecision::Allow
            })
        })
        .keep();
    (registry, ran)
}

fn approve() -> Value {
    json!({"approve": true})
}

fn text_of(result: &dsh_tools::mcp::rmcp::model::CallToolResult) -> String {
    texts(result).join("\n")
}

#[tokio::test]
async fn an_approved_call_runs_once_in_both_eras_and_the_message_names_server_and_tool() {
    for era in ERAS {
        let (registry, ran) = asking_registry();
        let person = Person::accepting(approve());
        let server = McpServer::new(registry).server_info("files-server", "1.0");
        let client = connect(server, era, person.clone()).await;
        let result = client
            .call_tool(call("write", json!({"path": "a.txt"})))
            .await
            .unwrap();
        assert_eq!(result.is_error, Some(false), "{era:?}: {result:?}");
        assert_eq!(text_of(&result), "wrote a.txt", "{era:?}");
        assert_eq!(
            *ran.lock().unwrap(),
            vec![json!({"path": "a.txt"})],
            "{era:?}"
        );
        let asked = person.asked();
        assert_eq!(asked.len(), 1, "{era:?}: asked once");
        let (message, schema) = &asked[0];
        assert!(
            message.starts_with("The MCP server \"files-server\" asks to run tool \"write\""),
            "{era:?}: {message}"
        );
        assert!(message.contains("it writes to disk"), "{era:?}: {message}");
        assert!(
            message.contains(r#"{"path":"a.txt"}"#),
            "{era:?}: {message}"
        );
        assert_eq!(schema["required"], json!(["approve"]), "{era:?}");
        assert_eq!(
            schema["properties"]["approve"]["type"], "boolean",
            "{era:?}"
        );
        // Edits are offered (the tool takes them); remembering is not (no agent to keep it for).
        assert_eq!(
            schema["properties"]["arguments"]["default"],
            r#"{"path":"a.txt"}"#
        );
        assert!(
            schema["properties"].get("remember").is_none(),
            "{era:?}: {schema}"
        );
        // A call that does not ask is not put to the person.
        let echoed = client.call_tool(call("echo", json!({}))).await.unwrap();
        assert_eq!(text_of(&echoed), "echoed");
        assert_eq!(person.asked().len(), 1, "{era:?}");
        client.cancel().await.unwrap();
    }
}

#[tokio::test]
async fn declined_cancelled_and_refused_forms_never_run_the_tool() {
    let cases: [(&str, ElicitResult, &str); 4] = [
        (
            "decline",
            ElicitResult::new(ElicitationAction::Decline),
            "the user rejected tool \"write\"",
        ),
        (
            "cancel",
            ElicitResult::new(ElicitationAction::Cancel),
            "approval for tool \"write\" was cancelled",
        ),
        (
            "approve false",
            ElicitResult::new(ElicitationAction::Accept).with_content(json!({"approve": false})),
            "the user rejected tool \"write\"",
        ),
        (
            "approve false with a reason",
            ElicitResult::new(ElicitationAction::Accept)
                .with_content(json!({"approve": false, "reason": "  use b.txt  "})),
            "the user rejected tool \"write\": use b.txt",
        ),
    ];
    for era in ERAS {
        for (what, answer, message) in &cases {
            let (registry, ran) = asking_registry();
            let answer = answer.clone();
            let person = Person::new(move |_| Some(answer.clone()));
            let client = connect(McpServer::new(registry), era, person).await;
            let result = client
                .call_tool(call("write", json!({"path": "a.txt"})))
                .await
                .unwrap();
            assert_eq!(result.is_error, Some(true), "{era:?} {what}");
            assert_eq!(
                text_of(&result),
                format!("Error: {message}"),
                "{era:?} {what}"
            );
            assert!(
                ran.lock().unwrap().is_empty(),
                "{era:?} {what}: the tool ran"
            );
            client.cancel().await.unwrap();
        }
    }
}

#[tokio::test]
async fn edited_arguments_run_the_tool_with_the_edit_and_an_invalid_edit_is_invalid_args() {
    for era in ERAS {
        let (registry, ran) = asking_registry();
        let person =
            Person::accepting(json!({"approve": true, "arguments": "{\"path\": \"b.txt\"}"}));
        let client = connect(McpServer::new(registry), era, person).await;
        let result = client
            .call_tool(call("write", json!({"path": "a.txt"})))
            .await
            .unwrap();
        assert_eq!(result.is_error, Some(false), "{era:?}: {result:?}");
        assert!(
            text_of(&result).contains("wrote b.txt"),
            "{era:?}: {result:?}"
        );
        assert_eq!(
            *ran.lock().unwrap(),
            vec![json!({"path": "b.txt"})],
            "{era:?}"
        );
        client.cancel().await.unwrap();

        let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
        for (edit, why) in [
            (r#"{"path": 3}"#, "invalid arguments (edited on approval)"),
            (
                "not json",
                "invalid arguments (edited on approval): not JSON",
            ),
            // 100,000 levels: refused by the parser's depth limit, nothing recursed on.
            (
                deep.as_str(),
                "invalid arguments (edited on approval): not JSON",
            ),
        ] {
            let (registry, ran) = asking_registry();
            let person = Person::accepting(json!({"approve": true, "arguments": edit}));
            let client = connect(McpServer::new(registry), era, person).await;
            let result = client
                .call_tool(call("write", json!({"path": "a.txt"})))
                .await
                .unwrap();
            let edit: String = edit.chars().take(40).collect();
            assert_eq!(result.is_error, Some(true), "{era:?} {edit}");
            assert!(text_of(&result).contains(why), "{era:?} {edit}: {result:?}");
            let meta = serde_json::to_value(&result.meta).unwrap();
            assert_eq!(
                meta["dev.dsh-tools/error"]["code"], "INVALID_ARGS",
                "{era:?} {edit}"
            );
            assert!(ran.lock().unwrap().is_empty(), "{era:?} {edit}");
            client.cancel().await.unwrap();
        }
    }
}

#[tokio::test]
async fn an_edit_is_refused_for_a_tool_that_takes_none_and_a_malformed_form_fails_the_call() {
    for era in ERAS {
        let (registry, ran) = registry_with(false);
        let person = Person::accepting(json!({"approve": true, "arguments": "{\"path\": \"b\"}"}));
        let client = connect(McpServer::new(registry), era, person.clone()).await;
        let result = client
            .call_tool(call("write", json!({"path": "a"})))
            .await
            .unwrap();
        assert_eq!(result.is_error, Some(true), "{era:?}");
        assert!(
            text_of(&result).contains("does not accept edited arguments"),
            "{result:?}"
        );
        assert!(person.asked()[0].1["properties"].get("arguments").is_none());
        client.cancel().await.unwrap();
        assert!(ran.lock().unwrap().is_empty());

        let (registry, ran) = asking_registry();
        let person = Person::accepting(json!({"approve": "yes"}));
        let client = connect(McpServer::new(registry), era, person).await;
        let result = client
            .call_tool(call("write", json!({"path": "a"})))
            .await
            .unwrap();
        assert_eq!(result.is_error, Some(true), "{era:?}");
        assert!(
            text_of(&result).contains("came back malformed: `approve` is not a boolean"),
            "{era:?}: {result:?}"
        );
        assert!(ran.lock().unwrap().is_empty());
        client.cancel().await.unwrap();
    }
}

#[tokio::test]
async fn a_client_that_cannot_elicit_gets_what_it_got_before() {
    for era in ERAS {
        let (registry, ran) = asking_registry();
        let mut person = Person::accepting(approve());
        person.elicit = false;
        let client = connect(McpServer::new(registry.clone()), era, person.clone()).await;
        let result = client
            .call_tool(call("write", json!({"path": "a"})))
            .await
            .unwrap();
        assert_eq!(result.is_error, Some(true), "{era:?}");
        // What the registry itself answers such a call (no agent, no approval service).
        let direct = registry
            .execute(dsh_tools::ToolExecutionInput::new(
                "c",
                "write",
                json!({"path": "a"}),
                dsh_tools::CancellationToken::new(),
            ))
            .await;
        assert_eq!(text_of(&result), direct.text());
        assert!(person.asked().is_empty() && ran.lock().unwrap().is_empty());
        client.cancel().await.unwrap();

        // Approvals turned off: the same, for a client that could elicit.
        let (registry, ran) = asking_registry();
        let person = Person::accepting(approve());
        let server = McpServer::new(registry).approvals(ServerApprovals::disabled());
        let client = connect(server, era, person.clone()).await;
        let result = client
            .call_tool(call("write", json!({"path": "a"})))
            .await
            .unwrap();
        assert_eq!(result.is_error, Some(true), "{era:?}");
        assert!(person.asked().is_empty() && ran.lock().unwrap().is_empty());
        client.cancel().await.unwrap();
    }
}

#[tokio::test]
async fn an_agent_scope_server_remembers_an_answer_for_its_agent() {
    for era in ERAS {
        let (registry, ran) = asking_registry();
        // The scope's own approval service is not asked: the client's user is.
        let service_asked = Arc::new(AtomicUsize::new(0));
        let counter = Arc::clone(&service_asked);
        registry.set_approval_service(move |_r: ApprovalRequest| {
            counter.fetch_add(1, Ordering::SeqCst);
            async { Ok::<_, ToolError>(ApprovalOutcome::Rejected) }
        });
        let person = Person::accepting(json!({"approve": true, "remember": true}));
        let server = McpServer::for_agent(registry.clone(), "editor");
        let client = connect(server, era, person.clone()).await;
        for path in ["a", "b", "c"] {
            let result = client
                .call_tool(call("write", json!({"path": path})))
                .await
                .unwrap();
            assert_eq!(result.is_error, Some(false), "{era:?}: {result:?}");
        }
        assert_eq!(ran.lock().unwrap().len(), 3);
        assert_eq!(
            person.asked().len(),
            1,
            "{era:?}: remembered after the first"
        );
        assert!(person.asked()[0].1["properties"].get("remember").is_some());
        assert_eq!(service_asked.load(Ordering::SeqCst), 0);
        let grants = registry.grants();
        assert_eq!(grants.len(), 1, "{era:?}: {grants:?}");
        assert_eq!(grants[0].key.tool, "write");
        assert_eq!(
            grants[0].key.agent.as_ref().map(|a| a.as_str()),
            Some("editor")
        );
        client.cancel().await.unwrap();
    }
}

#[tokio::test]
async fn remembering_on_a_server_without_an_agent_keeps_nothing() {
    for era in ERAS {
        let (registry, ran) = asking_registry();
        // A client that says "remember" even though the form did not offer it.
        let person = Person::accepting(json!({"approve": true, "remember": true}));
        let client = connect(McpServer::new(registry.clone()), era, person.clone()).await;
        for _ in 0..2 {
            let result = client
                .call_tool(call("write", json!({"path": "a"})))
                .await
                .unwrap();
            assert_eq!(result.is_error, Some(false), "{era:?}: {result:?}");
        }
        assert_eq!(person.asked().len(), 2, "{era:?}: asked every time");
        assert!(
            registry.grants().is_empty(),
            "{era:?}: a grant for every agent was kept"
        );
        assert_eq!(ran.lock().unwrap().len(), 2);
        client.cancel().await.unwrap();
    }
}

#[tokio::test]
async fn a_legacy_client_that_never_answers_is_bounded_and_a_cancelled_call_never_runs() {
    let (registry, ran) = asking_registry();
    let person = Person::new(|_| None);
    let server =
        McpServer::new(registry).approvals(ServerApprovals::new().timeout(Duration::from_secs(1)));
    let client = connect(server, Era::Legacy, person.clone()).await;
    let result = client
        .call_tool(call("write", json!({"path": "a"})))
        .await
        .unwrap();
    assert_eq!(result.is_error, Some(true));
    assert!(
        text_of(&result).contains("the client did not answer within 1 s"),
        "{result:?}"
    );
    let meta = serde_json::to_value(&result.meta).unwrap();
    assert_eq!(meta["dev.dsh-tools/error"]["code"], "APPROVAL_TIMEOUT");
    assert!(ran.lock().unwrap().is_empty());

    // The client gives up on the call while its user is being asked: the call ends unrun,
    // even when the person then says yes.
    for era in ERAS {
        let (registry, ran) = asking_registry();
        let mut person = Person::accepting(approve());
        let gate = Arc::new(tokio::sync::Semaphore::new(0));
        person.gate = Some(Arc::clone(&gate));
        let client = Arc::new(connect(McpServer::new(registry), era, person.clone()).await);
        // The client's own `call_tool` (it drives 2026-07-28 rounds through the person).
        let caller = Arc::clone(&client);
        let pending =
            tokio::spawn(
                async move { caller.call_tool(call("write", json!({"path": "a"}))).await },
            );
        crate::support::eventually("the person is asked", || person.asked().len() == 1).await;
        pending.abort();
        gate.add_permits(1);
        // The connection goes on; an allowed call after it runs (and so the cancelled one had
        // its chance to run first).
        let echoed = client.call_tool(call("echo", json!({}))).await.unwrap();
        assert_eq!(text_of(&echoed), "echoed");
        tokio::time::sleep(Duration::from_millis(100)).await;
        assert!(
            ran.lock().unwrap().is_empty(),
            "{era:?}: the cancelled call ran"
        );
        drop(client);
    }
}

/// A 2026-07-28 call's first round, by hand: the `input_required` result's state.
async fn first_round(client: &Client, arguments: Value) -> String {
    match client
        .call_tool_once(call("write", arguments))
        .await
        .unwrap()
    {
        CallToolResponse::InputRequired(asked) => {
            let requests = serde_json::to_value(&asked).unwrap();
            assert_eq!(requests["resultType"], "input_required", "{requests}");
            assert_eq!(
                requests["inputRequests"][APPROVAL_INPUT_KEY]["method"], "elicitation/create",
                "{requests}"
            );
            asked.request_state.expect("a requestState")
        }
        other => panic!("not asked: {other:?}"),
    }
}

fn retry(
    arguments: Value,
    state: &str,
    answer: Value,
) -> dsh_tools::mcp::rmcp::model::CallToolRequestParams {
    let mut responses = InputResponses::new();
    responses.insert(APPROVAL_INPUT_KEY.to_owned(), answer);
    let mut params = call("write", arguments);
    params.request_state = Some(state.to_owned());
    params.input_responses = Some(responses);
    params
}

fn accepted() -> Value {
    json!({"action": "accept", "content": {"approve": true}})
}

async fn refused(
    client: &Client,
    params: dsh_tools::mcp::rmcp::model::CallToolRequestParams,
) -> String {
    match client.call_tool_once(params).await {
        Err(ServiceError::McpError(e)) => {
            assert_eq!(e.code, ErrorCode::INVALID_PARAMS, "{e:?}");
            e.message.into_owned()
        }
        other => panic!("not refused: {other:?}"),
    }
}

#[tokio::test]
async fn a_request_state_answers_its_own_call_once_and_nothing_else() {
    let (registry, ran) = asking_registry();
    let server = McpServer::new(registry.clone());
    let client = connect(server.clone(), Era::Modern, Person::accepting(approve())).await;
    let state = first_round(&client, json!({"path": "a"})).await;
    assert!(
        ran.lock().unwrap().is_empty(),
        "the first round ran the tool"
    );

    // Tampered: one character changed.
    let mut tampered = state.clone().into_bytes();
    let i = tampered.len() / 2;
    tampered[i] = if tampered[i] == b'A' { b'B' } else { b'A' };
    let message = refused(
        &client,
        retry(
            json!({"path": "a"}),
            &String::from_utf8(tampered).unwrap(),
            accepted(),
        ),
    )
    .await;
    assert!(
        message.contains("requestState is not valid for this call"),
        "{message}"
    );
    // For other arguments, or another tool.
    let message = refused(&client, retry(json!({"path": "b"}), &state, accepted())).await;
    assert!(
        message.contains("requestState is not valid for this call"),
        "{message}"
    );
    let mut other_tool = retry(json!({"path": "a"}), &state, accepted());
    other_tool.name = "echo".into();
    refused(&client, other_tool).await;
    // Forged from nothing, and absurdly long.
    refused(&client, retry(json!({"path": "a"}), "forged", accepted())).await;
    let message = refused(
        &client,
        retry(json!({"path": "a"}), &"x".repeat(100_000), accepted()),
    )
    .await;
    assert!(
        message.contains("longer than any this server issues"),
        "{message}"
    );
    // Responses without a state; a state without the approval's response.
    let mut no_state = retry(json!({"path": "a"}), &state, accepted());
    no_state.request_state = None;
    refused(&client, no_state).await;
    assert!(ran.lock().unwrap().is_empty());

    // The real answer runs the call once.
    let done = client
        .call_tool_once(retry(json!({"path": "a"}), &state, accepted()))
        .await
        .unwrap();
    let CallToolResponse::Complete(done) = done else {
        panic!("{done:?}")
    };
    assert_eq!(text_of(&done), "wrote a");
    // Replayed: refused, the tool not run again.
    let message = refused(&client, retry(json!({"path": "a"}), &state, accepted())).await;
    assert!(message.contains("answered already"), "{message}");
    assert_eq!(ran.lock().unwrap().len(), 1);

    // A state from another server (another key), or from another view of the same key.
    let key = b"0123456789abcdef0123456789abcdef".to_vec();
    let keyed =
        |server: McpServer| server.approvals(ServerApprovals::new().key(key.clone()).unwrap());
    let scoped = connect(
        keyed(McpServer::for_agent(registry.clone(), "a")),
        Era::Modern,
        Person::accepting(approve()),
    )
    .await;
    let scoped_state = first_round(&scoped, json!({"path": "a"})).await;
    let global = connect(
        keyed(McpServer::new(registry.clone())),
        Era::Modern,
        Person::accepting(approve()),
    )
    .await;
    refused(
        &global,
        retry(json!({"path": "a"}), &scoped_state, accepted()),
    )
    .await;
    refused(
        &client,
        retry(json!({"path": "a"}), &scoped_state, accepted()),
    )
    .await;
    // The same key and view (another replica): it opens.
    let replica = connect(
        keyed(McpServer::for_agent(registry.clone(), "a")),
        Era::Modern,
        Person::accepting(approve()),
    )
    .await;
    let done = replica
        .call_tool_once(retry(json!({"path": "a"}), &scoped_state, accepted()))
        .await
        .unwrap();
    assert!(
        matches!(done, CallToolResponse::Complete(ref r) if r.is_error == Some(false)),
        "{done:?}"
    );
    assert_eq!(ran.lock().unwrap().len(), 2);
    for c in [client, scoped, global, replica] {
        c.cancel().await.unwrap();
    }
}

#[tokio::test]
async fn a_retry_missing_its_answer_or_carrying_a_malformed_one_is_refused() {
    let (registry, ran) = asking_registry();
    let client = connect(
        McpServer::new(registry),
        Era::Modern,
        Person::accepting(approve()),
    )
    .await;
    let state = first_round(&client, json!({"path": "a"})).await;
    let mut missing = retry(json!({"path": "a"}), &state, accepted());
    missing.input_responses = Some(InputResponses::new());
    let message = refused(&client, missing).await;
    assert!(
        message.contains("carries no \"approval\" answer"),
        "{message}"
    );
    let state = first_round(&client, json!({"path": "a"})).await;
    let message = refused(
        &client,
        retry(json!({"path": "a"}), &state, json!({"action": 7})),
    )
    .await;
    assert!(message.contains("not an elicitation result"), "{message}");
    assert!(ran.lock().unwrap().is_empty());
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn an_expired_request_state_is_refused() {
    let (registry, ran) = asking_registry();
    let server =
        McpServer::new(registry).approvals(ServerApprovals::new().timeout(Duration::from_secs(1)));
    let client = connect(server, Era::Modern, Person::accepting(approve())).await;
    let state = first_round(&client, json!({"path": "a"})).await;
    tokio::time::sleep(Duration::from_millis(2_100)).await;
    let message = refused(&client, retry(json!({"path": "a"}), &state, accepted())).await;
    assert!(message.contains("expired"), "{message}");
    assert!(ran.lock().unwrap().is_empty());
    client.cancel().await.unwrap();
}

#[test]
fn a_short_key_is_refused_with_a_clear_error() {
    let e = ServerApprovals::new().key(b"short".to_vec()).unwrap_err();
    assert!(
        e.to_string()
            .starts_with("MCP approvals: the request-state key"),
        "{e}"
    );
}

#[tokio::test]
async fn arguments_are_shown_cut_and_then_not_offered_for_editing() {
    let (registry, _ran) = asking_registry();
    let person = Person::new(|_| Some(ElicitResult::new(ElicitationAction::Decline)));
    let client = connect(McpServer::new(registry), Era::Legacy, person.clone()).await;
    let long = "x".repeat(5_000);
    let _ = client
        .call_tool(call("write", json!({"path": long})))
        .await
        .unwrap();
    let (message, schema) = &person.asked()[0];
    assert!(message.chars().count() < 2_300, "{}", message.len());
    assert!(message.contains('…'));
    assert!(schema["properties"].get("arguments").is_none(), "{schema}");
    client.cancel().await.unwrap();
}

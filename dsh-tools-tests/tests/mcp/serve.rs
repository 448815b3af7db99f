//! MCP serving over in-process pipes, in both protocol eras: listing, results per era, error
//! mapping, cancellation, list_changed, progress, approvals put to the client's user.

use crate::support;

use dsh_tools::mcp::McpServer;
use dsh_tools::mcp::rmcp::model::{
    ErrorCode, NumberOrString, ProgressToken, RequestMetaObject, SubscriptionFilter,
};
use dsh_tools::mcp::rmcp::service::ServiceError;
use dsh_tools::{OutputDecl, Registry, ToolDefinition};
use serde_json::json;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use support::{ERAS, Era, Probe, call, connect, eventually, registry, texts};

#[tokio::test]
async fn lists_every_tool_in_registry_order_with_schemas_titles_and_hints() {
    for era in ERAS {
        let probe = Arc::new(Probe::default());
        let registry = registry(&probe);
        let (client, _) = connect(McpServer::new(registry.clone()), era).await;
        let tools = client.peer().list_all_tools().await.unwrap();
        let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
        let expected: Vec<String> = registry
            .schemas(None)
            .unwrap()
            .into_iter()
            .map(|s| s.name)
            .collect();
        assert_eq!(names, expected, "{era:?}");
        let add = &tools[0];
        assert_eq!(add.title.as_deref(), Some("Add"));
        assert_eq!(
            serde_json::Value::Object((*add.input_schema).clone()),
            registry.schemas(None).unwrap()[0].parameters
        );
        let annotations = add.annotations.as_ref().expect("hints become annotations");
        assert_eq!(annotations.read_only_hint, Some(true));
        assert_eq!(annotations.open_world_hint, Some(false));
        assert_eq!(
            annotations.destructive_hint, None,
            "only the hints the tool set"
        );
        // An object output schema is listed in both eras; `add`'s integer one only in 2026.
        assert!(tools[1].output_schema.is_some());
        assert_eq!(add.output_schema.is_some(), era == Era::Modern, "{era:?}");
        let info = client.peer().peer_info().unwrap();
        assert_eq!(
            info.server_info.as_ref().map(|i| i.name.as_str()),
            Some("dsh-tools"),
            "{era:?}"
        );
        client.cancel().await.unwrap();
    }
}

#[tokio::test]
async fn a_parameters_schema_without_type_is_listed_as_an_object_and_other_roots_are_not() {
    let registry = Registry::new();
    let untyped = ToolDefinition::new(
        "untyped",
        "u",
        json!({}),
        OutputDecl::text(),
        |_, _| async { Ok(json!("")) },
    );
    let string = ToolDefinition::new(
        "string_root",
        "s",
        json!({"type": "string"}),
        OutputDecl::text(),
        |_, _| async { Ok(json!("")) },
    );
    registry.register(untyped).unwrap().keep();
    registry.register(string).unwrap().keep();
    let (client, _) = connect(McpServer::new(registry), Era::Legacy).await;
    let tools = client.peer().list_all_tools().await.unwrap();
    assert_eq!(tools.len(), 1);
    assert_eq!(tools[0].name, "untyped");
    assert_eq!(tools[0].input_schema.get("type"), Some(&json!("object")));
}

/// 2026-07-28 results name the server in `_meta["io.modelcontextprotocol/serverInfo"]`;
/// 2025-11-25 results do not (the handshake already did).
#[tokio::test]
async fn results_of_the_2026_era_carry_the_server_info() {
    use dsh_tools::mcp::SERVER_INFO_META;
    for era in ERAS {
        let probe = Arc::new(Probe::default());
        let server = McpServer::new(registry(&probe)).server_info("notes-server", "1.2.3");
        let (client, _) = connect(server, era).await;
        let call = client
            .peer()
            .call_tool(call("echo", json!({"text": "hi"})))
            .await
            .unwrap();
        let list = client.peer().list_tools(None).await.unwrap();
        let of = |meta: Option<&dsh_tools::mcp::rmcp::model::MetaObject>| {
            meta.and_then(|m| m.0.get(SERVER_INFO_META)).cloned()
        };
        let expected = match era {
            Era::Legacy => None,
            Era::Modern => Some(json!({"name": "notes-server", "version": "1.2.3"})),
        };
        assert_eq!(of(call.meta.as_ref()), expected, "{era:?}: tools/call");
        assert_eq!(of(list.meta.as_ref()), expected, "{era:?}: tools/list");
        client.cancel().await.unwrap();
    }
}

#[tokio::test]
async fn structured_content_follows_the_era() {
    for era in ERAS {
        let probe = Arc::new(Probe::default());
        let (client, _) = connect(McpServer::new(registry(&probe)), era).await;
        let echo = client
            .peer()
            .call_tool(call("echo", json!({"text": "hi"})))
            .await
            .unwrap();
        assert_eq!(echo.is_error, Some(false));
        assert_eq!(echo.structured_content, Some(json!({"text": "hi"})));
        assert_eq!(
            texts(&echo),
            [r#"{"text":"hi"}"#],
            "{era:?}: no duplicate block"
        );
        let add = client
            .peer()
            .call_tool(call("add", json!({"a": 2, "b": 3})))
            .await
            .unwrap();
        assert_eq!(
            texts(&add),
            ["5"],
            "{era:?}: one text block, never a duplicate"
        );
        match era {
            Era::Legacy => assert_eq!(add.structured_content, None),
            Era::Modern => assert_eq!(add.structured_content, Some(json!(5))),
        }
        client.cancel().await.unwrap();
    }
}

#[tokio::test]
async fn failures_are_tool_errors_with_their_code_and_unknown_tools_are_protocol_errors() {
    for era in ERAS {
        let probe = Arc::new(Probe::default());
        let (client, _) = connect(McpServer::new(registry(&probe)), era).await;
        let bad = client
            .peer()
            .call_tool(call("add", json!({"a": "2"})))
            .await
            .unwrap();
        assert_eq!(bad.is_error, Some(true));
        assert_eq!(
            texts(&bad),
            [r#"Error: invalid arguments: missing required property "b"; "a" must be an integer"#]
        );
        let meta = bad.meta.as_ref().expect("error meta").0.clone();
        assert_eq!(
            meta["dev.dsh-tools/error"],
            json!({"name": "ToolArgsError", "code": "INVALID_ARGS"})
        );
        assert_eq!(bad.structured_content, None);
        let fail = client
            .peer()
            .call_tool(call("fail", json!({})))
            .await
            .unwrap();
        assert_eq!(texts(&fail), ["Error: disk full"]);
        assert_eq!(
            fail.meta.unwrap().0["dev.dsh-tools/error"]["code"],
            json!("ENOSPC")
        );
        let unknown = client
            .peer()
            .call_tool(call("nope", json!({})))
            .await
            .unwrap_err();
        match unknown {
            ServiceError::McpError(e) => {
                assert_eq!(e.code, ErrorCode::INVALID_PARAMS);
                assert_eq!(e.message, "Unknown tool: nope");
            }
            other => panic!("{era:?}: expected a JSON-RPC error, got {other:?}"),
        }
        client.cancel().await.unwrap();
    }
}

#[tokio::test]
async fn content_blocks_mcp_knows_pass_and_others_become_text() {
    let probe = Arc::new(Probe::default());
    let (client, _) = connect(McpServer::new(registry(&probe)), Era::Legacy).await;
    let result = client
        .peer()
        .call_tool(call("blocks", json!({})))
        .await
        .unwrap();
    let blocks = serde_json::to_value(&result.content).unwrap();
    assert_eq!(blocks[0]["type"], "image");
    assert_eq!(blocks[0]["data"], "aGk=");
    assert_eq!(blocks[1]["type"], "text");
    assert_eq!(
        blocks[1]["text"],
        r#"{"type":"reasoning","text":"because"}"#
    );
}

#[tokio::test]
async fn a_client_that_abandons_a_call_cancels_the_body_which_still_settles() {
    for era in ERAS {
        let probe = Arc::new(Probe::default());
        let (client, _) = connect(McpServer::new(registry(&probe)), era).await;
        let peer = client.peer().clone();
        let pending = tokio::spawn(async move { peer.call_tool(call("slow", json!({}))).await });
        eventually("the body started", || {
            probe.started.load(Ordering::SeqCst) == 1
        })
        .await;
        pending.abort(); // dropping the call sends notifications/cancelled
        eventually("the body saw its signal", || {
            probe.cancelled.load(Ordering::SeqCst) == 1
        })
        .await;
        eventually("the body settled", || {
            probe.settled.load(Ordering::SeqCst) == 1
        })
        .await;
        // The connection is still usable.
        let ok = client
            .peer()
            .call_tool(call("add", json!({"a": 1, "b": 1})))
            .await
            .unwrap();
        assert_eq!(texts(&ok), ["2"], "{era:?}");
        client.cancel().await.unwrap();
    }
}

#[tokio::test]
async fn a_client_that_disconnects_mid_call_cancels_the_body_and_nothing_leaks() {
    let probe = Arc::new(Probe::default());
    let registry = registry(&probe);
    let server = McpServer::new(registry.clone());
    let (client, _) = connect(server.clone(), Era::Legacy).await;
    let peer = client.peer().clone();
    tokio::spawn(async move { peer.call_tool(call("slow", json!({}))).await });
    eventually("the body started", || {
        probe.started.load(Ordering::SeqCst) == 1
    })
    .await;
    drop(client);
    eventually("the body settled", || {
        probe.settled.load(Ordering::SeqCst) == 1
    })
    .await;
    assert_eq!(probe.cancelled.load(Ordering::SeqCst), 1);
    // The registry is untouched and usable without the server.
    drop(server);
    let input = dsh_tools::ToolExecutionInput::new(
        "c1",
        "add",
        json!({"a": 1, "b": 2}),
        dsh_tools::CancellationToken::new(),
    );
    assert_eq!(registry.execute(input).await.text(), "3");
}

#[tokio::test]
async fn progress_reaches_the_client_in_order_before_the_result() {
    for era in ERAS {
        let probe = Arc::new(Probe::default());
        let (client, recorder) = connect(McpServer::new(registry(&probe)), era).await;
        let mut request = call("progress", json!({}));
        request.meta = Some(RequestMetaObject::with_progress_token(ProgressToken(
            NumberOrString::Number(7),
        )));
        let result = client.peer().call_tool(request).await.unwrap();
        assert_eq!(texts(&result), ["finished"]);
        eventually("three progress notifications", || {
            recorder.progress.lock().unwrap().len() == 3
        })
        .await;
        let seen = recorder.progress.lock().unwrap().clone();
        assert_eq!(
            seen,
            [
                (1.0, Some(3.0), Some("step 1".to_owned())),
                (2.0, Some(3.0), Some("step 2".to_owned())),
                (3.0, Some(3.0), Some("step 3".to_owned())),
            ],
            "{era:?}"
        );
        // Without a progress token, the reports go nowhere and the call is unchanged.
        let quiet = client
            .peer()
            .call_tool(call("progress", json!({})))
            .await
            .unwrap();
        assert_eq!(texts(&quiet), ["finished"]);
        client.cancel().await.unwrap();
    }
}

fn extra(name: &str) -> ToolDefinition {
    ToolDefinition::new(
        name,
        "added later",
        json!({"type": "object"}),
        OutputDecl::text(),
        |_, _| async { Ok(json!("")) },
    )
}

#[tokio::test]
async fn registry_changes_are_announced_to_legacy_sessions() {
    let probe = Arc::new(Probe::default());
    let registry = registry(&probe);
    let (client, recorder) = connect(McpServer::new(registry.clone()), Era::Legacy).await;
    // The session is registered once `notifications/initialized` has been handled.
    client.peer().list_all_tools().await.unwrap();
    let added = registry.register(extra("later")).unwrap();
    eventually("list_changed after an addition", || {
        recorder.list_changed.load(Ordering::SeqCst) >= 1
    })
    .await;
    let tools = client.peer().list_all_tools().await.unwrap();
    assert!(tools.iter().any(|t| t.name == "later"));
    let before = recorder.list_changed.load(Ordering::SeqCst);
    added.dispose();
    eventually("list_changed after a removal", || {
        recorder.list_changed.load(Ordering::SeqCst) > before
    })
    .await;
    let tools = client.peer().list_all_tools().await.unwrap();
    assert!(!tools.iter().any(|t| t.name == "later"));
}

#[tokio::test]
async fn registry_changes_are_announced_inside_2026_subscriptions() {
    let probe = Arc::new(Probe::default());
    let registry = registry(&probe);
    let (client, _) = connect(McpServer::new(registry.clone()), Era::Modern).await;
    let mut subscription = client
        .peer()
        .listen(SubscriptionFilter::builder().tools_list_changed().build())
        .await
        .unwrap();
    assert_eq!(subscription.acknowledged().tools_list_changed, Some(true));
    registry.register(extra("later")).unwrap().keep();
    let notification =
        tokio::time::timeout(std::time::Duration::from_secs(10), subscription.next())
            .await
            .expect("a notification arrives")
            .unwrap()
            .expect("the subscription is open");
    assert!(
        matches!(
            notification,
            dsh_tools::mcp::rmcp::model::ServerNotification::ToolListChangedNotification(_)
        ),
        "{notification:?}"
    );
}

#[tokio::test]
async fn a_scope_server_lists_the_scope_view_and_calls_as_the_agent() {
    let probe = Arc::new(Probe::default());
    let registry = registry(&probe);
    let scope = registry.scope("agent-1");
    scope
        .restrict(dsh_tools::Restriction::allow(["add", "echo"]))
        .unwrap()
        .keep();
    scope.register(extra("own")).unwrap().keep();
    let (client, _) = connect(
        McpServer::for_agent(registry.clone(), "agent-1"),
        Era::Legacy,
    )
    .await;
    let names: Vec<String> = client
        .peer()
        .list_all_tools()
        .await
        .unwrap()
        .into_iter()
        .map(|t| t.name.to_string())
        .collect();
    assert_eq!(names, ["add", "echo", "own"]);
    assert!(
        client
            .peer()
            .call_tool(call("fail", json!({})))
            .await
            .is_err()
    );
}

#[tokio::test]
async fn code_mode_serves_run_code_with_the_sdk_in_its_description() {
    use dsh_tools::registry::PresentationMode;
    use dsh_tools::testing::{FakeOutcome, FakeRuntime};
    for era in ERAS {
        let probe = Arc::new(Probe::default());
        let registry = registry(&probe);
        registry.set_presentation_mode(PresentationMode::Code);
        registry.set_code_runtime(FakeRuntime::new(|_, run| async move {
            match run
                .call("tools", "add", serde_json::json!({"a": 2, "b": 3}))
                .await
            {
                Ok(v) => FakeOutcome::Return(Some(v)),
                Err(e) => FakeOutcome::Throw(e),
            }
        }));
        let (client, _) = connect(McpServer::new(registry.clone()), era).await;
        let tools = client.peer().list_all_tools().await.unwrap();
        let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
        assert_eq!(names, ["run_code"], "{era:?}");
        let description = tools[0].description.as_deref().unwrap();
        assert!(
            description.starts_with(dsh_tools::code::RUN_CODE_DESCRIPTION),
            "{era:?}"
        );
        assert!(
            description.ends_with(&registry.code_prompt(None).unwrap()),
            "the SDK section follows: {description}"
        );
        let result = client
            .peer()
            .call_tool(call(
                "run_code",
                serde_json::json!({"code": "return await tools.add({a: 2, b: 3})", "description": "Add"}),
            ))
            .await
            .unwrap();
        assert_eq!(texts(&result), ["5"], "{era:?}");
        let direct = client
            .peer()
            .call_tool(call("add", serde_json::json!({"a": 1, "b": 1})))
            .await;
        let refused = match direct {
            Ok(r) => r.is_error == Some(true),
            Err(_) => true,
        };
        assert!(
            refused,
            "a direct call of a bound tool is refused under code"
        );
        client.cancel().await.unwrap();
    }
}

//! Progressive discovery over MCP (issue 34): deferred tools are left out of `tools/list`
//! behind `tool_search`; a 2025-11-25 session's search lists what it found from then on and
//! tells that session alone; a 2026-07-28 request, whose list may not vary by connection, gets
//! the found tools' input schemas in the result; the listing's cache hints.

use crate::support::{Era, Recorder, call, eventually};
use dsh_tools::definition::Namespace;
use dsh_tools::mcp::McpServer;
use dsh_tools::mcp::rmcp::RoleClient;
use dsh_tools::mcp::rmcp::model::CacheScope;
use dsh_tools::mcp::rmcp::service::{ClientServiceExt, RunningService};
use dsh_tools::{OutputDecl, Registry, ToolDefinition};
use serde_json::json;
use std::sync::atomic::Ordering;
use std::time::Duration;

fn tool(name: &str, description: &str) -> ToolDefinition {
    let answer = name.to_owned();
    ToolDefinition::new(
        name,
        description,
        json!({"type": "object", "properties": {"repo": {"type": "string"}}}),
        OutputDecl::text(),
        move |_, _| {
            let answer = answer.clone();
            async move { Ok(json!(answer)) }
        },
    )
}

fn catalog() -> Registry {
    let registry = Registry::new();
    registry
        .register(tool("ping", "Check that the service answers"))
        .unwrap()
        .keep();
    let github = Namespace::new("github", "Issues and pull requests on GitHub");
    for (name, description) in [
        ("create_issue", "Open a new issue in a repository"),
        ("merge_pull_request", "Merge a pull request"),
    ] {
        let t = tool(name, description)
            .namespace(github.clone())
            .defer_loading(true);
        registry.register(t).unwrap().keep();
    }
    registry
}

/// A connection through `serve_io`, which gives each connection a session of its own.
async fn connect(server: &McpServer, era: Era) -> (RunningService<RoleClient, Recorder>, Recorder) {
    let (ours, theirs) = tokio::io::duplex(1 << 20);
    let (read, write) = tokio::io::split(ours);
    tokio::spawn(server.clone().serve_io(read, write));
    let recorder = Recorder::default();
    let client = recorder
        .clone()
        .serve_with_lifecycle(theirs, era.lifecycle())
        .await
        .expect("client connects");
    (client, recorder)
}

async fn names(client: &RunningService<RoleClient, Recorder>) -> Vec<String> {
    let tools = client.peer().list_all_tools().await.unwrap();
    tools.into_iter().map(|t| t.name.to_string()).collect()
}

#[tokio::test]
async fn without_the_option_every_tool_is_listed_and_no_search() {
    let server = McpServer::new(catalog());
    for era in [Era::Legacy, Era::Modern] {
        let (client, _) = connect(&server, era).await;
        assert_eq!(
            names(&client).await,
            ["ping", "create_issue", "merge_pull_request"]
        );
    }
}

#[tokio::test]
async fn a_legacy_session_lists_what_its_search_found_and_is_told_alone() {
    let server = McpServer::new(catalog()).progressive_discovery(true);
    let (client, recorder) = connect(&server, Era::Legacy).await;
    let (other, other_recorder) = connect(&server, Era::Legacy).await;
    assert_eq!(names(&client).await, ["ping", "tool_search"]);

    let found = client
        .peer()
        .call_tool(call(
            "tool_search",
            json!({"query": "open an issue", "limit": 1}),
        ))
        .await
        .unwrap();
    assert_eq!(found.is_error, Some(false), "{found:?}");
    eventually("list_changed after the search", || {
        recorder.list_changed.load(Ordering::SeqCst) == 1
    })
    .await;
    assert_eq!(
        names(&client).await,
        ["ping", "create_issue", "tool_search"]
    );
    // The other session loaded nothing and heard nothing.
    assert_eq!(names(&other).await, ["ping", "tool_search"]);
    assert_eq!(other_recorder.list_changed.load(Ordering::SeqCst), 0);

    // The same search again loads nothing new: no second notification.
    client
        .peer()
        .call_tool(call(
            "tool_search",
            json!({"query": "open an issue", "limit": 1}),
        ))
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert_eq!(recorder.list_changed.load(Ordering::SeqCst), 1);

    // A deferred tool is callable before anything loaded it.
    let merged = other
        .peer()
        .call_tool(call("merge_pull_request", json!({})))
        .await
        .unwrap();
    assert_eq!(merged.is_error, Some(false));
}

#[tokio::test]
async fn a_modern_request_gets_the_schemas_of_what_it_found_and_the_list_stays() {
    let server = McpServer::new(catalog())
        .progressive_discovery(true)
        .list_ttl(Duration::from_secs(60));
    let (client, _) = connect(&server, Era::Modern).await;
    let list = client.peer().list_tools(None).await.unwrap();
    let listed: Vec<&str> = list.tools.iter().map(|t| t.name.as_ref()).collect();
    assert_eq!(listed, ["ping", "tool_search"]);
    assert_eq!(list.cache_scope, Some(CacheScope::Public));
    assert_eq!(list.ttl_ms, Some(60_000));

    let found = client
        .peer()
        .call_tool(call(
            "tool_search",
            json!({"query": "merge a pull request", "limit": 1}),
        ))
        .await
        .unwrap();
    let entry = &found.structured_content.as_ref().unwrap()["tools"][0];
    assert_eq!(entry["name"], "merge_pull_request");
    assert_eq!(
        entry["inputSchema"],
        json!({"type": "object", "properties": {"repo": {"type": "string"}}})
    );
    let text: Vec<String> = found
        .content
        .iter()
        .filter_map(|b| b.as_text().map(|t| t.text.clone()))
        .collect();
    assert!(
        text.iter()
            .any(|t| t.contains("- merge_pull_request: {\"type\":\"object\"")),
        "{text:?}"
    );
    assert_eq!(names(&client).await, ["ping", "tool_search"]);
    let merged = client
        .peer()
        .call_tool(call("merge_pull_request", json!({})))
        .await
        .unwrap();
    assert_eq!(merged.is_error, Some(false));
}

#[tokio::test]
async fn a_list_that_depends_on_the_caller_is_private() {
    let registry = catalog();
    let rules = registry.scope_rules(dsh_tools::pipeline::ScopeRules::new().require_caller(true));
    let server = McpServer::new(registry);
    let (client, _) = connect(&server, Era::Modern).await;
    // Anonymous (no authorization here): the rules let it call nothing, so it is listed nothing.
    let list = client.peer().list_tools(None).await.unwrap();
    assert!(list.tools.is_empty(), "{:?}", list.tools);
    assert_eq!(list.cache_scope, Some(CacheScope::Private));
    assert_eq!(list.ttl_ms, Some(0));
    rules.dispose();
    let list = client.peer().list_tools(None).await.unwrap();
    assert_eq!(list.tools.len(), 3);
    assert_eq!(list.cache_scope, Some(CacheScope::Public));
}

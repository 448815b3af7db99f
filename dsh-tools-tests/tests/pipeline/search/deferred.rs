//! Deferred tools: left out of what the model is shown until `tool_search` loads them,
//! registered, guarded and callable like any other.

use super::{call, presented, tool};
use dsh_tools::definition::Namespace;
use dsh_tools::registry::{DeferRule, LoadedTools, TOOL_SEARCH};
use dsh_tools::testing::FakeRuntime;
use dsh_tools::*;
use serde_json::json;

fn catalog() -> Registry {
    let registry = Registry::new();
    registry
        .register(tool("read_file", "Read a file from disk"))
        .unwrap()
        .keep();
    let github = Namespace::new("github", "Issues and pull requests on GitHub");
    for (name, description) in [
        ("create_issue", "Open a new issue in a repository"),
        ("create_pull_request", "Open a pull request from a branch"),
        ("merge_pull_request", "Merge an open pull request"),
    ] {
        registry
            .register(tool(name, description).namespace(github.clone()))
            .unwrap()
            .keep();
    }
    registry.defer_loading(DeferRule::namespace("github"));
    registry
}

#[test]
fn without_deferral_nothing_changes() {
    let registry = Registry::new();
    registry.register(tool("a", "first")).unwrap().keep();
    registry.register(tool("b", "second")).unwrap().keep();
    let schemas = registry.schemas(None).unwrap();
    assert_eq!(
        registry
            .presented_schemas(None, &LoadedTools::new())
            .unwrap(),
        schemas
    );
    assert_eq!(presented(&registry, None, &LoadedTools::new()), ["a", "b"]);
    // `tool_search` is nobody's tool until something defers.
    assert!(registry.get(TOOL_SEARCH, None).is_none());
}

#[tokio::test]
async fn a_search_loads_what_it_finds() {
    let registry = catalog();
    let mut loaded = LoadedTools::new();
    assert_eq!(
        presented(&registry, None, &loaded),
        ["read_file", TOOL_SEARCH]
    );
    let result = call(
        &registry,
        None,
        TOOL_SEARCH,
        json!({"query": "open a pull request", "limit": 2}),
    )
    .await;
    assert!(!result.is_error(), "{}", result.text());
    let names: Vec<&str> = result.value().unwrap()["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(names[0], "create_pull_request");
    assert_eq!(names.len(), 2);
    assert!(
        result
            .text()
            .starts_with("Loaded 2 tools; call them directly:"),
        "{}",
        result.text()
    );
    assert_eq!(result.value().unwrap()["tools"][0]["namespace"], "github");
    // Only a tool_search result loads anything.
    assert_eq!(loaded.absorb("read_file", &result), 0);
    assert_eq!(loaded.absorb(TOOL_SEARCH, &result), 2);
    assert_eq!(loaded.absorb(TOOL_SEARCH, &result), 0);
    let shown = presented(&registry, None, &loaded);
    assert_eq!(shown[0], "read_file");
    assert!(shown.contains(&"create_pull_request".to_owned()));
    assert_eq!(shown.last().unwrap(), TOOL_SEARCH);
    assert_eq!(shown.len(), 4);
    // A search only returns deferred tools: read_file is already shown.
    let result = call(&registry, None, TOOL_SEARCH, json!({"query": "read_file"})).await;
    assert!(
        result.value().unwrap()["tools"]
            .as_array()
            .unwrap()
            .iter()
            .all(|t| t["name"] != "read_file")
    );
}

#[tokio::test]
async fn a_deferred_tool_is_callable_before_it_is_loaded() {
    // As with Anthropic's and OpenAI's deferral: the tool is registered; only its schema waits.
    let registry = catalog();
    let result = call(&registry, None, "merge_pull_request", json!({})).await;
    assert_eq!(result.text(), "merge_pull_request");
}

#[tokio::test]
async fn bad_arguments_are_refused_with_the_reason() {
    let registry = catalog();
    for (arguments, message) in [
        (json!({}), "\"query\" must be a string"),
        (json!({"query": 3}), "\"query\" must be a string"),
        (
            json!({"query": "x", "limit": 0}),
            "\"limit\" must be an integer from 1 to 20",
        ),
        (
            json!({"query": "x", "limit": 21}),
            "\"limit\" must be an integer from 1 to 20",
        ),
        (
            json!({"query": "x", "limit": 2.5}),
            "\"limit\" must be an integer from 1 to 20",
        ),
        (
            json!({"query": "x", "other": 1}),
            "unknown argument \"other\"",
        ),
    ] {
        let result = call(&registry, None, TOOL_SEARCH, arguments.clone()).await;
        assert_eq!(result.code(), Some("INVALID_ARGS"), "{arguments}");
        assert!(
            result.text().contains(message),
            "{arguments}: {}",
            result.text()
        );
    }
}

#[test]
fn rules_and_definitions_decide_together() {
    let registry = Registry::new();
    registry.register(tool("a", "x")).unwrap().keep();
    registry
        .register(tool("b", "x").defer_loading(false))
        .unwrap()
        .keep();
    registry
        .register(tool("c", "x").defer_loading(true))
        .unwrap()
        .keep();
    let empty = LoadedTools::new();
    assert_eq!(presented(&registry, None, &empty), ["a", "b", TOOL_SEARCH]);
    // A scope's rule defers in its view (and its children's) only.
    let scope = registry.scope("coder");
    scope.defer_loading(DeferRule::all());
    registry.child_scope("helper", "coder");
    assert_eq!(
        presented(&registry, Some("coder"), &empty),
        ["b", TOOL_SEARCH]
    );
    assert_eq!(
        presented(&registry, Some("helper"), &empty),
        ["b", TOOL_SEARCH]
    );
    assert_eq!(presented(&registry, None, &empty), ["a", "b", TOOL_SEARCH]);
    registry.scope("other");
    assert_eq!(
        presented(&registry, Some("other"), &empty),
        ["a", "b", TOOL_SEARCH]
    );
    let by_name = Registry::new();
    by_name.register(tool("a", "x")).unwrap().keep();
    by_name.register(tool("b", "x")).unwrap().keep();
    by_name.defer_loading(DeferRule::tools(["b"]));
    assert_eq!(presented(&by_name, None, &empty), ["a", TOOL_SEARCH]);
}

#[test]
fn the_name_is_reserved() {
    let registry = Registry::new();
    let error = registry.register(tool(TOOL_SEARCH, "mine")).unwrap_err();
    assert_eq!(
        error.to_string(),
        "tool name \"tool_search\" is reserved for the search of deferred tools and cannot be registered or shadowed"
    );
    assert!(
        registry
            .scope("a")
            .register(tool(TOOL_SEARCH, "mine"))
            .is_err()
    );
}

#[test]
fn code_mode_presents_no_search_tool_and_both_mode_puts_it_before_run_code() {
    let registry = catalog();
    registry.set_code_runtime(FakeRuntime::new(|_, _| async { unreachable!() }));
    let empty = LoadedTools::new();
    registry.set_presentation_mode(PresentationMode::Both);
    assert_eq!(
        presented(&registry, None, &empty),
        ["read_file", TOOL_SEARCH, "run_code"]
    );
    let wire: Vec<String> = registry
        .presented_tools(None, &empty)
        .iter()
        .map(|t| t.name().to_owned())
        .collect();
    assert_eq!(wire, ["read_file", TOOL_SEARCH, "run_code"]);
    registry.set_presentation_mode(PresentationMode::Code);
    let wire: Vec<String> = registry
        .presented_tools(None, &empty)
        .iter()
        .map(|t| t.name().to_owned())
        .collect();
    assert_eq!(wire, ["run_code"]);
}

#[test]
fn loaded_state_survives_a_round_trip() {
    let registry = catalog();
    let mut loaded = LoadedTools::new();
    loaded.load("create_issue");
    let saved = serde_json::to_vec(&loaded).unwrap();
    let back: LoadedTools = serde_json::from_slice(&saved).unwrap();
    assert_eq!(
        presented(&registry, None, &back),
        ["read_file", "create_issue", TOOL_SEARCH]
    );
    assert!(serde_json::from_str::<LoadedTools>(r#"{"not": "a list"}"#).is_err());
}

/// `#[tool(defer_loading)]` sets what `ToolDefinition::defer_loading(true)` does.
#[dsh_tools::tool(defer_loading)]
/// Archive a project.
async fn archive_project(
    /// The project to archive.
    project: String,
) -> Result<String, ToolError> {
    Ok(project)
}

/// `defer_loading = false` keeps a tool in view whatever the rules say.
#[dsh_tools::tool(defer_loading = false)]
/// Say hello.
async fn hello() -> Result<String, ToolError> {
    Ok("hello".into())
}

#[test]
fn the_tool_key_defers() {
    assert_eq!(ToolDefinition::from(ArchiveProject).deferral(), Some(true));
    assert_eq!(ToolDefinition::from(Hello).deferral(), Some(false));
    let registry = Registry::new();
    registry.register(ArchiveProject).unwrap().keep();
    registry.register(Hello).unwrap().keep();
    registry.defer_loading(DeferRule::all());
    assert_eq!(
        presented(&registry, None, &LoadedTools::new()),
        ["hello", TOOL_SEARCH]
    );
}

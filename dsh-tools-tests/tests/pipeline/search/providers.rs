//! Deferred tools in provider exports: the providers' own deferral (Anthropic `defer_loading`
//! with `tool_reference` results or its BM25 search tool; OpenAI Responses client-executed
//! `tool_search` with `tool_search_output`, `namespace` entries, or its hosted search), our
//! `tool_search` function elsewhere, and exports without deferred tools left exactly as they were.

use super::tool;
use dsh_tools::definition::Namespace;
use dsh_tools::provider::ProviderExport;
use dsh_tools::provider::{Dialect, ParsedCall, Provider, ToolSearch};
use dsh_tools::registry::LoadedTools;
use dsh_tools::*;
use serde_json::json;

const FORMS: [ToolSearch; 3] = [ToolSearch::Function, ToolSearch::Native, ToolSearch::Hosted];

fn dialects() -> Vec<Dialect> {
    Provider::ALL
        .into_iter()
        .flat_map(|p| [Dialect::new(p), Dialect::strict(p)])
        .collect()
}

/// `ping`, and three deferred GitHub tools, one with a name the providers do not take as it is.
fn catalog() -> Registry {
    let registry = Registry::new();
    registry
        .register(tool("ping", "Check that the service answers"))
        .unwrap()
        .keep();
    let github = Namespace::new("github", "Issues and pull requests on GitHub");
    for (name, description) in [
        ("github.create_issue", "Open a new issue in a repository"),
        ("merge_pull_request", "Merge a pull request"),
        ("list_commits", "List the commits of a branch"),
    ] {
        let tool = tool(name, description)
            .namespace(github.clone())
            .defer_loading(true);
        registry.register(tool).unwrap().keep();
    }
    registry
}

fn searched(registry: &Registry, dialect: Dialect, form: ToolSearch) -> provider::ProviderTools {
    registry
        .provider_tools_searched(None, dialect, &LoadedTools::new(), form)
        .unwrap()
}

async fn run(registry: &Registry, call: &ParsedCall) -> ToolExecutionResult {
    call.execute(registry, CancellationToken::new()).await
}

#[test]
fn without_deferred_tools_every_form_exports_exactly_what_provider_tools_does() {
    let registry = Registry::new();
    let crm = Namespace::new("crm", "Customers");
    registry.register(tool("ping", "d")).unwrap().keep();
    registry
        .register(tool("crm.find", "d").namespace(crm))
        .unwrap()
        .keep();
    for dialect in dialects() {
        let all = registry.provider_tools(None, dialect).unwrap();
        for form in FORMS {
            let tools = searched(&registry, dialect, form);
            assert_eq!(tools.entries(), all.entries(), "{dialect} {form:?}");
            assert_eq!(
                tools.request_fields(),
                all.request_fields(),
                "{dialect} {form:?}"
            );
        }
    }
}

#[test]
fn dialects_without_native_deferral_get_the_function() {
    let registry = catalog();
    for dialect in dialects() {
        let function = registry
            .provider_tools_loaded(None, dialect, &LoadedTools::new())
            .unwrap();
        for form in [ToolSearch::Native, ToolSearch::Hosted] {
            let tools = searched(&registry, dialect, form);
            let native = matches!(
                dialect.provider(),
                Provider::Anthropic | Provider::OpenAiResponses
            );
            assert_eq!(
                tools.tool_search() == Some(form),
                native,
                "{dialect} {form:?}"
            );
            if !native {
                assert_eq!(tools.entries(), function.entries(), "{dialect} {form:?}");
                assert_eq!(tools.tool_search(), Some(ToolSearch::Function));
            }
        }
    }
}

#[tokio::test]
async fn anthropic_native_marks_deferred_tools_and_answers_with_tool_references() {
    let registry = catalog();
    let tools = searched(
        &registry,
        Dialect::new(Provider::Anthropic),
        ToolSearch::Native,
    );
    let entries = tools.entries();
    let names: Vec<&str> = entries
        .iter()
        .map(|e| e["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "ping",
            "github_create_issue",
            "merge_pull_request",
            "list_commits",
            "tool_search"
        ]
    );
    let deferred: Vec<bool> = entries
        .iter()
        .map(|e| e.get("defer_loading") == Some(&json!(true)))
        .collect();
    assert_eq!(deferred, [false, true, true, true, false]);

    let reply = json!({"content": [
        {"type": "text", "text": "Let me find a tool."},
        {"type": "tool_use", "id": "tu_1", "name": "tool_search", "input": {"query": "open an issue", "limit": 1}}
    ]});
    let calls = tools.parse_calls(&reply).unwrap();
    let result = run(&registry, &calls[0]).await;
    assert!(!result.is_error(), "{result:?}");
    let messages = tools.format_results(&[(&calls[0], &result)]);
    // The reference names the tool as the provider knows it.
    assert_eq!(
        messages,
        [
            json!({"role": "user", "content": [{"type": "tool_result", "tool_use_id": "tu_1",
            "content": [{"type": "tool_reference", "tool_name": "github_create_issue"}],
            "is_error": false}]})
        ]
    );
    // The free function, which has no export, answers as for any tool.
    let plain = provider::format_results(tools.dialect(), &[(&calls[0], &result)]);
    assert_eq!(plain[0]["content"][0]["content"][0]["type"], "text");

    // The model calls what it found, by the provider's name.
    let reply = json!({"content": [{"type": "tool_use", "id": "tu_2", "name": "github_create_issue", "input": {}}]});
    let calls = tools.parse_calls(&reply).unwrap();
    assert_eq!(calls[0].name(), "github.create_issue");
    assert_eq!(
        run(&registry, &calls[0]).await.value(),
        Some(&json!("github.create_issue"))
    );

    // Nothing found: a text block, not an empty reference list.
    let reply = json!({"content": [{"type": "tool_use", "id": "tu_3", "name": "tool_search", "input": {"query": "zzzz"}}]});
    let calls = tools.parse_calls(&reply).unwrap();
    let result = run(&registry, &calls[0]).await;
    let messages = tools.format_results(&[(&calls[0], &result)]);
    assert_eq!(
        messages[0]["content"][0]["content"],
        json!([{"type": "text", "text": "No tools match. Try other words."}])
    );
    // A failed search is an error result as usual.
    let reply = json!({"content": [{"type": "tool_use", "id": "tu_4", "name": "tool_search", "input": {"query": 3}}]});
    let calls = tools.parse_calls(&reply).unwrap();
    let result = run(&registry, &calls[0]).await;
    let messages = tools.format_results(&[(&calls[0], &result)]);
    assert_eq!(messages[0]["content"][0]["is_error"], true);
}

#[tokio::test]
async fn responses_native_sends_deferred_tools_only_in_the_search_output() {
    let registry = catalog();
    for dialect in [
        Dialect::new(Provider::OpenAiResponses),
        Dialect::strict(Provider::OpenAiResponses),
    ] {
        let tools = searched(&registry, dialect, ToolSearch::Native);
        let entries = tools.entries();
        assert_eq!(entries.len(), 2, "{entries:#?}");
        assert_eq!(entries[0]["name"], "ping");
        assert_eq!(entries[1]["type"], "tool_search");
        assert_eq!(entries[1]["execution"], "client");
        assert_eq!(entries[1]["parameters"]["required"][0], "query");
        assert!(!entries.iter().any(|e| e.get("defer_loading").is_some()));

        let reply = json!({"output": [
            {"type": "tool_search_call", "id": "ts_1", "call_id": "call_s1", "execution": "client",
             "status": "completed", "arguments": {"query": "merge a pull request", "limit": 2}},
            // The provider's own search, were it used, is not ours to run.
            {"type": "tool_search_call", "id": "ts_2", "execution": "server", "status": "completed",
             "arguments": {"query": "x"}}
        ]});
        let calls = tools.parse_calls(&reply).unwrap();
        assert_eq!(calls.len(), 1);
        assert!(calls[0].is_native_search());
        assert_eq!(calls[0].name(), "tool_search");
        let result = run(&registry, &calls[0]).await;
        let messages = tools.format_results(&[(&calls[0], &result)]);
        assert_eq!(messages.len(), 1);
        let output = &messages[0];
        assert_eq!(output["type"], "tool_search_output");
        assert_eq!(output["call_id"], "call_s1");
        assert_eq!(output["execution"], "client");
        // The found tools, grouped in their namespace, as the list would have carried them.
        let loaded = &output["tools"];
        assert_eq!(loaded.as_array().unwrap().len(), 1, "{loaded:#}");
        assert_eq!(loaded[0]["type"], "namespace");
        assert_eq!(loaded[0]["name"], "github");
        let inner: Vec<&str> = loaded[0]["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["name"].as_str().unwrap())
            .collect();
        assert_eq!(inner, ["merge_pull_request"]);
        let everything = registry.provider_tools(None, dialect).unwrap();
        let full = everything
            .entries()
            .iter()
            .find(|e| e["name"] == "merge_pull_request")
            .unwrap();
        assert_eq!(&loaded[0]["tools"][0], full);

        // The loaded tool is called inside its namespace.
        let reply = json!({"output": [{"type": "function_call", "call_id": "call_2", "namespace": "github",
            "name": "github_create_issue", "arguments": "{}"}]});
        let calls = tools.parse_calls(&reply).unwrap();
        assert!(!calls[0].is_native_search());
        assert_eq!(
            run(&registry, &calls[0]).await.value(),
            Some(&json!("github.create_issue"))
        );

        // A search that fails loads nothing.
        let reply = json!({"output": [{"type": "tool_search_call", "call_id": "call_s2",
            "execution": "client", "arguments": {"query": "x", "limit": 0}}]});
        let calls = tools.parse_calls(&reply).unwrap();
        let result = run(&registry, &calls[0]).await;
        assert!(result.is_error());
        let messages = tools.format_results(&[(&calls[0], &result)]);
        assert_eq!(messages[0]["type"], "tool_search_output");
        assert_eq!(messages[0]["tools"], json!([]));
    }
}

#[tokio::test]
async fn a_native_search_never_loads_what_the_caller_may_not_call() {
    let registry = catalog();
    registry
        .scope_rules(
            dsh_tools::pipeline::ScopeRules::new().tool("merge_pull_request", ["repo:write"]),
        )
        .keep();
    let tools = searched(
        &registry,
        Dialect::new(Provider::OpenAiResponses),
        ToolSearch::Native,
    );
    let reply = json!({"output": [{"type": "tool_search_call", "call_id": "c", "execution": "client",
        "arguments": {"query": "merge pull request commits issue", "limit": 5}}]});
    let calls = tools.parse_calls(&reply).unwrap();
    let reader = std::sync::Arc::new(dsh_tools::pipeline::Caller::new("ann").scopes(["repo:read"]));
    let input = calls[0]
        .clone()
        .into_input(CancellationToken::new())
        .unwrap()
        .caller(reader);
    let result = registry.execute(input).await;
    let messages = tools.format_results(&[(&calls[0], &result)]);
    let text = messages[0].to_string();
    assert!(text.contains("list_commits"), "{text}");
    assert!(!text.contains("merge_pull_request"), "{text}");
}

#[test]
fn hosted_forms_send_every_tool_marked_and_leave_the_providers_search_to_it() {
    let registry = catalog();
    // A tool of ours with the name of Anthropic's search tool gets another.
    registry
        .register(tool("tool_search_tool_bm25", "d"))
        .unwrap()
        .keep();

    let tools = searched(
        &registry,
        Dialect::new(Provider::Anthropic),
        ToolSearch::Hosted,
    );
    let entries = tools.entries();
    assert_eq!(
        entries.last().unwrap(),
        &json!({"type": "tool_search_tool_bm25_20251119", "name": "tool_search_tool_bm25"})
    );
    let ours = tools
        .tools()
        .iter()
        .find(|t| t.name() == "tool_search_tool_bm25")
        .unwrap();
    assert_eq!(ours.provider_name(), "tool_search_tool_bm25_2");
    assert_eq!(
        entries
            .iter()
            .filter(|e| e.get("defer_loading").is_some())
            .count(),
        3
    );
    assert!(!entries.iter().any(|e| e["name"] == "tool_search"));
    let reply = json!({"content": [
        {"type": "server_tool_use", "id": "srv_1", "name": "tool_search_tool_bm25", "input": {"query": "issue"}},
        {"type": "tool_search_tool_result", "tool_use_id": "srv_1", "content": {
            "type": "tool_search_tool_search_result",
            "tool_references": [{"type": "tool_reference", "tool_name": "github_create_issue"}]}},
        {"type": "tool_use", "id": "tu_1", "name": "github_create_issue", "input": {}}
    ]});
    let calls = tools.parse_calls(&reply).unwrap();
    assert_eq!(calls.len(), 1);
    assert_eq!(calls[0].name(), "github.create_issue");

    let tools = searched(
        &registry,
        Dialect::new(Provider::OpenAiResponses),
        ToolSearch::Hosted,
    );
    let entries = tools.entries();
    assert_eq!(entries.last().unwrap(), &json!({"type": "tool_search"}));
    let namespace = entries.iter().find(|e| e["type"] == "namespace").unwrap();
    assert_eq!(namespace["name"], "github");
    assert_eq!(
        namespace["description"],
        "Issues and pull requests on GitHub"
    );
    assert_eq!(namespace["tools"].as_array().unwrap().len(), 3);
    assert!(
        namespace["tools"]
            .as_array()
            .unwrap()
            .iter()
            .all(|t| t["defer_loading"] == true)
    );
    let reply = json!({"output": [
        {"type": "tool_search_call", "id": "ts_1", "execution": "server", "status": "completed", "arguments": {}},
        {"type": "tool_search_output", "id": "tso_1", "execution": "server", "status": "completed", "tools": []},
        {"type": "function_call", "call_id": "c1", "namespace": "github", "name": "list_commits", "arguments": "{}"}
    ]});
    let calls = tools.parse_calls(&reply).unwrap();
    assert_eq!(calls.len(), 1);
    assert_eq!(calls[0].name(), "list_commits");
}

#[test]
fn a_refresh_keeps_the_form_and_the_names() {
    let registry = catalog();
    let dialect = Dialect::new(Provider::OpenAiResponses);
    let first = searched(&registry, dialect, ToolSearch::Native);
    registry
        .register(tool("github_create_issue", "d"))
        .unwrap()
        .keep();
    let next = first
        .refresh_loaded(&registry, &LoadedTools::new())
        .unwrap();
    assert_eq!(next.tool_search(), Some(ToolSearch::Native));
    assert_eq!(next.entries().last().unwrap()["type"], "tool_search");
    // The name the first export gave the deferred tool still means it.
    let again = next
        .tools()
        .iter()
        .find(|t| t.name() == "github.create_issue")
        .unwrap();
    assert_eq!(again.provider_name(), "github_create_issue");
    let other = next
        .tools()
        .iter()
        .find(|t| t.name() == "github_create_issue")
        .unwrap();
    assert_eq!(other.provider_name(), "github_create_issue_2");
}

#[cfg(feature = "code")]
#[test]
fn code_mode_sends_run_code_alone_in_every_form() {
    let registry = catalog();
    registry.set_presentation_mode(PresentationMode::Code);
    registry.set_code_runtime(
        dsh_tools::code::quickjs::QuickJsRuntime::new(dsh_tools::code::CodeRuntimeConfig::default())
            .unwrap(),
    );
    for form in FORMS {
        for provider in [Provider::Anthropic, Provider::OpenAiResponses] {
            let tools = searched(&registry, Dialect::new(provider), form);
            let names: Vec<&str> = tools.tools().iter().map(|t| t.name()).collect();
            assert_eq!(names, ["run_code"], "{provider:?} {form:?}");
            assert_eq!(tools.entries().len(), 1);
        }
    }
}

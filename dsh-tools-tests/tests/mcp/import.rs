//! Importing MCP tools into a registry, over in-process pipes: a dsh-tools server on the other
//! end (codes round-trip), foreign schemas (converted, passed through, rejected), collisions,
//! prefixes, cancellation, list_changed re-sync in both eras, a dying server, 10,000 tools, a
//! server that asks.

use crate::support;

use dsh_tools::mcp::rmcp::ServiceExt;
use dsh_tools::mcp::{ImportOptions, ImportedTools, McpImport, McpServer, SchemaPolicy};
use dsh_tools::{
    CancellationToken, OutputDecl, Registry, ToolDefinition, ToolExecutionInput,
    ToolExecutionResult,
};
use serde_json::{Value, json};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use support::{ERAS, Era, Probe, eventually, registry};

/// Serves `remote` in-process and connects an importer to it in `era`.
async fn import(remote: &Registry, era: Era) -> McpImport {
    let (a, b) = tokio::io::duplex(1 << 20);
    let server = McpServer::new(remote.clone());
    tokio::spawn(async move {
        if let Ok(running) = server.serve(a).await {
            let _ = running.waiting().await;
        }
    });
    McpImport::connect_with(b, era.lifecycle()).await.unwrap()
}

/// Puts `registry` in Code Mode with the QuickJS engine.
fn code_mode(registry: &Registry) {
    registry.set_code_runtime(
        dsh_tools::code::quickjs::QuickJsRuntime::new(Default::default()).unwrap(),
    );
    registry.set_presentation_mode(dsh_tools::registry::PresentationMode::Code);
}

async fn run(registry: &Registry, name: &str, args: Value) -> ToolExecutionResult {
    let input = ToolExecutionInput::new("c1", name, args, CancellationToken::new());
    registry.execute(input).await
}

fn raw(name: &str, parameters: Value, calls: &Arc<AtomicUsize>) -> ToolDefinition {
    let calls = Arc::clone(calls);
    ToolDefinition::new(
        name,
        "a raw tool",
        parameters,
        OutputDecl::text(),
        move |args, _| {
            calls.fetch_add(1, Ordering::SeqCst);
            async move { Ok(json!(format!("got {args}"))) }
        },
    )
}

#[tokio::test]
async fn a_dsh_tools_server_round_trips_values_codes_and_hints() {
    for era in ERAS {
        let probe = Arc::new(Probe::default());
        let remote = registry(&probe);
        let server = import(&remote, era).await;
        let local = Registry::new();
        let imported = server
            .import_into(&local, ImportOptions::default())
            .await
            .unwrap();
        assert_eq!(
            imported.names(),
            ["add", "echo", "blocks", "fail", "slow", "progress"]
        );
        assert!(
            imported.passed_through().is_empty(),
            "{:?}",
            imported.passed_through()
        );
        let add = local.get("add", None).unwrap();
        assert_eq!(add.tool_title(), Some("Add"));
        assert_eq!(
            add.tool_hints(),
            remote.get("add", None).unwrap().tool_hints()
        );
        assert_eq!(
            add.parameters(),
            remote.get("add", None).unwrap().parameters()
        );

        let sum = run(&local, "add", json!({"a": 2, "b": 3})).await;
        assert_eq!(sum.text(), "5", "{era:?}");
        let echo = run(&local, "echo", json!({"text": "hi"})).await;
        assert_eq!(
            echo.value().unwrap()["structuredContent"],
            json!({"text": "hi"})
        );

        let fail = run(&local, "fail", json!({})).await;
        assert_eq!(fail.code(), Some("ENOSPC"), "the code crosses in _meta");
        assert_eq!(fail.error().unwrap().info().unwrap().name, "HarnessError");
        assert_eq!(
            fail.text(),
            "Error: disk full",
            "one `Error: ` prefix, not two"
        );
        drop(imported);
        assert!(
            local.get("add", None).is_none(),
            "dropping the handle unregisters"
        );
    }
}

#[tokio::test]
async fn converted_schemas_are_validated_locally_before_any_round_trip() {
    let calls = Arc::new(AtomicUsize::new(0));
    let remote = Registry::new();
    // What a Pydantic model gives for `n: Optional[int]`, with annotations on top.
    let pydantic = json!({
        "type": "object",
        "properties": {
            "n": {"anyOf": [{"type": "integer"}, {"type": "null"}], "title": "N"},
            "when": {"type": "string", "format": "date-time", "x-order": 2}
        },
        "required": ["n"],
        "title": "Args"
    });
    remote
        .register(raw("opt", pydantic, &calls))
        .unwrap()
        .keep();
    let server = import(&remote, Era::Legacy).await;
    let local = Registry::new();
    let imported = server
        .import_into(&local, ImportOptions::default())
        .await
        .unwrap();
    assert!(imported.passed_through().is_empty());
    let params = local.get("opt", None).unwrap().parameters().clone();
    assert_eq!(
        params["properties"]["n"],
        json!({"oneOf": [{"type": "integer"}, {"type": "null"}], "title": "N"})
    );
    assert_eq!(params["properties"]["when"], json!({"type": "string"}));

    let bad = run(&local, "opt", json!({"n": "x"})).await;
    assert_eq!(bad.code(), Some("INVALID_ARGS"));
    assert!(bad.text().contains(r#""n""#), "{}", bad.text());
    assert_eq!(
        calls.load(Ordering::SeqCst),
        0,
        "rejected without a round trip"
    );
    let ok = run(&local, "opt", json!({"n": null})).await;
    assert!(!ok.is_error(), "{}", ok.text());
    assert_eq!(calls.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn schemas_outside_the_subset_pass_through_or_are_rejected_by_policy() {
    let calls = Arc::new(AtomicUsize::new(0));
    let remote = Registry::new();
    let not = json!({"type": "object", "properties": {"s": {"not": {"type": "string"}}}});
    remote
        .register(raw("negated", not.clone(), &calls))
        .unwrap()
        .keep();
    let server = import(&remote, Era::Legacy).await;

    let local = Registry::new();
    let imported = server
        .import_into(&local, ImportOptions::default())
        .await
        .unwrap();
    let passed = imported.passed_through();
    assert_eq!(passed.len(), 1);
    assert_eq!(passed[0].0, "negated");
    assert!(passed[0].1.contains("not"), "{}", passed[0].1);
    assert_eq!(local.get("negated", None).unwrap().parameters(), &not);
    let result = run(&local, "negated", json!({"s": 1})).await;
    assert!(!result.is_error());
    assert_eq!(calls.load(Ordering::SeqCst), 1, "the remote validates");

    let strict = Registry::new();
    let rejected = server
        .import_into(
            &strict,
            ImportOptions::default().schemas(SchemaPolicy::Reject),
        )
        .await
        .unwrap();
    assert!(rejected.names().is_empty());
    assert_eq!(rejected.skipped().len(), 1);
    assert!(strict.get("negated", None).is_none());

    let raw_policy = Registry::new();
    let passed = server
        .import_into(
            &raw_policy,
            ImportOptions::default().schemas(SchemaPolicy::PassThrough),
        )
        .await
        .unwrap();
    assert_eq!(passed.names(), ["negated"]);
}

#[tokio::test]
async fn collisions_are_reported_never_shadowed_and_prefixes_disambiguate() {
    let probe = Arc::new(Probe::default());
    let remote = registry(&probe);
    let server = import(&remote, Era::Legacy).await;
    let local = Registry::new();
    let calls = Arc::new(AtomicUsize::new(0));
    local
        .register(raw("add", json!({"type": "object"}), &calls))
        .unwrap()
        .keep();
    // In a scope, a global `echo` would be shadowed: also a collision.
    local
        .register(raw("echo", json!({"type": "object"}), &calls))
        .unwrap()
        .keep();
    let imported = server
        .import_into(&local, ImportOptions::default().scope("agent"))
        .await
        .unwrap();
    assert_eq!(imported.collisions(), ["add", "echo"]);
    assert!(!imported.names().contains(&"add".to_owned()));
    let prefixed = server
        .import_into(&local, ImportOptions::default().prefix("remote_"))
        .await
        .unwrap();
    assert!(prefixed.collisions().is_empty());
    assert_eq!(
        run(&local, "remote_add", json!({"a": 1, "b": 2}))
            .await
            .text(),
        "3"
    );
    assert_eq!(
        run(&local, "add", json!({})).await.text(),
        "got {}",
        "the local one stays"
    );
}

#[tokio::test]
async fn cancelling_an_imported_call_cancels_the_remote_body() {
    for era in ERAS {
        let probe = Arc::new(Probe::default());
        let remote = registry(&probe);
        let server = import(&remote, era).await;
        let local = Registry::new();
        let _imported = server
            .import_into(&local, ImportOptions::default())
            .await
            .unwrap();
        let signal = CancellationToken::new();
        let input = ToolExecutionInput::new("c1", "slow", json!({}), signal.clone());
        let call = tokio::spawn({
            let local = local.clone();
            async move { local.execute(input).await }
        });
        eventually("the remote body started", || {
            probe.started.load(Ordering::SeqCst) == 1
        })
        .await;
        signal.cancel();
        let result = call.await.unwrap();
        assert_eq!(result.code(), Some("ABORTED"), "{era:?}");
        eventually("the remote body saw the cancellation", || {
            probe.cancelled.load(Ordering::SeqCst) == 1
        })
        .await;
    }
}

fn extra(name: &str) -> ToolDefinition {
    ToolDefinition::new(
        name,
        "added later",
        json!({"type": "object"}),
        OutputDecl::text(),
        |_, _| async { Ok(json!("later")) },
    )
}

#[tokio::test]
async fn imports_follow_the_remote_list_in_both_eras() {
    for era in ERAS {
        let probe = Arc::new(Probe::default());
        let remote = registry(&probe);
        let server = import(&remote, era).await;
        let local = Registry::new();
        let imported: ImportedTools = server
            .import_into(&local, ImportOptions::default())
            .await
            .unwrap();
        let added = remote.register(extra("later")).unwrap();
        eventually("the new remote tool is imported", || {
            local.get("later", None).is_some()
        })
        .await;
        assert_eq!(
            run(&local, "later", json!({})).await.text(),
            "later",
            "{era:?}"
        );
        added.dispose();
        eventually("the removed remote tool is unregistered", || {
            local.get("later", None).is_none()
        })
        .await;
        assert!(imported.names().iter().all(|n| n != "later"));
    }
}

/// A remote tool whose definition changes is replaced where it stands (`replace_tool`): the
/// search index forgets the old text and finds the new, holding one entry per live tool.
#[tokio::test]
async fn a_changed_remote_tool_is_searched_by_its_new_text() {
    use dsh_tools::registry::ToolQuery;
    let probe = Arc::new(Probe::default());
    let remote = registry(&probe);
    let described = |description: &str| {
        ToolDefinition::new(
            "later",
            description,
            json!({"type": "object"}),
            OutputDecl::text(),
            |_, _| async { Ok(json!("later")) },
        )
    };
    let first = remote.register(described("Archive old invoices")).unwrap();
    let server = import(&remote, Era::Legacy).await;
    let local = Registry::new();
    let _imported = server
        .import_into(&local, ImportOptions::default())
        .await
        .unwrap();
    let found = |query: &str| -> Vec<String> {
        local
            .search(&ToolQuery::new(query).limit(3))
            .into_iter()
            .map(|m| m.tool.name().to_owned())
            .collect()
    };
    assert_eq!(found("invoices"), ["later"]);
    let live = local.tools(None).len();
    assert_eq!(local.indexed_tools(), Some(live));

    first.dispose();
    remote
        .register(described("Rotate TLS certificates"))
        .unwrap()
        .keep();
    eventually("the changed remote tool is re-imported", || {
        local
            .get("later", None)
            .is_some_and(|t| t.description() == "Rotate TLS certificates")
    })
    .await;
    assert_eq!(found("certificates"), ["later"]);
    assert!(found("invoices").is_empty(), "{:?}", found("invoices"));
    assert_eq!(local.indexed_tools(), Some(local.tools(None).len()));
}

#[tokio::test]
async fn a_remote_server_that_dies_mid_call_fails_the_call_and_the_registry_stays_usable() {
    let probe = Arc::new(Probe::default());
    let remote = registry(&probe);
    // client <-> relay <-> server: aborting the relay cuts the connection without a goodbye.
    let (a, mut a_relay) = tokio::io::duplex(1 << 20);
    let (b, mut b_relay) = tokio::io::duplex(1 << 20);
    let server = McpServer::new(remote.clone());
    tokio::spawn(async move {
        if let Ok(running) = server.serve(a).await {
            let _ = running.waiting().await;
        }
    });
    let relay = tokio::spawn(async move {
        let _ = tokio::io::copy_bidirectional(&mut a_relay, &mut b_relay).await;
    });
    let import = McpImport::connect_with(b, Era::Legacy.lifecycle())
        .await
        .unwrap();
    let local = Registry::new();
    let _imported = import
        .import_into(&local, ImportOptions::default().prefix("r_"))
        .await
        .unwrap();
    let calls = Arc::new(AtomicUsize::new(0));
    local
        .register(raw("local", json!({"type": "object"}), &calls))
        .unwrap()
        .keep();
    let call = tokio::spawn({
        let local = local.clone();
        async move { run(&local, "r_slow", json!({})).await }
    });
    eventually("the remote body started", || {
        probe.started.load(Ordering::SeqCst) == 1
    })
    .await;
    relay.abort(); // the connection is gone mid-call
    let result = call.await.unwrap();
    assert!(result.is_error());
    assert_eq!(
        result.code(),
        Some("MCP_TRANSPORT_ERROR"),
        "{}",
        result.text()
    );
    assert_eq!(run(&local, "local", json!({})).await.text(), "got {}");
    let again = run(&local, "r_add", json!({"a": 1, "b": 2})).await;
    assert_eq!(again.code(), Some("MCP_TRANSPORT_ERROR"));
}

#[tokio::test]
async fn ten_thousand_remote_tools_are_imported() {
    let remote = Registry::new();
    for i in 0..10_000 {
        remote.register(extra(&format!("tool_{i}"))).unwrap().keep();
    }
    let server = import(&remote, Era::Legacy).await;
    let local = Registry::new();
    let imported = server
        .import_into(&local, ImportOptions::default())
        .await
        .unwrap();
    assert_eq!(imported.names().len(), 10_000);
    assert_eq!(local.tools(None).len(), 10_000);
    assert_eq!(run(&local, "tool_9999", json!({})).await.text(), "later");
}

/// Issue 39.5: an imported tool's `readOnlyHint` is a claim, so imported calls never overlapped,
/// even under `Promise.all` in a program. `ImportOptions::trust_hints` opts in: the three calls
/// of a read-only tool are then in flight together; without it, one at a time. Each call waits
/// (bounded) for the other two, so the count, not the clock, tells.
#[tokio::test]
async fn trusted_read_only_hints_let_imported_calls_overlap_in_a_program() {
    for trust in [false, true] {
        let in_flight = Arc::new(AtomicUsize::new(0));
        let peak = Arc::new(AtomicUsize::new(0));
        let remote = Registry::new();
        let (now, max) = (Arc::clone(&in_flight), Arc::clone(&peak));
        let mut hints = dsh_tools::ToolHints::new();
        hints.read_only = Some(true);
        let slow = ToolDefinition::new(
            "slow_read",
            "Reads slowly.",
            json!({"type": "object"}),
            OutputDecl::text(),
            move |_, _| {
                let (now, max) = (Arc::clone(&now), Arc::clone(&max));
                async move {
                    let mine = now.fetch_add(1, Ordering::SeqCst) + 1;
                    max.fetch_max(mine, Ordering::SeqCst);
                    // Wait for the others, bounded: alone, this is where a call would sit.
                    for _ in 0..50 {
                        if now.load(Ordering::SeqCst) >= 3 {
                            break;
                        }
                        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
                    }
                    now.fetch_sub(1, Ordering::SeqCst);
                    Ok(json!("read"))
                }
            },
        )
        .hints(hints);
        remote.register(slow).unwrap().keep();
        let local = Registry::new();
        let server = import(&remote, Era::Legacy).await;
        let imported = server
            .import_into(&local, ImportOptions::default().trust_hints(trust))
            .await
            .unwrap();
        code_mode(&local);
        let program = "const out = await Promise.all([tools.slow_read({}), tools.slow_read({}), \
                       tools.slow_read({})]);\nreturn out.length;";
        let result = run(
            &local,
            "run_code",
            json!({"code": program, "description": "three reads"}),
        )
        .await;
        assert!(!result.is_error(), "{}", result.text());
        let expected = if trust { 3 } else { 1 };
        assert_eq!(peak.load(Ordering::SeqCst), expected, "trust_hints {trust}");
        drop((imported, server));
    }
}

/// The tools of the value-shape test: an object, an integer and a string value.
fn shaped_tools(registry: &Registry) {
    let tools = [
        ToolDefinition::new(
            "point",
            "A point.",
            json!({"type": "object"}),
            OutputDecl::json(
                json!({"type": "object", "properties": {"x": {"type": "integer"}, "y": {"type": "integer"}}, "required": ["x", "y"]}),
            ),
            |_, _| async { Ok(json!({"x": 1, "y": -2})) },
        ),
        ToolDefinition::new(
            "count",
            "A number.",
            json!({"type": "object"}),
            OutputDecl::json(json!({"type": "integer"})),
            |_, _| async { Ok(json!(42)) },
        ),
        ToolDefinition::new(
            "greet",
            "A string.",
            json!({"type": "object"}),
            OutputDecl::json(json!({"type": "string"})),
            |_, _| async { Ok(json!("hello")) },
        ),
    ];
    for tool in tools {
        registry.register(tool).unwrap().keep();
    }
}

/// Issue 39.8: server-side and client-side Code Mode hand a program the same value for the same
/// tool result. The same program runs against the tools in-process and against the same tools
/// imported from an MCP server, and prints the same text (under 2026-07-28; under 2025-11-25
/// for object values, the only ones that revision gives an `outputSchema`).
#[tokio::test]
async fn a_program_sees_the_same_values_in_process_and_through_an_import() {
    let program = "const [p, n, g] = await Promise.all([tools.point({}), tools.count({}), tools.greet({})]);\n\
                   return {p, n, g, kinds: [typeof p, typeof n, typeof g], sum: p.x + p.y + n};";
    let native = Registry::new();
    shaped_tools(&native);
    code_mode(&native);
    let args = json!({"code": program, "description": "shapes"});
    let inside = run(&native, "run_code", args.clone()).await;
    assert!(!inside.is_error(), "{}", inside.text());
    assert_eq!(
        serde_json::from_str::<Value>(&inside.text()).unwrap(),
        json!({"p": {"x": 1, "y": -2}, "n": 42, "g": "hello", "kinds": ["object", "number", "string"], "sum": 41})
    );
    for era in ERAS {
        let remote = Registry::new();
        shaped_tools(&remote);
        let local = Registry::new();
        let server = import(&remote, era).await;
        let imported = server
            .import_into(&local, ImportOptions::default())
            .await
            .unwrap();
        code_mode(&local);
        let outside = run(&local, "run_code", args.clone()).await;
        match era {
            Era::Modern => assert_eq!(outside.text(), inside.text()),
            // 2025-11-25 declares an `outputSchema` only for objects (rmcp drops others for
            // those peers): a value that is not an object arrives as a result with no schema,
            // and a program gets the result. Objects are the same value in both eras.
            Era::Legacy => {
                let value: Value = serde_json::from_str(&outside.text()).unwrap();
                assert_eq!(value["p"], json!({"x": 1, "y": -2}));
                assert_eq!(value["n"]["content"][0]["text"], "42");
            }
        }
        drop((imported, server));
    }
}

/// `ToolDefinition::program_value` changes only what the program receives (the result keeps the
/// value), and a view that panics hands over the value instead of failing the run.
#[tokio::test]
async fn a_program_view_is_what_the_program_gets_and_a_panicking_one_is_ignored() {
    let registry = Registry::new();
    let tool = |name: &str| {
        ToolDefinition::new(
            name,
            "A pair.",
            json!({"type": "object"}),
            OutputDecl::json(json!({"type": "object"})),
            |_, _| async { Ok(json!({"inner": 7, "outer": 1})) },
        )
    };
    registry
        .register(tool("viewed").program_value(|v| v.get("inner").cloned()))
        .unwrap()
        .keep();
    registry
        .register(tool("broken").program_value(|_| panic!("a view that panics")))
        .unwrap()
        .keep();
    code_mode(&registry);
    let program = "return [await tools.viewed({}), await tools.broken({})]";
    let result = run(
        &registry,
        "run_code",
        json!({"code": program, "description": "views"}),
    )
    .await;
    assert!(!result.is_error(), "{}", result.text());
    assert_eq!(
        serde_json::from_str::<Value>(&result.text()).unwrap(),
        json!([7, {"inner": 7, "outer": 1}])
    );
    registry.set_presentation_mode(dsh_tools::registry::PresentationMode::Native);
    let direct = run(&registry, "viewed", json!({})).await;
    assert_eq!(
        direct.value(),
        Some(&json!({"inner": 7, "outer": 1})),
        "the value is kept"
    );
}

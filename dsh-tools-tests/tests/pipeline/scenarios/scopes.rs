//! J. Scopes, shadowing and restrictions (spec §5.1–§5.4), and L. the Code Mode collapse
//! (spec §5.7).

use super::support::*;
use dsh_tools::*;
use serde_json::json;
use std::sync::Arc;

fn names(registry: &Registry, agent: Option<&str>) -> Vec<String> {
    let agent = agent.map(AgentId::new);
    registry
        .schemas(agent.as_ref())
        .expect("projects")
        .into_iter()
        .map(|s| s.name)
        .collect()
}

fn sorted(mut names: Vec<String>) -> Vec<String> {
    names.sort();
    names
}

/// `name` registered with description `label`, so a view shows which definition it holds.
fn labelled(name: &str, label: &str) -> ToolDefinition {
    ToolDefinition::new(
        name,
        label,
        json!({"type": "object"}),
        OutputDecl::text(),
        |_, _| async { Ok(json!("")) },
    )
}

fn descriptions(registry: &Registry, agent: &str) -> Vec<String> {
    registry
        .schemas(Some(&AgentId::new(agent)))
        .unwrap()
        .into_iter()
        .map(|s| format!("{}:{}", s.name, s.description))
        .collect()
}

#[tokio::test]
async fn scenario_101_shadowing_in_either_order() {
    for scoped_first in [true, false] {
        let registry = Registry::new();
        let a = registry.scope("A");
        if scoped_first {
            a.register(raw_reply("bash", "restricted-bash"))
                .unwrap()
                .keep();
            keep(&registry, raw_reply("bash", "global-bash"));
        } else {
            keep(&registry, raw_reply("bash", "global-bash"));
            a.register(raw_reply("bash", "restricted-bash"))
                .unwrap()
                .keep();
        }
        let r = exec(&registry, call("bash", json!({})).agent("A")).await;
        assert_eq!(r.text(), "restricted-bash");
        let r = exec(&registry, call("bash", json!({}))).await;
        assert_eq!(r.text(), "global-bash");
        let r = exec(&registry, call("bash", json!({})).agent("B")).await;
        assert_eq!(r.text(), "global-bash");
        assert_eq!(names(&registry, Some("A")), ["bash"]);
    }
}

#[test]
fn scenario_102_shadow_position() {
    let globals = |registry: &Registry| {
        for name in ["a", "b", "c"] {
            keep(registry, labelled(name, "global"));
        }
    };
    let registry = Registry::new();
    globals(&registry);
    let a = registry.scope("A");
    a.register(labelled("b", "scoped")).unwrap().keep();
    a.register(labelled("z", "scoped")).unwrap().keep();
    assert_eq!(
        descriptions(&registry, "A"),
        ["a:global", "b:scoped", "c:global", "z:scoped"]
    );
    // A restricted-away global shadowed by an own tool moves to the end.
    let registry = Registry::new();
    globals(&registry);
    let a = registry.scope("A");
    a.restrict(Restriction::deny(["b"])).unwrap().keep();
    a.register(labelled("b", "scoped")).unwrap().keep();
    assert_eq!(
        descriptions(&registry, "A"),
        ["a:global", "c:global", "b:scoped"]
    );
    // Denying a name the scope also registers does not hide its own tool.
    let registry = Registry::new();
    globals(&registry);
    let a = registry.scope("A");
    a.register(labelled("b", "scoped")).unwrap().keep();
    a.restrict(Restriction::deny(["b"])).unwrap().keep();
    assert_eq!(
        descriptions(&registry, "A"),
        ["a:global", "c:global", "b:scoped"]
    );
    assert_eq!(
        registry
            .get("b", Some(&AgentId::new("A")))
            .unwrap()
            .description(),
        "scoped"
    );
}

#[test]
fn scenario_103_scope_disposal() {
    let registry = Registry::new();
    let a = registry.scope("A");
    a.register(raw("mine")).unwrap().keep();
    let agent = AgentId::new("A");
    assert!(registry.get("mine", Some(&agent)).is_some());
    a.dispose();
    assert!(registry.get("mine", Some(&agent)).is_none());
    assert!(names(&registry, Some("A")).is_empty());
}

#[tokio::test]
async fn scenario_104_allow_mask() {
    let registry = Registry::new();
    keep(&registry, raw("read"));
    keep(&registry, raw("bash"));
    let a = registry.scope("A");
    a.register(raw("capture")).unwrap().keep();
    a.restrict(Restriction::allow(["read"])).unwrap().keep();
    assert_eq!(sorted(names(&registry, Some("A"))), ["capture", "read"]);
    let r = exec(&registry, call("bash", json!({})).agent("A")).await;
    assert_eq!(
        to_json(&r),
        coded_failure("unknown tool \"bash\"", "ToolNotFoundError", "UNKNOWN_TOOL")
    );
    for name in ["read", "capture"] {
        let r = exec(&registry, call(name, json!({})).agent("A")).await;
        assert_eq!(r.text(), format!("ran:{name}"));
    }
    assert_eq!(sorted(names(&registry, None)), ["bash", "read"]);
}

#[test]
fn scenario_106_intersection_and_independent_lifting() {
    let registry = Registry::new();
    for name in ["a", "b", "c"] {
        keep(&registry, raw(name));
    }
    let a = registry.scope("A");
    let allow = a.restrict(Restriction::allow(["a", "b"])).unwrap();
    a.restrict(Restriction::deny(["b"])).unwrap().keep();
    assert_eq!(names(&registry, Some("A")), ["a"]);
    allow.dispose();
    assert_eq!(names(&registry, Some("A")), ["a", "c"]);
    // Live: a later global passes a deny-only filter and is excluded by an allow filter.
    keep(&registry, raw("d"));
    assert_eq!(names(&registry, Some("A")), ["a", "c", "d"]);
    a.restrict(Restriction::allow(["a", "c"])).unwrap().keep();
    keep(&registry, raw("e"));
    assert_eq!(names(&registry, Some("A")), ["a", "c"]);
}

#[test]
fn scenario_107_filter_copied_at_registration() {
    let registry = Registry::new();
    keep(&registry, raw("a"));
    keep(&registry, raw("b"));
    let a = registry.scope("A");
    let mut filter = Restriction::deny(["a"]);
    a.restrict(filter.clone()).unwrap().keep();
    filter.deny.as_mut().unwrap().push("b".to_owned());
    assert_eq!(names(&registry, Some("A")), ["b"]);
}

#[test]
fn scenario_108_restriction_errors() {
    let message = |registry: &Registry, r: Restriction| {
        registry.scope("A").restrict(r).unwrap_err().to_string()
    };
    let empty = Registry::new();
    assert_eq!(
        message(&empty, Restriction::default()),
        "tools.restrict({}) is a no-op: pass `allow` and/or `deny` (an empty filter is almost \
         always a materialized-empty-config bug)"
    );
    assert_eq!(
        message(&empty, Restriction::deny(["ghost"])),
        "tools.restrict() names unknown global tool \"ghost\"; known global tools: (none)"
    );
    let registry = Registry::new();
    keep(&registry, raw("real"));
    registry.scope("A").register(raw("local")).unwrap().keep();
    assert_eq!(
        message(&registry, Restriction::deny(["local"])),
        "tools.restrict() names unknown global tool \"local\"; known global tools: real"
    );
    assert_eq!(
        message(&registry, Restriction::allow(["reall"])),
        "tools.restrict() names unknown global tool \"reall\"; known global tools: real"
    );
    assert_eq!(
        message(&registry, Restriction::deny(["ghost", "wraith"])),
        "tools.restrict() names unknown global tools \"ghost\", \"wraith\"; known global tools: \
         real"
    );
    // The reserved name is checked before unknown names.
    assert_eq!(
        message(&registry, Restriction::deny(["ghost", "run_code"])),
        "tools.restrict() cannot name reserved Code Mode presentation transport \"run_code\"; \
         restrict end-capability tools instead"
    );
    // `allow: []` is accepted and hides every inherited tool (own tools stay).
    registry
        .scope("A")
        .restrict(Restriction::allow(Vec::<String>::new()))
        .unwrap()
        .keep();
    assert_eq!(names(&registry, Some("A")), ["local"]);
    // `deny: []` is accepted and does nothing.
    registry
        .scope("B")
        .restrict(Restriction::deny(Vec::<String>::new()))
        .unwrap()
        .keep();
    assert_eq!(names(&registry, Some("B")), ["real"]);
}

#[tokio::test]
async fn scenario_109_inherited_layers_are_filterable() {
    let registry = Registry::new();
    let parent = registry.scope("parent");
    parent.register(raw("bash")).unwrap().keep();
    parent.register(raw("read")).unwrap().keep();
    let child = registry.child_scope("child", "parent");
    assert_eq!(names(&registry, Some("child")), ["bash", "read"]);
    child.restrict(Restriction::deny(["bash"])).unwrap().keep();
    assert_eq!(names(&registry, Some("child")), ["read"]);
    let r = exec(&registry, call("bash", json!({})).agent("child")).await;
    assert_eq!(r.code(), Some("UNKNOWN_TOOL"));
    let r = exec(&registry, call("read", json!({})).agent("child")).await;
    assert_eq!(r.text(), "ran:read");
    assert_eq!(names(&registry, Some("parent")), ["bash", "read"]);
}

#[test]
fn scenario_111_ancestor_restrictions_reach_descendants() {
    let registry = Registry::new();
    keep(&registry, raw("web"));
    let parent = registry.scope("parent");
    parent.register(raw("bash")).unwrap().keep();
    registry.child_scope("child", "parent");
    parent.restrict(Restriction::deny(["web"])).unwrap().keep();
    assert_eq!(names(&registry, Some("child")), ["bash"]);
    assert_eq!(names(&registry, Some("parent")), ["bash"]);
    assert!(registry.get("web", Some(&AgentId::new("child"))).is_none());
}

#[tokio::test]
async fn scenario_112_scoped_listeners_gate_only_their_agent() {
    let registry = Registry::new();
    keep(&registry, raw("t"));
    let seen = Seen::new();
    let s = seen.clone();
    registry
        .scope("A")
        .on_pre_execute(move |e: Arc<ToolExecution>, _next: PreNext| {
            s.put(e.agent().map(|a| a.as_str().to_lowercase()));
            async { Ok(PreToolDecision::deny("scoped veto")) }
        })
        .keep();
    let r = exec(&registry, call("t", json!({})).agent("A")).await;
    assert_eq!(to_json(&r), plain_failure("scoped veto"));
    let r = exec(&registry, call("t", json!({})).agent("B")).await;
    assert_eq!(r.text(), "ran:t");
    let r = exec(&registry, call("t", json!({}))).await;
    assert_eq!(r.text(), "ran:t");
    assert_eq!(seen.all(), [Some("a".to_owned())]);
    // Listeners admit the agent's descendants (events flow up the chain, never down).
    let child = registry.child_scope("A1", "A");
    let r = exec(&registry, call("t", json!({})).agent("A1")).await;
    assert_eq!(r.text(), "Error: scoped veto");
    child
        .on_pre_execute(|_e, _n: PreNext| async { Ok(PreToolDecision::deny("child veto")) })
        .keep();
    let r = exec(&registry, call("t", json!({})).agent("A")).await;
    assert_eq!(r.text(), "Error: scoped veto");
    let r = exec(&registry, call("t", json!({})).agent("A1")).await;
    assert_eq!(
        r.text(),
        "Error: scoped veto",
        "the ancestor's listener is outermost"
    );
}

#[test]
fn scenario_113_get_honours_restrictions() {
    let registry = Registry::new();
    keep(&registry, echo());
    registry
        .scope("A")
        .restrict(Restriction::deny(["echo"]))
        .unwrap()
        .keep();
    assert!(registry.get("echo", Some(&AgentId::new("A"))).is_none());
    assert!(registry.get("echo", None).is_some());
}

#[tokio::test]
async fn scenario_123_model_direct_call_under_code_mode() {
    let registry = Registry::new();
    registry.set_presentation_mode(PresentationMode::Code);
    let finalized = Counter::new();
    let f = finalized.clone();
    keep(
        &registry,
        raw("write").finalize_content(move |_, _| {
            f.bump();
            None
        }),
    );
    let trace = Trace::new();
    trace_all(&registry, &trace);
    let r = exec(&registry, call("write", json!({"text": "hello"}))).await;
    assert_eq!(
        to_json(&r),
        coded_failure(
            "unknown tool \"write\": only `run_code` is callable directly — call `write` from \
             inside a `run_code` program instead",
            "ToolNotFoundError",
            "UNKNOWN_TOOL"
        )
    );
    assert_eq!(trace.take(), ["result:UNKNOWN_TOOL"]);
    assert_eq!(finalized.get(), 0);
    // A name visible nowhere keeps the ordinary dispatch-stage message.
    let r = exec(&registry, call("nowhere", json!({}))).await;
    assert_eq!(r.text(), "Error: unknown tool \"nowhere\"");
    // Nested calls (with a parent) are exempt.
    let parent = Seen::new();
    let p = parent.clone();
    let _capture = registry.on_result(move |e: &ToolExecution, _r: &ToolExecutionResult| {
        p.put(e.token());
        Ok(())
    });
    exec(&registry, call("nowhere", json!({}))).await;
    let r = exec(&registry, call("write", json!({})).parent(parent.only())).await;
    assert_eq!(r.text(), "ran:write");
}

#[tokio::test]
async fn scenario_124_pre_aborted_collapsed_call() {
    let registry = Registry::new();
    let a = registry.scope("A");
    a.present_as(PresentationMode::Code).unwrap();
    let finalized = Counter::new();
    let f = finalized.clone();
    keep(
        &registry,
        raw("write").finalize_content(move |_, _| {
            f.bump();
            None
        }),
    );
    let caller = CancellationToken::new();
    caller.cancel();
    let r = exec(&registry, call_with("write", json!({}), &caller).agent("A")).await;
    assert_eq!(to_json(&r), aborted_before_dispatch());
    assert_eq!(
        finalized.get(),
        1,
        "the finalizer is kept for an aborted call"
    );
    // The agent's presentation applies to its calls only.
    let r = exec(&registry, call("write", json!({})).agent("B")).await;
    assert_eq!(r.text(), "ran:write");
}

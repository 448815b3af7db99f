//! `tools/change` notifications (spec §4.2.2, §4.2.3, §5.3.2): every addition and removal is
//! announced; a failing listener rolls an addition back, and a later addition succeeds.

use dsh_tools::registry::ChangeEvent;
use dsh_tools::*;
use serde_json::json;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

fn tool(name: &str) -> ToolDefinition {
    ToolDefinition::new(
        name,
        "t",
        json!({"type": "object"}),
        OutputDecl::text(),
        |_, _| async { Ok(json!("")) },
    )
}

#[test]
fn additions_and_removals_are_announced_in_order() {
    let registry = Registry::new();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let s = seen.clone();
    registry
        .on_change(move |e: &ChangeEvent| {
            s.lock().unwrap().push(e.clone());
            Ok(())
        })
        .keep();
    let global = registry.register(tool("a")).unwrap();
    let scope = registry.scope("A");
    let scoped = scope.register(tool("b")).unwrap();
    let restriction = scope.restrict(Restriction::deny(["a"])).unwrap();
    restriction.dispose();
    scoped.dispose();
    global.dispose();
    scope.dispose();
    let agent = Some(AgentId::new("A"));
    assert_eq!(
        *seen.lock().unwrap(),
        [
            ChangeEvent::ToolRegistered {
                name: "a".into(),
                agent: None
            },
            ChangeEvent::ToolRegistered {
                name: "b".into(),
                agent: agent.clone()
            },
            ChangeEvent::RestrictionAdded {
                agent: AgentId::new("A")
            },
            ChangeEvent::RestrictionRemoved {
                agent: AgentId::new("A")
            },
            ChangeEvent::ToolRemoved {
                name: "b".into(),
                agent
            },
            ChangeEvent::ToolRemoved {
                name: "a".into(),
                agent: None
            },
            ChangeEvent::ScopeDisposed {
                agent: AgentId::new("A")
            },
        ]
    );
}

#[test]
fn a_failing_listener_rolls_the_addition_back() {
    let registry = Registry::new();
    registry.register(tool("base")).unwrap().keep();
    let refuse = Arc::new(AtomicBool::new(true));
    let r = refuse.clone();
    let listener = registry.on_change(move |e: &ChangeEvent| {
        if r.load(Ordering::SeqCst)
            && !matches!(
                e,
                ChangeEvent::ToolRemoved { .. } | ChangeEvent::RestrictionRemoved { .. }
            )
        {
            panic!("listener broke");
        }
        Ok(())
    });
    let err = registry.register(tool("x")).unwrap_err();
    assert_eq!(err.to_string(), "listener broke");
    assert!(
        registry.get("x", None).is_none(),
        "the entry was rolled back"
    );
    let err = registry
        .scope("A")
        .restrict(Restriction::deny(["base"]))
        .unwrap_err();
    assert_eq!(err.to_string(), "listener broke");
    assert!(
        registry.get("base", Some(&AgentId::new("A"))).is_some(),
        "the restriction was rolled back"
    );
    // Once the listener accepts, the same registration succeeds.
    refuse.store(false, Ordering::SeqCst);
    registry.register(tool("x")).unwrap().keep();
    assert!(registry.get("x", None).is_some());
    drop(listener);
}

/// `dispose_all` given two handles of one name in one scope (a scope disposed and the name
/// registered again) removes the live registration, whatever the order of the handles.
#[test]
fn dispose_all_removes_a_name_registered_twice() {
    let registry = dsh_tools::Registry::new();
    let tool = || {
        dsh_tools::ToolDefinition::new(
            "t",
            "d",
            serde_json::json!({}),
            dsh_tools::OutputDecl::text(),
            |_, _| async { Ok(serde_json::json!("")) },
        )
    };
    let scope = registry.scope("A");
    let stale = scope.register(tool()).unwrap();
    registry.dispose_scope(&dsh_tools::AgentId::new("A"));
    let live = registry.scope("A").register(tool()).unwrap();
    let agent = dsh_tools::AgentId::new("A");
    assert!(registry.get("t", Some(&agent)).is_some());
    registry.dispose_all([live, stale]);
    assert!(
        registry.get("t", Some(&agent)).is_none(),
        "the live registration is gone"
    );
}

//! A search never reveals a tool its scope could not call: shadowed, restricted, another
//! scope's, or forbidden to the caller by scope rules; and it stays current through every
//! registration, replacement and disposal.

use super::{call, tool};
use dsh_tools::pipeline::{Caller, ScopeRules};
use dsh_tools::registry::{DeferRule, TOOL_SEARCH, ToolQuery};
use dsh_tools::*;
use proptest::prelude::*;
use serde_json::json;
use std::collections::{BTreeSet, HashSet};

fn found(registry: &Registry, query: ToolQuery) -> Vec<String> {
    registry
        .search(&query)
        .into_iter()
        .map(|m| m.tool.name().to_owned())
        .collect()
}

#[test]
fn restrictions_shadows_and_other_scopes_hide_tools() {
    let registry = Registry::new();
    registry
        .register(tool("delete_repo", "Delete a repository for good"))
        .unwrap()
        .keep();
    registry
        .register(tool("list_repos", "List repositories"))
        .unwrap()
        .keep();
    let guest = registry.scope("guest");
    guest
        .restrict(Restriction::deny(["delete_repo"]))
        .unwrap()
        .keep();
    let admin = registry.scope("admin");
    admin
        .register(tool("list_repos", "List every repository, archived too"))
        .unwrap()
        .keep();
    admin
        .register(tool("purge_repo", "Purge a repository"))
        .unwrap()
        .keep();
    let query = || ToolQuery::new("repository").limit(10);
    let all: BTreeSet<String> = found(&registry, query()).into_iter().collect();
    assert_eq!(
        all,
        BTreeSet::from(["delete_repo".into(), "list_repos".into()])
    );
    assert_eq!(found(&registry, query().agent("guest")), ["list_repos"]);
    let admin_found = registry.search(&query().agent("admin"));
    let names: BTreeSet<&str> = admin_found.iter().map(|m| m.tool.name()).collect();
    assert_eq!(
        names,
        BTreeSet::from(["delete_repo", "list_repos", "purge_repo"])
    );
    // The admin sees its own list_repos, not the global one it shadows.
    let list = admin_found
        .iter()
        .find(|m| m.tool.name() == "list_repos")
        .unwrap();
    assert_eq!(
        list.tool.description(),
        "List every repository, archived too"
    );
}

#[tokio::test]
async fn scope_rules_hide_what_a_caller_may_not_call() {
    let registry = Registry::new();
    registry
        .register(tool("read_mail", "Read mail").defer_loading(true))
        .unwrap()
        .keep();
    registry
        .register(tool("send_mail", "Send mail").defer_loading(true))
        .unwrap()
        .keep();
    let rules = registry.scope_rules(ScopeRules::new().tool("send_mail", ["mail:send"]));
    let reader = Caller::new("r").scopes(["mail:read"]);
    let sender = Caller::new("s").scopes(["mail:read", "mail:send"]);
    let query = || ToolQuery::new("mail").limit(10);
    assert_eq!(
        found(&registry, query().caller(reader.clone())),
        ["read_mail"]
    );
    assert_eq!(found(&registry, query().caller(sender.clone())).len(), 2);
    // tool_search runs as its call's caller.
    let input = ToolExecutionInput::new(
        "c",
        TOOL_SEARCH,
        json!({"query": "mail"}),
        CancellationToken::new(),
    )
    .caller(reader.clone());
    let result = registry.execute(input).await;
    assert_eq!(
        result.value().unwrap()["tools"].as_array().unwrap().len(),
        1
    );
    // The rules are a guard too.
    let input = ToolExecutionInput::new("c", "send_mail", json!({}), CancellationToken::new())
        .caller(reader.clone());
    assert!(registry.execute(input).await.is_error());
    rules.dispose();
    assert_eq!(found(&registry, query().caller(reader.clone())).len(), 2);
    let input = ToolExecutionInput::new("c", "send_mail", json!({}), CancellationToken::new())
        .caller(reader);
    assert!(!registry.execute(input).await.is_error());
}

#[tokio::test]
async fn tool_search_finds_only_what_the_calling_scope_defers() {
    let registry = Registry::new();
    registry
        .register(tool("global_report", "Build a report"))
        .unwrap()
        .keep();
    let a = registry.scope("a");
    a.register(tool("a_report", "Build a report for a"))
        .unwrap()
        .keep();
    a.defer_loading(DeferRule::all());
    let b = registry.scope("b");
    b.register(tool("b_report", "Build a report for b").defer_loading(true))
        .unwrap()
        .keep();
    let names = |result: ToolExecutionResult| -> BTreeSet<String> {
        result.value().unwrap()["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["name"].as_str().unwrap().to_owned())
            .collect()
    };
    let from_a = names(
        call(
            &registry,
            Some("a"),
            TOOL_SEARCH,
            json!({"query": "report"}),
        )
        .await,
    );
    assert_eq!(
        from_a,
        BTreeSet::from(["a_report".into(), "global_report".into()])
    );
    let from_b = names(
        call(
            &registry,
            Some("b"),
            TOOL_SEARCH,
            json!({"query": "report"}),
        )
        .await,
    );
    assert_eq!(from_b, BTreeSet::from(["b_report".into()]));
}

#[derive(Clone, Debug)]
enum Op {
    Register { scope: Option<u8>, name: u8 },
    Dispose(usize),
    DisposeAll(usize),
    Replace,
    Restrict { scope: u8, name: u8 },
    DisposeScope(u8),
    Search,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (proptest::option::of(0u8..3), 0u8..8).prop_map(|(scope, name)| Op::Register { scope, name }),
        2 => (0usize..64).prop_map(Op::Dispose),
        1 => (0usize..64).prop_map(Op::DisposeAll),
        1 => Just(Op::Replace),
        1 => (0u8..3, 0u8..8).prop_map(|(scope, name)| Op::Restrict { scope, name }),
        1 => (0u8..3).prop_map(Op::DisposeScope),
        2 => Just(Op::Search),
    ]
}

/// Every scope's search for a word every tool has returns exactly that scope's view.
fn agrees(registry: &Registry) -> Result<(), TestCaseError> {
    for agent in [None, Some("s0"), Some("s1"), Some("s2")] {
        let id = agent.map(AgentId::new);
        let view: BTreeSet<String> = registry
            .tools(id.as_ref())
            .iter()
            .map(|t| t.name().to_owned())
            .collect();
        let mut query = ToolQuery::new("widget").limit(1000);
        if let Some(agent) = agent {
            query = query.agent(agent);
        }
        let seen: Vec<String> = found(registry, query);
        let set: BTreeSet<String> = seen.iter().cloned().collect();
        prop_assert_eq!(set.len(), seen.len(), "a tool found twice");
        prop_assert_eq!(&set, &view, "agent {:?}", agent);
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]
    #[test]
    fn searches_agree_with_views(ops in proptest::collection::vec(op(), 1..40)) {
        let registry = Registry::new();
        // Each registration with its scope and a serial; `alive`, the serials still registered.
        let mut live: Vec<(Registration, Option<u8>, u64)> = Vec::new();
        let mut alive: HashSet<u64> = HashSet::new();
        let mut serial = 0u64;
        let mut register = |registry: &Registry, live: &mut Vec<_>, alive: &mut HashSet<u64>, scope: Option<u8>, definition| {
            let done = match scope {
                None => registry.register(definition),
                Some(s) => registry.scope(format!("s{s}").as_str()).register(definition),
            };
            if let Ok(registration) = done {
                serial += 1;
                live.push((registration, scope, serial));
                alive.insert(serial);
            }
        };
        // The index is built by the first search, then kept by every change.
        registry.search(&ToolQuery::new("widget"));
        for op in ops {
            match op {
                Op::Register { scope, name } => {
                    let definition = tool(&format!("t{name}"), &format!("widget number {name}"));
                    register(&registry, &mut live, &mut alive, scope, definition);
                }
                Op::Dispose(i) if !live.is_empty() => {
                    let (registration, _, serial) = live.swap_remove(i % live.len());
                    registration.dispose();
                    alive.remove(&serial);
                }
                Op::DisposeAll(n) => {
                    let n = n.min(live.len());
                    let gone: Vec<_> = live.drain(..n).collect();
                    for (_, _, serial) in &gone {
                        alive.remove(serial);
                    }
                    registry.dispose_all(gone.into_iter().map(|g| g.0));
                }
                Op::Replace if !live.is_empty() => {
                    // Dispose and register again under the same name: a new registration id.
                    let (old, _, serial) = live.pop().unwrap();
                    old.dispose();
                    alive.remove(&serial);
                    register(&registry, &mut live, &mut alive, None, tool("t0", "widget again"));
                }
                Op::Restrict { scope, name } => {
                    if let Ok(r) = registry
                        .scope(format!("s{scope}").as_str())
                        .restrict(Restriction::deny([format!("t{name}")]))
                    {
                        r.keep();
                    }
                }
                Op::DisposeScope(s) => {
                    registry.dispose_scope(&AgentId::new(format!("s{s}")));
                    for (_, scope, serial) in &live {
                        if *scope == Some(s) {
                            alive.remove(serial);
                        }
                    }
                }
                Op::Search => agrees(&registry)?,
                _ => {}
            }
            // The index holds every registration still registered, and nothing else.
            prop_assert_eq!(registry.indexed_tools(), Some(alive.len()));
        }
        agrees(&registry)?;
    }
}

/// A caller the scope rules refuse is refused before any pre-execute hook runs, so nobody is
/// asked to approve a call that would be refused, and the failure is coded `SCOPE_DENIED`.
#[tokio::test]
async fn a_scope_denial_comes_before_hooks_and_approvals() {
    use dsh_tools::{ApprovalOutcome, ApprovalRequest, PreToolDecision, ToolExecution};
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};
    let registry = Registry::new();
    registry
        .register(tool("send_mail", "Send mail"))
        .unwrap()
        .keep();
    registry
        .scope_rules(ScopeRules::new().tool("send_mail", ["mail:send"]))
        .keep();
    let hooks = Arc::new(AtomicUsize::new(0));
    let seen = Arc::clone(&hooks);
    registry
        .on_pre_execute(move |_: Arc<ToolExecution>, _next| {
            seen.fetch_add(1, Ordering::SeqCst);
            async { Ok(PreToolDecision::ask(Some("sending mail"))) }
        })
        .keep();
    let asked = Arc::new(AtomicUsize::new(0));
    let count = Arc::clone(&asked);
    registry.set_approval_service(move |_: ApprovalRequest| {
        count.fetch_add(1, Ordering::SeqCst);
        async { Ok(ApprovalOutcome::AllowedOnce) }
    });
    let call = |caller: Caller| {
        ToolExecutionInput::new("c", "send_mail", json!({}), CancellationToken::new())
            .agent("assistant")
            .caller(caller)
    };
    let refused = registry
        .execute(call(Caller::new("r").scopes(["mail:read"])))
        .await;
    assert_eq!(refused.code(), Some("SCOPE_DENIED"));
    assert_eq!(
        (hooks.load(Ordering::SeqCst), asked.load(Ordering::SeqCst)),
        (0, 0)
    );
    let sent = registry
        .execute(call(Caller::new("s").scopes(["mail:send"])))
        .await;
    assert!(!sent.is_error(), "{sent:?}");
    assert_eq!(
        (hooks.load(Ordering::SeqCst), asked.load(Ordering::SeqCst)),
        (1, 1)
    );
}

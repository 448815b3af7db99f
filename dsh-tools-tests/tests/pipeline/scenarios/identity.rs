//! I. Arguments, identity and observers (spec §6.1, §6.2, §6.11).

use super::support::*;
use dsh_tools::*;
use serde_json::{Value, json};
use std::collections::HashSet;
use std::sync::Arc;

#[tokio::test]
async fn scenario_093_one_token_per_execution_detached_arguments() {
    let registry = Registry::new();
    let (safe_runs, danger_runs) = (Counter::new(), Counter::new());
    let body_tokens = Seen::new();
    let (runs, seen) = (safe_runs.clone(), body_tokens.clone());
    keep(
        &registry,
        ToolDefinition::new(
            "safe",
            "records what it got",
            json!({"type": "object"}),
            OutputDecl::text(),
            move |args: Arc<Value>, ctx: ToolRunContext| {
                runs.bump();
                assert_eq!(*args, json!({"source": true}));
                seen.put(ctx.execution().token());
                async { Ok(json!("safe")) }
            },
        ),
    );
    keep(&registry, counted("danger", &danger_runs));
    let tokens = Seen::new();
    let tk = tokens.clone();
    registry
        .on_pre_execute(move |e: Arc<ToolExecution>, next: PreNext| {
            tk.put(e.token());
            assert!(e.arguments().is_some());
            next.run()
        })
        .keep();
    let tk = tokens.clone();
    registry
        .on_execute(move |c: ExecuteCall, next: ExecuteNext| {
            tk.put(c.execution.token());
            next.run()
        })
        .keep();
    let tk = tokens.clone();
    registry
        .on_post_execute(move |e: Arc<ToolExecution>, _r, next: PostNext| {
            tk.put(e.token());
            next.run()
        })
        .keep();
    let a = registry.scope("A");
    a.guard(|e: &ToolExecution| (e.name() == "danger").then(|| "danger denied".to_owned()))
        .keep();
    let scoped_results = Counter::new();
    let sr = scoped_results.clone();
    a.on_result(move |_e: &ToolExecution, _r: &ToolExecutionResult| {
        sr.bump();
        Ok(())
    })
    .keep();
    let r = exec(&registry, call("danger", json!({})).agent("A")).await;
    assert_eq!(to_json(&r), plain_failure("danger denied"));
    let arguments = json!({"source": true});
    let r = exec(&registry, call("safe", arguments.clone()).agent("A")).await;
    assert_eq!(r.text(), "safe");
    assert_eq!(arguments, json!({"source": true}));
    let distinct: HashSet<ExecutionToken> = tokens.all().into_iter().collect();
    assert_eq!(
        tokens.all().len(),
        5,
        "danger: pre, post; safe: pre, around, post"
    );
    assert_eq!(distinct.len(), 2);
    assert!(distinct.contains(&body_tokens.only()));
    assert_eq!((safe_runs.get(), danger_runs.get()), (1, 0));
    assert_eq!(scoped_results.get(), 2);
}

#[tokio::test]
async fn scenario_094_non_lossless_arguments() {
    let registry = Registry::new();
    let runs = Counter::new();
    keep(&registry, counted("t", &runs));
    let pre = Counter::new();
    let p = pre.clone();
    registry
        .on_pre_execute(move |_e, next: PreNext| {
            p.bump();
            next.run()
        })
        .keep();
    type Observation = (Option<Value>, Option<ExecutionToken>, Signal);
    let scoped: Seen<Observation> = Seen::new();
    let s = scoped.clone();
    registry
        .scope("A")
        .on_result(move |e: &ToolExecution, r: &ToolExecutionResult| {
            assert!(r.is_error());
            s.put((e.arguments().cloned(), e.parent(), e.signal().clone()));
            Ok(())
        })
        .keep();
    let global = Counter::new();
    let g = global.clone();
    registry
        .on_result(move |_e: &ToolExecution, _r: &ToolExecutionResult| {
            g.bump();
            Ok(())
        })
        .keep();
    let parent = Seen::new();
    let pt = parent.clone();
    let _capture = registry.on_execute(move |c: ExecuteCall, next: ExecuteNext| {
        pt.put(c.execution.token());
        next.run()
    });
    exec(&registry, call("t", json!({}))).await;
    _capture.dispose();
    let parent = parent.only();
    let (pre_before, global_before) = (pre.get(), global.get());

    let signal = CancellationToken::new();
    let input = call_with("t", json!({"invalid": negative_zero()}), &signal)
        .agent("A")
        .parent(parent);
    let r = exec(&registry, input).await;
    assert!(r.is_error());
    assert!(
        r.text().contains("losslessly JSON-serializable"),
        "{}",
        r.text()
    );
    assert_eq!(pre.get(), pre_before, "no pre-execute");
    assert_eq!(runs.get(), 1, "no body");
    let (arguments, seen_parent, seen_signal) = scoped.only();
    assert_eq!(arguments, None);
    assert_eq!(seen_parent, Some(parent));
    assert!(fires_with(&seen_signal, &signal));
    // The agent-less call is observed only globally.
    exec(&registry, call("t", json!({"invalid": negative_zero()}))).await;
    assert_eq!(global.get() - global_before, 2);
    assert_eq!(scoped.all().len(), 1);
}

use crate::warnings;
use warnings::Warnings;

#[tokio::test]
async fn scenario_098_observers_are_isolated() {
    let warnings = Warnings::default();
    let _subscriber = tracing::subscriber::set_default(warnings.clone());
    let registry = Registry::new();
    keep(&registry, echo());
    registry
        .on_execute(|_c, next: ExecuteNext| next.run())
        .keep();
    registry
        .on_execute_first(|_c, next: ExecuteNext| async move {
            next.run().await?;
            Ok(
                ToolExecutionResult::failure(ToolError::new("outer failure"))
                    .with_content(blocks("outer failure")),
            )
        })
        .keep();
    let normal = Seen::new();
    let n = normal.clone();
    registry
        .scope("A")
        .on_result(move |e: &ToolExecution, r: &ToolExecutionResult| {
            assert_eq!(e.agent(), Some(&AgentId::new("A")));
            assert_eq!(e.arguments(), Some(&json!({"text": "hi"})));
            assert_eq!(r.content(), blocks("outer failure"));
            n.put(r.is_error());
            Ok(())
        })
        .keep();
    registry
        .on_result(|_e: &ToolExecution, _r: &ToolExecutionResult| {
            // A thrown value that cannot be printed.
            std::panic::panic_any(42_u8)
        })
        .keep();
    registry
        .on_result(|_e: &ToolExecution, _r: &ToolExecutionResult| {
            Err(ToolError::new("async observer failure"))
        })
        .keep();
    let n = normal.clone();
    registry
        .on_result(move |_e: &ToolExecution, r: &ToolExecutionResult| {
            n.put(r.is_error());
            Ok(())
        })
        .keep();
    let r = exec(&registry, call("echo", json!({"text": "hi"})).agent("A")).await;
    assert_eq!(
        to_json(&r),
        json!({"content": t("outer failure"), "isError": true,
               "error": {"message": "outer failure"}})
    );
    assert_eq!(normal.all(), [true, true]);
    let warnings = warnings.0.lock().unwrap().clone();
    assert_eq!(
        warnings,
        [
            "tool \"echo\" (c1): tools/result observer failed: <unprintable thrown value>",
            "tool \"echo\" (c1): tools/result observer failed: async observer failure",
        ]
    );
}

#[tokio::test]
async fn scenario_099_execution_view_during_the_pipeline() {
    let registry = Registry::new();
    let body = Seen::new();
    let b = body.clone();
    keep(
        &registry,
        ToolDefinition::new(
            "t",
            "records its execution",
            json!({"type": "object"}),
            OutputDecl::text(),
            move |_, ctx: ToolRunContext| {
                b.put(ctx.execution().token());
                async { Ok(json!("ok")) }
            },
        ),
    );
    let pre = Seen::new();
    let p = pre.clone();
    registry
        .on_pre_execute(move |e: Arc<ToolExecution>, next: PreNext| {
            p.put((
                e.call_id().to_owned(),
                e.root_call_id().to_owned(),
                e.token(),
                e.arguments().cloned(),
            ));
            next.run()
        })
        .keep();
    exec(&registry, call("t", json!({"a": 1}))).await;
    let (call_id, root, token, arguments) = pre.only();
    assert_eq!((call_id.as_str(), root.as_str()), ("c1", "c1"));
    assert_eq!(token, body.only());
    assert_eq!(arguments, Some(json!({"a": 1})));
    exec(&registry, call("t", json!({})).root_call_id("root-7")).await;
    assert_eq!(pre.all()[1].1, "root-7");
}

/// Spec §0 / §11 (recursive `Drop`): arguments come from the model and may be nested
/// arbitrarily deep (the workspace parses with `unbounded_depth`); the registry checks and
/// frees them without recursion, so a call cannot overflow the stack.
#[test]
fn spec_0_deep_arguments_do_not_overflow_the_stack() {
    let deep = |leaf: Value| {
        let mut v = leaf;
        for _ in 0..100_000 {
            v = Value::Array(vec![v]);
        }
        // Not `json!({"deep": v})`: the macro copies an interpolated value recursively.
        let mut map = serde_json::Map::new();
        map.insert("deep".to_owned(), v);
        Value::Object(map)
    };
    let run = move || {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        let registry = Registry::new();
        keep(&registry, raw("t"));
        let r = runtime.block_on(registry.execute(call("t", deep(json!(1)))));
        assert_eq!(r.text(), "ran:t");
        let r = runtime.block_on(registry.execute(call("t", deep(negative_zero()))));
        assert!(r.text().contains("losslessly JSON-serializable"));
    };
    std::thread::Builder::new()
        .stack_size(1 << 20)
        .spawn(run)
        .unwrap()
        .join()
        .expect("the call ran out of stack");
}

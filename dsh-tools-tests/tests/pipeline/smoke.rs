//! A first pass over the pipeline: success, hooks in order, unknown tool, panics, deny.

use dsh_tools::*;
use serde_json::{Value, json};
use std::sync::{Arc, Mutex};

fn echo() -> ToolDefinition {
    ToolDefinition::new(
        "echo",
        "echo arguments back",
        json!({"type": "object", "properties": {"text": {"type": "string"}}}),
        OutputDecl::text(),
        |args, _| async move { Ok(args.get("text").cloned().unwrap_or(json!(""))) },
    )
}

fn call(name: &str, args: Value) -> ToolExecutionInput {
    ToolExecutionInput::new("c1", name, args, CancellationToken::new())
}

#[tokio::test]
async fn success_and_hook_order() {
    let registry = Registry::new();
    registry.register(echo()).unwrap().keep();
    let trace = Arc::new(Mutex::new(Vec::<String>::new()));
    let t = trace.clone();
    let _pre = registry.on_pre_execute(move |_e, next: PreNext| {
        let t = t.clone();
        async move {
            t.lock().unwrap().push("pre".into());
            next.run().await
        }
    });
    let t = trace.clone();
    let _around = registry.on_execute(move |_c, next: ExecuteNext| {
        let t = t.clone();
        async move {
            t.lock().unwrap().push("around:before".into());
            let r = next.run().await;
            t.lock().unwrap().push("around:after".into());
            r
        }
    });
    let t = trace.clone();
    let _post = registry.on_post_execute(move |_e, _r, next: PostNext| {
        let t = t.clone();
        async move {
            t.lock().unwrap().push("post".into());
            next.run().await
        }
    });
    let t = trace.clone();
    let _obs = registry.on_result(move |_e: &ToolExecution, r: &ToolExecutionResult| {
        t.lock().unwrap().push(format!("result:{}", r.text()));
        Ok(())
    });
    let r = registry.execute(call("echo", json!({"text": "hi"}))).await;
    assert_eq!(
        serde_json::to_value(&r).unwrap(),
        json!({"content": [{"type": "text", "text": "hi"}], "isError": false, "value": "hi"})
    );
    assert_eq!(
        *trace.lock().unwrap(),
        ["pre", "around:before", "around:after", "post", "result:hi"]
    );
}

#[tokio::test]
async fn unknown_panicking_and_denied() {
    let registry = Registry::new();
    registry.register(echo()).unwrap().keep();
    registry
        .register(ToolDefinition::new(
            "boom",
            "panics",
            json!({}),
            OutputDecl::text(),
            |_, _| async { panic!("exploded") },
        ))
        .unwrap()
        .keep();
    let r = registry.execute(call("nope", json!({}))).await;
    assert_eq!(
        serde_json::to_value(&r).unwrap(),
        json!({"content": [{"type": "text", "text": "Error: unknown tool \"nope\""}], "isError": true,
               "error": {"message": "unknown tool \"nope\"", "info": {"name": "ToolNotFoundError", "code": "UNKNOWN_TOOL"}}})
    );
    let r = registry.execute(call("boom", json!({}))).await;
    assert_eq!(r.text(), "Error: exploded");
    let _deny =
        registry.on_pre_execute(|_e, _n| async { Ok(PreToolDecision::deny("denied by policy")) });
    let r = registry.execute(call("echo", json!({}))).await;
    assert_eq!(r.text(), "Error: denied by policy");
    assert_eq!(r.error().unwrap().info(), None);
}

//! Values a tool returns, 100,000 levels deep, on every path a result value takes: a tool that
//! fetches JSON from the web returns what the web sends.

use super::{DEPTH, deep_array, input, object, on_worker_stack};
use dsh_tools::json::drop_deep;
use dsh_tools::provider::ProviderExport;
use dsh_tools::{OutputDecl, Registry, ToolDefinition, ToolExecutionResult};
use serde_json::{Value, json};

fn deep_tool(name: &str, output: Value) -> ToolDefinition {
    ToolDefinition::new(
        name,
        "returns deep JSON",
        json!({"type": "object"}),
        OutputDecl::json(output),
        |_, _| async { Ok(deep_array(DEPTH)) },
    )
}

#[test]
fn a_deep_value_that_breaks_the_output_schema_fails_the_call() {
    on_worker_stack(|| async {
        let registry = Registry::new();
        let tool = deep_tool("deep", json!({"type": "string"}));
        registry.register(tool).unwrap().keep();
        let result = registry.execute(input("deep", json!({}))).await;
        assert_eq!(
            result.code(),
            Some("INVALID_TOOL_OUTPUT"),
            "{}",
            result.text()
        );
        // And nested in an object whose schema constrains an inner level.
        let nested = ToolDefinition::new(
            "nested",
            "returns deep JSON under a key",
            json!({"type": "object"}),
            OutputDecl::json(
                json!({"type": "object", "properties": {"a": {"type": "array", "items": {"type": "string"}}}}),
            ),
            |_, _| async { Ok(object("a", deep_array(DEPTH))) },
        );
        registry.register(nested).unwrap().keep();
        let result = registry.execute(input("nested", json!({}))).await;
        assert_eq!(
            result.code(),
            Some("INVALID_TOOL_OUTPUT"),
            "{}",
            result.text()
        );
    });
}

#[test]
fn a_wrapper_returning_a_deep_success_is_revalidated_without_overflow() {
    on_worker_stack(|| async {
        let registry = Registry::new();
        let strict = ToolDefinition::new(
            "strict",
            "declares a string",
            json!({"type": "object"}),
            OutputDecl::json(json!({"type": "string"})),
            |_, _| async { Ok(json!("fine")) },
        );
        let open = ToolDefinition::new(
            "open",
            "declares anything",
            json!({"type": "object"}),
            OutputDecl::json(json!({})),
            |_, _| async { Ok(json!("fine")) },
        );
        registry.register(strict).unwrap().keep();
        registry.register(open).unwrap().keep();
        registry
            .on_execute(|_exec, _next| async move {
                Ok(ToolExecutionResult::success(deep_array(DEPTH)))
            })
            .keep();
        let result = registry.execute(input("strict", json!({}))).await;
        assert_eq!(
            result.code(),
            Some("INVALID_TOOL_OUTPUT"),
            "{}",
            result.text()
        );
        let result = registry.execute(input("open", json!({}))).await;
        assert!(!result.is_error(), "{}", result.text());
        let text = result.text();
        assert!(text.starts_with("[[[["), "{}", &text[..40.min(text.len())]);
    });
}

#[test]
fn the_public_decode_helper_survives_a_deep_value() {
    on_worker_stack(|| async {
        let deep = deep_array(DEPTH);
        let decoded = dsh_tools::json::decode::<Value>(&deep);
        let error = decoded.expect_err("past the decode depth limit");
        assert!(error.to_string().contains("deeper than"), "{error}");
        // Within the limit it decodes as before.
        let shallow = deep_array(100);
        let copy: Value = dsh_tools::json::decode(&shallow).unwrap();
        assert!(dsh_tools::json::json_equal(&copy, &shallow));
        drop_deep(copy);
        drop_deep(shallow);
        drop_deep(deep);
    });
}

#[test]
fn a_deep_success_renders_presents_and_formats_for_every_provider() {
    use dsh_tools::provider::{Dialect, Provider, format_results};
    on_worker_stack(|| async {
        let registry = Registry::new();
        registry
            .register(deep_tool("deep", json!({})))
            .unwrap()
            .keep();
        let result = registry.execute(input("deep", json!({}))).await;
        assert!(!result.is_error(), "{}", result.text());
        // The generic result card of a tool without a presenter.
        let view = registry.present_result("deep", &json!({}), &result, None);
        let shown = serde_json::to_string(&view).unwrap();
        assert!(shown.len() < 1 << 20);
        drop(view);
        let tools = registry
            .provider_tools(None, Dialect::new(Provider::OpenAiChat))
            .unwrap();
        let reply = json!({"choices": [{"message": {"role": "assistant", "tool_calls": [{
            "id": "c1", "type": "function", "function": {"name": "deep", "arguments": "{}"}}]}}]});
        let calls = tools.parse_calls(&reply).unwrap();
        for provider in Provider::ALL {
            let messages = format_results(Dialect::new(provider), &[(&calls[0], &result)]);
            assert!(!messages.is_empty());
            messages.into_iter().for_each(drop_deep);
        }
        drop(calls);
        drop(result);
    });
}

/// Arguments a model sent 100,000 levels deep as a value (Anthropic's `input`, Gemini's `args`):
/// parsed, copied, run and dropped without recursion.
#[test]
fn provider_replies_with_deep_argument_values_parse_copy_and_drop() {
    use dsh_tools::provider::{Dialect, Provider};
    on_worker_stack(|| async {
        let registry = Registry::new();
        let tool = ToolDefinition::new(
            "take",
            "takes anything",
            json!({"type": "object"}),
            OutputDecl::text(),
            |_, _| async { Ok(json!("took it")) },
        );
        registry.register(tool).unwrap().keep();
        for (provider, reply) in [
            (
                Provider::Anthropic,
                object(
                    "content",
                    Value::Array(vec![{
                        let mut block = serde_json::Map::new();
                        block.insert("type".into(), json!("tool_use"));
                        block.insert("id".into(), json!("t1"));
                        block.insert("name".into(), json!("take"));
                        block.insert("input".into(), object("a", deep_array(DEPTH)));
                        Value::Object(block)
                    }]),
                ),
            ),
            (
                Provider::Gemini,
                object(
                    "candidates",
                    Value::Array(vec![object(
                        "content",
                        object(
                            "parts",
                            Value::Array(vec![object("functionCall", {
                                let mut call = serde_json::Map::new();
                                call.insert("name".into(), json!("take"));
                                call.insert("args".into(), object("a", deep_array(DEPTH)));
                                Value::Object(call)
                            })]),
                        ),
                    )]),
                ),
            ),
        ] {
            let tools = registry
                .provider_tools(None, Dialect::new(provider))
                .unwrap();
            let calls = tools.parse_calls(&reply).unwrap();
            assert_eq!(calls.len(), 1, "{provider:?}");
            let copy = calls.clone();
            let result = copy[0].execute(&registry, Default::default()).await;
            assert_eq!(result.text(), "took it", "{provider:?}");
            drop(copy);
            drop(calls);
            drop_deep(reply);
        }
    });
}

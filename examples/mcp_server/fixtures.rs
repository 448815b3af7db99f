//! The tools the official MCP conformance suite (`@modelcontextprotocol/conformance` 0.1.16)
//! calls in its tools scenarios, as ordinary registry tools.

use dsh_tools::{ContentBlock, OutputDecl, Registry, ToolDefinition, ToolError, ToolRunContext};
use serde_json::{Value, json};

/// A 1x1 red PNG.
const PNG: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==";
/// A 44-byte WAV header with no samples.
const WAV: &str = "UklGRiQAAABXQVZFZm10IBAAAAABAAEAQB8AAIA+AAACABAAZGF0YQAAAAA=";

fn block(value: Value) -> ContentBlock {
    ContentBlock::new(value).expect("a fixture block is a valid content block")
}

fn resource() -> ContentBlock {
    block(json!({
        "type": "resource",
        "resource": {"uri": "test://example-resource", "mimeType": "text/plain",
                     "text": "This is an embedded resource content."}
    }))
}

/// A tool with no arguments whose content is `blocks`.
fn fixed(name: &str, description: &str, blocks: fn() -> Vec<ContentBlock>) -> ToolDefinition {
    ToolDefinition::new(
        name,
        description,
        json!({"type": "object", "properties": {}}),
        OutputDecl::new(json!({"type": "null"}), move |_, _| blocks()),
        |_, _| async { Ok(Value::Null) },
    )
}

/// Registers the conformance fixture tools.
pub(crate) fn register(registry: &Registry) -> Result<(), Box<dyn std::error::Error>> {
    let tools = [
        fixed("test_simple_text", "Returns simple text content.", || {
            vec![ContentBlock::text(
                "This is a simple text response for testing.",
            )]
        }),
        fixed("test_image_content", "Returns image content.", || {
            vec![block(
                json!({"type": "image", "data": PNG, "mimeType": "image/png"}),
            )]
        }),
        fixed("test_audio_content", "Returns audio content.", || {
            vec![block(
                json!({"type": "audio", "data": WAV, "mimeType": "audio/wav"}),
            )]
        }),
        fixed(
            "test_embedded_resource",
            "Returns an embedded resource.",
            || vec![resource()],
        ),
        fixed(
            "test_multiple_content_types",
            "Returns text, an image and a resource.",
            || {
                vec![
                    ContentBlock::text("Multiple content types test:"),
                    block(json!({"type": "image", "data": PNG, "mimeType": "image/png"})),
                    resource(),
                ]
            },
        ),
        ToolDefinition::new(
            "test_error_handling",
            "Always fails.",
            json!({"type": "object", "properties": {}}),
            OutputDecl::text(),
            |_, _| async {
                Err(ToolError::coded(
                    "TestError",
                    "TEST_ERROR",
                    "This tool intentionally returns an error for testing",
                ))
            },
        ),
        ToolDefinition::new(
            "test_tool_with_progress",
            "Reports progress three times.",
            json!({"type": "object", "properties": {}}),
            OutputDecl::text(),
            |_, ctx: ToolRunContext| async move {
                for step in 0..=2u32 {
                    ctx.report_progress(f64::from(step * 50), Some(100.0), None);
                    tokio::time::sleep(std::time::Duration::from_millis(20)).await;
                }
                Ok(json!("Progress test completed"))
            },
        ),
        // Raw definitions keep their parameters verbatim: `$schema`, `$defs` and `$ref` are
        // what the scenario checks are preserved.
        ToolDefinition::new(
            "json_schema_2020_12_tool",
            "Tool with JSON Schema 2020-12 features",
            json!({
                "$schema": "https://json-schema.org/draft/2020-12/schema",
                "type": "object",
                "$defs": {"address": {"type": "object", "properties": {
                    "street": {"type": "string"}, "city": {"type": "string"}}}},
                "properties": {"name": {"type": "string"}, "address": {"$ref": "#/$defs/address"}},
                "additionalProperties": false
            }),
            OutputDecl::text(),
            |args, _| async move { Ok(json!(format!("received {args}"))) },
        ),
    ];
    for tool in tools {
        registry.register(tool)?;
    }
    Ok(())
}

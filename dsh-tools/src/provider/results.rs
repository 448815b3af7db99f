//! Results back into each provider's messages.

use super::calls::ParsedCall;
use super::dialect::{Dialect, Provider};
use crate::call::ToolExecutionResult;
use crate::content::ContentBlock;
use crate::json::to_compact_string;
use serde_json::{Value, json};

/// The text of a result's content: text blocks as they are, other blocks as their JSON.
fn text(result: &ToolExecutionResult) -> String {
    let parts: Vec<String> = result
        .content()
        .iter()
        .map(|b| match b.as_text() {
            Some(t) if b.kind() == "text" => t.to_owned(),
            _ => to_compact_string(&b.to_json()),
        })
        .collect();
    parts.join("\n")
}

/// A block as an Anthropic content block (`tool_result` takes text and images).
fn anthropic_block(block: &ContentBlock) -> Value {
    if let Some(t) = block.as_text()
        && block.kind() == "text"
    {
        return json!({"type": "text", "text": t});
    }
    let value = block.to_json();
    if block.kind() == "image"
        && let (Some(data), Some(mime)) = (
            value.get("data").and_then(Value::as_str),
            value.get("mimeType").and_then(Value::as_str),
        )
    {
        return json!({"type": "image", "source": {"type": "base64", "media_type": mime, "data": data}});
    }
    json!({"type": "text", "text": to_compact_string(&value)})
}

/// The text of every additional context of `results`, in call order, message by message.
fn contexts(results: &[(&ParsedCall, &ToolExecutionResult)]) -> Vec<String> {
    results
        .iter()
        .flat_map(|(_, r)| r.additional_contexts().unwrap_or_default())
        .map(|m| {
            let parts: Vec<String> = m
                .content
                .iter()
                .map(|b| {
                    b.as_text()
                        .map_or_else(|| to_compact_string(&b.to_json()), str::to_owned)
                })
                .collect();
            parts.join("\n")
        })
        .collect()
}

/// The messages (or input items) that give a step's results back to the model, in call order,
/// with every call's additional contexts after all of the results (spec §6.12). Append them
/// after the assistant message that made the calls, sent back as received (DeepSeek's thinking
/// mode, for one, rejects a tool loop whose assistant message lost its `reasoning_content`):
///
/// - OpenAI Chat / DeepSeek: a `{"role": "tool", "tool_call_id", "content"}` message per call,
///   then a `{"role": "user", "content"}` message per context;
/// - OpenAI Responses: a `{"type": "function_call_output", "call_id", "output"}` item per call,
///   then a user message per context;
/// - Anthropic: one user message whose content is a `tool_result` block per call (`is_error`,
///   text and image blocks), then the contexts as text blocks;
/// - Gemini: one `user` content whose parts are a `functionResponse` per call (`{"output": …}`
///   or `{"error": …}`: the response must be an object), then the contexts as text parts.
///
/// ```
/// use dsh_tools::provider::{Dialect, Provider, format_results};
/// use dsh_tools::{Registry, ToolError, ToolExecutionResult};
/// use serde_json::json;
///
/// let tools = Registry::new().provider_tools(None, Dialect::new(Provider::Anthropic)).unwrap();
/// let reply = json!({"content": [{"type": "tool_use", "id": "tu_1", "name": "nope", "input": {}}]});
/// let calls = tools.parse_calls(&reply).unwrap();
/// let result = ToolExecutionResult::failure(ToolError::unknown_tool("nope"));
/// let messages = format_results(tools.dialect(), &[(&calls[0], &result)]);
/// assert_eq!(messages, [json!({"role": "user", "content": [{"type": "tool_result",
///     "tool_use_id": "tu_1", "content": [{"type": "text", "text": "Error: unknown tool \"nope\""}],
///     "is_error": true}]})]);
/// ```
pub fn format_results(
    dialect: Dialect,
    results: &[(&ParsedCall, &ToolExecutionResult)],
) -> Vec<Value> {
    let extra = contexts(results);
    match dialect.provider() {
        Provider::OpenAiChat | Provider::DeepSeek => results
            .iter()
            .map(|(call, r)| json!({"role": "tool", "tool_call_id": call.reply_id(), "content": text(r)}))
            .chain(extra.into_iter().map(|t| json!({"role": "user", "content": t})))
            .collect(),
        Provider::OpenAiResponses => results
            .iter()
            .map(|(call, r)| {
                json!({"type": "function_call_output", "call_id": call.reply_id(), "output": text(r)})
            })
            .chain(extra.into_iter().map(|t| {
                json!({"role": "user", "content": [{"type": "input_text", "text": t}]})
            }))
            .collect(),
        Provider::Anthropic => {
            let mut content: Vec<Value> = results
                .iter()
                .map(|(call, r)| {
                    let blocks: Vec<Value> = r.content().iter().map(anthropic_block).collect();
                    json!({"type": "tool_result", "tool_use_id": call.reply_id(),
                           "content": blocks, "is_error": r.is_error()})
                })
                .collect();
            content.extend(extra.into_iter().map(|t| json!({"type": "text", "text": t})));
            if content.is_empty() {
                return Vec::new();
            }
            vec![json!({"role": "user", "content": content})]
        }
        Provider::Gemini | Provider::GeminiOpenApi => {
            let mut parts: Vec<Value> = results
                .iter()
                .map(|(call, r)| {
                    let response = if r.is_error() {
                        json!({"error": text(r)})
                    } else {
                        json!({"output": text(r)})
                    };
                    let mut function = json!({"name": call.provider_name(), "response": response});
                    if let Some(id) = call.provider_call_id() {
                        function["id"] = json!(id);
                    }
                    json!({"functionResponse": function})
                })
                .collect();
            parts.extend(extra.into_iter().map(|t| json!({"text": t})));
            if parts.is_empty() {
                return Vec::new();
            }
            vec![json!({"role": "user", "parts": parts})]
        }
    }
}

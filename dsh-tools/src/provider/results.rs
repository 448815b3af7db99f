//! Results back into each provider's messages.

use super::calls::ParsedCall;
use super::dialect::{Dialect, Provider};
use super::export::ProviderTools;
use super::search::{self, ToolSearch};
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
/// use dsh_tools::provider::ProviderExport;
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
///
/// A native tool search ([`ToolSearch::Native`]) needs the export it was made for: answer it
/// with [`ProviderTools::format_results`] (given here, an OpenAI Responses `tool_search_call`
/// is answered with a `tool_search_output` that loads nothing, and an Anthropic search as any
/// tool's result).
pub fn format_results(
    dialect: Dialect,
    results: &[(&ParsedCall, &ToolExecutionResult)],
) -> Vec<Value> {
    format_with(dialect, results, None)
}

impl ProviderTools {
    /// [`format_results`] in this export's dialect, a native tool search answered in the
    /// provider's shape ([`ToolSearch::Native`]): OpenAI Responses gets a
    /// `tool_search_output` item carrying the found tools' entries (grouped by namespace),
    /// Anthropic a `tool_result` of `tool_reference` blocks naming them. Every other call is
    /// answered as `format_results` answers it.
    ///
    /// ```
    /// use dsh_tools::provider::{Dialect, Provider, ToolSearch};
    /// use dsh_tools::provider::ProviderExport;
    /// use dsh_tools::registry::LoadedTools;
    /// use dsh_tools::{OutputDecl, Registry, ToolDefinition};
    /// use serde_json::json;
    /// use tokio_util::sync::CancellationToken;
    ///
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// let registry = Registry::new();
    /// registry.register(ToolDefinition::new("archive_mail", "Archive an email thread",
    ///     json!({"type": "object"}), OutputDecl::text(), |_, _| async { Ok(json!("")) })
    ///     .defer_loading(true))?;
    /// let dialect = Dialect::new(Provider::Anthropic);
    /// let tools = registry.provider_tools_searched(None, dialect, &LoadedTools::new(), ToolSearch::Native)?;
    /// let reply = json!({"content": [{"type": "tool_use", "id": "tu_1", "name": "tool_search",
    ///     "input": {"query": "archive email"}}]});
    /// let calls = tools.parse_calls(&reply)?;
    /// let result = calls[0].execute(&registry, CancellationToken::new()).await;
    /// let messages = tools.format_results(&[(&calls[0], &result)]);
    /// assert_eq!(messages[0]["content"][0]["content"],
    ///     json!([{"type": "tool_reference", "tool_name": "archive_mail"}]));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// # }).unwrap();
    /// ```
    pub fn format_results(&self, results: &[(&ParsedCall, &ToolExecutionResult)]) -> Vec<Value> {
        format_with(self.dialect(), results, Some(self))
    }
}

/// The answer to a native tool search `call`, where `tools` searches natively: OpenAI
/// Responses a `tool_search_output` item, Anthropic a `tool_result` block.
fn native_search(
    tools: Option<&ProviderTools>,
    call: &ParsedCall,
    result: &ToolExecutionResult,
) -> Option<Value> {
    let tools = tools.filter(|t| t.tool_search() == Some(ToolSearch::Native))?;
    match tools.dialect().provider() {
        Provider::OpenAiResponses if call.is_native_search() => {
            // A failed search loads nothing (the item has no error field).
            let found: Vec<(Value, Option<&crate::definition::Namespace>)> =
                search::found_names(result.value().filter(|_| !result.is_error()))
                    .into_iter()
                    .filter_map(|name| tools.loadable(name))
                    .map(|(entry, namespace)| (crate::json::clone_deep(entry), namespace.as_ref()))
                    .collect();
            Some(json!({
                "type": "tool_search_output",
                "call_id": call.reply_id(),
                "execution": "client",
                "status": "completed",
                "tools": search::grouped(found),
            }))
        }
        Provider::Anthropic
            if call.name() == crate::registry::TOOL_SEARCH && !result.is_error() =>
        {
            let references: Vec<Value> = search::found_names(result.value())
                .into_iter()
                .filter_map(|name| tools.provider_name_of(name))
                .map(|name| json!({"type": "tool_reference", "tool_name": name}))
                .collect();
            let content = if references.is_empty() {
                json!([{"type": "text", "text": "No tools match. Try other words."}])
            } else {
                Value::Array(references)
            };
            Some(
                json!({"type": "tool_result", "tool_use_id": call.reply_id(),
                        "content": content, "is_error": false}),
            )
        }
        _ => None,
    }
}

fn format_with(
    dialect: Dialect,
    results: &[(&ParsedCall, &ToolExecutionResult)],
    tools: Option<&ProviderTools>,
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
                native_search(tools, call, r).unwrap_or_else(|| {
                    if call.is_native_search() {
                        // Without the export there are no entries to load: the answer the API
                        // takes for a search, loading nothing.
                        return json!({"type": "tool_search_output", "call_id": call.reply_id(),
                            "execution": "client", "status": "completed", "tools": []});
                    }
                    json!({"type": "function_call_output", "call_id": call.reply_id(), "output": text(r)})
                })
            })
            .chain(extra.into_iter().map(|t| {
                json!({"role": "user", "content": [{"type": "input_text", "text": t}]})
            }))
            .collect(),
        Provider::Anthropic => {
            let mut content: Vec<Value> = results
                .iter()
                .map(|(call, r)| {
                    native_search(tools, call, r).unwrap_or_else(|| {
                        let blocks: Vec<Value> = r.content().iter().map(anthropic_block).collect();
                        json!({"type": "tool_result", "tool_use_id": call.reply_id(),
                               "content": blocks, "is_error": r.is_error()})
                    })
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

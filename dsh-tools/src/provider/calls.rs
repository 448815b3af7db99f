//! Parsing a provider's reply into calls, in model order.

use super::dialect::Provider;
use super::export::ProviderTools;
use crate::call::{AgentId, ToolExecutionInput, ToolExecutionResult};
use crate::error::{ToolError, codes};
use crate::json::clone_deep;
use crate::registry::Registry;
use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;

/// One call the model made: our tool name, the provider's names and ids, and the arguments
/// mapped back to our schema, or why they could not be read.
///
/// Copying and dropping one never recurses through its arguments, however deep the model sent
/// them.
#[derive(Debug, PartialEq)]
pub struct ParsedCall {
    call_id: String,
    provider_call_id: Option<String>,
    provider_name: String,
    name: String,
    /// The agent the tools were exported for: the call runs through its scope.
    agent: Option<AgentId>,
    arguments: Result<Value, ToolError>,
    /// The arguments as the provider sent them, when they could not be read.
    raw_arguments: Option<String>,
    /// An OpenAI Responses client-executed `tool_search_call` (answered by a
    /// `tool_search_output`).
    search: bool,
    /// The arguments were text that is not a JSON object (a repair may read it:
    /// [`Repair::TextArguments`](crate::pipeline::Repair::TextArguments)).
    repairable: bool,
}

impl Clone for ParsedCall {
    fn clone(&self) -> Self {
        Self {
            call_id: self.call_id.clone(),
            provider_call_id: self.provider_call_id.clone(),
            provider_name: self.provider_name.clone(),
            name: self.name.clone(),
            agent: self.agent.clone(),
            arguments: match &self.arguments {
                Ok(value) => Ok(crate::json::clone_deep(value)),
                Err(e) => Err(e.clone()),
            },
            raw_arguments: self.raw_arguments.clone(),
            search: self.search,
            repairable: self.repairable,
        }
    }
}

impl Drop for ParsedCall {
    fn drop(&mut self) {
        if let Ok(arguments) = &mut self.arguments {
            crate::json::free(std::mem::take(arguments));
        }
    }
}

/// A reply that is not the provider's response shape at all (a call inside it that cannot be
/// read is a [`ParsedCall`] that fails, never this).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("not a {provider} response: {message}")]
pub struct ParseError {
    provider: &'static str,
    message: String,
}

impl ParsedCall {
    /// The call id (the provider's, or `call_<n>` when it gave none).
    pub fn call_id(&self) -> &str {
        &self.call_id
    }

    /// The id the provider gave, if any (Gemini may give none).
    pub fn provider_call_id(&self) -> Option<&str> {
        self.provider_call_id.as_deref()
    }

    /// The id a result answers to: the provider's, else ours.
    pub(crate) fn reply_id(&self) -> &str {
        self.provider_call_id.as_deref().unwrap_or(&self.call_id)
    }

    /// Whether the model asked for this call as the provider's own client-executed tool search
    /// item: an OpenAI Responses `tool_search_call` (the call runs our `tool_search`, and
    /// [`ProviderTools::format_results`] answers it with a `tool_search_output`). An Anthropic
    /// native search is an ordinary `tool_use` of `tool_search`: `false` here, and answered
    /// with `tool_reference` blocks by its name.
    pub fn is_native_search(&self) -> bool {
        self.search
    }

    /// The tool name as the provider sent it.
    pub fn provider_name(&self) -> &str {
        &self.provider_name
    }

    /// Our tool name (the provider's name mapped back).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The arguments, restored to our schema; `None` when they could not be read.
    pub fn arguments(&self) -> Option<&Value> {
        self.arguments.as_ref().ok()
    }

    /// The arguments exactly as the provider sent them (a string, or the JSON of a value), when
    /// they could not be read: for logs and user interfaces.
    pub fn raw_arguments(&self) -> Option<&str> {
        self.raw_arguments.as_deref()
    }

    /// Why the arguments could not be read (`INVALID_ARGS`).
    pub fn error(&self) -> Option<&ToolError> {
        self.arguments.as_ref().err()
    }

    /// The registry input for this call (as the agent the tools were exported for, so its
    /// scope, restrictions, hooks and approvals apply), or, when its arguments could not be
    /// read, the failure to hand back to the model in its place.
    #[allow(clippy::result_large_err)]
    pub fn into_input(
        mut self,
        signal: CancellationToken,
    ) -> Result<ToolExecutionInput, ToolExecutionResult> {
        match std::mem::replace(&mut self.arguments, Ok(Value::Null)) {
            Ok(arguments) => {
                let (call_id, name) = (
                    std::mem::take(&mut self.call_id),
                    std::mem::take(&mut self.name),
                );
                let input = ToolExecutionInput::new(call_id, name, arguments, signal);
                Ok(match self.agent.take() {
                    Some(agent) => input.agent(agent),
                    None => input,
                })
            }
            Err(e) => Err(ToolExecutionResult::failure(e)),
        }
    }

    /// Runs the call (or returns its argument failure) through `registry`. Arguments sent as
    /// text that is not a JSON object run as that text when the registry repairs text
    /// arguments ([`Repair::TextArguments`](crate::pipeline::Repair::TextArguments)): its repair
    /// stage reads them, or the call fails as the tool's validation says.
    pub async fn execute(
        &self,
        registry: &Registry,
        signal: CancellationToken,
    ) -> ToolExecutionResult {
        if self.repairable
            && let Some(raw) = &self.raw_arguments
            && registry
                .repairs()
                .contains(&crate::call::Repair::TextArguments)
        {
            let input = ToolExecutionInput::new(
                self.call_id.clone(),
                self.name.clone(),
                Value::String(raw.clone()),
                signal,
            );
            let input = match &self.agent {
                Some(agent) => input.agent(agent.clone()),
                None => input,
            };
            return registry.execute(input).await;
        }
        match self.clone().into_input(signal) {
            Ok(input) => registry.execute(input).await,
            Err(failure) => failure,
        }
    }
}

/// One call as found in a reply: its id, the provider's tool name, the arguments read, and the
/// arguments as sent.
pub(super) type RawCall<'a> = (
    Option<String>,
    String,
    Result<Value, ToolError>,
    Option<&'a Value>,
    bool,
);

fn invalid(message: String) -> ToolError {
    ToolError::coded(
        "ToolArgsError",
        codes::INVALID_ARGS,
        format!("invalid arguments: {message}"),
    )
}

/// Reads an arguments string: JSON, an object, lossless.
pub(super) fn arguments_from_str(text: &str) -> Result<Value, ToolError> {
    let trimmed = text.trim();
    if trimmed.is_empty() {
        return Ok(Value::Object(Map::new()));
    }
    // serde_json's own recursion limit (128) refuses hostile nesting without a stack overflow.
    let value: Value = serde_json::from_str(trimmed).map_err(|e| {
        invalid(format!(
            "the arguments are not valid JSON ({e}); send one JSON object, such as {{\"name\": \"value\"}}"
        ))
    })?;
    object(value)
}

pub(super) fn object(value: Value) -> Result<Value, ToolError> {
    match value {
        Value::Object(_) => Ok(value),
        other => {
            let kind = match other {
                Value::Null => "null",
                Value::Bool(_) => "a boolean",
                Value::Number(_) => "a number",
                Value::String(_) => "a string",
                Value::Array(_) => "an array",
                Value::Object(_) => "an object",
            };
            crate::json::drop_deep(other);
            Err(invalid(format!(
                "the arguments must be a JSON object, not {kind}"
            )))
        }
    }
}

impl ProviderTools {
    /// The calls in a provider's reply, in model order: OpenAI Chat `choices[0].message.
    /// tool_calls` (or a message), Responses `output` `function_call` items, Anthropic
    /// `tool_use` content blocks, Gemini `functionCall` parts. Each call's name is mapped back
    /// to ours and its arguments restored (strict mode's nulls). A reply without calls gives
    /// none.
    pub fn parse_calls(&self, reply: &Value) -> Result<Vec<ParsedCall>, ParseError> {
        let provider = self.dialect().provider();
        let fail = |message: &str| ParseError {
            provider: provider.id(),
            message: message.to_owned(),
        };
        let mut raw: Vec<RawCall<'_>> = Vec::new();
        match provider {
            Provider::OpenAiChat | Provider::DeepSeek => {
                let message = match reply.get("choices") {
                    Some(choices) => choices
                        .get(0)
                        .and_then(|c| c.get("message"))
                        .ok_or_else(|| fail("expected `choices[0].message`"))?,
                    // A message itself; anything else (an `{"error": …}` body sent with a 200,
                    // say) is not a reply without calls.
                    None if reply.get("role").is_some() || reply.get("tool_calls").is_some() => {
                        reply
                    }
                    None => return Err(fail("expected `choices[0].message` or a message object")),
                };
                for call in message
                    .get("tool_calls")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                {
                    let function = call.get("function").unwrap_or(&Value::Null);
                    let name = function
                        .get("name")
                        .and_then(Value::as_str)
                        .unwrap_or_default();
                    let args = match function.get("arguments") {
                        Some(Value::String(s)) => arguments_from_str(s),
                        Some(v @ Value::Object(_)) => Ok(clone_deep(v)),
                        None => Ok(Value::Object(Map::new())),
                        Some(other) => object(clone_deep(other)),
                    };
                    let id = call.get("id").and_then(Value::as_str).map(str::to_owned);
                    raw.push((id, name.to_owned(), args, function.get("arguments"), false));
                }
            }
            Provider::OpenAiResponses => {
                let items = reply
                    .get("output")
                    .or(Some(reply))
                    .and_then(Value::as_array)
                    .ok_or_else(|| fail("expected `output` (an array of items)"))?;
                for item in items {
                    // A client-executed tool search runs our `tool_search` (a server-executed
                    // one is the provider's own business, as are its outputs).
                    let search = match item.get("type").and_then(Value::as_str) {
                        Some("function_call") => false,
                        Some("tool_search_call")
                            if item.get("execution").and_then(Value::as_str) == Some("client") =>
                        {
                            true
                        }
                        _ => continue,
                    };
                    let name = if search {
                        crate::registry::TOOL_SEARCH
                    } else {
                        item.get("name").and_then(Value::as_str).unwrap_or_default()
                    };
                    let args = match item.get("arguments") {
                        Some(Value::String(s)) => arguments_from_str(s),
                        Some(v @ Value::Object(_)) => Ok(clone_deep(v)),
                        None => Ok(Value::Object(Map::new())),
                        Some(other) => object(clone_deep(other)),
                    };
                    let id = item
                        .get("call_id")
                        .or_else(|| item.get("id"))
                        .and_then(Value::as_str)
                        .map(str::to_owned);
                    raw.push((id, name.to_owned(), args, item.get("arguments"), search));
                }
            }
            Provider::Anthropic => {
                let blocks = reply
                    .get("content")
                    .or(Some(reply))
                    .and_then(Value::as_array)
                    .ok_or_else(|| fail("expected `content` (an array of blocks)"))?;
                for block in blocks {
                    if block.get("type").and_then(Value::as_str) != Some("tool_use") {
                        continue;
                    }
                    let name = block
                        .get("name")
                        .and_then(Value::as_str)
                        .unwrap_or_default();
                    let args = match block.get("input") {
                        None => Ok(Value::Object(Map::new())),
                        Some(v) => object(clone_deep(v)),
                    };
                    let id = block.get("id").and_then(Value::as_str).map(str::to_owned);
                    raw.push((id, name.to_owned(), args, block.get("input"), false));
                }
            }
            Provider::Gemini | Provider::GeminiOpenApi => {
                let parts = reply
                    .get("candidates")
                    .and_then(|c| c.get(0))
                    .and_then(|c| c.get("content"))
                    .or_else(|| reply.get("content"))
                    .or(Some(reply))
                    .and_then(|c| c.get("parts"))
                    .and_then(Value::as_array)
                    .ok_or_else(|| fail("expected `candidates[0].content.parts`"))?;
                for part in parts {
                    let Some(call) = part.get("functionCall") else {
                        continue;
                    };
                    let name = call.get("name").and_then(Value::as_str).unwrap_or_default();
                    let args = match call.get("args") {
                        None => Ok(Value::Object(Map::new())),
                        Some(v) => object(clone_deep(v)),
                    };
                    let id = call.get("id").and_then(Value::as_str).map(str::to_owned);
                    raw.push((id, name.to_owned(), args, call.get("args"), false));
                }
            }
        }
        Ok(self.made(raw))
    }

    /// The calls of `raw` (as found in a reply, in model order): names mapped back, arguments
    /// restored, repeated ids refused.
    pub(super) fn made(&self, raw: Vec<RawCall<'_>>) -> Vec<ParsedCall> {
        // A reply that repeats a call id: the first call keeps it; a repeat is not run (which
        // of two actions the model meant is unknowable) and fails under an id of its own, while
        // its result still answers the provider's id.
        let mut seen_ids = std::collections::HashSet::new();
        raw
            .into_iter()
            .enumerate()
            .map(|(i, (id, provider_name, args, sent, search))| {
                let repeated = id.as_ref().is_some_and(|id| !seen_ids.insert(id.clone()));
                let args = if repeated {
                    Err(ToolError::coded(
                        "ToolArgsError",
                        codes::INVALID_ARGS,
                        format!(
                            "the reply holds more than one call with the id {:?}; only the first was run",
                            id.as_deref().unwrap_or_default()
                        ),
                    ))
                } else {
                    args
                };
                let repairable =
                    !repeated && args.is_err() && matches!(sent, Some(Value::String(_)));
                let raw_arguments = args.is_err().then(|| match sent {
                    Some(Value::String(s)) => s.clone(),
                    Some(other) => crate::json::to_compact_string(other),
                    None => String::new(),
                });
                // A name the conversation gave to a tool that is gone still means that tool
                // (which now fails as unknown), never another one that took its name.
                let name = match self.by_provider_name(&provider_name) {
                    Some(tool) => tool.name().to_owned(),
                    None => self
                        .given_to(&provider_name)
                        .unwrap_or(&provider_name)
                        .to_owned(),
                };
                let arguments = args.map(|mut a| {
                    self.restore(&provider_name, &mut a);
                    a
                });
                let call_id = match &id {
                    Some(id) if repeated => format!("{id}#{i}"),
                    Some(id) => id.clone(),
                    None => format!("call_{i}"),
                };
                ParsedCall {
                    call_id,
                    provider_call_id: id,
                    provider_name,
                    name,
                    agent: self.agent().cloned(),
                    arguments,
                    raw_arguments,
                    search,
                    repairable,
                }
            })
            .collect()
    }
}

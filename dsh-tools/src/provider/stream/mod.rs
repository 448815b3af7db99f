//! Tool calls assembled from a provider's stream, as they arrive: each call's start, its
//! argument text so far, a best-effort value of it ([`PartialJson`]), and at the end the same
//! [`ParsedCall`]s that [`ProviderTools::parse_calls`] gives for the finished reply.
//!
//! Fed one event at a time, as `serde_json::Value`s (one SSE `data:` payload each: no HTTP
//! client is involved):
//!
//! | dialect | a call starts | its arguments grow | it ends |
//! |---|---|---|---|
//! | OpenAI Chat, DeepSeek | `choices[0].delta.tool_calls[i]` with an `id` | the same `index`'s `function.arguments` | a `finish_reason` |
//! | OpenAI Responses | `response.output_item.added` of a `function_call` | `response.function_call_arguments.delta` by `item_id` | `.done`, `response.output_item.done`, `response.completed` |
//! | Anthropic | `content_block_start` of a `tool_use` | `content_block_delta` `input_json_delta` by `index` | `content_block_stop`, `message_stop` |
//! | Gemini | a `functionCall` part (whole) | | the same part |
//!
//! ```
//! use dsh_tools::provider::{Dialect, Provider};
//! use dsh_tools::provider::ProviderExport;
//! use dsh_tools::{OutputDecl, Registry, ToolDefinition};
//! use serde_json::json;
//!
//! let registry = Registry::new();
//! registry.register(ToolDefinition::new("read_file", "Read a file.", json!({"type": "object"}),
//!     OutputDecl::text(), |_, _| async { Ok(json!("")) }))?;
//! let tools = registry.provider_tools(None, Dialect::new(Provider::Anthropic))?;
//! let mut stream = tools.call_stream();
//! stream.feed(&json!({"type": "content_block_start", "index": 0,
//!     "content_block": {"type": "tool_use", "id": "toolu_1", "name": "read_file", "input": {}}}))?;
//! stream.feed(&json!({"type": "content_block_delta", "index": 0,
//!     "delta": {"type": "input_json_delta", "partial_json": "{\"path\": \"src/ma"}}))?;
//! assert_eq!(stream.calls()[0].partial(), Some(json!({"path": "src/ma"})));
//! stream.feed(&json!({"type": "content_block_delta", "index": 0,
//!     "delta": {"type": "input_json_delta", "partial_json": "in.rs\"}"}}))?;
//! stream.feed(&json!({"type": "content_block_stop", "index": 0}))?;
//! let calls = stream.finish()?;
//! assert_eq!(calls[0].arguments(), Some(&json!({"path": "src/main.rs"})));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod partial;

pub use partial::{MAX_DEPTH as MAX_PARTIAL_DEPTH, PartialJson};

use super::calls::{ParsedCall, RawCall, arguments_from_str, object};
use super::dialect::Provider;
use super::export::ProviderTools;
use crate::error::{ToolError, codes};
use serde_json::Value;
use std::collections::HashMap;

/// The most argument text one call may stream; past it the call fails as `INVALID_ARGS`.
pub const MAX_STREAMED_ARGUMENTS: usize = 16 * 1024 * 1024;
/// The most calls one stream may start.
pub const MAX_STREAMED_CALLS: usize = 4096;

/// What one event changed, by the call's place in [`CallStream::calls`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum StreamUpdate {
    /// A call began (its name and id are known).
    Started(usize),
    /// Its argument text grew.
    Grew(usize),
    /// It is whole.
    Finished(usize),
}

/// An event the assembler cannot apply: the stream stays usable; the event is applied up to
/// the part that failed (an OpenAI Chat chunk may carry several calls' deltas).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum StreamError {
    /// Arguments for a call that never started.
    #[error("a {provider} stream event for call {key}, which never started")]
    UnknownCall {
        /// The dialect.
        provider: &'static str,
        /// The call's index or item id as the event gave it.
        key: String,
    },
    /// The stream ended while these calls were under way.
    #[error("the {provider} stream ended inside the call(s) {}", .calls.join(", "))]
    Unfinished {
        /// The dialect.
        provider: &'static str,
        /// Each unfinished call: its provider name and id.
        calls: Vec<String>,
    },
    /// More calls than [`MAX_STREAMED_CALLS`].
    #[error("a {provider} stream started more than {MAX_STREAMED_CALLS} calls")]
    TooManyCalls {
        /// The dialect.
        provider: &'static str,
    },
}

/// One call as streamed so far.
#[derive(Debug)]
pub struct StreamedCall {
    /// Model order: the index or output index the provider gave.
    order: u64,
    provider_call_id: Option<String>,
    provider_name: String,
    text: String,
    /// Whole arguments as the provider gave them (Gemini's; a Responses `tool_search_call`'s).
    whole: Option<Value>,
    reader: PartialJson,
    finished: bool,
    too_long: bool,
    /// A client-executed OpenAI Responses `tool_search_call`.
    search: bool,
}

impl StreamedCall {
    fn new(order: u64, id: Option<String>, name: String) -> Self {
        Self {
            order,
            provider_call_id: id,
            provider_name: name,
            text: String::new(),
            whole: None,
            reader: PartialJson::new(),
            finished: false,
            too_long: false,
            search: false,
        }
    }

    /// The tool name as the provider sent it.
    pub fn provider_name(&self) -> &str {
        &self.provider_name
    }

    /// The provider's call id, once given.
    pub fn provider_call_id(&self) -> Option<&str> {
        self.provider_call_id.as_deref()
    }

    /// The argument text so far.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// Whether the call is whole.
    pub fn is_finished(&self) -> bool {
        self.finished
    }

    /// A best-effort value of the arguments so far (see [`PartialJson::partial`]); `None`
    /// before any value began.
    pub fn partial(&self) -> Option<Value> {
        match &self.whole {
            Some(whole) => Some(crate::json::clone_deep(whole)),
            None => self.reader.partial(),
        }
    }

    fn grow(&mut self, fragment: &str) {
        if self.too_long {
            return;
        }
        if self.text.len() + fragment.len() > MAX_STREAMED_ARGUMENTS {
            self.too_long = true;
            return;
        }
        self.text.push_str(fragment);
        self.reader.push(fragment);
    }
}

/// Assembles the calls of one streamed reply (see the [module docs](self)).
#[derive(Debug)]
pub struct CallStream<'a> {
    tools: &'a ProviderTools,
    calls: Vec<StreamedCall>,
    /// The provider's key of each call → its place in `calls`: by index (OpenAI Chat,
    /// Anthropic, Gemini's part number) or by item id (OpenAI Responses).
    indices: HashMap<u64, usize>,
    ids: HashMap<String, usize>,
    /// Anthropic content blocks that are not tool calls (text, thinking, a server tool's own
    /// `server_tool_use`): their deltas are not ours.
    others: std::collections::HashSet<u64>,
}

/// How a stream event names its call.
#[derive(Clone, Copy)]
enum Key<'k> {
    Index(u64),
    Id(&'k str),
}

impl std::fmt::Display for Key<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Key::Index(i) => write!(f, "index {i}"),
            Key::Id(id) => {
                let shown: String = id.chars().take(64).collect();
                write!(f, "{shown:?}")
            }
        }
    }
}

impl ProviderTools {
    /// An assembler for one streamed reply to a request that carried these tools.
    pub fn call_stream(&self) -> CallStream<'_> {
        CallStream {
            tools: self,
            calls: Vec::new(),
            indices: HashMap::new(),
            ids: HashMap::new(),
            others: std::collections::HashSet::new(),
        }
    }
}

fn str_of<'v>(value: &'v Value, key: &str) -> Option<&'v str> {
    value.get(key).and_then(Value::as_str)
}

impl<'a> CallStream<'a> {
    fn provider(&self) -> Provider {
        self.tools.dialect().provider()
    }

    /// Every call started so far, in the order they started.
    pub fn calls(&self) -> &[StreamedCall] {
        &self.calls
    }

    /// Our name of the tool call `i` (of [`calls`](Self::calls)) names: the provider's name
    /// mapped back as [`ProviderTools::parse_calls`] maps it.
    pub fn tool_name(&self, i: usize) -> Option<&str> {
        let call = self.calls.get(i)?;
        let theirs = call.provider_name.as_str();
        Some(match self.tools.by_provider_name(theirs) {
            Some(tool) => tool.name(),
            None => self.tools.given_to(theirs).unwrap_or(theirs),
        })
    }

    /// The call card of call `i` as its arguments stand (spec §9: presenters are pure, so a UI
    /// may call them while a call streams): its tool's presenter given the partial value (`{}`
    /// before any), the generic card where the presenter has none, declines a partial value or
    /// panics. Call it as often as the UI wants a frame (every update, or at most every N ms):
    /// nothing is computed between calls. Once the call is finished its card is the card of
    /// the finished call.
    pub fn card(
        &self,
        i: usize,
        registry: &crate::Registry,
    ) -> Option<crate::present::ToolCallView> {
        let name = self.tool_name(i)?;
        let arguments = self.calls[i]
            .partial()
            .unwrap_or_else(|| Value::Object(Default::default()));
        let card = registry.present_call(name, &arguments, self.tools.agent());
        crate::json::free(arguments);
        Some(card)
    }

    /// Applies one stream event; events that concern no tool call (text, thinking, usage) are
    /// read as nothing.
    pub fn feed(&mut self, event: &Value) -> Result<Vec<StreamUpdate>, StreamError> {
        let mut updates = Vec::new();
        match self.provider() {
            Provider::OpenAiChat | Provider::DeepSeek => self.chat(event, &mut updates)?,
            Provider::OpenAiResponses => self.responses(event, &mut updates)?,
            Provider::Anthropic => self.anthropic(event, &mut updates)?,
            Provider::Gemini | Provider::GeminiOpenApi => self.gemini(event, &mut updates)?,
        }
        Ok(updates)
    }

    fn lookup(&self, key: Key<'_>) -> Option<usize> {
        match key {
            Key::Index(i) => self.indices.get(&i).copied(),
            Key::Id(id) => self.ids.get(id).copied(),
        }
    }

    fn start(
        &mut self,
        key: Key<'_>,
        order: u64,
        id: Option<String>,
        name: String,
        updates: &mut Vec<StreamUpdate>,
    ) -> Result<usize, StreamError> {
        if let Some(i) = self.lookup(key) {
            return Ok(i);
        }
        if self.calls.len() >= MAX_STREAMED_CALLS {
            return Err(StreamError::TooManyCalls {
                provider: self.provider().id(),
            });
        }
        let i = self.calls.len();
        self.calls.push(StreamedCall::new(order, id, name));
        match key {
            Key::Index(n) => self.indices.insert(n, i),
            Key::Id(id) => self.ids.insert(id.to_owned(), i),
        };
        updates.push(StreamUpdate::Started(i));
        Ok(i)
    }

    fn known(&self, key: Key<'_>) -> Result<usize, StreamError> {
        self.lookup(key).ok_or_else(|| StreamError::UnknownCall {
            provider: self.provider().id(),
            key: key.to_string(),
        })
    }

    fn grow(&mut self, i: usize, fragment: &str, updates: &mut Vec<StreamUpdate>) {
        if !fragment.is_empty() && !self.calls[i].finished {
            self.calls[i].grow(fragment);
            updates.push(StreamUpdate::Grew(i));
        }
    }

    fn end(&mut self, i: usize, updates: &mut Vec<StreamUpdate>) {
        if !self.calls[i].finished {
            self.calls[i].finished = true;
            updates.push(StreamUpdate::Finished(i));
        }
    }

    fn end_all(&mut self, updates: &mut Vec<StreamUpdate>) {
        for i in 0..self.calls.len() {
            self.end(i, updates);
        }
    }

    /// OpenAI Chat and DeepSeek: `choices[0].delta.tool_calls[]` by `index`.
    fn chat(&mut self, event: &Value, updates: &mut Vec<StreamUpdate>) -> Result<(), StreamError> {
        let Some(choice) = event.get("choices").and_then(|c| c.get(0)) else {
            return Ok(());
        };
        let deltas = choice
            .get("delta")
            .and_then(|d| d.get("tool_calls"))
            .and_then(Value::as_array);
        for delta in deltas.into_iter().flatten() {
            let index = delta.get("index").and_then(Value::as_u64).unwrap_or(0);
            let key = Key::Index(index);
            let function = delta.get("function").unwrap_or(&Value::Null);
            let id = str_of(delta, "id").filter(|id| !id.is_empty());
            let i = match (self.lookup(key), id) {
                // A new id at a known index is a new call (servers that omit `index`, as
                // some OpenAI-compatible ones do, send every call at 0).
                (Some(i), Some(id)) if self.calls[i].provider_call_id.as_deref() != Some(id) => {
                    self.indices.remove(&index);
                    let name = str_of(function, "name").unwrap_or_default().to_owned();
                    self.start(key, index, Some(id.to_owned()), name, updates)?
                }
                (Some(i), _) => i,
                (None, Some(id)) => {
                    let name = str_of(function, "name").unwrap_or_default().to_owned();
                    self.start(key, index, Some(id.to_owned()), name, updates)?
                }
                (None, None) => self.known(key)?,
            };
            if let Some(fragment) = str_of(function, "arguments") {
                self.grow(i, fragment, updates);
            }
        }
        if choice.get("finish_reason").is_some_and(|r| !r.is_null()) {
            self.end_all(updates);
        }
        Ok(())
    }

    /// OpenAI Responses: `function_call` items by their id.
    fn responses(
        &mut self,
        event: &Value,
        updates: &mut Vec<StreamUpdate>,
    ) -> Result<(), StreamError> {
        let order = event
            .get("output_index")
            .and_then(Value::as_u64)
            .unwrap_or(0);
        match str_of(event, "type").unwrap_or_default() {
            "response.output_item.added" | "response.output_item.done" => {
                let item = event.get("item").unwrap_or(&Value::Null);
                let search = match str_of(item, "type") {
                    Some("function_call") => false,
                    // A client-executed tool search runs our `tool_search`, as `parse_calls`
                    // reads it; its arguments come whole, with the finished item.
                    Some("tool_search_call") if str_of(item, "execution") == Some("client") => true,
                    _ => return Ok(()),
                };
                let Some(key) = str_of(item, "id").or_else(|| str_of(item, "call_id")) else {
                    return Ok(());
                };
                let id = str_of(item, "call_id").map(str::to_owned);
                let name = if search {
                    crate::registry::TOOL_SEARCH.to_owned()
                } else {
                    str_of(item, "name").unwrap_or_default().to_owned()
                };
                let i = self.start(Key::Id(key), order, id, name, updates)?;
                if search {
                    self.calls[i].search = true;
                    if str_of(event, "type") == Some("response.output_item.done") {
                        match item.get("arguments") {
                            // A string is read as `parse_calls` reads one: as JSON text.
                            Some(Value::String(text)) => self.settle(i, Some(text), updates),
                            arguments => {
                                let arguments = arguments.map_or_else(
                                    || Value::Object(Default::default()),
                                    crate::json::clone_deep,
                                );
                                self.calls[i].text = crate::json::to_compact_string(&arguments);
                                if let Some(old) = self.calls[i].whole.replace(arguments) {
                                    crate::json::free(old);
                                }
                                updates.push(StreamUpdate::Grew(i));
                                self.end(i, updates);
                            }
                        }
                    }
                } else if str_of(event, "type") == Some("response.output_item.done") {
                    self.settle(i, str_of(item, "arguments"), updates);
                } else if let Some(text) = str_of(item, "arguments") {
                    self.grow(i, text, updates);
                }
            }
            "response.function_call_arguments.delta" => {
                let i = self.known(Key::Id(str_of(event, "item_id").unwrap_or_default()))?;
                self.grow(i, str_of(event, "delta").unwrap_or_default(), updates);
            }
            "response.function_call_arguments.done" => {
                let i = self.known(Key::Id(str_of(event, "item_id").unwrap_or_default()))?;
                self.settle(i, str_of(event, "arguments"), updates);
            }
            "response.completed" | "response.incomplete" | "response.failed" => {
                self.end_all(updates)
            }
            _ => {}
        }
        Ok(())
    }

    /// A call's end that carries the whole text: the text is the provider's (what it says the
    /// arguments were), whatever the deltas made of it.
    fn settle(&mut self, i: usize, whole: Option<&str>, updates: &mut Vec<StreamUpdate>) {
        let call = &mut self.calls[i];
        if call.finished {
            return;
        }
        if let Some(whole) = whole
            && whole != call.text
        {
            let rest = whole.strip_prefix(call.text.as_str()).map(str::to_owned);
            match rest {
                Some(rest) => call.grow(&rest),
                None => {
                    call.text.clear();
                    call.reader = PartialJson::new();
                    call.too_long = false;
                    call.grow(whole);
                }
            }
            updates.push(StreamUpdate::Grew(i));
        }
        self.end(i, updates);
    }

    /// Anthropic: `tool_use` content blocks by their `index`.
    fn anthropic(
        &mut self,
        event: &Value,
        updates: &mut Vec<StreamUpdate>,
    ) -> Result<(), StreamError> {
        let index = event.get("index").and_then(Value::as_u64).unwrap_or(0);
        let key = Key::Index(index);
        match str_of(event, "type").unwrap_or_default() {
            "content_block_start" => {
                let block = event.get("content_block").unwrap_or(&Value::Null);
                if str_of(block, "type") != Some("tool_use") {
                    // Bounded as the calls are: past it, a stray block's deltas are refused.
                    if self.others.len() < MAX_STREAMED_CALLS {
                        self.others.insert(index);
                    }
                    return Ok(());
                }
                // An index is one block: a tool call here reads its deltas, whatever came
                // before at this index.
                self.others.remove(&index);
                let id = str_of(block, "id").map(str::to_owned);
                let name = str_of(block, "name").unwrap_or_default().to_owned();
                self.start(key, index, id, name, updates)?;
            }
            "content_block_delta" => {
                let delta = event.get("delta").unwrap_or(&Value::Null);
                if str_of(delta, "type") != Some("input_json_delta") || self.others.contains(&index)
                {
                    return Ok(());
                }
                let i = self.known(key)?;
                self.grow(
                    i,
                    str_of(delta, "partial_json").unwrap_or_default(),
                    updates,
                );
            }
            "content_block_stop" => {
                if let Some(i) = self.lookup(key) {
                    self.end(i, updates);
                }
            }
            "message_stop" => self.end_all(updates),
            _ => {}
        }
        Ok(())
    }

    /// Gemini: every `functionCall` part is whole.
    fn gemini(
        &mut self,
        event: &Value,
        updates: &mut Vec<StreamUpdate>,
    ) -> Result<(), StreamError> {
        let parts = event
            .get("candidates")
            .and_then(|c| c.get(0))
            .and_then(|c| c.get("content"))
            .and_then(|c| c.get("parts"))
            .and_then(Value::as_array);
        for part in parts.into_iter().flatten() {
            let Some(call) = part.get("functionCall") else {
                continue;
            };
            let order = self.calls.len() as u64;
            let key = Key::Index(order);
            let id = str_of(call, "id").map(str::to_owned);
            let name = str_of(call, "name").unwrap_or_default().to_owned();
            let i = self.start(key, order, id, name, updates)?;
            let args = call.get("args").map_or_else(
                || Value::Object(Default::default()),
                crate::json::clone_deep,
            );
            self.calls[i].text = crate::json::to_compact_string(&args);
            self.calls[i].whole = Some(args);
            updates.push(StreamUpdate::Grew(i));
            self.end(i, updates);
        }
        Ok(())
    }

    /// The calls, exactly as [`ProviderTools::parse_calls`] gives them for the finished reply,
    /// in model order; an error naming every call still under way when the stream ended.
    pub fn finish(self) -> Result<Vec<ParsedCall>, StreamError> {
        let unfinished: Vec<String> = self
            .calls
            .iter()
            .filter(|c| !c.finished)
            .map(|c| {
                format!(
                    "{:?} ({})",
                    c.provider_name,
                    c.provider_call_id.as_deref().unwrap_or("no id")
                )
            })
            .collect();
        if !unfinished.is_empty() {
            return Err(StreamError::Unfinished {
                provider: self.provider().id(),
                calls: unfinished,
            });
        }
        let mut calls: Vec<StreamedCall> = self.calls;
        calls.sort_by_key(|c| c.order);
        let sent: Vec<Value> = calls
            .iter()
            .map(|c| match &c.whole {
                Some(whole) => crate::json::clone_deep(whole),
                None => Value::String(c.text.clone()),
            })
            .collect();
        let raw: Vec<RawCall<'_>> = calls
            .iter_mut()
            .zip(&sent)
            .map(|(call, sent)| {
                let arguments = if call.too_long {
                    Err(ToolError::coded(
                        "ToolArgsError",
                        codes::INVALID_ARGS,
                        format!(
                            "invalid arguments: the streamed arguments are longer than {MAX_STREAMED_ARGUMENTS} bytes"
                        ),
                    ))
                } else {
                    match call.whole.take() {
                        Some(whole) => object(whole),
                        None => arguments_from_str(&call.text),
                    }
                };
                (
                    call.provider_call_id.clone(),
                    std::mem::take(&mut call.provider_name),
                    arguments,
                    Some(sent),
                    call.search,
                )
            })
            .collect();
        let made = self.tools.made(raw);
        for value in sent {
            crate::json::free(value);
        }
        Ok(made)
    }
}

//! The mapping between our model and MCP's (the tables in the [module docs](super)).

use crate::call::ToolExecutionResult;
use crate::content::{ContentBlock, UserMessage};
use crate::error::{ErrorInfo, ToolError, codes};
use crate::present::MAX_CARD_DEPTH;
use crate::registry::RegisteredTool;
use crate::{ToolHints, json};
use rmcp::model::{self as mcp, CallToolResult, JsonObject, MetaObject, ToolAnnotations};
use serde_json::{Map, Value};
use std::sync::Arc;

/// `_meta` key of a failure's `{name, code}`.
pub const ERROR_META: &str = "dev.dsh-tools/error";
/// `_meta` key of a success's presentation metadata.
pub const PRESENTATION_META: &str = "dev.dsh-tools/presentation";
/// `_meta` key of a result's additional contexts.
pub const CONTEXTS_META: &str = "dev.dsh-tools/additionalContexts";
/// `_meta` key set to `true` when a success concludes the turn.
pub const CONCLUDES_TURN_META: &str = "dev.dsh-tools/concludesTurn";

/// The deepest structured result [`McpServer`](super::McpServer) sends: JSON-RPC peers parse at
/// most 128 levels (serde_json's and rmcp's limit) and the envelope takes a few. A deeper value
/// fails the call as `INVALID_TOOL_OUTPUT` instead of going out as a message no client can read
/// (or overflowing the encoder's stack); cards and contexts are cut at
/// [`MAX_CARD_DEPTH`](crate::present::MAX_CARD_DEPTH) instead, as the ACP bridge does.
pub const MAX_RESULT_DEPTH: u32 = 120;

/// Whether `name` follows MCP's tool-name guidance (1–128 characters of `[A-Za-z0-9_.-]`).
pub(crate) fn is_conventional_name(name: &str) -> bool {
    (1..=128).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-'))
}

/// A registered tool as an MCP tool, or why it cannot be one.
pub(crate) fn tool(registered: &RegisteredTool) -> Result<mcp::Tool, String> {
    let definition = registered.definition();
    let Value::Object(parameters) = definition.parameters() else {
        return Err("its parameters schema is not a JSON object".to_owned());
    };
    let mut input = match parameters.get("type") {
        Some(Value::String(t)) if t == "object" => json::clone_deep(definition.parameters()),
        // MCP arguments are always an object, so requiring one loses nothing.
        None => {
            let mut copy = json::clone_deep(definition.parameters());
            if let Value::Object(map) = &mut copy {
                map.insert("type".to_owned(), Value::String("object".to_owned()));
            }
            copy
        }
        Some(other) => {
            return Err(format!(
                "its parameters accept {other}, and MCP arguments are always an object"
            ));
        }
    };
    let Value::Object(input) = std::mem::take(&mut input) else {
        return Err("its parameters schema is not a JSON object".to_owned());
    };
    let mut tool = mcp::Tool::new(
        definition.name().to_owned(),
        definition.description().to_owned(),
        Arc::new(input),
    );
    if let Value::Object(output) = definition.output().schema() {
        tool = tool.with_raw_output_schema(Arc::new(output.clone()));
    }
    if let Some(title) = definition.tool_title() {
        tool = tool.with_title(title);
    }
    let hints = definition.tool_hints();
    if !hints.is_empty() {
        tool = tool.with_annotations(ToolAnnotations::from_raw(
            None,
            hints.read_only,
            hints.destructive,
            hints.idempotent,
            hints.open_world,
        ));
    }
    Ok(tool)
}

/// Our hints from MCP annotations.
pub(crate) fn hints(annotations: Option<&ToolAnnotations>) -> ToolHints {
    let mut hints = ToolHints::new();
    if let Some(a) = annotations {
        hints.read_only = a.read_only_hint;
        hints.destructive = a.destructive_hint;
        hints.idempotent = a.idempotent_hint;
        hints.open_world = a.open_world_hint;
    }
    hints
}

/// One of our content blocks as an MCP block; a type MCP does not know becomes a text block
/// holding its JSON.
pub(crate) fn content_block(block: &ContentBlock) -> mcp::ContentBlock {
    if let Some(text) = block.as_text()
        && block.kind() == "text"
    {
        return mcp::ContentBlock::text(text.to_owned());
    }
    // Cut to depth: a block may carry external JSON, and serde's conversion recurses.
    let value = block.to_json_truncated(MAX_CARD_DEPTH);
    match serde_json::from_value::<mcp::ContentBlock>(value.clone()) {
        Ok(mapped) => mapped,
        Err(_) => mcp::ContentBlock::text(json::to_compact_string(&value)),
    }
}

/// A call's result as MCP's. `structured_any`: the peer speaks 2026-07-28 or later, where
/// `structuredContent` may be any JSON value; older peers get it only for objects (rmcp would
/// otherwise strip it and prepend a duplicate text block).
pub(crate) fn call_result(result: ToolExecutionResult, structured_any: bool) -> CallToolResult {
    if let Some(value) = result.value()
        && crate::json::deeper_than(value, MAX_RESULT_DEPTH)
    {
        let error = ToolError::coded(
            "ToolOutputError",
            crate::error::codes::INVALID_TOOL_OUTPUT,
            format!(
                "the tool's output nests deeper than {MAX_RESULT_DEPTH} levels, \
                 more than MCP clients can read"
            ),
        );
        return call_result(ToolExecutionResult::failure(error), structured_any);
    }
    let content: Vec<mcp::ContentBlock> = result.content().iter().map(content_block).collect();
    let mut meta = Map::new();
    let mut structured = false;
    let mut out = match (result.value(), result.error()) {
        (Some(value), _) => {
            structured = structured_any || value.is_object();
            // `null` is "no card" (a presenter that declined): nothing to send.
            if let Some(presentation) = result.meta().filter(|m| !m.is_null()) {
                meta.insert(
                    PRESENTATION_META.to_owned(),
                    json::clone_truncated(presentation, MAX_CARD_DEPTH),
                );
            }
            if result.concludes_turn() {
                meta.insert(CONCLUDES_TURN_META.to_owned(), Value::Bool(true));
            }
            CallToolResult::success(content)
        }
        (None, error) => {
            if let Some(info) = error.and_then(ToolError::info) {
                meta.insert(
                    ERROR_META.to_owned(),
                    serde_json::json!({"name": info.name, "code": info.code}),
                );
            }
            CallToolResult::error(content)
        }
    };
    if let Some(contexts) = result.additional_contexts() {
        // Copied cut to depth first: serde's conversion recurses once per level.
        let bounded: Vec<UserMessage> = contexts
            .iter()
            .map(|c| UserMessage {
                id: c.id.clone(),
                role: c.role.clone(),
                content: c.content.clone(),
                source: json::clone_truncated(&c.source, MAX_CARD_DEPTH),
            })
            .collect();
        if let Ok(value) = serde_json::to_value(&bounded) {
            meta.insert(CONTEXTS_META.to_owned(), value);
        }
    }
    if !meta.is_empty() {
        out.meta = Some(MetaObject(meta));
    }
    if structured {
        // Moved when the result is its only owner. At most MAX_RESULT_DEPTH deep (checked
        // above): a copy may use serde's recursive clone, faster than the iterative one.
        out.structured_content = result.into_value();
    } else {
        drop(result);
    }
    if let Err(size) = fits_in_message(&out) {
        let error = ToolError::coded(
            "ToolOutputError",
            crate::error::codes::INVALID_TOOL_OUTPUT,
            format!(
                "the tool's result is {size} bytes or more as JSON, more than MCP clients read \
                 in one message ({MAX_MESSAGE_BYTES} bytes); return less (a page, a summary)"
            ),
        );
        drop(out);
        return call_result(ToolExecutionResult::failure(error), structured_any);
    }
    out
}

/// The largest result sent: the common client line limit (rmcp's and the TypeScript SDK's
/// stdio readers, 16 MiB) less room for the JSON-RPC envelope. A larger result fails as
/// `INVALID_TOOL_OUTPUT` instead of going out as a message the client drops (leaving its
/// request waiting) or cannot hold.
pub const MAX_MESSAGE_BYTES: usize = 16 * 1024 * 1024 - 64 * 1024;

/// `Ok` when `result` serializes within [`MAX_MESSAGE_BYTES`]; else the size at which counting
/// stopped (the serialization stops there too).
fn fits_in_message(result: &CallToolResult) -> Result<(), usize> {
    // Nearly every result is far below the limit: a bound read off its parts decides without
    // serializing it (the transport serializes it once more anyway); only a result the bound
    // cannot clear is counted exactly.
    if upper_bound(result).is_some_and(|bound| bound <= MAX_MESSAGE_BYTES) {
        return Ok(());
    }
    serializes_within(result, MAX_MESSAGE_BYTES)
}

/// At least as many bytes as `result` takes as JSON (`None`: no bound is read off a result
/// with non-text blocks, block annotations or `_meta`, or past [`MAX_MESSAGE_BYTES`]).
/// serde_json writes a string's byte as at most 6 (`\u00XX`), a number in at most 24.
fn upper_bound(result: &CallToolResult) -> Option<usize> {
    // The keys, `isError`, `resultType` and punctuation of the envelope.
    const ENVELOPE: usize = 256;
    // A text block's keys and punctuation.
    const BLOCK: usize = 32;
    if result.meta.is_some() {
        return None;
    }
    let mut total = ENVELOPE;
    for block in &result.content {
        let text = block.as_text()?;
        if text.meta.is_some() || text.annotations.is_some() {
            return None;
        }
        total = total.checked_add(text.text.len().checked_mul(6)?.checked_add(BLOCK)?)?;
        if total > MAX_MESSAGE_BYTES {
            return None;
        }
    }
    if let Some(value) = &result.structured_content {
        total = total.checked_add(value_bound(value, MAX_MESSAGE_BYTES - total)?)?;
    }
    Some(total)
}

/// Whether this build's serde_json keeps numbers as text (its `arbitrary_precision` feature):
/// only then does `1e400` parse.
fn arbitrary_precision() -> bool {
    static ON: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *ON.get_or_init(|| serde_json::from_str::<Value>("1e400").is_ok())
}

/// At least as many bytes as `value` takes as compact JSON, or `None` past `limit` (or past
/// [`MAX_RESULT_DEPTH`] levels, which [`call_result`] refuses before asking).
fn value_bound(value: &Value, limit: usize) -> Option<usize> {
    let mut total = 0;
    add_bound(value, limit, &mut total, 0)?;
    Some(total)
}

/// [`value_bound`]'s walk: recursive, as the depth is bounded (no stack to allocate per call).
fn add_bound(value: &Value, limit: usize, total: &mut usize, depth: u32) -> Option<()> {
    let string = |s: &str| s.len().saturating_mul(6).saturating_add(2);
    if depth > MAX_RESULT_DEPTH {
        return None;
    }
    let size = match value {
        Value::Null | Value::Bool(_) => 5,
        // Under serde_json's `arbitrary_precision` (which any crate in a build can turn
        // on) a number keeps its text, of any length: no bound then.
        Value::Number(_) if arbitrary_precision() => return None,
        Value::Number(_) => 24,
        Value::String(s) => string(s),
        Value::Array(items) => {
            for item in items {
                add_bound(item, limit, total, depth + 1)?;
            }
            items.len().saturating_add(2)
        }
        Value::Object(map) => {
            let mut size = map.len().saturating_mul(2).saturating_add(2);
            for (key, item) in map {
                size = size.saturating_add(string(key));
                add_bound(item, limit, total, depth + 1)?;
            }
            size
        }
    };
    *total = total.saturating_add(size);
    (*total <= limit).then_some(())
}

/// `Ok` when `value` serializes within `limit` bytes; else the size at which counting stopped
/// (the serialization stops there too).
fn serializes_within(value: &impl serde::Serialize, limit: usize) -> Result<(), usize> {
    struct Counter(usize, usize);
    impl std::io::Write for Counter {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0 += buf.len();
            if self.0 > self.1 {
                return Err(std::io::Error::other("too large"));
            }
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut counter = Counter(0, limit);
    match serde_json::to_writer(&mut counter, value) {
        Ok(()) => Ok(()),
        Err(_) => Err(counter.0),
    }
}

/// A remote failure as our error: the `{name, code}` from `_meta` when a dsh-tools peer sent
/// one, else `McpToolError` / `MCP_TOOL_ERROR`; the message is the text blocks joined, with one
/// leading `Error: ` removed (our own failures are rendered with it).
pub(crate) fn remote_error(result: &CallToolResult) -> ToolError {
    let texts: Vec<&str> = result
        .content
        .iter()
        .filter_map(|b| b.as_text().map(|t| t.text.as_str()))
        .collect();
    let joined = texts.join("\n");
    let message = joined.strip_prefix("Error: ").unwrap_or(&joined);
    let message = if message.is_empty() {
        "the remote tool failed without a message"
    } else {
        message
    };
    let info = result
        .meta
        .as_ref()
        .and_then(|m| m.0.get(ERROR_META))
        .and_then(|v| serde_json::from_value::<ErrorInfo>(v.clone()).ok());
    match info {
        Some(info) => {
            let (name, code) = remote_code(info);
            ToolError::coded(name, code, message)
        }
        None => ToolError::coded("McpToolError", "MCP_TOOL_ERROR", message),
    }
}

/// The codes that are facts about *our* side of a call (our pipeline, our transport, our retry
/// policy). A remote server claiming one is not believed: `TRANSIENT` would make
/// `wrappers::retry` run a remote call twice, `ABORTED_BEFORE_DISPATCH` would say a call that
/// ran did not.
const LOCAL_CODES: &[&str] = &[
    codes::UNKNOWN_TOOL,
    codes::INVALID_TOOL_OUTPUT,
    codes::ABORTED_BEFORE_DISPATCH,
    codes::ABORTED,
    codes::TOOL_TIMEOUT,
    codes::UNSUPPORTED_SCHEMA,
    codes::TRANSIENT,
    "MCP_TOOL_ERROR",
    "MCP_TRANSPORT_ERROR",
    "MCP_PROTOCOL_ERROR",
    "MCP_TIMEOUT",
];

/// A remote `{name, code}` as ours: `INVALID_ARGS` and the tool's own codes are kept; a claim of
/// one of [`LOCAL_CODES`] is kept as data under `REMOTE_<code>` (name `McpToolError`); a code or
/// name that is not a short identifier becomes `MCP_TOOL_ERROR`.
fn remote_code(info: ErrorInfo) -> (String, String) {
    let identifier = |s: &str| {
        (1..=64).contains(&s.len())
            && s.bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-'))
    };
    if !identifier(&info.code) {
        return ("McpToolError".to_owned(), "MCP_TOOL_ERROR".to_owned());
    }
    if LOCAL_CODES.contains(&info.code.as_str()) {
        return ("McpToolError".to_owned(), format!("REMOTE_{}", info.code));
    }
    let name = if identifier(&info.name) {
        info.name
    } else {
        "McpToolError".to_owned()
    };
    (name, info.code)
}

/// A remote success as our value: `{content, structuredContent?}` with `-0` normalised (our
/// values are lossless JSON).
pub(crate) fn remote_value(result: CallToolResult) -> Value {
    let mut map = Map::new();
    let content: Vec<Value> = result
        .content
        .iter()
        .filter_map(|b| serde_json::to_value(b).ok())
        .map(lossless)
        .collect();
    map.insert("content".to_owned(), Value::Array(content));
    if let Some(structured) = result.structured_content {
        map.insert("structuredContent".to_owned(), lossless(structured));
    }
    Value::Object(map)
}

/// The model-facing content of an imported tool's value: its `content` blocks, verbatim.
pub(crate) fn remote_content(value: &Value) -> Vec<ContentBlock> {
    let blocks: Vec<ContentBlock> = value
        .get("content")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|b| ContentBlock::new(b.clone()).ok())
        .collect();
    if blocks.is_empty() && value.get("structuredContent").is_some() {
        return crate::definition::render_default(&value["structuredContent"]);
    }
    blocks
}

/// `value` with every `-0` (and any non-finite number, which JSON cannot carry anyway) made
/// lossless: `-0` becomes `0`. Iterative.
pub(crate) fn lossless(mut value: Value) -> Value {
    if json::is_lossless(&value) {
        return value;
    }
    let mut stack = vec![&mut value];
    while let Some(node) = stack.pop() {
        match node {
            Value::Number(n) if n.as_f64() == Some(0.0) && n.as_i64().is_none() => {
                *node = Value::from(0);
            }
            Value::Array(items) => stack.extend(items.iter_mut()),
            Value::Object(map) => stack.extend(map.values_mut()),
            _ => {}
        }
    }
    value
}

/// The deepest arguments an imported tool's call sends. serde_json's parser (and so rmcp's and
/// every Rust server's) refuses a message nested 128 levels deep, and the JSON-RPC envelope
/// (`{"params": {"arguments": …}}`) adds two levels; at this limit the message nests at most
/// 126 levels, the limit we hold every message an imported server sends us to. Deeper arguments
/// fail the call as `INVALID_ARGS` before anything is sent: no server could read them, and
/// copying and encoding them would recurse once per level on our own stack.
pub const MAX_ARGUMENT_DEPTH: u32 = 124;

/// A JSON object for rmcp's `arguments`, or the `INVALID_ARGS` message that says why the value
/// cannot go out: not an object, nested deeper than [`MAX_ARGUMENT_DEPTH`], or larger as JSON
/// than [`MAX_MESSAGE_BYTES`] (the common server line limit). Never recurses past
/// [`MAX_ARGUMENT_DEPTH`] levels, whatever `value` holds.
pub(crate) fn arguments(value: &Value) -> Result<JsonObject, String> {
    let Value::Object(map) = value else {
        return Err("invalid arguments: MCP tool arguments must be an object".to_owned());
    };
    if json::deeper_than(value, MAX_ARGUMENT_DEPTH) {
        return Err(format!(
            "invalid arguments: the arguments nest deeper than {MAX_ARGUMENT_DEPTH} levels, \
             more than an MCP server can read (JSON-RPC parsers stop at 128 levels)"
        ));
    }
    if let Err(size) = serializes_within(value, MAX_MESSAGE_BYTES) {
        return Err(format!(
            "invalid arguments: the arguments are {size} bytes or more as JSON, more than an \
             MCP server reads in one message ({MAX_MESSAGE_BYTES} bytes)"
        ));
    }
    Ok(map.clone())
}

#[cfg(test)]
mod tests {
    use super::{MAX_MESSAGE_BYTES, content_block, upper_bound};
    use crate::ContentBlock;
    use rmcp::model::{self as mcp, CallToolResult};
    use serde_json::{Value, json};

    /// The bound that lets a result skip its exact count is never below its real size: every
    /// byte of a string escaped (control characters), long numbers, empty and nested
    /// containers, keys that need escaping.
    #[test]
    fn the_size_bound_is_never_below_the_serialized_size() {
        let control: String = (0u8..32).map(char::from).collect();
        let values = [
            json!(null),
            json!(-1.234_567_890_123_456_7e-300),
            json!(u64::MAX),
            json!([[], {}, [[[]]], [null, true, false]]),
            json!({ control.clone(): control.clone(), "\"": ["\\", "\u{7f}"] }),
            json!({"a": {"b": {"c": [1, 2.5, -3, "é日本"]}}}),
            Value::String(control.repeat(100)),
        ];
        for value in values {
            let mut result =
                CallToolResult::success(vec![mcp::ContentBlock::text(control.clone() + "text")]);
            result.is_error = Some(true);
            result.structured_content = Some(value.clone());
            let exact = serde_json::to_vec(&result).unwrap().len();
            let bound = upper_bound(&result).expect("a small text result has a bound");
            assert!(bound >= exact, "{value}: bound {bound} < {exact}");
        }
        // Past the limit there is no bound: the exact count decides.
        let mut big = CallToolResult::success(vec![]);
        big.structured_content = Some(Value::String("x".repeat(MAX_MESSAGE_BYTES / 6 + 1)));
        assert_eq!(upper_bound(&big), None);
        // This build has no `arbitrary_precision`: numbers are bounded (else the loop above
        // would have failed its `expect`).
        assert!(!super::arbitrary_precision());
        // A block that is not text gets no bound.
        let image = CallToolResult::success(vec![mcp::ContentBlock::image("AAAA", "image/png")]);
        assert_eq!(upper_bound(&image), None);
    }

    #[test]
    fn media_helpers_map_to_mcp_blocks_not_text() {
        for block in [
            ContentBlock::image("AAAA", "image/png").unwrap(),
            ContentBlock::audio("AAAA", "audio/wav").unwrap(),
            ContentBlock::resource_link("file:///a", "a"),
            ContentBlock::text_resource("file:///a.md", "text/markdown", "# A"),
        ] {
            let mapped = serde_json::to_value(content_block(&block)).unwrap();
            assert_eq!(mapped["type"], block.kind(), "{mapped}");
            assert_ne!(mapped["type"], "text");
        }
    }
}

//! Content blocks (what the model reads back from a call) and user messages (additional contexts).

use crate::json::is_lossless;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// One block of tool-result content: a JSON object with a string `type` (`{"type": "text",
/// "text": "…"}`, images, reasoning, …). Blocks are lossless JSON.
///
/// ```
/// use dsh_tools::ContentBlock;
///
/// let block = ContentBlock::text("hi");
/// assert_eq!(block.kind(), "text");
/// assert_eq!(block.as_text(), Some("hi"));
/// assert_eq!(serde_json::to_string(&block).unwrap(), r#"{"type":"text","text":"hi"}"#);
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct ContentBlock(Repr);

/// Text blocks, by far the most common, are stored without building a JSON object.
#[derive(Clone, Debug, PartialEq)]
enum Repr {
    Text(String),
    Other(Value),
}

/// Why a JSON value is not a content block.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("a content block must be a lossless JSON object with a string \"type\"")]
pub struct InvalidContentBlock;

impl ContentBlock {
    /// A text block.
    pub fn text(text: impl Into<String>) -> Self {
        Self(Repr::Text(text.into()))
    }

    /// An image, base64-encoded: `{"type": "image", "data": …, "mimeType": …}` (MCP's shape; the
    /// provider formats and the MCP server map it to each peer's image block).
    ///
    /// ```
    /// use dsh_tools::ContentBlock;
    /// let png = ContentBlock::image("iVBORw0KGgo=", "image/png");
    /// assert_eq!(png.kind(), "image");
    /// assert_eq!(png.to_json()["mimeType"], "image/png");
    /// ```
    pub fn image(base64: impl Into<String>, mime_type: impl Into<String>) -> Self {
        Self::media("image", base64.into(), mime_type.into())
    }

    /// Audio, base64-encoded: `{"type": "audio", "data": …, "mimeType": …}`.
    pub fn audio(base64: impl Into<String>, mime_type: impl Into<String>) -> Self {
        Self::media("audio", base64.into(), mime_type.into())
    }

    /// A link to a resource the client can fetch: `{"type": "resource_link", "uri": …,
    /// "name": …}`.
    ///
    /// ```
    /// use dsh_tools::ContentBlock;
    /// let link = ContentBlock::resource_link("file:///srv/report.pdf", "report.pdf");
    /// assert_eq!(link.to_json()["uri"], "file:///srv/report.pdf");
    /// ```
    pub fn resource_link(uri: impl Into<String>, name: impl Into<String>) -> Self {
        let mut map = Map::with_capacity(3);
        map.insert("type".to_owned(), Value::String("resource_link".to_owned()));
        map.insert("uri".to_owned(), Value::String(uri.into()));
        map.insert("name".to_owned(), Value::String(name.into()));
        Self(Repr::Other(Value::Object(map)))
    }

    /// An embedded text resource: `{"type": "resource", "resource": {"uri": …, "mimeType": …,
    /// "text": …}}`.
    pub fn text_resource(
        uri: impl Into<String>,
        mime_type: impl Into<String>,
        text: impl Into<String>,
    ) -> Self {
        let mut inner = Map::with_capacity(3);
        inner.insert("uri".to_owned(), Value::String(uri.into()));
        inner.insert("mimeType".to_owned(), Value::String(mime_type.into()));
        inner.insert("text".to_owned(), Value::String(text.into()));
        let mut map = Map::with_capacity(2);
        map.insert("type".to_owned(), Value::String("resource".to_owned()));
        map.insert("resource".to_owned(), Value::Object(inner));
        Self(Repr::Other(Value::Object(map)))
    }

    fn media(kind: &str, data: String, mime_type: String) -> Self {
        let mut map = Map::with_capacity(3);
        map.insert("type".to_owned(), Value::String(kind.to_owned()));
        map.insert("data".to_owned(), Value::String(data));
        map.insert("mimeType".to_owned(), Value::String(mime_type));
        Self(Repr::Other(Value::Object(map)))
    }

    /// Any block: a lossless JSON object with a string `type`.
    pub fn new(value: Value) -> Result<Self, InvalidContentBlock> {
        let Value::Object(map) = &value else {
            return Err(InvalidContentBlock);
        };
        if !map.get("type").is_some_and(Value::is_string) || !is_lossless(&value) {
            return Err(InvalidContentBlock);
        }
        if map.len() == 2
            && map.get("type").and_then(Value::as_str) == Some("text")
            && let Some(Value::String(text)) = map.get("text")
        {
            return Ok(Self(Repr::Text(text.clone())));
        }
        Ok(Self(Repr::Other(value)))
    }

    /// The block's `type`.
    pub fn kind(&self) -> &str {
        match &self.0 {
            Repr::Text(_) => "text",
            Repr::Other(v) => v.get("type").and_then(Value::as_str).unwrap_or_default(),
        }
    }

    /// The text of a text block.
    pub fn as_text(&self) -> Option<&str> {
        match &self.0 {
            Repr::Text(t) => Some(t),
            Repr::Other(v) if self.kind() == "text" => v.get("text").and_then(Value::as_str),
            Repr::Other(_) => None,
        }
    }

    /// The block as JSON.
    /// The block as JSON, nested at most `max_depth` levels (deeper parts `"…"`), copied without
    /// recursion: for handing a block from an untrusted source to recursive code.
    pub fn to_json_truncated(&self, max_depth: usize) -> Value {
        match &self.0 {
            Repr::Text(_) => self.to_json(),
            Repr::Other(v) => crate::json::clone_truncated(v, max_depth),
        }
    }

    /// The block as JSON (a deep copy; see [`to_json_truncated`](Self::to_json_truncated) for
    /// blocks that may be nested deeply).
    pub fn to_json(&self) -> Value {
        match &self.0 {
            Repr::Text(t) => {
                let mut map = Map::with_capacity(2);
                map.insert("type".to_owned(), Value::String("text".to_owned()));
                map.insert("text".to_owned(), Value::String(t.clone()));
                Value::Object(map)
            }
            Repr::Other(v) => v.clone(),
        }
    }
}

impl Serialize for ContentBlock {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        match &self.0 {
            Repr::Text(t) => {
                let mut map = serializer.serialize_map(Some(2))?;
                map.serialize_entry("type", "text")?;
                map.serialize_entry("text", t)?;
                map.end()
            }
            Repr::Other(v) => v.serialize(serializer),
        }
    }
}

impl<'de> Deserialize<'de> for ContentBlock {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Self::new(Value::deserialize(deserializer)?).map_err(serde::de::Error::custom)
    }
}

impl TryFrom<Value> for ContentBlock {
    type Error = InvalidContentBlock;
    fn try_from(value: Value) -> Result<Self, Self::Error> {
        Self::new(value)
    }
}

/// `[{"type": "text", "text": text}]`.
pub fn text_content(text: impl Into<String>) -> Vec<ContentBlock> {
    vec![ContentBlock::text(text)]
}

/// A user message a tool or a hook attaches to a result (`additionalContexts`), appended by the
/// agent loop after the tool result.
///
/// ```
/// use dsh_tools::{ContentBlock, UserMessage};
/// use serde_json::json;
///
/// let m = UserMessage::new("m1", vec![ContentBlock::text("fyi")], json!({"kind": "plugin", "plugin": "test"}));
/// assert_eq!(
///     serde_json::to_value(&m).unwrap(),
///     json!({"id": "m1", "role": "user", "content": [{"type": "text", "text": "fyi"}],
///            "source": {"kind": "plugin", "plugin": "test"}})
/// );
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct UserMessage {
    /// Message id.
    pub id: String,
    /// Always `"user"`.
    #[serde(default = "user_role")]
    pub role: String,
    /// The message content.
    pub content: Vec<ContentBlock>,
    /// Where it comes from (`{"kind": "plugin", "plugin": "<name>"}`, …).
    #[serde(default, skip_serializing_if = "Value::is_null")]
    pub source: Value,
}

fn user_role() -> String {
    "user".to_owned()
}

impl UserMessage {
    /// A user message.
    pub fn new(id: impl Into<String>, content: Vec<ContentBlock>, source: Value) -> Self {
        Self {
            id: id.into(),
            role: user_role(),
            content,
            source,
        }
    }

    /// Whether every part is lossless JSON (the registry rejects results that are not).
    pub fn is_lossless(&self) -> bool {
        is_lossless(&self.source)
    }
}

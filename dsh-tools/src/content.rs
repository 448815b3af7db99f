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

/// Why [`ContentBlock::image`] or [`ContentBlock::audio`] refused its arguments. Converts into a
/// [`ToolError`](crate::ToolError) (code `INVALID_MEDIA`), so a tool body takes it with `?`.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("ContentBlock::{kind}(data, mime_type): {reason}")]
pub struct InvalidMedia {
    kind: &'static str,
    reason: String,
}

impl InvalidMedia {
    /// `"image"` or `"audio"`.
    pub fn kind(&self) -> &'static str {
        self.kind
    }
}

/// At most this much of a refused argument is quoted in the message.
const QUOTED: usize = 40;

fn quoted(text: &str) -> String {
    match text.char_indices().nth(QUOTED) {
        Some((end, _)) => format!("{:?}…", &text[..end]),
        None => format!("{text:?}"),
    }
}

/// `type/subtype` (RFC 6838 names), parameters after a `;` allowed.
fn is_mime_type(text: &str) -> bool {
    let essence = text.split(';').next().unwrap_or_default().trim();
    let name = |part: &str| {
        let mut chars = part.chars();
        chars.next().is_some_and(|c| c.is_ascii_alphanumeric())
            && part.len() <= 127
            && chars.all(|c| c.is_ascii_alphanumeric() || "!#$&^_.+-".contains(c))
    };
    matches!(essence.split_once('/'), Some((top, sub)) if name(top) && name(sub))
}

/// The first reason `data` is not standard, padded base64 (RFC 4648 §4), checked in one pass.
fn base64_problem(data: &str) -> Option<String> {
    if data.is_empty() {
        return Some("data is empty".to_owned());
    }
    let bytes = data.as_bytes();
    let padding = bytes.iter().rev().take_while(|b| **b == b'=').count();
    if let Some(at) = bytes[..bytes.len() - padding]
        .iter()
        .position(|b| !(b.is_ascii_alphanumeric() || *b == b'+' || *b == b'/'))
    {
        let shown = data[at..].chars().next().unwrap_or_default();
        return Some(format!(
            "data is not base64: {shown:?} at byte {at} (standard alphabet, no whitespace)"
        ));
    }
    if padding > 2 || !bytes.len().is_multiple_of(4) {
        return Some(format!(
            "data is not base64: its length {} is not a multiple of 4 (pad with `=`)",
            bytes.len()
        ));
    }
    None
}

fn check_media(kind: &'static str, data: &str, mime_type: &str) -> Result<(), InvalidMedia> {
    let refuse = |reason: String| Err(InvalidMedia { kind, reason });
    if is_mime_type(data) && !is_mime_type(mime_type) {
        return refuse(format!(
            "the arguments are swapped (data {} is a MIME type): the base64 data comes first",
            quoted(data)
        ));
    }
    if !is_mime_type(mime_type) {
        return refuse(format!(
            "mime_type {} is not `type/subtype` (for example \"{kind}/{}\")",
            quoted(mime_type),
            if kind == "image" { "png" } else { "wav" }
        ));
    }
    let top = mime_type.split('/').next().unwrap_or_default();
    if !top.eq_ignore_ascii_case(kind) {
        return refuse(format!(
            "mime_type {} is not an {kind} type (`{kind}/…`); use the constructor for its kind, \
             or `ContentBlock::new` for any other block",
            quoted(mime_type)
        ));
    }
    match base64_problem(data) {
        Some(problem) => refuse(problem),
        None => Ok(()),
    }
}

impl ContentBlock {
    /// A text block.
    pub fn text(text: impl Into<String>) -> Self {
        Self(Repr::Text(text.into()))
    }

    /// An image, base64-encoded: `{"type": "image", "data": …, "mimeType": …}` (MCP's shape; the
    /// provider formats and the MCP server map it to each peer's image block).
    ///
    /// Both arguments are checked, so a swapped pair cannot reach a model or an MCP client: `data`
    /// must be standard base64 (padded, no whitespace) and `mime_type` an `image/<subtype>`. A
    /// tool body returning `Result<_, ToolError>` takes the error with `?`.
    ///
    /// ```
    /// use dsh_tools::ContentBlock;
    /// let png = ContentBlock::image("iVBORw0KGgo=", "image/png")?;
    /// assert_eq!(png.kind(), "image");
    /// assert_eq!(png.to_json()["mimeType"], "image/png");
    ///
    /// let swapped = ContentBlock::image("image/png", "iVBORw0KGgo=").unwrap_err();
    /// assert_eq!(
    ///     swapped.to_string(),
    ///     "ContentBlock::image(data, mime_type): the arguments are swapped (data \"image/png\" is a \
    ///      MIME type): the base64 data comes first"
    /// );
    /// # Ok::<(), dsh_tools::InvalidMedia>(())
    /// ```
    pub fn image(
        base64: impl Into<String>,
        mime_type: impl Into<String>,
    ) -> Result<Self, InvalidMedia> {
        Self::media("image", base64.into(), mime_type.into())
    }

    /// Audio, base64-encoded: `{"type": "audio", "data": …, "mimeType": …}`, checked as
    /// [`image`](Self::image) is (`mime_type` an `audio/<subtype>`).
    ///
    /// ```
    /// use dsh_tools::ContentBlock;
    /// assert_eq!(ContentBlock::audio("UklGRg==", "audio/wav")?.kind(), "audio");
    /// assert!(ContentBlock::audio("UklGRg==", "image/png").is_err());
    /// # Ok::<(), dsh_tools::InvalidMedia>(())
    /// ```
    pub fn audio(
        base64: impl Into<String>,
        mime_type: impl Into<String>,
    ) -> Result<Self, InvalidMedia> {
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

    fn media(kind: &'static str, data: String, mime_type: String) -> Result<Self, InvalidMedia> {
        check_media(kind, &data, &mime_type)?;
        let mut map = Map::with_capacity(3);
        map.insert("type".to_owned(), Value::String(kind.to_owned()));
        map.insert("data".to_owned(), Value::String(data));
        map.insert("mimeType".to_owned(), Value::String(mime_type));
        Ok(Self(Repr::Other(Value::Object(map))))
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

    /// The JSON of a block that is not stored as plain text (`None` for text blocks).
    pub(crate) fn stored_json(&self) -> Option<&Value> {
        match &self.0 {
            Repr::Text(_) => None,
            Repr::Other(v) => Some(v),
        }
    }

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

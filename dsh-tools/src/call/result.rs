//! `ToolExecutionResult`: immutable once built; a success always has a value, a failure never does.

use super::ExecutionToken;
use crate::content::{ContentBlock, UserMessage, text_content};
use crate::error::ToolError;
use crate::json::is_lossless;
use serde::Serialize;
use serde::ser::SerializeMap;
use serde_json::Value;
use std::sync::Arc;

/// The outcome of one call (spec §6.1): a success with its canonical value, or a failure with
/// its error; both with the content the model reads, optional presentation `meta` and
/// additional contexts.
///
/// Results are immutable and cheap to clone. Wrappers and hooks build new ones with
/// [`success`](Self::success) / [`failure`](Self::failure) and the `with_*` methods; only the
/// registry builds a *canonical* success (validated against the tool's output schema and
/// rendered), and anything else a wrapper returns as a success is re-validated and re-rendered.
///
/// Dropping and copying a result never recurses through its value, meta or contexts, however
/// deep. Serializing one goes through serde, which recurses once per level: values parsed from
/// text (serde_json's limit is 128 levels) are fine anywhere; a host that builds deeper values
/// itself should serialize on a large enough stack.
///
/// Serializes to the spec's shape:
/// `{"content": [...], "isError": false, "value": …, "meta"?: …, "additionalContexts"?: […], "concludesTurn"?: true}`
/// or `{"content": [...], "isError": true, "error": {"message", "info"?}, …}`.
#[derive(Clone, Debug)]
pub struct ToolExecutionResult {
    data: Arc<ResultData>,
    /// Set only by the pipeline: the execution whose dispatch produced this canonical result.
    origin: Option<ExecutionToken>,
}

#[derive(Debug, PartialEq)]
pub(crate) struct ResultData {
    pub(crate) outcome: Outcome,
    pub(crate) content: Vec<ContentBlock>,
    pub(crate) meta: Option<Value>,
    pub(crate) contexts: Option<Vec<UserMessage>>,
}

#[derive(Debug, PartialEq)]
pub(crate) enum Outcome {
    Success {
        value: Arc<Value>,
        concludes_turn: bool,
    },
    Failure(ToolError),
}

impl Drop for ResultData {
    /// Values, meta and contexts may come from a tool returning parsed external JSON, nested
    /// deeper than serde_json's own recursive `Drop` survives: the last owner frees them
    /// iteratively.
    fn drop(&mut self) {
        if let Outcome::Success { value, .. } = &mut self.outcome
            && let Some(value) = Arc::get_mut(value)
        {
            crate::json::free(std::mem::take(value));
        }
        if let Some(meta) = self.meta.take() {
            crate::json::free(meta);
        }
        for context in self.contexts.take().into_iter().flatten() {
            crate::json::free(context.source);
        }
    }
}

/// A copy of a user message without recursion.
fn clone_message(message: &UserMessage) -> UserMessage {
    UserMessage {
        id: message.id.clone(),
        role: message.role.clone(),
        content: message.content.clone(),
        source: crate::json::clone_deep(&message.source),
    }
}

impl PartialEq for ToolExecutionResult {
    /// Equal outcomes, content, meta and contexts (provenance is not compared).
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.data, &other.data) || self.data == other.data
    }
}

impl ToolExecutionResult {
    pub(crate) fn from_data(data: ResultData, origin: Option<ExecutionToken>) -> Self {
        Self {
            data: Arc::new(data),
            origin,
        }
    }

    /// A success with `value` and no content. Returned by a wrapper, the registry validates the
    /// value against the tool's output schema and renders the content itself.
    pub fn success(value: Value) -> Self {
        Self::from_data(
            ResultData {
                outcome: Outcome::Success {
                    value: Arc::new(value),
                    concludes_turn: false,
                },
                content: Vec::new(),
                meta: None,
                contexts: None,
            },
            None,
        )
    }

    /// A failure whose content is `Error: <message>` (spec §6.9).
    pub fn failure(error: ToolError) -> Self {
        let content = text_content(format!("Error: {}", error.message()));
        Self::from_data(
            ResultData {
                outcome: Outcome::Failure(error),
                content,
                meta: None,
                contexts: None,
            },
            None,
        )
    }

    fn edit(&self, f: impl FnOnce(&mut ResultData)) -> Self {
        let mut data = ResultData {
            outcome: match &self.data.outcome {
                Outcome::Success {
                    value,
                    concludes_turn,
                } => Outcome::Success {
                    value: Arc::clone(value),
                    concludes_turn: *concludes_turn,
                },
                Outcome::Failure(e) => Outcome::Failure(e.clone()),
            },
            content: self.data.content.clone(),
            meta: self.data.meta.as_ref().map(crate::json::clone_deep),
            contexts: self
                .data
                .contexts
                .as_ref()
                .map(|c| c.iter().map(clone_message).collect()),
        };
        f(&mut data);
        Self::from_data(data, None)
    }

    /// A copy with other content (no longer canonical).
    pub fn with_content(&self, content: Vec<ContentBlock>) -> Self {
        self.edit(|d| d.content = content)
    }

    /// A copy with presentation metadata (no longer canonical).
    pub fn with_meta(&self, meta: Option<Value>) -> Self {
        self.edit(|d| d.meta = meta)
    }

    /// A copy with these additional contexts (no longer canonical).
    pub fn with_additional_contexts(&self, contexts: Vec<UserMessage>) -> Self {
        self.edit(|d| d.contexts = Some(contexts))
    }

    /// Whether the call failed.
    pub fn is_error(&self) -> bool {
        matches!(self.data.outcome, Outcome::Failure(_))
    }

    /// The canonical value of a success.
    pub fn value(&self) -> Option<&Value> {
        match &self.data.outcome {
            Outcome::Success { value, .. } => Some(value),
            Outcome::Failure(_) => None,
        }
    }

    /// The error of a failure.
    pub fn error(&self) -> Option<&ToolError> {
        match &self.data.outcome {
            Outcome::Failure(e) => Some(e),
            Outcome::Success { .. } => None,
        }
    }

    /// The error code of a routable failure.
    pub fn code(&self) -> Option<&str> {
        self.error().and_then(ToolError::code)
    }

    /// What the model reads.
    pub fn content(&self) -> &[ContentBlock] {
        &self.data.content
    }

    /// The text of the content's text blocks, joined by newlines.
    pub fn text(&self) -> String {
        let texts: Vec<&str> = self
            .data
            .content
            .iter()
            .filter_map(ContentBlock::as_text)
            .collect();
        texts.join("\n")
    }

    /// Presentation metadata (top-level successes of tools that declare it, or wrapper-authored).
    pub fn meta(&self) -> Option<&Value> {
        self.data.meta.as_ref()
    }

    /// Additional contexts, in order (absent when none were attached).
    pub fn additional_contexts(&self) -> Option<&[UserMessage]> {
        self.data.contexts.as_deref()
    }

    /// Whether the tool asked to conclude the turn (successes only).
    pub fn concludes_turn(&self) -> bool {
        matches!(
            self.data.outcome,
            Outcome::Success {
                concludes_turn: true,
                ..
            }
        )
    }

    pub(crate) fn origin(&self) -> Option<ExecutionToken> {
        self.origin
    }

    /// Whether every presentation field is lossless JSON (content blocks are by construction).
    pub(crate) fn is_lossless(&self) -> bool {
        self.data.meta.as_ref().is_none_or(is_lossless)
            && self
                .data
                .contexts
                .iter()
                .flatten()
                .all(UserMessage::is_lossless)
    }

    /// The same result, tagged as the canonical result of `token`'s dispatch.
    /// A copy of a success's value and contexts, to build a canonical result from what a
    /// wrapper returned. Without recursion: the value may be external JSON of any depth.
    pub(crate) fn parts_to_rebuild(&self) -> (Value, Option<Vec<UserMessage>>) {
        let value = self
            .value()
            .map(crate::json::clone_deep)
            .unwrap_or_default();
        let contexts = self
            .data
            .contexts
            .as_ref()
            .map(|c| c.iter().map(clone_message).collect());
        (value, contexts)
    }

    /// A success's value, moved out when this result is its only owner and copied otherwise
    /// (the copy recurses: the caller bounds the value's depth first).
    #[cfg(feature = "mcp")]
    pub(crate) fn into_value(mut self) -> Option<Value> {
        if let Some(data) = Arc::get_mut(&mut self.data)
            && let Outcome::Success { value, .. } = &mut data.outcome
            && let Some(value) = Arc::get_mut(value)
        {
            return Some(std::mem::take(value));
        }
        self.value().cloned()
    }

    pub(crate) fn tagged(self, token: ExecutionToken) -> Self {
        Self {
            data: self.data,
            origin: Some(token),
        }
    }

    /// This result with `other`'s contexts.
    pub(crate) fn with_contexts_of(self, other: &Self) -> Self {
        match &other.data.contexts {
            None => self,
            Some(c) => self.edit(|d| d.contexts = Some(c.iter().map(clone_message).collect())),
        }
    }

    /// The contexts as a vector (empty when absent).
    pub(crate) fn contexts_vec(&self) -> Vec<UserMessage> {
        self.data
            .contexts
            .iter()
            .flatten()
            .map(clone_message)
            .collect()
    }

    /// This result with exactly `contexts` (absent when empty); untagged.
    pub(crate) fn set_contexts(&self, contexts: Vec<UserMessage>) -> Self {
        if contexts.is_empty() && self.data.contexts.is_none() {
            return Self::from_data_ref(self);
        }
        self.edit(|d| d.contexts = (!contexts.is_empty()).then_some(contexts))
    }

    fn from_data_ref(other: &Self) -> Self {
        Self {
            data: Arc::clone(&other.data),
            origin: None,
        }
    }
}

impl Serialize for ToolExecutionResult {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let d = &self.data;
        let mut map = serializer.serialize_map(None)?;
        map.serialize_entry("content", &d.content)?;
        map.serialize_entry("isError", &self.is_error())?;
        match &d.outcome {
            Outcome::Success { value, .. } => map.serialize_entry("value", &**value)?,
            Outcome::Failure(e) => map.serialize_entry("error", e)?,
        }
        if let Some(meta) = &d.meta {
            map.serialize_entry("meta", meta)?;
        }
        if let Some(contexts) = &d.contexts {
            map.serialize_entry("additionalContexts", contexts)?;
        }
        if self.concludes_turn() {
            map.serialize_entry("concludesTurn", &true)?;
        }
        map.end()
    }
}

/// Reads the shape [`Serialize`] writes, so a host can keep results (a deferred turn's
/// finished calls) and give them back after a restart. The result read back is not canonical
/// (a wrapper returning it is re-validated, as for any result it builds).
impl<'de> serde::Deserialize<'de> for ToolExecutionResult {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        use serde::de::Error as _;
        let mut map = serde_json::Map::<String, Value>::deserialize(deserializer)?;
        let mut take = |key: &str| map.remove(key);
        let content: Vec<ContentBlock> = match take("content") {
            Some(content) => serde_json::from_value(content).map_err(D::Error::custom)?,
            None => return Err(D::Error::missing_field("content")),
        };
        let is_error = match take("isError") {
            Some(Value::Bool(b)) => b,
            Some(_) => return Err(D::Error::custom("`isError` must be a boolean")),
            None => return Err(D::Error::missing_field("isError")),
        };
        let meta = take("meta");
        let contexts: Option<Vec<UserMessage>> = take("additionalContexts")
            .map(serde_json::from_value)
            .transpose()
            .map_err(D::Error::custom)?;
        let concludes_turn = matches!(take("concludesTurn"), Some(Value::Bool(true)));
        let outcome = if is_error {
            let error = take("error").ok_or_else(|| D::Error::missing_field("error"))?;
            Outcome::Failure(serde_json::from_value(error).map_err(D::Error::custom)?)
        } else {
            let value = take("value").ok_or_else(|| D::Error::missing_field("value"))?;
            Outcome::Success {
                value: Arc::new(value),
                concludes_turn,
            }
        };
        let result = Self::from_data(
            ResultData {
                outcome,
                content,
                meta,
                contexts,
            },
            None,
        );
        if !result.is_lossless() {
            return Err(D::Error::custom("a result must be lossless JSON"));
        }
        Ok(result)
    }
}

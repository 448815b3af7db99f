//! The annotations every value node may carry ([`Annotations`]), and compact JSON in `Debug`
//! output ([`JsonText`]).

use super::super::compile::{free, option_value_eq};
use crate::json::{clone_deep, to_compact_string};
use serde_json::{Map, Value};
use std::fmt;

/// The annotations every value node may carry. They are copied into the compiled schema and
/// never validated against (a `default` is not applied either).
///
/// `default` and `examples` must be lossless JSON (no `-0`), checked when the spec compiles.
#[derive(Default)]
pub struct Annotations {
    /// `description`: what the value means, for the model.
    pub description: Option<String>,
    /// `title`: a short human-readable name.
    pub title: Option<String>,
    /// `default`: an annotation only.
    pub default: Option<Value>,
    /// `examples`: any JSON, conventionally an array of sample values.
    pub examples: Option<Value>,
}

impl Annotations {
    pub(super) fn from_author(node: &Map<String, Value>) -> Self {
        // After the raw pass `description` and `title` are strings.
        let text = |key: &str| node.get(key).and_then(Value::as_str).map(str::to_owned);
        Self {
            description: text("description"),
            title: text("title"),
            default: node.get("default").map(clone_deep),
            examples: node.get("examples").map(clone_deep),
        }
    }

    pub(super) fn write(&self, out: &mut Map<String, Value>) {
        for (key, text) in [("description", &self.description), ("title", &self.title)] {
            if let Some(text) = text {
                out.insert(key.to_owned(), Value::String(text.clone()));
            }
        }
        for (key, value) in [("default", &self.default), ("examples", &self.examples)] {
            if let Some(value) = value {
                out.insert(key.to_owned(), clone_deep(value));
            }
        }
    }

    pub(super) fn free(&mut self) {
        free(self.default.take());
        free(self.examples.take());
    }
}

impl Clone for Annotations {
    fn clone(&self) -> Self {
        Self {
            description: self.description.clone(),
            title: self.title.clone(),
            default: self.default.as_ref().map(clone_deep),
            examples: self.examples.as_ref().map(clone_deep),
        }
    }
}

impl PartialEq for Annotations {
    fn eq(&self, other: &Self) -> bool {
        self.description == other.description
            && self.title == other.title
            && option_value_eq(self.default.as_ref(), other.default.as_ref())
            && option_value_eq(self.examples.as_ref(), other.examples.as_ref())
    }
}

impl Eq for Annotations {}

/// Renders a value as compact JSON in `Debug` output, without recursion.
pub(super) struct JsonText<'a>(pub(super) &'a Value);

impl fmt::Debug for JsonText<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&to_compact_string(self.0))
    }
}

impl fmt::Debug for Annotations {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Annotations")
            .field("description", &self.description)
            .field("title", &self.title)
            .field("default", &self.default.as_ref().map(JsonText))
            .field("examples", &self.examples.as_ref().map(JsonText))
            .finish()
    }
}

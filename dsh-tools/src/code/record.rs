//! The two observability records of a `run_code` sub-call (Code Mode spec §4.8, §6.7): one when
//! it starts, one when it is committed. They go to the registry's
//! [`on_code_dispatch`](crate::Registry::on_code_dispatch) observers, never to the model.

use crate::content::ContentBlock;
use serde::Serialize;
use serde_json::Value;

/// Which record: the start (before pre-execute) or the settle (at commit).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CodeDispatchKind {
    /// `tool/code-dispatch-start`: appended before the sub-call's pre-execute.
    Start,
    /// `tool/code-dispatch`: appended when the sub-call is committed.
    Settle,
}

impl CodeDispatchKind {
    /// The record type upstream logs (`tool/code-dispatch-start`, `tool/code-dispatch`).
    pub fn record_type(self) -> &'static str {
        match self {
            Self::Start => "tool/code-dispatch-start",
            Self::Settle => "tool/code-dispatch",
        }
    }
}

/// One record (its `data`, serialized with the spec's field names).
///
/// ```
/// use dsh_tools::code::{CodeDispatchKind, CodeDispatchRecord};
/// use serde_json::json;
///
/// let record = CodeDispatchRecord {
///     kind: CodeDispatchKind::Start,
///     root_call_id: "call-1".into(),
///     parent_call_id: "call-1".into(),
///     sub_call_id: "call-1:code:1".into(),
///     name: "echo".into(),
///     arguments: json!({"value": "one"}),
///     is_error: None,
///     content: None,
/// };
/// assert_eq!(record.kind.record_type(), "tool/code-dispatch-start");
/// assert_eq!(serde_json::to_value(&record).unwrap(), json!({
///     "rootCallId": "call-1", "parentCallId": "call-1", "subCallId": "call-1:code:1",
///     "name": "echo", "arguments": {"value": "one"}
/// }));
/// ```
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CodeDispatchRecord {
    /// Start or settle.
    #[serde(skip)]
    pub kind: CodeDispatchKind,
    /// The outer call's root call id.
    pub root_call_id: String,
    /// The `run_code` call's id.
    pub parent_call_id: String,
    /// `<parentCallId>:code:<n>`.
    pub sub_call_id: String,
    /// The tool called.
    pub name: String,
    /// The arguments, as a copy independent of what the tool received.
    pub arguments: Value,
    /// Settle only: whether the final result is a failure.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub is_error: Option<bool>,
    /// Settle only: the final content, complete.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub content: Option<Vec<ContentBlock>>,
}

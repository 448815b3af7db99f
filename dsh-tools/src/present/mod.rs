//! Presentation cards (spec §9): how a UI shows a tool call while it runs and once it settles.
//!
//! A tool may declare a call presenter (`presentCall`, a pure function of the logged arguments) and
//! a result presenter (`presentResult`, a pure function of the arguments and the durable result
//! `{content, isError, meta?}`). Both run during live streaming and again on replay of old logs,
//! so they must never fail: [`present_call_safely`] and [`present_result_safely`] turn an absent
//! presenter, a presenter that returns `None` and a presenter that panics into the generic card
//! ([`ToolCallView::fallback`], [`ToolResultView::fallback`]).
//!
//! The views are closed tagged unions: `card` is a required discriminant, `search` and `web`
//! results carry an inner `shape` / `kind`, and optional fields are omitted when absent.
//!
//! ```
//! use dsh_tools::present::{CallPresenter, ToolCallView, present_call_safely};
//! use serde_json::{Value, json};
//! use std::sync::Arc;
//!
//! // A shell tool shows its command as a terminal card.
//! let present_call: CallPresenter = Arc::new(|args: &Value| {
//!     Some(ToolCallView::Terminal {
//!         title: args.get("command")?.as_str()?.to_owned(),
//!         description: None,
//!         cwd: args.get("cwd").and_then(Value::as_str).map(str::to_owned),
//!     })
//! });
//!
//! let view = present_call_safely("bash", Some(&*present_call), &json!({"command": "cargo test"}));
//! assert_eq!(serde_json::to_string(&view)?, r#"{"card":"terminal","title":"cargo test"}"#);
//! assert_eq!(view.to_string(), "$ cargo test");
//!
//! // Arguments the presenter cannot read select the generic card.
//! let view = present_call_safely("bash", Some(&*present_call), &json!({"cmd": "ls"}));
//! assert_eq!(
//!     serde_json::to_string(&view)?,
//!     r#"{"card":"generic","title":"bash","rawInput":{"cmd":"ls"}}"#
//! );
//! # Ok::<(), serde_json::Error>(())
//! ```
//!
//! Rooms: `cards` (the views, presenters and safe wrappers), `display` (their compact terminal
//! text), `text` (characters a terminal would show as something else).

mod cards;
mod display;
#[cfg(test)]
mod tests;
mod text;

pub use cards::{
    CallPresenter, CallPresenterFn, FileDiff, FileLocation, MAX_CARD_DEPTH, ReadFileLine,
    ResultPresenter, ResultPresenterFn, ResultSummary, SearchFile, SearchMatch, SearchResult,
    TerminalExit, TerminalResult, ToolCallKind, ToolCallView, ToolResultView, WebResult, WebSource,
    present_call_safely, present_result_safely,
};
pub use text::{escape_hidden, escape_hidden_json, is_hidden_char};

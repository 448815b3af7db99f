//! The Agent Client Protocol bridge (feature `acp`): a registry's calls shown in ACP editors (Zed
//! and every other ACP v1 client) as tool calls with their cards, and `ask` decisions sent to the
//! user as permission requests.
//!
//! Built on the types of the official `agent-client-protocol` crate (re-exported as
//! [`agent_client_protocol`], its v1 messages as [`schema`]); nothing of ACP's model is copied.
//!
//! - [`tool_call`], [`tool_call_in_progress`] and [`tool_call_result`] map cards to updates, for
//!   runtimes that drive the protocol themselves.
//! - [`AcpBridge`] does it all for a [`Registry`](crate::Registry): it is the registry's approval
//!   service, and [`AcpSession::execute`] announces a call, marks it running when dispatch starts
//!   and settles it, through any [`AcpClient`] (the SDK's connection is one).
//!
//! `examples/acp_agent.rs` is a whole ACP agent over stdio built on this module.
//!
//! # Mapping
//!
//! | ours | ACP v1 |
//! |---|---|
//! | a `run_code` call (Code Mode) | like any call, with its card: the program's `description` as title, `kind: execute`, the program as `rawInput` |
//! | a `run_code` sub-call (`<callId>:code:<n>`) | its own tool call: `tool_call` at its start record (before its policy), `in_progress` at dispatch, the result when it is committed; a sub-call abandoned before it started is never shown |
//! | a call is announced | `tool_call`, `status: pending`, `rawInput` = the arguments, `name` and `_meta["dev.dsh-tools/tool"]` = the tool name |
//! | dispatch starts (after approval and guards) | `tool_call_update`, `status: in_progress` |
//! | a progress report of the body (a long call; an imported MCP tool's remote task, its status message) | `tool_call_update`, `status: in_progress`, the report as its content (`compiling (1 of 2)`), each distinct report once |
//! | the result | `tool_call_update`, `status: completed` (`failed` for an error result), `rawOutput` = the structured value (the content blocks when there is none) |
//! | generic card | `kind` = its kind (`other` when absent), its content blocks, its locations |
//! | terminal call card | `kind: execute`; the client renders `_meta.terminal_output`: a `terminal` block with id = the call id and `_meta.terminal_info {terminal_id, cwd}`; otherwise its description as text |
//! | terminal result card | `_meta.terminal_output {terminal_id, data}` and `_meta.terminal_exit {terminal_id, exit_code, signal}`; content: the `terminal` block, or for clients without the convention a fenced `console` block with `exit code N` / `killed by SIGNAL` |
//! | diff card | `kind: edit`, one `diff` block per file (full `oldText` / `newText`, `oldText: null` for a new file), the files as locations |
//! | read result card | the lines as a fenced block (its `lang`), the file as location (line = offset), its extra content |
//! | search result card | the hits as `path:line: text` lines (or the paths), the files as locations |
//! | web result card | the answer as text and each source as a `resource_link`; a fetch as a link to the page followed by the result's content |
//! | content blocks | text, image, audio, resource_link, resource one to one (MCP's shapes); any other block as its JSON text |
//! | titles of file cards (diff, read and search cards; generic call cards of kind read, edit, delete, move or search) | written relative to the session's working directory where they name a path under it ([`SessionView::relative_title`]); other titles (a command) as written |
//! | `status: pending`, `oldText: null` | omitted: the SDK leaves out the schema's defaults, and ACP reads an absent status as `pending` and an absent `oldText` as a new file |
//! | locations, diff paths | absolute: a relative path is joined to the working directory, `.` and `..` resolved ([`SessionView::absolute`]) |
//! | `ask` decision | `session/request_permission` with the call's `tool_call` as `toolCall`, options `allow_once`, `allow_always`, `reject_once`, `reject_always` (the two "always" options only when the tool's `GrantPolicy` gives the call a grant key); the ask's reason in `_meta["dev.dsh-tools/reason"]` |
//! | option selected | allow once → allowed; allow always → allowed, and a registry grant (`Registry::grants`) for the tool and the session's agent answers later calls without asking; reject once / always → rejected (always: a rejecting grant); the session's grants are revoked when it is dropped; an option that was not offered → the call fails with that message |
//! | `cancelled` outcome | cancelled (the call's signal aborted → `ABORTED_BEFORE_DISPATCH`, else denied) |
//! | the caller aborts while asking | the request is dropped (the SDK sends `$/cancel_request`) → cancelled |
//! | the request fails (connection gone) | unavailable (denied: no channel could ask the user) |
//! | an `ask` for an agent without an open session | unavailable |
//!
//! Arguments, outputs and content blocks go on the wire nested at most
//! [`MAX_CARD_DEPTH`](crate::present::MAX_CARD_DEPTH) levels deep (deeper parts become `"…"`),
//! so a hostile model's 100,000-level arguments cannot overflow the SDK's recursive serializer.

mod session;
mod updates;

pub use agent_client_protocol;
/// ACP v1's messages and types (`agent_client_protocol::v1::schema`).
pub use agent_client_protocol::v1::schema;
pub use session::{
    ALLOW_ALWAYS, ALLOW_ONCE, AcpBridge, AcpClient, AcpSession, MAX_STREAMED_CALLS, REJECT_ALWAYS,
    REJECT_ONCE,
};
pub use updates::{
    SessionView, TOOL_META_KEY, fenced, tool_call, tool_call_in_progress, tool_call_progress,
    tool_call_result,
};

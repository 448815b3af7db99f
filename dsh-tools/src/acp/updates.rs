//! Cards → `session/update` tool calls (the mapping table is in the module docs of [`super`]).

use crate::ContentBlock;
use crate::call::ToolExecutionResult;
use crate::present::{
    FileDiff, FileLocation, MAX_CARD_DEPTH, SearchResult, TerminalExit, TerminalResult,
    ToolCallKind, ToolCallView, ToolResultView, WebResult,
};
use agent_client_protocol::v1::schema::{
    ContentBlock as AcpBlock, Diff, Meta, ResourceLink, Terminal, TextContent, ToolCall,
    ToolCallContent, ToolCallLocation, ToolCallStatus, ToolCallUpdate, ToolCallUpdateFields,
    ToolKind,
};
use serde_json::{Value, json};
use std::path::{Component, Path, PathBuf};

/// How one ACP session shows cards: its working directory (file titles are made relative to it,
/// relative paths absolute) and whether its client renders the terminal `_meta` convention.
///
/// ```
/// use dsh_tools::acp::SessionView;
///
/// let view = SessionView::new("/work/app").terminal_output(true);
/// assert_eq!(view.cwd().unwrap().to_str(), Some("/work/app"));
/// assert!(view.has_terminal_output());
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SessionView {
    cwd: Option<PathBuf>,
    terminal_output: bool,
}

impl SessionView {
    /// A session working in `cwd` (an absolute path, as ACP's `session/new` gives it; a relative
    /// one is kept but relativises nothing).
    pub fn new(cwd: impl Into<PathBuf>) -> Self {
        Self {
            cwd: Some(cwd.into()),
            terminal_output: false,
        }
    }

    /// A session without a working directory: titles stay as the presenters wrote them.
    pub fn without_cwd() -> Self {
        Self::default()
    }

    /// Whether the client renders command output from `_meta.terminal_output` (clients advertise
    /// it as `clientCapabilities._meta.terminal_output: true`). Without it, output is sent as a
    /// fenced `console` block.
    pub fn terminal_output(mut self, supported: bool) -> Self {
        self.terminal_output = supported;
        self
    }

    /// Reads [`terminal_output`](Self::terminal_output) from the client's `initialize`
    /// capabilities.
    pub fn with_capabilities(
        self,
        capabilities: &agent_client_protocol::v1::schema::ClientCapabilities,
    ) -> Self {
        let supported = capabilities
            .meta
            .as_ref()
            .and_then(|m| m.get("terminal_output"))
            .and_then(Value::as_bool)
            .unwrap_or(false);
        self.terminal_output(supported)
    }

    /// The working directory.
    pub fn cwd(&self) -> Option<&Path> {
        self.cwd.as_deref()
    }

    /// Whether the client renders the terminal `_meta` convention.
    pub fn has_terminal_output(&self) -> bool {
        self.terminal_output
    }

    /// `title` with each absolute path under the working directory written relative to it
    /// (`Read /work/app/src/main.rs` → `Read src/main.rs`). Paths elsewhere, paths that climb out
    /// with `..`, and every title when the working directory is `/`, relative or not UTF-8 stay
    /// as they are.
    ///
    /// ```
    /// use dsh_tools::acp::SessionView;
    ///
    /// let view = SessionView::new("/work/app");
    /// assert_eq!(view.relative_title("Edit `/work/app/src/lib.rs`"), "Edit `src/lib.rs`");
    /// assert_eq!(view.relative_title("Read /work/apple/x"), "Read /work/apple/x");
    /// assert_eq!(view.relative_title("Read /work/app/../etc/passwd"), "Read /work/app/../etc/passwd");
    /// ```
    pub fn relative_title(&self, title: &str) -> String {
        let Some(cwd) = self.cwd.as_deref().and_then(Path::to_str) else {
            return title.to_owned();
        };
        let cwd = cwd.trim_end_matches('/');
        if cwd.is_empty() || !cwd.starts_with('/') {
            return title.to_owned();
        }
        let prefix = format!("{cwd}/");
        let mut out = String::with_capacity(title.len());
        let mut rest = title;
        while let Some(at) = rest.find(&prefix) {
            let before = &rest[..at];
            let previous = before
                .chars()
                .next_back()
                .or_else(|| out.chars().next_back());
            let boundary = previous.is_none_or(is_path_boundary);
            let tail = &rest[at + prefix.len()..];
            let token_end = tail.find(is_path_boundary).unwrap_or(tail.len());
            let token = &tail[..token_end];
            out.push_str(before);
            if boundary && !token.is_empty() && !token.starts_with('/') && !climbs(token) {
                out.push_str(token);
            } else {
                out.push_str(&prefix);
                out.push_str(token);
            }
            rest = &tail[token_end..];
        }
        out.push_str(rest);
        out
    }

    /// `path` as an absolute path: joined to the working directory when relative, with `.` and
    /// `..` resolved lexically (never above `/`).
    pub fn absolute(&self, path: &str) -> PathBuf {
        let path = Path::new(path);
        let joined = match &self.cwd {
            Some(cwd) if !path.is_absolute() => cwd.join(path),
            _ => path.to_path_buf(),
        };
        let mut out = PathBuf::new();
        for part in joined.components() {
            match part {
                Component::ParentDir => match out.components().next_back() {
                    // Never above `/`.
                    Some(Component::RootDir | Component::Prefix(_)) => {}
                    // A relative path that already climbs keeps climbing.
                    None | Some(Component::ParentDir) => out.push(".."),
                    _ => {
                        out.pop();
                    }
                },
                Component::CurDir => {}
                other => out.push(other),
            }
        }
        out
    }

    fn location(&self, location: &FileLocation) -> ToolCallLocation {
        ToolCallLocation::new(self.absolute(&location.path))
            .line(location.line.and_then(|l| u32::try_from(l).ok()))
    }

    fn diff(&self, diff: &FileDiff) -> ToolCallContent {
        ToolCallContent::Diff(
            Diff::new(self.absolute(&diff.path), diff.new_text.clone())
                .old_text(diff.old_text.clone()),
        )
    }
}

fn is_path_boundary(c: char) -> bool {
    c.is_whitespace() || matches!(c, '`' | '"' | '\'' | '(' | ')' | '[' | ']' | ',' | ':')
}

fn climbs(relative: &str) -> bool {
    relative.split('/').any(|part| part == "..")
}

/// The ACP kind of a generic card's kind.
fn kind(kind: Option<ToolCallKind>) -> ToolKind {
    match kind.unwrap_or_default() {
        ToolCallKind::Read => ToolKind::Read,
        ToolCallKind::Edit => ToolKind::Edit,
        ToolCallKind::Delete => ToolKind::Delete,
        ToolCallKind::Move => ToolKind::Move,
        ToolCallKind::Search => ToolKind::Search,
        ToolCallKind::Execute => ToolKind::Execute,
        ToolCallKind::Fetch => ToolKind::Fetch,
        ToolCallKind::Other => ToolKind::Other,
    }
}

/// One of our content blocks as ACP content: MCP's shapes map one to one (text, image, audio,
/// resource_link, resource); any other block is shown as its JSON text.
pub(crate) fn block(block: &ContentBlock) -> AcpBlock {
    if let Some(text) = block.as_text() {
        return AcpBlock::Text(TextContent::new(text));
    }
    // Truncated while copying: serde's own (recursive) conversion then sees a bounded depth.
    let json = block.to_json_truncated(MAX_CARD_DEPTH);
    match serde_json::from_value::<AcpBlock>(json.clone()) {
        Ok(converted) => converted,
        Err(_) => AcpBlock::Text(TextContent::new(json.to_string())),
    }
}

fn contents(blocks: &[ContentBlock]) -> Vec<ToolCallContent> {
    blocks
        .iter()
        .map(|b| ToolCallContent::from(block(b)))
        .collect()
}

fn text(text: impl Into<String>) -> ToolCallContent {
    ToolCallContent::from(AcpBlock::Text(TextContent::new(text)))
}

/// `body` in a fenced code block whose fence is longer than any backtick run inside it.
pub fn fenced(info: &str, body: &str) -> String {
    let mut longest = 0;
    let mut run = 0;
    for c in body.chars() {
        run = if c == '`' { run + 1 } else { 0 };
        longest = longest.max(run);
    }
    let fence = "`".repeat((longest + 1).max(3));
    let newline = if body.is_empty() || body.ends_with('\n') {
        ""
    } else {
        "\n"
    };
    format!("{fence}{info}\n{body}{newline}{fence}")
}

/// A JSON value bounded in depth for the wire (the SDK serializes recursively).
fn bounded(value: &Value) -> Value {
    crate::json::clone_truncated(value, MAX_CARD_DEPTH)
}

/// The terminal `_meta` convention's keys for one call (its terminal id is the call id).
fn terminal_meta(call_id: &str, entries: &[(&str, Value)]) -> Meta {
    let mut meta = Meta::new();
    for (key, value) in entries {
        let mut entry = json!({ "terminal_id": call_id });
        if let (Value::Object(entry), Value::Object(fields)) = (&mut entry, value) {
            entry.extend(fields.clone());
        }
        meta.insert((*key).to_owned(), entry);
    }
    meta
}

/// The `tool_call` update (status `pending`) that announces a call, from its pending card
/// ([`Registry::present_call`](crate::Registry::present_call)).
///
/// `rawInput` is the arguments (nested at most [`MAX_CARD_DEPTH`] levels, deeper parts `"…"`),
/// the tool's name goes in `name` and `_meta["dev.dsh-tools/tool"]`, and the card decides the rest: a
/// generic card's kind, content and locations; a terminal card's kind `execute` (with the
/// terminal `_meta` convention when the client renders it, its description as text otherwise);
/// a diff card's kind `edit` with `diff` content and the diffs' files as locations.
///
/// ```
/// use dsh_tools::acp::{SessionView, tool_call};
/// use dsh_tools::present::{FileDiff, ToolCallView};
/// use serde_json::json;
///
/// let view = SessionView::new("/work/app");
/// let card = ToolCallView::Diff {
///     title: "Edit /work/app/src/lib.rs".into(),
///     diffs: vec![FileDiff { path: "src/lib.rs".into(), old_text: Some("a".into()), new_text: "b".into() }],
///     locations: None,
/// };
/// let call = tool_call("call_1", "edit_file", &json!({"path": "src/lib.rs"}), &card, &view);
/// let wire = serde_json::to_value(&call)?;
/// assert_eq!(wire["title"], "Edit src/lib.rs");
/// assert_eq!(wire["kind"], "edit");
/// assert_eq!(wire["content"][0], json!({"type": "diff", "path": "/work/app/src/lib.rs", "oldText": "a", "newText": "b"}));
/// assert_eq!(wire["locations"], json!([{"path": "/work/app/src/lib.rs"}]));
/// # Ok::<(), serde_json::Error>(())
/// ```
pub fn tool_call(
    call_id: &str,
    tool_name: &str,
    arguments: &Value,
    card: &ToolCallView,
    session: &SessionView,
) -> ToolCall {
    let mut meta = Meta::new();
    meta.insert(
        TOOL_META_KEY.to_owned(),
        Value::String(tool_name.to_owned()),
    );
    // File cards' titles name files; a command or any other title is shown as written.
    let file_card = match card {
        ToolCallView::Generic { kind: k, .. } => matches!(
            k,
            Some(
                ToolCallKind::Read
                    | ToolCallKind::Edit
                    | ToolCallKind::Delete
                    | ToolCallKind::Move
                    | ToolCallKind::Search
            )
        ),
        ToolCallView::Terminal { .. } => false,
        ToolCallView::Diff { .. } => true,
    };
    let title = if file_card {
        session.relative_title(card.title())
    } else {
        card.title().to_owned()
    };
    let call = ToolCall::new(call_id.to_owned(), title)
        .name(tool_name.to_owned())
        .status(ToolCallStatus::Pending)
        .raw_input(bounded(arguments));
    let call = match card {
        ToolCallView::Generic {
            kind: k,
            content,
            locations,
            ..
        } => call
            .kind(kind(*k))
            .content(content.as_deref().map(contents).unwrap_or_default())
            .locations(
                locations
                    .iter()
                    .flatten()
                    .map(|l| session.location(l))
                    .collect(),
            ),
        ToolCallView::Terminal {
            description, cwd, ..
        } => {
            let cwd = cwd.as_deref().map(|c| session.absolute(c)).or_else(|| {
                session
                    .cwd()
                    .map(|c| session.absolute(&c.to_string_lossy()))
            });
            let call = call.kind(ToolKind::Execute);
            if session.has_terminal_output() {
                let info = json!({ "cwd": cwd.map(|c| c.to_string_lossy().into_owned()) });
                meta.extend(terminal_meta(call_id, &[("terminal_info", info)]));
                call.content(vec![ToolCallContent::Terminal(Terminal::new(
                    call_id.to_owned(),
                ))])
            } else {
                call.content(description.iter().map(text).collect())
            }
        }
        ToolCallView::Diff {
            diffs, locations, ..
        } => {
            let locations = match locations {
                Some(l) => l.iter().map(|l| session.location(l)).collect(),
                None => diff_locations(diffs, session),
            };
            call.kind(ToolKind::Edit)
                .content(diffs.iter().map(|d| session.diff(d)).collect())
                .locations(locations)
        }
    };
    call.meta(meta)
}

/// Where the tool's name also goes in a `tool_call`'s `_meta`, for clients that read only
/// `_meta` (it is in ACP v1's `name` field too).
pub const TOOL_META_KEY: &str = "dev.dsh-tools/tool";

fn diff_locations(diffs: &[FileDiff], session: &SessionView) -> Vec<ToolCallLocation> {
    let mut seen = Vec::new();
    for d in diffs {
        let path = session.absolute(&d.path);
        if !seen.contains(&path) {
            seen.push(path);
        }
    }
    seen.into_iter().map(ToolCallLocation::new).collect()
}

/// The `tool_call_update` that marks a call as running (`in_progress`): sent when dispatch
/// starts, after any approval.
pub fn tool_call_in_progress(call_id: &str) -> ToolCallUpdate {
    ToolCallUpdate::new(
        call_id.to_owned(),
        ToolCallUpdateFields::new().status(ToolCallStatus::InProgress),
    )
}

/// The `tool_call_update` that shows a running call's progress report (a long call's, or a
/// task's status as an imported MCP tool polls it): `in_progress`, the report as its content
/// (`compiling (1 of 2)`). The settling update replaces it.
pub fn tool_call_progress(call_id: &str, progress: &crate::call::Progress) -> ToolCallUpdate {
    ToolCallUpdate::new(
        call_id.to_owned(),
        ToolCallUpdateFields::new()
            .status(ToolCallStatus::InProgress)
            .content(vec![text(progress_text(progress))]),
    )
}

/// A progress report as one line: its message, then how far (`1 of 2`, or the count alone).
pub(crate) fn progress_text(progress: &crate::call::Progress) -> String {
    let amount = match progress.total {
        Some(total) => format!("{} of {}", progress.progress, total),
        None => progress.progress.to_string(),
    };
    match &progress.message {
        Some(message) => format!("{message} ({amount})"),
        None => amount,
    }
}

/// The `tool_call_update` that settles a call (`completed`, or `failed` for an error result),
/// from its settled card ([`Registry::present_result`](crate::Registry::present_result)) and the
/// result.
///
/// `rawOutput` is the result's structured value, or its content blocks when it has none (both
/// bounded like `rawInput`). The card's title, when it has one, replaces the pending title. The
/// content replaces the call's content: a terminal card's output (the terminal `_meta`
/// convention's `terminal_output` and `terminal_exit`, plus a fenced `console` block for clients
/// without it), a diff card's `diff` blocks (full texts; `oldText: null` for a new file), a read
/// card's lines as a fenced block with the file as location, search hits as text with their
/// files as locations, web sources as resource links, and any other content as content blocks.
///
/// ```
/// use dsh_tools::acp::{SessionView, tool_call_result};
/// use dsh_tools::ToolExecutionResult;
/// use dsh_tools::present::{TerminalExit, TerminalResult, ToolResultView};
/// use serde_json::json;
///
/// let card = ToolResultView::Terminal(TerminalResult {
///     title: None,
///     output: Some("ok\n".into()),
///     exit: Some(TerminalExit::Code(0)),
/// });
/// let result = ToolExecutionResult::success(json!({"exitCode": 0}));
/// let update = tool_call_result("call_1", &card, &result, &SessionView::new("/work/app"));
/// let wire = serde_json::to_value(&update)?;
/// assert_eq!(wire["status"], "completed");
/// assert_eq!(wire["content"][0]["content"]["text"], "```console\nok\n```\n\nexit code 0");
/// assert_eq!(wire["_meta"]["terminal_exit"], json!({"terminal_id": "call_1", "exit_code": 0, "signal": null}));
/// # Ok::<(), serde_json::Error>(())
/// ```
pub fn tool_call_result(
    call_id: &str,
    card: &ToolResultView,
    result: &ToolExecutionResult,
    session: &SessionView,
) -> ToolCallUpdate {
    let status = if result.is_error() {
        ToolCallStatus::Failed
    } else {
        ToolCallStatus::Completed
    };
    let raw_output = match result.value() {
        Some(value) => bounded(value),
        None => Value::Array(
            result
                .content()
                .iter()
                .map(|b| b.to_json_truncated(MAX_CARD_DEPTH))
                .collect(),
        ),
    };
    let mut fields = ToolCallUpdateFields::new()
        .status(status)
        .raw_output(raw_output)
        .title(card.title().map(|title| match card {
            ToolResultView::Diff { .. }
            | ToolResultView::Read { .. }
            | ToolResultView::Search(_) => session.relative_title(title),
            _ => title.to_owned(),
        }));
    let mut meta = None;
    let (content, locations): (Vec<ToolCallContent>, Option<Vec<ToolCallLocation>>) = match card {
        ToolResultView::Generic { content, .. } => (
            contents(content.as_deref().unwrap_or(result.content())),
            None,
        ),
        ToolResultView::Terminal(terminal) => {
            meta = Some(terminal_result_meta(call_id, terminal));
            (terminal_content(call_id, terminal, session), None)
        }
        ToolResultView::Diff { diffs, .. } => (
            diffs.iter().map(|d| session.diff(d)).collect(),
            Some(diff_locations(diffs, session)),
        ),
        ToolResultView::Read {
            path,
            offset,
            lines,
            lang,
            content,
            ..
        } => {
            let body: Vec<&str> = lines.iter().map(|l| l.text.as_str()).collect();
            let mut out = vec![text(fenced(
                lang.as_deref().unwrap_or(""),
                &body.join("\n"),
            ))];
            out.extend(contents(content.as_deref().unwrap_or_default()));
            let location = ToolCallLocation::new(session.absolute(path))
                .line(u32::try_from((*offset).max(1)).ok());
            (out, Some(vec![location]))
        }
        ToolResultView::Search(search) => search_content(search, session),
        ToolResultView::Web(web) => (web_content(web, result), None),
    };
    fields = fields.content(content);
    if let Some(locations) = locations {
        fields = fields.locations(locations);
    }
    ToolCallUpdate::new(call_id.to_owned(), fields).meta(meta)
}

fn terminal_result_meta(call_id: &str, terminal: &TerminalResult) -> Meta {
    let (code, signal) = match &terminal.exit {
        Some(TerminalExit::Code(code)) => (json!(code), Value::Null),
        Some(TerminalExit::Signal(signal)) => (Value::Null, json!(signal)),
        None => (Value::Null, Value::Null),
    };
    let mut entries = vec![(
        "terminal_output",
        json!({ "data": terminal.output.as_deref().unwrap_or("") }),
    )];
    if terminal.exit.is_some() {
        entries.push((
            "terminal_exit",
            json!({ "exit_code": code, "signal": signal }),
        ));
    }
    terminal_meta(call_id, &entries)
}

fn terminal_content(
    call_id: &str,
    terminal: &TerminalResult,
    session: &SessionView,
) -> Vec<ToolCallContent> {
    if session.has_terminal_output() {
        return vec![ToolCallContent::Terminal(Terminal::new(call_id.to_owned()))];
    }
    let mut shown = fenced("console", terminal.output.as_deref().unwrap_or(""));
    match &terminal.exit {
        Some(TerminalExit::Code(code)) => shown.push_str(&format!("\n\nexit code {code}")),
        Some(TerminalExit::Signal(signal)) => shown.push_str(&format!("\n\nkilled by {signal}")),
        None => {}
    }
    vec![text(shown)]
}

/// Search hits as text (`path:line: text`, or one path per line) with the files as locations.
fn search_content(
    search: &SearchResult,
    session: &SessionView,
) -> (Vec<ToolCallContent>, Option<Vec<ToolCallLocation>>) {
    let (mut lines, locations, truncated, total) = match search {
        SearchResult::Matches {
            files,
            truncated,
            total,
            ..
        } => {
            let mut lines = Vec::new();
            let mut locations = Vec::new();
            for file in files {
                for m in &file.matches {
                    lines.push(format!("{}:{}: {}", file.path, m.line_number, m.line));
                }
                let first = file.matches.first().map(|m| m.line_number);
                locations.push(
                    ToolCallLocation::new(session.absolute(&file.path))
                        .line(first.and_then(|l| u32::try_from(l).ok())),
                );
            }
            (lines, locations, *truncated, *total)
        }
        SearchResult::Paths {
            paths,
            truncated,
            total,
            ..
        } => (
            paths.clone(),
            paths
                .iter()
                .map(|p| ToolCallLocation::new(session.absolute(p)))
                .collect(),
            *truncated,
            *total,
        ),
    };
    if truncated {
        lines.push(format!("… ({total} in all)"));
    }
    (vec![text(fenced("", &lines.join("\n")))], Some(locations))
}

/// Web sources as resource links (after the synthesized answer); a fetch as a link to the page
/// followed by the result's content.
fn web_content(web: &WebResult, result: &ToolExecutionResult) -> Vec<ToolCallContent> {
    match web {
        WebResult::Search {
            sources, answer, ..
        } => {
            let mut out: Vec<ToolCallContent> = answer.iter().map(text).collect();
            out.extend(sources.iter().map(|s| {
                let name = s.title.clone().unwrap_or_else(|| s.url.clone());
                ToolCallContent::from(AcpBlock::ResourceLink(
                    ResourceLink::new(name, s.url.clone())
                        .title(s.title.clone())
                        .description(s.snippet.clone()),
                ))
            }));
            out
        }
        WebResult::Fetch {
            url, status_code, ..
        } => {
            let link = ResourceLink::new(url.clone(), url.clone())
                .description(format!("HTTP {status_code}"));
            let mut out = vec![ToolCallContent::from(AcpBlock::ResourceLink(link))];
            out.extend(contents(result.content()));
            out
        }
    }
}

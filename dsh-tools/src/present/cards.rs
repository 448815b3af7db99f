//! The cards (spec §9): the call and result views, their kinds and parts, the presenter types,
//! and the safe wrappers that turn an absent, declining or panicking presenter into the generic
//! card.
use crate::ContentBlock;
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::Value;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;

/// What a call does: an icon hint for the generic card. Absent means [`ToolCallKind::Other`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ToolCallKind {
    /// Reads files or data.
    Read,
    /// Changes files.
    Edit,
    /// Deletes files.
    Delete,
    /// Moves or renames files.
    Move,
    /// Searches.
    Search,
    /// Runs a command.
    Execute,
    /// Fetches from the network.
    Fetch,
    /// Anything else.
    #[default]
    Other,
}

impl ToolCallKind {
    /// The JSON name (`"read"`, …).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Read => "read",
            Self::Edit => "edit",
            Self::Delete => "delete",
            Self::Move => "move",
            Self::Search => "search",
            Self::Execute => "execute",
            Self::Fetch => "fetch",
            Self::Other => "other",
        }
    }
}

/// A place in a file a call touches.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileLocation {
    /// The file.
    pub path: String,
    /// 1-based line.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<u64>,
}

/// One file's change.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FileDiff {
    /// The file.
    pub path: String,
    /// The text before; `None` (JSON `null`, always written) for a new file or an overwrite
    /// without a before-image. The key is required on input.
    #[serde(deserialize_with = "Option::deserialize")]
    pub old_text: Option<String>,
    /// The text after.
    pub new_text: String,
}

impl FileDiff {
    /// `(added, removed)` line counts: the lines outside the common leading and trailing lines of
    /// both texts. A cheap summary (linear time), not a minimal diff.
    pub fn line_changes(&self) -> (usize, usize) {
        let old: Vec<&str> = self
            .old_text
            .as_deref()
            .unwrap_or_default()
            .lines()
            .collect();
        let new: Vec<&str> = self.new_text.lines().collect();
        let prefix = old.iter().zip(&new).take_while(|(a, b)| a == b).count();
        let suffix = old[prefix..]
            .iter()
            .rev()
            .zip(new[prefix..].iter().rev())
            .take_while(|(a, b)| a == b)
            .count();
        (new.len() - prefix - suffix, old.len() - prefix - suffix)
    }
}

/// One line of a read result.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReadFileLine {
    /// 1-based file line.
    pub number: u64,
    /// The text, without its trailing newline, already capped.
    pub text: String,
}

/// A web page a web result cites.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct WebSource {
    /// The page.
    pub url: String,
    /// Its title.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// An excerpt.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub snippet: Option<String>,
    /// When it was published (ISO-8601).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub published_at: Option<String>,
}

/// The card shown while a call is pending (`presentCall`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(
    tag = "card",
    rename_all = "lowercase",
    rename_all_fields = "camelCase"
)]
pub enum ToolCallView {
    /// Any call: a title, the raw input and optional content.
    Generic {
        /// The title (the tool name for the fallback).
        title: String,
        /// Icon hint; absent means [`ToolCallKind::Other`].
        #[serde(skip_serializing_if = "Option::is_none")]
        kind: Option<ToolCallKind>,
        /// The input: a string is shown as-is, anything else as JSON. `Some(Value::Null)` is
        /// kept: JSON `null` reads back as `Some(Value::Null)`.
        #[serde(
            default,
            deserialize_with = "some_value",
            skip_serializing_if = "Option::is_none"
        )]
        raw_input: Option<Value>,
        /// Content to show.
        #[serde(skip_serializing_if = "Option::is_none")]
        content: Option<Vec<ContentBlock>>,
        /// Files the call touches.
        #[serde(skip_serializing_if = "Option::is_none")]
        locations: Option<Vec<FileLocation>>,
    },
    /// A command.
    Terminal {
        /// The command.
        title: String,
        /// A one-line summary shown above the card.
        #[serde(skip_serializing_if = "Option::is_none")]
        description: Option<String>,
        /// The working directory: absolute as-is, relative to the session workspace; absent means
        /// the workspace.
        #[serde(skip_serializing_if = "Option::is_none")]
        cwd: Option<String>,
    },
    /// File changes.
    Diff {
        /// The title.
        title: String,
        /// The changes.
        diffs: Vec<FileDiff>,
        /// Files the call touches.
        #[serde(skip_serializing_if = "Option::is_none")]
        locations: Option<Vec<FileLocation>>,
    },
}

/// How deep the raw input of a generic card goes: arguments nested deeper (a hostile model's)
/// are cut off with `"…"`, so a card can be cloned, dropped and serialized by recursive code.
pub const MAX_CARD_DEPTH: usize = 64;

impl ToolCallView {
    /// The generic card: title = the tool name, raw input = the arguments (nested at most
    /// [`MAX_CARD_DEPTH`] levels; deeper parts become `"…"`).
    pub fn fallback(tool_name: &str, arguments: &Value) -> Self {
        Self::Generic {
            title: tool_name.to_owned(),
            kind: None,
            raw_input: Some(crate::json::clone_truncated(arguments, MAX_CARD_DEPTH)),
            content: None,
            locations: None,
        }
    }

    /// The card's title.
    pub fn title(&self) -> &str {
        match self {
            Self::Generic { title, .. }
            | Self::Terminal { title, .. }
            | Self::Diff { title, .. } => title,
        }
    }
}

/// The card shown once a call has settled (`presentResult`). Every `title` is optional and, when
/// present, replaces the pending card's title.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(
    tag = "card",
    rename_all = "lowercase",
    rename_all_fields = "camelCase"
)]
pub enum ToolResultView {
    /// Any result: content to show.
    Generic {
        /// Replaces the pending title.
        #[serde(skip_serializing_if = "Option::is_none")]
        title: Option<String>,
        /// Content to show.
        #[serde(skip_serializing_if = "Option::is_none")]
        content: Option<Vec<ContentBlock>>,
    },
    /// A command's output and how it ended.
    Terminal(TerminalResult),
    /// File changes.
    Diff {
        /// Replaces the pending title.
        #[serde(skip_serializing_if = "Option::is_none")]
        title: Option<String>,
        /// The changes.
        diffs: Vec<FileDiff>,
    },
    /// Search hits (inner tag `shape`).
    Search(SearchResult),
    /// Lines read from a file.
    Read {
        /// Replaces the pending title.
        #[serde(skip_serializing_if = "Option::is_none")]
        title: Option<String>,
        /// The file.
        path: String,
        /// 1-based first requested line, kept even when `lines` is empty.
        offset: u64,
        /// The lines read.
        lines: Vec<ReadFileLine>,
        /// How many lines the file has.
        total_lines: u64,
        /// Language hint for highlighting.
        #[serde(skip_serializing_if = "Option::is_none")]
        lang: Option<String>,
        /// Content to show besides the lines (images, …).
        #[serde(skip_serializing_if = "Option::is_none")]
        content: Option<Vec<ContentBlock>>,
    },
    /// A web search or fetch (inner tag `kind`).
    Web(WebResult),
}

/// One-expression constructors for the common cards (no title: the pending card's stays).
///
/// ```
/// use dsh_tools::present::{TerminalExit, ToolResultView};
///
/// let read = ToolResultView::read("src/main.rs", 10, ["fn main() {", "}"]);
/// assert_eq!(serde_json::to_value(&read).unwrap()["totalLines"], 11);
/// let edit = ToolResultView::edit("notes.txt", "old\n", "new\n");
/// let new_file = ToolResultView::created("todo.txt", "- ship\n");
/// let run = ToolResultView::terminal("ok\n", 0);
/// assert!(matches!(run, ToolResultView::Terminal(t) if t.exit == Some(TerminalExit::Code(0))));
/// let hits = ToolResultView::search_paths(["a.rs", "b.rs"]);
/// let page = ToolResultView::fetched("https://example.com", 200);
/// # let _ = (edit, new_file, hits, page);
/// ```
impl ToolResultView {
    /// A read card: `lines` of `path`, the first numbered `first_line` (1-based); the file's
    /// total is taken to end with the last line (set `total_lines` on the variant when it does
    /// not).
    pub fn read<L: Into<String>>(
        path: impl Into<String>,
        first_line: u64,
        lines: impl IntoIterator<Item = L>,
    ) -> Self {
        let first_line = first_line.max(1);
        // Numbered without overflow, whatever offset a model asked for (the last numbers
        // saturate at `u64::MAX`).
        let lines: Vec<ReadFileLine> = lines
            .into_iter()
            .enumerate()
            .map(|(i, text)| ReadFileLine {
                number: first_line.saturating_add(i as u64),
                text: text.into(),
            })
            .collect();
        Self::Read {
            title: None,
            path: path.into(),
            offset: first_line,
            total_lines: (first_line - 1).saturating_add(lines.len() as u64),
            lines,
            lang: None,
            content: None,
        }
    }

    /// An edit card: `path` changed from `old` to `new`.
    pub fn edit(path: impl Into<String>, old: impl Into<String>, new: impl Into<String>) -> Self {
        Self::diff(path.into(), Some(old.into()), new.into())
    }

    /// A diff card for a new (or wholly overwritten) file: no before-image.
    pub fn created(path: impl Into<String>, new: impl Into<String>) -> Self {
        Self::diff(path.into(), None, new.into())
    }

    fn diff(path: String, old_text: Option<String>, new_text: String) -> Self {
        Self::Diff {
            title: None,
            diffs: vec![FileDiff {
                path,
                old_text,
                new_text,
            }],
        }
    }

    /// A terminal card: what a command printed and its exit code.
    pub fn terminal(output: impl Into<String>, exit_code: i64) -> Self {
        Self::Terminal(TerminalResult {
            title: None,
            output: Some(output.into()),
            exit: Some(TerminalExit::Code(exit_code)),
        })
    }

    /// A search card listing matching paths (all of them: not truncated).
    pub fn search_paths<P: Into<String>>(paths: impl IntoIterator<Item = P>) -> Self {
        let paths: Vec<String> = paths.into_iter().map(Into::into).collect();
        Self::Search(SearchResult::Paths {
            title: None,
            total: paths.len() as u64,
            paths,
            truncated: false,
        })
    }

    /// A search card of matching lines, `(path, line number, line)` each, grouped by file in the
    /// order the paths first appear (all of them: not truncated).
    pub fn search_matches<P: Into<String>, T: Into<String>>(
        matches: impl IntoIterator<Item = (P, u64, T)>,
    ) -> Self {
        let mut files: Vec<SearchFile> = Vec::new();
        let mut total = 0;
        for (path, line_number, line) in matches {
            total += 1;
            let path = path.into();
            let hit = SearchMatch {
                line_number,
                line: line.into(),
            };
            match files.iter_mut().find(|f| f.path == path) {
                Some(file) => file.matches.push(hit),
                None => files.push(SearchFile {
                    path,
                    matches: vec![hit],
                }),
            }
        }
        Self::Search(SearchResult::Matches {
            title: None,
            files,
            truncated: false,
            total,
        })
    }

    /// A web card for a fetched page.
    pub fn fetched(url: impl Into<String>, status_code: u16) -> Self {
        Self::Web(WebResult::Fetch {
            title: None,
            url: url.into(),
            status_code,
            truncated: false,
        })
    }

    /// A web card for search hits.
    pub fn web_search(sources: Vec<WebSource>) -> Self {
        Self::Web(WebResult::Search {
            title: None,
            sources,
            answer: None,
            truncated: false,
        })
    }

    /// The generic card showing the result's content.
    pub fn fallback(content: &[ContentBlock]) -> Self {
        Self::Generic {
            title: None,
            content: Some(content.to_vec()),
        }
    }

    /// The title that replaces the pending one, if any.
    pub fn title(&self) -> Option<&str> {
        match self {
            Self::Generic { title, .. } | Self::Diff { title, .. } | Self::Read { title, .. } => {
                title
            }
            Self::Terminal(t) => &t.title,
            Self::Search(
                SearchResult::Matches { title, .. } | SearchResult::Paths { title, .. },
            ) => title,
            Self::Web(WebResult::Search { title, .. } | WebResult::Fetch { title, .. }) => title,
        }
        .as_deref()
    }
}

/// A terminal result: `{"card":"terminal", title?, output?, exitCode?, signal?}`. An exit code
/// and a signal cannot both be set; input carrying both is rejected.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "TerminalWire", into = "TerminalWire")]
pub struct TerminalResult {
    /// Replaces the pending title.
    pub title: Option<String>,
    /// What the command printed.
    pub output: Option<String>,
    /// How the command ended, if known.
    pub exit: Option<TerminalExit>,
}

/// How a command ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TerminalExit {
    /// It exited with this code (`exitCode`).
    Code(i64),
    /// A signal killed it (`signal`, e.g. `"SIGTERM"`).
    Signal(String),
}

#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct TerminalWire {
    #[serde(skip_serializing_if = "Option::is_none")]
    title: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    output: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    exit_code: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    signal: Option<String>,
}

impl TryFrom<TerminalWire> for TerminalResult {
    type Error = &'static str;
    fn try_from(wire: TerminalWire) -> Result<Self, Self::Error> {
        let exit = match (wire.exit_code, wire.signal) {
            (Some(_), Some(_)) => {
                return Err("a terminal card has either exitCode or signal, not both");
            }
            (Some(code), None) => Some(TerminalExit::Code(code)),
            (None, Some(signal)) => Some(TerminalExit::Signal(signal)),
            (None, None) => None,
        };
        Ok(Self {
            title: wire.title,
            output: wire.output,
            exit,
        })
    }
}

impl From<TerminalResult> for TerminalWire {
    fn from(result: TerminalResult) -> Self {
        let (exit_code, signal) = match result.exit {
            Some(TerminalExit::Code(code)) => (Some(code), None),
            Some(TerminalExit::Signal(signal)) => (None, Some(signal)),
            None => (None, None),
        };
        Self {
            title: result.title,
            output: result.output,
            exit_code,
            signal,
        }
    }
}

/// A search result, tagged by `shape`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(
    tag = "shape",
    rename_all = "lowercase",
    rename_all_fields = "camelCase"
)]
pub enum SearchResult {
    /// Matching lines grouped by file.
    Matches {
        /// Replaces the pending title.
        #[serde(skip_serializing_if = "Option::is_none")]
        title: Option<String>,
        /// The files with matches.
        files: Vec<SearchFile>,
        /// Whether hits were left out.
        truncated: bool,
        /// How many matches there are in all.
        total: u64,
    },
    /// Matching paths.
    Paths {
        /// Replaces the pending title.
        #[serde(skip_serializing_if = "Option::is_none")]
        title: Option<String>,
        /// The paths.
        paths: Vec<String>,
        /// Whether paths were left out.
        truncated: bool,
        /// How many paths there are in all.
        total: u64,
    },
}

/// One file's matches.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SearchFile {
    /// The file.
    pub path: String,
    /// Its matching lines.
    pub matches: Vec<SearchMatch>,
}

/// One matching line.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SearchMatch {
    /// 1-based line.
    pub line_number: u64,
    /// The line's text.
    pub line: String,
}

/// A web result, tagged by `kind`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(
    tag = "kind",
    rename_all = "lowercase",
    rename_all_fields = "camelCase"
)]
pub enum WebResult {
    /// Search hits.
    Search {
        /// Replaces the pending title.
        #[serde(skip_serializing_if = "Option::is_none")]
        title: Option<String>,
        /// The pages found.
        sources: Vec<WebSource>,
        /// A synthesized answer.
        #[serde(skip_serializing_if = "Option::is_none")]
        answer: Option<String>,
        /// Whether sources were left out.
        truncated: bool,
    },
    /// A fetched page.
    Fetch {
        /// Replaces the pending title.
        #[serde(skip_serializing_if = "Option::is_none")]
        title: Option<String>,
        /// The page.
        url: String,
        /// The HTTP status.
        status_code: u16,
        /// Whether the body was cut.
        truncated: bool,
    },
}

/// The durable result a result presenter sees: `{content, isError, meta?}` (`meta` is the
/// `output.presentationMeta` persisted on `tool/result`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResultSummary {
    /// What the model read back.
    pub content: Vec<ContentBlock>,
    /// Whether the call failed.
    pub is_error: bool,
    /// Structured card data that the content cannot give back.
    #[serde(
        default,
        deserialize_with = "some_value",
        skip_serializing_if = "Option::is_none"
    )]
    pub meta: Option<Value>,
}

/// A call presenter's signature: the logged arguments to a card, or `None` for the generic one.
pub type CallPresenterFn = dyn Fn(&Value) -> Option<ToolCallView> + Send + Sync;

/// A result presenter's signature: the arguments and the durable result to a card, or `None` for
/// the generic one.
pub type ResultPresenterFn = dyn Fn(&Value, &ResultSummary) -> Option<ToolResultView> + Send + Sync;

/// A call presenter as a tool definition stores it.
pub type CallPresenter = Arc<CallPresenterFn>;

/// A result presenter as a tool definition stores it.
pub type ResultPresenter = Arc<ResultPresenterFn>;

/// The pending card for a call: the presenter's card, or [`ToolCallView::fallback`] when there is
/// no presenter, it returns `None` or it panics. Never fails.
pub fn present_call_safely(
    tool_name: &str,
    presenter: Option<&CallPresenterFn>,
    args: &Value,
) -> ToolCallView {
    presenter
        .and_then(|present| {
            catch_unwind(AssertUnwindSafe(|| present(args))).unwrap_or_else(|payload| {
                crate::error::drop_panic_payload(payload);
                None
            })
        })
        .unwrap_or_else(|| ToolCallView::fallback(tool_name, args))
}

/// The settled card for a call: the presenter's card, or [`ToolResultView::fallback`] of the
/// result's content when there is no presenter, it returns `None` or it panics. Never fails.
pub fn present_result_safely(
    presenter: Option<&ResultPresenterFn>,
    args: &Value,
    result: &ResultSummary,
) -> ToolResultView {
    presenter
        .and_then(|present| {
            catch_unwind(AssertUnwindSafe(|| present(args, result))).unwrap_or_else(|payload| {
                crate::error::drop_panic_payload(payload);
                None
            })
        })
        .unwrap_or_else(|| ToolResultView::fallback(&result.content))
}

/// A present key holds its value, even `null`.
fn some_value<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<Value>, D::Error> {
    Value::deserialize(deserializer).map(Some)
}

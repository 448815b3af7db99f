//! Compact plain-text cards for terminals: a title line, then the card's essentials indented by
//! two spaces, with no trailing newline.

use super::cards::{
    FileDiff, FileLocation, SearchResult, TerminalExit, TerminalResult, ToolCallView,
    ToolResultView, WebResult,
};
use crate::ContentBlock;
use serde_json::Value;
use std::fmt::{self, Display, Formatter};

impl Display for ToolCallView {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match self {
            Self::Generic {
                title,
                kind,
                raw_input,
                content,
                locations,
            } => {
                match kind {
                    Some(kind) => write!(f, "[{}] {title}", kind.as_str())?,
                    None => f.write_str(title)?,
                }
                match raw_input {
                    Some(Value::String(text)) => indented(f, text)?,
                    Some(input) => indented(f, &input.to_string())?,
                    None => {}
                }
                blocks(f, content.as_deref())?;
                locations_(f, locations.as_deref())
            }
            Self::Terminal {
                title,
                description,
                cwd,
            } => {
                if let Some(description) = description {
                    writeln!(f, "{description}")?;
                }
                write!(f, "$ {title}")?;
                if let Some(cwd) = cwd {
                    write!(f, "\n  in {cwd}")?;
                }
                Ok(())
            }
            Self::Diff {
                title,
                diffs,
                locations,
            } => {
                f.write_str(title)?;
                diffs_(f, diffs)?;
                locations_(f, locations.as_deref())
            }
        }
    }
}

impl Display for ToolResultView {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        let title = |default: &str| self.title().unwrap_or(default).to_owned();
        match self {
            Self::Generic { content, .. } => {
                f.write_str(&title("result"))?;
                blocks(f, content.as_deref())
            }
            Self::Terminal(TerminalResult { output, exit, .. }) => {
                f.write_str(&title("terminal"))?;
                if let Some(output) = output {
                    indented(f, output)?;
                }
                match exit {
                    Some(TerminalExit::Code(code)) => write!(f, "\n  exit code {code}"),
                    Some(TerminalExit::Signal(signal)) => write!(f, "\n  killed by {signal}"),
                    None => Ok(()),
                }
            }
            Self::Diff { diffs, .. } => {
                f.write_str(&title("diff"))?;
                diffs_(f, diffs)
            }
            Self::Search(SearchResult::Matches {
                files,
                truncated,
                total,
                ..
            }) => {
                f.write_str(&title("search"))?;
                let in_files = count(files.len() as u64, "file", "files");
                write!(f, "\n  {} in {in_files}", count(*total, "match", "matches"))?;
                truncation(f, *truncated)?;
                for file in files {
                    write!(f, "\n  {}", file.path)?;
                    for hit in &file.matches {
                        write!(f, "\n    {}: {}", hit.line_number, hit.line)?;
                    }
                }
                Ok(())
            }
            Self::Search(SearchResult::Paths {
                paths,
                truncated,
                total,
                ..
            }) => {
                f.write_str(&title("search"))?;
                write!(f, "\n  {}", count(*total, "path", "paths"))?;
                truncation(f, *truncated)?;
                paths.iter().try_for_each(|path| write!(f, "\n  {path}"))
            }
            Self::Read {
                path,
                offset,
                lines,
                total_lines,
                content,
                ..
            } => {
                f.write_str(&title("read"))?;
                let read = count(lines.len() as u64, "line", "lines");
                write!(f, "\n  {path}:{offset}, {read} of {total_lines}")?;
                blocks(f, content.as_deref())
            }
            Self::Web(WebResult::Search {
                sources,
                answer,
                truncated,
                ..
            }) => {
                f.write_str(&title("web search"))?;
                write!(
                    f,
                    "\n  {}",
                    count(sources.len() as u64, "source", "sources")
                )?;
                truncation(f, *truncated)?;
                for source in sources {
                    match &source.title {
                        Some(page) => write!(f, "\n  - {page} <{}>", source.url)?,
                        None => write!(f, "\n  - {}", source.url)?,
                    }
                }
                match answer {
                    Some(answer) => indented(f, answer),
                    None => Ok(()),
                }
            }
            Self::Web(WebResult::Fetch {
                url,
                status_code,
                truncated,
                ..
            }) => {
                f.write_str(&title("fetch"))?;
                write!(f, "\n  {url}: status {status_code}")?;
                truncation(f, *truncated)
            }
        }
    }
}

impl Display for FileLocation {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match self.line {
            Some(line) => write!(f, "{}:{line}", self.path),
            None => f.write_str(&self.path),
        }
    }
}

impl Display for FileDiff {
    /// `path +added -removed`, or `path (new) +added` without a before-image.
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        let (added, removed) = self.line_changes();
        match self.old_text {
            Some(_) => write!(f, "{} +{added} -{removed}", self.path),
            None => write!(f, "{} (new) +{added}", self.path),
        }
    }
}

/// Each line of `text` on its own indented line.
fn indented(f: &mut Formatter<'_>, text: &str) -> fmt::Result {
    text.lines().try_for_each(|line| write!(f, "\n  {line}"))
}

/// Text blocks as text, other blocks as `[<type>]`.
fn blocks(f: &mut Formatter<'_>, content: Option<&[ContentBlock]>) -> fmt::Result {
    for block in content.unwrap_or_default() {
        match block.as_text() {
            Some(text) => indented(f, text)?,
            None => write!(f, "\n  [{}]", block.kind())?,
        }
    }
    Ok(())
}

fn diffs_(f: &mut Formatter<'_>, diffs: &[FileDiff]) -> fmt::Result {
    diffs.iter().try_for_each(|diff| write!(f, "\n  {diff}"))
}

fn locations_(f: &mut Formatter<'_>, locations: Option<&[FileLocation]>) -> fmt::Result {
    locations
        .unwrap_or_default()
        .iter()
        .try_for_each(|location| write!(f, "\n  at {location}"))
}

fn truncation(f: &mut Formatter<'_>, truncated: bool) -> fmt::Result {
    if truncated {
        f.write_str(" (truncated)")
    } else {
        Ok(())
    }
}

fn count(n: u64, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

//! What every subcommand shares: reading JSON input within the size limit, and the output,
//! written once at the end (a closed or full standard output is an error we report).

use clap::Args;
use dsh_tools::json::{drop_deep, to_compact_string};
use dsh_tools::present::is_hidden_char as hidden;
use serde::Deserialize;
use serde_json::Value;
use std::io::Read;

/// `{}`: what an absent `parameters` or `output` of a tool list stands for.
pub(crate) static EMPTY_OBJECT: std::sync::LazyLock<Value> =
    std::sync::LazyLock::new(|| Value::Object(Default::default()));

/// The default input-size limit: 16 MiB. Parsing needs memory proportional to the input, and
/// more per level of nesting (the parser's stack grows on the heap).
pub(crate) const DEFAULT_MAX_INPUT_BYTES: u64 = 16 << 20;

thread_local! {
    /// Everything printed to standard output, written once at the end (so a closed or full
    /// standard output is an error we report, never a panic).
    pub(crate) static OUTPUT: std::cell::RefCell<String> = const { std::cell::RefCell::new(String::new()) };
    /// The input-size limit of this run.
    pub(crate) static MAX_INPUT: std::cell::Cell<u64> = const { std::cell::Cell::new(DEFAULT_MAX_INPUT_BYTES) };
}

/// Appends one line to the output.
macro_rules! out {
    ($($arg:tt)*) => {
        $crate::io::OUTPUT.with(|o| {
            use std::fmt::Write as _;
            let mut o = o.borrow_mut();
            let _ = writeln!(o, $($arg)*);
        })
    };
}
pub(crate) use out;

/// Text for a terminal: control characters (escape sequences, bells, newlines inside a name),
/// bidirectional overrides and invisible characters written as `\u{..}` escapes, so input can
/// never drive the terminal or show as something else.
pub(crate) fn printable(text: &str) -> String {
    dsh_tools::present::escape_hidden(text).into_owned()
}

/// Lines of text for a terminal (what a program printed and returned): every character
/// [`printable`] escapes but `\n` and `\t`, written as a JSON escape (`\u001b`; two surrogate
/// escapes past U+FFFF), so neither a program nor a remote tool's result can drive the terminal,
/// and JSON in the text (a structured result) still parses to the same value.
#[cfg_attr(not(all(feature = "typescript", feature = "mcp")), allow(dead_code))]
pub(crate) fn terminal_text(text: &str) -> std::borrow::Cow<'_, str> {
    let escaped = |c: char| c != '\n' && c != '\t' && hidden(c);
    if !text.contains(escaped) {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        if escaped(c) {
            let mut units = [0u16; 2];
            for unit in c.encode_utf16(&mut units) {
                use std::fmt::Write as _;
                let _ = write!(out, "\\u{unit:04x}");
            }
        } else {
            out.push(c);
        }
    }
    std::borrow::Cow::Owned(out)
}

/// A parsed document, freed without recursion whatever path drops it.
pub(crate) struct Doc(pub(crate) Value);

impl std::ops::Deref for Doc {
    type Target = Value;
    fn deref(&self) -> &Value {
        &self.0
    }
}

impl std::ops::DerefMut for Doc {
    fn deref_mut(&mut self) -> &mut Value {
        &mut self.0
    }
}

impl Drop for Doc {
    fn drop(&mut self) {
        drop_deep(std::mem::take(&mut self.0));
    }
}

#[derive(Args)]
pub(crate) struct Output {
    /// Print one JSON object instead of text for people.
    #[arg(long)]
    pub(crate) json: bool,
}

#[derive(Args)]
#[group(required = true, multiple = false)]
pub(crate) struct Kind {
    /// FILE is a value spec (`ValueSchemaSpec`).
    #[arg(long)]
    pub(crate) value: bool,
    /// FILE is a parameter spec (`ParameterSchemaSpec`).
    #[arg(long)]
    pub(crate) parameters: bool,
}

/// Input that could not be read or parsed: exit status 2.
pub(crate) struct InputError(pub(crate) String);

/// Reads one input (`-`: standard input, once) as text, within the size limit.
pub(crate) fn read_text(path: &str, stdin_used: &mut bool) -> Result<String, InputError> {
    let name = input_name(path);
    let limit = MAX_INPUT.with(std::cell::Cell::get);
    let reader: Box<dyn Read> = if path == "-" {
        if std::mem::replace(stdin_used, true) {
            return Err(InputError("standard input can be read only once".into()));
        }
        Box::new(std::io::stdin())
    } else {
        Box::new(
            std::fs::File::open(path)
                .map_err(|e| InputError(format!("cannot read {name}: {e}")))?,
        )
    };
    let mut text = String::new();
    let cap = if limit == 0 { u64::MAX } else { limit + 1 };
    reader
        .take(cap)
        .read_to_string(&mut text)
        .map_err(|e| InputError(format!("cannot read {name}: {e}")))?;
    if limit != 0 && text.len() as u64 > limit {
        return Err(InputError(format!(
            "{name} is larger than {limit} bytes (raise the limit with --max-input-bytes)"
        )));
    }
    Ok(text)
}

fn input_name(path: &str) -> String {
    if path == "-" {
        "standard input".to_owned()
    } else {
        printable(path)
    }
}

/// Reads and parses one JSON document, without a nesting limit (schemas and values of any depth
/// are checked iteratively; parsing grows the stack on the heap as it needs).
pub(crate) fn read_json(path: &str, stdin_used: &mut bool) -> Result<Doc, InputError> {
    let name = input_name(path);
    let text = read_text(path, stdin_used)?;
    let mut de = serde_json::Deserializer::from_str(&text);
    de.disable_recursion_limit();
    let value = Value::deserialize(serde_stacker::Deserializer::new(&mut de))
        .map_err(|e| InputError(format!("{name} is not valid JSON: {e}")))?;
    // Owned from here on: freed without recursion on every path, errors included.
    let doc = Doc(value);
    de.end()
        .map_err(|e| InputError(format!("{name} is not valid JSON: {e}")))?;
    Ok(doc)
}

/// Indented JSON for people; compact past a nesting depth where the recursive pretty printer
/// would need a deep stack.
pub(crate) fn pretty(value: &Value) -> String {
    let mut depth = 0;
    let mut level: Vec<&Value> = vec![value];
    while !level.is_empty() && depth <= 64 {
        level = level
            .into_iter()
            .flat_map(|v| match v {
                Value::Array(items) => items.iter().collect::<Vec<_>>(),
                Value::Object(map) => map.values().collect(),
                _ => Vec::new(),
            })
            .collect();
        depth += 1;
    }
    if depth <= 64 {
        serde_json::to_string_pretty(value).unwrap_or_else(|_| to_compact_string(value))
    } else {
        to_compact_string(value)
    }
}

pub(crate) fn json_list(items: &[String]) -> String {
    to_compact_string(&Value::from(items.to_vec()))
}

/// Prints the result and returns the exit status (0 when `ok`).
pub(crate) fn report(json: bool, ok: bool, key: &str, violations: &[String], good: &str) -> u8 {
    if json {
        out!(
            "{{\"{key}\":{ok},\"violations\":{}}}",
            json_list(violations)
        );
    } else if ok {
        out!("{good}");
    } else {
        for v in violations {
            out!("{}", printable(v));
        }
    }
    if ok { 0 } else { 1 }
}

/// One line on standard error, `dsh-tools: <text>` (a closed stream is not worth a panic).
pub(crate) fn warn(text: &str) {
    let _ = std::io::Write::write_all(
        &mut std::io::stderr(),
        format!("dsh-tools: {text}\n").as_bytes(),
    );
}

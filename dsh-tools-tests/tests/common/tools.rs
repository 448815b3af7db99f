//! The example tools every test here uses.

use dsh_tools::present::{ToolCallView, ToolResultView};
use dsh_tools::{ContentBlock, NoArgs, ToolError, ToolRunContext, text_content, tool};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;
use std::time::Duration;

#[derive(Deserialize, JsonSchema)]
pub(crate) struct ReadFileArgs {
    /// Absolute file path
    pub(crate) path: String,
    /// First line to read, 1-based
    pub(crate) offset: Option<u64>,
    pub(crate) limit: Option<u64>,
}

/// Read a file from disk.
#[tool(timeout_ms = 30_000, concurrency_safe)]
pub(crate) async fn read_file(
    args: ReadFileArgs,
    ctx: ToolRunContext,
) -> Result<String, ToolError> {
    if ctx.is_cancelled() {
        return Err(ToolError::aborted());
    }
    Ok(format!(
        "{} from {} ({} lines)",
        args.path,
        args.offset.unwrap_or(1),
        args.limit.map_or("all".to_owned(), |l| l.to_string())
    ))
}

/// Add two numbers.
#[tool]
pub(crate) async fn add(
    /// first term
    a: i64,
    /// second term
    b: i64,
) -> Result<i64, ToolError> {
    a.checked_add(b)
        .ok_or_else(|| ToolError::coded("ArithmeticError", "OVERFLOW", "the sum overflows"))
}

#[derive(Clone, Copy, Debug, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Mode {
    Fast,
    Thorough,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct SearchArgs {
    /// The pattern
    pub(crate) pattern: String,
    /// Where to look
    pub(crate) paths: Vec<String>,
    /// How to search
    pub(crate) mode: Option<Mode>,
    /// At most this many matches
    pub(crate) max: Option<u8>,
    /// Extra labels
    #[serde(default)]
    pub(crate) labels: BTreeMap<String, bool>,
}

#[derive(Serialize, JsonSchema)]
pub(crate) struct SearchOutput {
    pub(crate) matches: Vec<String>,
    pub(crate) truncated: bool,
}

pub(crate) fn search_is_fast(args: &SearchArgs) -> bool {
    args.mode == Some(Mode::Fast)
}

/// Search files for a pattern.
#[tool(name = "grep", concurrency_safe = search_is_fast)]
pub(crate) async fn search(args: SearchArgs) -> Result<SearchOutput, ToolError> {
    let max = usize::from(args.max.unwrap_or(u8::MAX));
    let matches: Vec<String> = args
        .paths
        .iter()
        .map(|p| format!("{p}:{}", args.pattern))
        .filter(|m| !args.labels.get(m).copied().unwrap_or(false))
        .collect();
    Ok(SearchOutput {
        truncated: matches.len() > max,
        matches: matches.into_iter().take(max).collect(),
    })
}

/// Waits.
#[tool(timeout_ms = 20, task = "required")]
pub(crate) async fn wait(
    /// milliseconds
    ms: u64,
    ctx: ToolRunContext,
) -> Result<&'static str, ToolError> {
    tokio::select! {
        () = tokio::time::sleep(Duration::from_millis(ms)) => Ok("done"),
        () = ctx.signal().cancelled() => Err(ToolError::aborted()),
    }
}

/// Returns a number that is not JSON.
#[tool]
pub(crate) async fn not_a_number() -> Result<f64, ToolError> {
    Ok(f64::NAN)
}

/// Whether the call was cancelled.
#[tool(description = "Reports cancellation.")]
pub(crate) async fn cancelled(_: NoArgs, ctx: ToolRunContext) -> Result<bool, ToolError> {
    Ok(ctx.is_cancelled())
}

pub(crate) struct Full;

impl From<Full> for ToolError {
    fn from(_: Full) -> Self {
        ToolError::coded("DiskError", "ENOSPC", "disk full")
    }
}

pub(crate) fn shout(_args: &Value, value: &Value) -> Vec<ContentBlock> {
    text_content(value.as_str().unwrap_or_default().to_uppercase())
}

pub(crate) fn call_card(_args: &Value) -> Option<ToolCallView> {
    None
}

pub(crate) fn result_card(
    _args: &Value,
    _result: &dsh_tools::present::ResultSummary,
) -> Option<ToolResultView> {
    None
}

/// Writes text.
#[tool(render = shout, present_call = call_card, present_result = result_card)]
pub(crate) async fn write(
    /// the text; empty fails
    text: String,
    /// the line ending
    #[serde(default)]
    crlf: bool,
) -> Result<String, Full> {
    if text.is_empty() {
        return Err(Full);
    }
    Ok(if crlf { format!("{text}\r\n") } else { text })
}

#[derive(Deserialize, JsonSchema)]
pub(crate) struct Point {
    pub(crate) x: i32,
    pub(crate) y: i32,
}

#[derive(Deserialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub(crate) enum Shape {
    Circle { center: Point, radius: f64 },
    Polygon { points: Vec<Point> },
}

/// Measures a shape.
#[tool]
pub(crate) async fn measure(
    /// the shape
    shape: Shape,
    /// a scale factor
    scale: Option<f32>,
) -> Result<f64, ToolError> {
    let scale = f64::from(scale.unwrap_or(1.0));
    Ok(match shape {
        Shape::Circle { radius, center } => {
            scale * radius + f64::from(center.x - center.y).abs() * 0.0
        }
        Shape::Polygon { points } => scale * points.len() as f64,
    })
}

#[derive(Deserialize, JsonSchema)]
pub(crate) struct Pair {
    pub(crate) pair: (u8, u8),
}

/// Its arguments have no schema in the subset (a tuple is `prefixItems`).
#[tool]
pub(crate) async fn unbridgeable(args: Pair) -> Result<u8, ToolError> {
    Ok(args.pair.0)
}

/// Its arguments are not an object.
#[tool]
pub(crate) async fn scalar_args(args: String) -> Result<String, ToolError> {
    Ok(args)
}

// a struct output: its schema is the output declaration
use dsh_tools::{tool, Tool, ToolError};
use schemars::JsonSchema;
use serde::Serialize;

#[derive(Serialize, JsonSchema)]
struct Stats {
    lines: usize,
    words: usize,
}

/// Counts.
#[tool]
async fn count(
    /// the text
    text: String,
) -> Result<Stats, ToolError> {
    Ok(Stats { lines: text.lines().count(), words: text.split_whitespace().count() })
}

fn main() {
    let definition = Count.definition();
    assert_eq!(definition.output().schema()["type"], "object");
}

// a type named like the inline form's generated arguments type
use dsh_tools::{tool, ToolError};
use schemars::JsonSchema;
use serde::Deserialize;

#[derive(Deserialize, JsonSchema)]
struct ReadArgs {
    path: String,
}

/// Reads.
#[tool]
async fn read(
    /// What to read
    what: ReadArgs,
) -> Result<String, ToolError> {
    Ok(what.path)
}

fn main() {}

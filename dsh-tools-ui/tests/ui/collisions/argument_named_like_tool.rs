// an argument's enum named like the generated tool type: one error naming `struct_name`
use dsh_tools::{tool, ToolError};
use schemars::JsonSchema;
use serde::Deserialize;

#[derive(Deserialize, JsonSchema)]
enum Search {
    Files,
    Text,
}

/// Searches.
#[tool]
async fn search(
    /// What to search
    kind: Option<Vec<Search>>,
) -> Result<String, ToolError> {
    Ok(kind.map_or(0, |k| k.len()).to_string())
}

fn main() {}

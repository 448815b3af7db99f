// the struct form's arguments type named like the generated tool type: one error naming
// `struct_name` (issue 40: it used to be two errors, neither naming the fix)
use dsh_tools::{tool, ToolError};
use schemars::JsonSchema;
use serde::Deserialize;

/// Arguments.
#[derive(Deserialize, JsonSchema)]
struct Read {
    /// What to read
    path: String,
}

/// Reads.
#[tool]
async fn read(args: Read) -> Result<String, ToolError> {
    Ok(args.path)
}

fn main() {}

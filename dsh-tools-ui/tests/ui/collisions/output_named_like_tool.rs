// an output type named like the generated tool type: one error naming `struct_name`
use dsh_tools::{tool, ToolError};
use schemars::JsonSchema;
use serde::Serialize;

#[derive(Serialize, JsonSchema)]
struct Shot {
    width: u32,
}

/// Takes a screenshot.
#[tool]
async fn shot() -> Result<Shot, ToolError> {
    Ok(Shot { width: 1 })
}

fn main() {}

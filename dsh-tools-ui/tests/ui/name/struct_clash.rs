// the generated type clashes with the author's own output type: one error at that type,
// naming `struct_name`
use dsh_tools::{tool, ToolError};
use schemars::JsonSchema;
use serde::Serialize;

#[derive(Serialize, JsonSchema)]
struct FileInfo {
    size: u64,
}

/// Describes a file.
#[tool]
async fn file_info() -> Result<FileInfo, ToolError> {
    Ok(FileInfo { size: 0 })
}

fn main() {}

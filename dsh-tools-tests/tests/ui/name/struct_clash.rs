// the generated type clashes with the author's own: the error points at the function's name,
// and `struct_name` is the fix
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

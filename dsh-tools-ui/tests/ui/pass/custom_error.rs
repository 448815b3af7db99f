// the error type is anything that converts into `ToolError`
use dsh_tools::{tool, Tool, ToolError};

struct DiskFull;

impl From<DiskFull> for ToolError {
    fn from(_: DiskFull) -> Self {
        ToolError::coded("DiskError", "ENOSPC", "disk full")
    }
}

/// Writes.
#[tool]
async fn write(
    /// the text
    text: String,
) -> Result<usize, DiskFull> {
    if text.is_empty() { Err(DiskFull) } else { Ok(text.len()) }
}

/// Reads.
#[tool]
async fn read(
    /// the path
    path: String,
) -> Result<String, std::io::Error> {
    std::fs::read_to_string(path)
}

fn main() {
    let _ = (Write.definition(), Read.definition());
}

// a result card whose closure takes the wrong types: the arguments type has a name to read
use dsh_tools::{present::ToolResultView, tool, Tool, ToolError};

/// Reads.
#[tool]
async fn read_file(
    /// The path
    path: String,
) -> Result<String, ToolError> {
    Ok(path)
}

fn main() {
    let _ = ReadFile.result_card(|args: &String, out: &String| {
        Some(ToolResultView::read(args.as_str(), 1, [out.as_str()]))
    });
}

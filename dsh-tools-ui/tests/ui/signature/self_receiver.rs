// a `self` receiver is rejected
use dsh_tools::{tool, ToolError};

struct Reader;

impl Reader {
    /// Reads.
    #[tool]
    async fn read(&self) -> Result<String, ToolError> {
        Ok(String::new())
    }
}

fn main() {}

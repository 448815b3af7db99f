// `#[tool]` on something other than a function is an error
use dsh_tools::tool;

/// Reads.
#[tool]
struct Read;

fn main() {}

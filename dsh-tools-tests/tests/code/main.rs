//! Code Mode: the runtime seam and its reference cases, `run_code` on a registry with the test
//! double, the bridge scenarios, the QuickJS engine with hostile programs, the host memory a
//! program can claim, and `dsh-tools code run` against an MCP server. One test binary; each
//! file is one part.

mod bridge;
#[cfg(all(feature = "code", feature = "mcp"))]
mod cli;
#[cfg(feature = "code")]
mod memory;
mod mode;
#[cfg(feature = "code")]
mod quickjs;
mod render;
mod sdk;
mod seam;

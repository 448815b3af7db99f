//! The unit tests written inside `examples/mcp_server.rs` (its file tools through
//! `dsh_tools::testing`, on a temporary workspace), run by `cargo test`.
//!
//! The example is compiled here as a module rather than with `test = true` on the example target:
//! that setting makes `cargo test` build the example only as a test harness, and the runnable
//! binary that other tests launch would then be missing on a clean checkout.

#[allow(dead_code)]
#[path = "../mcp_server.rs"]
mod mcp_server;

//! The unit tests written inside `examples/acp_agent.rs` (the prompt parser, the file tools
//! fuzzed from their own schemas), run by `cargo test`: the example compiled as a module, as in
//! `mcp_server_tools.rs`.

#[allow(dead_code)]
#[path = "../acp_agent.rs"]
mod acp_agent;

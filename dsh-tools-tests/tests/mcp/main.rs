//! MCP, serving and importing: the server in both protocol eras over pipes, lines and HTTP
//! (with authorization, and a fleet behind a load balancer), approvals and tasks put to the
//! client, and imports from servers we trust and servers we do not. One test binary; each file
//! is one part, and `support` holds what they share.

#[path = "../common/stack.rs"]
mod stack;
#[path = "../common/mcp.rs"]
mod support;

mod approvals;
mod auth;
mod discovery;
mod faults;
mod fleet;
mod http;
mod import;
mod import_asks;
mod import_hostile;
mod lines;
mod serve;
mod tasks;

//! The echo tool the MCP benches serve, written both ways: `Echo` (`#[tool]`, for `McpServer`)
//! and `RmcpEcho` (a plain rmcp `#[tool_router]` server), over the same argument struct.

use dsh_tools::{ToolError, tool};
use rmcp::handler::server::wrapper::{Json, Parameters};
use rmcp::tool_router;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[derive(Clone, Deserialize, Serialize, JsonSchema)]
pub(crate) struct EchoArgs {
    /// Text
    text: String,
    /// A count
    count: i64,
    /// A flag
    flag: bool,
}

/// Echo the arguments back.
#[tool]
pub(crate) async fn echo(args: EchoArgs) -> Result<EchoArgs, ToolError> {
    Ok(args)
}

#[derive(Clone)]
pub(crate) struct RmcpEcho;

#[tool_router(server_handler)]
impl RmcpEcho {
    #[rmcp::tool(description = "Echo the arguments back.")]
    async fn echo(&self, Parameters(args): Parameters<EchoArgs>) -> Json<EchoArgs> {
        Json(args)
    }
}

/// The same rmcp server with its router built once and kept (`#[tool_handler(router =
/// self.tool_router)]`, as rmcp's own tests and examples write it): `RmcpEcho`'s
/// `server_handler` shortcut builds the router again on every call.
/// (Only `benches/mcp.rs` serves it; the file is shared with `mcp_http`.)
#[allow(dead_code)]
#[derive(Clone)]
pub(crate) struct RmcpEchoStored {
    tool_router: rmcp::handler::server::router::tool::ToolRouter<Self>,
}

#[allow(dead_code)]
impl RmcpEchoStored {
    pub(crate) fn new() -> Self {
        Self {
            tool_router: Self::stored_router(),
        }
    }
}

#[tool_router(router = stored_router)]
impl RmcpEchoStored {
    #[rmcp::tool(name = "echo", description = "Echo the arguments back.")]
    async fn echo_stored(&self, Parameters(args): Parameters<EchoArgs>) -> Json<EchoArgs> {
        Json(args)
    }
}

#[rmcp::tool_handler(router = self.tool_router)]
impl rmcp::ServerHandler for RmcpEchoStored {}

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

//! The names the OpenTelemetry semantic conventions give, in one place.

/// The version of the OpenTelemetry semantic conventions the spans and metrics follow: the
/// GenAI and MCP conventions of `open-telemetry/semantic-conventions-genai` (where the GenAI
/// conventions moved after core v1.41), `docs/gen-ai/gen-ai-spans.md` (the `execute_tool` span)
/// and `docs/gen-ai/mcp.md` (the MCP client and server spans and metrics).
pub const SEMCONV_VERSION: &str = "1.42.0";

/// `gen_ai.operation.name` of a tool call.
pub const EXECUTE_TOOL: &str = "execute_tool";
/// The tool span's metric: how long a call took, in seconds.
pub const EXECUTE_TOOL_DURATION: &str = "gen_ai.execute_tool.duration";
/// The MCP server's metric: how long a request took to answer, in seconds.
pub const MCP_SERVER_DURATION: &str = "mcp.server.operation.duration";
/// The MCP client's metric: how long a request took to be answered, in seconds.
pub const MCP_CLIENT_DURATION: &str = "mcp.client.operation.duration";
/// `error.type` of a failed call that carries no code of its own.
pub const TOOL_ERROR: &str = "tool_error";
/// `mcp.method.name` of a tool call.
pub const TOOLS_CALL: &str = "tools/call";

/// The `tracing` target of every span this crate opens (filter on it: `dsh_tools::otel=info`).
pub const TARGET: &str = "dsh_tools::otel";

//! [`McpRoundTrip`]: a registry served over MCP and imported back, in memory.

use crate::mcp::{ImportError, ImportOptions, ImportedTools, McpImport, McpServer};
use crate::{CancellationToken, Registry, ToolExecutionInput, ToolExecutionResult};

/// The real MCP layer in a test, with no process or socket: `server` is served by
/// [`McpServer`] over an in-memory pipe (`tokio::io::duplex`), and its tools are imported by
/// [`McpImport`] into a client registry, so a call goes model-side registry → MCP client →
/// JSON-RPC → MCP server → your tool, and back.
///
/// ```
/// use dsh_tools::testing::McpRoundTrip;
/// use dsh_tools::{Registry, ToolError, tool};
/// use serde_json::json;
///
/// /// Adds two numbers.
/// #[tool]
/// async fn add(/** A term */ a: i64, /** A term */ b: i64) -> Result<i64, ToolError> {
///     Ok(a + b)
/// }
///
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let server = Registry::new();
/// server.register(Add)?;
/// let mcp = McpRoundTrip::new(&server).await?;
/// assert_eq!(mcp.call("add", json!({"a": 2, "b": 3})).await.text(), "5");
/// // Checked on the client side too: the imported schema is the one MCP carried.
/// assert_eq!(mcp.call("add", json!({"a": 2})).await.code(), Some("INVALID_ARGS"));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// # }).unwrap();
/// ```
pub struct McpRoundTrip {
    client: Registry,
    import: McpImport,
    imported: ImportedTools,
    server: tokio::task::JoinHandle<()>,
}

impl std::fmt::Debug for McpRoundTrip {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpRoundTrip")
            .field("client", &self.client)
            .finish_non_exhaustive()
    }
}

impl McpRoundTrip {
    /// Serves `server` and imports its tools into a fresh client registry.
    pub async fn new(server: &Registry) -> Result<Self, ImportError> {
        Self::with_options(server, ImportOptions::default()).await
    }

    /// The same, importing with `options`.
    pub async fn with_options(
        server: &Registry,
        options: ImportOptions,
    ) -> Result<Self, ImportError> {
        let (server_end, client_end) = tokio::io::duplex(1 << 20);
        let mcp = McpServer::new(server.clone());
        let server = tokio::spawn(async move {
            let (reader, writer) = tokio::io::split(server_end);
            let _ = mcp.serve_io(reader, writer).await;
        });
        let import = match McpImport::connect(client_end).await {
            Ok(import) => import,
            Err(e) => {
                server.abort();
                return Err(e);
            }
        };
        let client = Registry::new();
        let imported = match import.import_into(&client, options).await {
            Ok(imported) => imported,
            Err(e) => {
                server.abort();
                return Err(e);
            }
        };
        Ok(Self {
            client,
            import,
            imported,
            server,
        })
    }

    /// The client registry, holding the imported tools.
    pub fn client(&self) -> &Registry {
        &self.client
    }

    /// The MCP client connection (`list_tools()`, the peer).
    pub fn import(&self) -> &McpImport {
        &self.import
    }

    /// What the import registered, skipped or passed through.
    pub fn imported(&self) -> &ImportedTools {
        &self.imported
    }

    /// Calls `name` on the client side: through MCP to the served tool.
    pub async fn call(&self, name: &str, arguments: serde_json::Value) -> ToolExecutionResult {
        let input = ToolExecutionInput::new("test_call", name, arguments, CancellationToken::new());
        self.client.execute(input).await
    }
}

impl Drop for McpRoundTrip {
    fn drop(&mut self) {
        self.server.abort();
    }
}

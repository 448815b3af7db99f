//! The streamable HTTP transport (feature `mcp-http`): a tower service, and a server that binds
//! an address and serves it at `/mcp`.

use super::McpServer;
use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper_util::rt::TokioIo;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use std::net::SocketAddr;
use std::sync::Arc;
use tokio::net::{TcpListener, ToSocketAddrs};
use tokio_util::sync::CancellationToken;

/// The path the MCP endpoint is served at by [`HttpServer`].
pub const MCP_PATH: &str = "/mcp";

/// Settings of the HTTP transport. The default is safe for a local server: only loopback
/// `Host`s (`localhost`, `127.0.0.1`, `::1`) and loopback `Origin`s (any port) are accepted,
/// which is what guards against DNS rebinding; request bodies are limited to 4 MiB.
#[derive(Clone, Debug)]
pub struct HttpConfig {
    inner: StreamableHttpServerConfig,
}

impl Default for HttpConfig {
    fn default() -> Self {
        Self {
            inner: StreamableHttpServerConfig::default().with_allowed_origins([
                "http://localhost:*",
                "http://127.0.0.1:*",
                "http://[::1]:*",
            ]),
        }
    }
}

impl HttpConfig {
    /// Also accepts these `Host` values (`"mcp.example.com"`, `"10.0.0.5:8080"`).
    pub fn allow_hosts(mut self, hosts: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.inner
            .allowed_hosts
            .extend(hosts.into_iter().map(Into::into));
        self
    }

    /// Also accepts these `Origin`s (`"https://app.example.com:443"`, `"http://host:*"`).
    pub fn allow_origins(mut self, origins: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.inner
            .allowed_origins
            .extend(origins.into_iter().map(Into::into));
        self
    }

    /// Answers with one JSON body instead of an SSE stream when nothing is streamed.
    pub fn json_response(mut self, json: bool) -> Self {
        self.inner.json_response = json;
        self
    }

    /// The largest request body accepted.
    pub fn max_request_body_bytes(mut self, bytes: usize) -> Self {
        self.inner.max_request_body_bytes = bytes;
        self
    }

    /// rmcp's own settings, for everything else (session mode, keep-alive, ...).
    pub fn rmcp(self) -> StreamableHttpServerConfig {
        self.inner
    }
}

impl McpServer {
    /// The MCP endpoint as a tower service (mount it with axum's `nest_service("/mcp", svc)` or
    /// serve it with hyper). Stopping `shutdown` closes its sessions.
    pub fn http_service(
        &self,
        config: HttpConfig,
        shutdown: &CancellationToken,
    ) -> StreamableHttpService<McpServer, LocalSessionManager> {
        let server = self.clone();
        StreamableHttpService::new(
            move || Ok(server.clone()),
            Arc::new(LocalSessionManager::default()),
            config.inner.with_cancellation_token(shutdown.child_token()),
        )
    }

    /// Binds `addr` (`"127.0.0.1:0"` picks a free port) for serving at `/mcp` with
    /// [`HttpServer::run`].
    ///
    /// ```no_run
    /// use dsh_tools::{Registry, mcp::{HttpConfig, McpServer}};
    /// # async fn run(registry: Registry) -> std::io::Result<()> {
    /// let server = McpServer::new(registry).bind_http("127.0.0.1:0", HttpConfig::default()).await?;
    /// println!("listening on {}", server.url());
    /// server.run().await
    /// # }
    /// ```
    pub async fn bind_http(
        &self,
        addr: impl ToSocketAddrs,
        config: HttpConfig,
    ) -> std::io::Result<HttpServer> {
        let listener = TcpListener::bind(addr).await?;
        let shutdown = CancellationToken::new();
        let service = self.http_service(config, &shutdown);
        Ok(HttpServer {
            addr: listener.local_addr()?,
            listener,
            service,
            shutdown,
        })
    }
}

/// A short plain-text answer.
fn plain(
    status: hyper::StatusCode,
    text: &'static str,
) -> hyper::Response<http_body_util::combinators::BoxBody<Bytes, std::convert::Infallible>> {
    let body = Full::new(Bytes::from_static(text.as_bytes()))
        .map_err(|never| match never {})
        .boxed();
    let mut response = hyper::Response::new(body);
    *response.status_mut() = status;
    response
}

/// An MCP server bound to a TCP address, serving HTTP/1.1 at [`MCP_PATH`] (anything else is
/// `404`).
pub struct HttpServer {
    addr: SocketAddr,
    listener: TcpListener,
    service: StreamableHttpService<McpServer, LocalSessionManager>,
    shutdown: CancellationToken,
}

impl std::fmt::Debug for HttpServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpServer")
            .field("addr", &self.addr)
            .finish_non_exhaustive()
    }
}

impl HttpServer {
    /// The address actually bound.
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// `http://HOST:PORT/mcp`.
    pub fn url(&self) -> String {
        format!("http://{}{MCP_PATH}", self.addr)
    }

    /// Cancelling this token stops [`run`](Self::run) and closes every session.
    pub fn shutdown_token(&self) -> CancellationToken {
        self.shutdown.clone()
    }

    /// Accepts connections until the shutdown token fires.
    pub async fn run(self) -> std::io::Result<()> {
        loop {
            let (stream, _) = tokio::select! {
                () = self.shutdown.cancelled() => return Ok(()),
                accepted = self.listener.accept() => match accepted {
                    Ok(connection) => connection,
                    Err(e) => {
                        // Out of file descriptors and the like: keep serving the others.
                        tracing::warn!("MCP HTTP: accept failed: {e}");
                        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
                        continue;
                    }
                },
            };
            // rmcp writes an SSE answer in several writes; with Nagle's algorithm on, the later
            // ones wait for the client's delayed ACK (about 40 ms per call on Linux).
            if let Err(e) = stream.set_nodelay(true) {
                tracing::debug!("MCP HTTP: TCP_NODELAY not set: {e}");
            }
            let service = self.service.clone();
            let shutdown = self.shutdown.clone();
            tokio::spawn(async move {
                let handler = hyper::service::service_fn(move |request| {
                    let service = service.clone();
                    async move {
                        if request.uri().path() != MCP_PATH {
                            return Ok::<_, std::convert::Infallible>(plain(
                                hyper::StatusCode::NOT_FOUND,
                                "not found",
                            ));
                        }
                        // One request naming two hosts: which one the Host check saw and which
                        // one a proxy routed by is anyone's guess (RFC 9112 §3.2: answer 400).
                        if request
                            .headers()
                            .get_all(hyper::header::HOST)
                            .iter()
                            .count()
                            > 1
                        {
                            return Ok(plain(
                                hyper::StatusCode::BAD_REQUEST,
                                "more than one Host header",
                            ));
                        }
                        Ok(service.handle(request).await)
                    }
                });
                let connection = hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), handler);
                tokio::pin!(connection);
                tokio::select! {
                    result = connection.as_mut() => {
                        if let Err(e) = result {
                            tracing::debug!("MCP HTTP connection: {e}");
                        }
                    }
                    () = shutdown.cancelled() => {}
                }
            });
        }
    }
}

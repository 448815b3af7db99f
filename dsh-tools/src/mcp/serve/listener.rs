//! The TCP listener of the streamable HTTP transport: [`McpServer::bind_http`] and
//! [`HttpServer`] (HTTP/1.1 connections, bounded in number and in the time to send headers,
//! the metadata and endpoint paths routed to [`McpHttpService`]).

use super::http::{HttpConfig, MCP_PATH, McpHttpService};
use super::response::plain;
use super::server::McpServer;
use hyper_util::rt::TokioIo;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;
use tokio::net::{TcpListener, ToSocketAddrs};
use tokio_util::sync::CancellationToken;

impl McpServer {
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
        #[allow(unused_mut)] mut config: HttpConfig,
    ) -> std::io::Result<HttpServer> {
        let listener = TcpListener::bind(addr).await?;
        let local = listener.local_addr()?;
        #[cfg(feature = "mcp-auth")]
        if let Some(auth) = config.auth.as_mut() {
            auth.bind_address(local, MCP_PATH).map_err(|e| {
                std::io::Error::new(std::io::ErrorKind::InvalidInput, e.to_string())
            })?;
        }
        #[cfg(feature = "mcp-auth")]
        let authorized = config.auth.is_some();
        #[cfg(not(feature = "mcp-auth"))]
        let authorized = false;
        if !local.ip().is_loopback() && !authorized && !config.unauthenticated {
            return Err(std::io::Error::new(
                std::io::ErrorKind::PermissionDenied,
                format!(
                    "refusing to serve MCP on {local} without authorization: anyone who reaches \
                     it could run every tool. Set HttpConfig::authorization (feature mcp-auth), \
                     bind a loopback address, or opt out with \
                     HttpConfig::allow_unauthenticated(true)"
                ),
            ));
        }
        let shutdown = CancellationToken::new();
        let limits = config.limits;
        let service = self.http_service(config, &shutdown);
        Ok(HttpServer {
            addr: local,
            listener,
            service,
            shutdown,
            connections: Arc::new(tokio::sync::Semaphore::new(limits.max_connections)),
            header_timeout: limits.header_timeout,
        })
    }
}

/// `503 too many connections` on a connection past the limit, then closed. What the client
/// sent is read and discarded (for at most a second, 64 KiB) before the socket is dropped:
/// closing with unread input would reset the connection, and the client might never see the
/// answer.
async fn refuse(mut stream: tokio::net::TcpStream) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    const ANSWER: &[u8] = b"HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain\r\n\
        Content-Length: 20\r\nConnection: close\r\n\r\ntoo many connections";
    let _ = tokio::time::timeout(Duration::from_secs(1), async {
        stream.write_all(ANSWER).await?;
        stream.shutdown().await?;
        let mut sink = [0u8; 4096];
        let mut left = 64 * 1024usize;
        while left > 0 {
            match stream.read(&mut sink).await? {
                0 => break,
                n => left = left.saturating_sub(n),
            }
        }
        Ok::<(), std::io::Error>(())
    })
    .await;
}

/// An MCP server bound to a TCP address, serving HTTP/1.1 at [`MCP_PATH`] (anything else is
/// `404`).
pub struct HttpServer {
    addr: SocketAddr,
    listener: TcpListener,
    service: McpHttpService,
    shutdown: CancellationToken,
    connections: Arc<tokio::sync::Semaphore>,
    header_timeout: Duration,
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
            let Ok(permit) = Arc::clone(&self.connections).try_acquire_owned() else {
                // Answered and closed on a task of its own: a client that does not read cannot
                // hold up the accept loop.
                tokio::spawn(refuse(stream));
                continue;
            };
            let header_timeout = self.header_timeout;
            let service = self.service.clone();
            let shutdown = self.shutdown.clone();
            tokio::spawn(async move {
                let handler = hyper::service::service_fn(move |request| {
                    let service = service.clone();
                    async move {
                        #[cfg(feature = "mcp-auth")]
                        if request.method() == hyper::Method::GET
                            && let Some(answer) = service.metadata_response(request.uri().path())
                        {
                            return Ok(answer);
                        }
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
                let _permit = permit;
                let connection = hyper::server::conn::http1::Builder::new()
                    .timer(hyper_util::rt::TokioTimer::new())
                    .header_read_timeout(header_timeout)
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

//! The streamable HTTP transport (feature `mcp-http`): a tower service, and a server that binds
//! an address and serves it at `/mcp`.

use super::response::{HttpResponse, json, plain, undecodable};
use super::server::McpServer;
use super::tasks_2025;
use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use std::sync::Arc;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// The path the MCP endpoint is served at by [`HttpServer`](crate::mcp::HttpServer).
pub const MCP_PATH: &str = "/mcp";

/// Settings of the HTTP transport. The default is safe for a local server: only loopback
/// `Host`s (`localhost`, `127.0.0.1`, `::1`) and loopback `Origin`s (any port) are accepted,
/// which is what guards against DNS rebinding; and every resource a client can hold is bounded,
/// each refusal a clear HTTP answer:
///
/// | limit | default | past it |
/// |---|---|---|
/// | request body ([`max_request_body_bytes`](Self::max_request_body_bytes)) | 4 MiB | `413`, from the `Content-Length` before any of the body is read |
/// | open sessions ([`max_sessions`](Self::max_sessions)) | 1,000 | `503 too many sessions` for the `initialize` that would open one more |
/// | session idle time ([`session_idle_timeout`](Self::session_idle_timeout)) | 5 minutes | the session is closed (rmcp's session keep-alive) |
/// | open connections ([`max_connections`](Self::max_connections), [`HttpServer`](crate::mcp::HttpServer) only) | 512 | `503 too many connections`, then closed |
/// | time to send a request's headers ([`header_read_timeout`](Self::header_read_timeout), [`HttpServer`](crate::mcp::HttpServer) only) | 10 s | the connection is closed |
/// | time to send a request's body ([`body_read_timeout`](Self::body_read_timeout)) | 30 s | `408 Request Timeout` |
/// | `POST` requests being answered at once ([`max_requests_in_flight`](Self::max_requests_in_flight)) | 256 | `503 too many requests in flight` |
#[derive(Clone, Debug)]
pub struct HttpConfig {
    inner: StreamableHttpServerConfig,
    pub(super) limits: HttpLimits,
    #[cfg(feature = "mcp-auth")]
    pub(super) auth: Option<super::auth::Authorization>,
    pub(super) unauthenticated: bool,
}

/// The limits `HttpConfig` adds to rmcp's settings.
#[derive(Clone, Copy, Debug)]
pub(super) struct HttpLimits {
    max_sessions: usize,
    session_idle: Duration,
    pub(super) max_connections: usize,
    pub(super) header_timeout: Duration,
    body_timeout: Duration,
    max_in_flight: usize,
}

impl Default for HttpConfig {
    fn default() -> Self {
        Self {
            inner: StreamableHttpServerConfig::default().with_allowed_origins([
                "http://localhost:*",
                "http://127.0.0.1:*",
                "http://[::1]:*",
            ]),
            limits: HttpLimits {
                max_sessions: 1_000,
                session_idle: Duration::from_secs(300),
                max_connections: 512,
                header_timeout: Duration::from_secs(10),
                body_timeout: Duration::from_secs(30),
                max_in_flight: 256,
            },
            #[cfg(feature = "mcp-auth")]
            auth: None,
            unauthenticated: false,
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

    /// At most `sessions` sessions open at once (at least 1).
    pub fn max_sessions(mut self, sessions: usize) -> Self {
        self.limits.max_sessions = sessions.max(1);
        self
    }

    /// A session no request has used for this long is closed.
    pub fn session_idle_timeout(mut self, idle: Duration) -> Self {
        self.limits.session_idle = idle;
        self
    }

    /// At most `connections` connections open at once (at least 1; [`HttpServer`](crate::mcp::HttpServer) only: a
    /// service mounted elsewhere is bounded by its server).
    pub fn max_connections(mut self, connections: usize) -> Self {
        self.limits.max_connections = connections.max(1);
        self
    }

    /// A client gets this long to send a request's headers, the first request's and each next
    /// one's on a kept-alive connection ([`HttpServer`](crate::mcp::HttpServer) only).
    pub fn header_read_timeout(mut self, timeout: Duration) -> Self {
        self.limits.header_timeout = timeout;
        self
    }

    /// A client gets this long to send a request's body, from when its headers arrived (a body
    /// that trickles in is cut off with `408`, and a body over
    /// [`max_request_body_bytes`](Self::max_request_body_bytes) without a `Content-Length` with
    /// `413` as soon as it passes the limit).
    pub fn body_read_timeout(mut self, timeout: Duration) -> Self {
        self.limits.body_timeout = timeout;
        self
    }

    /// At most `requests` requests answered at once (at least 1); an answer streamed over SSE
    /// counts until its stream ends.
    pub fn max_requests_in_flight(mut self, requests: usize) -> Self {
        self.limits.max_in_flight = requests.max(1);
        self
    }

    /// Keeps each session's `initialize` in `store` too, so that every instance sharing the store
    /// serves the session: behind a load balancer without affinity, a request of a 2025-11-25
    /// session that lands on another instance is served there (rmcp replays the handshake from
    /// the store) instead of `404 Session not found`. The 2026-07-28 era needs no store: its
    /// requests carry no session. What a session receives unasked (`tools/list_changed` on a
    /// `GET` stream, `subscriptions/listen`) comes from the instance holding that stream, so
    /// every instance should register the same tools. `RedisSessionStore`
    /// (feature `mcp-redis`) is one to deploy.
    pub fn session_store(
        mut self,
        store: Arc<dyn rmcp::transport::streamable_http_server::session::store::SessionStore>,
    ) -> Self {
        self.inner.session_store = Some(store);
        self
    }

    /// Every request must carry a bearer token `auth` accepts (feature `mcp-auth`; see
    /// [`Authorization`](crate::mcp::Authorization)).
    #[cfg(feature = "mcp-auth")]
    pub fn authorization(mut self, auth: super::auth::Authorization) -> Self {
        self.auth = Some(auth);
        self
    }

    /// Lets [`bind_http`](McpServer::bind_http) serve an address that is not loopback without
    /// authorization. By default it refuses: anyone who can reach the port could run every
    /// tool. Set this only when something in front of the server (a gateway, a private network)
    /// decides who reaches it.
    pub fn allow_unauthenticated(mut self, allow: bool) -> Self {
        self.unauthenticated = allow;
        self
    }

    /// rmcp's own settings, for everything else (session mode, keep-alive, ...).
    pub fn rmcp(self) -> StreamableHttpServerConfig {
        self.inner
    }
}

/// The MCP endpoint as a tower service: rmcp's streamable HTTP service, with `DELETE` answered
/// as the MCP spec says (`204 No Content` for a session this server held and closed, `404` for
/// one it does not hold; rmcp answers `202` to both).
#[derive(Clone)]
pub struct McpHttpService {
    inner: StreamableHttpService<McpServer, LocalSessionManager>,
    sessions: Arc<LocalSessionManager>,
    max_sessions: usize,
    max_body: usize,
    body_timeout: Duration,
    in_flight: Arc<tokio::sync::Semaphore>,
    /// Whether the server serves tasks (2025-11-25 task requests are renamed, `initialize`
    /// answers declare them: see `tasks_2025`).
    tasks: bool,
    store: Option<Arc<dyn rmcp::transport::streamable_http_server::session::store::SessionStore>>,
    #[cfg(feature = "mcp-auth")]
    auth: Option<Arc<super::auth::Authorization>>,
    /// Who opened each session ([`owner_of`]: issuer, subject and client): another caller
    /// presenting its id is told there is no such session.
    #[cfg(feature = "mcp-auth")]
    owners: Arc<std::sync::Mutex<std::collections::HashMap<Arc<str>, String>>>,
}

impl std::fmt::Debug for McpHttpService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpHttpService").finish_non_exhaustive()
    }
}

impl McpHttpService {
    /// Answers one request.
    pub async fn handle<B>(&self, request: hyper::Request<B>) -> HttpResponse
    where
        B: hyper::body::Body + Send + 'static,
        B::Error: std::fmt::Display,
        B::Data: Send + 'static,
    {
        use rmcp::transport::streamable_http_server::session::SessionManager;
        // One session per request. Of two `Mcp-Session-Id`s, which one the owner check, rmcp,
        // and a proxy or a log in front each read is anyone's guess; one that is not visible
        // ASCII (the spec's alphabet) rmcp reads as no session at all, and opens a new one.
        let mut ids = request.headers().get_all(SESSION_HEADER).iter();
        match (ids.next(), ids.next()) {
            (_, Some(_)) => {
                return plain(
                    hyper::StatusCode::BAD_REQUEST,
                    "more than one Mcp-Session-Id header",
                );
            }
            (Some(id), None) if !id.as_bytes().iter().all(|b| (0x21..=0x7e).contains(b)) => {
                return plain(
                    hyper::StatusCode::BAD_REQUEST,
                    "the Mcp-Session-Id header is not visible ASCII",
                );
            }
            _ => {}
        }
        #[cfg(feature = "mcp-auth")]
        let mut request = request;
        #[cfg(feature = "mcp-auth")]
        let owner = match &self.auth {
            None => None,
            Some(auth) => match auth.authorize(request.headers()).await {
                Ok(caller) => {
                    let owner = owner_of(&caller);
                    if let Some(id) = session_id(&request)
                        && !self.owned_by(&id, &owner).await
                    {
                        return plain(hyper::StatusCode::NOT_FOUND, "session not found");
                    }
                    request.extensions_mut().insert(Arc::new(caller));
                    Some(owner)
                }
                Err(refusal) => return refused(refusal),
            },
        };
        // A body over the limit is refused from its declared length, before it is read.
        let declared = request
            .headers()
            .get(hyper::header::CONTENT_LENGTH)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.trim().parse::<u64>().ok());
        if declared.is_some_and(|length| length > self.max_body as u64) {
            return plain(
                hyper::StatusCode::PAYLOAD_TOO_LARGE,
                format!(
                    "request body too large (the limit is {} bytes)",
                    self.max_body
                ),
            );
        }
        // Only requests count: a session's standalone `GET` stream stays open for the whole
        // session (bounded by the session cap), and would otherwise use up every place.
        let permit = if request.method() == hyper::Method::POST {
            match Arc::clone(&self.in_flight).try_acquire_owned() {
                Ok(permit) => Some(permit),
                Err(_) => {
                    return plain(
                        hyper::StatusCode::SERVICE_UNAVAILABLE,
                        "too many requests in flight",
                    );
                }
            }
        } else {
            None
        };
        // The whole body, within the deadline and the limit, before rmcp sees the request (rmcp
        // would wait for a trickling body as long as the client likes).
        let (parts, body) = request.into_parts();
        let json_post = parts.method == hyper::Method::POST
            && parts
                .headers
                .get(hyper::header::CONTENT_TYPE)
                .is_some_and(is_json);
        let body =
            match tokio::time::timeout(self.body_timeout, read_body(body, self.max_body)).await {
                Ok(Ok(bytes)) => bytes,
                Ok(Err(None)) => {
                    return plain(
                        hyper::StatusCode::PAYLOAD_TOO_LARGE,
                        format!(
                            "request body too large (the limit is {} bytes)",
                            self.max_body
                        ),
                    );
                }
                Ok(Err(Some(e))) => {
                    return plain(
                        hyper::StatusCode::BAD_REQUEST,
                        format!("the request body could not be read: {e}"),
                    );
                }
                Err(_) => {
                    return plain(
                        hyper::StatusCode::REQUEST_TIMEOUT,
                        format!(
                            "the request body did not arrive within {} ms",
                            self.body_timeout.as_millis()
                        ),
                    );
                }
            };
        // A 2025-11-25 task request goes to rmcp under the name it hands the server; a listen
        // for task notifications without the extension is refused here (rmcp drops `taskIds`).
        let body = match self.tasks && json_post {
            true => tasks_2025::rename_bytes(&body).map_or(body, Bytes::from),
            false => body,
        };
        if self.tasks
            && json_post
            && let Some(refused) = super::tasks::listen_refusal_bytes(&body)
        {
            return json(hyper::StatusCode::OK, refused.trim_end());
        }
        // Kept (the same bytes, not a copy) for the answer to a body rmcp cannot decode.
        let posted = json_post.then(|| body.clone());
        let request = hyper::Request::from_parts(parts, Full::new(body));
        let opens_session = request.method() == hyper::Method::POST
            && !request.headers().contains_key(SESSION_HEADER);
        // Whether the session existed is read before rmcp closes it; rmcp's own checks (Host,
        // Origin, the session header, the protocol version) still answer first.
        let held = if request.method() == hyper::Method::DELETE {
            match session_id(&request) {
                Some(id) => {
                    let here = self.sessions.has_session(&id).await.unwrap_or(false);
                    // Held by another instance sharing the store: still a session to end.
                    let shared = match (&self.store, here) {
                        (Some(store), false) => store.load(&id).await.ok().flatten().is_some(),
                        _ => false,
                    };
                    Some(here || shared)
                }
                None => None,
            }
        } else {
            None
        };
        // A session of another instance is restored here only under the cap: restores count
        // like `initialize`s.
        if let Some(store) = &self.store
            && let Some(id) = session_id(&request)
            && request.method() != hyper::Method::DELETE
            && !self.sessions.has_session(&id).await.unwrap_or(false)
            && self.sessions.sessions.read().await.len() >= self.max_sessions
            && store.load(&id).await.ok().flatten().is_some()
        {
            return plain(hyper::StatusCode::SERVICE_UNAVAILABLE, "too many sessions");
        }
        #[cfg(feature = "mcp-auth")]
        let response_session = session_id(&request);
        let mut response = self.inner.handle(request).await;
        // rmcp answers a body it cannot decode `415 Unsupported Media Type`, which is about the
        // `Content-Type` (still its answer to one that is not JSON): the request is malformed.
        if response.status() == hyper::StatusCode::UNSUPPORTED_MEDIA_TYPE
            && let Some(body) = &posted
            && let Some(answer) = undecodable(body)
        {
            return answer;
        }
        if let Some(held) = held
            && response.status() == hyper::StatusCode::ACCEPTED
        {
            if held {
                *response.status_mut() = hyper::StatusCode::NO_CONTENT;
                #[cfg(feature = "mcp-auth")]
                if let Some(id) = response_session.as_ref() {
                    self.owners
                        .lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .remove(&**id);
                    if let Some(store) = &self.store {
                        let _ = store.delete(&owner_key(id)).await;
                    }
                }
            } else {
                return plain(hyper::StatusCode::NOT_FOUND, "session not found");
            }
        }
        // A session opened past the cap is closed at once (counted after rmcp made it, so two
        // racing `initialize`s cannot both slip under the cap).
        if opens_session
            && let Some(id) = response
                .headers()
                .get(SESSION_HEADER)
                .and_then(|v| v.to_str().ok())
                .map(Arc::<str>::from)
            && self.sessions.sessions.read().await.len() > self.max_sessions
        {
            let _ = self.sessions.close_session(&id).await;
            if let Some(store) = &self.store {
                // rmcp stored it after the handshake: no other instance may restore it either.
                let _ = store.delete(&id).await;
            }
            return plain(hyper::StatusCode::SERVICE_UNAVAILABLE, "too many sessions");
        }
        #[cfg(feature = "mcp-auth")]
        if let Some(owner) = owner
            && opens_session
            && let Some(id) = response
                .headers()
                .get(SESSION_HEADER)
                .and_then(|v| v.to_str().ok())
        {
            self.record_owner(Arc::from(id), owner).await;
        }
        // Below 2026-07-28 the `initialize` answer declares the tasks capability (rmcp cannot
        // say it); `tasks/list` only where callers are told apart.
        if self.tasks && opens_session {
            #[cfg(feature = "mcp-auth")]
            let list = self.auth.is_some();
            #[cfg(not(feature = "mcp-auth"))]
            let list = false;
            response = tasks_2025::declare_in(response, list);
        }
        // The permit lives as long as the body: a streamed answer counts until it ends.
        match permit {
            Some(permit) => response.map(|body| {
                body.map_frame(move |frame| {
                    let _held = &permit;
                    frame
                })
                .boxed()
            }),
            None => response,
        }
    }
}

impl McpHttpService {
    /// The protected resource metadata answer, when authorization is on (serve it at
    /// [`Authorization::metadata_path`](crate::mcp::Authorization::metadata_path) when you mount
    /// the service yourself; [`HttpServer`](crate::mcp::HttpServer) does).
    #[cfg(feature = "mcp-auth")]
    pub fn metadata_response(&self, path: &str) -> Option<HttpResponse> {
        let auth = self.auth.as_ref()?;
        auth.is_metadata_path(path)
            .then(|| auth.metadata_response())
    }

    /// Whether the caller `owner` may use session `id`: the owner this instance recorded, or
    /// the one in the shared store for a session opened elsewhere. With authorization on, a
    /// session whose owner is known nowhere is nobody's to use (a session this instance does
    /// not hold and no store knows is answered `404` by rmcp anyway).
    #[cfg(feature = "mcp-auth")]
    async fn owned_by(&self, id: &Arc<str>, owner: &str) -> bool {
        if let Some(same) = self
            .owners
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(&**id)
            .map(|known| known == owner)
        {
            return same;
        }
        let Some(store) = &self.store else {
            return true;
        };
        match store.load(&owner_key(id)).await {
            Ok(Some(state)) if state.initialize_params.client_info.name == owner => {
                self.owners
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .insert(Arc::clone(id), owner.to_owned());
                true
            }
            _ => false,
        }
    }

    /// Remembers who opened session `id` ([`owner_of`]; in the shared store too, under the
    /// session id with `.owner` appended, for the instances that restore it); entries of
    /// sessions that ended are dropped once the map outgrows the session cap, so it stays as
    /// large as the live sessions.
    #[cfg(feature = "mcp-auth")]
    async fn record_owner(&self, id: Arc<str>, owner: String) {
        use rmcp::model::{ClientCapabilities, Implementation, InitializeRequestParams};
        use rmcp::transport::streamable_http_server::session::store::SessionState;
        if let Some(store) = &self.store {
            // The store holds `initialize` parameters: the owner rides in the client's name.
            let state = SessionState::new(InitializeRequestParams::new(
                ClientCapabilities::default(),
                Implementation::new(owner.clone(), "session-owner"),
            ));
            if let Err(e) = store.store(&owner_key(&id), &state).await {
                tracing::warn!("MCP HTTP: the owner of a session was not stored: {e}");
            }
        }
        let prune = {
            let mut owners = self.owners.lock().unwrap_or_else(|e| e.into_inner());
            owners.insert(id, owner);
            owners.len() > self.max_sessions.saturating_mul(2)
        };
        if prune {
            let live: std::collections::HashSet<Arc<str>> = self
                .sessions
                .sessions
                .read()
                .await
                .keys()
                .cloned()
                .collect();
            self.owners
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .retain(|id, _| live.contains(id));
        }
    }
}

/// A body, whole: `Err(None)` past `max` bytes, `Err(Some(why))` when it cannot be read.
async fn read_body<B>(body: B, max: usize) -> Result<Bytes, Option<String>>
where
    B: hyper::body::Body,
    B::Error: std::fmt::Display,
{
    use bytes::{Buf, BufMut};
    let mut body = std::pin::pin!(body);
    let mut whole = Vec::new();
    while let Some(frame) = body.frame().await {
        let frame = frame.map_err(|e| Some(e.to_string()))?;
        if let Ok(data) = frame.into_data() {
            if whole.len().saturating_add(data.remaining()) > max {
                return Err(None);
            }
            whole.put(data);
        }
    }
    Ok(Bytes::from(whole))
}

/// The store key of a session's owner.
#[cfg(feature = "mcp-auth")]
fn owner_key(id: &str) -> String {
    format!("{id}.owner")
}

/// The answer to a request [`Authorization`](super::auth::Authorization) refused.
#[cfg(feature = "mcp-auth")]
fn refused(refusal: super::auth::Refusal) -> HttpResponse {
    match refusal {
        super::auth::Refusal::Unavailable => plain(
            hyper::StatusCode::SERVICE_UNAVAILABLE,
            "the token could not be checked now; try again later",
        ),
        super::auth::Refusal::Challenge {
            forbidden,
            message,
            challenge,
        } => {
            let status = if forbidden {
                hyper::StatusCode::FORBIDDEN
            } else {
                hyper::StatusCode::UNAUTHORIZED
            };
            let mut response = plain(status, message);
            if let Ok(value) = hyper::header::HeaderValue::from_str(&challenge) {
                response
                    .headers_mut()
                    .insert(hyper::header::WWW_AUTHENTICATE, value);
            }
            response
        }
    }
}

/// Who owns the sessions `caller` opens: its issuer, subject, whether the subject is the
/// token's `sub` (a client's own token has none: its subject is its client id) and client, as
/// a JSON array (`["https://auth.example.com","alice",true,"app"]`, `null` for a part it
/// lacks), which tells any two callers apart, whatever their names hold: a client's own token
/// never owns the session of a user whose `sub` equals that client's id, nor a subject `a` of
/// client `b\0c` the sessions of subject `a\0b` of client `c`, as it did when the parts were
/// joined with NULs.
///
/// An owner a shared store still holds in that former encoding is refused, not converted:
/// it holds raw NULs, which this encoding never does (JSON escapes them), so it matches no
/// caller, and its session is answered `404` as another caller's would be (its client then
/// opens a new session; sessions are short-lived, and nothing else is lost).
#[cfg(feature = "mcp-auth")]
fn owner_of(caller: &crate::call::Caller) -> String {
    let is_sub = caller.claim("sub").and_then(serde_json::Value::as_str) == Some(caller.subject());
    serde_json::json!([
        caller.issuer_name(),
        caller.subject(),
        is_sub,
        caller.client()
    ])
    .to_string()
}

/// The header naming a request's session.
const SESSION_HEADER: &str = "mcp-session-id";

/// Whether a `Content-Type` is JSON, as rmcp reads it (parameters aside, in any case).
fn is_json(value: &hyper::header::HeaderValue) -> bool {
    value.to_str().is_ok_and(|value| {
        let essence = value.split_once(';').map_or(value, |(essence, _)| essence);
        essence.trim().eq_ignore_ascii_case("application/json")
    })
}

/// The request's `Mcp-Session-Id`.
fn session_id<B>(request: &hyper::Request<B>) -> Option<Arc<str>> {
    request
        .headers()
        .get(SESSION_HEADER)
        .and_then(|v| v.to_str().ok())
        .map(Arc::<str>::from)
}

impl<B> tower_service::Service<hyper::Request<B>> for McpHttpService
where
    B: hyper::body::Body + Send + 'static,
    B::Error: std::fmt::Display,
    B::Data: Send + 'static,
{
    type Response = HttpResponse;
    type Error = std::convert::Infallible;
    type Future = std::pin::Pin<
        Box<
            dyn std::future::Future<Output = Result<HttpResponse, std::convert::Infallible>> + Send,
        >,
    >;

    fn poll_ready(
        &mut self,
        _: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Result<(), Self::Error>> {
        std::task::Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: hyper::Request<B>) -> Self::Future {
        let service = self.clone();
        Box::pin(async move { Ok(service.handle(request).await) })
    }
}

impl McpServer {
    /// The MCP endpoint as a tower service (mount it with axum's `nest_service("/mcp", svc)` or
    /// serve it with hyper). Stopping `shutdown` closes its sessions.
    pub fn http_service(&self, config: HttpConfig, shutdown: &CancellationToken) -> McpHttpService {
        let server = self.clone();
        let limits = config.limits;
        #[cfg(feature = "mcp-auth")]
        let auth = config.auth.clone().map(Arc::new);
        let mut sessions = LocalSessionManager::default();
        sessions.session_config.keep_alive = Some(limits.session_idle);
        let sessions = Arc::new(sessions);
        McpHttpService {
            tasks: self.task_view().is_some(),
            max_body: config.inner.max_request_body_bytes,
            body_timeout: limits.body_timeout,
            store: config.inner.session_store.clone(),
            inner: StreamableHttpService::new(
                move || Ok(server.for_session()),
                Arc::clone(&sessions),
                config.inner.with_cancellation_token(shutdown.child_token()),
            ),
            sessions,
            max_sessions: limits.max_sessions,
            in_flight: Arc::new(tokio::sync::Semaphore::new(limits.max_in_flight)),
            #[cfg(feature = "mcp-auth")]
            auth,
            #[cfg(feature = "mcp-auth")]
            owners: Arc::default(),
        }
    }
}

//! Authorization for the HTTP transport (feature `mcp-auth`): the resource-server side of MCP's
//! authorization spec (2025-06-18 and later).
//!
//! Every request must carry `Authorization: Bearer <token>`; a request without one gets `401`
//! with `WWW-Authenticate: Bearer resource_metadata="…"`, pointing to this server's protected
//! resource metadata (RFC 9728), which [`HttpServer`](crate::mcp::HttpServer) serves at
//! `/.well-known/oauth-protected-resource` (and with the endpoint's path appended). A client reads
//! it, finds the authorization server, gets a token for this server's resource URI, and retries.
//!
//! | the token | answer |
//! |---|---|
//! | missing, or not `Bearer` | `401`, `WWW-Authenticate: Bearer resource_metadata="…"` (and `scope="…"` when scopes are required) |
//! | expired, not yet valid, badly signed, another issuer's, another audience's, another kind of token (`typ`), an identity claim that is not a non-empty string | `401`, `error="invalid_token"` and what was wrong |
//! | valid, but without a scope every request needs ([`Authorization::require_scopes`]) | `403`, `error="insufficient_scope"`, the scopes needed |
//! | valid, but without a scope one tool needs ([`ScopeRules`](crate::pipeline::ScopeRules)) | the call fails: an `isError` result naming the missing scope |
//! | the keys cannot be fetched | `503` (the token may be fine) |
//!
//! The audience is always this server's resource URI: a token issued for another service is
//! refused, and no token is ever passed on (the spec's "token passthrough" is forbidden). A
//! 2025-11-25 session belongs to the token's issuer, subject and client: another caller
//! presenting its id gets `404` (with a shared session store, on every instance: the owner is
//! stored beside the session). The caller's identity and scopes reach the pipeline as
//! [`Caller`](crate::pipeline::Caller) (see [`ToolExecution::caller`](crate::ToolExecution::caller)),
//! for guards and pre-execute hooks; `run_code` programs call tools on their outer call's behalf.
//!
//! ```no_run
//! use dsh_tools::{Registry, mcp::{Authorization, HttpConfig, JwtVerifier, McpServer}, pipeline::ScopeRules};
//!
//! # async fn run(registry: Registry) -> Result<(), Box<dyn std::error::Error>> {
//! // require_caller: a call that somehow carries no caller is refused, not let through.
//! registry.guard(
//!     ScopeRules::new()
//!         .require_caller(true)
//!         .tool("write_file", ["files:write"])
//!         .guard(),
//! );
//! let verifier = JwtVerifier::fetch(
//!     "https://auth.example.com",
//!     "https://auth.example.com/.well-known/jwks.json",
//! );
//! let auth = Authorization::new("https://mcp.example.com/mcp", verifier)?
//!     .authorization_server("https://auth.example.com")
//!     .scopes_supported(["files:read", "files:write"]);
//! let config = HttpConfig::default().allow_hosts(["mcp.example.com"]).authorization(auth);
//! McpServer::new(registry).bind_http("0.0.0.0:8080", config).await?.run().await?;
//! # Ok(()) }
//! ```

use crate::call::{BoxFuture, Caller};
use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use serde_json::{Value, json};
use std::fmt;
use std::sync::Arc;

/// The well-known path of protected resource metadata (RFC 9728 §3).
pub const PROTECTED_RESOURCE_PATH: &str = "/.well-known/oauth-protected-resource";

/// The longest token read (a real access token is a few KiB).
const MAX_TOKEN_BYTES: usize = 16 * 1024;

/// Why a token was not accepted.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum TokenRejection {
    /// Not valid for this server (`401 invalid_token`): the text says why, and is sent to the
    /// client in `error_description`.
    #[error("invalid token: {0}")]
    Invalid(String),
    /// Valid, but lacking scopes (`403 insufficient_scope`).
    #[error("insufficient scope: needs {}", .0.join(" "))]
    InsufficientScope(Vec<String>),
    /// It could not be checked now (`503`): the keys or the introspection endpoint are out of
    /// reach. The text is logged, not sent.
    #[error("token not checked: {0}")]
    Unavailable(String),
}

/// Checks a bearer token and says who it speaks for: a JWT checked against the issuer's keys
/// ([`JwtVerifier`](crate::mcp::JwtVerifier)), an introspection endpoint (RFC 7662), or any
/// check of your own.
///
/// `resource` is this server's resource URI; a verifier must refuse a token whose audience is
/// not it (a token for another service must never be accepted, or passed on).
///
/// ```
/// use dsh_tools::pipeline::BoxFuture;
/// use dsh_tools::mcp::{TokenRejection, TokenVerifier};
/// use dsh_tools::pipeline::Caller;
///
/// /// One fixed token, for a test.
/// struct Fixed(&'static str);
///
/// impl TokenVerifier for Fixed {
///     fn verify(&self, token: &str, _resource: &str) -> BoxFuture<Result<Caller, TokenRejection>> {
///         let ok = token == self.0;
///         Box::pin(async move {
///             if ok {
///                 Ok(Caller::new("tester").scopes(["tools:call"]))
///             } else {
///                 Err(TokenRejection::Invalid("unknown token".into()))
///             }
///         })
///     }
/// }
/// ```
pub trait TokenVerifier: Send + Sync + 'static {
    /// Checks `token` (the text after `Bearer `) for `resource`.
    fn verify(&self, token: &str, resource: &str) -> BoxFuture<Result<Caller, TokenRejection>>;
}

/// A resource URI that cannot be used.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("invalid resource URI {uri:?}: {why}")]
pub struct InvalidResource {
    uri: String,
    why: &'static str,
}

/// The authorization settings of an HTTP server: its resource URI (the audience every token
/// must name), who issues its tokens, and how a token is checked.
#[derive(Clone)]
pub struct Authorization {
    resource: String,
    /// `scheme://authority` of the resource.
    origin: String,
    /// The resource's path without a trailing `/` (empty for the root).
    path: String,
    authorization_servers: Vec<String>,
    scopes_supported: Vec<String>,
    required: Vec<String>,
    resource_name: Option<String>,
    verifier: Arc<dyn TokenVerifier>,
    /// The resource is the address the server binds (see
    /// [`at_bound_address`](Authorization::at_bound_address)), not known yet.
    awaiting_address: bool,
}

impl fmt::Debug for Authorization {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Authorization")
            .field("resource", &self.resource)
            .field("authorization_servers", &self.authorization_servers)
            .field("required", &self.required)
            .finish_non_exhaustive()
    }
}

/// A resource URI's `scheme://authority` and its path without a trailing `/`, or why it is not
/// one.
fn parse_resource(resource: &str) -> Result<(String, String), InvalidResource> {
    let bad = |why| InvalidResource {
        uri: resource.to_owned(),
        why,
    };
    let rest = resource
        .strip_prefix("https://")
        .or_else(|| resource.strip_prefix("http://"))
        .ok_or_else(|| bad("it must start with https:// (or http://)"))?;
    if resource.contains('#') || resource.contains('?') {
        return Err(bad("it must have no query and no fragment"));
    }
    if resource.chars().any(|c| c.is_whitespace() || c == '"') {
        return Err(bad("it must have no spaces or quotes"));
    }
    let (authority, path) = match rest.find('/') {
        Some(i) => rest.split_at(i),
        None => (rest, ""),
    };
    if authority.is_empty() {
        return Err(bad("it has no host"));
    }
    let scheme_len = resource.len() - rest.len();
    Ok((
        format!("{}{authority}", &resource[..scheme_len]),
        path.trim_end_matches('/').to_owned(),
    ))
}

impl Authorization {
    /// `resource` is this server's canonical URI as clients reach it (`https://host/mcp`; no
    /// fragment, no query), the audience a token must be issued for.
    pub fn new(
        resource: impl Into<String>,
        verifier: impl TokenVerifier,
    ) -> Result<Self, InvalidResource> {
        let resource = resource.into();
        let (origin, path) = parse_resource(&resource)?;
        Ok(Self {
            origin,
            path,
            resource,
            authorization_servers: Vec::new(),
            scopes_supported: Vec::new(),
            required: Vec::new(),
            resource_name: None,
            verifier: Arc::new(verifier),
            awaiting_address: false,
        })
    }

    /// Authorization for a server whose resource URI is the address it binds:
    /// `http://{bound address}/mcp`, set by [`McpServer::bind_http`](crate::mcp::McpServer::bind_http),
    /// so a server bound to port 0 (in a test, say) names the port it got. Tokens must be
    /// issued for that URI ([`HttpServer::url`](crate::mcp::HttpServer::url)); before binding,
    /// [`resource`](Self::resource) is empty. Only `bind_http` completes it: a server made with
    /// [`McpServer::http_service`](crate::mcp::McpServer::http_service) and this authorization
    /// refuses every request (use [`new`](Self::new) with the URI clients reach). Binding an
    /// unspecified address (`0.0.0.0`) fails: no client can name it.
    ///
    /// ```no_run
    /// use dsh_tools::mcp::{Authorization, HttpConfig, JwkSet, JwtVerifier, McpServer};
    /// # async fn run(server: McpServer, keys: JwkSet) -> std::io::Result<()> {
    /// let auth = Authorization::at_bound_address(JwtVerifier::new("https://auth.example", keys));
    /// let http = server.bind_http("127.0.0.1:0", HttpConfig::default().authorization(auth)).await?;
    /// println!("tokens for {}", http.url()); // http://127.0.0.1:<port>/mcp
    /// # Ok(()) }
    /// ```
    pub fn at_bound_address(verifier: impl TokenVerifier) -> Self {
        Self {
            origin: String::new(),
            path: String::new(),
            resource: String::new(),
            authorization_servers: Vec::new(),
            scopes_supported: Vec::new(),
            required: Vec::new(),
            resource_name: None,
            verifier: Arc::new(verifier),
            awaiting_address: true,
        }
    }

    /// Sets the resource of an [`at_bound_address`](Self::at_bound_address) authorization to
    /// the server's URL once it is bound at `addr` (anything else is left as it is). An
    /// unspecified address (`0.0.0.0`, `::`) names no host a client could get a token for.
    pub(crate) fn bind_address(
        &mut self,
        addr: std::net::SocketAddr,
        path: &str,
    ) -> Result<(), InvalidResource> {
        if !self.awaiting_address {
            return Ok(());
        }
        let url = format!("http://{addr}{path}");
        if addr.ip().is_unspecified() {
            return Err(InvalidResource {
                uri: url,
                why: "the server listens on every address (0.0.0.0 or ::), which names no host a \
                      client can get a token for: bind a specific address, or use \
                      Authorization::new with the URI clients reach",
            });
        }
        let (origin, path) = parse_resource(&url)?;
        self.origin = origin;
        self.path = path;
        self.resource = url;
        self.awaiting_address = false;
        Ok(())
    }

    /// An authorization server (its issuer URL) clients may get tokens from (listed in the
    /// metadata; at least one should be).
    pub fn authorization_server(mut self, issuer: impl Into<String>) -> Self {
        self.authorization_servers.push(issuer.into());
        self
    }

    /// The scopes this server knows (the metadata's `scopes_supported`).
    pub fn scopes_supported(mut self, scopes: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.scopes_supported
            .extend(scopes.into_iter().map(Into::into));
        self
    }

    /// Scopes every request needs (`403 insufficient_scope` without them). Scopes for single
    /// tools belong in [`ScopeRules`](crate::pipeline::ScopeRules).
    pub fn require_scopes(mut self, scopes: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.required.extend(scopes.into_iter().map(Into::into));
        self
    }

    /// A name for people (the metadata's `resource_name`).
    pub fn resource_name(mut self, name: impl Into<String>) -> Self {
        self.resource_name = Some(name.into());
        self
    }

    /// The resource URI.
    pub fn resource(&self) -> &str {
        &self.resource
    }

    /// Where the metadata is served, as a path (`/.well-known/oauth-protected-resource/mcp`
    /// for `https://host/mcp`).
    pub fn metadata_path(&self) -> String {
        format!("{PROTECTED_RESOURCE_PATH}{}", self.path)
    }

    /// The metadata's URL (what `WWW-Authenticate` points to).
    pub fn metadata_url(&self) -> String {
        format!("{}{}", self.origin, self.metadata_path())
    }

    /// The protected resource metadata document (RFC 9728 §2).
    pub fn metadata(&self) -> Value {
        let mut doc = json!({
            "resource": self.resource,
            "authorization_servers": self.authorization_servers,
            "bearer_methods_supported": ["header"],
        });
        let mut scopes = self.scopes_supported.clone();
        for scope in &self.required {
            if !scopes.contains(scope) {
                scopes.push(scope.clone());
            }
        }
        if !scopes.is_empty() {
            doc["scopes_supported"] = json!(scopes);
        }
        if let Some(name) = &self.resource_name {
            doc["resource_name"] = json!(name);
        }
        doc
    }

    /// The metadata as an HTTP answer (`application/json`, readable from any origin: browser
    /// clients fetch it before they have a token).
    pub fn metadata_response(&self) -> super::response::HttpResponse {
        let body = Full::new(Bytes::from(self.metadata().to_string()))
            .map_err(|never| match never {})
            .boxed();
        let mut response = hyper::Response::new(body);
        let headers = response.headers_mut();
        headers.insert(
            hyper::header::CONTENT_TYPE,
            hyper::header::HeaderValue::from_static("application/json"),
        );
        headers.insert(
            hyper::header::ACCESS_CONTROL_ALLOW_ORIGIN,
            hyper::header::HeaderValue::from_static("*"),
        );
        response
    }

    /// Whether `path` is where the metadata is served (the bare well-known path too).
    pub fn is_metadata_path(&self, path: &str) -> bool {
        path == PROTECTED_RESOURCE_PATH || path == self.metadata_path()
    }

    /// Checks a request's headers: the caller, or why not (which the HTTP layer renders).
    pub(crate) async fn authorize(&self, headers: &hyper::HeaderMap) -> Result<Caller, Refusal> {
        if self.awaiting_address {
            return Err(self.challenge(Some(&TokenRejection::Invalid(
                "this server has no resource URI (Authorization::at_bound_address is completed \
                 by McpServer::bind_http)"
                    .to_owned(),
            ))));
        }
        let mut values = headers.get_all(hyper::header::AUTHORIZATION).iter();
        let (Some(value), None) = (values.next(), values.next()) else {
            return Err(self.challenge(None));
        };
        let Some(token) = bearer(value.as_bytes()) else {
            return Err(self.challenge(None));
        };
        if token.len() > MAX_TOKEN_BYTES {
            return Err(self.challenge(Some(&TokenRejection::Invalid(format!(
                "the token is longer than {MAX_TOKEN_BYTES} bytes"
            )))));
        }
        let caller = match self.verifier.verify(token, &self.resource).await {
            Ok(caller) => caller,
            Err(TokenRejection::Unavailable(why)) => {
                tracing::warn!("MCP HTTP: a token could not be checked: {why}");
                return Err(Refusal::Unavailable);
            }
            Err(rejection) => return Err(self.challenge(Some(&rejection))),
        };
        let missing: Vec<String> = self
            .required
            .iter()
            .filter(|s| !caller.has_scope(s))
            .cloned()
            .collect();
        if !missing.is_empty() {
            return Err(self.challenge(Some(&TokenRejection::InsufficientScope(missing))));
        }
        Ok(caller)
    }

    /// `401` (no token, or an invalid one) or `403` (insufficient scope), with the
    /// `WWW-Authenticate` challenge of RFC 6750 §3 and RFC 9728 §5.1.
    fn challenge(&self, rejection: Option<&TokenRejection>) -> Refusal {
        let mut params = Vec::new();
        let (forbidden, message) = match rejection {
            None => (false, "this server needs a bearer token".to_owned()),
            Some(TokenRejection::InsufficientScope(scopes)) => {
                params.push("error=\"insufficient_scope\"".to_owned());
                params.push(format!("scope=\"{}\"", quoted(&scopes.join(" "))));
                let text = format!("the token lacks the scope(s) {}", scopes.join(" "));
                params.push(format!("error_description=\"{}\"", description(&text)));
                (true, text)
            }
            Some(rejection) => {
                let why = match rejection {
                    TokenRejection::Invalid(why) | TokenRejection::Unavailable(why) => why,
                    TokenRejection::InsufficientScope(_) => unreachable!("matched above"),
                };
                params.push("error=\"invalid_token\"".to_owned());
                params.push(format!("error_description=\"{}\"", description(why)));
                (false, format!("invalid token: {why}"))
            }
        };
        if rejection.is_none() && !self.required.is_empty() {
            params.push(format!("scope=\"{}\"", quoted(&self.required.join(" "))));
        }
        params.push(format!(
            "resource_metadata=\"{}\"",
            quoted(&self.metadata_url())
        ));
        Refusal::Challenge {
            forbidden,
            message,
            challenge: format!("Bearer {}", params.join(", ")),
        }
    }
}

/// Why [`Authorization::authorize`] let a request not through: what the HTTP layer answers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Refusal {
    /// `401` (`forbidden`: `403`) with `message` as the body and `challenge` as
    /// `WWW-Authenticate` (every part quoted as RFC 6750 §3 allows).
    Challenge {
        forbidden: bool,
        message: String,
        challenge: String,
    },
    /// `503`: the token could not be checked now (the keys could not be fetched).
    Unavailable,
}

/// The token of `Bearer <token>` (the scheme is case-insensitive; RFC 6750 §2.1's `b64token`).
fn bearer(value: &[u8]) -> Option<&str> {
    let value = std::str::from_utf8(value).ok()?;
    let (scheme, token) = value.split_once(' ')?;
    if !scheme.eq_ignore_ascii_case("bearer") {
        return None;
    }
    let token = token.trim_matches(' ');
    let body = token.trim_end_matches('=');
    let ok = !body.is_empty()
        && body
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-._~+/".contains(&b));
    ok.then_some(token)
}

/// `text` as the inside of a quoted-string: printable ASCII without `"` and `\`.
pub(super) fn quoted(text: &str) -> String {
    text.chars()
        .map(|c| match c {
            '"' => '\'',
            '\\' => '/',
            c if c.is_ascii_graphic() || c == ' ' => c,
            _ => '?',
        })
        .collect()
}

/// A description for the client: [`quoted`], at most 300 characters.
fn description(text: &str) -> String {
    quoted(text).chars().take(300).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bearer_tokens_are_read_as_rfc_6750_says() {
        assert_eq!(bearer(b"Bearer abc.def-_~+/=="), Some("abc.def-_~+/=="));
        assert_eq!(bearer(b"bearer abc"), Some("abc"));
        assert_eq!(bearer(b"Basic abc"), None);
        assert_eq!(bearer(b"Bearer "), None);
        assert_eq!(bearer(b"Bearer a b"), None);
        assert_eq!(bearer(b"Bearer a\"b"), None);
        assert_eq!(bearer(b"Bearer ==="), None);
    }

    #[test]
    fn metadata_lives_under_the_resource_path() {
        struct Never;
        impl TokenVerifier for Never {
            fn verify(&self, _: &str, _: &str) -> BoxFuture<Result<Caller, TokenRejection>> {
                Box::pin(async { Err(TokenRejection::Invalid("never".into())) })
            }
        }
        let auth = Authorization::new("https://mcp.example.com:8443/mcp/", Never).unwrap();
        assert_eq!(
            auth.metadata_url(),
            "https://mcp.example.com:8443/.well-known/oauth-protected-resource/mcp"
        );
        let root = Authorization::new("https://mcp.example.com", Never).unwrap();
        assert_eq!(
            root.metadata_url(),
            "https://mcp.example.com/.well-known/oauth-protected-resource"
        );
        for bad in [
            "mcp.example.com/mcp",
            "https:///mcp",
            "https://h/mcp#x",
            "https://h/mcp?a=1",
        ] {
            assert!(Authorization::new(bad, Never).is_err(), "{bad}");
        }
        assert_eq!(quoted("a\"b\\c\nd"), "a'b/c?d");
    }
}

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
use jsonwebtoken::jwk::{Jwk, JwkSet, PublicKeyUse};
use jsonwebtoken::{Algorithm, DecodingKey, Validation};
use serde_json::{Map, Value, json};
use std::fmt;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The well-known path of protected resource metadata (RFC 9728 §3).
pub const PROTECTED_RESOURCE_PATH: &str = "/.well-known/oauth-protected-resource";

/// The longest token read (a real access token is a few KiB).
const MAX_TOKEN_BYTES: usize = 16 * 1024;

/// Why a token was not accepted.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TokenRejection {
    /// Not valid for this server (`401 invalid_token`): the text says why, and is sent to the
    /// client in `error_description`.
    Invalid(String),
    /// Valid, but lacking scopes (`403 insufficient_scope`).
    InsufficientScope(Vec<String>),
    /// It could not be checked now (`503`): the keys or the introspection endpoint are out of
    /// reach. The text is logged, not sent.
    Unavailable(String),
}

impl fmt::Display for TokenRejection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Invalid(why) => write!(f, "invalid token: {why}"),
            Self::InsufficientScope(scopes) => {
                write!(f, "insufficient scope: needs {}", scopes.join(" "))
            }
            Self::Unavailable(why) => write!(f, "token not checked: {why}"),
        }
    }
}

impl std::error::Error for TokenRejection {}

/// Checks a bearer token and says who it speaks for: a JWT checked against the issuer's keys
/// ([`JwtVerifier`]), an introspection endpoint (RFC 7662), or any check of your own.
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

impl Authorization {
    /// `resource` is this server's canonical URI as clients reach it (`https://host/mcp`; no
    /// fragment, no query), the audience a token must be issued for.
    pub fn new(
        resource: impl Into<String>,
        verifier: impl TokenVerifier,
    ) -> Result<Self, InvalidResource> {
        let resource = resource.into();
        let bad = |why| InvalidResource {
            uri: resource.clone(),
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
        Ok(Self {
            origin: format!("{}{authority}", &resource[..scheme_len]),
            path: path.trim_end_matches('/').to_owned(),
            resource,
            authorization_servers: Vec::new(),
            scopes_supported: Vec::new(),
            required: Vec::new(),
            resource_name: None,
            verifier: Arc::new(verifier),
        })
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

    /// Checks a request's headers: the caller, or the answer to send instead.
    pub(crate) async fn authorize(
        &self,
        headers: &hyper::HeaderMap,
    ) -> Result<Caller, super::response::HttpResponse> {
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
                return Err(super::response::plain(
                    hyper::StatusCode::SERVICE_UNAVAILABLE,
                    "the token could not be checked now; try again later",
                ));
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
    fn challenge(&self, rejection: Option<&TokenRejection>) -> super::response::HttpResponse {
        let mut params = Vec::new();
        let (status, body) = match rejection {
            None => (
                hyper::StatusCode::UNAUTHORIZED,
                "this server needs a bearer token".to_owned(),
            ),
            Some(TokenRejection::InsufficientScope(scopes)) => {
                params.push("error=\"insufficient_scope\"".to_owned());
                params.push(format!("scope=\"{}\"", quoted(&scopes.join(" "))));
                let text = format!("the token lacks the scope(s) {}", scopes.join(" "));
                params.push(format!("error_description=\"{}\"", description(&text)));
                (hyper::StatusCode::FORBIDDEN, text)
            }
            Some(rejection) => {
                let why = match rejection {
                    TokenRejection::Invalid(why) | TokenRejection::Unavailable(why) => why,
                    TokenRejection::InsufficientScope(_) => unreachable!("matched above"),
                };
                params.push("error=\"invalid_token\"".to_owned());
                params.push(format!("error_description=\"{}\"", description(why)));
                (
                    hyper::StatusCode::UNAUTHORIZED,
                    format!("invalid token: {why}"),
                )
            }
        };
        if rejection.is_none() && !self.required.is_empty() {
            params.push(format!("scope=\"{}\"", quoted(&self.required.join(" "))));
        }
        params.push(format!(
            "resource_metadata=\"{}\"",
            quoted(&self.metadata_url())
        ));
        let mut response = super::response::plain(status, body);
        if let Ok(value) =
            hyper::header::HeaderValue::from_str(&format!("Bearer {}", params.join(", ")))
        {
            response
                .headers_mut()
                .insert(hyper::header::WWW_AUTHENTICATE, value);
        }
        response
    }
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
fn quoted(text: &str) -> String {
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

/// Checks JWT access tokens (RFC 9068) against the issuer's published keys: the signature (an
/// asymmetric algorithm the key allows: RS*, PS*, ES256, ES384, EdDSA; never `none` or a shared
/// secret), `iss` equal to the issuer, `aud` naming this server's resource URI, `exp` (and
/// `nbf` when present) with 60 s of leeway, and the header's `typ`: absent, `JWT` or `at+jwt`
/// (another type, such as an ID token's, is refused; [`require_access_token_type`] accepts
/// `at+jwt` only). The caller's subject is `sub` (or `client_id` for a client's own token), its
/// issuer `iss`, its client `client_id` (or `azp`): each must be a non-empty string when
/// present (an `iss` array, an empty or numeric `sub` are refused: they name the owner of the
/// caller's sessions). Its scopes are `scope` (space-separated) or `scp`.
///
/// [`require_access_token_type`]: JwtVerifier::require_access_token_type
///
/// Keys come from a JWKS: given ([`JwtVerifier::new`]) or fetched from the issuer's `jwks_uri`
/// ([`JwtVerifier::fetch`]), cached for an hour, and fetched again (at most once a minute) when
/// a token names a key the cache does not hold, so that key rotation needs no restart.
#[derive(Clone)]
pub struct JwtVerifier {
    issuer: String,
    keys: Arc<Keys>,
    leeway: u64,
    /// Whether `typ` must say `at+jwt` (RFC 9068 §2.1), not merely not name another type.
    access_token_type: bool,
}

impl fmt::Debug for JwtVerifier {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("JwtVerifier")
            .field("issuer", &self.issuer)
            .finish_non_exhaustive()
    }
}

/// Where the keys come from.
enum Keys {
    Fixed(JwkSet),
    Fetched(Fetched),
}

struct Fetched {
    url: String,
    client: reqwest::Client,
    max_age: Duration,
    min_interval: Duration,
    /// The keys, when they were fetched, and when a fetch was last tried (successful or not).
    /// Read without waiting: a token whose key is cached never waits for a fetch.
    cache: std::sync::Mutex<Cache>,
    /// Held by the one fetch in flight (others wait for it instead of fetching too).
    fetching: tokio::sync::Mutex<()>,
}

#[derive(Default)]
struct Cache {
    keys: Option<(Instant, Arc<JwkSet>)>,
    tried: Option<Instant>,
}

/// The largest JWKS document read.
const MAX_JWKS_BYTES: usize = 1024 * 1024;

impl JwtVerifier {
    /// Tokens of `issuer`, signed by one of `keys`.
    pub fn new(issuer: impl Into<String>, keys: JwkSet) -> Self {
        Self::build(issuer.into(), Keys::Fixed(keys))
    }

    /// Tokens of `issuer`, signed by a key of the JWKS at `jwks_uri` (fetched when first needed).
    pub fn fetch(issuer: impl Into<String>, jwks_uri: impl Into<String>) -> Self {
        let client = reqwest::Client::builder()
            .timeout(Duration::from_secs(10))
            .build()
            .unwrap_or_default();
        Self::build(
            issuer.into(),
            Keys::Fetched(Fetched {
                url: jwks_uri.into(),
                client,
                max_age: Duration::from_secs(3600),
                min_interval: Duration::from_secs(60),
                cache: std::sync::Mutex::default(),
                fetching: tokio::sync::Mutex::new(()),
            }),
        )
    }

    fn build(issuer: String, keys: Keys) -> Self {
        // With exactly one backend feature the crate picks it; if something else in the build
        // also enabled its other backend, pick ours rather than panic on the first token.
        if jsonwebtoken::crypto::CryptoProvider::try_get_default().is_none() {
            let _ = jsonwebtoken::crypto::aws_lc::DEFAULT_PROVIDER.install_default();
        }
        Self {
            issuer,
            keys: Arc::new(keys),
            leeway: 60,
            access_token_type: false,
        }
    }

    /// Seconds of clock skew allowed on `exp` and `nbf` (default 60).
    pub fn leeway(mut self, seconds: u64) -> Self {
        self.leeway = seconds;
        self
    }

    /// Accepts only tokens whose header says they are access tokens: `typ` `at+jwt` (or
    /// `application/at+jwt`, in any case), as RFC 9068 §4 tells a resource server to check.
    /// Off by default, because many issuers still type their access tokens `JWT` or not at
    /// all; either way a token whose `typ` names another kind of token (an ID token, a logout
    /// or DPoP token: anything but `JWT` or `at+jwt`) is refused, so that a token the issuer
    /// signed for another purpose cannot pass for an access token (RFC 8725 §3.11). Turn it on
    /// when the issuer types its access tokens.
    pub fn require_access_token_type(mut self, require: bool) -> Self {
        self.access_token_type = require;
        self
    }

    /// How long fetched keys are used before they are fetched again (default an hour), and the
    /// least time between two fetches for an unknown key id (default a minute).
    pub fn refresh(mut self, max_age: Duration, min_interval: Duration) -> Self {
        if let Some(Keys::Fetched(fetched)) = Arc::get_mut(&mut self.keys) {
            fetched.max_age = max_age;
            fetched.min_interval = min_interval;
        }
        self
    }

    /// Checks one token.
    pub async fn check(&self, token: &str, resource: &str) -> Result<Caller, TokenRejection> {
        let invalid = |why: &str| TokenRejection::Invalid(why.to_owned());
        let header = jsonwebtoken::decode_header(token)
            .map_err(|e| invalid(&format!("it is not a JWT ({e})")))?;
        check_type(header.typ.as_deref(), self.access_token_type)?;
        let alg = header.alg;
        if !ALGORITHMS.contains(&alg) {
            return Err(invalid(&format!(
                "its algorithm {alg:?} is not accepted (asymmetric signatures only)"
            )));
        }
        let jwk = self.key(header.kid.as_deref()).await?;
        if let Some(use_) = &jwk.common.public_key_use
            && *use_ != PublicKeyUse::Signature
        {
            return Err(invalid("its key is not a signing key"));
        }
        if let Some(key_alg) = jwk.common.key_algorithm
            && key_alg.to_string() != format!("{alg:?}")
        {
            return Err(invalid(&format!(
                "its algorithm {alg:?} is not its key's ({key_alg})"
            )));
        }
        let key = DecodingKey::from_jwk(&jwk)
            .map_err(|e| invalid(&format!("its key is unusable: {e}")))?;
        if key.family() != alg.family() {
            return Err(invalid(&format!(
                "its algorithm {alg:?} does not fit its key"
            )));
        }
        let mut validation = Validation::new(alg);
        validation.leeway = self.leeway;
        validation.validate_nbf = true;
        validation.set_issuer(&[&self.issuer]);
        validation.set_audience(&[resource]);
        validation.set_required_spec_claims(&["exp", "iss", "aud"]);
        let data = jsonwebtoken::decode::<Map<String, Value>>(token, &key, &validation)
            .map_err(|e| TokenRejection::Invalid(describe(&e, &self.issuer, resource)))?;
        caller_of(data.claims)
    }

    /// The key a token names (`kid`), or the only key when it names none.
    async fn key(&self, kid: Option<&str>) -> Result<Jwk, TokenRejection> {
        let pick = |set: &JwkSet| -> Option<Jwk> {
            match kid {
                Some(kid) => set.find(kid).cloned(),
                None if set.keys.len() == 1 => set.keys.first().cloned(),
                None => None,
            }
        };
        let unknown = || {
            TokenRejection::Invalid(match kid {
                Some(kid) => format!(
                    "its key id {:?} is not one of the issuer's keys",
                    quoted(kid)
                ),
                None => "it names no key id, and the issuer has more than one key".to_owned(),
            })
        };
        let fetched = match &*self.keys {
            Keys::Fixed(set) => return pick(set).ok_or_else(unknown),
            Keys::Fetched(fetched) => fetched,
        };
        let (keys, may_fetch) = fetched.snapshot();
        if let Some((at, set)) = &keys
            && let Some(jwk) = pick(set)
        {
            // Known key: answered now. Past `max_age` the keys are refreshed in the background
            // (one fetch at a time, at most once per `min_interval`), never on the request.
            if at.elapsed() >= fetched.max_age && may_fetch {
                let this = self.clone();
                tokio::spawn(async move {
                    if let Keys::Fetched(fetched) = &*this.keys {
                        let _ = fetched.refresh().await;
                    }
                });
            }
            return Ok(jwk);
        }
        // No keys yet, or a key id the cache lacks (the issuer may have rotated): fetch, but
        // at most once per `min_interval` whatever the outcome, so random key ids cannot make
        // the server fetch on every request.
        if !may_fetch {
            return match keys {
                Some(_) => Err(unknown()),
                None => Err(TokenRejection::Unavailable(format!(
                    "the JWKS at {} could not be fetched; the next try is at most {} s away",
                    fetched.url,
                    fetched.min_interval.as_secs()
                ))),
            };
        }
        match fetched.refresh().await {
            Ok(set) => pick(&set).ok_or_else(unknown),
            Err(why) => Err(TokenRejection::Unavailable(why)),
        }
    }
}

impl Fetched {
    /// The cached keys, and whether a fetch may be tried now.
    fn snapshot(&self) -> (Option<(Instant, Arc<JwkSet>)>, bool) {
        let cache = self.cache.lock().unwrap_or_else(|e| e.into_inner());
        let may = cache
            .tried
            .is_none_or(|at| at.elapsed() >= self.min_interval);
        (cache.keys.clone(), may)
    }

    /// Fetches the keys (one fetch at a time: a caller that waited for another's fetch uses
    /// its outcome) and caches them.
    async fn refresh(&self) -> Result<Arc<JwkSet>, String> {
        let _one = self.fetching.lock().await;
        {
            let cache = self.cache.lock().unwrap_or_else(|e| e.into_inner());
            if let Some(at) = cache.tried
                && at.elapsed() < self.min_interval
            {
                // Someone fetched while this call waited.
                return cache
                    .keys
                    .as_ref()
                    .filter(|(fetched, _)| *fetched >= at)
                    .map(|(_, set)| Arc::clone(set))
                    .ok_or_else(|| format!("the JWKS at {} could not be fetched", self.url));
            }
        }
        self.cache.lock().unwrap_or_else(|e| e.into_inner()).tried = Some(Instant::now());
        let fetched = self.get().await;
        let mut cache = self.cache.lock().unwrap_or_else(|e| e.into_inner());
        match fetched {
            Ok(set) => {
                let set = Arc::new(set);
                cache.keys = Some((Instant::now(), Arc::clone(&set)));
                Ok(set)
            }
            Err(why) => {
                tracing::warn!("MCP auth: {why}");
                Err(why)
            }
        }
    }

    async fn get(&self) -> Result<JwkSet, String> {
        let fail = |e: &dyn fmt::Display| format!("fetching the JWKS at {}: {e}", self.url);
        let mut response = self
            .client
            .get(&self.url)
            .send()
            .await
            .map_err(|e| fail(&e))?;
        if !response.status().is_success() {
            return Err(fail(&response.status()));
        }
        let mut body = Vec::new();
        while let Some(chunk) = response.chunk().await.map_err(|e| fail(&e))? {
            if body.len() + chunk.len() > MAX_JWKS_BYTES {
                return Err(fail(&format!("larger than {MAX_JWKS_BYTES} bytes")));
            }
            body.extend_from_slice(&chunk);
        }
        // Keys of types this crate cannot use (or garbage entries) are skipped, not fatal.
        let doc: Value = serde_json::from_slice(&body).map_err(|e| fail(&e))?;
        let keys = doc
            .get("keys")
            .and_then(Value::as_array)
            .ok_or_else(|| fail(&"no \"keys\" array"))?;
        let keys = keys
            .iter()
            .filter_map(|k| serde_json::from_value::<Jwk>(k.clone()).ok())
            .collect();
        Ok(JwkSet { keys })
    }
}

impl TokenVerifier for JwtVerifier {
    fn verify(&self, token: &str, resource: &str) -> BoxFuture<Result<Caller, TokenRejection>> {
        let this = self.clone();
        let token = token.to_owned();
        let resource = resource.to_owned();
        Box::pin(async move { this.check(&token, &resource).await })
    }
}

/// The algorithms a token may be signed with.
const ALGORITHMS: &[Algorithm] = &[
    Algorithm::RS256,
    Algorithm::RS384,
    Algorithm::RS512,
    Algorithm::PS256,
    Algorithm::PS384,
    Algorithm::PS512,
    Algorithm::ES256,
    Algorithm::ES384,
    Algorithm::EdDSA,
];

/// A validation failure in words (sent to the client: nothing secret).
fn describe(error: &jsonwebtoken::errors::Error, issuer: &str, resource: &str) -> String {
    use jsonwebtoken::errors::ErrorKind;
    match error.kind() {
        ErrorKind::ExpiredSignature => "it has expired".to_owned(),
        ErrorKind::ImmatureSignature => "it is not valid yet (nbf)".to_owned(),
        ErrorKind::InvalidAudience => format!("it was not issued for {resource} (aud)"),
        ErrorKind::InvalidIssuer => format!("it was not issued by {issuer} (iss)"),
        ErrorKind::InvalidSignature => "its signature does not verify".to_owned(),
        ErrorKind::MissingRequiredClaim(claim) => format!("it has no {claim} claim"),
        ErrorKind::InvalidAlgorithm => "its algorithm does not fit its key".to_owned(),
        _ => format!("it is malformed ({error})"),
    }
}

/// Refuses a token whose `typ` header says it is not an access token (RFC 8725 §3.11): absent
/// and `JWT` pass unless `access_only` (RFC 9068 §4), `at+jwt` always. Media types compare in
/// any case, and `application/` may be left out (RFC 7515 §4.1.9).
fn check_type(typ: Option<&str>, access_only: bool) -> Result<(), TokenRejection> {
    let kind = typ.map(|typ| match typ.get(..12) {
        Some(prefix) if prefix.eq_ignore_ascii_case("application/") => &typ[12..],
        _ => typ,
    });
    let access = kind.is_some_and(|kind| kind.eq_ignore_ascii_case("at+jwt"));
    // `JOSE` is RFC 7515's generic compact-serialization type: it names no other token kind.
    let plain = kind
        .is_none_or(|kind| kind.eq_ignore_ascii_case("jwt") || kind.eq_ignore_ascii_case("jose"));
    if access || (plain && !access_only) {
        return Ok(());
    }
    Err(TokenRejection::Invalid(match typ {
        Some(typ) if !plain => format!(
            "it is not an access token: its type is {:?} (typ)",
            quoted(typ)
        ),
        _ => "it is not typed as an access token (typ at+jwt)".to_owned(),
    }))
}

/// Claim `name` (`what` in words): `None` when absent, refused when it is not a non-empty
/// string.
fn text_claim<'a>(
    claims: &'a Map<String, Value>,
    name: &str,
    what: &str,
) -> Result<Option<&'a str>, TokenRejection> {
    match claims.get(name) {
        None => Ok(None),
        Some(Value::String(text)) if !text.is_empty() => Ok(Some(text)),
        Some(Value::String(_)) => Err(TokenRejection::Invalid(format!(
            "its {what} ({name}) is empty"
        ))),
        Some(_) => Err(TokenRejection::Invalid(format!(
            "its {what} ({name}) is not a string"
        ))),
    }
}

/// The caller a verified token's claims name. The subject, issuer and client become the owner
/// of the caller's sessions, so each must be a non-empty string when present: an `iss` array
/// (which jsonwebtoken's issuer check lets through when any member is the issuer), or a `sub`
/// that is a number, would otherwise leave the caller without an issuer, or with the client's
/// id for a subject.
fn caller_of(claims: Map<String, Value>) -> Result<Caller, TokenRejection> {
    let issuer = text_claim(&claims, "iss", "issuer")?.map(str::to_owned);
    let subject = text_claim(&claims, "sub", "subject")?.map(str::to_owned);
    let client = match text_claim(&claims, "client_id", "client")? {
        Some(client) => Some(client),
        None => text_claim(&claims, "azp", "authorized party")?,
    }
    .map(str::to_owned);
    let Some(subject) = subject.or_else(|| client.clone()) else {
        return Err(TokenRejection::Invalid(
            "it names no subject (sub) or client (client_id)".to_owned(),
        ));
    };
    let scopes: Vec<String> = match claims.get("scope").or_else(|| claims.get("scp")) {
        Some(Value::String(s)) => s
            .split(' ')
            .filter(|s| !s.is_empty())
            .map(str::to_owned)
            .collect(),
        Some(Value::Array(items)) => items
            .iter()
            .filter_map(Value::as_str)
            .map(str::to_owned)
            .collect(),
        _ => Vec::new(),
    };
    let mut caller = Caller::new(subject).scopes(scopes);
    if let Some(issuer) = issuer {
        caller = caller.issuer(issuer);
    }
    if let Some(client) = client {
        caller = caller.client_id(client);
    }
    Ok(caller.claims(claims))
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

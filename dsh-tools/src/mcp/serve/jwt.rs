//! The JWT access-token verifier (RFC 9068) of the HTTP transport's authorization: signature,
//! issuer, audience, lifetime and token type checked against the issuer's published keys, the
//! keys fetched and cached. [`Authorization`](super::auth::Authorization) asks it through the
//! [`TokenVerifier`] trait; any other verifier (introspection, a gateway's) can take its place.

use super::auth::{TokenRejection, TokenVerifier, quoted};
use crate::call::{BoxFuture, Caller};
use jsonwebtoken::jwk::{Jwk, JwkSet, PublicKeyUse};
use jsonwebtoken::{Algorithm, DecodingKey, Validation};
use serde_json::{Map, Value};
use std::fmt;
use std::sync::Arc;
use std::time::{Duration, Instant};

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

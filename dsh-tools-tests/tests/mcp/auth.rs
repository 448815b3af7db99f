//! Authorization of the HTTP server (MCP's resource-server side): real signed tokens (RS256,
//! ES256, EdDSA) against real sockets.
//!
//! The keys under `tests/data/auth/` were made for these tests with `openssl genpkey` and
//! protect nothing.

use crate::support;

use dsh_tools::mcp::rmcp::model::CallToolRequestParams;
use dsh_tools::mcp::{
    Authorization, Connector, HttpConfig, JwtVerifier, McpServer, TokenRejection,
};
use dsh_tools::pipeline::ScopeRules;
use dsh_tools::{OutputDecl, Registry, ToolDefinition, ToolRunContext};
use jsonwebtoken::jwk::{Jwk, JwkSet};
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use serde_json::{Value, json};
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

const ISSUER: &str = "https://auth.test";
const RSA: &[u8] = include_bytes!("../data/auth/rsa.pem");
const RSA_OTHER: &[u8] = include_bytes!("../data/auth/rsa-other.pem");
const EC: &[u8] = include_bytes!("../data/auth/ec.pem");
const ED: &[u8] = include_bytes!("../data/auth/ed25519.pem");

/// A signing key and its id.
struct Key {
    kid: &'static str,
    alg: Algorithm,
    key: EncodingKey,
}

fn key(kid: &'static str, alg: Algorithm, pem: &[u8]) -> Key {
    let key = match alg {
        Algorithm::ES256 => EncodingKey::from_ec_pem(pem),
        Algorithm::EdDSA => EncodingKey::from_ed_pem(pem),
        _ => EncodingKey::from_rsa_pem(pem),
    }
    .unwrap();
    Key { kid, alg, key }
}

fn rsa() -> Key {
    key("rsa-1", Algorithm::RS256, RSA)
}

/// The public half, as a JWKS entry.
fn jwk(key: &Key) -> Jwk {
    let mut jwk = Jwk::from_encoding_key(&key.key, key.alg).unwrap();
    jwk.common.key_id = Some(key.kid.to_owned());
    jwk
}

fn jwks(keys: &[&Key]) -> JwkSet {
    JwkSet {
        keys: keys.iter().map(|k| jwk(k)).collect(),
    }
}

fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

/// Claims of a token for `audience` that is valid for the next hour.
fn claims(audience: &str, subject: &str, scope: &str) -> Value {
    json!({"iss": ISSUER, "aud": audience, "sub": subject, "scope": scope,
           "iat": now(), "exp": now() + 3600, "client_id": "test-client"})
}

fn sign(key: &Key, claims: &Value) -> String {
    let mut header = Header::new(key.alg);
    header.kid = Some(key.kid.to_owned());
    jsonwebtoken::encode(&header, claims, &key.key).unwrap()
}

/// A registry with `whoami` (answers with its caller) and `write_note` (needs `notes:write`).
fn registry() -> Registry {
    let registry = Registry::new();
    let whoami = ToolDefinition::new(
        "whoami",
        "Who is calling.",
        json!({"type": "object"}),
        OutputDecl::json(json!({})),
        |_, ctx: ToolRunContext| async move {
            let caller = ctx.execution().caller().cloned();
            Ok(match caller {
                Some(c) => json!({
                    "subject": c.subject(),
                    "scopes": c.granted().collect::<Vec<_>>(),
                    "client": c.client(),
                    "issuer": c.issuer_name(),
                }),
                None => json!(null),
            })
        },
    );
    registry.register(whoami).unwrap().keep();
    let write = ToolDefinition::new(
        "write_note",
        "Write a note.",
        json!({"type": "object"}),
        OutputDecl::text(),
        |_, _| async { Ok(json!("written")) },
    );
    registry.register(write).unwrap().keep();
    registry
        .guard(
            ScopeRules::new()
                .tool("write_note", ["notes:write"])
                .guard(),
        )
        .keep();
    registry
}

/// Serves `registry()` on a free loopback port, with `auth(url)` built once the port is known.
async fn serve(
    auth: impl FnOnce(&str) -> Authorization,
) -> (SocketAddr, String, tokio_util::sync::CancellationToken) {
    serve_registry(registry(), auth).await
}

/// [`serve`] for another registry.
async fn serve_registry(
    registry: Registry,
    auth: impl FnOnce(&str) -> Authorization,
) -> (SocketAddr, String, tokio_util::sync::CancellationToken) {
    // The resource URI names the port, so bind first on a port we pick.
    let probe = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = probe.local_addr().unwrap();
    drop(probe);
    let url = format!("http://{addr}/mcp");
    let server = McpServer::new(registry)
        .bind_http(addr, HttpConfig::default().authorization(auth(&url)))
        .await
        .unwrap();
    let stop = server.shutdown_token();
    tokio::spawn(server.run());
    (addr, url, stop)
}

fn fixed(url: &str, keys: JwkSet) -> Authorization {
    Authorization::new(url, JwtVerifier::new(ISSUER, keys))
        .unwrap()
        .authorization_server(ISSUER)
        .scopes_supported(["notes:read", "notes:write"])
}

/// One request on a connection of its own: status, head, body.
fn exchange(addr: SocketAddr, request: &str) -> (u16, String, String) {
    support::exchange(addr, request)
}

/// POSTs `initialize` with these extra header lines.
fn initialize(addr: SocketAddr, extra: &str) -> (u16, String, String) {
    post(
        addr,
        extra,
        &json!({"jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                   "clientInfo": {"name": "raw", "version": "1"}}}),
    )
}

fn post(addr: SocketAddr, extra: &str, message: &Value) -> (u16, String, String) {
    let body = message.to_string();
    let extra = if extra.is_empty() {
        String::new()
    } else {
        format!("{extra}\r\n")
    };
    let request = format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2025-11-25\r\n\
         Connection: close\r\n{extra}Content-Length: {}\r\n\r\n{body}",
        body.len()
    );
    exchange(addr, &request)
}

/// The `WWW-Authenticate` value of an answer's head.
fn challenge(head: &str) -> String {
    head.lines()
        .find_map(|l| {
            let (name, value) = l.split_once(':')?;
            name.eq_ignore_ascii_case("www-authenticate")
                .then(|| value.trim().to_owned())
        })
        .unwrap_or_default()
}

fn header(head: &str, name: &str) -> Option<String> {
    head.lines().find_map(|l| {
        let (n, value) = l.split_once(':')?;
        n.eq_ignore_ascii_case(name)
            .then(|| value.trim().to_owned())
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn metadata_is_served_at_both_well_known_paths() {
    let signing = rsa();
    let (addr, url, stop) =
        serve(|url| fixed(url, jwks(&[&signing])).require_scopes(["mcp"])).await;
    for path in [
        "/.well-known/oauth-protected-resource/mcp",
        "/.well-known/oauth-protected-resource",
    ] {
        let (status, head, body) = tokio::task::spawn_blocking(move || {
            exchange(
                addr,
                &format!("GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n"),
            )
        })
        .await
        .unwrap();
        assert_eq!(status, 200, "{path}: {head}");
        assert_eq!(
            header(&head, "content-type").as_deref(),
            Some("application/json")
        );
        let doc: Value = serde_json::from_str(&body).unwrap();
        assert_eq!(
            doc,
            json!({"resource": url, "authorization_servers": [ISSUER],
                   "bearer_methods_supported": ["header"],
                   "scopes_supported": ["notes:read", "notes:write", "mcp"]})
        );
    }
    stop.cancel();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_without_a_bearer_token_is_401_pointing_to_the_metadata() {
    let signing = rsa();
    let (addr, _, stop) = serve(|url| fixed(url, jwks(&[&signing])).require_scopes(["mcp"])).await;
    let answers = tokio::task::spawn_blocking(move || {
        [
            "",
            "Authorization: Basic dXNlcjpwYXNz",
            "Authorization: Bearer ",
        ]
        .map(|extra| initialize(addr, extra))
    })
    .await
    .unwrap();
    let expected = format!(
        "Bearer scope=\"mcp\", resource_metadata=\"http://{addr}/.well-known/oauth-protected-resource/mcp\""
    );
    for (status, head, _) in answers {
        assert_eq!(status, 401, "{head}");
        assert_eq!(challenge(&head), expected);
    }
    stop.cancel();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_tokens_are_401_invalid_token_with_the_reason() {
    let signing = rsa();
    let other = key("rsa-1", Algorithm::RS256, RSA_OTHER);
    let unknown = key("rsa-9", Algorithm::RS256, RSA_OTHER);
    let (addr, url, stop) = serve(|url| fixed(url, jwks(&[&signing]))).await;
    let good = claims(&url, "alice", "notes:read");
    let mut expired = good.clone();
    expired["exp"] = json!(now() - 3600);
    let mut early = good.clone();
    early["nbf"] = json!(now() + 3600);
    let mut no_exp = good.clone();
    no_exp.as_object_mut().unwrap().remove("exp");
    let mut no_subject = good.clone();
    no_subject.as_object_mut().unwrap().remove("sub");
    no_subject.as_object_mut().unwrap().remove("client_id");
    let valid = sign(&signing, &good);
    // The signature of one token on the claims of another.
    let tampered = {
        let forged = sign(&signing, &claims(&url, "mallory", "notes:write"));
        let parts: Vec<&str> = valid.split('.').collect();
        let forged_parts: Vec<&str> = forged.split('.').collect();
        format!("{}.{}.{}", parts[0], forged_parts[1], parts[2])
    };
    let hs256 = jsonwebtoken::encode(
        &Header::new(Algorithm::HS256),
        &good,
        &EncodingKey::from_secret(b"the public key as a secret").unwrap(),
    )
    .unwrap();
    let wrong_issuer = {
        let mut c = good.clone();
        c["iss"] = json!("https://evil.test");
        c
    };
    let cases: Vec<(String, String)> = vec![
        (sign(&signing, &expired), "it has expired".into()),
        (sign(&signing, &early), "it is not valid yet".into()),
        (
            sign(&signing, &claims("https://other.example/mcp", "alice", "")),
            format!("it was not issued for {url} (aud)"),
        ),
        (
            sign(&signing, &wrong_issuer),
            "it was not issued by https://auth.test (iss)".into(),
        ),
        (tampered, "its signature does not verify".into()),
        (sign(&other, &good), "its signature does not verify".into()),
        (
            sign(&unknown, &good),
            "its key id 'rsa-9' is not one of the issuer's keys".into(),
        ),
        (hs256, "its algorithm HS256 is not accepted".into()),
        (sign(&signing, &no_exp), "it has no exp claim".into()),
        (sign(&signing, &no_subject), "it names no subject".into()),
        ("not-a-jwt".to_owned(), "it is not a JWT".into()),
    ];
    for (token, reason) in cases {
        let (status, head, _) = tokio::task::spawn_blocking(move || {
            initialize(addr, &format!("Authorization: Bearer {token}"))
        })
        .await
        .unwrap();
        assert_eq!(status, 401, "{reason}: {head}");
        let challenge = challenge(&head);
        assert!(
            challenge.starts_with("Bearer error=\"invalid_token\", error_description=\"")
                && challenge.contains(&*reason)
                && challenge.contains("resource_metadata=\""),
            "{reason}: {challenge}"
        );
    }
    // The same server takes the good token.
    let (status, head, _) = tokio::task::spawn_blocking(move || {
        initialize(addr, &format!("Authorization: Bearer {valid}"))
    })
    .await
    .unwrap();
    assert_eq!(status, 200, "{head}");
    stop.cancel();
}

/// `initialize` with `token` is `401 invalid_token` naming `reason`.
async fn assert_refused(addr: SocketAddr, token: String, reason: &str) {
    let (status, head, _) = tokio::task::spawn_blocking(move || {
        initialize(addr, &format!("Authorization: Bearer {token}"))
    })
    .await
    .unwrap();
    assert_eq!(status, 401, "{reason}: {head}");
    let challenge = challenge(&head);
    assert!(
        challenge.starts_with("Bearer error=\"invalid_token\", error_description=\"")
            && challenge.contains(reason),
        "{reason}: {challenge}"
    );
}

/// `initialize` with `token` is served.
async fn assert_served(addr: SocketAddr, token: String, what: &str) {
    let (status, head, _) = tokio::task::spawn_blocking(move || {
        initialize(addr, &format!("Authorization: Bearer {token}"))
    })
    .await
    .unwrap();
    assert_eq!(status, 200, "{what}: {head}");
}

/// `iss`, `sub` and `client_id` name the caller (and the owner of its sessions): each must be
/// a non-empty string when present. An `iss` array that includes the issuer (accepted once,
/// the caller then had no issuer), a `sub` that is a number (once the subject became the
/// client's id instead), an empty `sub` or client are refused.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn identity_claims_must_be_non_empty_strings() {
    let signing = rsa();
    let (addr, url, stop) = serve(|url| fixed(url, jwks(&[&signing]))).await;
    let good = claims(&url, "alice", "notes:read");
    let with = |name: &str, value: Value| {
        let mut c = good.clone();
        c[name] = value;
        c
    };
    let without_sub = |client: Value| {
        let mut c = with("client_id", client);
        c.as_object_mut().unwrap().remove("sub");
        c
    };
    let cases = [
        (
            with("iss", json!([ISSUER])),
            "its issuer (iss) is not a string",
        ),
        // The issuer check passes an array that merely includes the issuer.
        (
            with("iss", json!(["https://evil.test", ISSUER])),
            "its issuer (iss) is not a string",
        ),
        // (Refused by the issuer check already.)
        (with("iss", json!([])), "(iss)"),
        (with("sub", json!("")), "its subject (sub) is empty"),
        (with("sub", json!(42)), "its subject (sub) is not a string"),
        (
            with("sub", json!(null)),
            "its subject (sub) is not a string",
        ),
        (
            with("client_id", json!("")),
            "its client (client_id) is empty",
        ),
        (without_sub(json!("")), "its client (client_id) is empty"),
        (
            without_sub(json!(7)),
            "its client (client_id) is not a string",
        ),
    ];
    for (claims, reason) in cases {
        assert_refused(addr, sign(&signing, &claims), reason).await;
    }
    // A client's own token (no `sub`) still names its client as the subject.
    assert_served(addr, sign(&signing, &without_sub(json!("svc"))), "client").await;
    assert_served(addr, sign(&signing, &good), "good").await;
    stop.cancel();
}

fn sign_typed(key: &Key, typ: Option<&str>, claims: &Value) -> String {
    let mut header = Header::new(key.alg);
    header.kid = Some(key.kid.to_owned());
    header.typ = typ.map(str::to_owned);
    jsonwebtoken::encode(&header, claims, &key.key).unwrap()
}

/// A token whose `typ` names another kind of JWT (an ID token, a logout or DPoP token) is not
/// an access token, even when the issuer signed it for this audience (RFC 8725 §3.11).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tokens_typed_as_another_kind_are_refused() {
    let signing = rsa();
    let (addr, url, stop) = serve(|url| fixed(url, jwks(&[&signing]))).await;
    let good = claims(&url, "alice", "");
    for typ in ["id_token+jwt", "logout+jwt", "dpop+jwt", "secevent+jwt"] {
        let reason = format!("it is not an access token: its type is '{typ}' (typ)");
        assert_refused(addr, sign_typed(&signing, Some(typ), &good), &reason).await;
    }
    for typ in [
        None,
        Some("JWT"),
        Some("jwt"),
        Some("application/jwt"),
        // RFC 7515's generic type for the compact serialization: no other kind of token.
        Some("JOSE"),
        Some("at+jwt"),
        Some("AT+JWT"),
        Some("application/at+jwt"),
        Some("Application/At+JWT"),
    ] {
        assert_served(addr, sign_typed(&signing, typ, &good), &format!("{typ:?}")).await;
    }
    stop.cancel();
}

/// `require_access_token_type(true)`: only `at+jwt` (RFC 9068 §4) is accepted.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_access_token_type_can_be_required() {
    let signing = rsa();
    let (addr, url, stop) = serve(|url| {
        Authorization::new(
            url,
            JwtVerifier::new(ISSUER, jwks(&[&signing])).require_access_token_type(true),
        )
        .unwrap()
    })
    .await;
    let good = claims(&url, "alice", "");
    for typ in [None, Some("JWT"), Some("application/jwt")] {
        let reason = "it is not typed as an access token (typ at+jwt)";
        assert_refused(addr, sign_typed(&signing, typ, &good), reason).await;
    }
    let reason = "it is not an access token: its type is 'id_token+jwt' (typ)";
    assert_refused(
        addr,
        sign_typed(&signing, Some("id_token+jwt"), &good),
        reason,
    )
    .await;
    for typ in ["at+jwt", "AT+JWT", "application/at+jwt"] {
        assert_served(addr, sign_typed(&signing, Some(typ), &good), typ).await;
    }
    stop.cancel();
}

/// The owner of a session is its issuer, subject and client, each told apart: a subject with a
/// NUL in it cannot pass for another subject and client whose text runs the same.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn callers_whose_names_run_together_do_not_share_a_session() {
    let signing = rsa();
    let (addr, url, stop) = serve(|url| fixed(url, jwks(&[&signing]))).await;
    let mut first = claims(&url, "a\u{0}b", "");
    first["client_id"] = json!("c");
    let mut second = claims(&url, "a", "");
    second["client_id"] = json!("b\u{0}c");
    // A user whose `sub` is a client's id, and that client's own token (no `sub`).
    let mut user = claims(&url, "app", "");
    user["client_id"] = json!("app");
    let mut client = claims(&url, "app", "");
    client.as_object_mut().unwrap().remove("sub");
    client["client_id"] = json!("app");
    for (first, second) in [
        (first, second),
        (user.clone(), client.clone()),
        (client, user),
    ] {
        let (first, second) = (sign(&signing, &first), sign(&signing, &second));
        must_not_share(addr, first, second).await;
    }
    stop.cancel();
}

/// A session `first` opens is `404` to `second` and still `200` to `first`.
async fn must_not_share(addr: std::net::SocketAddr, first: String, second: String) {
    let answers = tokio::task::spawn_blocking(move || {
        let (status, head, _) = initialize(addr, &format!("Authorization: Bearer {first}"));
        assert_eq!(status, 200, "{head}");
        let session = header(&head, "mcp-session-id").expect("a session");
        let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        let as_first = format!("Authorization: Bearer {first}\r\nMcp-Session-Id: {session}");
        assert_eq!(post(addr, &as_first, &initialized).0, 202);
        let list = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"});
        let as_second = format!("Authorization: Bearer {second}\r\nMcp-Session-Id: {session}");
        (post(addr, &as_second, &list), post(addr, &as_first, &list))
    })
    .await
    .unwrap();
    assert_eq!(answers.0.0, 404, "{}", answers.0.1);
    assert_eq!(answers.1.0, 200, "{}", answers.1.1);
}

/// An owner a shared store holds in the former encoding (`iss NUL sub NUL client`, which two
/// callers could share) matches nobody: the session is refused like another caller's (`404`),
/// and its client opens a new one.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_owner_stored_in_the_former_encoding_matches_nobody() {
    let signing = rsa();
    let store: Arc<support::MemoryStore> = Arc::default();
    let resource = "https://mcp.test/mcp";
    let mut addrs = Vec::new();
    for _ in 0..2 {
        let config = HttpConfig::default()
            .session_store(store.clone())
            .authorization(fixed(resource, jwks(&[&signing])));
        let server = McpServer::new(registry())
            .bind_http("127.0.0.1:0", config)
            .await
            .unwrap();
        addrs.push(server.local_addr());
        tokio::spawn(server.run());
    }
    let (a, b) = (addrs[0], addrs[1]);
    let alice = sign(&signing, &claims(resource, "alice", ""));
    let session = {
        let alice = alice.clone();
        tokio::task::spawn_blocking(move || {
            let (status, head, _) = initialize(a, &format!("Authorization: Bearer {alice}"));
            assert_eq!(status, 200, "{head}");
            header(&head, "mcp-session-id").expect("a session")
        })
        .await
        .unwrap()
    };
    let owner_key = format!("{session}.owner");
    let set_owner = |name: String| {
        let mut stored = store.0.lock().unwrap();
        let owner = stored.get_mut(&owner_key).expect("the owner is stored");
        std::mem::replace(&mut owner.initialize_params.client_info.name, name)
    };
    let current = set_owner(format!("{ISSUER}\u{0}alice\u{0}test-client"));
    let list = move || {
        let (alice, session) = (alice.clone(), session.clone());
        tokio::task::spawn_blocking(move || {
            let list = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"});
            let as_alice = format!("Authorization: Bearer {alice}\r\nMcp-Session-Id: {session}");
            post(b, &as_alice, &list)
        })
    };
    let answer = list().await.unwrap();
    assert_eq!(answer.0, 404, "{}", answer.1);
    // The owner as this version records it: the same request is served.
    set_owner(current);
    let answer = list().await.unwrap();
    assert_eq!(answer.0, 200, "{}", answer.1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_token_without_a_scope_every_request_needs_is_403() {
    let signing = rsa();
    let (addr, url, stop) =
        serve(|url| fixed(url, jwks(&[&signing])).require_scopes(["mcp"])).await;
    let token = sign(&signing, &claims(&url, "alice", "notes:read"));
    let (status, head, _) = tokio::task::spawn_blocking(move || {
        initialize(addr, &format!("Authorization: Bearer {token}"))
    })
    .await
    .unwrap();
    assert_eq!(status, 403, "{head}");
    assert_eq!(
        challenge(&head),
        format!(
            "Bearer error=\"insufficient_scope\", scope=\"mcp\", error_description=\"the token \
             lacks the scope(s) mcp\", resource_metadata=\"http://{addr}/.well-known/oauth-protected-resource/mcp\""
        )
    );
    let token = sign(&signing, &claims(&url, "alice", "mcp notes:read"));
    let (status, head, _) = tokio::task::spawn_blocking(move || {
        initialize(addr, &format!("Authorization: Bearer {token}"))
    })
    .await
    .unwrap();
    assert_eq!(status, 200, "{head}");
    stop.cancel();
}

fn call(name: &str) -> CallToolRequestParams {
    CallToolRequestParams::new(name.to_owned())
}

/// The text of a result's first content block.
fn text(result: &dsh_tools::mcp::rmcp::model::CallToolResult) -> String {
    let value = serde_json::to_value(&result.content[0]).unwrap();
    value["text"].as_str().unwrap_or_default().to_owned()
}

/// Each algorithm's token reaches the tool as its caller, over a real MCP client in both
/// eras; a tool the token's scopes do not cover fails as a result naming the scope.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_caller_reaches_the_pipeline_and_scopes_decide_per_tool() {
    let keys = [
        rsa(),
        key("ec-1", Algorithm::ES256, EC),
        key("ed-1", Algorithm::EdDSA, ED),
    ];
    let set = jwks(&keys.iter().collect::<Vec<_>>());
    let (_, url, stop) = serve(|url| fixed(url, set)).await;
    for signing in &keys {
        let token = sign(signing, &claims(&url, "alice", "notes:read"));
        let import = Connector::default()
            .connect_http_bearer(&url, &token)
            .await
            .unwrap();
        let who = import.peer().call_tool(call("whoami")).await.unwrap();
        assert_eq!(
            who.structured_content,
            Some(json!({"subject": "alice", "scopes": ["notes:read"],
                        "client": "test-client", "issuer": ISSUER})),
            "{:?}",
            signing.alg
        );
        let denied = import.peer().call_tool(call("write_note")).await.unwrap();
        assert_eq!(denied.is_error, Some(true));
        assert_eq!(
            text(&denied),
            "Error: tool \"write_note\" needs the scope \"notes:write\" that the caller's token was not granted"
        );
        let token = sign(signing, &claims(&url, "bob", "notes:read notes:write"));
        let import = Connector::default()
            .connect_http_bearer(&url, &token)
            .await
            .unwrap();
        let written = import.peer().call_tool(call("write_note")).await.unwrap();
        assert_eq!(written.is_error, Some(false), "{written:?}");
    }
    // Without a token the client cannot even connect.
    assert!(Connector::default().connect_http(&url).await.is_err());
    stop.cancel();
}

/// `tools/list` shows each caller only the tools its token lets it call (scope rules), and a
/// 2026-07-28 list that depends on the caller is marked private.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_caller_is_listed_only_what_it_may_call() {
    let registry = registry();
    registry
        .scope_rules(ScopeRules::new().tool("write_note", ["notes:write"]))
        .keep();
    let signing = rsa();
    let set = jwks(&[&signing]);
    let (_, url, stop) = serve_registry(registry, |url| fixed(url, set)).await;
    for (subject, scope, expected) in [
        ("alice", "notes:read", vec!["whoami"]),
        (
            "bob",
            "notes:read notes:write",
            vec!["whoami", "write_note"],
        ),
    ] {
        let token = sign(&signing, &claims(&url, subject, scope));
        let import = Connector::default()
            .connect_http_bearer(&url, &token)
            .await
            .unwrap();
        let list = import.peer().list_tools(None).await.unwrap();
        let names: Vec<&str> = list.tools.iter().map(|t| t.name.as_ref()).collect();
        assert_eq!(names, expected, "{subject}");
        assert_eq!(
            list.cache_scope,
            Some(dsh_tools::mcp::rmcp::model::CacheScope::Private),
            "{subject}"
        );
        // A call the rules deny is a result coded SCOPE_DENIED in `_meta`, like every failure
        // with a code.
        let written = import.peer().call_tool(call("write_note")).await.unwrap();
        if subject == "alice" {
            assert_eq!(written.is_error, Some(true));
            let meta = written.meta.as_ref().map(|m| &m.0);
            assert_eq!(
                meta.and_then(|m| m.get(dsh_tools::mcp::ERROR_META)),
                Some(&json!({"name": "ScopeError", "code": "SCOPE_DENIED"})),
                "{written:?}"
            );
            assert_eq!(
                text(&written),
                "Error: tool \"write_note\" needs the scope \"notes:write\" that the caller's token was not granted"
            );
        } else {
            assert_eq!(written.is_error, Some(false), "{written:?}");
        }
    }
    stop.cancel();
}

/// A server bound to port 0 with `Authorization::at_bound_address` takes its resource URI
/// from the port it got: its metadata names it, and tokens issued for it are accepted.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_on_port_zero_names_the_address_it_bound() {
    use dsh_tools::mcp::JwkSet;
    let signing = rsa();
    let keys: JwkSet =
        serde_json::from_value(serde_json::to_value(jwks(&[&signing])).unwrap()).unwrap();
    let auth = Authorization::at_bound_address(JwtVerifier::new(ISSUER, keys))
        .authorization_server(ISSUER);
    assert_eq!(auth.resource(), "");
    // Every address at once names no host a token could be issued for.
    let everywhere = McpServer::new(registry())
        .bind_http(
            "0.0.0.0:0",
            HttpConfig::default().authorization(auth.clone()),
        )
        .await
        .unwrap_err();
    assert!(
        everywhere.to_string().contains("listens on every address"),
        "{everywhere}"
    );
    let server = McpServer::new(registry())
        .bind_http("127.0.0.1:0", HttpConfig::default().authorization(auth))
        .await
        .unwrap();
    let url = server.url();
    assert!(!url.ends_with(":0/mcp"), "{url}");
    let addr = server.local_addr();
    let stop = server.shutdown_token();
    tokio::spawn(server.run());
    let metadata = exchange(
        addr,
        &format!(
            "GET /.well-known/oauth-protected-resource/mcp HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n"
        ),
    );
    let doc: Value = serde_json::from_str(&metadata.2).unwrap();
    assert_eq!(doc["resource"], json!(url));
    let token = sign(&signing, &claims(&url, "alice", "notes:read"));
    let import = Connector::default()
        .connect_http_bearer(&url, &token)
        .await
        .unwrap();
    let who = import.peer().call_tool(call("whoami")).await.unwrap();
    assert_eq!(who.is_error, Some(false), "{who:?}");
    // A token for another port is refused.
    let other = sign(
        &signing,
        &claims("http://127.0.0.1:1/mcp", "alice", "notes:read"),
    );
    assert!(
        Connector::default()
            .connect_http_bearer(&url, &other)
            .await
            .is_err()
    );
    stop.cancel();
}

/// A 2025-11-25 session belongs to the subject that opened it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn another_subject_cannot_use_a_session() {
    let signing = rsa();
    let (addr, url, stop) = serve(|url| fixed(url, jwks(&[&signing]))).await;
    let alice = sign(&signing, &claims(&url, "alice", ""));
    let mallory = sign(&signing, &claims(&url, "mallory", ""));
    let (status, head, _) = {
        let alice = alice.clone();
        tokio::task::spawn_blocking(move || {
            initialize(addr, &format!("Authorization: Bearer {alice}"))
        })
        .await
        .unwrap()
    };
    assert_eq!(status, 200);
    let session = header(&head, "mcp-session-id").expect("a session");
    let list = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"});
    let answers = tokio::task::spawn_blocking(move || {
        let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        let as_alice = format!("Authorization: Bearer {alice}\r\nMcp-Session-Id: {session}");
        let (status, _, _) = post(addr, &as_alice, &initialized);
        assert_eq!(status, 202);
        let as_mallory = format!("Authorization: Bearer {mallory}\r\nMcp-Session-Id: {session}");
        (post(addr, &as_mallory, &list), post(addr, &as_alice, &list))
    })
    .await
    .unwrap();
    assert_eq!(answers.0.0, 404, "{}", answers.0.1);
    assert_eq!(answers.1.0, 200, "{}", answers.1.1);
    assert!(answers.1.2.contains("whoami"));
    stop.cancel();
}

/// With a shared store, the session's owner travels with it: on the instance that restores
/// the session, another subject still gets `404` and the owner is served.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_restored_on_another_instance_keeps_its_owner() {
    let signing = rsa();
    let store: Arc<support::MemoryStore> = Arc::default();
    // Both instances are one resource (one URI): a fleet behind one name.
    let resource = "https://mcp.test/mcp";
    let mut addrs = Vec::new();
    for _ in 0..2 {
        let config = HttpConfig::default()
            .session_store(store.clone())
            .authorization(fixed(resource, jwks(&[&signing])));
        let server = McpServer::new(registry())
            .bind_http("127.0.0.1:0", config)
            .await
            .unwrap();
        addrs.push(server.local_addr());
        tokio::spawn(server.run());
    }
    let (a, b) = (addrs[0], addrs[1]);
    let alice = sign(&signing, &claims(resource, "alice", ""));
    let mallory = sign(&signing, &claims(resource, "mallory", ""));
    let answers = tokio::task::spawn_blocking(move || {
        let (status, head, _) = initialize(a, &format!("Authorization: Bearer {alice}"));
        assert_eq!(status, 200);
        let session = header(&head, "mcp-session-id").expect("a session");
        let list = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"});
        let as_mallory = format!("Authorization: Bearer {mallory}\r\nMcp-Session-Id: {session}");
        let as_alice = format!("Authorization: Bearer {alice}\r\nMcp-Session-Id: {session}");
        // Mallory first, on the instance that never saw the session.
        (
            post(b, &as_mallory, &list),
            post(b, &as_alice, &list),
            post(b, &as_mallory, &list),
        )
    })
    .await
    .unwrap();
    assert_eq!(answers.0.0, 404, "{}", answers.0.1);
    assert_eq!(answers.1.0, 200, "{}", answers.1.1);
    assert!(answers.1.2.contains("whoami"));
    assert_eq!(answers.2.0, 404, "{}", answers.2.1);
}

/// Token key ids the cache lacks cannot make the server fetch the JWKS on every request: one
/// fetch per interval, and a token whose key is cached never waits for a fetch.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn random_key_ids_cost_one_fetch_per_interval() {
    let signing = rsa();
    let served = Arc::new(std::sync::Mutex::new(
        serde_json::to_string(&jwks(&[&signing])).unwrap(),
    ));
    let hits = Arc::new(AtomicUsize::new(0));
    let addr = jwks_server(Arc::clone(&served), Arc::clone(&hits)).await;
    let resource = "https://mcp.test/mcp";
    let verifier = JwtVerifier::fetch(ISSUER, format!("http://{addr}/jwks.json"));
    let good = sign(&signing, &claims(resource, "alice", ""));
    verifier.check(&good, resource).await.unwrap();
    assert_eq!(hits.load(Ordering::SeqCst), 1);
    let other = key("rsa-1", Algorithm::RS256, RSA_OTHER);
    for i in 0..20 {
        let random = Key {
            kid: Box::leak(format!("random-{i}").into_boxed_str()),
            ..key("x", Algorithm::RS256, RSA_OTHER)
        };
        let rejected = verifier
            .check(&sign(&random, &claims(resource, "mallory", "")), resource)
            .await;
        assert!(
            matches!(rejected, Err(TokenRejection::Invalid(_))),
            "{rejected:?}"
        );
    }
    // The first unknown id came within the minute of the first fetch: no fetch at all.
    assert_eq!(
        hits.load(Ordering::SeqCst),
        1,
        "no fetch per unknown key id"
    );
    verifier.check(&good, resource).await.unwrap();
    assert!(
        verifier
            .check(&sign(&other, &claims(resource, "x", "")), resource)
            .await
            .is_err()
    );
    assert_eq!(hits.load(Ordering::SeqCst), 1);
}

/// Binding beyond loopback without authorization is refused unless the caller opts out.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_non_loopback_address_needs_authorization_or_an_explicit_opt_out() {
    let error = McpServer::new(registry())
        .bind_http("0.0.0.0:0", HttpConfig::default())
        .await
        .unwrap_err();
    assert_eq!(error.kind(), std::io::ErrorKind::PermissionDenied);
    assert!(
        error.to_string().contains("without authorization")
            && error.to_string().contains("allow_unauthenticated(true)"),
        "{error}"
    );
    let opted_out = McpServer::new(registry())
        .bind_http(
            "0.0.0.0:0",
            HttpConfig::default().allow_unauthenticated(true),
        )
        .await;
    assert!(opted_out.is_ok());
    let signing = rsa();
    let authorized = McpServer::new(registry())
        .bind_http(
            "0.0.0.0:0",
            HttpConfig::default().authorization(fixed("https://mcp.test/mcp", jwks(&[&signing]))),
        )
        .await;
    assert!(authorized.is_ok());
    // Loopback needs neither.
    assert!(
        McpServer::new(registry())
            .bind_http("127.0.0.1:0", HttpConfig::default())
            .await
            .is_ok()
    );
}

/// A JWKS server on loopback that serves `keys` and counts its requests.
async fn jwks_server(keys: Arc<std::sync::Mutex<String>>, hits: Arc<AtomicUsize>) -> SocketAddr {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((mut stream, _)) = listener.accept().await {
            let body = keys.lock().unwrap().clone();
            hits.fetch_add(1, Ordering::SeqCst);
            tokio::spawn(async move {
                let mut buffer = [0u8; 4096];
                let _ = stream.read(&mut buffer).await;
                let answer = format!(
                    "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\
                     Connection: close\r\n\r\n{body}",
                    body.len()
                );
                let _ = stream.write_all(answer.as_bytes()).await;
            });
        }
    });
    addr
}

/// Keys are fetched when first needed, reused, fetched again when a token names a key the
/// cache lacks (rotation), and an unreachable JWKS is `Unavailable` (a 503), not a bad token.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn keys_are_fetched_from_the_jwks_uri_and_again_on_rotation() {
    let first = rsa();
    let second = key("ec-1", Algorithm::ES256, EC);
    let served = Arc::new(std::sync::Mutex::new(
        serde_json::to_string(&jwks(&[&first])).unwrap(),
    ));
    let hits = Arc::new(AtomicUsize::new(0));
    let addr = jwks_server(Arc::clone(&served), Arc::clone(&hits)).await;
    let resource = "https://mcp.test/mcp";
    let verifier = JwtVerifier::fetch(ISSUER, format!("http://{addr}/jwks.json"))
        .refresh(Duration::from_secs(3600), Duration::ZERO);
    let token = sign(&first, &claims(resource, "alice", "a b"));
    let caller = verifier.check(&token, resource).await.unwrap();
    assert_eq!(caller.granted().collect::<Vec<_>>(), ["a", "b"]);
    verifier.check(&token, resource).await.unwrap();
    assert_eq!(
        hits.load(Ordering::SeqCst),
        1,
        "the second check used the cache"
    );
    // The issuer rotates in a new key.
    *served.lock().unwrap() = serde_json::to_string(&jwks(&[&first, &second])).unwrap();
    let rotated = sign(&second, &claims(resource, "alice", ""));
    verifier.check(&rotated, resource).await.unwrap();
    assert_eq!(hits.load(Ordering::SeqCst), 2);
    // Nothing listens here.
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let dead = closed.local_addr().unwrap();
    drop(closed);
    let unreachable = JwtVerifier::fetch(ISSUER, format!("http://{dead}/jwks.json"));
    match unreachable.check(&token, resource).await {
        Err(TokenRejection::Unavailable(why)) => {
            assert!(why.contains("fetching the JWKS"), "{why}")
        }
        other => panic!("{other:?}"),
    }
}

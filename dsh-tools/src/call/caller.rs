//! Who asked for a call: an identity a transport authenticated, for hooks and guards to decide on.

use std::collections::BTreeSet;
use std::fmt;
use std::sync::Arc;

use serde_json::{Map, Value};

/// The authenticated party behind a call: a transport that checked a credential (an MCP HTTP
/// server with `mcp::Authorization` (feature `mcp-auth`), or your own) hands it to the
/// pipeline with [`ToolExecutionInput::caller`](crate::ToolExecutionInput::caller), and
/// pre-execute hooks and guards read it from [`ToolExecution::caller`](crate::ToolExecution::caller).
/// Calls a `run_code` program makes carry their outer call's caller.
///
/// ```
/// use dsh_tools::pipeline::Caller;
///
/// let caller = Caller::new("user-42").scopes(["files:read", "search"]).issuer("https://auth.example.com");
/// assert!(caller.has_scope("files:read"));
/// assert!(!caller.has_scope("files:write"));
/// assert_eq!(caller.subject(), "user-42");
/// ```
#[derive(Clone, PartialEq)]
pub struct Caller {
    subject: String,
    scopes: BTreeSet<String>,
    issuer: Option<String>,
    client_id: Option<String>,
    claims: Arc<Map<String, Value>>,
}

impl Caller {
    /// A caller identified by `subject` (a token's `sub`), with no scopes.
    pub fn new(subject: impl Into<String>) -> Self {
        Self {
            subject: subject.into(),
            scopes: BTreeSet::new(),
            issuer: None,
            client_id: None,
            claims: Arc::default(),
        }
    }

    /// Adds these scopes.
    pub fn scopes(mut self, scopes: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.scopes.extend(scopes.into_iter().map(Into::into));
        self
    }

    /// Who vouched for the identity (a token's `iss`).
    pub fn issuer(mut self, issuer: impl Into<String>) -> Self {
        self.issuer = Some(issuer.into());
        self
    }

    /// The OAuth client acting for the subject (a token's `client_id` or `azp`).
    pub fn client_id(mut self, client: impl Into<String>) -> Self {
        self.client_id = Some(client.into());
        self
    }

    /// Every claim of the credential, for policies that need more than the scopes.
    pub fn claims(mut self, claims: Map<String, Value>) -> Self {
        self.claims = Arc::new(claims);
        self
    }

    /// The subject.
    pub fn subject(&self) -> &str {
        &self.subject
    }

    /// The granted scopes, sorted.
    pub fn granted(&self) -> impl Iterator<Item = &str> {
        self.scopes.iter().map(String::as_str)
    }

    /// Whether `scope` was granted.
    pub fn has_scope(&self, scope: &str) -> bool {
        self.scopes.contains(scope)
    }

    /// The issuer, when known.
    pub fn issuer_name(&self) -> Option<&str> {
        self.issuer.as_deref()
    }

    /// The client, when known.
    pub fn client(&self) -> Option<&str> {
        self.client_id.as_deref()
    }

    /// One claim of the credential.
    pub fn claim(&self, name: &str) -> Option<&Value> {
        self.claims.get(name)
    }
}

impl fmt::Debug for Caller {
    /// The subject, issuer, client and scopes; never the claims (they may hold personal data).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Caller")
            .field("subject", &self.subject)
            .field("issuer", &self.issuer)
            .field("client_id", &self.client_id)
            .field("scopes", &self.scopes)
            .finish_non_exhaustive()
    }
}

/// A guard that lets a call through only when its [`Caller`] holds the scopes its tool needs:
/// scopes are policy like any other, decided where every other denial is (spec §5.6), and a
/// denial is a failed result the model reads, naming the missing scope.
///
/// A call with no caller (made in process, or by a transport that authenticates nobody) is
/// let through, unless [`require_caller`](Self::require_caller) is set. Set it on a server
/// whose every call is authenticated: a body that builds a nested call by hand
/// (`ToolExecutionInput::new` instead of [`ToolRunContext::nested`](crate::ToolRunContext::nested),
/// which carries the caller) would otherwise call past the rules.
///
/// ```
/// use dsh_tools::{Registry, pipeline::ScopeRules};
///
/// let registry = Registry::new();
/// registry.guard(
///     ScopeRules::new()
///         .every_tool(["tools:call"])
///         .tool("write_file", ["files:write"])
///         .guard(),
/// );
/// ```
#[derive(Clone, Debug, Default)]
pub struct ScopeRules {
    every: Vec<String>,
    tools: Vec<(String, Vec<String>)>,
    require_caller: bool,
}

impl ScopeRules {
    /// No rules: every call is let through.
    pub fn new() -> Self {
        Self::default()
    }

    /// Every tool needs these scopes.
    pub fn every_tool(mut self, scopes: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.every.extend(scopes.into_iter().map(Into::into));
        self
    }

    /// The tool `name` needs these scopes too (a `run_code` program's calls are checked one by
    /// one, by their own names).
    pub fn tool(
        mut self,
        name: impl Into<String>,
        scopes: impl IntoIterator<Item = impl Into<String>>,
    ) -> Self {
        self.tools
            .push((name.into(), scopes.into_iter().map(Into::into).collect()));
        self
    }

    /// Denies calls that carry no caller at all.
    pub fn require_caller(mut self, require: bool) -> Self {
        self.require_caller = require;
        self
    }

    /// The scopes these rules name, sorted and once each (what a server advertises as
    /// `scopes_supported`).
    pub fn scopes(&self) -> Vec<String> {
        let all: BTreeSet<&String> = self
            .every
            .iter()
            .chain(self.tools.iter().flat_map(|(_, s)| s))
            .collect();
        all.into_iter().cloned().collect()
    }

    /// Why `caller` may not call `tool`, if it may not.
    pub fn check(&self, tool: &str, caller: Option<&Caller>) -> Option<String> {
        let Some(caller) = caller else {
            return self
                .require_caller
                .then(|| format!("tool \"{tool}\" needs an authenticated caller"));
        };
        let needed = self.every.iter().chain(
            self.tools
                .iter()
                .filter(|(name, _)| name == tool)
                .flat_map(|(_, s)| s),
        );
        let missing: BTreeSet<&str> = needed
            .filter(|s| !caller.has_scope(s))
            .map(String::as_str)
            .collect();
        if missing.is_empty() {
            return None;
        }
        let list: Vec<String> = missing.iter().map(|s| format!("\"{s}\"")).collect();
        Some(format!(
            "tool \"{tool}\" needs the scope{} {} that the caller's token was not granted",
            if missing.len() == 1 { "" } else { "s" },
            list.join(", ")
        ))
    }
}

/// A caller as stored with a pending approval: subject, scopes, issuer, client and claims.
#[derive(serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
struct CallerWire {
    subject: String,
    #[serde(default, skip_serializing_if = "BTreeSet::is_empty")]
    scopes: BTreeSet<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    issuer: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    client_id: Option<String>,
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    claims: Map<String, Value>,
}

impl serde::Serialize for Caller {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        CallerWire {
            subject: self.subject.clone(),
            scopes: self.scopes.clone(),
            issuer: self.issuer.clone(),
            client_id: self.client_id.clone(),
            // A token's claims, parsed within serde_json's depth limit.
            claims: (*self.claims).clone(),
        }
        .serialize(serializer)
    }
}

impl<'de> serde::Deserialize<'de> for Caller {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let wire = CallerWire::deserialize(deserializer)?;
        Ok(Self {
            subject: wire.subject,
            scopes: wire.scopes,
            issuer: wire.issuer,
            client_id: wire.client_id,
            claims: Arc::new(wire.claims),
        })
    }
}

impl Caller {
    /// Whether `other` is the same principal: subject, issuer and client (scopes and claims may
    /// differ between two tokens of one user).
    pub fn same_principal(&self, other: &Caller) -> bool {
        self.subject == other.subject
            && self.issuer == other.issuer
            && self.client_id == other.client_id
    }
}

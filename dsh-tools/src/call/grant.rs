//! Remembered approval answers: what an "always allow" or "always reject" covers, and how a tool
//! says which part of a call such an answer may be keyed on.

use super::caller::Caller;
use super::execution::AgentId;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::sync::RwLock;

/// One condition of a [`GrantKey`] on the call's arguments: the value at a JSON pointer
/// ([RFC 6901](https://www.rfc-editor.org/rfc/rfc6901), `""` for the whole arguments).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ArgumentMatch {
    /// Where in the arguments (`/command`, `/path`).
    pub pointer: String,
    /// What must be there.
    pub rule: MatchRule,
}

/// What an [`ArgumentMatch`] requires of the value at its pointer.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub enum MatchRule {
    /// Exactly this value (numbers compared as the validator compares them: `1` equals `1.0`).
    Equals(Value),
    /// A string that starts with this text (`git ` for every git command).
    StartsWith(String),
}

impl ArgumentMatch {
    /// The value at `pointer` must equal `value`.
    pub fn equals(pointer: impl Into<String>, value: Value) -> Self {
        Self {
            pointer: pointer.into(),
            rule: MatchRule::Equals(value),
        }
    }

    /// The value at `pointer` must be a string starting with `prefix`.
    pub fn starts_with(pointer: impl Into<String>, prefix: impl Into<String>) -> Self {
        Self {
            pointer: pointer.into(),
            rule: MatchRule::StartsWith(prefix.into()),
        }
    }

    fn matches(&self, arguments: &Value) -> bool {
        let Some(found) = arguments.pointer(&self.pointer) else {
            return false;
        };
        match &self.rule {
            MatchRule::Equals(value) => crate::json::json_equal(found, value),
            MatchRule::StartsWith(prefix) => found
                .as_str()
                .is_some_and(|s| s.starts_with(prefix.as_str())),
        }
    }
}

/// Who a remembered answer holds for when calls are made on behalf of authenticated people:
/// the caller's subject, issuer and client ([`Caller::same_principal`]).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Principal {
    /// The subject.
    pub subject: String,
    /// The issuer, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub issuer: Option<String>,
    /// The client, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client: Option<String>,
}

impl Principal {
    /// `caller`'s principal.
    pub fn of(caller: &Caller) -> Self {
        Self {
            subject: caller.subject().to_owned(),
            issuer: caller.issuer_name().map(str::to_owned),
            client: caller.client().map(str::to_owned),
        }
    }

    /// Whether `caller` is this principal.
    pub fn is(&self, caller: &Caller) -> bool {
        self.subject == caller.subject()
            && self.issuer.as_deref() == caller.issuer_name()
            && self.client.as_deref() == caller.client()
    }
}

/// What a remembered answer covers: one tool, for one agent (or every agent: a grant never
/// answers a call without an agent), for one person or anyone, for every call or only calls
/// whose arguments match.
///
/// Argument conditions compare values, not meanings: `starts_with("/command", "git ")` also
/// covers `git status; rm -rf ~`, and a condition on `/command` says nothing of `/cwd`. Key a
/// shell tool on exact commands ([`GrantPolicy::Arguments`]) unless a guard bounds the rest.
///
/// ```
/// use dsh_tools::{AgentId, ArgumentMatch, GrantKey};
/// use serde_json::json;
///
/// let key = GrantKey::new("shell")
///     .agent(AgentId::new("coder"))
///     .argument(ArgumentMatch::equals("/command", json!("git status")));
/// let coder = AgentId::new("coder");
/// assert!(key.matches("shell", Some(&coder), None, &json!({"command": "git status"})));
/// assert!(!key.matches("shell", Some(&coder), None, &json!({"command": "rm -rf /"})));
/// assert!(!key.matches("shell", None, None, &json!({"command": "git status"})));
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GrantKey {
    /// The tool's name.
    pub tool: String,
    /// The agent the answer holds for; `None`: every agent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<AgentId>,
    /// Conditions on the arguments, all of which must hold; none: every call of the tool.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub arguments: Vec<ArgumentMatch>,
    /// The person the answer holds for; `None`: whoever calls (or calls without a caller).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub caller: Option<Principal>,
}

impl GrantKey {
    /// Every call of `tool`, by every agent (narrow it with [`agent`](Self::agent) and
    /// [`argument`](Self::argument)).
    pub fn new(tool: impl Into<String>) -> Self {
        Self {
            tool: tool.into(),
            agent: None,
            arguments: Vec::new(),
            caller: None,
        }
    }

    /// Only for calls made on behalf of `principal`.
    #[must_use]
    pub fn caller(mut self, principal: Principal) -> Self {
        self.caller = Some(principal);
        self
    }

    /// Only for `agent`.
    #[must_use]
    pub fn agent(mut self, agent: impl Into<AgentId>) -> Self {
        self.agent = Some(agent.into());
        self
    }

    /// Only for calls whose arguments also match `condition`.
    #[must_use]
    pub fn argument(mut self, condition: ArgumentMatch) -> Self {
        self.arguments.push(condition);
        self
    }

    /// Whether a call of `tool` by `agent` on behalf of `caller` with `arguments` is covered.
    /// A call without an agent never is (an `ask` without one is always denied).
    pub fn matches(
        &self,
        tool: &str,
        agent: Option<&AgentId>,
        caller: Option<&Caller>,
        arguments: &Value,
    ) -> bool {
        self.tool == tool
            && agent.is_some()
            && self.agent.as_ref().is_none_or(|a| agent == Some(a))
            && self
                .caller
                .as_ref()
                .is_none_or(|p| caller.is_some_and(|c| p.is(c)))
            && self.arguments.iter().all(|c| c.matches(arguments))
    }
}

/// Which remembered answers a tool's calls may get (set with
/// [`ToolDefinition::grant_policy`](crate::ToolDefinition::grant_policy)): the key an "always"
/// answer to an `ask` is stored under.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum GrantPolicy {
    /// The tool, the calling agent and the person it calls for (the default): "always allow
    /// `write_file` for this agent".
    #[default]
    ToolAndAgent,
    /// The tool, the agent and the values at these JSON pointers, compared exactly: "always
    /// allow `shell` with this `/command`". A pointer the call lacks makes the answer one-off.
    Arguments(Vec<String>),
    /// Never remembered: every call asks (a tool whose every call deserves a look).
    Never,
}

impl GrantPolicy {
    /// The key an "always" answer to this call would be stored under, `None` when the policy
    /// (or the call) allows none. It names the call's agent and, when the call has an
    /// authenticated caller, that caller: one person's "always" is not another's.
    pub fn key_for(
        &self,
        tool: &str,
        agent: Option<&AgentId>,
        caller: Option<&Caller>,
        arguments: &Value,
    ) -> Option<GrantKey> {
        let base = GrantKey {
            tool: tool.to_owned(),
            agent: agent.cloned(),
            arguments: Vec::new(),
            caller: caller.map(Principal::of),
        };
        match self {
            Self::Never => None,
            Self::ToolAndAgent => Some(base),
            Self::Arguments(pointers) => {
                let mut key = base;
                for pointer in pointers {
                    let value = arguments.pointer(pointer)?;
                    key.arguments.push(ArgumentMatch::equals(
                        pointer.clone(),
                        crate::json::clone_deep(value),
                    ));
                }
                Some(key)
            }
        }
    }
}

/// A remembered answer.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Grant {
    /// What it covers.
    pub key: GrantKey,
    /// Allow or reject.
    pub decision: GrantDecision,
}

/// A remembered answer's side.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum GrantDecision {
    /// Calls it covers run without asking (guards still run).
    Allow,
    /// Calls it covers are refused without asking.
    Reject,
}

/// The grants one registry holds, under a lock of their own (a call never takes the registry's
/// write lock to read them).
#[derive(Default)]
pub(crate) struct Grants(pub(crate) RwLock<Vec<Grant>>);

impl Grants {
    /// The remembered answer for a call, if one covers it: a rejection wins over an allowance.
    pub(crate) fn answer(
        &self,
        tool: &str,
        agent: Option<&AgentId>,
        caller: Option<&Caller>,
        arguments: &Value,
    ) -> Option<GrantDecision> {
        let grants = self.0.read().unwrap_or_else(|e| e.into_inner());
        if grants.is_empty() {
            return None;
        }
        let mut answer = None;
        for grant in grants.iter() {
            if grant.key.matches(tool, agent, caller, arguments) {
                if grant.decision == GrantDecision::Reject {
                    return Some(GrantDecision::Reject);
                }
                answer = Some(GrantDecision::Allow);
            }
        }
        answer
    }

    /// Keeps `grant`, replacing one with the same key; `true` when it replaced one.
    pub(crate) fn insert(&self, grant: Grant) -> bool {
        let mut grants = self.0.write().unwrap_or_else(|e| e.into_inner());
        match grants.iter_mut().find(|g| g.key == grant.key) {
            Some(existing) => {
                *existing = grant;
                true
            }
            None => {
                grants.push(grant);
                false
            }
        }
    }
}

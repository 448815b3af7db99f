//! What `tools/list` shows one client: the tools its caller may call (scope rules), under
//! progressive discovery only the non-deferred ones, `tool_search` and what the session's
//! searches loaded; and the cache hints of a 2026-07-28 listing.

use crate::call::{Caller, ScopeRules};
use crate::registry::{LoadedTools, TOOL_SEARCH};
use rmcp::RoleServer;
use rmcp::model::{CacheScope, CallToolResult, ContentBlock, ListToolsResult, Tool};
use rmcp::service::RequestContext;
use serde_json::Value;
use std::sync::{Arc, Mutex};

/// One tool of the listing cache: the MCP tool and whether the view defers it.
pub(crate) type Listed = (Tool, bool);

/// What one session's `tool_search` calls loaded (2025-11-25 and earlier: sessions are
/// stateful; a 2026-07-28 request has no session).
#[derive(Debug, Default)]
pub(crate) struct Session {
    loaded: Mutex<LoadedTools>,
}

impl Session {
    /// Loads `names`; whether any was new.
    fn load<'a>(&self, names: impl IntoIterator<Item = &'a str>) -> bool {
        let mut loaded = self.loaded.lock().unwrap_or_else(|e| e.into_inner());
        names
            .into_iter()
            .fold(false, |new, name| loaded.load(name) | new)
    }

    fn contains(&self, name: &str) -> bool {
        self.loaded
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .contains(name)
    }
}

/// How a server lists its tools: its settings and this session's state.
pub(crate) struct Lister<'a> {
    /// Every tool of the view, marked deferred or not (`tool_search` among them where the
    /// view defers any).
    pub all: &'a [Listed],
    /// Progressive discovery is on.
    pub discovery: bool,
    /// The session's loaded tools.
    pub session: &'a Session,
    /// The `ttlMs` of a 2026-07-28 listing.
    pub ttl_ms: u64,
}

impl Lister<'_> {
    /// The `tools/list` answer for `caller` under `rules` (`modern`: a 2026-07-28 request,
    /// which has no session and gets cache hints).
    pub(crate) fn listing(
        &self,
        rules: &[Arc<ScopeRules>],
        caller: Option<&Caller>,
        modern: bool,
    ) -> ListToolsResult {
        let tools: Vec<Tool> = self
            .all
            .iter()
            .filter(|(tool, deferred)| {
                let name = tool.name.as_ref();
                let shown = if self.discovery {
                    !deferred || (!modern && self.session.contains(name))
                } else {
                    name != TOOL_SEARCH
                };
                shown && rules.iter().all(|r| r.check(name, caller).is_none())
            })
            .map(|(tool, _)| tool.clone())
            .collect();
        let mut list = ListToolsResult::with_all_items(tools);
        if modern {
            // A list that depends on who asks (scope rules, or any authenticated caller) is
            // the asker's alone; otherwise any cache may serve it.
            let private = caller.is_some() || !rules.is_empty();
            list.cache_scope = Some(if private {
                CacheScope::Private
            } else {
                CacheScope::Public
            });
            list.ttl_ms = Some(self.ttl_ms);
        }
        list
    }

    /// After a successful `tool_search` under progressive discovery: a session loads what it
    /// found (and is told its list changed when something is new: `true`); a 2026-07-28
    /// request, whose list cannot change, gets the found tools' input schemas in the result,
    /// so its model can call them by name.
    pub(crate) fn after_search(&self, result: &mut CallToolResult, modern: bool) -> bool {
        if !self.discovery || result.is_error == Some(true) {
            return false;
        }
        let Some(found) = result
            .structured_content
            .as_mut()
            .and_then(|v| v.get_mut("tools"))
            .and_then(Value::as_array_mut)
        else {
            return false;
        };
        if !modern {
            let names = found
                .iter()
                .filter_map(|t| t.get("name").and_then(Value::as_str));
            return self.session.load(names);
        }
        let mut text = String::new();
        for entry in found.iter_mut() {
            let Some(name) = entry.get("name").and_then(Value::as_str) else {
                continue;
            };
            let Some((tool, _)) = self.all.iter().find(|(t, _)| t.name == name) else {
                continue;
            };
            let schema = Value::Object((*tool.input_schema).clone());
            text.push_str(&format!(
                "\n- {}: {}",
                crate::present::escape_hidden_json(name),
                crate::present::escape_hidden_json(&crate::json::to_compact_string(&schema))
            ));
            entry["inputSchema"] = schema;
        }
        if !text.is_empty() {
            result.content.push(ContentBlock::text(format!(
                "Their input schemas (this session's tool list does not change):{text}"
            )));
        }
        false
    }
}

/// A fresh session's state.
pub(crate) fn new_session() -> Arc<Session> {
    Arc::new(Session::default())
}

/// The authenticated caller of a request (HTTP with authorization), if any.
pub(super) fn caller_of(cx: &RequestContext<RoleServer>) -> Option<Arc<crate::call::Caller>> {
    #[cfg(feature = "mcp-auth")]
    {
        cx.extensions
            .get::<hyper::http::request::Parts>()
            .and_then(|parts| parts.extensions.get::<Arc<crate::call::Caller>>())
            .cloned()
    }
    #[cfg(not(feature = "mcp-auth"))]
    {
        let _ = cx;
        None
    }
}

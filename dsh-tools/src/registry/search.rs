//! Searching the registry, and what a conversation has loaded: [`Registry::search`] over the
//! tools a scope sees, the deferral rules of a layer, the scope rules that hide tools from
//! callers who may not call them, and [`LoadedTools`], the deferred tools a conversation's
//! searches loaded.

use super::RegistrationError;
use super::catalog::DeferRule;
use super::handle::{Registration, Registry, Target};
use super::scope::Scope;
use super::tool_search::TOOL_SEARCH;
use super::tools::{PresentationMode, RegisteredTool, ToolSchema};
use crate::call::{AgentId, Caller, ScopeRules, ToolExecution, ToolExecutionResult};
use crate::search::Match;
use serde_json::Value;
use std::collections::BTreeSet;
use std::sync::Arc;

/// The most a program's `tools.$search` returns at once.
pub const MAX_PROGRAM_SEARCH: usize = 50;

/// A search of the tools one scope sees.
///
/// ```
/// use dsh_tools::{OutputDecl, Registry, ToolDefinition, registry::ToolQuery};
/// use serde_json::json;
///
/// let registry = Registry::new();
/// for (name, description) in [("send_email", "Send an email message"), ("read_file", "Read a file")] {
///     registry.register(ToolDefinition::new(name, description, json!({"type": "object"}),
///         OutputDecl::text(), |_, _| async { Ok(json!("")) }))?.keep();
/// }
/// let found = registry.search(&ToolQuery::new("email a colleague").limit(1));
/// assert_eq!(found[0].tool.name(), "send_email");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug)]
pub struct ToolQuery {
    query: String,
    agent: Option<AgentId>,
    caller: Option<Arc<Caller>>,
    limit: usize,
    deferred_only: bool,
}

impl ToolQuery {
    /// A search for `query` (free text: words of what the tool should do, or its name), in the
    /// global view, at most 10 results, of every tool.
    pub fn new(query: impl Into<String>) -> Self {
        Self {
            query: query.into(),
            agent: None,
            caller: None,
            limit: 10,
            deferred_only: false,
        }
    }

    /// Searches what `agent`'s scope sees (shadows and restrictions applied).
    pub fn agent(mut self, agent: impl Into<AgentId>) -> Self {
        self.agent = Some(agent.into());
        self
    }

    /// Leaves out the tools that [`Registry::scope_rules`] forbid `caller` to call.
    pub fn caller(mut self, caller: impl Into<Arc<Caller>>) -> Self {
        self.caller = Some(caller.into());
        self
    }

    /// At most `limit` results.
    pub fn limit(mut self, limit: usize) -> Self {
        self.limit = limit;
        self
    }

    /// Only the tools the scope defers (what `tool_search` looks for).
    pub fn deferred_only(mut self, only: bool) -> Self {
        self.deferred_only = only;
        self
    }
}

/// One tool a search found.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct ToolMatch {
    /// The tool.
    pub tool: Arc<RegisteredTool>,
    /// How it matched.
    pub matched: Match,
    /// Its BM25F score.
    pub score: f32,
}

impl Registry {
    /// The tools `query` finds among those its scope sees, best first.
    ///
    /// A search never reveals a tool the scope could not call: shadowed, restricted, another
    /// scope's, or (with a [caller](ToolQuery::caller)) one [`scope_rules`](Self::scope_rules)
    /// forbid it. The index is built on the first search and kept current by every
    /// registration and disposal after.
    pub fn search(&self, query: &ToolQuery) -> Vec<ToolMatch> {
        self.search_with(
            &query.query,
            query.limit,
            query.agent.as_ref(),
            query.caller.as_deref(),
            query.deferred_only,
        )
    }

    /// What `tool_search` finds for the call `execution`: the deferred tools its scope and
    /// caller may see.
    pub(crate) fn search_deferred(
        &self,
        query: &str,
        limit: usize,
        execution: &ToolExecution,
    ) -> Vec<ToolMatch> {
        self.search_with(query, limit, execution.agent(), execution.caller(), true)
    }

    fn search_with(
        &self,
        query: &str,
        limit: usize,
        agent: Option<&AgentId>,
        caller: Option<&Caller>,
        deferred_only: bool,
    ) -> Vec<ToolMatch> {
        let mut state = self.read();
        if state.catalog.is_none() {
            drop(state);
            // Building the index changes no view: the generation (what calls and the MCP
            // listing cache against) is left as it is.
            self.inner
                .state
                .write()
                .unwrap_or_else(|e| e.into_inner())
                .enable_catalog();
            state = self.read();
        }
        let Some(catalog) = state.catalog.as_ref() else {
            return Vec::new();
        };
        let chain = state.chain(agent);
        let hits = catalog.index.search(query, limit, |id| {
            let Some(tool) = catalog.tools.get(id) else {
                return false;
            };
            let name = tool.definition.name.as_str();
            state
                .resolve(name, agent)
                .is_some_and(|seen| Arc::ptr_eq(seen, tool))
                && (!deferred_only || state.deferred(tool, &chain))
                && state
                    .visibility
                    .iter()
                    .all(|(_, rules)| rules.check(name, caller).is_none())
        });
        hits.into_iter()
            .filter_map(|hit| {
                Some(ToolMatch {
                    tool: Arc::clone(catalog.tools.get(&hit.key)?),
                    matched: hit.matched,
                    score: hit.score,
                })
            })
            .collect()
    }

    /// How many registrations (of every layer) the search index holds, or `None` before the
    /// first search built it: a diagnostic, and what tests hold the index's upkeep to.
    pub fn indexed_tools(&self) -> Option<usize> {
        self.read().catalog.as_ref().map(|c| c.index.len())
    }

    /// The tools of `agent`'s view its scope defers, in view order (none without deferral).
    pub(crate) fn deferred_tools(&self, agent: Option<&AgentId>) -> Vec<Arc<RegisteredTool>> {
        let state = self.read();
        if !state.deferral {
            return Vec::new();
        }
        let chain = state.chain(agent);
        let mut view = state.view(agent);
        view.retain(|tool| {
            tool.definition.name != crate::code::RUN_CODE && state.deferred(tool, &chain)
        });
        view
    }

    /// What a program's `tools.$search(arg)` returns: `arg` is the query, or `{query, limit}`
    /// (at most [`MAX_PROGRAM_SEARCH`]); each match `{name, description, namespace?}`, its
    /// description cut to 300 characters.
    pub(crate) fn program_search(
        &self,
        arg: &Value,
        agent: Option<&AgentId>,
        caller: Option<&Caller>,
    ) -> Result<Value, String> {
        let (query, limit) = match arg {
            Value::String(query) => (query.as_str(), super::tool_search::DEFAULT_SEARCH_LIMIT),
            Value::Object(_) => {
                super::tool_search::query_and_limit(arg, MAX_PROGRAM_SEARCH, "tools.$search")?
            }
            _ => {
                return Err("tools.$search takes a query string or {query, limit}".to_owned());
            }
        };
        let found = self.search_with(query, limit, agent, caller, false);
        Ok(Value::Array(
            found
                .iter()
                .map(|m| super::tool_search::found_entry(&m.tool, Some(300)))
                .collect(),
        ))
    }

    /// What a program's `tools.$describe(name)` returns: the tool's TypeScript declaration,
    /// if `agent`'s scope sees it and `caller` may call it.
    pub(crate) fn program_describe(
        &self,
        arg: &Value,
        agent: Option<&AgentId>,
        caller: Option<&Caller>,
    ) -> Result<Value, String> {
        let Some(name) = arg.as_str() else {
            return Err("tools.$describe takes a tool name".to_owned());
        };
        let state = self.read();
        let hidden = state
            .visibility
            .iter()
            .any(|(_, rules)| rules.check(name, caller).is_some());
        let tool = state
            .resolve(name, agent)
            .filter(|t| !hidden && t.definition.name != crate::code::RUN_CODE)
            .cloned();
        drop(state);
        let Some(tool) = tool else {
            let mut quoted = String::new();
            crate::json::push_json_string(&mut quoted, crate::search::clip(name, 256));
            return Err(format!("tools.$describe: no tool named {quoted}"));
        };
        Ok(Value::String(crate::code::render_declaration(
            &crate::code::SdkTool {
                name: tool.name(),
                description: tool.description(),
                parameters: tool.definition().sdk_parameters(),
                output: tool.definition().sdk_output(),
            },
        )))
    }

    /// Installs `rules`: a call without the scopes its tool needs is denied before the guards
    /// run, as a failure coded [`SCOPE_DENIED`](crate::error::codes::SCOPE_DENIED) (MCP clients
    /// read it in `_meta`; [`ScopeRules::guard`] as a plain guard denies without a code), and
    /// what callers are shown is filtered: a [search](Self::search) with a caller,
    /// `tool_search`, and an MCP server's `tools/list` leave out what they forbid it.
    pub fn scope_rules(&self, rules: ScopeRules) -> Registration {
        let id = self.id();
        let mut state = self.write();
        state.visibility.push((id, Arc::new(rules)));
        state.visibility_changed();
        drop(state);
        self.registration(Target::ScopeRules { id })
    }

    /// Defers, in every view, the tools `rule` names whose definitions do not say otherwise:
    /// they are left out of [`presented_schemas`](Self::presented_schemas) until a search
    /// loads them, and `tool_search` is presented in their place.
    pub fn defer_loading(&self, rule: DeferRule) {
        let mut state = self.write();
        state.global.defer_rules.push(rule);
        state.deferral = true;
    }

    /// The schemas sent to the model for `agent` in a conversation that has `loaded` these
    /// deferred tools: [`schemas`](Self::schemas) less the deferred tools not loaded, plus
    /// `tool_search` where the view defers any (not under `code`, where programs search).
    /// Without deferred tools it is exactly `schemas`.
    ///
    /// ```
    /// use dsh_tools::{OutputDecl, Registry, ToolDefinition, registry::LoadedTools};
    /// use serde_json::json;
    ///
    /// let registry = Registry::new();
    /// let tool = |name: &str| ToolDefinition::new(name, "d", json!({"type": "object"}),
    ///     OutputDecl::text(), |_, _| async { Ok(json!("")) });
    /// registry.register(tool("ping"))?.keep();
    /// registry.register(tool("archive").defer_loading(true))?.keep();
    /// let names = |loaded: &LoadedTools| -> Vec<String> {
    ///     registry.presented_schemas(None, loaded).unwrap().into_iter().map(|s| s.name).collect()
    /// };
    /// let mut loaded = LoadedTools::new();
    /// assert_eq!(names(&loaded), ["ping", "tool_search"]);
    /// loaded.load("archive");
    /// assert_eq!(names(&loaded), ["ping", "archive", "tool_search"]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn presented_schemas(
        &self,
        agent: Option<&AgentId>,
        loaded: &LoadedTools,
    ) -> Result<Vec<ToolSchema>, RegistrationError> {
        self.presented_schemas_by(agent, &|name| loaded.contains(name))
    }

    /// [`wire_tools`](Self::wire_tools) as a conversation that has `loaded` these deferred
    /// tools is shown them (see [`presented_schemas`](Self::presented_schemas)).
    pub fn presented_tools(
        &self,
        agent: Option<&AgentId>,
        loaded: &LoadedTools,
    ) -> Vec<Arc<RegisteredTool>> {
        let state = self.read();
        let mut tools = state.presented(agent, &|name| loaded.contains(name));
        if state.effective_mode(agent) == PresentationMode::Code {
            tools.retain(|t| t.name() == crate::code::RUN_CODE);
        }
        tools
    }
    /// The scope rules that hide tools from callers (see [`scope_rules`](Self::scope_rules)).
    #[cfg(feature = "mcp")]
    pub(crate) fn visibility_rules(&self) -> Vec<Arc<crate::call::ScopeRules>> {
        self.read()
            .visibility
            .iter()
            .map(|(_, rules)| Arc::clone(rules))
            .collect()
    }

    /// Every tool of `agent`'s view with whether it is deferred, as a provider's native
    /// deferral sends them (the provider, not the list, keeps what a search loaded):
    /// `tool_search` where the view defers any; under `code`, `run_code` alone.
    pub(crate) fn deferral_view(
        &self,
        agent: Option<&AgentId>,
    ) -> Vec<(Arc<RegisteredTool>, bool)> {
        let state = self.read();
        let mut tools = state.presented_marked(agent, &|_| true);
        if state.effective_mode(agent) == PresentationMode::Code {
            tools.retain(|(t, _)| t.name() == crate::code::RUN_CODE);
        }
        tools
    }
}

impl Scope {
    /// Defers, in this scope's view (and its children's), the tools `rule` names whose
    /// definitions do not say otherwise (see [`Registry::defer_loading`]).
    pub fn defer_loading(&self, rule: DeferRule) {
        let agent = self.agent().clone();
        let mut state = self.registry.write();
        state.layer_or_create(Some(&agent)).defer_rules.push(rule);
        state.deferral = true;
    }
}

/// The deferred tools one conversation has loaded: kept by the host with the conversation
/// (it is serializable) and passed to [`Registry::presented_schemas`] for every request.
///
/// ```
/// use dsh_tools::registry::LoadedTools;
///
/// let mut loaded = LoadedTools::new();
/// assert!(loaded.load("create_issue"));
/// assert!(!loaded.load("create_issue"));
/// let saved = serde_json::to_string(&loaded)?;
/// assert_eq!(saved, r#"["create_issue"]"#);
/// let back: LoadedTools = serde_json::from_str(&saved)?;
/// assert!(back.contains("create_issue"));
/// # Ok::<(), serde_json::Error>(())
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(transparent)]
pub struct LoadedTools {
    names: BTreeSet<String>,
}

impl LoadedTools {
    /// Nothing loaded.
    pub fn new() -> Self {
        Self::default()
    }

    /// Loads `name`; `false` if it was loaded already.
    pub fn load(&mut self, name: impl Into<String>) -> bool {
        self.names.insert(name.into())
    }

    /// Whether `name` is loaded.
    pub fn contains(&self, name: &str) -> bool {
        self.names.contains(name)
    }

    /// The loaded names, sorted.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.names.iter().map(String::as_str)
    }

    /// How many are loaded.
    pub fn len(&self) -> usize {
        self.names.len()
    }

    /// Whether none is.
    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }

    /// Loads what a call's result found, if the call (named `tool`) was a successful
    /// `tool_search`; returns how many names were new. Any other call's result loads nothing,
    /// whatever its value looks like.
    pub fn absorb(&mut self, tool: &str, result: &ToolExecutionResult) -> usize {
        if tool != TOOL_SEARCH {
            return 0;
        }
        let Some(found) = result
            .value()
            .and_then(|v| v.get("tools"))
            .and_then(Value::as_array)
        else {
            return 0;
        };
        found
            .iter()
            .filter_map(|t| t.get("name").and_then(Value::as_str))
            .filter(|name| self.load(*name))
            .count()
    }
}

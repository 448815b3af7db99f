//! Exporting a registry's tools to a dialect: the wire entries, the names each provider sees,
//! and what maps the model's arguments back ([`ProviderTools`]), with deferred tools in the
//! conversation's search form, refreshed request after request without a name changing tool.

use super::dialect::{Dialect, Provider};
use super::entry::entry;
use super::names::provider_names;
use super::parameters::export_checked;
use super::restore::{self, Plan};
use super::search::{self, ToolSearch};
use super::transform::{Change, Problem};
use crate::call::AgentId;
use crate::registry::{LoadedTools, Registry, TOOL_SEARCH};
use serde_json::{Value, json};
use std::collections::HashMap;
use std::sync::Arc;

/// One tool as exported: its names, the changes made, how its arguments map back.
#[derive(Clone, Debug)]
pub struct ExportedTool {
    ours: String,
    theirs: String,
    export: Arc<Exported>,
}

/// One schema's export to one dialect, kept with the registered tool (a definition does not
/// change while it is registered, so each tool is converted once per dialect, not once per
/// request).
#[derive(Debug)]
struct Exported {
    parameters: Value,
    changes: Vec<Change>,
    plan: Plan,
}

impl Drop for Exported {
    fn drop(&mut self) {
        crate::json::free(std::mem::take(&mut self.parameters));
    }
}

impl ExportedTool {
    /// Our name.
    pub fn name(&self) -> &str {
        &self.ours
    }

    /// The name the provider sees.
    pub fn provider_name(&self) -> &str {
        &self.theirs
    }

    /// Every change the transform made.
    pub fn changes(&self) -> &[Change] {
        &self.export.changes
    }
}

/// The tools of one request in one dialect: the wire entries, and the maps back.
#[derive(Clone, Debug)]
pub struct ProviderTools {
    dialect: Dialect,
    /// The agent whose view was exported: parsed calls run as this agent.
    agent: Option<AgentId>,
    tools: Vec<ExportedTool>,
    entries: Vec<Value>,
    by_provider_name: HashMap<String, usize>,
    skipped: Vec<(String, Problem)>,
    /// Every provider name this conversation has given, to which tool of ours: a later export
    /// through [`refresh`](Self::refresh) never gives one to another tool.
    given: Arc<HashMap<String, String>>,
    /// What the system prompt needs besides the tools (Code Mode's sections; empty otherwise).
    system_prompt: String,
    /// How the deferred tools are searched: `None` for an export of every tool.
    search: Option<ToolSearch>,
    /// The wire entries of deferred tools not sent in the list, by our name, with their
    /// namespaces (OpenAI Responses `Native`: a `tool_search_output` sends them).
    loadable: HashMap<String, (Value, Option<crate::definition::Namespace>)>,
}

/// Which tools an export lists.
#[derive(Clone, Copy)]
enum Listing<'a> {
    /// Every tool of the view.
    All,
    /// A conversation's: deferred tools searched as `ToolSearch` says (`loaded`: what its
    /// searches loaded, read by `ToolSearch::Function`).
    Searched(&'a LoadedTools, ToolSearch),
}

/// Tools a dialect cannot express: every problem, per tool.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("cannot export to {dialect}: {}", listing(problems))]
pub struct ExportError {
    /// The dialect.
    pub dialect: String,
    /// `(tool, problem)` pairs, in tool order.
    pub problems: Vec<(String, Problem)>,
}

/// Every problem as `tool "<name>" at <path>: <message>`, joined by `; `.
fn listing(problems: &[(String, Problem)]) -> String {
    let listed: Vec<String> = problems
        .iter()
        .map(|(tool, p)| format!("tool \"{tool}\" at {}: {}", p.path, p.message))
        .collect();
    listed.join("; ")
}

/// The memo key of a dialect's export.
fn memo_key(dialect: Dialect) -> u64 {
    (dialect.provider() as u64) << 1 | u64::from(dialect.is_strict())
}

/// A registry's tools exported to a provider's dialect: the provider adapter's extension of
/// [`Registry`] (`use dsh_tools::provider::ProviderExport` to call it as a method).
pub trait ProviderExport {
    /// The tools `agent` sees, exported to `dialect` (see the [module docs](crate::provider)).
    ///
    /// Fails with every problem of every tool when one cannot be expressed, except for tools
    /// marked [`skip_unexportable`](crate::ToolDefinition::skip_unexportable) (imported ones
    /// by default), which are left out and listed in [`ProviderTools::skipped`]. Each tool is
    /// converted once per dialect while it stays registered.
    ///
    /// Our names that fit the provider's rule are sent as they are; the others are mapped
    /// (`.` → `_`, suffixes on collision). For the next request of the same conversation use
    /// [`ProviderTools::refresh`], which keeps every name the conversation has seen.
    fn provider_tools(
        &self,
        agent: Option<&AgentId>,
        dialect: Dialect,
    ) -> Result<ProviderTools, ExportError>;

    /// [`provider_tools`](Self::provider_tools) for a conversation that has `loaded` these
    /// deferred tools, in the [`ToolSearch::Function`] form: the deferred tools it has not
    /// loaded are left out and the `tool_search` function stands in for them (see
    /// [`presented_schemas`](crate::Registry::presented_schemas)). Without deferred tools the export is
    /// exactly `provider_tools`'s. For the providers' own deferral see
    /// [`provider_tools_searched`](Self::provider_tools_searched).
    ///
    /// ```
    /// use dsh_tools::provider::{Dialect, Provider};
    /// use dsh_tools::provider::ProviderExport;
    /// use dsh_tools::registry::LoadedTools;
    /// use dsh_tools::{OutputDecl, Registry, ToolDefinition};
    /// use serde_json::json;
    ///
    /// let tool = |name: &str| ToolDefinition::new(name, "d", json!({"type": "object"}),
    ///     OutputDecl::text(), |_, _| async { Ok(json!("")) });
    /// let registry = Registry::new();
    /// registry.register(tool("ping"))?;
    /// registry.register(tool("archive").defer_loading(true))?;
    /// let tools = registry.provider_tools_loaded(None, Dialect::new(Provider::Anthropic), &LoadedTools::new())?;
    /// let names: Vec<&str> = tools.tools().iter().map(|t| t.name()).collect();
    /// assert_eq!(names, ["ping", "tool_search"]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    fn provider_tools_loaded(
        &self,
        agent: Option<&AgentId>,
        dialect: Dialect,
        loaded: &LoadedTools,
    ) -> Result<ProviderTools, ExportError>;

    /// The tools `agent` sees exported to `dialect` for a conversation, deferred tools
    /// presented in the `search` form (see [`ToolSearch`]; `loaded` is read by
    /// [`ToolSearch::Function`], the form of dialects without native deferral). Answer the
    /// model's searches with [`ProviderTools::format_results`], which gives a native search
    /// its native result. Without deferred tools the export is exactly
    /// [`provider_tools`](Self::provider_tools)'s.
    ///
    /// ```
    /// use dsh_tools::provider::{Dialect, Provider, ToolSearch};
    /// use dsh_tools::provider::ProviderExport;
    /// use dsh_tools::registry::LoadedTools;
    /// use dsh_tools::{OutputDecl, Registry, ToolDefinition};
    /// use serde_json::json;
    ///
    /// let tool = |name: &str| ToolDefinition::new(name, "d", json!({"type": "object"}),
    ///     OutputDecl::text(), |_, _| async { Ok(json!("")) });
    /// let registry = Registry::new();
    /// registry.register(tool("ping"))?;
    /// registry.register(tool("archive").defer_loading(true))?;
    /// let loaded = LoadedTools::new();
    ///
    /// // Anthropic: the deferred tool is sent marked, our search answers with tool references.
    /// let anthropic = Dialect::new(Provider::Anthropic);
    /// let tools = registry.provider_tools_searched(None, anthropic, &loaded, ToolSearch::Native)?;
    /// assert_eq!(tools.entries()[1]["name"], "archive");
    /// assert_eq!(tools.entries()[1]["defer_loading"], true);
    /// assert_eq!(tools.entries()[2]["name"], "tool_search");
    ///
    /// // OpenAI Responses: a client-executed tool search; the deferred tool is not sent.
    /// let responses = Dialect::new(Provider::OpenAiResponses);
    /// let tools = registry.provider_tools_searched(None, responses, &loaded, ToolSearch::Native)?;
    /// assert_eq!(tools.entries().len(), 2);
    /// assert_eq!(tools.entries()[1]["type"], "tool_search");
    /// assert_eq!(tools.entries()[1]["execution"], "client");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    fn provider_tools_searched(
        &self,
        agent: Option<&AgentId>,
        dialect: Dialect,
        loaded: &LoadedTools,
        search: ToolSearch,
    ) -> Result<ProviderTools, ExportError>;
}

impl ProviderExport for Registry {
    fn provider_tools(
        &self,
        agent: Option<&AgentId>,
        dialect: Dialect,
    ) -> Result<ProviderTools, ExportError> {
        export_with(self, agent, dialect, &HashMap::new(), Listing::All)
    }

    fn provider_tools_loaded(
        &self,
        agent: Option<&AgentId>,
        dialect: Dialect,
        loaded: &LoadedTools,
    ) -> Result<ProviderTools, ExportError> {
        let listing = Listing::Searched(loaded, ToolSearch::Function);
        export_with(self, agent, dialect, &HashMap::new(), listing)
    }

    fn provider_tools_searched(
        &self,
        agent: Option<&AgentId>,
        dialect: Dialect,
        loaded: &LoadedTools,
        search: ToolSearch,
    ) -> Result<ProviderTools, ExportError> {
        export_with(
            self,
            agent,
            dialect,
            &HashMap::new(),
            Listing::Searched(loaded, search),
        )
    }
}

fn export_with(
    registry: &Registry,
    agent: Option<&AgentId>,
    dialect: Dialect,
    given: &HashMap<String, String>,
    listing: Listing<'_>,
) -> Result<ProviderTools, ExportError> {
    type Memoized = Result<Arc<Exported>, Vec<Problem>>;
    let provider = dialect.provider();
    let (tools, form): (Vec<(Arc<crate::registry::RegisteredTool>, bool)>, _) = match listing {
        Listing::All => (unmarked(registry.wire_tools(agent)), None),
        Listing::Searched(loaded, search) => match search.for_provider(provider) {
            ToolSearch::Function => (
                unmarked(registry.presented_tools(agent, loaded)),
                Some(ToolSearch::Function),
            ),
            form => (registry.deferral_view(agent), Some(form)),
        },
    };
    let native = form.filter(|f| *f != ToolSearch::Function);
    let mut kept = Vec::with_capacity(tools.len());
    let mut problems = Vec::new();
    let mut skipped = Vec::new();
    for (tool, deferred) in &tools {
        let export = tool.memo.get_or_make::<Memoized>(memo_key(dialect), || {
            export_checked(tool.parameters(), dialect, tool.definition().bridged).map(
                |(parameters, changes, plan)| {
                    Arc::new(Exported {
                        parameters,
                        changes,
                        plan,
                    })
                },
            )
        });
        match &*export {
            Ok(export) => kept.push((tool, Arc::clone(export), *deferred)),
            Err(list) if tool.definition().skip_unexportable => {
                tracing::warn!(
                    "provider export to {dialect}: tool {:?} is left out: {}",
                    tool.name(),
                    list.first().map_or("", |p| p.message.as_str())
                );
                skipped.extend(list.iter().map(|p| (tool.name().to_owned(), p.clone())));
            }
            Err(list) => problems.extend(list.iter().map(|p| (tool.name().to_owned(), p.clone()))),
        }
    }
    // Code Mode: the prompt sections go with the tools (the runtime is checked here, as for
    // any assembly of a non-native scope).
    let system_prompt = match registry.code_prompt(agent) {
        Ok(prompt) => prompt,
        Err(e) => {
            problems.push((
                crate::code::RUN_CODE.to_owned(),
                Problem {
                    path: String::new(),
                    message: e.to_string(),
                },
            ));
            String::new()
        }
    };
    if !problems.is_empty() {
        return Err(ExportError {
            dialect: dialect.name(),
            problems,
        });
    }
    let ours: Vec<&str> = kept.iter().map(|(t, _, _)| t.name()).collect();
    let theirs = if native == Some(ToolSearch::Hosted) && provider == Provider::Anthropic {
        // Anthropic's own search tool takes its name: none of ours is given it.
        let mut reserved = given.clone();
        reserved.insert(search::ANTHROPIC_BM25.0.to_owned(), String::new());
        provider_names(&ours, &dialect.rules().name, &reserved)
    } else {
        provider_names(&ours, &dialect.rules().name, given)
    };
    let mut given = given.clone();
    let mut exported = Vec::with_capacity(kept.len());
    let mut entries = Vec::with_capacity(kept.len());
    let mut loadable = HashMap::new();
    let mut by_provider_name = HashMap::with_capacity(kept.len());
    for (i, ((tool, export, deferred), theirs)) in kept.into_iter().zip(theirs).enumerate() {
        let parameters = crate::json::clone_deep(&export.parameters);
        let namespace = tool.tool_namespace();
        if let Some(form) =
            native.filter(|f| tool.name() == TOOL_SEARCH && search::provider_searches(provider, *f))
        {
            let wire = search::search_entry(provider, form, tool.description(), parameters);
            entries.push((wire, None));
        } else {
            let mut wire = entry(dialect, &theirs, tool.description(), parameters);
            match (native, deferred) {
                (Some(ToolSearch::Native), true) if provider == Provider::OpenAiResponses => {
                    loadable.insert(tool.name().to_owned(), (wire, namespace.cloned()));
                }
                (Some(_), true) => {
                    search::mark_deferred(&mut wire);
                    entries.push((
                        wire,
                        namespace.filter(|_| provider == Provider::OpenAiResponses),
                    ));
                }
                _ => entries.push((wire, None)),
            }
        }
        by_provider_name.insert(theirs.clone(), i);
        given.insert(theirs.clone(), tool.name().to_owned());
        exported.push(ExportedTool {
            ours: tool.name().to_owned(),
            theirs,
            export,
        });
    }
    let entries = if provider == Provider::OpenAiResponses && native == Some(ToolSearch::Hosted) {
        search::grouped(entries)
    } else {
        entries.into_iter().map(|(e, _)| e).collect()
    };
    Ok(ProviderTools {
        dialect,
        agent: agent.cloned(),
        entries,
        by_provider_name,
        tools: exported,
        skipped,
        given: Arc::new(given),
        system_prompt,
        search: form,
        loadable,
    })
}

/// A list of tools, none marked deferred.
fn unmarked(
    tools: Vec<Arc<crate::registry::RegisteredTool>>,
) -> Vec<(Arc<crate::registry::RegisteredTool>, bool)> {
    tools.into_iter().map(|t| (t, false)).collect()
}

impl ProviderTools {
    /// What to add to the system prompt sent with these tools: under Code Mode (`code` or
    /// `both`) the sections of [`Registry::code_prompt`] (the `run_code`-only rule and the SDK
    /// text of the tools a program can call); empty for a native view.
    pub fn system_prompt(&self) -> &str {
        &self.system_prompt
    }

    /// The dialect.
    pub fn dialect(&self) -> Dialect {
        self.dialect
    }

    /// The agent whose view was exported (its calls run through its scope).
    pub fn agent(&self) -> Option<&AgentId> {
        self.agent.as_ref()
    }

    /// The provider's tool entries, in view order (the `tools` array for OpenAI and Anthropic;
    /// Gemini's `functionDeclarations`).
    pub fn entries(&self) -> &[Value] {
        &self.entries
    }

    /// Every exported tool, with its names and changes.
    pub fn tools(&self) -> &[ExportedTool] {
        &self.tools
    }

    /// The tool the provider calls `name`.
    pub fn by_provider_name(&self, name: &str) -> Option<&ExportedTool> {
        self.by_provider_name.get(name).map(|&i| &self.tools[i])
    }

    /// Our name of the tool this conversation gave the provider name `name`, current or gone.
    pub(super) fn given_to(&self, name: &str) -> Option<&str> {
        self.given.get(name).map(String::as_str)
    }

    /// Tools left out because the dialect cannot express them (those marked
    /// [`skip_unexportable`](crate::ToolDefinition::skip_unexportable)): `(tool, problem)`.
    pub fn skipped(&self) -> &[(String, Problem)] {
        &self.skipped
    }

    /// The same agent's tools exported again (for the next request of a conversation, after
    /// the registry changed): every provider name this export or an earlier one in the chain
    /// gave keeps meaning the same tool, and none is given to another, so a model's call by a
    /// name it saw earlier never runs a different tool.
    ///
    /// ```
    /// use dsh_tools::provider::{Dialect, Provider};
    /// use dsh_tools::provider::ProviderExport;
    /// use dsh_tools::{OutputDecl, Registry, ToolDefinition};
    /// use serde_json::json;
    ///
    /// let tool = |name: &str| ToolDefinition::new(name, "d", json!({"type": "object"}),
    ///     OutputDecl::text(), |_, _| async { Ok(json!("")) });
    /// let registry = Registry::new();
    /// registry.register(tool("a.b"))?;
    /// let first = registry.provider_tools(None, Dialect::new(Provider::Anthropic))?;
    /// assert_eq!(first.tools()[0].provider_name(), "a_b");
    /// registry.register(tool("a_b"))?;
    /// let next = first.refresh(&registry)?;
    /// // `a_b` still means `a.b` in this conversation; our `a_b` gets another name.
    /// assert_eq!(next.by_provider_name("a_b").unwrap().name(), "a.b");
    /// assert_eq!(next.by_provider_name("a_b_2").unwrap().name(), "a_b");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// An export made by [`ProviderExport::provider_tools_loaded`] is refreshed as the full list:
    /// refresh it with [`refresh_loaded`](Self::refresh_loaded) and the conversation's
    /// [`LoadedTools`](crate::registry::LoadedTools) instead.
    pub fn refresh(&self, registry: &Registry) -> Result<ProviderTools, ExportError> {
        export_with(
            registry,
            self.agent.as_ref(),
            self.dialect,
            &self.given,
            Listing::All,
        )
    }

    /// [`refresh`](Self::refresh) for a conversation that has now `loaded` these deferred
    /// tools, in this export's [`ToolSearch`] form (`Function` for an export of every tool;
    /// see [`ProviderExport::provider_tools_searched`]).
    pub fn refresh_loaded(
        &self,
        registry: &Registry,
        loaded: &LoadedTools,
    ) -> Result<ProviderTools, ExportError> {
        let form = self.search.unwrap_or(ToolSearch::Function);
        let listing = Listing::Searched(loaded, form);
        export_with(
            registry,
            self.agent.as_ref(),
            self.dialect,
            &self.given,
            listing,
        )
    }

    /// How this export presents deferred tools: `None` for an export of every tool
    /// ([`ProviderExport::provider_tools`]), else the form the dialect got.
    pub fn tool_search(&self) -> Option<ToolSearch> {
        self.search
    }

    /// The wire entry of a deferred tool this export did not list, by our name (OpenAI
    /// Responses [`Native`](ToolSearch::Native): a `tool_search_output` sends it).
    pub(super) fn loadable(
        &self,
        name: &str,
    ) -> Option<&(Value, Option<crate::definition::Namespace>)> {
        self.loadable.get(name)
    }

    /// The provider name this export gives our tool `name`.
    pub(super) fn provider_name_of(&self, name: &str) -> Option<&str> {
        self.tools
            .iter()
            .find(|t| t.ours == name)
            .map(|t| t.theirs.as_str())
    }

    /// The request fields that carry the tools: `{"tools": [...]}`, plus
    /// `"parallel_tool_calls": false` for OpenAI strict (strict mode is not compatible with
    /// parallel calls), or Gemini's `{"tools": [{"functionDeclarations": [...]}]}`.
    pub fn request_fields(&self) -> Value {
        match self.dialect.provider() {
            Provider::Gemini | Provider::GeminiOpenApi => {
                json!({"tools": [{"functionDeclarations": self.entries}]})
            }
            Provider::OpenAiChat | Provider::OpenAiResponses if self.dialect.is_strict() => {
                json!({"tools": self.entries, "parallel_tool_calls": false})
            }
            _ => json!({"tools": self.entries}),
        }
    }

    /// Maps arguments the model produced for the provider's tool `name` back to ours: strict
    /// mode's `null`s for optional fields become absent. Unknown names are left as they are.
    pub fn restore(&self, name: &str, arguments: &mut Value) {
        if let Some(tool) = self.by_provider_name(name) {
            restore::restore(arguments, &tool.export.plan, 0);
        }
    }
}

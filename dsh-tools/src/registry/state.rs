//! Registry state: layers, hooks, and the visibility algorithm (spec §5.2).

use super::{PresentationMode, RegisteredTool};
use crate::call::{
    AgentId, ApprovalService, DynPostHook, DynPreHook, ExecuteWrapper, Guard, ResultObserver,
};
use crate::code::CodeDispatchRecord;
use indexmap::IndexMap;
use std::collections::{HashMap, HashSet};
use std::sync::Arc;

/// How many sub-calls of one `run_code` program may dispatch at once unless set (spec §4.4.5).
pub const DEFAULT_MAX_PARALLEL_SUB_CALLS: usize = 10;

/// An observer of `run_code` sub-call records.
pub(crate) type CodeDispatchObserver = Arc<dyn Fn(&AgentId, &CodeDispatchRecord) + Send + Sync>;

pub(crate) struct Entry {
    pub(crate) id: u64,
    pub(crate) tool: Arc<RegisteredTool>,
}

pub(crate) struct RestrictionEntry {
    pub(crate) id: u64,
    pub(crate) allow: Option<HashSet<String>>,
    pub(crate) deny: Option<HashSet<String>>,
}

impl RestrictionEntry {
    pub(crate) fn admits(&self, name: &str) -> bool {
        self.allow.as_ref().is_none_or(|a| a.contains(name))
            && self.deny.as_ref().is_none_or(|d| !d.contains(name))
    }
}

/// One layer: the global one or an agent's.
#[derive(Default)]
pub(crate) struct Layer {
    pub(crate) tools: IndexMap<String, Entry, rustc_hash::FxBuildHasher>,
    pub(crate) restrictions: Vec<RestrictionEntry>,
    pub(crate) guards: Vec<(u64, Arc<dyn Guard>)>,
    pub(crate) mode: Option<PresentationMode>,
    /// Which of the tools this layer's view shows wait for a search.
    pub(crate) defer_rules: Vec<super::catalog::DeferRule>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum HookKind {
    Pre,
    Execute,
    Post,
    Result,
}

pub(crate) enum AnyHook {
    Pre(Arc<dyn DynPreHook>),
    Execute(Arc<dyn ExecuteWrapper>),
    Post(Arc<dyn DynPostHook>),
    Result(Arc<dyn ResultObserver>),
}

struct HookEntry<T: ?Sized> {
    id: u64,
    scope: Option<AgentId>,
    hook: Arc<T>,
}

/// One hook kind's registrations, in order (first = outermost), with the unscoped ones cached
/// as a shared slice so a call without scoped hooks takes them without allocating.
struct HookList<T: ?Sized> {
    entries: Vec<HookEntry<T>>,
    unscoped: Arc<[Arc<T>]>,
    any_scoped: bool,
}

impl<T: ?Sized> Default for HookList<T> {
    fn default() -> Self {
        Self {
            entries: Vec::new(),
            unscoped: Arc::from(Vec::new()),
            any_scoped: false,
        }
    }
}

impl<T: ?Sized> HookList<T> {
    fn refresh(&mut self) {
        self.unscoped = self
            .entries
            .iter()
            .filter(|e| e.scope.is_none())
            .map(|e| Arc::clone(&e.hook))
            .collect();
        self.any_scoped = self.entries.iter().any(|e| e.scope.is_some());
    }

    fn add(&mut self, id: u64, scope: Option<AgentId>, first: bool, hook: Arc<T>) {
        let entry = HookEntry { id, scope, hook };
        if first {
            self.entries.insert(0, entry);
        } else {
            self.entries.push(entry);
        }
        self.refresh();
    }

    fn remove(&mut self, id: u64) {
        self.entries.retain(|e| e.id != id);
        self.refresh();
    }

    fn remove_scope(&mut self, agent: &AgentId) {
        self.entries.retain(|e| e.scope.as_ref() != Some(agent));
        self.refresh();
    }

    /// Unscoped hooks plus those of the call's agent and its ancestors, in order.
    fn admitted(&self, chain: &[AgentId]) -> Arc<[Arc<T>]> {
        if !self.any_scoped || chain.is_empty() {
            return Arc::clone(&self.unscoped);
        }
        self.entries
            .iter()
            .filter(|e| e.scope.as_ref().is_none_or(|s| chain.contains(s)))
            .map(|e| Arc::clone(&e.hook))
            .collect()
    }
}

#[derive(Default)]
pub(crate) struct Hooks {
    pre: HookList<dyn DynPreHook>,
    execute: HookList<dyn ExecuteWrapper>,
    post: HookList<dyn DynPostHook>,
    result: HookList<dyn ResultObserver>,
}

impl Hooks {
    fn any_scoped(&self) -> bool {
        self.pre.any_scoped
            || self.execute.any_scoped
            || self.post.any_scoped
            || self.result.any_scoped
    }

    pub(crate) fn add(
        &mut self,
        kind: HookKind,
        id: u64,
        scope: Option<AgentId>,
        first: bool,
        hook: AnyHook,
    ) {
        let _ = kind;
        match hook {
            AnyHook::Pre(h) => self.pre.add(id, scope, first, h),
            AnyHook::Execute(h) => self.execute.add(id, scope, first, h),
            AnyHook::Post(h) => self.post.add(id, scope, first, h),
            AnyHook::Result(h) => self.result.add(id, scope, first, h),
        }
    }

    pub(crate) fn remove(&mut self, kind: HookKind, id: u64) {
        match kind {
            HookKind::Pre => self.pre.remove(id),
            HookKind::Execute => self.execute.remove(id),
            HookKind::Post => self.post.remove(id),
            HookKind::Result => self.result.remove(id),
        }
    }

    pub(crate) fn remove_scope(&mut self, agent: &AgentId) {
        self.pre.remove_scope(agent);
        self.execute.remove_scope(agent);
        self.post.remove_scope(agent);
        self.result.remove_scope(agent);
    }
}

/// Everything one call needs from the registry, taken under one read lock.
#[derive(Default)]
pub(crate) struct Admitted {
    pub(crate) pre: Arc<[Arc<dyn DynPreHook>]>,
    pub(crate) execute: Arc<[Arc<dyn ExecuteWrapper>]>,
    pub(crate) post: Arc<[Arc<dyn DynPostHook>]>,
    pub(crate) result: Arc<[Arc<dyn ResultObserver>]>,
    pub(crate) approval: Option<Arc<dyn ApprovalService>>,
}

pub(crate) struct State {
    pub(crate) global: Layer,
    pub(crate) scopes: HashMap<AgentId, Layer>,
    pub(crate) parents: HashMap<AgentId, AgentId>,
    pub(crate) mode: PresentationMode,
    pub(crate) approval: Option<Arc<dyn ApprovalService>>,
    pub(crate) hooks: Hooks,
    /// What a call without scoped hooks admits, rebuilt on every hook or approval change so
    /// such a call takes one `Arc` instead of five.
    unscoped: Arc<Admitted>,
    /// The global layer's guards, shared by every call (rebuilt when they change).
    global_guards: Arc<[Arc<dyn Guard>]>,
    /// The rules of `visibility`, as every call checks them (rebuilt when they change).
    scope_checks: Arc<[Arc<crate::call::ScopeRules>]>,
    /// The argument repairs switched on, in order ([`Registry::repair`](super::Registry::repair)).
    pub(crate) repairs: Arc<[crate::call::Repair]>,
    /// The host's repair hook ([`Registry::on_invalid_call`](super::Registry::on_invalid_call)).
    pub(crate) repair_hook: Option<crate::call::RepairHook>,
    pub(crate) change_listeners: Vec<(u64, super::ChangeListener)>,
    /// The runtime `run_code` programs run on.
    pub(crate) code_runtime: Option<Arc<dyn crate::code::CodeRuntime>>,
    /// The one `run_code` definition every code or both scope presents.
    pub(crate) run_code: Option<Arc<RegisteredTool>>,
    /// How many `run_code` sub-calls may dispatch at once (Code Mode spec §4.4.5).
    pub(crate) max_parallel_sub_calls: usize,
    /// What a `run_code` run may hold on the host besides its engine.
    pub(crate) code_host_limits: crate::code::CodeHostLimits,
    /// Where deferred approvals wait.
    pub(crate) approval_store: Arc<dyn crate::call::ApprovalStore>,
    /// Observers of the records of `run_code` sub-calls (spec §4.8).
    pub(crate) code_dispatch_observers: Vec<(u64, CodeDispatchObserver)>,
    /// The search index, once something searched.
    pub(crate) catalog: Option<super::catalog::Catalog>,
    /// Whether a tool or a rule ever deferred loading (then `tool_search` resolves).
    pub(crate) deferral: bool,
    /// The one `tool_search` definition every view with deferred tools presents.
    pub(crate) tool_search: Option<Arc<RegisteredTool>>,
    /// Scope rules that hide from a caller the tools it may not call (in searches, in
    /// `tool_search` and in a program's `$search` / `$describe`).
    pub(crate) visibility: Vec<(u64, Arc<crate::call::ScopeRules>)>,
}

impl Default for State {
    fn default() -> Self {
        Self {
            global: Layer::default(),
            scopes: HashMap::new(),
            parents: HashMap::new(),
            mode: PresentationMode::default(),
            approval: None,
            hooks: Hooks::default(),
            unscoped: Arc::default(),
            global_guards: Arc::from(Vec::new()),
            scope_checks: Arc::from(Vec::new()),
            repairs: Arc::from(Vec::new()),
            repair_hook: None,
            change_listeners: Vec::new(),
            code_runtime: None,
            run_code: run_code_tool(),
            max_parallel_sub_calls: DEFAULT_MAX_PARALLEL_SUB_CALLS,
            code_host_limits: crate::code::CodeHostLimits::default(),
            approval_store: Arc::new(crate::call::MemoryApprovalStore::default()),
            code_dispatch_observers: Vec::new(),
            catalog: None,
            deferral: false,
            tool_search: builtin(super::tool_search::definition()),
            visibility: Vec::new(),
        }
    }
}

impl State {
    pub(crate) fn layer_mut(&mut self, scope: Option<&AgentId>) -> Option<&mut Layer> {
        match scope {
            None => Some(&mut self.global),
            Some(a) => self.scopes.get_mut(a),
        }
    }

    pub(crate) fn layer_or_create(&mut self, scope: Option<&AgentId>) -> &mut Layer {
        match scope {
            None => &mut self.global,
            Some(a) => self.scopes.entry(a.clone()).or_default(),
        }
    }

    /// The agent's chain, farthest ancestor first, the agent last. Empty without an agent.
    pub(crate) fn chain(&self, agent: Option<&AgentId>) -> Vec<AgentId> {
        let Some(agent) = agent else {
            return Vec::new();
        };
        let mut chain = vec![agent.clone()];
        // Cycle detection: a scan while the chain is short, a set once it is long (a chain of
        // 30,000 scopes stays linear).
        let mut seen: Option<rustc_hash::FxHashSet<AgentId>> = None;
        let mut cur = agent;
        while let Some(parent) = self.parents.get(cur) {
            let repeat = match &mut seen {
                Some(set) => !set.insert(parent.clone()),
                None => {
                    let repeat = chain.contains(parent);
                    if !repeat && chain.len() >= 16 {
                        let mut set: rustc_hash::FxHashSet<AgentId> =
                            chain.iter().cloned().collect();
                        set.insert(parent.clone());
                        seen = Some(set);
                    }
                    repeat
                }
            };
            if repeat {
                break; // a cycle in the parent links: stop at the first repeat
            }
            chain.push(parent.clone());
            cur = parent;
        }
        chain.reverse();
        chain
    }

    /// The tool `name` resolves to for `agent` (spec §5.2 / §5.4); `run_code` in a scope whose
    /// effective mode is `code` or `both`.
    pub(crate) fn resolve(
        &self,
        name: &str,
        agent: Option<&AgentId>,
    ) -> Option<&Arc<RegisteredTool>> {
        if name == crate::code::RUN_CODE {
            return (self.effective_mode(agent) != PresentationMode::Native)
                .then_some(self.run_code.as_ref())
                .flatten();
        }
        if name == super::tool_search::TOOL_SEARCH {
            return self.tool_search.as_ref().filter(|_| self.deferral);
        }
        let Some(agent) = agent else {
            return self.global.tools.get(name).map(|e| &e.tool);
        };
        if let Some(e) = self.scopes.get(agent).and_then(|l| l.tools.get(name)) {
            return Some(&e.tool);
        }
        let chain = self.chain(Some(agent));
        let inherited = chain[..chain.len() - 1]
            .iter()
            .rev()
            .find_map(|a| self.scopes.get(a)?.tools.get(name))
            .or_else(|| self.global.tools.get(name))?;
        chain
            .iter()
            .all(|a| self.scopes.get(a).is_none_or(|l| l.admits(name)))
            .then_some(&inherited.tool)
    }

    /// The visible tools in view order (spec §5.2), `run_code` last where the effective mode is
    /// `code` or `both`.
    pub(crate) fn view(&self, agent: Option<&AgentId>) -> Vec<Arc<RegisteredTool>> {
        let mut view = self.native_view(agent);
        if self.effective_mode(agent) != PresentationMode::Native
            && let Some(run_code) = &self.run_code
        {
            view.push(Arc::clone(run_code));
        }
        view
    }

    /// The [view](Self::view) as the model is shown it: the deferred tools `loaded` does not
    /// name left out, and `tool_search` (before `run_code`) where the view defers any and the
    /// mode is not `code` (where programs search instead).
    pub(crate) fn presented(
        &self,
        agent: Option<&AgentId>,
        loaded: &dyn Fn(&str) -> bool,
    ) -> Vec<Arc<RegisteredTool>> {
        self.presented_marked(agent, loaded)
            .into_iter()
            .map(|(tool, _)| tool)
            .collect()
    }

    /// [`presented`](Self::presented), each tool with whether the view defers it (`tool_search`
    /// and `run_code` are never deferred).
    pub(crate) fn presented_marked(
        &self,
        agent: Option<&AgentId>,
        loaded: &dyn Fn(&str) -> bool,
    ) -> Vec<(Arc<RegisteredTool>, bool)> {
        let mode = self.effective_mode(agent);
        let view = self.native_view(agent);
        let mut marked: Vec<(Arc<RegisteredTool>, bool)> = if self.deferral {
            let chain = self.chain(agent);
            let mut any = false;
            let mut marked: Vec<_> = view
                .into_iter()
                .filter_map(|tool| {
                    let deferred = self.deferred(&tool, &chain);
                    any |= deferred;
                    (!deferred || loaded(&tool.definition.name)).then_some((tool, deferred))
                })
                .collect();
            if any
                && mode != PresentationMode::Code
                && let Some(search) = &self.tool_search
            {
                marked.push((Arc::clone(search), false));
            }
            marked
        } else {
            view.into_iter().map(|tool| (tool, false)).collect()
        };
        if mode != PresentationMode::Native
            && let Some(run_code) = &self.run_code
        {
            marked.push((Arc::clone(run_code), false));
        }
        marked
    }

    /// The registered tools visible to `agent`, in view order.
    fn native_view(&self, agent: Option<&AgentId>) -> Vec<Arc<RegisteredTool>> {
        let Some(agent) = agent else {
            return self
                .global
                .tools
                .values()
                .map(|e| Arc::clone(&e.tool))
                .collect();
        };
        let chain = self.chain(Some(agent));
        let mut inherited: IndexMap<&str, &Arc<RegisteredTool>> = IndexMap::new();
        let layers = std::iter::once(&self.global).chain(
            chain[..chain.len() - 1]
                .iter()
                .filter_map(|a| self.scopes.get(a)),
        );
        for layer in layers {
            for (name, e) in &layer.tools {
                inherited.insert(name.as_str(), &e.tool);
            }
        }
        inherited.retain(|name, _| {
            chain
                .iter()
                .all(|a| self.scopes.get(a).is_none_or(|l| l.admits(name)))
        });
        if let Some(own) = self.scopes.get(agent) {
            for (name, e) in &own.tools {
                inherited.insert(name.as_str(), &e.tool);
            }
        }
        inherited.into_values().map(Arc::clone).collect()
    }

    /// Inherited names (global and ancestors), which restrictions may name.
    pub(crate) fn restrictable_names(&self, agent: &AgentId) -> HashSet<&str> {
        let chain = self.chain(Some(agent));
        let mut names: HashSet<&str> = self.global.tools.keys().map(String::as_str).collect();
        for a in &chain[..chain.len() - 1] {
            if let Some(layer) = self.scopes.get(a) {
                names.extend(layer.tools.keys().map(String::as_str));
            }
        }
        names
    }

    /// The nearest declared presentation mode on the chain, else the registry's.
    pub(crate) fn effective_mode(&self, agent: Option<&AgentId>) -> PresentationMode {
        self.chain(agent)
            .iter()
            .rev()
            .find_map(|a| self.scopes.get(a)?.mode)
            .unwrap_or(self.mode)
    }

    /// Guards in evaluation order: global ones, then each chain layer's, farthest first.
    pub(crate) fn guards(&self, chain: &[AgentId]) -> Arc<[Arc<dyn Guard>]> {
        let scoped = chain
            .iter()
            .filter_map(|a| self.scopes.get(a))
            .any(|l| !l.guards.is_empty());
        if !scoped {
            return Arc::clone(&self.global_guards);
        }
        let mut out: Vec<Arc<dyn Guard>> = self.global_guards.to_vec();
        for a in chain {
            if let Some(layer) = self.scopes.get(a) {
                out.extend(layer.guards.iter().map(|g| Arc::clone(&g.1)));
            }
        }
        out.into()
    }

    /// The argument repairs switched on, in order.
    pub(crate) fn repairs(&self) -> Arc<[crate::call::Repair]> {
        Arc::clone(&self.repairs)
    }

    /// The scope rules every call is checked against, in registration order.
    pub(crate) fn scope_checks(&self) -> Arc<[Arc<crate::call::ScopeRules>]> {
        Arc::clone(&self.scope_checks)
    }

    /// Rebuilds [`scope_checks`](Self::scope_checks) after `visibility` changed.
    pub(crate) fn visibility_changed(&mut self) {
        self.scope_checks = self.visibility.iter().map(|(_, r)| Arc::clone(r)).collect();
    }

    /// Call after changing the global layer's guards.
    pub(crate) fn guards_changed(&mut self) {
        self.global_guards = self
            .global
            .guards
            .iter()
            .map(|g| Arc::clone(&g.1))
            .collect();
    }

    pub(crate) fn admitted(&self, chain: &[AgentId]) -> Arc<Admitted> {
        if chain.is_empty() || !self.hooks.any_scoped() {
            return Arc::clone(&self.unscoped);
        }
        Arc::new(self.build_admitted(chain))
    }

    fn build_admitted(&self, chain: &[AgentId]) -> Admitted {
        Admitted {
            pre: self.hooks.pre.admitted(chain),
            execute: self.hooks.execute.admitted(chain),
            post: self.hooks.post.admitted(chain),
            result: self.hooks.result.admitted(chain),
            approval: self.approval.clone(),
        }
    }

    /// Call after changing hooks or the approval service.
    pub(crate) fn hooks_changed(&mut self) {
        self.unscoped = Arc::new(self.build_admitted(&[]));
    }
}

impl State {
    /// Call after a tool entered a layer under registration `id`.
    pub(crate) fn tool_added(&mut self, id: u64, tool: &Arc<RegisteredTool>) {
        if tool.definition.defer_loading == Some(true) {
            self.deferral = true;
        }
        if let Some(catalog) = &mut self.catalog {
            catalog.insert(id, tool);
        }
    }

    /// Call after registration `id`'s tool left its layer.
    pub(crate) fn tool_removed(&mut self, id: u64) {
        if let Some(catalog) = &mut self.catalog {
            catalog.remove(id);
        }
    }

    /// Builds the search index from every layer, if it is not built yet; kept current after.
    pub(crate) fn enable_catalog(&mut self) {
        if self.catalog.is_some() {
            return;
        }
        let mut catalog = super::catalog::Catalog::default();
        for layer in std::iter::once(&self.global).chain(self.scopes.values()) {
            for entry in layer.tools.values() {
                catalog.insert(entry.id, &entry.tool);
            }
        }
        self.catalog = Some(catalog);
    }

    /// Whether `tool` waits for a search in the view of the agent whose chain is `chain`: its
    /// own setting, else a rule of the global layer or of a layer on the chain.
    pub(crate) fn deferred(&self, tool: &RegisteredTool, chain: &[AgentId]) -> bool {
        tool.definition.defer_loading.unwrap_or_else(|| {
            std::iter::once(&self.global)
                .chain(chain.iter().filter_map(|a| self.scopes.get(a)))
                .any(|layer| layer.defer_rules.iter().any(|rule| rule.defers(tool)))
        })
    }
}

impl Layer {
    pub(crate) fn admits(&self, name: &str) -> bool {
        self.restrictions.iter().all(|r| r.admits(name))
    }
}

/// The shared `run_code` tool (its output schema compiles: it is a fixed schema).
fn run_code_tool() -> Option<Arc<RegisteredTool>> {
    builtin(crate::run_code::definition())
}

/// A built-in definition, registered nowhere (its output schema is fixed and compiles).
fn builtin(definition: crate::definition::ToolDefinition) -> Option<Arc<RegisteredTool>> {
    let output = crate::schema::OutputSchema::new(&definition.output.schema).ok()?;
    Some(Arc::new(RegisteredTool {
        definition,
        output,
        memo: super::tools::Memo::default(),
    }))
}

//! Guards, middleware hooks and result observers on the global layer (a scope's are in
//! `scope.rs`).

use super::handle::{Registration, Registry, Target};
use super::state::{self, HookKind};
use crate::call::{
    AgentId, ExecuteWrapper, Guard, PostExecuteHook, PreExecuteHook, ResultObserver,
};
use std::sync::Arc;

impl Registry {
    /// Adds a global guard (applies to every call).
    pub fn guard(&self, guard: impl Guard) -> Registration {
        self.add_guard(None, Arc::new(guard))
    }

    pub(super) fn add_guard(&self, scope: Option<AgentId>, guard: Arc<dyn Guard>) -> Registration {
        let id = self.id();
        let mut state = self.write();
        state
            .layer_or_create(scope.as_ref())
            .guards
            .push((id, guard));
        state.guards_changed();
        drop(state);
        self.registration(Target::Guard { scope, id })
    }

    pub(super) fn add_hook(
        &self,
        kind: HookKind,
        scope: Option<AgentId>,
        first: bool,
        hook: state::AnyHook,
    ) -> Registration {
        let id = self.id();
        let mut state = self.write();
        state.hooks.add(kind, id, scope, first, hook);
        state.hooks_changed();
        drop(state);
        self.registration(Target::Hook { kind, id })
    }

    /// Adds a global `pre-execute` hook (innermost of those registered so far).
    pub fn on_pre_execute(&self, hook: impl PreExecuteHook) -> Registration {
        self.add_hook(
            HookKind::Pre,
            None,
            false,
            state::AnyHook::Pre(Arc::new(hook)),
        )
    }

    /// Adds a global `pre-execute` hook as the outermost one.
    pub fn on_pre_execute_first(&self, hook: impl PreExecuteHook) -> Registration {
        self.add_hook(
            HookKind::Pre,
            None,
            true,
            state::AnyHook::Pre(Arc::new(hook)),
        )
    }

    /// Adds a global around-dispatch wrapper (innermost of those registered so far).
    pub fn on_execute(&self, wrapper: impl ExecuteWrapper) -> Registration {
        self.add_hook(
            HookKind::Execute,
            None,
            false,
            state::AnyHook::Execute(Arc::new(wrapper)),
        )
    }

    /// Adds a global around-dispatch wrapper as the outermost one.
    pub fn on_execute_first(&self, wrapper: impl ExecuteWrapper) -> Registration {
        self.add_hook(
            HookKind::Execute,
            None,
            true,
            state::AnyHook::Execute(Arc::new(wrapper)),
        )
    }

    /// Adds a global `post-execute` hook.
    pub fn on_post_execute(&self, hook: impl PostExecuteHook) -> Registration {
        self.add_hook(
            HookKind::Post,
            None,
            false,
            state::AnyHook::Post(Arc::new(hook)),
        )
    }

    /// Adds a global `post-execute` hook as the outermost one.
    pub fn on_post_execute_first(&self, hook: impl PostExecuteHook) -> Registration {
        self.add_hook(
            HookKind::Post,
            None,
            true,
            state::AnyHook::Post(Arc::new(hook)),
        )
    }

    /// Adds a global result observer.
    pub fn on_result(&self, observer: impl ResultObserver) -> Registration {
        self.add_hook(
            HookKind::Result,
            None,
            false,
            state::AnyHook::Result(Arc::new(observer)),
        )
    }
}

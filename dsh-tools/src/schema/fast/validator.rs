//! A type's whole arguments validator ([`ArgsValidator`]): the generated check where its shape
//! matches the bridged schema, the interpreter for everything else and for every message; and
//! what `#[tool]` declares as a tool's generated check ([`Generated`]).

use super::check::{CheckFn, FastCheck, Fns};
use super::generated::Members;
use super::shape::same_shape;
use crate::schema::bridge::{self, BridgeError};
use crate::schema::{CompiledSchema, Root};
use schemars::JsonSchema;
use serde_json::Value;
use std::sync::Arc;

/// A tool's generated check of its arguments, as `#[tool]` declares it.
#[doc(hidden)]
#[derive(Clone, Copy)]
pub enum Generated {
    /// The arguments type's own [`FastCheck`] (or [`Fns::none`]).
    Code(Fns),
    /// A member table (the inline form's arguments).
    Members(&'static Members),
    /// None, and why.
    Unsupported(&'static str),
}

impl Generated {
    fn shape(&self, closed: bool) -> Result<Value, String> {
        match self {
            Generated::Code(fns) => (fns.shape)(closed),
            Generated::Members(members) => members.shape(closed),
            Generated::Unsupported(why) => Err((*why).to_owned()),
        }
    }
}

/// A type's arguments validator: the generated check where its shape matches the bridged
/// schema, the interpreter for everything else and for every message.
#[derive(Clone)]
pub struct ArgsValidator {
    compiled: Arc<CompiledSchema>,
    /// The generated check in use: a type's own code (one indirect call, no match first) …
    code: Option<CheckFn>,
    /// … or a member table.
    members: Option<&'static Members>,
    /// Why neither is used (`None` when one is).
    why: Option<Arc<str>>,
    closed: bool,
}

impl std::fmt::Debug for ArgsValidator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ArgsValidator")
            .field("fast_path", &self.fast_path())
            .finish_non_exhaustive()
    }
}

impl ArgsValidator {
    /// The validator of `T`'s bridged arguments schema (as `#[tool]` builds it;
    /// `allow_unknown` as `#[tool(allow_unknown_args)]`).
    pub fn of<T: FastCheck + JsonSchema>(allow_unknown: bool) -> Result<Self, BridgeError> {
        let parameters = bridge::schema_for_args::<T>(allow_unknown)?;
        let compiled = CompiledSchema::compile(&parameters).map_err(|e| {
            BridgeError::internal(format!("bridged parameters do not compile: {e}"))
        })?;
        Ok(Self::new(
            &parameters,
            Arc::new(compiled),
            Some(Generated::Code(Fns::of::<T>())),
            allow_unknown,
            std::any::type_name::<T>(),
        ))
    }

    /// Decides, once, whether `fns` may stand in for `compiled` (the compiled `parameters`).
    pub(crate) fn new(
        parameters: &Value,
        compiled: Arc<CompiledSchema>,
        generated: Option<Generated>,
        allow_unknown: bool,
        type_name: &str,
    ) -> Self {
        let closed = !allow_unknown;
        let fast = match generated {
            None => Err("the tool declares no generated check".to_owned()),
            // A value the interpreter admits at any depth is not a shape the derive emits, but
            // say so rather than rely on it: the depth rule in `check_args` needs the interpreter.
            Some(_) if compiled.admits_any => Err("the schema admits any value".to_owned()),
            Some(generated) => generated
                .shape(closed)
                .and_then(|shape| same_shape(parameters, &shape))
                .map(|()| generated),
        };
        if let Err(why) = &fast {
            tracing::debug!(
                target: "dsh_tools::schema::fast",
                "`{type_name}` is validated by the interpreter: {why}"
            );
        }
        let (code, members, why) = match fast {
            Ok(Generated::Code(fns)) => (Some(fns.check), None, None),
            Ok(Generated::Members(members)) => (None, Some(members), None),
            Ok(Generated::Unsupported(why)) => (None, None, Some(Arc::from(why))),
            Err(why) => (None, None, Some(Arc::from(why))),
        };
        ArgsValidator {
            compiled,
            code,
            members,
            why,
            closed,
        }
    }

    /// `Ok` when valid arguments are decided by generated code; `Err` says why not.
    pub fn fast_path(&self) -> Result<(), &str> {
        match &self.why {
            None => Ok(()),
            Some(why) => Err(why),
        }
    }

    /// The compiled schema behind it.
    pub fn compiled(&self) -> &CompiledSchema {
        &self.compiled
    }

    /// Whether `args` are valid.
    #[inline]
    pub fn is_valid(&self, args: &Value) -> bool {
        self.fast_accepts(args) || self.compiled.is_valid(args)
    }

    /// Every violation of `args` (parameter-root paths, the interpreter's messages); `Ok` when
    /// valid.
    #[inline]
    pub fn validate(&self, args: &Value) -> Result<(), Vec<String>> {
        match self.fast(args) {
            Some(true) => Ok(()),
            // The generated check is exact: straight to the collector, without the
            // interpreter's own yes/no pass first.
            Some(false) => self.list(args),
            None => self.interpret(args),
        }
    }

    /// The generated check's answer (`None` without one).
    #[inline]
    fn fast(&self, args: &Value) -> Option<bool> {
        if let Some(check) = self.code {
            return Some(check(args, self.closed));
        }
        self.members.map(|members| members.check(args, self.closed))
    }

    /// Whether the generated check accepts `args` (`false` without one).
    #[inline]
    fn fast_accepts(&self, args: &Value) -> bool {
        self.fast(args) == Some(true)
    }

    /// Every violation, listed by the collector (an empty list means valid after all).
    #[cold]
    #[inline(never)]
    fn list(&self, args: &Value) -> Result<(), Vec<String>> {
        let violations = self.compiled.collect(args, Root::Parameters);
        if violations.is_empty() {
            Ok(())
        } else {
            Err(violations)
        }
    }

    /// The interpreter's verdict, with every violation.
    #[inline(never)]
    fn interpret(&self, args: &Value) -> Result<(), Vec<String>> {
        let violations = self.compiled.validate_at(args, Root::Parameters);
        if violations.is_empty() {
            Ok(())
        } else {
            Err(violations)
        }
    }

    /// The generated check alone (`None` without one): for differential tests.
    pub fn fast_is_valid(&self, args: &Value) -> Option<bool> {
        self.fast(args)
    }
}

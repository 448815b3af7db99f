//! Picking a member type's check at compile time, without naming a trait: a [`Probe`] finds
//! [`Yes`] when the type implements [`FastCheck`] and [`No`] otherwise, and [`fns_of`] / [`field`]
//! turn the pick into constant [`Fns`].

use super::check::{FastCheck, Field, Fns};
use serde_json::Value;
use std::marker::PhantomData;

/// Picks `T`'s checker where `T` is a concrete type: `Probe::<T>::NEW.checker()` is
/// [`Yes<T>`] when `T: FastCheck` (the inherent method, its bound met) and [`No<T>`] otherwise
/// (method lookup goes on through `Deref` to [`ProbeNone`]). No trait has to be in scope.
#[doc(hidden)]
pub struct Probe<T: ?Sized>(PhantomData<fn() -> Box<T>>);

impl<T: ?Sized> Probe<T> {
    pub const NEW: Self = Probe(PhantomData);
}

impl<T: FastCheck + ?Sized> Probe<T> {
    #[inline]
    pub fn checker(&self) -> Yes<T> {
        Yes(PhantomData)
    }
}

impl<T: ?Sized> std::ops::Deref for Probe<T> {
    type Target = ProbeNone<T>;
    #[inline]
    fn deref(&self) -> &ProbeNone<T> {
        &ProbeNone(PhantomData)
    }
}

/// Where a [`Probe`] of a type without [`FastCheck`] finds its `checker`.
#[doc(hidden)]
pub struct ProbeNone<T: ?Sized>(PhantomData<fn() -> Box<T>>);

impl<T: ?Sized> ProbeNone<T> {
    #[inline]
    pub fn checker(&self) -> No<T> {
        No(PhantomData)
    }
}

/// A member type with a generated check: calls go straight to it.
#[doc(hidden)]
pub struct Yes<T: ?Sized>(PhantomData<fn() -> Box<T>>);

impl<T: FastCheck + ?Sized> Yes<T> {
    #[inline]
    pub fn fns(&self) -> Fns {
        Fns::of::<T>()
    }
    #[inline]
    pub fn optional(&self) -> bool {
        T::OPTIONAL
    }
    #[inline]
    pub fn check(&self, v: &Value) -> bool {
        T::fast_check(v, false)
    }
}

/// A member type without one: its shape says why, its check is never used.
#[doc(hidden)]
pub struct No<T: ?Sized>(PhantomData<fn() -> Box<T>>);

impl<T: ?Sized> No<T> {
    #[inline]
    pub fn fns(&self) -> Fns {
        Fns::none::<T>()
    }
    #[inline]
    pub fn optional(&self) -> bool {
        false
    }
    #[inline]
    pub fn check(&self, _: &Value) -> bool {
        false
    }
}

/// The [`Fns`] of a checker type, known at compile time.
#[doc(hidden)]
pub trait CheckerFns {
    const FNS: Fns;
}

impl<T: FastCheck + ?Sized> CheckerFns for Yes<T> {
    const FNS: Fns = Fns::of::<T>();
}

impl<T: ?Sized> CheckerFns for No<T> {
    const FNS: Fns = Fns::none::<T>();
}

/// The [`Fns`] of the checker a probe picks, in a constant: `fns_of(&|| Probe::<T>::NEW
/// .checker())`. The closure is never called (nor compiled to code): its return type is the
/// pick.
#[doc(hidden)]
pub const fn fns_of<C: CheckerFns, F: Fn() -> C>(_probe: &F) -> Fns {
    C::FNS
}

/// A member of a compact table, its check picked by a probe as in [`fns_of`].
#[doc(hidden)]
pub const fn field<C: CheckerFns, F: Fn() -> C>(
    name: &'static str,
    default: bool,
    _probe: &F,
) -> Field {
    Field {
        name,
        fns: C::FNS,
        default,
    }
}

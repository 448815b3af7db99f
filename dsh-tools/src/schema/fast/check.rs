//! The [`FastCheck`] trait, and a type's generated check as data: its [`Fns`] (shape, check,
//! whether it may be missing) and a declared member of an object's check ([`Field`]).

use serde_json::Value;

/// A type whose arguments schema is decided by generated code. Derive it with
/// [`#[derive(FastCheck)]`](derive@crate::FastCheck); the methods are the derive's business.
#[diagnostic::on_unimplemented(
    message = "`{Self}` has no generated validator",
    note = "derive it: `#[derive(dsh_tools::FastCheck)]`"
)]
pub trait FastCheck {
    /// Whether the member may be missing from its object (`Option<T>`).
    #[doc(hidden)]
    const OPTIONAL: bool = false;

    /// The bridged schema `fast_check` decides, without annotations; `closed` closes a struct's
    /// object (the arguments root). `Err` says why there is no such schema.
    #[doc(hidden)]
    fn fast_shape(closed: bool) -> Result<Value, String>;

    /// Whether `value` is valid against [`fast_shape(closed)`](Self::fast_shape).
    #[doc(hidden)]
    fn fast_check(value: &Value, closed: bool) -> bool;
}

/// A generated check: the value, and whether a struct's object is closed.
pub(super) type CheckFn = fn(&Value, bool) -> bool;

/// One type's generated validator, or the reason it has none.
#[doc(hidden)]
#[derive(Clone, Copy)]
pub struct Fns {
    pub shape: fn(bool) -> Result<Value, String>,
    pub check: fn(&Value, bool) -> bool,
    pub optional: bool,
}

impl Fns {
    /// `T`'s generated validator.
    #[inline]
    pub const fn of<T: FastCheck + ?Sized>() -> Self {
        Fns {
            shape: T::fast_shape,
            check: T::fast_check,
            optional: T::OPTIONAL,
        }
    }

    /// None for `T`: its shape says so.
    #[inline]
    pub const fn none<T: ?Sized>() -> Self {
        Fns {
            shape: no_shape::<T>,
            check: |_, _| false,
            optional: false,
        }
    }
}

fn no_shape<T: ?Sized>(_: bool) -> Result<Value, String> {
    Err(format!(
        "`{}` does not implement FastCheck",
        std::any::type_name::<T>()
    ))
}

/// A declared member of a generated object check.
#[doc(hidden)]
pub struct Field {
    pub name: &'static str,
    pub fns: Fns,
    /// `#[serde(default)]` (on the field or its container).
    pub default: bool,
}

//! Validators generated at compile time: [`#[derive(FastCheck)]`](derive@crate::FastCheck).
//!
//! `#[tool]` validates arguments against the bridged schema of their type. The interpreter
//! ([`CompiledSchema`]) walks a node tree; a type that implements [`FastCheck`] also carries
//! straight-line code for the same decision: a match on the JSON value, member by member, with
//! bounds and names inline. Valid arguments (the common case) are decided by that code alone;
//! anything it rejects goes to the interpreter's collector, so every message stays the same.
//!
//! Soundness does not rest on the derive knowing every serde and schemars attribute. Each
//! implementation also describes the schema its code decides (its *shape*, in the bridge's own
//! output form), and a tool uses the code only when that shape equals the type's bridged schema
//! (annotations such as `description` and `default` aside). On any difference, a
//! `#[schemars(range(min = 1))]` the derive does not read, say, the tool keeps the interpreter and
//! logs why at `debug` level (target `dsh_tools::schema::fast`). [`ArgsValidator::fast_path`]
//! reports which one a type gets.
//!
//! The struct form of `#[tool]` uses it when the author's type derives it. For the inline form,
//! `#[tool]` declares the check of its generated arguments struct itself, in the *compact* form:
//! a constant member table (`Tool::GENERATED_CHECK`) checked by one shared loop. It adds no
//! function to the tool (50 such tools rebuild with about 2 % more rustc instructions, see
//! BENCHMARKS.md) and runs at about 1.4–1.7× a serde decode instead of about 1.15× (the
//! interpreter: about 1.9×).
//! `#[dsh_tools(compact)]` asks the derive for that form too; `#[dsh_tools(crate = path)]` names
//! this crate when it is re-exported under another path.
//!
//! The derive reads serde's `rename`, `rename_all`, `deny_unknown_fields`, `default`, `tag`,
//! `skip` and `skip_deserializing`; it covers structs with named fields, enums of unit variants
//! and internally tagged enums of struct and unit variants; every other type (or a field whose
//! type has no fast check) makes the whole type fall back to the interpreter, and a generic type
//! is a compile error. Implemented here for `bool`, `String`, `PathBuf`, the integer types up to
//! 64 bits (`i128` / `u128` have none), `f64`, `Option<T>`, `Vec<T>`, `Box<T>` and `HashMap` /
//! `BTreeMap` with `String` keys.
//!
//! ```
//! use dsh_tools::FastCheck;
//! use dsh_tools::schema::fast::ArgsValidator;
//! use serde::Deserialize;
//! use serde_json::json;
//!
//! #[derive(Deserialize, schemars::JsonSchema, FastCheck)]
//! struct ReadArgs {
//!     path: String,
//!     offset: Option<u32>,
//! }
//!
//! let validator = ArgsValidator::of::<ReadArgs>(false)?;
//! assert!(validator.fast_path().is_ok());
//! assert!(validator.validate(&json!({"path": "a.txt", "offset": 3})).is_ok());
//! assert_eq!(
//!     validator.validate(&json!({"offset": -1})).unwrap_err(),
//!     [
//!         r#"missing required property "path""#,
//!         r#""offset" must match exactly one oneOf branch (matched 0): "offset" must be >= 0 (or null)"#,
//!     ]
//! );
//! # Ok::<(), dsh_tools::schema::bridge::BridgeError>(())
//! ```

use super::bridge::{self, BridgeError};
use super::{CompiledSchema, Root};
use crate::json::{cmp_numbers, is_integer, is_lossless, is_lossless_number};
use schemars::JsonSchema;
use serde_json::{Map, Number, Value, json};
use std::cmp::Ordering;
use std::marker::PhantomData;
use std::sync::Arc;

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
type CheckFn = fn(&Value, bool) -> bool;

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

// ---- what generated code calls ----

/// A declared member of a generated object check.
#[doc(hidden)]
pub struct Field {
    pub name: &'static str,
    pub fns: Fns,
    /// `#[serde(default)]` (on the field or its container).
    pub default: bool,
}

/// How deep shapes may nest: as the bridge's own depth limit.
const MAX_SHAPE_DEPTH: u32 = 64;

thread_local! {
    static SHAPE_DEPTH: std::cell::Cell<u32> = const { std::cell::Cell::new(0) };
}

/// One level of a shape being built (the count drops when the guard does).
struct ShapeDepth;

impl ShapeDepth {
    fn enter() -> Result<ShapeDepth, String> {
        SHAPE_DEPTH.with(|d| {
            if d.get() >= MAX_SHAPE_DEPTH {
                return Err(format!(
                    "the type nests deeper than {MAX_SHAPE_DEPTH} objects (it contains itself?)"
                ));
            }
            d.set(d.get() + 1);
            Ok(ShapeDepth)
        })
    }
}

impl Drop for ShapeDepth {
    fn drop(&mut self) {
        SHAPE_DEPTH.with(|d| d.set(d.get().saturating_sub(1)));
    }
}

/// The shape of an object with `fields`; `tag` is an internally tagged variant's tag and name.
#[doc(hidden)]
pub fn object_shape(
    closed: bool,
    tag: Option<(&str, &str)>,
    fields: &[Field],
) -> Result<Value, String> {
    // A Rust type can nest itself where its schema does not (a `#[schemars(skip)]` field, a
    // hand-written `JsonSchema`): the shape is then infinite. Refuse past a bound instead.
    let _depth = ShapeDepth::enter()?;
    let mut properties = Map::new();
    let mut required = Vec::new();
    if let Some((tag, name)) = tag {
        properties.insert(tag.to_owned(), json!({"type": "string", "const": name}));
        required.push(Value::from(tag));
    }
    for f in fields {
        let shape = (f.fns.shape)(false).map_err(|e| format!("member \"{}\": {e}", f.name))?;
        if properties.insert(f.name.to_owned(), shape).is_some() {
            return Err(format!("member \"{}\" is declared twice", f.name));
        }
        if !(f.fns.optional || f.default) {
            required.push(Value::from(f.name));
        }
    }
    let mut shape = Map::new();
    shape.insert("type".into(), "object".into());
    shape.insert("properties".into(), Value::Object(properties));
    shape.insert("required".into(), Value::Array(required));
    if closed {
        shape.insert("additionalProperties".into(), false.into());
    }
    Ok(Value::Object(shape))
}

/// The members of a compact check: a constant table (no function per type), checked by one
/// shared loop (`check_members`).
#[doc(hidden)]
pub struct Members {
    fields: &'static [Field],
    required: usize,
    deny_unknown: bool,
}

impl Members {
    /// The table of `fields` (`deny_unknown`: `#[serde(deny_unknown_fields)]`).
    pub const fn new(fields: &'static [Field], deny_unknown: bool) -> Self {
        let mut required = 0;
        let mut i = 0;
        while i < fields.len() {
            if !(fields[i].fns.optional || fields[i].default) {
                required += 1;
            }
            i += 1;
        }
        Members {
            fields,
            required,
            deny_unknown,
        }
    }

    /// The shape the table decides (as [`FastCheck::fast_shape`]).
    pub fn shape(&self, closed: bool) -> Result<Value, String> {
        object_shape(closed || self.deny_unknown, None, self.fields)
    }

    /// Whether `v` is valid (as [`FastCheck::fast_check`]).
    #[inline]
    pub fn check(&self, v: &Value, closed: bool) -> bool {
        check_members(v, closed || self.deny_unknown, self)
    }
}

/// A compact generated check: `v` against the object of `members` (straight-line code's
/// decision, from a table; names compared word-wise, the next declared member tried first).
fn check_members(v: &Value, closed: bool, members: &Members) -> bool {
    let Value::Object(m) = v else {
        return false;
    };
    let fields = members.fields;
    let mut required = 0;
    let mut hint = 0;
    for (k, x) in m {
        let k = k.as_bytes();
        let found = match fields.get(hint) {
            Some(f) if super::compile::same_len_eq(f.name.as_bytes(), k) => Some((hint, f)),
            _ => fields
                .iter()
                .enumerate()
                .find(|(_, f)| super::compile::same_len_eq(f.name.as_bytes(), k)),
        };
        let ok = match found {
            Some((i, f)) => {
                hint = i + 1;
                required += usize::from(!(f.fns.optional || f.default));
                (f.fns.check)(x, false)
            }
            None => !closed && extra_ok(x),
        };
        if !ok {
            return false;
        }
    }
    required == members.required
}

/// The shape of an enum of unit variants: `plain` ones in an `enum`, `documented` ones each a
/// `const` (schemars keeps a variant's description on its own branch).
#[doc(hidden)]
pub fn names_shape(plain: &[&str], documented: &[&str]) -> Result<Value, String> {
    let plain = json!({"type": "string", "enum": plain});
    if documented.is_empty() {
        return Ok(plain);
    }
    let consts = documented
        .iter()
        .map(|name| json!({"type": "string", "const": name}));
    let branches: Vec<Value> = if let Some(0) = plain["enum"].as_array().map(Vec::len) {
        consts.collect()
    } else {
        std::iter::once(plain).chain(consts).collect()
    };
    Ok(json!({ "oneOf": branches }))
}

/// The shape of a `oneOf` of `branches`.
#[doc(hidden)]
pub fn one_of_shape(branches: Vec<Result<Value, String>>) -> Result<Value, String> {
    Ok(json!({"oneOf": branches.into_iter().collect::<Result<Vec<_>, _>>()?}))
}

/// Whether member name `k` is `name`. A plain slice compare: with `name` a constant the
/// compiler inlines it (the interpreter's word-wise `same_len_eq`, better for names known only at
/// run time, made the generated check 1.6x slower on the small payload; a `match` on byte-string
/// patterns, 1.25x serde instead of 1.17x).
#[doc(hidden)]
#[inline]
pub fn key_is(k: &[u8], name: &'static str) -> bool {
    k == name.as_bytes()
}

/// The member `key` of `m`, by a scan (no hashing: tool arguments have few members).
#[doc(hidden)]
#[inline]
pub fn member<'v>(m: &'v Map<String, Value>, key: &str) -> Option<&'v Value> {
    m.iter().find(|(k, _)| k.as_str() == key).map(|(_, v)| v)
}

/// An undeclared member of an open object: any lossless value.
#[doc(hidden)]
#[inline]
pub fn extra_ok(v: &Value) -> bool {
    is_lossless(v)
}

/// Whether `v` is an integer in `lo..=hi`, exactly as the interpreter decides `{"type":
/// "integer", "minimum": lo, "maximum": hi}` (`3.0` is the integer 3).
#[inline]
fn int_in(v: &Value, lo: i128, hi: i128) -> bool {
    let Value::Number(n) = v else {
        return false;
    };
    if let Some(i) = n.as_i64() {
        return lo <= i128::from(i) && i128::from(i) <= hi;
    }
    if let Some(u) = n.as_u64() {
        return i128::from(u) <= hi;
    }
    float_int_in(n, lo, hi)
}

#[inline(never)]
fn float_int_in(n: &Number, lo: i128, hi: i128) -> bool {
    let bound = |b: i128| match i64::try_from(b) {
        Ok(i) => Number::from(i),
        Err(_) => Number::from(u64::try_from(b).unwrap_or(u64::MAX)),
    };
    is_integer(n)
        && cmp_numbers(n, &bound(lo)) != Some(Ordering::Less)
        && cmp_numbers(n, &bound(hi)) != Some(Ordering::Greater)
}

// ---- the standard types ----

macro_rules! integers {
    ($($ty:ty),*) => {$(
        impl FastCheck for $ty {
            fn fast_shape(_: bool) -> Result<Value, String> {
                Ok(json!({"type": "integer", "minimum": <$ty>::MIN, "maximum": <$ty>::MAX}))
            }
            #[inline]
            fn fast_check(v: &Value, _: bool) -> bool {
                int_in(v, <$ty>::MIN as i128, <$ty>::MAX as i128)
            }
        }
    )*};
}
integers!(i8, i16, i32, i64, isize, u8, u16, u32, u64, usize);

impl FastCheck for bool {
    fn fast_shape(_: bool) -> Result<Value, String> {
        Ok(json!({"type": "boolean"}))
    }
    #[inline]
    fn fast_check(v: &Value, _: bool) -> bool {
        v.is_boolean()
    }
}

impl FastCheck for String {
    fn fast_shape(_: bool) -> Result<Value, String> {
        Ok(json!({"type": "string"}))
    }
    #[inline]
    fn fast_check(v: &Value, _: bool) -> bool {
        v.is_string()
    }
}

impl FastCheck for std::path::PathBuf {
    fn fast_shape(c: bool) -> Result<Value, String> {
        String::fast_shape(c)
    }
    #[inline]
    fn fast_check(v: &Value, c: bool) -> bool {
        String::fast_check(v, c)
    }
}

impl FastCheck for f64 {
    fn fast_shape(_: bool) -> Result<Value, String> {
        Ok(json!({"type": "number"}))
    }
    #[inline]
    fn fast_check(v: &Value, _: bool) -> bool {
        matches!(v, Value::Number(n) if is_lossless_number(n))
    }
}

impl<T: FastCheck> FastCheck for Option<T> {
    const OPTIONAL: bool = true;
    fn fast_shape(closed: bool) -> Result<Value, String> {
        if T::OPTIONAL {
            // `Option<Option<T>>`: the bridge emits one `oneOf [T, null]`.
            return T::fast_shape(closed);
        }
        Ok(json!({"oneOf": [T::fast_shape(closed)?, {"type": "null"}]}))
    }
    #[inline]
    fn fast_check(v: &Value, closed: bool) -> bool {
        v.is_null() || T::fast_check(v, closed)
    }
}

impl<T: FastCheck> FastCheck for Box<T> {
    const OPTIONAL: bool = T::OPTIONAL;
    fn fast_shape(closed: bool) -> Result<Value, String> {
        T::fast_shape(closed)
    }
    #[inline]
    fn fast_check(v: &Value, closed: bool) -> bool {
        T::fast_check(v, closed)
    }
}

impl<T: FastCheck> FastCheck for Vec<T> {
    fn fast_shape(_: bool) -> Result<Value, String> {
        Ok(json!({"type": "array", "items": T::fast_shape(false)?}))
    }
    #[inline]
    fn fast_check(v: &Value, _: bool) -> bool {
        match v {
            Value::Array(items) => items.iter().all(|x| T::fast_check(x, false)),
            _ => false,
        }
    }
}

macro_rules! maps {
    ($($map:ident $(, $s:ident)?);*) => {$(
        impl<T: FastCheck $(, $s)?> FastCheck for std::collections::$map<String, T $(, $s)?> {
            fn fast_shape(_: bool) -> Result<Value, String> {
                Ok(json!({"type": "object", "additionalProperties": T::fast_shape(false)?}))
            }
            #[inline]
            fn fast_check(v: &Value, _: bool) -> bool {
                match v {
                    Value::Object(m) => m.values().all(|x| T::fast_check(x, false)),
                    _ => false,
                }
            }
        }
    )*};
}
maps!(BTreeMap; HashMap, S);

// ---- the shape comparison ----

/// Keywords that describe and never decide: ignored on the bridged side.
const ANNOTATIONS: &[&str] = &[
    "description",
    "title",
    "default",
    "examples",
    "deprecated",
    "readOnly",
    "writeOnly",
    "$comment",
];

/// Whether `shape` (what generated code decides) is `bridged` (what the schema says), keyword by
/// keyword, annotations aside, `required` as a set. `Err` names the first difference.
pub(crate) fn same_shape(bridged: &Value, shape: &Value) -> Result<(), String> {
    // Iterative: a bridged schema nests as deep as the node limit allows.
    let mut stack = vec![(bridged, shape, String::new())];
    while let Some((b, s, at)) = stack.pop() {
        let (Value::Object(b), Value::Object(s)) = (b, s) else {
            return Err(format!("at `{at}`: {b} is not {s}"));
        };
        let keys = |m: &Map<String, Value>| -> Vec<String> {
            let mut k: Vec<String> = m
                .iter()
                .filter(|(k, v)| {
                    let empty_required =
                        *k == "required" && v.as_array().is_some_and(Vec::is_empty);
                    !(ANNOTATIONS.contains(&k.as_str()) || empty_required)
                })
                .map(|(k, _)| k.clone())
                .collect();
            k.sort();
            k
        };
        let (bk, sk) = (keys(b), keys(s));
        if bk != sk {
            return Err(format!(
                "at `{at}`: the schema has keywords {bk:?}, the generated check {sk:?}"
            ));
        }
        for k in bk {
            let (bv, sv) = (&b[&k], &s[&k]);
            let here = format!("{at}/{k}");
            match k.as_str() {
                "properties" => {
                    let (Some(bp), Some(sp)) = (bv.as_object(), sv.as_object()) else {
                        return Err(format!("at `{here}`: not an object"));
                    };
                    if bp.len() != sp.len() {
                        return Err(format!(
                            "at `{here}`: the schema declares {} members, the generated check {}",
                            bp.len(),
                            sp.len()
                        ));
                    }
                    for (name, bs) in bp {
                        let Some(ss) = sp.get(name) else {
                            return Err(format!("at `{here}`: no generated check for \"{name}\""));
                        };
                        stack.push((bs, ss, format!("{here}/{name}")));
                    }
                }
                "items" | "additionalProperties" if bv.is_object() => {
                    stack.push((bv, sv, here));
                }
                "oneOf" => {
                    let (Some(bb), Some(sb)) = (bv.as_array(), sv.as_array()) else {
                        return Err(format!("at `{here}`: not an array"));
                    };
                    if bb.len() != sb.len() {
                        return Err(format!(
                            "at `{here}`: {} branches, the generated check has {}",
                            bb.len(),
                            sb.len()
                        ));
                    }
                    for (i, (x, y)) in bb.iter().zip(sb).enumerate() {
                        stack.push((x, y, format!("{here}/{i}")));
                    }
                }
                "required" => {
                    let set = |v: &Value| -> Option<Vec<String>> {
                        let mut names: Vec<String> = v
                            .as_array()?
                            .iter()
                            .map(|n| n.as_str().map(str::to_owned))
                            .collect::<Option<_>>()?;
                        names.sort();
                        names.dedup();
                        Some(names)
                    };
                    if set(bv).is_none() || set(bv) != set(sv) {
                        return Err(format!("at `{here}`: {bv} is not {sv}"));
                    }
                }
                // `type`, `enum`, `const`, bounds, `additionalProperties: false`: equal JSON.
                _ => {
                    if bv != sv {
                        return Err(format!("at `{here}`: {bv} is not {sv}"));
                    }
                }
            }
        }
    }
    Ok(())
}

// ---- a type's whole validator ----

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

#[cfg(test)]
mod tests {
    use super::same_shape;
    use serde_json::json;

    fn object() -> serde_json::Value {
        json!({
            "type": "object",
            "properties": {
                "a": {"type": "string", "enum": ["x", "y"]},
                "b": {"oneOf": [{"type": "integer", "minimum": 0, "maximum": 255}, {"type": "null"}]}
            },
            "required": ["a"],
            "additionalProperties": false
        })
    }

    #[test]
    fn annotations_and_required_order_do_not_matter() {
        let mut bridged = object();
        bridged["description"] = json!("Reads.");
        bridged["properties"]["a"]["title"] = json!("A");
        bridged["properties"]["b"]["default"] = json!(null);
        bridged["required"] = json!(["a", "a"]);
        assert_eq!(same_shape(&bridged, &object()), Ok(()));
        // A member named like an annotation is a member, not an annotation.
        let mut named = object();
        named["properties"]["description"] = json!({"type": "string"});
        assert!(same_shape(&named, &object()).is_err());
    }

    #[test]
    fn every_deciding_difference_is_one() {
        type Change = fn(&mut serde_json::Value);
        let changes: [(&str, Change); 9] = [
            ("required", |s| s["required"] = json!(["a", "b"])),
            ("required empty", |s| s["required"] = json!([])),
            ("closedness", |s| {
                s.as_object_mut().unwrap().remove("additionalProperties");
            }),
            ("additionalProperties schema", |s| {
                s["additionalProperties"] = json!({"type": "string"})
            }),
            ("enum order", |s| {
                s["properties"]["a"]["enum"] = json!(["y", "x"])
            }),
            ("a bound", |s| {
                s["properties"]["b"]["oneOf"][0]["maximum"] = json!(256)
            }),
            ("oneOf branches", |s| {
                s["properties"]["b"]["oneOf"]
                    .as_array_mut()
                    .unwrap()
                    .push(json!({"type": "boolean"}))
            }),
            ("an extra keyword", |s| {
                s["properties"]["a"]["minLength"] = json!(1)
            }),
            ("a boolean schema", |s| s["properties"]["a"] = json!(true)),
        ];
        for (what, change) in changes {
            let mut bridged = object();
            change(&mut bridged);
            assert!(same_shape(&bridged, &object()).is_err(), "{what}");
            assert!(
                same_shape(&object(), &bridged).is_err(),
                "{what} (reversed)"
            );
        }
    }
}

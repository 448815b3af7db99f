//! What generated code calls: object and enum shapes (depth-bounded), the compact member table
//! ([`Members`]) and its shared loop, and member lookups.

use super::check::Field;
use crate::json::is_lossless;
use serde_json::{Map, Value, json};

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
            Some(f) if crate::schema::compile::same_len_eq(f.name.as_bytes(), k) => Some((hint, f)),
            _ => fields
                .iter()
                .enumerate()
                .find(|(_, f)| crate::schema::compile::same_len_eq(f.name.as_bytes(), k)),
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

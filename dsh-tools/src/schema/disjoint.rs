//! The disjointness prover: can no value match two of a set of schemas? One prover, two ways in.
//!
//! What it reads of each schema is its [`Facts`]: the JSON kinds it admits, its values when it
//! admits finitely many, and for an object whether it is closed, what it requires and the values
//! of its required properties. Two schemas are disjoint when their kinds do not meet, their value
//! lists do not meet, one requires a property the other's `additionalProperties: false` forbids,
//! or both require a property (a tag) whose values do not meet. `false` always means "not shown",
//! never "they overlap".
//!
//! - The bridge (`bridge::disjoint`) builds facts from its own working form, to turn an `anyOf`
//!   into the subset's `oneOf` and to push `unevaluatedProperties` into `oneOf` branches; past
//!   the one-pass proof ([`shown_at_once`]) it compares the leaves pairwise, up to 1024 of them.
//! - The provider transform ([`branches_disjoint`]) asks it of a subset `oneOf`'s branches, to
//!   report `oneOf` → `anyOf` as a rewrite (the same values) rather than a loosening. It uses the
//!   one-pass proof only: a remote schema may have thousands of branches, and its answer only
//!   names the change, so it stays linear in the schema.

use super::keywords::{ADDITIONAL_PROPERTIES, CONST, ENUM, ONE_OF, PROPERTIES, REQUIRED, TYPE};
use super::subset::Type;
use crate::json::{json_equal, json_hash};
use serde_json::Value;
use std::collections::{HashMap, HashSet};

const NULL: u8 = 1;
const BOOL: u8 = 2;
const NUM: u8 = 4;
const STR: u8 = 8;
const ARR: u8 = 16;
const OBJ: u8 = 32;
const ALL: u8 = 63;

fn kind(ty: Type) -> u8 {
    match ty {
        Type::Null => NULL,
        Type::Boolean => BOOL,
        Type::Number | Type::Integer => NUM,
        Type::String => STR,
        Type::Array => ARR,
        Type::Object => OBJ,
    }
}

/// A rough view of a schema: which JSON kinds it admits, and its values when it admits finitely
/// many.
struct Summary<'v> {
    kinds: u8,
    values: Option<Vec<&'v Value>>,
}

fn disjoint_summaries(a: &Summary<'_>, b: &Summary<'_>) -> bool {
    if a.kinds & b.kinds == 0 {
        return true;
    }
    match (&a.values, &b.values) {
        (Some(p), Some(q)) => !values_meet(p, q),
        _ => false,
    }
}

/// Whether two finite value lists share a value (hashed past a few members: a remote `enum`
/// may list thousands).
fn values_meet(p: &[&Value], q: &[&Value]) -> bool {
    if p.len().min(q.len()) <= 8 {
        return p.iter().any(|x| q.iter().any(|y| json_equal(x, y)));
    }
    let (small, large) = if p.len() <= q.len() { (p, q) } else { (q, p) };
    let mut index: HashMap<u64, Vec<&Value>> = HashMap::with_capacity(small.len());
    for v in small {
        index.entry(json_hash(v)).or_default().push(v);
    }
    large.iter().any(|y| {
        index
            .get(&json_hash(y))
            .is_some_and(|xs| xs.iter().any(|x| json_equal(x, y)))
    })
}

/// The summary of a typed node: its kind, and its values from `const`, `enum` or `null`.
fn summary_typed<'v>(
    ty: Type,
    constant: Option<&'v Value>,
    enumeration: Option<&'v [Value]>,
) -> Summary<'v> {
    let values = match (constant, enumeration, ty) {
        (Some(c), _, _) => Some(vec![c]),
        (None, Some(e), _) => Some(e.iter().collect()),
        (None, None, Type::Null) => Some(vec![&Value::Null]),
        _ => None,
    };
    Summary {
        kinds: kind(ty),
        values,
    }
}

/// The summary of a rendered schema (a property's), walking nested `oneOf`s iteratively.
fn summary_value(v: &Value) -> Summary<'_> {
    let mut s = Summary {
        kinds: 0,
        values: Some(Vec::new()),
    };
    let mut stack = vec![v];
    while let Some(node) = stack.pop() {
        if let Some(Value::Array(branches)) = node.get(ONE_OF) {
            stack.extend(branches);
            continue;
        }
        let ty = node.get(TYPE).and_then(Value::as_str).and_then(Type::parse);
        s.kinds |= ty.map_or(ALL, kind);
        let finite: Option<Vec<&Value>> = match (node.get(CONST), node.get(ENUM), ty) {
            (Some(c), _, _) => Some(vec![c]),
            (None, Some(Value::Array(e)), _) => Some(e.iter().collect()),
            (None, None, Some(Type::Null)) => Some(vec![&Value::Null]),
            _ => None,
        };
        s.values = match (s.values, finite) {
            (Some(mut all), Some(more)) => {
                all.extend(more);
                Some(all)
            }
            _ => None,
        };
    }
    s
}

/// What the disjointness proofs read of one leaf, computed once: with thousands of leaves
/// and properties, looking each up again per pair was quadratic twice over.
pub(crate) struct Facts<'a> {
    summary: Option<Summary<'a>>,
    object: Option<ObjectFacts<'a>>,
}

struct ObjectFacts<'a> {
    closed: bool,
    required: Vec<&'a str>,
    required_set: HashSet<&'a str>,
    declared: HashSet<&'a str>,
    /// The summaries of the required properties that are declared.
    tags: HashMap<&'a str, Summary<'a>>,
}

impl<'a> Facts<'a> {
    /// What can be shown of nothing: a schema the prover cannot read (any value, a union).
    pub(crate) fn unknown() -> Self {
        Self {
            summary: None,
            object: None,
        }
    }

    /// The facts of a typed node: its type, `const`, `enum`, and for an object its declared
    /// properties, required names and whether `additionalProperties` is `false`.
    pub(crate) fn typed(
        ty: Type,
        constant: Option<&'a Value>,
        enumeration: Option<&'a [Value]>,
        props: impl Iterator<Item = (&'a str, &'a Value)>,
        required: impl Iterator<Item = &'a str>,
        closed: bool,
    ) -> Self {
        let object = (ty == Type::Object).then(|| {
            let props: HashMap<&str, &Value> = props.collect();
            let declared: HashSet<&str> = props.keys().copied().collect();
            let required: Vec<&str> = required.collect();
            let tags = required
                .iter()
                .filter_map(|r| props.get(r).map(|v| (*r, summary_value(v))))
                .collect();
            ObjectFacts {
                closed,
                required_set: required.iter().copied().collect(),
                required,
                declared,
                tags,
            }
        });
        Self {
            summary: Some(summary_typed(ty, constant, enumeration)),
            object,
        }
    }

    /// The facts of a schema of the subset (a `oneOf` branch); [`unknown`](Self::unknown)
    /// without a single `type`.
    fn of_schema(schema: &'a Value) -> Self {
        let Some(ty) = schema
            .get(TYPE)
            .and_then(Value::as_str)
            .and_then(Type::parse)
        else {
            return Self::unknown();
        };
        let props = schema.get(PROPERTIES).and_then(Value::as_object);
        let required = schema.get(REQUIRED).and_then(Value::as_array);
        Self::typed(
            ty,
            schema.get(CONST),
            schema
                .get(ENUM)
                .and_then(Value::as_array)
                .map(Vec::as_slice),
            props.into_iter().flatten().map(|(k, v)| (k.as_str(), v)),
            required.into_iter().flatten().filter_map(Value::as_str),
            schema.get(ADDITIONAL_PROPERTIES) == Some(&Value::Bool(false)),
        )
    }
}

/// Whether no value can match both leaves (`false` when it cannot be shown).
pub(crate) fn facts_disjoint(a: &Facts<'_>, b: &Facts<'_>) -> bool {
    let (Some(x), Some(y)) = (&a.summary, &b.summary) else {
        return false;
    };
    if disjoint_summaries(x, y) {
        return true;
    }
    let (Some(x), Some(y)) = (&a.object, &b.object) else {
        return false;
    };
    // One requires a property the other's `additionalProperties: false` forbids.
    let forbids = |p: &ObjectFacts<'_>, q: &ObjectFacts<'_>| {
        q.closed && p.required.iter().any(|r| !q.declared.contains(r))
    };
    if forbids(x, y) || forbids(y, x) {
        return true;
    }
    // Both require a property whose values are disjoint (a tag).
    let (small, large) = if x.required.len() <= y.required.len() {
        (x, y)
    } else {
        (y, x)
    };
    small.required.iter().any(|r| {
        large.required_set.contains(r)
            && match (small.tags.get(r), large.tags.get(r)) {
                (Some(p), Some(q)) => disjoint_summaries(p, q),
                _ => false,
            }
    })
}

/// The usual case in one pass: one tag tells the object leaves apart, and the few other
/// leaves differ in kind or value from every leaf.
pub(crate) fn shown_at_once(all: &[&Facts<'_>]) -> bool {
    let objects: Vec<&ObjectFacts<'_>> = all.iter().filter_map(|f| f.object.as_ref()).collect();
    let others: Vec<(usize, &Facts<'_>)> = all
        .iter()
        .copied()
        .enumerate()
        .filter(|(_, f)| f.object.is_none())
        .collect();
    others.len() <= 64
        && one_tag_for_all(&objects)
        && others.iter().all(|&(i, a)| {
            all.iter()
                .enumerate()
                .filter(|(j, b)| b.object.is_some() || *j > i)
                .all(|(_, b)| facts_disjoint(a, b))
        })
}

/// Whether one required tag tells every object leaf from every other (each of its values
/// appears in one leaf only): then every pair of them is disjoint, shown in one pass.
fn one_tag_for_all(objects: &[&ObjectFacts<'_>]) -> bool {
    // Fewer than two object leaves: no pair of them to tell apart.
    let [first, _, ..] = objects else {
        return true;
    };
    'names: for name in &first.required {
        let mut seen: HashMap<u64, Vec<&Value>> = HashMap::new();
        for o in objects {
            let Some(Summary {
                values: Some(values),
                ..
            }) = o.tags.get(name)
            else {
                continue 'names;
            };
            for v in values {
                let same = seen.entry(json_hash(v)).or_default();
                if same.iter().any(|w| json_equal(v, w)) {
                    continue 'names;
                }
                same.push(v);
            }
        }
        return true;
    }
    false
}

/// Whether no value can match two of a subset `oneOf`'s `branches`, by the one-pass proof only
/// (linear: see the module docs). `false` when it cannot be shown so.
pub(crate) fn branches_disjoint(branches: &[Value]) -> bool {
    let facts: Vec<Facts<'_>> = branches.iter().map(Facts::of_schema).collect();
    let all: Vec<&Facts<'_>> = facts.iter().collect();
    shown_at_once(&all)
}

#[cfg(test)]
mod tests {
    use super::branches_disjoint;
    use serde_json::json;

    #[test]
    fn one_object_branch_needs_no_tag_and_values_tell_scalars_apart() {
        // No pair of objects to tell apart: the kinds decide.
        let open = json!({"type": "object", "properties": {"a": {"type": "string"}}});
        assert!(branches_disjoint(&[
            json!({"type": "string"}),
            open.clone()
        ]));
        assert!(!branches_disjoint(&[open.clone(), open]));
        // Two strings of disjoint `enum`s, and a tag spelled as `null` against a string.
        let e = |v: &[&str]| json!({"type": "string", "enum": v});
        assert!(branches_disjoint(&[e(&["a", "b"]), e(&["c"])]));
        assert!(!branches_disjoint(&[e(&["a", "b"]), e(&["b"])]));
        let tag = |t: serde_json::Value| json!({"type": "object", "properties": {"k": t}, "required": ["k"]});
        assert!(branches_disjoint(&[
            tag(json!({"type": "null"})),
            tag(json!({"type": "string", "const": "x"}))
        ]));
        // A branch without a single type is never shown disjoint.
        assert!(!branches_disjoint(&[json!({}), json!({"type": "string"})]));
    }
}

//! Disjointness proofs: can no value match both schemas? They turn `anyOf` into `oneOf`, and
//! allow pushing `unevaluatedProperties` into `oneOf` branches.

use super::shape::{Annotations, Out, Shape, Typed, leaves};
use crate::json::{json_equal, json_hash};
use crate::schema::subset::Type;
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

fn summary_typed(t: &Typed) -> Summary<'_> {
    let values = match (&t.constant, &t.enumeration, t.ty) {
        (Some(c), _, _) => Some(vec![c]),
        (None, Some(e), _) => Some(e.iter().collect()),
        (None, None, Type::Null) => Some(vec![&Value::Null]),
        _ => None,
    };
    Summary {
        kinds: kind(t.ty),
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
        if let Some(Value::Array(branches)) = node.get("oneOf") {
            stack.extend(branches);
            continue;
        }
        let ty = node
            .get("type")
            .and_then(Value::as_str)
            .and_then(Type::parse);
        s.kinds |= ty.map_or(ALL, kind);
        let finite: Option<Vec<&Value>> = match (node.get("const"), node.get("enum"), ty) {
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
struct Facts<'a> {
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
    fn of(out: &'a Out) -> Self {
        let Shape::Typed(t) = &out.shape else {
            return Self {
                summary: None,
                object: None,
            };
        };
        let object = (t.ty == Type::Object).then(|| {
            let declared: HashSet<&str> = t.props.iter().map(|(k, _)| k.as_str()).collect();
            let props: HashMap<&str, &Value> =
                t.props.iter().map(|(k, v)| (k.as_str(), v)).collect();
            let tags = t
                .required
                .iter()
                .filter_map(|r| {
                    props
                        .get(r.as_str())
                        .map(|v| (r.as_str(), summary_value(v)))
                })
                .collect();
            ObjectFacts {
                closed: t.additional == Some(Value::Bool(false)),
                required: t.required.iter().map(String::as_str).collect(),
                required_set: t.required.iter().map(String::as_str).collect(),
                declared,
                tags,
            }
        });
        Self {
            summary: Some(summary_typed(t)),
            object,
        }
    }
}

/// Whether no value can match both leaves (`false` when it cannot be shown).
fn facts_disjoint(a: &Facts<'_>, b: &Facts<'_>) -> bool {
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

/// Whether no value can match two of `leaves` (`false` when it cannot be shown).
pub(super) fn all_disjoint(leaves: &[&Out]) -> bool {
    let facts: Vec<Facts<'_>> = leaves.iter().map(|o| Facts::of(o)).collect();
    let all: Vec<&Facts<'_>> = facts.iter().collect();
    shown_at_once(&all)
        || all
            .iter()
            .enumerate()
            .all(|(i, a)| all[i + 1..].iter().all(|b| facts_disjoint(a, b)))
}

/// The usual case in one pass: one tag tells the object leaves apart, and the few other
/// leaves differ in kind or value from every leaf.
fn shown_at_once(all: &[&Facts<'_>]) -> bool {
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
    let Some(first) = objects.first() else {
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

/// Most leaves an `anyOf` may have for its branches to be compared pairwise.
pub(super) const MAX_ANY_OF_LEAVES: usize = 1024;

/// `anyOf` as the subset's `oneOf`, when its branches are provably disjoint (or one of them
/// accepts anything, making the whole `anyOf` accept anything).
pub(super) fn any_of(ann: Annotations, mut branches: Vec<Out>) -> Result<Option<Out>, String> {
    if branches.iter().any(|b| b.shape == Shape::Any) {
        return Ok(Some(Out {
            ann,
            shape: Shape::Any,
        }));
    }
    // Repeated branches are dropped (found by hash: comparing every pair of thousands of
    // branches was quadratic).
    let mut unique: Vec<Out> = Vec::with_capacity(branches.len());
    let mut by_hash: HashMap<u64, Vec<usize>> = HashMap::new();
    let keys = std::collections::hash_map::RandomState::new();
    for b in branches.drain(..) {
        let bucket = by_hash.entry(out_hash(&keys, &b)).or_default();
        if !bucket.iter().any(|&i| unique[i] == b) {
            bucket.push(unique.len());
            unique.push(b);
        }
    }
    let leaf_sets: Vec<Vec<&Out>> = unique.iter().map(leaves).collect();
    if leaf_sets.iter().map(Vec::len).sum::<usize>() > MAX_ANY_OF_LEAVES {
        return Err(format!(
            "anyOf has more than {MAX_ANY_OF_LEAVES} alternatives to compare; the bridge cannot show that they are disjoint"
        ));
    }
    let facts: Vec<Vec<Facts<'_>>> = leaf_sets
        .iter()
        .map(|set| set.iter().map(|o| Facts::of(o)).collect())
        .collect();
    let all: Vec<&Facts<'_>> = facts.iter().flatten().collect();
    if !shown_at_once(&all) {
        for (i, p) in facts.iter().enumerate() {
            for (j, q) in facts.iter().enumerate().skip(i + 1) {
                if !p.iter().all(|a| q.iter().all(|b| facts_disjoint(a, b))) {
                    return Err(format!(
                        "anyOf branches {i} and {j} may both match one value, and the subset only has oneOf (exactly one branch); make the alternatives distinguishable: different JSON types, a required tag property with distinct constant values, or #[serde(deny_unknown_fields)] on variants with distinct required fields (an untagged enum whose variants overlap cannot be bridged)"
                    ));
                }
            }
        }
    }
    drop(facts);
    drop(leaf_sets);
    // Disjoint at the leaves: a nested union without annotations can be spliced in exactly.
    let mut flat = Vec::with_capacity(unique.len());
    for b in unique {
        match b.shape {
            Shape::Union(inner) if b.ann.is_empty() => flat.extend(inner),
            shape => flat.push(Out { ann: b.ann, shape }),
        }
    }
    Ok(Out::union(ann, flat))
}

/// A hash consistent with `Out`'s equality (equal outs hash equally), walking nested unions
/// without recursion.
fn out_hash(keys: &std::collections::hash_map::RandomState, out: &Out) -> u64 {
    use std::hash::{BuildHasher, Hash, Hasher};
    let mut h = keys.build_hasher();
    let value = |h: &mut std::collections::hash_map::DefaultHasher, v: &Option<Value>| match v {
        Some(v) => json_hash(v).hash(h),
        None => 0u64.hash(h),
    };
    let mut stack = vec![out];
    while let Some(o) = stack.pop() {
        value(&mut h, &o.ann.title);
        value(&mut h, &o.ann.description);
        match &o.shape {
            Shape::Any => 0u8.hash(&mut h),
            Shape::Union(branches) => {
                (1u8, branches.len()).hash(&mut h);
                stack.extend(branches);
            }
            Shape::Typed(t) => {
                (2u8, t.ty.name(), t.props.len(), &t.required).hash(&mut h);
                for (k, v) in &t.props {
                    k.hash(&mut h);
                    json_hash(v).hash(&mut h);
                }
                value(&mut h, &t.constant);
                value(&mut h, &t.additional);
                if let Some(members) = &t.enumeration {
                    members.len().hash(&mut h);
                }
            }
        }
    }
    h.finish()
}

/// Applies `unevaluatedProperties` to every object of `out` that has no `additionalProperties`.
pub(super) fn finalize(out: &mut Out, unevaluated: Option<&Value>) -> Result<(), String> {
    // Which properties `unevaluatedProperties` sees depends on the branch that matched; pushing
    // it into every branch keeps the meaning only when no value can match two branches.
    if unevaluated.is_some() && matches!(out.shape, Shape::Union(_)) {
        let all = leaves(out);
        if all.len() > MAX_ANY_OF_LEAVES {
            return Err(format!(
                "unevaluatedProperties beside a oneOf of more than {MAX_ANY_OF_LEAVES} alternatives"
            ));
        }
        if !all_disjoint(&all) {
            return Err("unevaluatedProperties beside a oneOf whose branches may overlap cannot be expressed: give the variants a tag (#[serde(tag = ...)]) or drop #[serde(deny_unknown_fields)]".into());
        }
    }
    finalize_leaves(out, unevaluated)
}

fn finalize_leaves(out: &mut Out, unevaluated: Option<&Value>) -> Result<(), String> {
    match &mut out.shape {
        Shape::Any => {
            if unevaluated.is_some() {
                return Err(
                    "unevaluatedProperties needs type \"object\" (or object branches)".into(),
                );
            }
        }
        Shape::Union(branches) => {
            for b in branches {
                finalize_leaves(b, unevaluated)?;
            }
        }
        Shape::Typed(t) => {
            if t.ty == Type::Object && t.additional.is_none() {
                t.additional = unevaluated.cloned();
            }
        }
    }
    Ok(())
}

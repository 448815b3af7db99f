//! Disjointness proofs: can no value match both schemas? They turn `anyOf` into `oneOf`, and
//! allow pushing `unevaluatedProperties` into `oneOf` branches.

use super::shape::{Annotations, Out, Shape, Typed, leaves};
use crate::json::json_equal;
use crate::schema::subset::Type;
use serde_json::Value;

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
        (Some(p), Some(q)) => !p.iter().any(|x| q.iter().any(|y| json_equal(x, y))),
        _ => false,
    }
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

/// Whether no value can match both leaves (`false` when it cannot be shown).
pub(super) fn leaves_disjoint(a: &Out, b: &Out) -> bool {
    let (Shape::Typed(x), Shape::Typed(y)) = (&a.shape, &b.shape) else {
        return false;
    };
    if disjoint_summaries(&summary_typed(x), &summary_typed(y)) {
        return true;
    }
    if x.ty != Type::Object || y.ty != Type::Object {
        return false;
    }
    // One requires a property the other's `additionalProperties: false` forbids.
    let forbids = |p: &Typed, q: &Typed| {
        q.additional == Some(Value::Bool(false)) && p.required.iter().any(|r| q.prop(r).is_none())
    };
    if forbids(x, y) || forbids(y, x) {
        return true;
    }
    // Both require a property whose values are disjoint (a tag).
    x.required
        .iter()
        .filter(|r| y.required.contains(r))
        .any(|r| match (x.prop(r), y.prop(r)) {
            (Some(p), Some(q)) => disjoint_summaries(&summary_value(p), &summary_value(q)),
            _ => false,
        })
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
    let mut unique: Vec<Out> = Vec::with_capacity(branches.len());
    for b in branches.drain(..) {
        if !unique.contains(&b) {
            unique.push(b);
        }
    }
    let leaf_sets: Vec<Vec<&Out>> = unique.iter().map(leaves).collect();
    if leaf_sets.iter().map(Vec::len).sum::<usize>() > MAX_ANY_OF_LEAVES {
        return Err(format!(
            "anyOf has more than {MAX_ANY_OF_LEAVES} alternatives to compare; the bridge cannot show that they are disjoint"
        ));
    }
    for (i, p) in leaf_sets.iter().enumerate() {
        for (j, q) in leaf_sets.iter().enumerate().skip(i + 1) {
            if !p.iter().all(|a| q.iter().all(|b| leaves_disjoint(a, b))) {
                return Err(format!(
                    "anyOf branches {i} and {j} may both match one value, and the subset only has oneOf (exactly one branch); make the alternatives distinguishable: different JSON types, a required tag property with distinct constant values, or #[serde(deny_unknown_fields)] on variants with distinct required fields (an untagged enum whose variants overlap cannot be bridged)"
                ));
            }
        }
    }
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

//! The bridge's uses of the disjointness prover ([`crate::schema::disjoint`]): an `anyOf` as the
//! subset's `oneOf` when its branches are provably disjoint, and `unevaluatedProperties` pushed
//! into `oneOf` branches on the same proof. What the prover reads of a leaf comes from the
//! bridge's working form ([`Out`]).

use super::shape::{Annotations, Out, Shape, leaves};
use crate::json::json_hash;
use crate::schema::disjoint::{Facts, facts_disjoint, shown_at_once};
use crate::schema::subset::Type;
use serde_json::Value;
use std::collections::HashMap;

/// What the prover reads of one leaf, computed once: with thousands of leaves and properties,
/// looking each up again per pair was quadratic twice over.
fn facts(out: &Out) -> Facts<'_> {
    let Shape::Typed(t) = &out.shape else {
        return Facts::unknown();
    };
    Facts::typed(
        t.ty,
        t.constant.as_ref(),
        t.enumeration.as_deref(),
        t.props.iter().map(|(k, v)| (k.as_str(), v)),
        t.required.iter().map(String::as_str),
        t.additional == Some(Value::Bool(false)),
    )
}

/// Whether no value can match two of `leaves` (`false` when it cannot be shown).
pub(super) fn all_disjoint(leaves: &[&Out]) -> bool {
    let facts: Vec<Facts<'_>> = leaves.iter().map(|o| facts(o)).collect();
    let all: Vec<&Facts<'_>> = facts.iter().collect();
    shown_at_once(&all)
        || all
            .iter()
            .enumerate()
            .all(|(i, a)| all[i + 1..].iter().all(|b| facts_disjoint(a, b)))
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
        .map(|set| set.iter().map(|o| facts(o)).collect())
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

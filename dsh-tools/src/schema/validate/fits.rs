//! The fast path (`fits`): recursive, yes or no, nothing allocated on valid input; past its
//! recursion budget it hands the subtree to the collector, silently.

use super::super::checks::*;
use super::super::compile::{Additional, CompiledSchema, Node, NodeId, StringNode};
use crate::json::{is_lossless, is_lossless_number};
use serde_json::Value;

/// Recursion budget of the fast path before it switches to the iterative collector.
pub(super) const FAST_DEPTH: u32 = 48;

/// Recursion budget of the probe the collector runs on each subtree before listing it. Bounded,
/// so that probing every level of a deep invalid value costs at most this factor.
pub(super) const PROBE_DEPTH: u32 = 16;

impl CompiledSchema {
    /// The fast path.
    pub(super) fn fits<const PROBE: bool>(&self, id: NodeId, v: &Value, depth: u32) -> bool {
        let node = &self.nodes[id as usize];
        match leaf_fits(node, v) {
            Some(ok) => ok,
            None => self.fits_container::<PROBE>(id, node, v, depth),
        }
    }

    /// A child of a container: scalar checks inline, containers through a call.
    #[inline(always)]
    pub(super) fn fits_child<const PROBE: bool>(&self, id: NodeId, v: &Value, depth: u32) -> bool {
        let node = &self.nodes[id as usize];
        match leaf_fits(node, v) {
            Some(ok) => ok,
            // `Option<scalar>` (every optional argument): the null check and the scalar's own
            // check inline, as `fits_container` would decide it, without two calls.
            None => match node {
                Node::OneOf(_, Some(of)) if depth > 0 => {
                    v.is_null() || {
                        let inner = &self.nodes[*of as usize];
                        match leaf_fits(inner, v) {
                            Some(ok) => ok,
                            None => self.fits_container::<PROBE>(*of, inner, v, depth - 1),
                        }
                    }
                }
                _ => self.fits_container::<PROBE>(id, node, v, depth),
            },
        }
    }

    pub(super) fn fits_container<const PROBE: bool>(
        &self,
        id: NodeId,
        node: &Node,
        v: &Value,
        depth: u32,
    ) -> bool {
        if depth == 0 {
            // A probe only answers "certainly valid"; past its budget it says "don't know".
            return !PROBE && self.fits_silently(id, v);
        }
        match node {
            // A probe cannot count matches: a branch past its budget is "don't know", and
            // miscounting it as a miss could turn two matches into one. Let the collector decide.
            // Exact: null matches only the null branch, anything else only X's.
            Node::OneOf(_, Some(of)) => v.is_null() || self.fits::<PROBE>(*of, v, depth - 1),
            Node::OneOf(..) if PROBE => false,
            Node::OneOf(branches, None) => {
                let mut matched = 0;
                for b in branches.iter() {
                    if self.fits::<PROBE>(*b, v, depth - 1) {
                        matched += 1;
                        if matched > 1 {
                            return false;
                        }
                    }
                }
                matched == 1
            }
            Node::Object(o) => {
                let Value::Object(map) = v else {
                    return false;
                };
                let mut required = 0;
                let mut hint = 0;
                for (k, child) in map {
                    let ok = match o.find_from(k, hint) {
                        Some((i, p)) => {
                            hint = i + 1;
                            required += usize::from(p.required);
                            if p.mask.is_empty() {
                                self.fits_child::<PROBE>(p.id, child, depth - 1)
                            } else {
                                p.mask.admits(child)
                            }
                        }
                        None => match o.additional {
                            Additional::Allow => lossless(child, depth - 1),
                            Additional::Deny => false,
                            Additional::Schema(extra) => {
                                self.fits_child::<PROBE>(extra, child, depth - 1)
                            }
                        },
                    };
                    if !ok {
                        return false;
                    }
                }
                required == o.required_count
            }
            Node::Array(a) => {
                let Value::Array(items) = v else {
                    return false;
                };
                if (a.min_items.is_some() || a.max_items.is_some())
                    && count_problem(a, items.len()).is_some()
                {
                    return false;
                }
                let items_ok = match a.items {
                    Some(_) if !a.items_mask.is_empty() => {
                        items.iter().all(|x| a.items_mask.admits(x))
                    }
                    Some(item) => items
                        .iter()
                        .all(|x| self.fits_child::<PROBE>(item, x, depth - 1)),
                    None => items.iter().all(|x| lossless(x, depth - 1)),
                };
                items_ok && (!a.unique || first_duplicate(items).is_none())
            }
            Node::Any => lossless(v, depth),
            // Scalars are decided by `leaf_fits`.
            _ => leaf_fits(node, v).unwrap_or(false),
        }
    }
}

/// Decides scalar nodes (and `Any` on scalar values) without a call; `None` for the rest.
#[inline(always)]
fn leaf_fits(node: &Node, v: &Value) -> Option<bool> {
    Some(match node {
        Node::String(s) => match v {
            Value::String(x) => s.plain || string_fits(s, x),
            _ => false,
        },
        Node::Number(n) => match v {
            Value::Number(x) => {
                if n.plain {
                    return Some(number_type_ok(n, x));
                }
                if let Some((lo, hi)) = n.range {
                    if let Some(i) = x.as_i64() {
                        return Some(lo <= i128::from(i) && i128::from(i) <= hi);
                    }
                    if let Some(u) = x.as_u64() {
                        return Some(lo <= i128::from(u) && i128::from(u) <= hi);
                    }
                }
                number_type_ok(n, x) && number_problem(n, x).is_none()
            }
            _ => false,
        },
        Node::Literal(l) => literal_type_ok(l, v) && literal_problem(l, v).is_none(),
        Node::Any => match v {
            Value::Number(x) => is_lossless_number(x),
            Value::Array(_) | Value::Object(_) => return None,
            _ => true,
        },
        _ => return None,
    })
}

#[inline(never)]
fn string_fits(s: &StringNode, x: &str) -> bool {
    string_problem(s, x).is_none()
}

/// Losslessness, recursive up to `depth` levels, then iterative.
pub(super) fn lossless(v: &Value, depth: u32) -> bool {
    match v {
        Value::Number(n) => is_lossless_number(n),
        Value::Array(items) if depth > 0 => items.iter().all(|x| lossless(x, depth - 1)),
        Value::Object(map) if depth > 0 => map.values().all(|x| lossless(x, depth - 1)),
        Value::Array(_) | Value::Object(_) => is_lossless(v),
        _ => true,
    }
}

//! The fast path (`fits`): recursive, yes or no, nothing allocated on valid input; past its
//! recursion budget it hands the subtree to the collector, silently.
//!
//! A *flat* object (every member a scalar or a list of them: most tools' arguments, and the
//! records of a list) skips the general container code: `fits_flat` walks its members beside
//! the declared properties while they arrive in declaration order, and looks keys up only from
//! the first one that does not; an array of flat objects checks them all in one loop
//! (`fits_flat_items`).

use super::super::checks::*;
use super::super::compile::{
    Additional, ArrayNode, CompiledSchema, Node, NodeId, ObjectNode, Pick, Prop, Quick, StringNode,
    TagPick, same_len_eq,
};
use crate::json::{is_lossless, is_lossless_number};
use serde_json::{Map, Value};

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
            None => self.fits_composite::<PROBE>(id, node, v, depth),
        }
    }

    /// A node `leaf_fits` does not decide: a flat object straight to its loop, the rest through
    /// [`fits_container`](Self::fits_container).
    #[inline(always)]
    fn fits_composite<const PROBE: bool>(
        &self,
        id: NodeId,
        node: &Node,
        v: &Value,
        depth: u32,
    ) -> bool {
        match node {
            // At depth 0 the general path hands over to the collector, as for any container.
            Node::Object(o) if o.flat && depth > 0 => {
                matches!(v, Value::Object(map) if self.fits_flat::<PROBE>(o, map, depth))
            }
            _ => self.fits_container::<PROBE>(id, node, v, depth),
        }
    }

    /// The common case of a flat object: members that arrive in declaration order (a model
    /// writes the arguments in the schema's order), checked in a loop over members and declared
    /// properties side by side. A member its mask decides costs no call; any other, one. It
    /// stops at the first member out of order.
    #[inline(always)]
    fn flat_in_order<const PROBE: bool>(
        &self,
        o: &ObjectNode,
        map: &Map<String, Value>,
        depth: u32,
    ) -> Flat {
        let mut matched = 0;
        for ((k, child), p) in map.iter().zip(o.props.iter()) {
            if !same_len_eq(p.key.as_bytes(), k.as_bytes()) {
                return Flat::Rest(matched);
            }
            if !self.flat_member_fits::<PROBE>(p, child, depth) {
                return Flat::Decided(false);
            }
            matched += 1;
        }
        if matched < map.len() {
            return Flat::Rest(matched);
        }
        // The members are exactly the first `matched` declared properties.
        Flat::Decided(matched >= o.required_end)
    }

    /// A flat object: the in-order loop, then the lookups from where it stopped, if it did.
    #[inline(always)]
    fn flat_fits<const PROBE: bool>(
        &self,
        o: &ObjectNode,
        map: &Map<String, Value>,
        depth: u32,
    ) -> bool {
        match self.flat_in_order::<PROBE>(o, map, depth) {
            Flat::Decided(ok) => ok,
            Flat::Rest(at) => self.fits_flat_rest::<PROBE>(o, map, at, depth),
        }
    }

    /// A flat object (see `ObjectNode::flat`). Exact, so a probe may trust it at any depth.
    #[inline(never)]
    pub(super) fn fits_flat<const PROBE: bool>(
        &self,
        o: &ObjectNode,
        map: &Map<String, Value>,
        depth: u32,
    ) -> bool {
        self.flat_fits::<PROBE>(o, map, depth)
    }

    /// Every item of an array of flat objects (a list of records), in one loop: what
    /// [`fits_flat`](Self::fits_flat) decides, without a call per item.
    #[inline(never)]
    pub(super) fn fits_flat_items<const PROBE: bool>(
        &self,
        o: &ObjectNode,
        items: &[Value],
        depth: u32,
    ) -> bool {
        items.iter().all(
            |item| matches!(item, Value::Object(map) if self.flat_fits::<PROBE>(o, map, depth)),
        )
    }

    /// [`fits_flat`](Self::fits_flat) from member `at`, the first its in-order loop did not
    /// decide (the members before it matched the first `at` declared properties).
    #[inline(never)]
    fn fits_flat_rest<const PROBE: bool>(
        &self,
        o: &ObjectNode,
        map: &Map<String, Value>,
        at: usize,
        depth: u32,
    ) -> bool {
        let mut hint = at;
        let mut required = o.props[..at].iter().filter(|p| p.required).count();
        for (k, child) in map.iter().skip(at) {
            let Some((i, p)) = o.find_from(k, hint) else {
                if self.flat_undeclared(o, child, depth) {
                    continue;
                }
                return false;
            };
            hint = i + 1;
            required += usize::from(p.required);
            if !self.flat_member_fits::<PROBE>(p, child, depth) {
                return false;
            }
        }
        required == o.required_count
    }

    /// A declared member of a flat object: by its mask or its [`Quick`] shape in the loop,
    /// anything else by a call.
    #[inline(always)]
    fn flat_member_fits<const PROBE: bool>(&self, p: &Prop, v: &Value, depth: u32) -> bool {
        if p.mask.is_empty() {
            match self.quick_fits(p, v) {
                Some(ok) => ok,
                None => self.flat_member::<PROBE>(p, v, depth),
            }
        } else {
            p.mask.admits(v)
        }
    }

    /// [`Quick::Enum`]: out of line, which keeps the loop's own code (and the registers it
    /// saves) as small as for masked members alone.
    #[inline(never)]
    fn enum_fits(&self, p: &Prop, v: &Value) -> Option<bool> {
        let Node::String(s) = &self.nodes[p.id as usize] else {
            return None;
        };
        let e = s.one_of.as_ref()?;
        Some(match v {
            Value::String(x) => e
                .members
                .iter()
                .any(|m| same_len_eq(m.as_bytes(), x.as_bytes())),
            _ => false,
        })
    }

    /// [`Quick::Const`], out of line like [`enum_fits`](Self::enum_fits).
    #[inline(never)]
    fn const_fits(&self, p: &Prop, v: &Value) -> Option<bool> {
        let Node::String(s) = &self.nodes[p.id as usize] else {
            return None;
        };
        let c = s.constant.as_ref()?;
        let Value::String(x) = v else {
            return Some(false);
        };
        let is = |m: &str| same_len_eq(m.as_bytes(), x.as_bytes());
        Some(
            is(&c.members[0])
                && s.one_of
                    .as_ref()
                    .is_none_or(|e| e.members.iter().any(|m| is(m))),
        )
    }

    /// A member whose [`Quick`] shape decides it without visiting its node: an `enum` or a
    /// `const` of strings, an array of items a mask decides. `None`: visit the node.
    #[inline(always)]
    fn quick_fits(&self, p: &Prop, v: &Value) -> Option<bool> {
        match p.quick {
            Quick::Node => None,
            Quick::Enum => self.enum_fits(p, v),
            Quick::Const => self.const_fits(p, v),
            Quick::Items(mask) => Some(match v {
                Value::Array(items) => mask.admits_all(items),
                _ => false,
            }),
        }
    }

    /// A tagged union: the branch the value's tag names, alone.
    #[inline(never)]
    fn fits_tagged<const PROBE: bool>(&self, t: &TagPick, v: &Value, depth: u32) -> bool {
        match v {
            // Only the null branch admits null.
            Value::Null => t.null,
            Value::Object(map) => {
                let Some((_, Value::String(tag))) = member(map, &t.key) else {
                    // Every object branch requires a string there.
                    return false;
                };
                match t
                    .tags
                    .iter()
                    .find(|(name, _)| same_len_eq(name.as_bytes(), tag.as_bytes()))
                {
                    Some((_, branch)) => self.fits::<PROBE>(*branch, v, depth),
                    None => false,
                }
            }
            _ => false,
        }
    }

    /// An undeclared member of a flat object (whose `additionalProperties` is never a schema).
    #[inline(never)]
    fn flat_undeclared(&self, o: &ObjectNode, v: &Value, depth: u32) -> bool {
        matches!(o.additional, Additional::Allow) && lossless(v, depth.saturating_sub(1))
    }

    /// A flat object's member neither its mask nor its [`Quick`] shape decides: a scalar node
    /// (or `Option` of one), or an array of items their mask decides.
    #[inline(never)]
    fn flat_member<const PROBE: bool>(&self, p: &Prop, v: &Value, depth: u32) -> bool {
        let node = &self.nodes[p.id as usize];
        if let Some(ok) = leaf_fits(node, v) {
            return ok;
        }
        match node {
            Node::OneOf(_, Pick::NullOr(of)) => {
                if v.is_null() {
                    return true;
                }
                if let Some(ok) = leaf_fits(&self.nodes[*of as usize], v) {
                    return ok;
                }
            }
            Node::Array(a) if !a.items_mask.is_empty() => {
                let Value::Array(items) = v else {
                    return false;
                };
                return masked_items_fit(a, items);
            }
            _ => {}
        }
        // Not a scalar after all (`flat` says it is): the general path, never wrong.
        self.fits_child::<PROBE>(p.id, v, depth.saturating_sub(1))
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
                Node::OneOf(_, Pick::NullOr(of)) if depth > 0 => {
                    v.is_null() || {
                        let inner = &self.nodes[*of as usize];
                        match leaf_fits(inner, v) {
                            Some(ok) => ok,
                            None => self.fits_composite::<PROBE>(*of, inner, v, depth - 1),
                        }
                    }
                }
                _ => self.fits_composite::<PROBE>(id, node, v, depth),
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
            Node::OneOf(_, Pick::NullOr(of)) => {
                v.is_null() || self.fits::<PROBE>(*of, v, depth - 1)
            }
            // Exact as well: the tag rules out every other branch.
            Node::OneOf(_, Pick::Tag(tag)) => self.fits_tagged::<PROBE>(tag, v, depth - 1),
            Node::OneOf(..) if PROBE => false,
            Node::OneOf(branches, Pick::All) => {
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
                            if !p.mask.is_empty() {
                                p.mask.admits(child)
                            } else if let Some(ok) = self.quick_fits(p, child) {
                                ok
                            } else {
                                self.fits_child::<PROBE>(p.id, child, depth - 1)
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
                if !a.items_mask.is_empty() {
                    return masked_items_fit(a, items);
                }
                if (a.min_items.is_some() || a.max_items.is_some())
                    && count_problem(a, items.len()).is_some()
                {
                    return false;
                }
                let items_ok = match a.items {
                    Some(item) => match &self.nodes[item as usize] {
                        // An array of flat objects (a list of records): straight to their loop.
                        Node::Object(o) if o.flat => {
                            self.fits_flat_items::<PROBE>(o, items, depth - 1)
                        }
                        _ => items
                            .iter()
                            .all(|x| self.fits_child::<PROBE>(item, x, depth - 1)),
                    },
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

/// What [`CompiledSchema::flat_in_order`] decided of a flat object.
enum Flat {
    /// Every member was decided: whether the object fits.
    Decided(bool),
    /// The first `n` members matched the first `n` declared properties, in order, and fit;
    /// member `n` is out of that order (or undeclared).
    Rest(usize),
}

/// An array whose items their mask decides (`items_mask` not empty): its count, its items'
/// types and, if asked, their uniqueness.
fn masked_items_fit(a: &ArrayNode, items: &[Value]) -> bool {
    if (a.min_items.is_some() || a.max_items.is_some()) && count_problem(a, items.len()).is_some() {
        return false;
    }
    a.items_mask.admits_all(items) && (!a.unique || first_duplicate(items).is_none())
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

/// A member of a JSON object: a scan for small objects (no hashing), the map's index otherwise.
#[inline]
pub(super) fn member<'v>(
    map: &'v Map<String, Value>,
    key: &str,
) -> Option<(&'v String, &'v Value)> {
    if map.len() <= 16 {
        map.iter()
            .find(|(k, _)| same_len_eq(k.as_bytes(), key.as_bytes()))
    } else {
        map.get_key_value(key)
    }
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

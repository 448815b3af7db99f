//! Explaining a `oneOf` that matched no branch (issue #9): a tagged union's chosen branch or
//! valid tags, serde's externally tagged enums, `[T, null]`, else the closest branch.

use super::super::compile::{
    Additional, CompiledSchema, Node, NodeId, Pick, is_plain_null, union_tag,
};
use super::super::path::{PathId, join_key};
use super::super::subset::Type;
use super::collector::Collector;
use serde_json::Value;

impl Collector<'_> {
    /// What a model needs when a `oneOf` matched no branch (issue #9): for a tagged union, the
    /// chosen branch's violations or the valid tags; for `[T, null]`, `T`'s violations; else the
    /// closest branch's (of the value's JSON type if one is, then fewest violations, then first). At most [`EXPLAINED`] violations,
    /// from sub-runs that explain nothing further (so the cost is one pass per branch).
    pub(super) fn explain_no_match(&self, id: NodeId, value: &Value, path: PathId) -> String {
        let Node::OneOf(branches, pick) = &self.schema.nodes[id as usize] else {
            return String::new();
        };
        let label = self.paths.render(self.label, path);
        let quoted_path = |p: &str| {
            if p.is_empty() {
                "\"arguments\"".to_owned()
            } else {
                format!("\"{p}\"")
            }
        };
        let quoted_label = quoted_path(&label);
        // A branch's violations: how many, as shown, and whether each is about the value itself
        // (not its insides).
        let violations = |branch: NodeId| -> (usize, String, bool) {
            let mut c = Collector::new(self.schema, &label, false);
            c.explain = false;
            c.cap = EXPLAINED + 1;
            c.run(branch, value);
            let count = c.sink.count();
            let mut shown: Vec<String> = c.sink.finish().into_iter().take(EXPLAINED).collect();
            let own = shown
                .iter()
                .all(|v| v.starts_with(&quoted_label) && v[quoted_label.len()..].starts_with(' '));
            if count > EXPLAINED {
                shown.push("...".to_owned());
            }
            (count, shown.join(", "), own)
        };
        let list = |branch: NodeId| -> (usize, String) {
            let (count, text, _) = violations(branch);
            (count, text)
        };
        if let Pick::NullOr(of) = pick {
            // Null was allowed, and the model is told so: `(or null)` after violations of the
            // value itself (`"offset" must be >= 1 (or null)`); after violations of its insides
            // (`[1]` for `Option<Vec<String>>`) the label says which value may be null.
            let (_, text, own) = violations(*of);
            if same_kind(&self.schema.nodes[*of as usize], value) && !own {
                return format!("{text} ({quoted_label} may also be null)");
            }
            return format!("{text} (or null)");
        }
        let json_list = |names: &[&str]| {
            let values: Vec<Value> = names.iter().map(|n| Value::from(*n)).collect();
            crate::json::to_compact_string(&Value::Array(values))
        };
        // `Option<Enum>` flattens to the enum's branches and a `null` one: explained as the enum,
        // with `(or null)` where the whole choice is listed.
        let is_null = |b: &NodeId| is_plain_null(&self.schema.nodes[*b as usize]);
        let or_null = if branches.iter().any(is_null) {
            " (or null)"
        } else {
            ""
        };
        let all = branches;
        let branches: Vec<NodeId> = branches.iter().copied().filter(|b| !is_null(b)).collect();
        let branches = &branches[..];
        // A tagged union: every branch an object with the same property fixed to a distinct string.
        if let Some((key, tags)) = union_tag(&self.schema.nodes, branches, false) {
            // The tag's path as the fields' paths read (`"op.kind"`), the tags as an enum lists
            // its members (compact JSON).
            let key_text = quoted_path(&join_key(&label, key));
            let choices = json_list(&tags);
            let Some(map) = value.as_object() else {
                return format!(
                    "{} must be an object whose {key_text} is one of {choices}{or_null}",
                    quoted_path(&label)
                );
            };
            let given = map.get(key).and_then(Value::as_str);
            if let Some(i) = given.and_then(|g| tags.iter().position(|t| *t == g)) {
                let tag = crate::json::to_compact_string(&Value::from(tags[i]));
                return format!("for {key_text}: {tag}, {}", list(branches[i]).1);
            }
            return format!("{key_text} must be one of {choices}");
        }
        if let Some(variants) = externally_tagged(self.schema, branches) {
            // serde's default enum: unit variants as strings, the others as `{"name": …}`.
            let data: Vec<&str> = variants
                .iter()
                .filter_map(|(name, unit)| (!unit).then_some(*name))
                .collect();
            if let Some(map) = value.as_object()
                && map.len() == 1
                && let Some((name, _)) = map.iter().next()
                && let Some(i) = data.iter().position(|d| *d == name)
            {
                let branch = branches
                    .iter()
                    .find(|b| variant_key(self.schema, **b) == Some(data[i]));
                if let Some(branch) = branch {
                    let tag = crate::json::to_compact_string(&Value::from(data[i]));
                    return format!("for {tag}, {}", list(*branch).1);
                }
            }
            let units: Vec<&str> = variants
                .iter()
                .filter_map(|(name, unit)| unit.then_some(*name))
                .collect();
            let mut choice = Vec::new();
            if !units.is_empty() {
                choice.push(format!("one of {}", json_list(&units)));
            }
            if !data.is_empty() {
                choice.push(format!(
                    "an object with one key, one of {} (the variant's name, its data as the value)",
                    json_list(&data)
                ));
            }
            return format!(
                "{} must be {}{or_null}",
                quoted_path(&label),
                choice.join(", or ")
            );
        }
        // Closest: a branch of the value's own JSON type first, then the fewest violations;
        // numbered as declared (null branches included).
        let (mut best, mut best_rank, mut best_text) = (0, (true, usize::MAX), String::new());
        for (i, b) in all.iter().enumerate().filter(|(_, b)| !is_null(b)) {
            let (count, text) = list(*b);
            let rank = (!same_kind(&self.schema.nodes[*b as usize], value), count);
            if rank < best_rank {
                (best, best_rank, best_text) = (i, rank, text);
            }
        }
        format!("closest is branch {best}: {best_text}{or_null}")
    }
}

/// Whether a node is of the value's JSON type (unions and `{}` count as any type).
fn same_kind(node: &Node, v: &Value) -> bool {
    match node {
        Node::Any | Node::OneOf(..) => true,
        Node::String(_) => v.is_string(),
        Node::Number(_) => v.is_number(),
        Node::Literal(l) => match l.ty {
            Type::Boolean => v.is_boolean(),
            _ => v.is_null(),
        },
        Node::Object(_) => v.is_object(),
        Node::Array(_) => v.is_array(),
    }
}

/// Violations shown when explaining a `oneOf` that matched nothing.
const EXPLAINED: usize = 5;

/// The property of a one-property object branch that requires it and allows nothing else (an
/// externally tagged variant with data: `{"circle": {...}}`).
fn variant_key(schema: &CompiledSchema, branch: NodeId) -> Option<&str> {
    let Node::Object(o) = &schema.nodes[branch as usize] else {
        return None;
    };
    match (&*o.props, &*o.required, &o.additional) {
        ([prop], [required], Additional::Deny) if prop.key == *required => Some(&prop.key),
        _ => None,
    }
}

/// serde's externally tagged enum: every branch a string enum (unit variants) or a
/// [`variant_key`] object, at least one of the latter. Each variant's name and whether it is a
/// unit variant, in branch order.
fn externally_tagged<'s>(
    schema: &'s CompiledSchema,
    branches: &[NodeId],
) -> Option<Vec<(&'s str, bool)>> {
    let mut variants = Vec::new();
    for branch in branches {
        if let Some(key) = variant_key(schema, *branch) {
            variants.push((key, false));
            continue;
        }
        let Node::String(s) = &schema.nodes[*branch as usize] else {
            return None;
        };
        let names = s.constant.as_ref().or(s.one_of.as_ref())?;
        variants.extend(names.members.iter().map(|n| (&**n, true)));
    }
    variants.iter().any(|(_, unit)| !unit).then_some(variants)
}

//! Mapping arguments the model produced under an exported schema back to ours: the plan the
//! transform leaves, and how a union's branch is picked (from the value's first level, with a
//! bounded number of trials when the branches cannot be told apart).

use super::dialect::MAX_EXPORT_DEPTH;
use crate::json::clone_deep;
use crate::schema::CompiledSchema;
use serde_json::{Value, json};
use std::collections::HashSet;
use std::sync::Arc;

/// How to map arguments produced under the exported schema back to ours.
#[derive(Clone, Debug, Default)]
pub(crate) enum Plan {
    /// Nothing to do below this point.
    #[default]
    Keep,
    /// An object: per property, whether a `null` means "absent", and the plan below.
    Object {
        props: Vec<PropPlan>,
        additional: Option<Box<Plan>>,
    },
    /// Every item.
    Array(Box<Plan>),
    /// A union: the branch the value's type and property names select; when several could
    /// match, the first whose restored value validates against the original branch.
    Union(Vec<Branch>),
}

/// One branch of a union plan.
#[derive(Clone, Debug)]
pub(crate) struct Branch {
    original: Arc<CompiledSchema>,
    plan: Plan,
    /// What the branch says about a value's top level, checked without walking the value.
    top: Shallow,
    /// An object branch's properties, each as far as one level tells, sorted by name (searched,
    /// never hashed: the names may come from a remote schema).
    props: Option<Arc<[(String, Shallow)]>>,
}

/// How well a value fits a branch, judged from its first level.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Fit {
    /// Its kind, its properties' kinds, and every property name is declared.
    Full,
    /// Its kind and its declared properties' kinds; some names are not declared.
    Loose,
    No,
}

/// What a schema says about a value's kind and, when finite, its values.
#[derive(Clone, Debug, Default)]
struct Shallow {
    ty: Option<String>,
    values: Option<Vec<Value>>,
}

impl Shallow {
    fn of(schema: &Value) -> Self {
        let values = match (schema.get("const"), schema.get("enum")) {
            (Some(c), _) => Some(vec![clone_deep(c)]),
            (None, Some(Value::Array(e))) if e.len() <= 64 => {
                Some(e.iter().map(clone_deep).collect())
            }
            _ => None,
        };
        Self {
            ty: schema
                .get("type")
                .and_then(Value::as_str)
                .map(str::to_owned),
            values,
        }
    }

    fn admits(&self, value: &Value) -> bool {
        let type_fits = match (self.ty.as_deref(), value) {
            (None, _) => true,
            (Some("object"), Value::Object(_))
            | (Some("array"), Value::Array(_))
            | (Some("string"), Value::String(_))
            | (Some("boolean"), Value::Bool(_))
            | (Some("null"), Value::Null)
            | (Some("number"), Value::Number(_)) => true,
            (Some("integer"), Value::Number(n)) => crate::json::is_integer(n),
            _ => false,
        };
        type_fits
            && self
                .values
                .as_ref()
                .is_none_or(|vs| vs.iter().any(|v| crate::json::json_equal(v, value)))
    }
}

impl Branch {
    pub(super) fn new(schema: &Value, plan: Plan) -> Self {
        let top = Shallow::of(schema);
        let props = (top.ty.as_deref() == Some("object"))
            .then(|| schema.get("properties").and_then(Value::as_object))
            .flatten()
            .map(|p| {
                let mut props: Vec<(String, Shallow)> =
                    p.iter().map(|(k, v)| (k.clone(), Shallow::of(v))).collect();
                props.sort_by(|a, b| a.0.cmp(&b.0));
                Arc::from(props)
            });
        Self {
            original: compile(schema),
            plan,
            top,
            props,
        }
    }

    /// Whether `value` may have been produced under this branch, judged from its top level and
    /// its properties' kinds, without walking deeper.
    fn fit(&self, value: &Value) -> Fit {
        if !self.top.admits(value) {
            return Fit::No;
        }
        let (Some(props), Value::Object(map)) = (&self.props, value) else {
            return Fit::Full;
        };
        let mut fit = Fit::Full;
        for (k, v) in map {
            match props.binary_search_by(|(name, _)| name.as_str().cmp(k)) {
                // `null` may stand for "absent" (the strict closure).
                Ok(i) if v.is_null() || props[i].1.admits(v) => {}
                Ok(_) => return Fit::No,
                Err(_) => fit = Fit::Loose,
            }
        }
        fit
    }
}

/// How many times one restore may try a union branch it cannot select by type and property
/// names (each try restores and validates a copy). Past it, the first candidate is taken: a
/// nested union of overlapping branches stays linear instead of costing `branches^depth`.
const UNION_TRIES: usize = 16;

#[derive(Clone, Debug)]
pub(crate) struct PropPlan {
    pub(crate) name: String,
    pub(crate) null_means_absent: bool,
    pub(crate) plan: Plan,
}

impl Plan {
    pub(super) fn is_keep(&self) -> bool {
        matches!(self, Plan::Keep)
    }
}

fn compile(schema: &Value) -> Arc<CompiledSchema> {
    // Branches of a supported schema are supported schemas.
    Arc::new(CompiledSchema::compile(schema).unwrap_or_else(|_| {
        CompiledSchema::compile(&json!({})).expect("the empty schema compiles")
    }))
}

/// Applies `plan` to `value` (arguments produced under the exported schema), in place.
pub(crate) fn restore(value: &mut Value, plan: &Plan, depth: usize) {
    let mut tries = UNION_TRIES;
    restore_within(value, plan, depth, &mut tries);
}

fn restore_within(value: &mut Value, plan: &Plan, depth: usize, tries: &mut usize) {
    if depth > MAX_EXPORT_DEPTH {
        return;
    }
    match plan {
        Plan::Keep => {}
        Plan::Object { props, additional } => {
            let Value::Object(map) = value else { return };
            for prop in props {
                let Some(child) = map.get_mut(&prop.name) else {
                    continue;
                };
                if prop.null_means_absent && child.is_null() {
                    map.shift_remove(&prop.name);
                    continue;
                }
                restore_within(child, &prop.plan, depth + 1, tries);
            }
            if let Some(additional) = additional {
                let declared: HashSet<&str> = props.iter().map(|p| p.name.as_str()).collect();
                for (key, child) in map.iter_mut() {
                    if !declared.contains(key.as_str()) {
                        restore_within(child, additional, depth + 1, tries);
                    }
                }
            }
        }
        Plan::Array(items) => {
            if let Value::Array(values) = value {
                for v in values {
                    restore_within(v, items, depth + 1, tries);
                }
            }
        }
        Plan::Union(branches) => {
            // Selected by kind and property names (a strict-mode value carries only its
            // branch's names); by kind alone when no branch declares all of them.
            let fits: Vec<Fit> = branches.iter().map(|b| b.fit(value)).collect();
            let wanted = if fits.contains(&Fit::Full) {
                Fit::Full
            } else {
                Fit::Loose
            };
            let mut candidates = branches
                .iter()
                .zip(&fits)
                .filter(|(_, f)| **f == wanted)
                .map(|(b, _)| b)
                .peekable();
            let Some(first) = candidates.next() else {
                return;
            };
            if candidates.peek().is_none() || *tries == 0 {
                restore_within(value, &first.plan, depth + 1, tries);
                return;
            }
            for branch in std::iter::once(first).chain(candidates) {
                if *tries == 0 {
                    break;
                }
                *tries -= 1;
                let mut candidate = clone_deep(value);
                restore_within(&mut candidate, &branch.plan, depth + 1, tries);
                if branch.original.is_valid(&candidate) {
                    *value = candidate;
                    return;
                }
            }
            // No candidate validated (or the tries ran out): the first candidate's plan, so
            // its nulls still read as absent; the validator reports what is wrong.
            restore_within(value, &first.plan, depth + 1, tries);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::provider::dialect::Dialect;
    use crate::provider::transform::Transform;

    /// `depth` nested unions of two object branches that differ only in a scalar's type, each
    /// with an optional field the strict closure makes nullable, and a value through them.
    fn nested_unions(depth: usize) -> (Value, Value) {
        let mut schema = json!({"type": "object", "properties": {"o": {"type": "string"}}});
        let mut value = json!({"o": null});
        for _ in 0..depth {
            let branch = |t: &str| {
                json!({"type": "object", "properties": {
                    "v": schema.clone(), "t": {"type": t}, "o": {"type": "string"}},
                    "required": ["v", "t"]})
            };
            schema = json!({"anyOf": [branch("string"), branch("integer")]});
            value = json!({"v": value, "t": 5, "o": null});
        }
        (
            json!({"type": "object", "properties": {"u": schema}, "required": ["u"]}),
            json!({"u": value}),
        )
    }

    #[test]
    fn unions_are_restored_through_the_branch_their_kinds_select() {
        let rules = Dialect::strict(crate::provider::Provider::OpenAiChat).rules();
        let (schema, mut value) = nested_unions(12);
        let mut transform = Transform::new(
            Dialect::strict(crate::provider::Provider::OpenAiChat),
            &rules,
        );
        let (_, plan) = transform.root(&schema);
        let mut tries = UNION_TRIES;
        restore_within(&mut value, &plan, 0, &mut tries);
        assert_eq!(
            tries, UNION_TRIES,
            "every union was decided by its branches' kinds"
        );
        let mut at = &value["u"];
        for _ in 0..12 {
            assert!(
                at.get("o").is_none(),
                "each level's null was read as absent: {at}"
            );
            at = &at["v"];
        }
        assert!(at.get("o").is_none());
    }
}

//! The bridge's working form of a converted schema, its rendering to JSON, and intersections
//! (`allOf`, `$ref` siblings, keywords beside `oneOf`).
//!
//! Helpers here recurse only into nested unions (`Shape::Union` inside `Shape::Union`), whose
//! depth the loader's [`MAX_DEPTH`](super::MAX_DEPTH) bounds.

use crate::json::{cmp_numbers, json_equal};
use crate::schema::keywords::BOUNDS;
use crate::schema::subset::Type;
use serde_json::{Map, Number, Value};
use std::cmp::Ordering;

/// `title`, `description`, `default`, `examples`.
#[derive(Clone, Debug, Default, PartialEq)]
pub(super) struct Annotations {
    pub(super) title: Option<Value>,
    pub(super) description: Option<Value>,
    pub(super) default: Option<Value>,
    pub(super) examples: Option<Value>,
}

impl Annotations {
    /// Field by field, `self` wins.
    fn or(self, other: Annotations) -> Annotations {
        Annotations {
            title: self.title.or(other.title),
            description: self.description.or(other.description),
            default: self.default.or(other.default),
            examples: self.examples.or(other.examples),
        }
    }

    pub(super) fn is_empty(&self) -> bool {
        self.title.is_none()
            && self.description.is_none()
            && self.default.is_none()
            && self.examples.is_none()
    }
}

/// A node with a single `type` and the keywords of the subset that apply to it.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct Typed {
    pub(super) ty: Type,
    pub(super) props: Vec<(String, Value)>,
    pub(super) required: Vec<String>,
    /// `true`, `false` or a schema; `None` when not declared (open too, but `true` also marks
    /// every property as evaluated for `unevaluatedProperties`).
    pub(super) additional: Option<Value>,
    pub(super) items: Option<Value>,
    pub(super) enumeration: Option<Vec<Value>>,
    pub(super) constant: Option<Value>,
    /// `minimum`, `maximum`, `exclusiveMinimum`, `exclusiveMaximum`.
    pub(super) bounds: [Option<Number>; 4],
    pub(super) min_length: Option<u64>,
    pub(super) max_length: Option<u64>,
    pub(super) pattern: Option<String>,
    pub(super) min_items: Option<u64>,
    pub(super) max_items: Option<u64>,
    pub(super) unique: bool,
}

impl Typed {
    pub(super) fn new(ty: Type) -> Self {
        Typed {
            ty,
            props: Vec::new(),
            required: Vec::new(),
            additional: None,
            items: None,
            enumeration: None,
            constant: None,
            bounds: [None, None, None, None],
            min_length: None,
            max_length: None,
            pattern: None,
            min_items: None,
            max_items: None,
            unique: false,
        }
    }

    /// Drops `enum`/`const` members the type does not admit; `None` when nothing can match.
    pub(super) fn normalize(mut self) -> Option<Self> {
        if let Some(members) = &mut self.enumeration {
            members.retain(|m| self.ty.admits(m));
            if members.is_empty() {
                return None;
            }
        }
        if let Some(c) = &self.constant {
            if !self.ty.admits(c) {
                return None;
            }
            if let Some(members) = &self.enumeration
                && !members.iter().any(|m| json_equal(m, c))
            {
                return None;
            }
        }
        if self.ty == Type::Null {
            // `null` has one value: a member list can only repeat it.
            self.enumeration = None;
            self.constant = None;
        }
        Some(self)
    }
}

#[derive(Clone, Debug, PartialEq)]
pub(super) enum Shape {
    /// No `type`, no `oneOf`: any lossless JSON value.
    Any,
    Typed(Box<Typed>),
    /// `oneOf` with at least two branches.
    Union(Vec<Out>),
}

/// A converted schema.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct Out {
    pub(super) ann: Annotations,
    pub(super) shape: Shape,
}

impl Out {
    pub(super) fn any() -> Self {
        Out {
            ann: Annotations::default(),
            shape: Shape::Any,
        }
    }

    pub(super) fn typed(t: Typed) -> Self {
        Out {
            ann: Annotations::default(),
            shape: Shape::Typed(Box::new(t)),
        }
    }

    /// A union of `branches` (one branch is itself; none is `None`).
    pub(super) fn union(ann: Annotations, mut branches: Vec<Out>) -> Option<Self> {
        match branches.len() {
            0 => None,
            1 => {
                let b = branches.pop()?;
                Some(Out {
                    ann: ann.or(b.ann),
                    shape: b.shape,
                })
            }
            _ => Some(Out {
                ann,
                shape: Shape::Union(branches),
            }),
        }
    }

    /// The schema as JSON, keys in a fixed order.
    pub(super) fn into_value(self) -> Value {
        let mut m = Map::new();
        let a = self.ann;
        put(&mut m, "title", a.title);
        put(&mut m, "description", a.description);
        match self.shape {
            Shape::Any => {}
            Shape::Union(branches) => {
                m.insert(
                    "oneOf".into(),
                    Value::Array(branches.into_iter().map(Out::into_value).collect()),
                );
            }
            Shape::Typed(t) => typed_into(*t, &mut m),
        }
        put(&mut m, "default", a.default);
        put(&mut m, "examples", a.examples);
        Value::Object(m)
    }
}

fn put(m: &mut Map<String, Value>, k: &str, v: Option<Value>) {
    if let Some(v) = v {
        m.insert(k.into(), v);
    }
}

fn typed_into(t: Typed, m: &mut Map<String, Value>) {
    m.insert("type".into(), t.ty.name().into());
    if !t.props.is_empty() {
        m.insert(
            "properties".into(),
            Value::Object(t.props.into_iter().collect()),
        );
    }
    if !t.required.is_empty() {
        let names = t.required.into_iter().map(Value::from);
        m.insert("required".into(), Value::Array(names.collect()));
    }
    put(m, "additionalProperties", t.additional);
    put(m, "items", t.items);
    put(m, "enum", t.enumeration.map(Value::Array));
    put(m, "const", t.constant);
    for (k, b) in BOUNDS.iter().zip(t.bounds) {
        put(m, k, b.map(Value::Number));
    }
    put(m, "minLength", t.min_length.map(Value::from));
    put(m, "maxLength", t.max_length.map(Value::from));
    put(m, "pattern", t.pattern.map(Value::from));
    put(m, "minItems", t.min_items.map(Value::from));
    put(m, "maxItems", t.max_items.map(Value::from));
    if t.unique {
        m.insert("uniqueItems".into(), true.into());
    }
}

/// Counts how many more JSON values the bridge may copy (pushing keywords into every branch of a
/// union copies them), so that a hostile schema cannot make it allocate without bound.
pub(super) struct Budget(pub(super) usize);

/// Most JSON values the bridge copies while pushing keywords into union branches.
pub(super) const COPY_BUDGET: usize = 1_000_000;

impl Budget {
    /// Accounts for a copy of `out` (its typed leaves and the JSON values they hold).
    fn spend(&mut self, out: &Out) -> Result<(), String> {
        let mut n = 0usize;
        for leaf in leaves(out) {
            n += 1;
            let Shape::Typed(t) = &leaf.shape else {
                continue;
            };
            let mut stack: Vec<&Value> = t.props.iter().map(|(_, v)| v).collect();
            stack.extend(t.additional.iter().chain(t.items.iter()));
            while let Some(v) = stack.pop() {
                n += 1;
                match v {
                    Value::Array(a) => stack.extend(a),
                    Value::Object(o) => stack.extend(o.values()),
                    _ => {}
                }
            }
        }
        self.0 = self.0.checked_sub(n).ok_or_else(|| {
            format!("combining these schemas copies more than {COPY_BUDGET} JSON values (pushing keywords into every oneOf branch, or combining two oneOfs branch by branch)")
        })?;
        Ok(())
    }
}

/// The intersection of two schemas (`allOf` semantics), or `None` when no value can match both.
/// On a conflict the subset cannot express, an error message. `a`'s annotations win.
pub(super) fn intersect(a: Out, b: Out, budget: &mut Budget) -> Result<Option<Out>, String> {
    let ann = a.ann.or(b.ann);
    let shape = match (a.shape, b.shape) {
        (Shape::Any, s) | (s, Shape::Any) => s,
        (Shape::Typed(x), Shape::Typed(y)) => match merge_typed(*x, *y)? {
            Some(t) => Shape::Typed(Box::new(t)),
            None => return Ok(None),
        },
        (Shape::Typed(x), Shape::Union(branches)) | (Shape::Union(branches), Shape::Typed(x)) => {
            let x = Out::typed(*x);
            let mut kept = Vec::with_capacity(branches.len());
            for branch in branches {
                budget.spend(&x)?;
                kept.extend(intersect(branch, x.clone(), budget)?);
            }
            return Ok(Out::union(ann, kept));
        }
        // Exactly one `a` and exactly one `b` match iff exactly one pair (a ∩ b) does, since
        // the number of matching pairs is the product of the numbers of matching branches.
        (Shape::Union(xs), Shape::Union(ys)) => {
            let mut kept = Vec::new();
            for x in xs {
                for y in &ys {
                    budget.spend(&x)?;
                    budget.spend(y)?;
                    kept.extend(intersect(x.clone(), y.clone(), budget)?);
                }
            }
            return Ok(Out::union(ann, kept));
        }
    };
    Ok(Some(Out { ann, shape }))
}

fn is_empty_schema(v: &Value) -> bool {
    v.as_object().is_some_and(Map::is_empty)
}

/// Merges two typed nodes as the intersection of their constraints, treating object parts as
/// fields merged into one struct (schemars' meaning for `#[serde(flatten)]`).
fn merge_typed(mut x: Typed, y: Typed) -> Result<Option<Typed>, String> {
    x.ty = match (x.ty, y.ty) {
        (a, b) if a == b => a,
        (Type::Integer, Type::Number) | (Type::Number, Type::Integer) => Type::Integer,
        _ => return Ok(None),
    };
    // Object parts.
    let names = |t: &Typed| -> std::collections::HashSet<String> {
        t.props.iter().map(|(k, _)| k.clone()).collect()
    };
    let undeclared = |from: &Typed, to: &Typed| {
        let declared = names(to);
        from.props.iter().any(|(k, _)| !declared.contains(k))
    };
    if (restricts(&x.additional) && undeclared(&y, &x))
        || (restricts(&y.additional) && undeclared(&x, &y))
    {
        return Err("the additionalProperties of one merged part would apply to properties another part declares; declare them in one place".into());
    }
    match (&x.additional, y.additional) {
        (_, None) => {}
        (None | Some(Value::Bool(true)), extra) => x.additional = extra,
        (Some(_), Some(Value::Bool(true))) => {}
        (Some(a), Some(b)) if json_equal(a, &b) => {}
        _ => return Err("merged parts declare different additionalProperties".into()),
    }
    let mut index: std::collections::HashMap<String, usize> = x
        .props
        .iter()
        .enumerate()
        .map(|(i, (k, _))| (k.clone(), i))
        .collect();
    for (k, v) in y.props {
        match index.get(&k).map(|&i| &mut x.props[i]) {
            None => {
                index.insert(k.clone(), x.props.len());
                x.props.push((k, v));
            }
            Some((_, mine)) if json_equal(mine, &v) || is_empty_schema(&v) => {}
            Some((_, mine)) if is_empty_schema(mine) => *mine = v,
            Some(_) => {
                return Err(format!(
                    "property \"{k}\" is declared with two different schemas by parts being merged"
                ));
            }
        }
    }
    let mut required: std::collections::HashSet<String> = x.required.iter().cloned().collect();
    for r in y.required {
        if required.insert(r.clone()) {
            x.required.push(r);
        }
    }
    // Array parts.
    match (&x.items, y.items) {
        (_, None) => {}
        (None, items) => x.items = items,
        (Some(a), Some(b)) if json_equal(a, &b) => {}
        _ => return Err("merged parts declare different items schemas".into()),
    }
    x.min_items = tighter(x.min_items, y.min_items, Ordering::Greater);
    x.max_items = tighter(x.max_items, y.max_items, Ordering::Less);
    x.unique |= y.unique;
    // String parts.
    x.min_length = tighter(x.min_length, y.min_length, Ordering::Greater);
    x.max_length = tighter(x.max_length, y.max_length, Ordering::Less);
    match (&x.pattern, y.pattern) {
        (_, None) => {}
        (None, p) => x.pattern = p,
        (Some(a), Some(b)) if *a == b => {}
        _ => return Err("merged parts declare different patterns".into()),
    }
    // Number parts: the tighter bound wins.
    for (i, b) in y.bounds.into_iter().enumerate() {
        let keep = if i % 2 == 0 {
            Ordering::Greater
        } else {
            Ordering::Less
        };
        x.bounds[i] = match (x.bounds[i].take(), b) {
            (Some(p), Some(q)) => Some(if cmp_numbers(&q, &p) == Some(keep) {
                q
            } else {
                p
            }),
            (p, q) => p.or(q),
        };
    }
    // Scalar members.
    x.enumeration = match (x.enumeration, y.enumeration) {
        (Some(a), Some(b)) => Some(
            a.into_iter()
                .filter(|m| b.iter().any(|n| json_equal(m, n)))
                .collect(),
        ),
        (a, b) => a.or(b),
    };
    x.constant = match (x.constant, y.constant) {
        (Some(a), Some(b)) if !json_equal(&a, &b) => return Ok(None),
        (a, b) => a.or(b),
    };
    Ok(x.normalize())
}

/// Whether an `additionalProperties` value rejects some undeclared properties.
fn restricts(additional: &Option<Value>) -> bool {
    !matches!(additional, None | Some(Value::Bool(true)))
}

fn tighter<T: Ord>(a: Option<T>, b: Option<T>, keep: Ordering) -> Option<T> {
    match (a, b) {
        (Some(p), Some(q)) => Some(if q.cmp(&p) == keep { q } else { p }),
        (p, q) => p.or(q),
    }
}

/// Declares the `required` names that `properties` lacks, once nothing can be merged into `out`
/// any more (declaring them earlier would mark them evaluated for an `unevaluatedProperties`
/// further up). A branch that requires a property its `additionalProperties: false` forbids can
/// never match: it is dropped, and `None` is returned when nothing is left.
pub(super) fn settle(out: Out) -> Option<Out> {
    let Out { ann, shape } = out;
    match shape {
        Shape::Any => Some(Out {
            ann,
            shape: Shape::Any,
        }),
        Shape::Union(branches) => {
            Out::union(ann, branches.into_iter().filter_map(settle).collect())
        }
        Shape::Typed(mut t) => {
            let declared: std::collections::HashSet<&str> =
                t.props.iter().map(|(k, _)| k.as_str()).collect();
            let missing: Vec<String> = t
                .required
                .iter()
                .filter(|r| !declared.contains(r.as_str()))
                .cloned()
                .collect();
            for name in missing {
                let schema = match &t.additional {
                    None | Some(Value::Bool(true)) => Value::Object(Map::new()),
                    Some(Value::Bool(false)) => return None,
                    Some(extra) => extra.clone(),
                };
                t.props.push((name, schema));
            }
            Some(Out {
                ann,
                shape: Shape::Typed(t),
            })
        }
    }
}

/// The leaves of nested unions.
pub(super) fn leaves(out: &Out) -> Vec<&Out> {
    let mut found = Vec::new();
    let mut stack = vec![out];
    while let Some(o) = stack.pop() {
        match &o.shape {
            Shape::Union(branches) => stack.extend(branches.iter().rev()),
            _ => found.push(o),
        }
    }
    found
}

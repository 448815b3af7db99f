//! Validating values against a [`CompiledSchema`] (spec §2.2).
//!
//! Two engines that agree on validity (property-tested):
//! * `fits` — the fast path: recursive, answers yes/no, allocates nothing on valid input. Its
//!   recursion is bounded; below [`FAST_DEPTH`] levels it hands the subtree to the collector.
//! * `Collector` — iterative (explicit task stack), lists every violation with its path in the
//!   spec's order. Inside a `oneOf` branch it runs *silently*: it only needs to know whether the
//!   branch matched, so the first violation abandons the branch.

use super::Sink;
use super::checks::*;
use super::compile::{Additional, CompiledSchema, Node, NodeId, StringNode, same_len_eq};
use super::path::{PathArena, PathId, ROOT, Seg};
use super::pattern::SessionGuard;
use crate::json::{is_lossless, is_lossless_number};
use serde_json::{Map, Value};

/// Recursion budget of the fast path before it switches to the iterative collector.
const FAST_DEPTH: u32 = 48;

/// Recursion budget of the probe the collector runs on each subtree before listing it. Bounded,
/// so that probing every level of a deep invalid value costs at most this factor.
const PROBE_DEPTH: u32 = 16;

/// Where violation paths start (spec §2.3).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Root<'a> {
    /// The default label `value`: `"value.file" must be a string`.
    #[default]
    Value,
    /// Any other label, used verbatim: `"output.n" must be an integer`.
    Label(&'a str),
    /// Parameter-root mode (tool arguments): root properties have no prefix and the root itself
    /// renders as `arguments`: `missing required property "path"`, `"arguments" must be an object`.
    Parameters,
}

impl Root<'_> {
    fn label(&self) -> &str {
        match self {
            Root::Value => "value",
            Root::Label(l) => l,
            Root::Parameters => "",
        }
    }
}

impl CompiledSchema {
    /// Whether `value` is valid. Allocates nothing when it is (unless the value is nested more
    /// than a few dozen levels deep, where the check goes on iteratively).
    #[inline]
    pub fn is_valid(&self, value: &Value) -> bool {
        if self.has_patterns {
            let _budget = SessionGuard::enter();
            return self.fits::<false>(0, value, FAST_DEPTH);
        }
        self.fits::<false>(0, value, FAST_DEPTH)
    }

    /// Every violation of `value`, with paths under the label `value`; empty when valid.
    pub fn validate(&self, value: &Value) -> Vec<String> {
        self.validate_at(value, Root::Value)
    }

    /// Every violation of `value`, with paths under `root`; empty when valid.
    ///
    /// At most [`MAX_LISTED_VIOLATIONS`](super::MAX_LISTED_VIOLATIONS) messages are listed; a
    /// final line counts the rest.
    pub fn validate_at(&self, value: &Value, root: Root<'_>) -> Vec<String> {
        // One regex budget for the fast path and the collector: a long string is matched once.
        let _budget = self.has_patterns.then(SessionGuard::enter);
        if self.is_valid(value) {
            return Vec::new();
        }
        self.collect(value, root)
    }

    /// Every violation, without trying the fast path first.
    #[cold]
    #[inline(never)]
    pub(crate) fn collect(&self, value: &Value, root: Root<'_>) -> Vec<String> {
        let _budget = self.has_patterns.then(SessionGuard::enter);
        let mut c = Collector::new(self, root.label(), false);
        c.run(0, value);
        c.sink.finish()
    }

    /// The fast path.
    fn fits<const PROBE: bool>(&self, id: NodeId, v: &Value, depth: u32) -> bool {
        let node = &self.nodes[id as usize];
        match leaf_fits(node, v) {
            Some(ok) => ok,
            None => self.fits_container::<PROBE>(id, node, v, depth),
        }
    }

    /// A child of a container: scalar checks inline, containers through a call.
    #[inline(always)]
    fn fits_child<const PROBE: bool>(&self, id: NodeId, v: &Value, depth: u32) -> bool {
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

    fn fits_container<const PROBE: bool>(
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

    /// Past the recursion budget: the iterative collector, silently.
    #[cold]
    #[inline(never)]
    fn fits_silently(&self, id: NodeId, v: &Value) -> bool {
        let mut c = Collector::new(self, "", true);
        c.run(id, v);
        !c.failed
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
fn lossless(v: &Value, depth: u32) -> bool {
    match v {
        Value::Number(n) => is_lossless_number(n),
        Value::Array(items) if depth > 0 => items.iter().all(|x| lossless(x, depth - 1)),
        Value::Object(map) if depth > 0 => map.values().all(|x| lossless(x, depth - 1)),
        Value::Array(_) | Value::Object(_) => is_lossless(v),
        _ => true,
    }
}

// ---- the collector ----

/// A member of a JSON object: a scan for small objects (no hashing), the map's index otherwise.
#[inline]
fn member<'v>(map: &'v Map<String, Value>, key: &str) -> Option<(&'v String, &'v Value)> {
    if map.len() <= 16 {
        map.iter()
            .find(|(k, _)| same_len_eq(k.as_bytes(), key.as_bytes()))
    } else {
        map.get_key_value(key)
    }
}

/// `"<path>"` (`"arguments"` for the parameter root), in a string with room for the message.
fn quoted(paths: &PathArena<'_>, label: &str, path: PathId) -> String {
    let mut m = String::with_capacity(64);
    m.push('"');
    paths.render_into(&mut m, label, path);
    if m.len() == 1 {
        m.push_str("arguments");
    }
    m.push('"');
    m
}

enum Task<'a> {
    Visit(NodeId, &'a Value, PathId),
    /// After an object's declared children: undeclared members, then losslessness.
    ObjectTail(NodeId, &'a Map<String, Value>, PathId, usize),
    /// After the undeclared members validated against an `additionalProperties` schema.
    ObjectLossless(&'a Map<String, Value>, PathId, usize),
    ArrayTail(NodeId, &'a [Value], PathId, usize),
    /// Between `oneOf` branches: `next` branch to try, branches `matched` so far.
    OneOf {
        id: NodeId,
        value: &'a Value,
        path: PathId,
        next: usize,
        matched: usize,
    },
}

struct Collector<'a> {
    schema: &'a CompiledSchema,
    label: &'a str,
    paths: PathArena<'a>,
    sink: Sink,
    tasks: Vec<Task<'a>>,
    /// Number of `oneOf` branches being evaluated around the current task (silent when > 0).
    silent: usize,
    /// A silent violation happened: abandon the current branch.
    abandon: bool,
    /// The innermost `oneOf` branch being evaluated saw a violation.
    branch_failed: bool,
    /// `silent` outside any `oneOf` branch: 1 for a silent run, 0 for a listing run.
    base: usize,
    /// A silent run saw a violation outside every `oneOf` branch: the value is invalid.
    failed: bool,
    /// Explain a `oneOf` that matched no branch (listing runs; never inside an explanation).
    explain: bool,
    /// Stop listing after this many violations (an explanation's sub-run).
    cap: usize,
}

impl<'a> Collector<'a> {
    fn new(schema: &'a CompiledSchema, label: &'a str, silent: bool) -> Self {
        Self {
            schema,
            label,
            paths: PathArena::with_capacity(16),
            sink: Sink::default(),
            tasks: Vec::with_capacity(16),
            silent: usize::from(silent),
            abandon: false,
            branch_failed: false,
            base: usize::from(silent),
            failed: false,
            explain: !silent,
            cap: usize::MAX,
        }
    }

    /// Listed violations so far. Silent ones never count: a violation inside a `oneOf` branch
    /// abandons that branch at once, so a tail task that still runs saw none in its branch.
    fn count(&self) -> usize {
        self.sink.count()
    }

    fn child(&mut self, path: PathId, seg: Seg<'a>) -> PathId {
        if self.silent > 0 {
            ROOT
        } else {
            self.paths.push(path, seg)
        }
    }

    /// Records `"<path>" <what>`.
    fn fail(&mut self, path: PathId, what: impl FnOnce() -> String) {
        if self.silent > 0 {
            self.branch_failed = true;
            self.abandon = true;
            self.failed |= self.silent == self.base;
        } else {
            let (paths, label) = (&self.paths, self.label);
            self.sink.add(|| {
                let mut m = quoted(paths, label, path);
                m.push(' ');
                m.push_str(&what());
                m
            });
        }
    }

    /// [`fail`](Self::fail) with a fixed message: nothing but the violation's one string is
    /// allocated.
    fn fail_str(&mut self, path: PathId, what: &'static str) {
        if self.silent > 0 {
            self.fail(path, String::new);
        } else {
            let (paths, label) = (&self.paths, self.label);
            self.sink.add(|| {
                let mut m = quoted(paths, label, path);
                m.push(' ');
                m.push_str(what);
                m
            });
        }
    }

    /// Whether a child about to be visited is proven valid by the bounded fast path, so that it
    /// is neither pushed nor given a path. Only when listing: a silent branch stops at its first
    /// violation anyway.
    #[inline]
    fn proven(&self, id: NodeId, v: &Value) -> bool {
        self.silent == 0 && self.schema.fits::<true>(id, v, PROBE_DEPTH)
    }

    fn run(&mut self, id: NodeId, value: &'a Value) {
        self.tasks.push(Task::Visit(id, value, ROOT));
        while let Some(task) = self.tasks.pop() {
            self.step(task);
            if self.sink.count() >= self.cap {
                return;
            }
            if self.abandon {
                self.abandon = false;
                while let Some(top) = self.tasks.last() {
                    if matches!(top, Task::OneOf { .. }) {
                        break;
                    }
                    self.tasks.pop();
                }
            }
        }
    }

    fn step(&mut self, task: Task<'a>) {
        match task {
            Task::Visit(id, v, path) => self.visit(id, v, path),
            Task::ObjectTail(id, map, path, start) => self.object_tail(id, map, path, start),
            Task::ObjectLossless(map, path, start) => {
                // Declared and schema-checked members were validated; the check covers the rest.
                if self.count() == start && !map.values().all(|m| lossless(m, FAST_DEPTH)) {
                    self.fail_str(path, "must be a lossless JSON object");
                }
            }
            Task::ArrayTail(id, items, path, start) => {
                let Node::Array(a) = &self.schema.nodes[id as usize] else {
                    return;
                };
                if a.unique
                    && let Some((i, j)) = first_duplicate(items)
                {
                    self.fail(path, || {
                        format!("must not contain duplicate items (items {i} and {j} are equal)")
                    });
                }
                if self.count() == start
                    && a.items.is_none()
                    && !items.iter().all(|x| lossless(x, FAST_DEPTH))
                {
                    self.fail_str(path, "must be a dense lossless JSON array");
                }
            }
            Task::OneOf {
                id,
                value,
                path,
                next,
                mut matched,
            } => {
                if next > 0 {
                    self.silent -= 1;
                    matched += usize::from(!std::mem::take(&mut self.branch_failed));
                }
                let Node::OneOf(branches, _) = &self.schema.nodes[id as usize] else {
                    return;
                };
                let settled = self.silent > 0 && matched > 1;
                if next < branches.len() && !settled {
                    let branch = branches[next];
                    self.tasks.push(Task::OneOf {
                        id,
                        value,
                        path,
                        next: next + 1,
                        matched,
                    });
                    self.silent += 1;
                    self.tasks.push(Task::Visit(branch, value, path));
                } else if matched != 1 {
                    let why = (matched == 0 && self.silent == 0 && self.explain)
                        .then(|| self.explain_no_match(id, value, path));
                    self.fail(path, || match why {
                        Some(why) => {
                            format!("must match exactly one oneOf branch (matched 0): {why}")
                        }
                        None => format!("must match exactly one oneOf branch (matched {matched})"),
                    });
                }
            }
        }
    }

    /// What a model needs when a `oneOf` matched no branch (issue #9): for a tagged union, the
    /// chosen branch's violations or the valid tags; for `[T, null]`, `T`'s violations; else the
    /// closest branch's (of the value's JSON type if one is, then fewest violations, then first). At most [`EXPLAINED`] violations,
    /// from sub-runs that explain nothing further (so the cost is one pass per branch).
    fn explain_no_match(&self, id: NodeId, value: &Value, path: PathId) -> String {
        let Node::OneOf(branches, nullable) = &self.schema.nodes[id as usize] else {
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
        if let Some(of) = nullable {
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
        let is_null = |b: &NodeId| {
            matches!(&self.schema.nodes[*b as usize], Node::Literal(l)
                if l.ty == super::subset::Type::Null && l.one_of.is_none() && l.constant.is_none())
        };
        let or_null = if branches.iter().any(is_null) {
            " (or null)"
        } else {
            ""
        };
        let all = branches;
        let branches: Vec<NodeId> = branches.iter().copied().filter(|b| !is_null(b)).collect();
        let branches = &branches[..];
        if let Some((key, tags)) = tagged(self.schema, branches) {
            // The tag's path as the fields' paths read (`"op.kind"`), the tags as an enum lists
            // its members (compact JSON).
            let key_text = quoted_path(&super::path::join_key(&label, key));
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

    fn visit(&mut self, id: NodeId, v: &'a Value, path: PathId) {
        let schema = self.schema;
        // Listing: a child the bounded fast path proves valid was never pushed ([`proven`]);
        // the root was just found invalid, so it is not probed again.
        match &schema.nodes[id as usize] {
            Node::Any => {
                if !lossless(v, FAST_DEPTH) {
                    self.fail_str(path, "must be a lossless JSON value");
                }
            }
            Node::OneOf(..) => self.tasks.push(Task::OneOf {
                id,
                value: v,
                path,
                next: 0,
                matched: 0,
            }),
            Node::String(s) => match v {
                Value::String(x) => {
                    let mut problems = Vec::new();
                    string_problems(s, x, &mut problems);
                    self.report(path, problems);
                }
                _ => self.fail_str(path, "must be a string"),
            },
            Node::Number(n) => match v {
                Value::Number(x) if number_type_ok(n, x) => {
                    let mut problems = Vec::new();
                    number_problems(n, x, &mut problems, false);
                    self.report(path, problems);
                }
                Value::Number(_) if !n.integer => {
                    self.fail_str(path, "must be a finite JSON number")
                }
                _ if n.integer => self.fail_str(path, "must be an integer"),
                _ => self.fail_str(path, "must be a number"),
            },
            Node::Literal(l) => {
                if literal_type_ok(l, v) {
                    let problem = literal_problem(l, v);
                    self.report(path, problem.into_iter().collect());
                } else {
                    let what = if l.ty.name() == "null" {
                        "must be null"
                    } else {
                        "must be a boolean"
                    };
                    self.fail_str(path, what);
                }
            }
            Node::Object(o) => {
                let Value::Object(map) = v else {
                    self.fail_str(path, "must be an object");
                    return;
                };
                let start = self.count();
                for name in o.required.iter() {
                    if member(map, name).is_none() {
                        if self.silent > 0 {
                            self.fail(path, String::new);
                            return;
                        }
                        let id = self.paths.push(path, Seg::Key(name));
                        let child = self.paths.render(self.label, id);
                        self.sink
                            .add(|| format!("missing required property \"{child}\""));
                    }
                }
                self.tasks.push(Task::ObjectTail(id, map, path, start));
                for p in o.props.iter().rev() {
                    if let Some((key, child)) = member(map, &p.key)
                        && !self.proven(p.id, child)
                    {
                        let child_path = self.child(path, Seg::Key(key));
                        self.tasks.push(Task::Visit(p.id, child, child_path));
                    }
                }
            }
            Node::Array(a) => {
                let Value::Array(items) = v else {
                    self.fail_str(path, "must be an array");
                    return;
                };
                let start = self.count();
                if let Some(problem) = count_problem(a, items.len()) {
                    self.fail(path, || problem);
                }
                self.tasks.push(Task::ArrayTail(id, items, path, start));
                if let Some(item) = a.items {
                    for (i, x) in items.iter().enumerate().rev() {
                        if self.proven(item, x) {
                            continue;
                        }
                        let child_path = self.child(path, Seg::Index(i));
                        self.tasks.push(Task::Visit(item, x, child_path));
                    }
                }
            }
        }
    }

    fn object_tail(&mut self, id: NodeId, map: &'a Map<String, Value>, path: PathId, start: usize) {
        let Node::Object(o) = &self.schema.nodes[id as usize] else {
            return;
        };
        match o.additional {
            Additional::Allow => {
                if self.count() == start
                    && !map
                        .iter()
                        .all(|(k, m)| o.find(k).is_some() || lossless(m, FAST_DEPTH))
                {
                    self.fail_str(path, "must be a lossless JSON object");
                }
            }
            Additional::Deny => {
                for (k, _) in map {
                    if o.find(k).is_none() {
                        let child = self.child(path, Seg::Key(k));
                        self.fail(child, || {
                            format!(
                                "is not a declared property (additionalProperties: false): {}",
                                declared(o)
                            )
                        });
                        if self.abandon {
                            return;
                        }
                    }
                }
            }
            Additional::Schema(extra) => {
                self.tasks.push(Task::ObjectLossless(map, path, start));
                let undeclared: Vec<_> = map.iter().filter(|(k, _)| o.find(k).is_none()).collect();
                for (k, m) in undeclared.into_iter().rev() {
                    if self.proven(extra, m) {
                        continue;
                    }
                    let child = self.child(path, Seg::Key(k));
                    self.tasks.push(Task::Visit(extra, m, child));
                }
            }
        }
    }

    fn report(&mut self, path: PathId, problems: Vec<Problem<'_>>) {
        for p in problems {
            let what = match p {
                Problem::Enum(text) => format!("must be one of {text}"),
                Problem::Const(text) => format!("must be {text}"),
                Problem::Bound(op, b) => format!("must be {op} {b}"),
                Problem::MinLength(n) => format!("must be at least {n} characters long"),
                Problem::MaxLength(n) => format!("must be at most {n} characters long"),
                Problem::Pattern(text) => format!("must match pattern {text}"),
                Problem::PatternUnchecked(text) => {
                    format!("must match pattern {text} (not checked: over the regex work limit)")
                }
            };
            self.fail(path, || what);
            if self.abandon {
                return;
            }
        }
    }
}

/// Whether a node is of the value's JSON type (unions and `{}` count as any type).
fn same_kind(node: &Node, v: &Value) -> bool {
    match node {
        Node::Any | Node::OneOf(..) => true,
        Node::String(_) => v.is_string(),
        Node::Number(_) => v.is_number(),
        Node::Literal(l) => match l.ty {
            super::subset::Type::Boolean => v.is_boolean(),
            _ => v.is_null(),
        },
        Node::Object(_) => v.is_object(),
        Node::Array(_) => v.is_array(),
    }
}

/// Violations shown when explaining a `oneOf` that matched nothing.
const EXPLAINED: usize = 5;

/// A tagged union: every branch an object with the same property fixed to a distinct string
/// (`const`, or an `enum` of one). The property and each branch's tag.
fn tagged<'s>(schema: &'s CompiledSchema, branches: &[NodeId]) -> Option<(&'s str, Vec<&'s str>)> {
    let tag_of = |branch: NodeId, key: &str| -> Option<&'s str> {
        let Node::Object(o) = &schema.nodes[branch as usize] else {
            return None;
        };
        let p = o.props.iter().find(|p| &*p.key == key)?;
        let Node::String(s) = &schema.nodes[p.id as usize] else {
            return None;
        };
        match (&s.constant, &s.one_of) {
            (Some(c), _) => Some(&*c.members[0]),
            (None, Some(e)) if e.members.len() == 1 => Some(&*e.members[0]),
            _ => None,
        }
    };
    let Node::Object(first) = &schema.nodes[*branches.first()? as usize] else {
        return None;
    };
    first.props.iter().find_map(|p| {
        let tags: Option<Vec<&'s str>> = branches.iter().map(|b| tag_of(*b, &p.key)).collect();
        let tags = tags?;
        let distinct = tags.iter().collect::<rustc_hash::FxHashSet<_>>().len() == tags.len();
        distinct.then_some((&*p.key, tags))
    })
}

/// The property of a one-property object branch that requires it and allows nothing else (an
/// externally tagged variant with data: `{"circle": {...}}`).
fn variant_key(schema: &CompiledSchema, branch: NodeId) -> Option<&str> {
    let Node::Object(o) = &schema.nodes[branch as usize] else {
        return None;
    };
    match (&*o.props, &*o.required, &o.additional) {
        ([prop], [required], super::compile::Additional::Deny) if prop.key == *required => {
            Some(&prop.key)
        }
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

/// What a model needs to fix a made-up property: the names it may use (at most 32, each cut at
/// `MAX_KEY_BYTES`), in declaration order.
fn declared(o: &super::compile::ObjectNode) -> String {
    const SHOWN: usize = 32;
    if o.props.is_empty() {
        return "no properties are declared".to_owned();
    }
    let mut out = String::from("the declared properties are ");
    for (i, p) in o.props.iter().take(SHOWN).enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        let key = &p.key[..super::path::floor_char(&p.key, super::MAX_KEY_BYTES.min(p.key.len()))];
        // JSON-quoted, and `;` escaped too: a name cannot read as the next violation.
        out.push_str(&crate::json::to_compact_string(&Value::from(key)).replace(';', "\\u003b"));
    }
    if o.props.len() > SHOWN {
        out.push_str(&format!(" and {} more", o.props.len() - SHOWN));
    }
    out
}

/// The fast path with an explicit recursion budget (0 = start in the silent collector).
#[cfg(test)]
pub(crate) fn fits_with_budget(schema: &CompiledSchema, value: &Value, budget: u32) -> bool {
    schema.fits::<false>(0, value, budget)
}

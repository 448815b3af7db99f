//! The collector: iterative (an explicit task stack), it lists every violation with its path in
//! the spec's order; inside a `oneOf` branch it runs silently, abandoning the branch at the
//! first violation.

use super::super::MAX_KEY_BYTES;
use super::super::Sink;
use super::super::checks::*;
use super::super::compile::{Additional, CompiledSchema, Node, NodeId, ObjectNode};
use super::super::path::{PathArena, PathId, ROOT, Seg, floor_char};
use super::fits::{FAST_DEPTH, PROBE_DEPTH, lossless, member};
use serde_json::{Map, Value};

impl CompiledSchema {
    /// Past the recursion budget: the iterative collector, silently.
    #[cold]
    #[inline(never)]
    pub(super) fn fits_silently(&self, id: NodeId, v: &Value) -> bool {
        let mut c = Collector::new(self, "", true);
        c.run(id, v);
        !c.failed
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

pub(super) struct Collector<'a> {
    pub(super) schema: &'a CompiledSchema,
    pub(super) label: &'a str,
    pub(super) paths: PathArena<'a>,
    pub(super) sink: Sink,
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
    pub(super) explain: bool,
    /// Stop listing after this many violations (an explanation's sub-run).
    pub(super) cap: usize,
}

impl<'a> Collector<'a> {
    pub(super) fn new(schema: &'a CompiledSchema, label: &'a str, silent: bool) -> Self {
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

    pub(super) fn run(&mut self, id: NodeId, value: &'a Value) {
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

/// What a model needs to fix a made-up property: the names it may use (at most 32, each cut at
/// `MAX_KEY_BYTES`), in declaration order.
fn declared(o: &ObjectNode) -> String {
    const SHOWN: usize = 32;
    if o.props.is_empty() {
        return "no properties are declared".to_owned();
    }
    let mut out = String::from("the declared properties are ");
    for (i, p) in o.props.iter().take(SHOWN).enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        let key = &p.key[..floor_char(&p.key, MAX_KEY_BYTES.min(p.key.len()))];
        // JSON-quoted, and `;` escaped too: a name cannot read as the next violation.
        out.push_str(&crate::json::to_compact_string(&Value::from(key)).replace(';', "\\u003b"));
    }
    if o.props.len() > SHOWN {
        out.push_str(&format!(" and {} more", o.props.len() - SHOWN));
    }
    out
}

//! Loading: the input schema as a flat arena of nodes, every `$ref` inlined.
//!
//! A node is allocated before its children, so children always have larger ids: converting the
//! nodes from the last to the first sees every child before its parent, with no recursion.

use crate::schema::keywords::{
    ADDITIONAL_PROPERTIES, ALL_OF, ANY_OF, ITEMS, ONE_OF, PROPERTIES, REF, UNEVALUATED_PROPERTIES,
};
use serde_json::{Map, Value};

/// Most schemas nested inside one another that the bridge accepts (an error beyond); also the
/// deepest `default` / `examples` value it copies, in JSON levels.
///
/// Real argument types nest a few levels; each `Option` or enum adds one or two. The bound keeps
/// every helper's recursion and the output's nesting small (serde_json's `Value` drops, clones and
/// compares recursively).
pub const MAX_DEPTH: usize = 64;

/// Most schema nodes the bridge builds once every `$ref` is inlined (an error beyond).
pub const MAX_NODES: usize = 20_000;

pub(super) const TUPLE: &str = "tuples (prefixItems, or items as an array) are not supported: a tuple, tuple struct or tuple enum variant has no subset schema; use a struct with named fields";

pub(super) type NodeId = usize;

/// `additionalProperties` / `unevaluatedProperties`: a boolean or a schema.
#[derive(Clone, Copy, Debug)]
pub(super) enum Extra {
    Bool(bool),
    Schema(NodeId),
}

/// One schema of the input, with its subschemas resolved to child nodes.
#[derive(Debug, Default)]
pub(super) struct Node<'a> {
    pub(super) path: PathId,
    /// The node's keywords; `None` for the schema `true` (and for placeholders after an error).
    pub(super) map: Option<&'a Map<String, Value>>,
    pub(super) props: Vec<(&'a str, NodeId)>,
    pub(super) additional: Option<Extra>,
    pub(super) unevaluated: Option<Extra>,
    pub(super) items: Option<NodeId>,
    pub(super) one_of: Option<Vec<NodeId>>,
    pub(super) any_of: Option<Vec<NodeId>>,
    /// Schemas this one is the intersection with: the `$ref` target, then the `allOf` members.
    pub(super) pieces: Vec<NodeId>,
    /// The JSON pointer of a `$ref` not inlined because it recurs (reported as a problem).
    pub(super) cycle: Option<String>,
}

pub(super) type PathId = usize;
const ROOT_PATH: PathId = usize::MAX;

/// Parent-linked JSON-pointer paths; rendered only for messages.
#[derive(Default)]
pub(super) struct Paths {
    nodes: Vec<(PathId, String)>,
}

impl Paths {
    fn push(&mut self, parent: PathId, segment: &str) -> PathId {
        self.nodes
            .push((parent, segment.replace('~', "~0").replace('/', "~1")));
        self.nodes.len() - 1
    }

    fn push2(&mut self, parent: PathId, keyword: &str, key: &str) -> PathId {
        let p = self.push(parent, keyword);
        self.push(p, key)
    }

    /// `#`, `#/properties/a`, …
    pub(super) fn render(&self, id: PathId) -> String {
        let mut segs = Vec::new();
        let mut cur = id;
        while cur != ROOT_PATH {
            let (parent, seg) = &self.nodes[cur];
            segs.push(seg.as_str());
            cur = *parent;
        }
        let mut out = String::from("#");
        for s in segs.into_iter().rev() {
            out.push('/');
            out.push_str(s);
        }
        out
    }
}

/// The chain of `$ref` targets being inlined above a node (to detect recursive types).
type ChainId = usize;
const NO_CHAIN: ChainId = usize::MAX;

pub(super) struct Arena<'a> {
    pub(super) nodes: Vec<Node<'a>>,
    pub(super) paths: Paths,
}

struct Job<'a> {
    value: &'a Value,
    id: NodeId,
    depth: usize,
    chain: ChainId,
}

/// Loads `root` into an arena, reporting malformed keyword values, unresolvable or recursive
/// `$ref`s and the size limits.
pub(super) fn load<'a>(root: &'a Value, problems: &mut Vec<(NodeId, String)>) -> Arena<'a> {
    let mut arena = Arena {
        nodes: vec![Node {
            path: ROOT_PATH,
            ..Node::default()
        }],
        paths: Paths::default(),
    };
    // The root is its own first `$ref` target: `"$ref": "#"` inside it is recursion.
    let mut chains: Vec<(ChainId, String)> = vec![(NO_CHAIN, String::new())];
    let mut jobs = vec![Job {
        value: root,
        id: 0,
        depth: 1,
        chain: 0,
    }];
    let mut too_big = false;
    let mut too_deep = false;
    while let Some(job) = jobs.pop() {
        let path = arena.nodes[job.id].path;
        let map = match job.value {
            Value::Object(map) => map,
            Value::Bool(true) => continue,
            Value::Bool(false) => {
                problems.push((
                    job.id,
                    "the schema `false` accepts no value (schemars emits it for uninhabited types such as `!` or an enum without variants); such an argument can never be passed".into(),
                ));
                continue;
            }
            _ => {
                problems.push((job.id, "a schema must be a JSON object or a boolean".into()));
                continue;
            }
        };
        arena.nodes[job.id].map = Some(map);
        if job.depth >= MAX_DEPTH && has_subschemas(map) {
            if std::mem::replace(&mut too_deep, true) {
                continue;
            }
            problems.push((
                job.id,
                format!(
                    "schemas are nested more than {MAX_DEPTH} levels deep; the bridge stops here"
                ),
            ));
            continue;
        }
        let mut cx = Cx {
            arena: &mut arena,
            jobs: &mut jobs,
            problems,
            parent: job.id,
            depth: job.depth + 1,
            chain: job.chain,
            too_big: &mut too_big,
            cycle: None,
        };
        cx.children(map, path, root, &mut chains);
    }
    arena
}

fn has_subschemas(map: &Map<String, Value>) -> bool {
    [
        PROPERTIES,
        ADDITIONAL_PROPERTIES,
        UNEVALUATED_PROPERTIES,
        ITEMS,
        ONE_OF,
        ANY_OF,
        ALL_OF,
        REF,
    ]
    .iter()
    .any(|k| map.contains_key(*k))
}

struct Cx<'c, 'a> {
    arena: &'c mut Arena<'a>,
    jobs: &'c mut Vec<Job<'a>>,
    problems: &'c mut Vec<(NodeId, String)>,
    parent: NodeId,
    depth: usize,
    chain: ChainId,
    too_big: &'c mut bool,
    /// Set by [`resolve`](Self::resolve) when the node's `$ref` recurs.
    cycle: Option<String>,
}

impl<'a> Cx<'_, 'a> {
    /// Allocates a child node for `value` at `path` and schedules it.
    fn child(&mut self, value: &'a Value, path: PathId, chain: ChainId) -> Option<NodeId> {
        if self.arena.nodes.len() >= MAX_NODES {
            if !*self.too_big {
                *self.too_big = true;
                self.problems.push((
                    self.parent,
                    format!("the schema has more than {MAX_NODES} nodes once every $ref is inlined; the bridge stops here"),
                ));
            }
            return None;
        }
        let id = self.arena.nodes.len();
        self.arena.nodes.push(Node {
            path,
            ..Node::default()
        });
        self.jobs.push(Job {
            value,
            id,
            depth: self.depth,
            chain,
        });
        Some(id)
    }

    fn report(&mut self, message: String) {
        self.problems.push((self.parent, message));
    }

    fn extra(&mut self, v: &'a Value, path: PathId, kw: &str) -> Option<Extra> {
        match v {
            Value::Bool(b) => Some(Extra::Bool(*b)),
            Value::Object(_) => {
                let p = self.arena.paths.push(path, kw);
                self.child(v, p, self.chain).map(Extra::Schema)
            }
            _ => {
                self.report(format!("{kw} must be a boolean or a schema object"));
                None
            }
        }
    }

    fn list(&mut self, v: &'a Value, path: PathId, kw: &str) -> Option<Vec<NodeId>> {
        let Some(items) = v.as_array().filter(|a| !a.is_empty()) else {
            self.report(format!("{kw} must be a non-empty array of schemas"));
            return None;
        };
        let mut ids = Vec::with_capacity(items.len());
        for (i, item) in items.iter().enumerate() {
            let p = self.arena.paths.push2(path, kw, &i.to_string());
            ids.extend(self.child(item, p, self.chain));
        }
        Some(ids)
    }

    fn children(
        &mut self,
        map: &'a Map<String, Value>,
        path: PathId,
        root: &'a Value,
        chains: &mut Vec<(ChainId, String)>,
    ) {
        let first_job = self.jobs.len();
        let mut node = Node {
            path,
            map: Some(map),
            ..Node::default()
        };
        if let Some(r) = map.get("$ref") {
            match self.resolve(r, root, chains) {
                Ok((target, chain)) => node.pieces.extend(self.child(target, path, chain)),
                Err(message) => {
                    node.cycle = self.cycle.take();
                    self.report(message);
                }
            }
        }
        for (k, v) in map {
            match k.as_str() {
                "properties" => match v {
                    Value::Object(props) => {
                        for (name, schema) in props {
                            let p = self.arena.paths.push2(path, "properties", name);
                            if let Some(id) = self.child(schema, p, self.chain) {
                                node.props.push((name.as_str(), id));
                            }
                        }
                    }
                    _ => self.report("properties must be an object of schemas".into()),
                },
                "additionalProperties" => node.additional = self.extra(v, path, k),
                "unevaluatedProperties" => node.unevaluated = self.extra(v, path, k),
                "items" => match v {
                    // `items: true` is `{}`; `items: false` only makes sense beside `prefixItems`,
                    // which is reported as a tuple.
                    Value::Bool(true) => {}
                    Value::Bool(false) if map.contains_key("prefixItems") => {}
                    Value::Object(_) | Value::Bool(false) => {
                        let p = self.arena.paths.push(path, "items");
                        node.items = self.child(v, p, self.chain);
                    }
                    Value::Array(_) => self.report(TUPLE.into()),
                    _ => self.report("items must be a schema".into()),
                },
                "oneOf" => node.one_of = self.list(v, path, k),
                "anyOf" => node.any_of = self.list(v, path, k),
                "allOf" => {
                    if let Some(ids) = self.list(v, path, k) {
                        node.pieces.extend(ids);
                    }
                }
                _ => {}
            }
        }
        // Children were pushed in document order; reverse them on the job stack so they are
        // loaded (and their paths numbered) in document order too. Order does not affect the
        // result, only which of two problems is found first.
        self.jobs[first_job..].reverse();
        self.arena.nodes[self.parent] = node;
    }

    /// Resolves a local `$ref` to its target and the chain extended with it.
    fn resolve(
        &mut self,
        r: &Value,
        root: &'a Value,
        chains: &mut Vec<(ChainId, String)>,
    ) -> Result<(&'a Value, ChainId), String> {
        let Some(r) = r.as_str() else {
            return Err("$ref must be a string".into());
        };
        let Some(fragment) = r.strip_prefix('#') else {
            return Err(format!(
                "$ref \"{r}\" is not a local reference (#...); only references inside the schema can be inlined"
            ));
        };
        let pointer = percent_decode(fragment)
            .ok_or_else(|| format!("$ref \"{r}\" is not a valid URI fragment"))?;
        if !pointer.is_empty() && !pointer.starts_with('/') {
            return Err(format!(
                "$ref \"{r}\" is not a JSON pointer (anchors are not supported)"
            ));
        }
        let mut cur = self.chain;
        while cur != NO_CHAIN {
            let (parent, target) = &chains[cur];
            if *target == pointer {
                let name = type_name(&pointer, root);
                self.cycle = Some(pointer.clone());
                return Err(format!(
                    "recursive type \"{name}\" ($ref \"{r}\"): the subset has no $ref, so a type that contains itself cannot be inlined; break the cycle (e.g. refer to children by id, or make the recursive field a serde_json::Value)"
                ));
            }
            cur = *parent;
        }
        let target = root
            .pointer(&pointer)
            .ok_or_else(|| format!("$ref \"{r}\" points to nothing in the schema"))?;
        chains.push((self.chain, pointer));
        Ok((target, chains.len() - 1))
    }
}

/// The name of the type a JSON pointer designates: its last segment, or the root's title.
fn type_name(pointer: &str, root: &Value) -> String {
    match pointer.rsplit('/').next() {
        Some(last) if !pointer.is_empty() => last.replace("~1", "/").replace("~0", "~"),
        _ => root
            .get("title")
            .and_then(Value::as_str)
            .unwrap_or("<root>")
            .to_owned(),
    }
}

/// Decodes `%XX` escapes of a URI fragment.
fn percent_decode(s: &str) -> Option<String> {
    if !s.contains('%') {
        return Some(s.to_owned());
    }
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = s.get(i + 1..i + 3)?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

/// The pre-order rank of every node (its position in document order), to sort problems.
pub(super) fn preorder(arena: &Arena<'_>) -> Vec<usize> {
    let mut rank = vec![usize::MAX; arena.nodes.len()];
    let mut next = 0;
    let mut stack = vec![0];
    while let Some(id) = stack.pop() {
        if rank[id] != usize::MAX {
            continue;
        }
        rank[id] = next;
        next += 1;
        let n = &arena.nodes[id];
        let extra = |e: &Option<Extra>| match e {
            Some(Extra::Schema(c)) => Some(*c),
            _ => None,
        };
        let children: Vec<NodeId> = n
            .pieces
            .iter()
            .copied()
            .chain(n.props.iter().map(|(_, c)| *c))
            .chain(extra(&n.additional))
            .chain(extra(&n.unevaluated))
            .chain(n.items)
            .chain(n.one_of.iter().flatten().copied())
            .chain(n.any_of.iter().flatten().copied())
            .collect();
        stack.extend(children.into_iter().rev());
    }
    rank
}

//! Compiling an asserted schema into a flat node tree (an arena indexed by `NodeId`).
//!
//! The arena keeps every walk iterative-friendly and makes dropping a compiled schema flat,
//! however deep the source schema was.

use super::JsonSchemaError;
use super::keywords::{
    ADDITIONAL_PROPERTIES, BOUNDS, CONST, ENUM, ITEMS, MAX_ITEMS, MAX_LENGTH, MAXIMUM, MEMBERS,
    MIN_ITEMS, MIN_LENGTH, MINIMUM, ONE_OF, PATTERN, PROPERTIES, REQUIRED, STRING_KEYWORDS, TYPE,
    UNIQUE_ITEMS,
};
use super::pattern::{self, Pattern};
use super::subset::{self, Type, count_bound};
use crate::json::to_compact_string;
use rustc_hash::FxHashMap;
use serde_json::{Number, Value};

pub(crate) type NodeId = u32;

/// A schema of the supported subset, compiled once for fast validation.
///
/// Build it with [`CompiledSchema::compile`] (which asserts the subset first, so an unsupported
/// schema can never be validated against), then call [`is_valid`](Self::is_valid) for a yes/no
/// answer that allocates nothing on valid input, or [`validate`](Self::validate) /
/// [`validate_at`](Self::validate_at) for every violation with its path.
#[derive(Debug)]
pub struct CompiledSchema {
    pub(crate) nodes: Vec<Node>,
    /// Some node accepts any value (no `type`): a valid value may nest arbitrarily deep there.
    pub(crate) admits_any: bool,
    /// Some node has a `pattern`: validations open a regex budget session.
    pub(crate) has_patterns: bool,
}

#[derive(Debug)]
pub(crate) enum Node {
    /// No `type` and no `oneOf`: any lossless JSON value.
    Any,
    /// The branches, and how the fast path picks the one that can match ([`Pick`]).
    OneOf(Box<[NodeId]>, Pick),
    String(StringNode),
    Number(NumberNode),
    /// `boolean` or `null`, with optional enum/const.
    Literal(LiteralNode),
    Object(ObjectNode),
    Array(ArrayNode),
}

/// How the fast path decides a `oneOf`: by evaluating every branch, or by picking the only one
/// that can match and evaluating that one alone. A pick is exact: every other branch certainly
/// fails, so "exactly one matches" is "the picked one matches".
#[derive(Debug)]
pub(crate) enum Pick {
    /// Evaluate every branch and count the matches.
    All,
    /// `oneOf [X, {"type": "null"}]` where `X` can never be `null` (every `Option<T>`): `null`
    /// matches the null branch alone, anything else `X` alone.
    NullOr(NodeId),
    /// A tagged union (serde's `#[serde(tag = "...")]`): the tag's value names the branch.
    Tag(Box<TagPick>),
}

/// A `oneOf` whose branches are objects that all require the same property, each fixed to a
/// distinct string (`const`, or an `enum` of one), besides at most one plain `null` branch
/// (`Option` of the union, flattened). A value's tag names the only branch it can match: every
/// other one requires another string there.
#[derive(Debug)]
pub(crate) struct TagPick {
    /// The tag property.
    pub(crate) key: Box<str>,
    /// Each object branch's tag, beside its node.
    pub(crate) tags: Box<[(Box<str>, NodeId)]>,
    /// One branch is a plain `null`: it, and only it, matches `null`.
    pub(crate) null: bool,
}

impl TagPick {
    /// The pick for `branches`, if they form a tagged union.
    fn of(nodes: &[Node], branches: &[NodeId]) -> Option<Self> {
        let (nulls, objects): (Vec<NodeId>, Vec<NodeId>) = branches
            .iter()
            .partition(|b| is_plain_null(&nodes[**b as usize]));
        if nulls.len() > 1 || objects.len() < 2 {
            return None;
        }
        let (key, tags) = union_tag(nodes, &objects, true)?;
        Some(Self {
            key: key.into(),
            tags: tags.into_iter().map(Box::from).zip(objects).collect(),
            null: nulls.len() == 1,
        })
    }
}

/// At most this many properties are tried as a union's tag: a schema from a remote server may
/// fix thousands of properties in thousands of branches, and each try reads every branch.
const TAG_CANDIDATES: usize = 8;

/// The tag of a union of `objects` (its branches but `null`): a property that every branch
/// declares (and requires, if `required`), fixed to a distinct string in each. The property and
/// each branch's tag, in branch order; `None` if a branch is not an object.
pub(crate) fn union_tag<'s>(
    nodes: &'s [Node],
    objects: &[NodeId],
    required: bool,
) -> Option<(&'s str, Vec<&'s str>)> {
    let Node::Object(first) = &nodes[*objects.first()? as usize] else {
        return None;
    };
    let fixed = |p: &Prop| (p.required || !required) && string_tag(&nodes[p.id as usize]).is_some();
    first
        .props
        .iter()
        .filter(|p| fixed(p))
        .take(TAG_CANDIDATES)
        .find_map(|candidate| {
            let mut seen = rustc_hash::FxHashSet::default();
            let tags = objects
                .iter()
                .map(|b| {
                    let Node::Object(o) = &nodes[*b as usize] else {
                        return None;
                    };
                    let p = &o.props[o.find(&candidate.key)?];
                    let tag = string_tag(&nodes[p.id as usize]).filter(|_| fixed(p))?;
                    seen.insert(tag).then_some(tag)
                })
                .collect::<Option<Vec<&str>>>()?;
            Some((&*candidate.key, tags))
        })
}

/// A plain `{"type": "null"}`.
pub(crate) fn is_plain_null(node: &Node) -> bool {
    matches!(node, Node::Literal(l)
        if l.ty == Type::Null && l.one_of.is_none() && l.constant.is_none())
}

/// The one string a string node admits (`const`, or an `enum` of one), if it admits only one.
pub(crate) fn string_tag(node: &Node) -> Option<&str> {
    let Node::String(s) = node else {
        return None;
    };
    match (&s.constant, &s.one_of) {
        (Some(c), _) => Some(&c.members[0]),
        (None, Some(e)) if e.members.len() == 1 => Some(&e.members[0]),
        _ => None,
    }
}

#[derive(Debug)]
pub(crate) struct Choices<T> {
    pub(crate) members: Box<[T]>,
    /// The compact JSON of the declared `enum` / `const`, for messages.
    pub(crate) text: Box<str>,
}

#[derive(Debug)]
pub(crate) struct StringNode {
    /// No constraint beyond the type.
    pub(crate) plain: bool,
    pub(crate) one_of: Option<Choices<Box<str>>>,
    pub(crate) constant: Option<Choices<Box<str>>>,
    pub(crate) min_length: Option<u64>,
    pub(crate) max_length: Option<u64>,
    pub(crate) pattern: Option<(std::sync::Arc<Pattern>, Box<str>)>,
}

#[derive(Debug)]
pub(crate) struct NumberNode {
    /// No constraint beyond the type.
    pub(crate) plain: bool,
    pub(crate) integer: bool,
    pub(crate) one_of: Option<Choices<Number>>,
    pub(crate) constant: Option<Choices<Number>>,
    /// `minimum`, `maximum`, `exclusiveMinimum`, `exclusiveMaximum`.
    pub(crate) bounds: [Option<Number>; 4],
    /// Only inclusive integer bounds (a Rust integer type's range, as the bridge emits): an
    /// `i64`/`u64` value is decided by two integer comparisons.
    pub(crate) range: Option<(i128, i128)>,
}

#[derive(Debug)]
pub(crate) struct LiteralNode {
    pub(crate) ty: Type,
    pub(crate) one_of: Option<Choices<Value>>,
    pub(crate) constant: Option<Choices<Value>>,
}

#[derive(Debug)]
pub(crate) enum Additional {
    Allow,
    Deny,
    Schema(NodeId),
}

#[derive(Debug)]
pub(crate) struct ObjectNode {
    /// Declared properties, in declaration order.
    pub(crate) props: Box<[Prop]>,
    /// Number of distinct required names.
    pub(crate) required_count: usize,
    /// `required` as declared (order and duplicates kept, for messages).
    pub(crate) required: Box<[Box<str>]>,
    pub(crate) additional: Additional,
    /// Key lookup for objects with many properties.
    index: Option<FxHashMap<Box<str>, u32>>,
    /// Every declared property is a scalar (its mask decides it, or its node is a string,
    /// number or literal, or `Option` of one) or an array of items their mask decides,
    /// `additionalProperties` is not a schema and keys
    /// are found by a scan: the fast path decides such an object in a loop of its own
    /// (`fits_flat`) that calls out only for a scalar with constraints, without entering the
    /// general container code.
    pub(crate) flat: bool,
    /// One past the last required declared property (0 when none is): members that matched the
    /// first `n` declared properties in order hold every required one exactly when `n` reaches it.
    pub(crate) required_end: usize,
}

/// Equality of two byte strings of the same length, with a few word compares instead of a
/// `memcmp` call for the short keys JSON objects use.
#[inline(always)]
pub(crate) fn same_len_eq(a: &[u8], b: &[u8]) -> bool {
    fn w4(x: &[u8], at: usize) -> u32 {
        x[at..at + 4]
            .try_into()
            .map(u32::from_le_bytes)
            .unwrap_or(0)
    }
    fn w8(x: &[u8], at: usize) -> u64 {
        x[at..at + 8]
            .try_into()
            .map(u64::from_le_bytes)
            .unwrap_or(0)
    }
    let n = a.len();
    if n != b.len() {
        return false;
    }
    match n {
        0 => true,
        1..=3 => a[0] == b[0] && a[n / 2] == b[n / 2] && a[n - 1] == b[n - 1],
        4..=7 => w4(a, 0) == w4(b, 0) && w4(a, n - 4) == w4(b, n - 4),
        8..=16 => w8(a, 0) == w8(b, 0) && w8(a, n - 8) == w8(b, n - 8),
        _ => a == b,
    }
}

/// A declared property.
#[derive(Debug)]
pub(crate) struct Prop {
    pub(crate) key: Box<str>,
    pub(crate) id: NodeId,
    pub(crate) required: bool,
    /// The node's [`TypeMask`]: checked in the object's loop, without visiting the node.
    pub(crate) mask: TypeMask,
    /// What an object's loop decides itself when the mask is empty.
    pub(crate) quick: Quick,
}

/// A member an object's loop decides without visiting its node, when its [`TypeMask`] does not:
/// the common shapes of a tool's arguments beyond a plain type. Exact, so a probe may trust it
/// at any depth.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) enum Quick {
    /// The node is visited.
    #[default]
    Node,
    /// A string that must be one of the node's `enum` members, and nothing else (a Rust enum
    /// of unit variants).
    Enum,
    /// A string that must be the node's `const` (and in its `enum`, if it has one), and nothing
    /// else (a tagged union's tag).
    Const,
    /// An array whose items this mask decides, and nothing else: no bounds, not unique
    /// (`Vec<String>`).
    Items(TypeMask),
}

impl Quick {
    /// What the loop can decide of `nodes[id]`.
    fn of(nodes: &[Node], id: NodeId) -> Self {
        match &nodes[id as usize] {
            Node::String(s)
                if s.min_length.is_none() && s.max_length.is_none() && s.pattern.is_none() =>
            {
                match (&s.one_of, &s.constant) {
                    (_, Some(_)) => Self::Const,
                    (Some(_), None) => Self::Enum,
                    (None, None) => Self::Node,
                }
            }
            Node::Array(a)
                if !a.items_mask.is_empty()
                    && a.min_items.is_none()
                    && a.max_items.is_none()
                    && !a.unique =>
            {
                Self::Items(a.items_mask)
            }
            _ => Self::Node,
        }
    }
}

/// The JSON types a node admits when its type is all it checks (a plain `string`, `integer`,
/// `number`, `boolean` or `null`, or `oneOf` one of those and `null`: every `Option<scalar>`),
/// one bit per type; empty when the node checks more (the value must visit it).
///
/// A container's loop decides such a member from the mask it keeps beside it: no node to load,
/// no dispatch on the node's kind.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct TypeMask(u8);

impl TypeMask {
    const NULL: u8 = 1;
    const BOOLEAN: u8 = 2;
    const STRING: u8 = 4;
    const INTEGER: u8 = 8;
    const NUMBER: u8 = 16;

    /// Whether the node must be visited (the mask decides nothing).
    #[inline(always)]
    pub(crate) fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// Whether `v` is of an admitted type (for a non-empty mask: exactly what the node decides).
    #[inline(always)]
    pub(crate) fn admits(self, v: &Value) -> bool {
        let m = self.0;
        // The masks of single types first, each one compare of the value's tag: a `match` on the
        // tag jumps through a table, and that indirect jump mispredicts in a loop over members
        // of different types (the largest share of a flat object's time, measured with `perf`).
        if m == Self::STRING {
            return v.is_string();
        }
        if m == Self::INTEGER {
            return matches!(v, Value::Number(n) if crate::json::is_integer(n));
        }
        if m == Self::BOOLEAN {
            return v.is_boolean();
        }
        match v {
            Value::Null => m & Self::NULL != 0,
            Value::Bool(_) => m & Self::BOOLEAN != 0,
            Value::String(_) => m & Self::STRING != 0,
            Value::Number(n) => {
                (m & Self::NUMBER != 0 && crate::json::is_lossless_number(n))
                    || (m & Self::INTEGER != 0 && crate::json::is_integer(n))
            }
            Value::Array(_) | Value::Object(_) => false,
        }
    }

    /// Whether every item is of an admitted type: a list of strings (`Vec<String>`, the common
    /// case) by one compare an item, without dispatching on the mask for each.
    #[inline(always)]
    pub(crate) fn admits_all(self, items: &[Value]) -> bool {
        if self.0 == Self::STRING {
            return items.iter().all(Value::is_string);
        }
        items.iter().all(|x| self.admits(x))
    }

    /// The mask of `nodes[id]`.
    fn of(nodes: &[Node], id: NodeId) -> Self {
        let leaf = |id: NodeId| match &nodes[id as usize] {
            Node::String(s) if s.plain => Self::STRING,
            Node::Number(n) if n.plain && n.integer => Self::INTEGER,
            Node::Number(n) if n.plain => Self::NUMBER,
            Node::Literal(l) if l.one_of.is_none() && l.constant.is_none() => match l.ty {
                Type::Boolean => Self::BOOLEAN,
                Type::Null => Self::NULL,
                _ => 0,
            },
            _ => 0,
        };
        Self(match &nodes[id as usize] {
            Node::OneOf(_, Pick::NullOr(of)) => match leaf(*of) {
                0 => 0,
                m => m | Self::NULL,
            },
            _ => leaf(id),
        })
    }
}

/// Objects with more declared properties than this use a hash index; fewer use a linear scan.
const LINEAR_LOOKUP_MAX: usize = 12;

impl ObjectNode {
    /// The position of declared property `key`.
    #[inline]
    pub(crate) fn find(&self, key: &str) -> Option<usize> {
        self.find_from(key, 0).map(|(i, _)| i)
    }

    /// Finds `key`, trying position `hint` first: payloads usually list properties in schema
    /// order, so the hint is the position after the previous match.
    #[inline(always)]
    pub(crate) fn find_from(&self, key: &str, hint: usize) -> Option<(usize, &Prop)> {
        if let Some(p) = self.props.get(hint)
            && same_len_eq(p.key.as_bytes(), key.as_bytes())
        {
            return Some((hint, p));
        }
        let i = self.find_slow(key)?;
        Some((i, &self.props[i]))
    }

    #[inline(never)]
    fn find_slow(&self, key: &str) -> Option<usize> {
        match &self.index {
            None => self
                .props
                .iter()
                .position(|p| same_len_eq(p.key.as_bytes(), key.as_bytes())),
            Some(index) => index.get(key).map(|&i| i as usize),
        }
    }
}

#[derive(Debug)]
pub(crate) struct ArrayNode {
    pub(crate) items: Option<NodeId>,
    /// The items' [`TypeMask`] (empty without `items`).
    pub(crate) items_mask: TypeMask,
    pub(crate) min_items: Option<u64>,
    pub(crate) max_items: Option<u64>,
    pub(crate) unique: bool,
}

fn choices<T>(
    v: Option<&Value>,
    single: bool,
    map: impl Fn(&Value) -> Option<T>,
) -> Option<Choices<T>> {
    let v = v?;
    let members: Box<[T]> = if single {
        Box::new([map(v)?])
    } else {
        v.as_array()?.iter().filter_map(map).collect()
    };
    Some(Choices {
        members,
        text: to_compact_string(v).into_boxed_str(),
    })
}

impl CompiledSchema {
    /// Asserts that `schema` is in the supported subset (listing every violation otherwise) and
    /// compiles it.
    ///
    /// ```
    /// use dsh_tools::schema::CompiledSchema;
    /// use serde_json::json;
    ///
    /// let err = CompiledSchema::compile(&json!({"type": "string", "format": "uuid"})).unwrap_err();
    /// assert!(err.to_string().starts_with("unsupported JSON schema: schema.format is not a supported keyword"));
    /// ```
    pub fn compile(schema: &Value) -> Result<Self, JsonSchemaError> {
        subset::assert_supported(schema)?;
        Ok(Self::compile_asserted(schema))
    }

    /// Compiles a schema that passed `assert_supported`.
    pub(crate) fn compile_asserted(schema: &Value) -> Self {
        let mut nodes = vec![Node::Any];
        let mut tasks: Vec<(&Value, NodeId)> = vec![(schema, 0)];
        while let Some((source, id)) = tasks.pop() {
            let node = compile_node(source, &mut nodes, &mut tasks);
            nodes[id as usize] = node;
        }
        // `oneOf [X, null]` where X never admits null: exactly one branch matches any value.
        // Otherwise a tagged union, whose tag picks the branch.
        for i in 0..nodes.len() {
            let Node::OneOf(branches, _) = &nodes[i] else {
                continue;
            };
            let never_null = |id: NodeId| match &nodes[id as usize] {
                Node::String(_) | Node::Number(_) | Node::Object(_) | Node::Array(_) => true,
                Node::Literal(l) => l.ty != Type::Null,
                Node::Any | Node::OneOf(..) => false,
            };
            let only_null = |id: NodeId| is_plain_null(&nodes[id as usize]);
            let pick = match **branches {
                [a, b] if only_null(b) && never_null(a) => Pick::NullOr(a),
                [a, b] if only_null(a) && never_null(b) => Pick::NullOr(b),
                _ => match TagPick::of(&nodes, branches) {
                    Some(tag) => Pick::Tag(Box::new(tag)),
                    None => Pick::All,
                },
            };
            if let Node::OneOf(_, p) = &mut nodes[i] {
                *p = pick;
            }
        }
        // Every member's and item's type mask, once the nullable `oneOf`s are known.
        let masks: Vec<TypeMask> = (0..nodes.len() as NodeId)
            .map(|id| TypeMask::of(&nodes, id))
            .collect();
        // Which nodes a flat object's loop decides without the general container code: masked
        // ones, scalar leaves (or `Option` of one) and arrays of masked items (`Vec<String>`).
        let scalar = |id: NodeId| {
            matches!(
                &nodes[id as usize],
                Node::String(_) | Node::Number(_) | Node::Literal(_)
            )
        };
        let inline: Vec<bool> = (0..nodes.len() as NodeId)
            .map(|id| {
                !masks[id as usize].is_empty()
                    || scalar(id)
                    || match &nodes[id as usize] {
                        Node::OneOf(_, Pick::NullOr(of)) => scalar(*of),
                        Node::Array(a) => a.items.is_some_and(|i| !masks[i as usize].is_empty()),
                        _ => false,
                    }
            })
            .collect();
        for node in &mut nodes {
            if let Node::Array(a) = node
                && let Some(item) = a.items
            {
                a.items_mask = masks[item as usize];
            }
        }
        // Once every array knows its items' mask.
        let quick: Vec<Quick> = (0..nodes.len() as NodeId)
            .map(|id| Quick::of(&nodes, id))
            .collect();
        for node in &mut nodes {
            if let Node::Object(o) = node {
                for p in o.props.iter_mut() {
                    p.mask = masks[p.id as usize];
                    p.quick = quick[p.id as usize];
                }
                o.flat = o.index.is_none()
                    && !matches!(o.additional, Additional::Schema(_))
                    && o.props.iter().all(|p| inline[p.id as usize]);
            }
        }
        let admits_any = nodes.iter().any(|n| matches!(n, Node::Any));
        let has_patterns = nodes
            .iter()
            .any(|n| matches!(n, Node::String(s) if s.pattern.is_some()));
        Self {
            nodes,
            admits_any,
            has_patterns,
        }
    }
}

fn alloc<'a>(
    child: &'a Value,
    nodes: &mut Vec<Node>,
    tasks: &mut Vec<(&'a Value, NodeId)>,
) -> NodeId {
    let id = NodeId::try_from(nodes.len()).unwrap_or(NodeId::MAX);
    nodes.push(Node::Any);
    tasks.push((child, id));
    id
}

fn compile_node<'a>(
    source: &'a Value,
    nodes: &mut Vec<Node>,
    tasks: &mut Vec<(&'a Value, NodeId)>,
) -> Node {
    let Some(map) = source.as_object() else {
        return Node::Any;
    };
    if let Some(Value::Array(branches)) = map.get(ONE_OF) {
        return Node::OneOf(
            branches.iter().map(|b| alloc(b, nodes, tasks)).collect(),
            Pick::All,
        );
    }
    let Some(ty) = map.get(TYPE).and_then(Value::as_str).and_then(Type::parse) else {
        return Node::Any;
    };
    let (en, co) = (map.get(ENUM), map.get(CONST));
    let has_any = |keywords: &[&str]| keywords.iter().any(|k| map.contains_key(*k));
    match ty {
        Type::String => {
            let as_str = |v: &Value| v.as_str().map(Box::from);
            Node::String(StringNode {
                plain: !has_any(&MEMBERS) && !has_any(&STRING_KEYWORDS),
                one_of: choices(en, false, as_str),
                constant: choices(co, true, as_str),
                min_length: map.get(MIN_LENGTH).and_then(count_bound),
                max_length: map.get(MAX_LENGTH).and_then(count_bound),
                pattern: map.get(PATTERN).and_then(Value::as_str).and_then(|p| {
                    Some((
                        pattern::build(p).ok()?,
                        to_compact_string(&Value::from(p)).into(),
                    ))
                }),
            })
        }
        Type::Number | Type::Integer => {
            let as_num = |v: &Value| v.as_number().cloned();
            let bound = |k: &str| map.get(k).and_then(Value::as_number).cloned();
            let exact = |k: &str| match map.get(k).and_then(Value::as_number) {
                None => Some(None),
                Some(n) => n
                    .as_i64()
                    .map(i128::from)
                    .or_else(|| n.as_u64().map(i128::from))
                    .map(Some),
            };
            // The exclusive bounds: `BOUNDS` after `minimum` and `maximum`.
            let exclusive = &BOUNDS[2..];
            let range = match (exact(MINIMUM), exact(MAXIMUM)) {
                (Some(lo), Some(hi))
                    if (lo.is_some() || hi.is_some())
                        && !has_any(&MEMBERS)
                        && !has_any(exclusive) =>
                {
                    Some((lo.unwrap_or(i128::MIN), hi.unwrap_or(i128::MAX)))
                }
                _ => None,
            };
            Node::Number(NumberNode {
                range,
                plain: !has_any(&MEMBERS) && !has_any(&BOUNDS),
                integer: ty == Type::Integer,
                one_of: choices(en, false, as_num),
                constant: choices(co, true, as_num),
                bounds: BOUNDS.map(bound),
            })
        }
        Type::Boolean | Type::Null => Node::Literal(LiteralNode {
            ty,
            one_of: choices(en, false, |v| Some(v.clone())),
            constant: choices(co, true, |v| Some(v.clone())),
        }),
        Type::Array => Node::Array(ArrayNode {
            items: map.get(ITEMS).map(|items| alloc(items, nodes, tasks)),
            items_mask: TypeMask::default(),
            min_items: map.get(MIN_ITEMS).and_then(count_bound),
            max_items: map.get(MAX_ITEMS).and_then(count_bound),
            unique: map
                .get(UNIQUE_ITEMS)
                .and_then(Value::as_bool)
                .unwrap_or(false),
        }),
        Type::Object => {
            let props_src = map.get(PROPERTIES).and_then(Value::as_object);
            let required: Box<[Box<str>]> = map
                .get(REQUIRED)
                .and_then(Value::as_array)
                .map(|names| {
                    names
                        .iter()
                        .filter_map(Value::as_str)
                        .map(Box::from)
                        .collect()
                })
                .unwrap_or_default();
            // A set, so that many required names against many properties stay linear.
            let required_set: rustc_hash::FxHashSet<&str> = required.iter().map(|r| &**r).collect();
            let mut props = Vec::new();
            for (k, child) in props_src.into_iter().flatten() {
                props.push(Prop {
                    key: Box::from(k.as_str()),
                    id: alloc(child, nodes, tasks),
                    required: required_set.contains(k.as_str()),
                    mask: TypeMask::default(),
                    quick: Quick::Node,
                });
            }
            drop(required_set);
            let required_count = props.iter().filter(|p| p.required).count();
            let required_end = props.iter().rposition(|p| p.required).map_or(0, |i| i + 1);
            let index = (props.len() > LINEAR_LOOKUP_MAX).then(|| {
                props
                    .iter()
                    .enumerate()
                    .map(|(i, p)| (p.key.clone(), i as u32))
                    .collect::<FxHashMap<_, _>>()
            });
            let additional = match map.get(ADDITIONAL_PROPERTIES) {
                Some(Value::Bool(false)) => Additional::Deny,
                Some(extra @ Value::Object(_)) => Additional::Schema(alloc(extra, nodes, tasks)),
                _ => Additional::Allow,
            };
            Node::Object(ObjectNode {
                props: props.into(),
                required_count,
                required,
                additional,
                index,
                flat: false,
                required_end,
            })
        }
    }
}

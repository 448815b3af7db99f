//! Converting the loaded nodes, children first, into the subset.

use super::disjoint;
use super::load::{self, Extra, MAX_DEPTH, Node, NodeId, TUPLE};
use super::problems::Problems;
use super::shape::{self, Annotations, Budget, COPY_BUDGET, Out, Shape, Typed};
use crate::json::{cmp_numbers, is_integer, is_lossless, is_lossless_number};
use crate::schema::keywords::{
    ADDITIONAL_ITEMS, ADDITIONAL_PROPERTIES, ALL_OF, ANY_OF, BOUNDS, CONST, COUNTS, DEFAULT,
    DEFINITIONS, DEFS, DESCRIPTION, ENUM, EXAMPLE, EXAMPLES, FORMAT, ITEMS, MAX_ITEMS, MAX_LENGTH,
    MAXIMUM, MIN_ITEMS, MIN_LENGTH, MINIMUM, NOT, NOTES, NULLABLE, ONE_OF, PATTERN,
    PATTERN_PROPERTIES, PREFIX_ITEMS, PROPERTIES, PROPERTY_NAMES, REF, REQUIRED, SCHEMA,
    SUBSET_TEXT, TITLE, TYPE, UNEVALUATED_ITEMS, UNEVALUATED_PROPERTIES, UNIQUE_ITEMS,
};
use crate::schema::pattern;
use crate::schema::subset::{Type, count_bound};
use serde_json::{Map, Number, Value};
use std::cmp::Ordering;

const UNSATISFIABLE_REQUIRED: &str = "no value can match this schema: it requires a property that additionalProperties (or unevaluatedProperties) false forbids";

/// Deepest `default` / `examples` value copied into the result (JSON nesting levels): the same
/// bound as for schemas, so that no input nested at most [`MAX_DEPTH`] JSON levels hits it.
const MAX_ANNOTATION_DEPTH: usize = MAX_DEPTH;

/// Converts `root`; on problems, reports them (in document order) and returns `null`.
pub(super) fn run(root: &Value, problems: &mut Problems) -> Value {
    run_in(root, problems, None)
}

/// Converts `root` as far as it goes: a keyword the subset has no word for is left out, and a
/// node that cannot be converted accepts anything (keeping its description). A `$ref` that
/// recurs becomes a reference marker ([`cycle_marker`]) and its pointer is added to `cycles`.
/// Everything left out is reported in `problems`, in document order; the result is never
/// `null`.
pub(super) fn run_lossy(root: &Value, problems: &mut Problems, cycles: &mut Vec<String>) -> Value {
    run_in(root, problems, Some(cycles))
}

/// The title that marks a `$ref` to `pointer` left as a reference (a recursive type).
pub(crate) fn cycle_marker(pointer: &str) -> String {
    format!("{CYCLE_MARKER}{pointer}")
}

/// What [`cycle_marker`] titles start with.
pub(crate) const CYCLE_MARKER: &str = "$ref #";

fn run_in(root: &Value, problems: &mut Problems, cycles: Option<&mut Vec<String>>) -> Value {
    let lossy = cycles.is_some();
    let mut notes: Vec<(NodeId, String)> = Vec::new();
    let mut dropped: Vec<(NodeId, String)> = Vec::new();
    let arena = load::load(root, &mut notes);
    let mut outs: Vec<Option<Out>> = Vec::new();
    outs.resize_with(arena.nodes.len(), || None);
    let mut budget = Budget(COPY_BUDGET);
    for id in (0..arena.nodes.len()).rev() {
        let before = notes.len();
        let mut cx = NodeCx {
            node: &arena.nodes[id],
            id,
            outs: &mut outs,
            notes: &mut notes,
            dropped: lossy.then_some(&mut dropped),
        };
        let out = cx.convert(&mut budget);
        let node = &arena.nodes[id];
        let cycle = node.cycle.as_deref().filter(|p| lossy && !p.is_empty());
        outs[id] = Some(if let Some(pointer) = cycle {
            // A recursive `$ref` (not the root's own) is shown as a reference to a named type.
            let mut marker = node.map.map_or_else(Out::any, described_any);
            marker.ann.title = Some(Value::String(cycle_marker(pointer)));
            marker
        } else if notes.len() > before {
            // A neutral placeholder keeps one mistake from causing others further up.
            match (lossy, arena.nodes[id].map) {
                (true, Some(map)) => described_any(map),
                _ => Out::any(),
            }
        } else {
            out
        });
    }
    if let Some(cycles) = cycles {
        for (id, node) in arena.nodes.iter().enumerate() {
            let Some(pointer) = node.cycle.as_deref().filter(|p| !p.is_empty()) else {
                continue;
            };
            notes.retain(|(at, message)| *at != id || !message.starts_with("recursive type"));
            if !cycles.iter().any(|c| c == pointer) {
                cycles.push(pointer.to_owned());
            }
        }
        for (_, message) in &mut notes {
            *message = format!("shown as any value: {message}");
        }
    }
    notes.append(&mut dropped);
    if !notes.is_empty() {
        let rank = load::preorder(&arena);
        notes.sort_by_key(|(id, _)| rank[*id]);
        for (id, message) in notes {
            problems.add(&arena.paths.render(arena.nodes[id].path), message);
        }
        if !lossy {
            return Value::Null;
        }
    }
    match outs[0].take().map(shape::settle) {
        Some(Some(out)) => out.into_value(),
        _ => {
            problems.add("#", UNSATISFIABLE_REQUIRED);
            if lossy {
                Value::Object(Map::new())
            } else {
                Value::Null
            }
        }
    }
}

/// What a node that could not be converted shows under the lossy conversion: anything, with
/// its own description.
fn described_any(map: &Map<String, Value>) -> Out {
    let mut out = Out::any();
    out.ann.description = map.get("description").filter(|d| d.is_string()).cloned();
    out
}

/// The keywords of one node that the own-part conversion reads.
#[derive(Default)]
struct Kw<'a> {
    ty: Option<&'a Value>,
    enumeration: Option<&'a Value>,
    constant: Option<&'a Value>,
    format: Option<&'a str>,
    required: Option<&'a Value>,
    bounds: [Option<&'a Value>; 4],
    counts: [Option<&'a Value>; 4],
    pattern: Option<&'a Value>,
    unique: Option<&'a Value>,
}

struct NodeCx<'c, 'a> {
    node: &'c Node<'a>,
    id: NodeId,
    outs: &'c mut Vec<Option<Out>>,
    notes: &'c mut Vec<(NodeId, String)>,
    /// Under the lossy conversion: the keywords left out (the node converts without them).
    dropped: Option<&'c mut Vec<(NodeId, String)>>,
}

impl<'a> NodeCx<'_, 'a> {
    fn report(&mut self, message: impl Into<String>) {
        self.notes.push((self.id, message.into()));
    }

    /// A keyword the subset has no word for: a problem, or under the lossy conversion a
    /// keyword left out.
    fn unsupported(&mut self, keyword: &str, message: impl Into<String>) {
        match &mut self.dropped {
            Some(dropped) => dropped.push((
                self.id,
                format!("`{keyword}` left out: the subset has no word for it"),
            )),
            None => self.report(message),
        }
    }

    fn take(&mut self, child: NodeId) -> Out {
        self.outs[child].take().unwrap_or_else(Out::any)
    }

    /// A child schema, final, as JSON; `None` when it accepts anything and says nothing.
    fn take_rendered(&mut self, child: NodeId) -> Option<Value> {
        match shape::settle(self.take(child)) {
            Some(out) if out == Out::any() => None,
            Some(out) => Some(out.into_value()),
            None => {
                self.notes.push((child, UNSATISFIABLE_REQUIRED.into()));
                Some(Value::Object(Map::new()))
            }
        }
    }

    /// `additionalProperties` / `unevaluatedProperties`: `true` (also for a schema that accepts
    /// anything), `false` or a schema.
    fn take_extra(&mut self, extra: Option<Extra>) -> Option<Value> {
        Some(match extra? {
            Extra::Bool(b) => Value::Bool(b),
            Extra::Schema(c) => self.take_rendered(c).unwrap_or(Value::Bool(true)),
        })
    }

    fn convert(&mut self, budget: &mut Budget) -> Out {
        let Some(map) = self.node.map else {
            return Out::any();
        };
        let (ann, kw) = self.keywords(map);
        let node = self.node;
        let mut result = match self.own_part(map, ann, &kw) {
            Some(out) => out,
            None => return Out::any(),
        };
        let mut parts: Vec<Out> = node.pieces.iter().map(|&p| self.take(p)).collect();
        if let Some(ids) = &node.one_of {
            let branches = ids.iter().map(|&b| self.take(b)).collect();
            parts.extend(Out::union(Annotations::default(), branches));
        }
        if let Some(ids) = &node.any_of {
            let branches: Vec<Out> = ids.iter().map(|&b| self.take(b)).collect();
            // Shown, not checked: overlapping branches are still a TypeScript union.
            let shown = self.dropped.is_some().then(|| branches.clone());
            match disjoint::any_of(Annotations::default(), branches) {
                Ok(u) => parts.extend(u),
                Err(_) if shown.is_some() => {
                    parts.extend(shown.and_then(|b| Out::union(Annotations::default(), b)));
                }
                Err(message) => {
                    self.report(message);
                    return Out::any();
                }
            }
        }
        for part in parts {
            match shape::intersect(result, part, budget) {
                Ok(Some(out)) => result = out,
                Ok(None) => {
                    self.report("no value can match this schema: its parts (type, $ref, allOf, oneOf/anyOf) contradict each other");
                    return Out::any();
                }
                Err(message) => {
                    self.report(message);
                    return Out::any();
                }
            }
        }
        // `unevaluatedProperties: true` constrains nothing.
        let unevaluated = self
            .take_extra(node.unevaluated)
            .filter(|u| *u != Value::Bool(true));
        if let Err(message) = disjoint::finalize(&mut result, unevaluated.as_ref()) {
            self.report(message);
        }
        result
    }

    /// Sorts the node's keywords: annotations are collected, the keywords the subset knows are
    /// returned, the rest are dropped (documented ones) or reported.
    fn keywords(&mut self, map: &'a Map<String, Value>) -> (Annotations, Kw<'a>) {
        let mut ann = Annotations::default();
        let mut kw = Kw::default();
        for (k, v) in map {
            match k.as_str() {
                // Dropped: see the module docs for why each is safe to drop.
                SCHEMA => {}
                note if NOTES.contains(&note) => {}
                // Consumed by the loader.
                REF | DEFS | DEFINITIONS | PROPERTIES | ADDITIONAL_PROPERTIES
                | UNEVALUATED_PROPERTIES | ITEMS | ONE_OF | ANY_OF | ALL_OF => {}
                TITLE | DESCRIPTION => match v {
                    Value::String(_) if k == TITLE => ann.title = Some(v.clone()),
                    Value::String(_) => ann.description = Some(v.clone()),
                    _ => self.report(format!("{k} must be a string")),
                },
                DEFAULT | EXAMPLES => {
                    if !is_lossless(v) {
                        self.report(format!("{k} must be lossless JSON (no -0)"));
                    } else if deeper_than(v, MAX_ANNOTATION_DEPTH) {
                        self.report(format!(
                            "{k} is nested more than {MAX_ANNOTATION_DEPTH} levels deep"
                        ));
                    } else if k == DEFAULT {
                        ann.default = Some(v.clone());
                    } else {
                        ann.examples = Some(v.clone());
                    }
                }
                TYPE => kw.ty = Some(v),
                ENUM => kw.enumeration = Some(v),
                CONST => kw.constant = Some(v),
                REQUIRED => kw.required = Some(v),
                PATTERN => kw.pattern = Some(v),
                UNIQUE_ITEMS => kw.unique = Some(v),
                FORMAT => match v.as_str() {
                    Some(f) => kw.format = Some(f),
                    None => self.report("format must be a string"),
                },
                name if BOUNDS.contains(&name) => {
                    let i = BOUNDS.iter().position(|b| *b == name).unwrap_or(0);
                    kw.bounds[i] = Some(v);
                }
                name if COUNTS.contains(&name) => {
                    let i = COUNTS.iter().position(|b| *b == name).unwrap_or(0);
                    kw.counts[i] = Some(v);
                }
                PREFIX_ITEMS | ADDITIONAL_ITEMS | UNEVALUATED_ITEMS => self.unsupported(k, TUPLE),
                PATTERN_PROPERTIES | PROPERTY_NAMES => self.unsupported(k, format!("{k} is not supported: schemars emits it for maps whose keys are not strings (integers, newtypes, ...); use HashMap<String, _> (or a map keyed by a unit-only enum)")),
                NOT => self.unsupported(k, "`not` is not supported (schemars emits it for NonZeroI* integers): use the plain integer type and reject 0 in the tool"),
                NULLABLE => self.unsupported(k, "`nullable` (OpenAPI 3.0) is not supported: generate the schema with draft 2020-12 settings, which use \"type\": [\"T\", \"null\"]"),
                EXAMPLE => self.unsupported(k, "`example` (OpenAPI) is not supported: use `examples` (an array)"),
                other => self.unsupported(other, format!(
                    "keyword \"{other}\" is not supported by the subset ({SUBSET_TEXT}; the bridge also rewrites $ref, anyOf, allOf, format and unevaluatedProperties)"
                )),
            }
        }
        (ann, kw)
    }

    /// The node's own keywords (everything but `$ref`, `allOf`, `oneOf`, `anyOf` and
    /// `unevaluatedProperties`) as one typed node, a union of typed nodes (a type array or
    /// mixed-type `enum`), or `Any`. `None` after a reported problem.
    fn own_part(
        &mut self,
        map: &'a Map<String, Value>,
        ann: Annotations,
        kw: &Kw<'a>,
    ) -> Option<Out> {
        let node = self.node;
        let members = self.members(kw)?;
        let types = self.types(kw, members.as_deref())?;
        // Which type each type-specific keyword needs.
        let needs: [(&str, bool, &[Type]); 13] = [
            (PROPERTIES, map.contains_key(PROPERTIES), &[Type::Object]),
            (REQUIRED, kw.required.is_some(), &[Type::Object]),
            (
                ADDITIONAL_PROPERTIES,
                node.additional.is_some(),
                &[Type::Object],
            ),
            (ITEMS, node.items.is_some(), &[Type::Array]),
            (MIN_ITEMS, kw.counts[2].is_some(), &[Type::Array]),
            (MAX_ITEMS, kw.counts[3].is_some(), &[Type::Array]),
            (UNIQUE_ITEMS, kw.unique.is_some(), &[Type::Array]),
            (MIN_LENGTH, kw.counts[0].is_some(), &[Type::String]),
            (MAX_LENGTH, kw.counts[1].is_some(), &[Type::String]),
            (PATTERN, kw.pattern.is_some(), &[Type::String]),
            (
                MINIMUM,
                kw.bounds[0].is_some(),
                &[Type::Number, Type::Integer],
            ),
            (
                MAXIMUM,
                kw.bounds[1].is_some(),
                &[Type::Number, Type::Integer],
            ),
            (
                "exclusiveMinimum/exclusiveMaximum",
                kw.bounds[2].is_some() || kw.bounds[3].is_some(),
                &[Type::Number, Type::Integer],
            ),
        ];
        let mut ok = true;
        for (name, present, on) in needs {
            if present && !types.iter().any(|t| on.contains(t)) {
                ok = false;
                self.report(match types.is_empty() {
                    true => {
                        format!("{name} applies to one type only; the schema must declare \"type\"")
                    }
                    false => format!("{name} does not apply to type {}", type_list(&types)),
                });
            }
        }
        let numeric = types
            .iter()
            .any(|t| matches!(t, Type::Number | Type::Integer));
        let format_bounds = match kw.format {
            None => None,
            Some(f) => match (int_format(f), f) {
                (Some(range), _) if numeric => Some(range),
                (None, "float" | "double") if numeric => None,
                (Some(_), _) | (None, "float" | "double") => {
                    ok = false;
                    self.report(format!(
                        "format \"{f}\" describes numbers but the type is {}",
                        type_list(&types)
                    ));
                    None
                }
                (None, _) => {
                    ok = false;
                    self.report(format!(
                        "format \"{f}\" cannot be checked by the subset, and dropping it would accept values the Rust type rejects; make the field a String and parse it in the tool, or annotate it with #[schemars(with = \"String\")] (optionally with #[schemars(regex(pattern = \"...\"))])"
                    ));
                    None
                }
            },
        };
        let bounds = self.bounds(kw, format_bounds)?;
        let counts = self.counts(kw)?;
        let pattern = self.pattern(kw)?;
        let unique = match kw.unique {
            None => false,
            Some(Value::Bool(b)) => *b,
            Some(_) => {
                self.report("uniqueItems must be a boolean");
                return None;
            }
        };
        let required = self.required(kw)?;
        if !ok {
            return None;
        }
        if types.is_empty() {
            return Some(Out {
                ann,
                shape: Shape::Any,
            });
        }
        let mut branches = Vec::with_capacity(types.len());
        for ty in types {
            let mut t = Typed::new(ty);
            match ty {
                Type::Object => {
                    for (name, c) in &node.props {
                        let schema = self
                            .take_rendered(*c)
                            .unwrap_or_else(|| Value::Object(Map::new()));
                        t.props.push(((*name).to_owned(), schema));
                    }
                    t.required = required.clone();
                    t.additional = self.take_extra(node.additional);
                }
                Type::Array => {
                    t.items = node.items.and_then(|c| self.take_rendered(c));
                    t.min_items = counts[2];
                    t.max_items = counts[3];
                    t.unique = unique;
                }
                Type::String => {
                    t.min_length = counts[0];
                    t.max_length = counts[1];
                    t.pattern = pattern.clone();
                }
                Type::Number | Type::Integer => t.bounds = bounds.clone(),
                Type::Boolean | Type::Null => {}
            }
            if let Some(c) = kw.constant {
                if !ty.admits(c) {
                    continue;
                }
                t.constant = Some(c.clone());
            }
            if let Some(Value::Array(list)) = kw.enumeration {
                let admitted: Vec<Value> = list.iter().filter(|m| ty.admits(m)).cloned().collect();
                if admitted.is_empty() {
                    continue;
                }
                t.enumeration = Some(admitted);
            }
            branches.extend(t.normalize().map(Out::typed));
        }
        let out = Out::union(ann, branches);
        if out.is_none() {
            self.report("no value can match this schema: no enum/const member has a declared type");
        }
        out
    }

    /// `const` (as a one-member list) or else `enum` members, checked to be lossless scalars.
    /// `Some(None)` when neither is declared.
    #[allow(clippy::option_option)]
    fn members(&mut self, kw: &Kw<'a>) -> Option<Option<Vec<Value>>> {
        let mut ok = true;
        let mut check = |this: &mut Self, name: &str, v: &Value| match v {
            Value::Array(_) | Value::Object(_) => {
                ok = false;
                this.report(format!("{name} must be scalars (string, number, boolean or null): the subset cannot pin an object or array value"));
            }
            Value::Number(n) if !is_lossless_number(n) => {
                ok = false;
                this.report(format!("{name} must be lossless JSON (-0 is not)"));
            }
            _ => {}
        };
        if let Some(c) = kw.constant {
            check(self, "const values", c);
        }
        match kw.enumeration {
            None => {}
            Some(Value::Array(list)) if !list.is_empty() => {
                for m in list {
                    check(self, "enum members", m);
                }
            }
            Some(_) => {
                ok = false;
                self.report("enum must be a non-empty array");
            }
        }
        if !ok {
            return None;
        }
        Some(match (kw.constant, kw.enumeration) {
            (Some(c), _) => Some(vec![c.clone()]),
            (None, Some(Value::Array(list))) => Some(list.clone()),
            _ => None,
        })
    }

    /// The declared types, or those of the `enum`/`const` members; empty for an untyped node.
    fn types(&mut self, kw: &Kw<'a>, members: Option<&[Value]>) -> Option<Vec<Type>> {
        let mut types: Vec<Type> = Vec::new();
        match kw.ty {
            Some(Value::String(s)) => {
                match Type::parse(s) {
                    Some(t) => types.push(t),
                    None => {
                        self.report(format!("type \"{s}\" is not one of object/array/string/number/integer/boolean/null"));
                        return None;
                    }
                }
            }
            Some(Value::Array(list)) if !list.is_empty() => {
                for t in list {
                    match t.as_str().and_then(Type::parse) {
                        Some(t) if !types.contains(&t) => types.push(t),
                        Some(_) => {}
                        None => {
                            self.report(
                                "type must name object/array/string/number/integer/boolean/null",
                            );
                            return None;
                        }
                    }
                }
            }
            Some(_) => {
                self.report("type must be a type name or a non-empty array of type names");
                return None;
            }
            None => {
                for m in members.unwrap_or_default() {
                    let t = match m {
                        Value::Null => Type::Null,
                        Value::Bool(_) => Type::Boolean,
                        Value::String(_) => Type::String,
                        Value::Number(n) if is_integer(n) => Type::Integer,
                        _ => Type::Number,
                    };
                    if !types.contains(&t) {
                        types.push(t);
                    }
                }
            }
        }
        // `number` admits every integer: with both, `integer` adds nothing.
        if types.contains(&Type::Number) {
            types.retain(|t| *t != Type::Integer);
        }
        Some(types)
    }

    fn bounds(&mut self, kw: &Kw<'a>, format: Option<(i128, i128)>) -> Option<[Option<Number>; 4]> {
        let mut out: [Option<Number>; 4] = [None, None, None, None];
        for (i, v) in kw.bounds.iter().enumerate() {
            match v {
                None => {}
                Some(Value::Number(n)) if is_lossless_number(n) => out[i] = Some(n.clone()),
                Some(_) => {
                    self.report(format!("{} must be a finite number", BOUNDS[i]));
                    return None;
                }
            }
        }
        if let Some((lo, hi)) = format {
            for (i, (bound, keep)) in [(lo, Ordering::Greater), (hi, Ordering::Less)]
                .into_iter()
                .enumerate()
            {
                let bound = exact_number(bound);
                out[i] = Some(match out[i].take() {
                    Some(declared) if cmp_numbers(&declared, &bound) == Some(keep) => declared,
                    _ => bound,
                });
            }
        }
        Some(out)
    }

    fn counts(&mut self, kw: &Kw<'a>) -> Option<[Option<u64>; 4]> {
        let mut out = [None; 4];
        for (i, v) in kw.counts.iter().enumerate() {
            if let Some(v) = v {
                match count_bound(v) {
                    Some(n) => out[i] = Some(n),
                    None => {
                        self.report(format!("{} must be a non-negative integer", COUNTS[i]));
                        return None;
                    }
                }
            }
        }
        Some(out)
    }

    #[allow(clippy::option_option)]
    fn pattern(&mut self, kw: &Kw<'a>) -> Option<Option<String>> {
        match kw.pattern {
            None => Some(None),
            Some(Value::String(p)) => match pattern::build(p) {
                Ok(_) => Some(Some(p.clone())),
                Err(e) => {
                    self.report(format!("pattern must be a valid regular expression: {e}"));
                    None
                }
            },
            Some(_) => {
                self.report("pattern must be a string");
                None
            }
        }
    }

    fn required(&mut self, kw: &Kw<'a>) -> Option<Vec<String>> {
        let mut names: Vec<String> = Vec::new();
        match kw.required {
            None => {}
            Some(Value::Array(list)) if list.iter().all(Value::is_string) => {
                let mut seen = std::collections::HashSet::with_capacity(list.len());
                for n in list.iter().filter_map(Value::as_str) {
                    if seen.insert(n) {
                        names.push(n.to_owned());
                    }
                }
            }
            Some(_) => {
                self.report("required must be an array of strings");
                return None;
            }
        }
        Some(names)
    }
}

fn type_list(types: &[Type]) -> String {
    if types.is_empty() {
        return "(none)".into();
    }
    let names: Vec<String> = types.iter().map(|t| format!("\"{}\"", t.name())).collect();
    names.join("/")
}

/// The range of an integer `format`, clamped to what `serde_json::Value` holds without
/// `arbitrary_precision` (`i64::MIN ..= u64::MAX`); `int`/`uint` are this platform's
/// `isize`/`usize`.
fn int_format(f: &str) -> Option<(i128, i128)> {
    Some(match f {
        "int8" => (i8::MIN.into(), i8::MAX.into()),
        "uint8" => (0, u8::MAX.into()),
        "int16" => (i16::MIN.into(), i16::MAX.into()),
        "uint16" => (0, u16::MAX.into()),
        "int32" => (i32::MIN.into(), i32::MAX.into()),
        "uint32" => (0, u32::MAX.into()),
        "int64" => (i64::MIN.into(), i64::MAX.into()),
        "uint64" => (0, u64::MAX.into()),
        "int" => (isize::MIN as i128, isize::MAX as i128),
        "uint" => (0, usize::MAX as i128),
        "int128" => (i64::MIN.into(), u64::MAX.into()),
        "uint128" => (0, u64::MAX.into()),
        _ => return None,
    })
}

/// An integer in `i64::MIN ..= u64::MAX` as an exact JSON number.
fn exact_number(i: i128) -> Number {
    match (i64::try_from(i), u64::try_from(i)) {
        (Ok(v), _) => v.into(),
        (_, Ok(v)) => v.into(),
        _ if i < 0 => i64::MIN.into(),
        _ => u64::MAX.into(),
    }
}

/// Whether `v` nests more than `limit` levels of arrays/objects. Iterative.
fn deeper_than(v: &Value, limit: usize) -> bool {
    let mut stack = vec![(v, 0usize)];
    while let Some((v, d)) = stack.pop() {
        if d > limit {
            return true;
        }
        match v {
            Value::Array(a) => stack.extend(a.iter().map(|x| (x, d + 1))),
            Value::Object(o) => stack.extend(o.values().map(|x| (x, d + 1))),
            _ => {}
        }
    }
    false
}

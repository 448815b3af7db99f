//! Scalar and array checks shared by the validator's two engines: `None` means the value passes.

use super::compile::{ArrayNode, LiteralNode, NumberNode, StringNode};
use crate::json::{
    cmp_numbers, is_integer, is_lossless_number, json_equal, json_hash, numbers_equal,
};
use serde_json::{Number, Value};
use std::cmp::Ordering;

pub(super) enum Problem<'s> {
    Enum(&'s str),
    Const(&'s str),
    Bound(&'static str, &'s Number),
    MinLength(u64),
    MaxLength(u64),
    Pattern(&'s str),
}

pub(super) fn string_problem<'s>(s: &'s StringNode, x: &str) -> Option<Problem<'s>> {
    if let Some(e) = &s.one_of
        && !e.members.iter().any(|m| **m == *x)
    {
        return Some(Problem::Enum(&e.text));
    }
    if let Some(c) = &s.constant
        && *c.members[0] != *x
    {
        return Some(Problem::Const(&c.text));
    }
    if s.min_length.is_some() || s.max_length.is_some() {
        // Byte length bounds the scalar count from above: skip counting when it decides.
        let bytes = x.len() as u64;
        let chars = || x.chars().count() as u64;
        if let Some(min) = s.min_length
            && (bytes < min || chars() < min)
        {
            return Some(Problem::MinLength(min));
        }
        if let Some(max) = s.max_length
            && bytes > max
            && chars() > max
        {
            return Some(Problem::MaxLength(max));
        }
    }
    if let Some((re, text)) = &s.pattern
        && !re.is_match(x)
    {
        return Some(Problem::Pattern(text));
    }
    None
}

/// Every length / pattern problem of a string (collect mode lists them all).
pub(super) fn string_problems<'s>(s: &'s StringNode, x: &str, out: &mut Vec<Problem<'s>>) {
    match string_problem(s, x) {
        None => return,
        Some(p @ (Problem::Enum(_) | Problem::Const(_))) => {
            out.push(p);
            return;
        }
        // A length or pattern problem: list every one of them.
        Some(_) => {}
    }
    let chars = x.chars().count() as u64;
    if let Some(min) = s.min_length.filter(|m| chars < *m) {
        out.push(Problem::MinLength(min));
    }
    if let Some(max) = s.max_length.filter(|m| chars > *m) {
        out.push(Problem::MaxLength(max));
    }
    if let Some((re, text)) = &s.pattern
        && !re.is_match(x)
    {
        out.push(Problem::Pattern(text));
    }
}

#[inline]
pub(super) fn number_type_ok(n: &NumberNode, x: &Number) -> bool {
    if n.integer {
        is_integer(x)
    } else {
        is_lossless_number(x)
    }
}

pub(super) const BOUND_TEXT: [&str; 4] = [">=", "<=", ">", "<"];

pub(super) fn bound_fails(i: usize, x: &Number, bound: &Number) -> bool {
    let ord = cmp_numbers(x, bound);
    match i {
        0 => ord == Some(Ordering::Less),
        1 => ord == Some(Ordering::Greater),
        2 => ord != Some(Ordering::Greater),
        _ => ord != Some(Ordering::Less),
    }
}

#[inline(never)]
pub(super) fn number_problem<'s>(n: &'s NumberNode, x: &Number) -> Option<Problem<'s>> {
    let mut out = Vec::new();
    number_problems(n, x, &mut out, true);
    out.pop()
}

pub(super) fn number_problems<'s>(
    n: &'s NumberNode,
    x: &Number,
    out: &mut Vec<Problem<'s>>,
    first_only: bool,
) {
    if let Some(e) = &n.one_of
        && !e.members.iter().any(|m| numbers_equal(m, x))
    {
        out.push(Problem::Enum(&e.text));
        return;
    }
    if let Some(c) = &n.constant
        && !numbers_equal(&c.members[0], x)
    {
        out.push(Problem::Const(&c.text));
        return;
    }
    for (i, bound) in n.bounds.iter().enumerate() {
        if let Some(b) = bound
            && bound_fails(i, x, b)
        {
            out.push(Problem::Bound(BOUND_TEXT[i], b));
            if first_only {
                return;
            }
        }
    }
}

#[inline]
pub(super) fn literal_type_ok(l: &LiteralNode, v: &Value) -> bool {
    l.ty.admits(v)
}

pub(super) fn literal_problem<'s>(l: &'s LiteralNode, v: &Value) -> Option<Problem<'s>> {
    if let Some(e) = &l.one_of
        && !e.members.iter().any(|m| json_equal(m, v))
    {
        return Some(Problem::Enum(&e.text));
    }
    if let Some(c) = &l.constant
        && !json_equal(&c.members[0], v)
    {
        return Some(Problem::Const(&c.text));
    }
    None
}

pub(super) fn count_problem(a: &ArrayNode, len: usize) -> Option<String> {
    let len = len as u64;
    if let Some(min) = a.min_items.filter(|m| len < *m) {
        return Some(format!("must have at least {min} items"));
    }
    if let Some(max) = a.max_items.filter(|m| len > *m) {
        return Some(format!("must have at most {max} items"));
    }
    None
}

/// The first pair of equal items `(i, j)`, `i < j`, smallest `j` first.
#[cold]
pub(crate) fn first_duplicate(items: &[Value]) -> Option<(usize, usize)> {
    if items.len() <= 16 {
        for j in 1..items.len() {
            for i in 0..j {
                if json_equal(&items[i], &items[j]) {
                    return Some((i, j));
                }
            }
        }
        return None;
    }
    let mut hashed: Vec<(u64, usize)> = items
        .iter()
        .enumerate()
        .map(|(i, v)| (json_hash(v), i))
        .collect();
    hashed.sort_unstable();
    let mut best: Option<(usize, usize)> = None;
    let mut start = 0;
    while start < hashed.len() {
        let mut end = start + 1;
        while end < hashed.len() && hashed[end].0 == hashed[start].0 {
            end += 1;
        }
        for b in start + 1..end {
            for a in start..b {
                let (i, j) = (hashed[a].1.min(hashed[b].1), hashed[a].1.max(hashed[b].1));
                if best.is_none_or(|(bi, bj)| (j, i) < (bj, bi)) && json_equal(&items[i], &items[j])
                {
                    best = Some((i, j));
                }
            }
        }
        start = end;
    }
    best
}

//! Scalar and array checks shared by the validator's two engines: `None` means the value passes.

use super::compile::{ArrayNode, LiteralNode, NumberNode, StringNode, same_len_eq};
use super::pattern::Outcome;
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
    /// The pattern was not run: the validation's regex work budget is spent.
    PatternUnchecked(&'s str),
}

fn pattern_problem<'s>(s: &'s StringNode, x: &str) -> Option<Problem<'s>> {
    let (p, text) = s.pattern.as_ref()?;
    match p.check(x) {
        Outcome::Match => None,
        Outcome::Miss => Some(Problem::Pattern(text)),
        Outcome::OverBudget => Some(Problem::PatternUnchecked(text)),
    }
}

pub(super) fn string_problem<'s>(s: &'s StringNode, x: &str) -> Option<Problem<'s>> {
    // Word compares, not a `memcmp` call per member: enum members and argument values are short.
    if let Some(e) = &s.one_of
        && !e
            .members
            .iter()
            .any(|m| same_len_eq(m.as_bytes(), x.as_bytes()))
    {
        return Some(Problem::Enum(&e.text));
    }
    if let Some(c) = &s.constant
        && !same_len_eq(c.members[0].as_bytes(), x.as_bytes())
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
    pattern_problem(s, x)
}

/// Every length / pattern problem of a string (collect mode lists them all).
pub(super) fn string_problems<'s>(s: &'s StringNode, x: &str, out: &mut Vec<Problem<'s>>) {
    match string_problem(s, x) {
        None => return,
        // The lengths passed and the pattern (already run once) failed: nothing else to list.
        Some(
            p @ (Problem::Enum(_)
            | Problem::Const(_)
            | Problem::Pattern(_)
            | Problem::PatternUnchecked(_)),
        ) => {
            out.push(p);
            return;
        }
        // A length problem (the pattern has not run yet): list every one of them.
        Some(_) => {}
    }
    let chars = x.chars().count() as u64;
    if let Some(min) = s.min_length.filter(|m| chars < *m) {
        out.push(Problem::MinLength(min));
    }
    if let Some(max) = s.max_length.filter(|m| chars > *m) {
        out.push(Problem::MaxLength(max));
    }
    out.extend(pattern_problem(s, x));
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

/// The first pair of equal items `(i, j)`, `i < j`, smallest `j` first (and for that `j`, the
/// smallest `i`).
///
/// Long arrays are grouped by a keyed hash (colliding items cannot be crafted), then each group
/// is scanned in index order against one representative per distinct value seen so far in it:
/// expected linear in the number of items, never quadratic in a group of equal items.
#[cold]
pub(crate) fn first_duplicate(items: &[Value]) -> Option<(usize, usize)> {
    if items.len() <= 16 {
        for j in 1..items.len() {
            for i in 0..j {
                if equal(&items[i], &items[j]) {
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
    let mut representatives: Vec<usize> = Vec::new();
    let mut start = 0;
    while start < hashed.len() {
        let mut end = start + 1;
        while end < hashed.len() && hashed[end].0 == hashed[start].0 {
            end += 1;
        }
        // In index order: the first item equal to an earlier representative gives this group's
        // smallest `j`, and the representative (its value's first occurrence) the smallest `i`.
        representatives.clear();
        for &(_, j) in &hashed[start..end] {
            if best.is_some_and(|(_, bj)| j >= bj) {
                break;
            }
            match representatives
                .iter()
                .find(|&&i| equal(&items[i], &items[j]))
            {
                Some(&i) => {
                    best = Some((i, j));
                    break;
                }
                None => representatives.push(j),
            }
        }
        start = end;
    }
    best
}

/// [`json_equal`], counted in tests (the cost the model controls is the number of comparisons).
fn equal(a: &Value, b: &Value) -> bool {
    #[cfg(test)]
    COMPARISONS.with(|c| c.set(c.get() + 1));
    json_equal(a, b)
}

#[cfg(test)]
thread_local! {
    pub(crate) static COMPARISONS: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

#[cfg(test)]
mod tests {
    use super::{COMPARISONS, first_duplicate};
    use serde_json::{Value, json};

    fn comparisons(items: &[Value]) -> (Option<(usize, usize)>, usize) {
        COMPARISONS.with(|c| c.set(0));
        let found = first_duplicate(items);
        (found, COMPARISONS.with(std::cell::Cell::get))
    }

    #[test]
    fn colliding_integers_cost_linear_comparisons() {
        // `n` and `-n - 1` hashed the same before the hash was keyed: 10,000 distinct rows of
        // 17 such integers each took 5 s.
        let rows: Vec<Value> = (0..10_000i64)
            .map(|r| {
                let row: Vec<Value> = (0..17)
                    .map(|k| {
                        if (r >> k) & 1 == 1 {
                            json!(k)
                        } else {
                            json!(-k - 1)
                        }
                    })
                    .collect();
                Value::Array(row)
            })
            .collect();
        let (found, n) = comparisons(&rows);
        assert_eq!(found, None);
        assert!(n < 1_000, "{n} comparisons for 10,000 distinct rows");
    }

    #[test]
    fn many_equal_items_cost_linear_comparisons_and_give_the_first_pair() {
        let mut items: Vec<Value> = (0..5_000).map(|i| json!([i, "x"])).collect();
        items.extend((0..5_000).map(|_| json!([7, "x"])));
        let (found, n) = comparisons(&items);
        assert_eq!(found, Some((7, 5_000)));
        assert!(n < 100, "{n} comparisons");
        let same: Vec<Value> = (0..10_000).map(|_| json!({"a": [1, 2]})).collect();
        assert_eq!(comparisons(&same), (Some((0, 1)), 1));
    }

    #[test]
    fn the_smallest_j_then_the_smallest_i_is_reported() {
        let mut items: Vec<Value> = (0..40).map(|i| json!(i)).collect();
        items[30] = json!(5);
        items[20] = json!(9.0); // equals 9, found first: j = 20
        items[35] = json!(20);
        assert_eq!(first_duplicate(&items), Some((9, 20)));
    }
}

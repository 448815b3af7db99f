//! Walks that never recurse: depth checks, drops, deep and truncated copies, host sizes.

use serde_json::{Number, Value};

/// Drops a value of any depth on any stack: ordinary values as usual, deep ones iteratively.
pub(crate) fn free(value: Value) {
    if deeper_than(&value, SHALLOW) {
        drop_deep(value);
    }
}

/// Whether `value` nests more than `limit` levels (a walk that recurses at most `limit` deep).
pub(crate) fn deeper_than(value: &Value, limit: u32) -> bool {
    match value {
        Value::Array(items) => limit == 0 || items.iter().any(|v| deeper_than(v, limit - 1)),
        Value::Object(map) => limit == 0 || map.values().any(|v| deeper_than(v, limit - 1)),
        _ => false,
    }
}

/// What one value takes on the host besides its strings: its slot.
pub(crate) const VALUE_HOST_BYTES: usize = std::mem::size_of::<Value>();
/// What one object member takes besides its key's bytes and its value: the key's `String`,
/// and the ordered map's hash and index.
pub(crate) const ENTRY_HOST_BYTES: usize = std::mem::size_of::<String>() + 16;

/// About how many bytes `value` takes on the host: each node's slot, each string's and key's
/// bytes, and a map entry's overhead. An estimate for budgets (it ignores allocator rounding and
/// spare capacity), walked without recursion.
pub(crate) fn host_bytes(value: &Value) -> usize {
    const NODE: usize = VALUE_HOST_BYTES;
    const ENTRY: usize = ENTRY_HOST_BYTES;
    // The common shallow value, recursively (bounded here): no stack to allocate.
    fn shallow(v: &Value) -> usize {
        NODE.saturating_add(match v {
            Value::String(s) => s.len(),
            Value::Array(items) => items.iter().map(shallow).fold(0, usize::saturating_add),
            Value::Object(map) => map
                .iter()
                .map(|(key, item)| (ENTRY + key.len()).saturating_add(shallow(item)))
                .fold(0, usize::saturating_add),
            _ => 0,
        })
    }
    if !deeper_than(value, SHALLOW) {
        return shallow(value);
    }
    let mut total = 0usize;
    let mut stack = vec![value];
    while let Some(v) = stack.pop() {
        total = total.saturating_add(NODE);
        match v {
            Value::String(s) => total = total.saturating_add(s.len()),
            Value::Array(items) => stack.extend(items),
            Value::Object(map) => {
                for (key, item) in map {
                    total = total.saturating_add(ENTRY + key.len());
                    stack.push(item);
                }
            }
            _ => {}
        }
    }
    total
}

/// Drops a value without recursion, however deeply it is nested.
///
/// `serde_json::Value`'s own `Drop` recurses once per nesting level, so freeing a value nested
/// tens of thousands deep overflows a small stack. Use this for values of untrusted depth.
pub fn drop_deep(value: Value) {
    let mut stack = vec![value];
    while let Some(v) = stack.pop() {
        match v {
            Value::Array(items) => stack.extend(items),
            Value::Object(map) => stack.extend(map.into_iter().map(|(_, v)| v)),
            _ => {}
        }
    }
}

/// A deep copy of `value`, without recursion (`Value::clone` recurses once per level).
pub fn clone_deep(value: &Value) -> Value {
    // The common shallow value: `Value::clone`, whose recursion is bounded here, with no work
    // stacks to allocate.
    if !deeper_than(value, SHALLOW) {
        return value.clone();
    }
    rebuild(value, Number::clone, usize::MAX)
}

/// The depth up to which the walks here recurse (as `free` does) instead of allocating stacks.
const SHALLOW: u32 = 64;

/// A copy of `value` in which every array or object nested deeper than `max_depth` levels is
/// replaced by the string `"…"`. Iterative; the copy's own depth is at most `max_depth + 1`, so
/// it can be cloned, dropped and serialized by recursive code (serde, a UI) on any stack.
///
/// ```
/// use serde_json::json;
///
/// let v = json!({"a": [[1, [2]]]});
/// assert_eq!(dsh_tools::json::clone_truncated(&v, 2), json!({"a": ["…"]}));
/// assert_eq!(dsh_tools::json::clone_truncated(&v, 10), v);
/// ```
pub fn clone_truncated(value: &Value, max_depth: usize) -> Value {
    rebuild(value, Number::clone, max_depth)
}

/// Copies `value` bottom-up with `number` applied to every number, and every array or object
/// at depth `max_depth` replaced by `"…"`. Iterative: `Enter` pushes a node's children, `Leave`
/// assembles the node from what its children built.
pub(super) fn rebuild(
    value: &Value,
    number: impl Fn(&Number) -> Number,
    max_depth: usize,
) -> Value {
    enum Step<'a> {
        Enter(&'a Value, usize),
        Leave(&'a Value),
    }
    let mut steps = vec![Step::Enter(value, 0)];
    let mut built: Vec<Value> = Vec::new();
    while let Some(step) = steps.pop() {
        match step {
            Step::Enter(Value::Array(_) | Value::Object(_), depth) if depth >= max_depth => {
                built.push(Value::String("…".to_owned()));
            }
            Step::Enter(v @ (Value::Array(_) | Value::Object(_)), depth) => {
                steps.push(Step::Leave(v));
                let child = |c| Step::Enter(c, depth + 1);
                match v {
                    Value::Array(items) => steps.extend(items.iter().rev().map(child)),
                    Value::Object(map) => steps.extend(map.values().rev().map(child)),
                    _ => {}
                }
            }
            Step::Enter(Value::Number(n), _) => built.push(Value::Number(number(n))),
            Step::Enter(leaf, _) => built.push(leaf.clone()),
            Step::Leave(Value::Array(items)) => {
                let children = built.split_off(built.len() - items.len());
                built.push(Value::Array(children));
            }
            Step::Leave(Value::Object(map)) => {
                let children = built.split_off(built.len() - map.len());
                built.push(Value::Object(map.keys().cloned().zip(children).collect()));
            }
            Step::Leave(_) => {}
        }
    }
    built.pop().unwrap_or(Value::Null)
}

//! Values across the engine boundary, without recursion (Code Mode spec §3.8.4): a tape the
//! bootstrap's walk writes (for what the host's own walk, `walk.rs`, leaves to it: a Proxy, a
//! value over its budget or its cap of values) read into a `serde_json::Value`, and engine
//! values built from JSON with an explicit stack.

use rquickjs::{Array, Ctx, Object};
use serde_json::{Map, Number, Value};

const NULL: i32 = 0;
const FALSE: i32 = 1;
const TRUE: i32 = 2;
const NUMBER: i32 = 3;
const STRING: i32 = 4;
const ARRAY: i32 = 5;
const OBJECT: i32 = 6;

/// 2^53: integers below it are exact in a double.
const EXACT: f64 = 9_007_199_254_740_992.0;

/// A number as lossless JSON: integral values in the exact range as integers (both walks).
pub(super) fn number(x: f64) -> Option<Value> {
    if x.fract() == 0.0 && x.abs() < EXACT {
        return Some(Value::from(x as i64));
    }
    Number::from_f64(x).map(Value::Number)
}

enum Frame {
    Array(Vec<Value>, usize),
    Object(Vec<String>, Map<String, Value>),
}

/// The containers being read, freed without recursion when a read stops early (a finished
/// member may be deep, and a value's own drop recurses).
struct Frames(Vec<Frame>);

impl Drop for Frames {
    fn drop(&mut self) {
        for frame in self.0.drain(..) {
            crate::json::free(match frame {
                Frame::Array(items, _) => Value::Array(items),
                Frame::Object(_, map) => Value::Object(map),
            });
        }
    }
}

/// Why a tape was not read.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum TapeError {
    /// Not what the bootstrap writes (a program cannot cause it), or a string no Rust string
    /// holds.
    Malformed,
    /// The value would take more than the budget on the host: one engine string referenced many
    /// times becomes as many host strings.
    TooLarge,
}

/// Host bytes counted per value besides its strings (its slot, as `json::host_bytes` counts).
const NODE_BYTES: usize = crate::json::VALUE_HOST_BYTES;
/// Host bytes counted per object member besides its key's bytes.
const ENTRY_BYTES: usize = crate::json::ENTRY_HOST_BYTES;

/// Reads a tape written by the bootstrap's `toTape`, within `budget` host bytes.
pub(super) fn from_tape(tape: &Array<'_>, budget: usize) -> Result<Value, TapeError> {
    let mut spent = 0usize;
    let mut charge = |bytes: usize| {
        spent = spent.saturating_add(bytes);
        if spent > budget {
            Err(TapeError::TooLarge)
        } else {
            Ok(())
        }
    };
    read(tape, &mut charge).ok_or(TapeError::Malformed)?
}

fn read(
    tape: &Array<'_>,
    charge: &mut dyn FnMut(usize) -> Result<(), TapeError>,
) -> Option<Result<Value, TapeError>> {
    let mut at = 0usize;
    let mut next = || {
        let v: rquickjs::Value<'_> = tape.get(at).ok()?;
        at += 1;
        Some(v)
    };
    let mut frames = Frames(Vec::new());
    let stack = &mut frames.0;
    loop {
        let tag = next()?.as_int()?;
        if let Err(e) = charge(NODE_BYTES) {
            return Some(Err(e));
        }
        let mut node = match tag {
            NULL => Value::Null,
            FALSE => Value::Bool(false),
            TRUE => Value::Bool(true),
            NUMBER => number(next()?.as_number()?)?,
            STRING => {
                let text = next()?.as_string()?.to_string().ok()?;
                if let Err(e) = charge(text.len()) {
                    return Some(Err(e));
                }
                Value::String(text)
            }
            ARRAY => {
                let len = next()?.as_number()? as usize;
                if len > 0 {
                    stack.push(Frame::Array(Vec::with_capacity(len.min(1 << 16)), len));
                    continue;
                }
                Value::Array(Vec::new())
            }
            OBJECT => {
                let count = next()?.as_number()? as usize;
                if count > 0 {
                    let mut keys = Vec::with_capacity(count.min(1 << 16));
                    for _ in 0..count {
                        let key = next()?.as_string()?.to_string().ok()?;
                        if let Err(e) = charge(key.len().saturating_add(ENTRY_BYTES)) {
                            return Some(Err(e));
                        }
                        keys.push(key);
                    }
                    stack.push(Frame::Object(keys, Map::new()));
                    continue;
                }
                Value::Object(Map::new())
            }
            _ => return None,
        };
        // Attach the node to its parent, closing every container it completes.
        loop {
            match stack.last_mut() {
                None => return Some(Ok(node)),
                Some(Frame::Array(items, len)) => {
                    items.push(node);
                    if items.len() < *len {
                        break;
                    }
                }
                Some(Frame::Object(keys, map)) => {
                    let key = keys.get(map.len())?.clone();
                    map.insert(key, node);
                    if map.len() < keys.len() {
                        break;
                    }
                }
            }
            node = match stack.pop()? {
                Frame::Array(items, _) => Value::Array(items),
                Frame::Object(_, map) => Value::Object(map),
            };
        }
    }
}

fn scalar<'js>(ctx: &Ctx<'js>, value: &Value) -> rquickjs::Result<rquickjs::Value<'js>> {
    Ok(match value {
        Value::Null => rquickjs::Value::new_null(ctx.clone()),
        Value::Bool(b) => rquickjs::Value::new_bool(ctx.clone(), *b),
        Value::Number(n) => match n.as_i64() {
            Some(i) if i32::try_from(i).is_ok() => rquickjs::Value::new_int(ctx.clone(), i as i32),
            _ => rquickjs::Value::new_float(ctx.clone(), n.as_f64().unwrap_or(f64::NAN)),
        },
        Value::String(s) => rquickjs::String::from_str(ctx.clone(), s)?.into_value(),
        Value::Array(_) => Array::new(ctx.clone())?.into_value(),
        Value::Object(_) => Object::new(ctx.clone())?.into_value(),
    })
}

/// Defines `key` as an own, writable, enumerable, configurable data property: never a setter on a
/// prototype the program may have rewritten, and `__proto__` is an ordinary key.
fn define<'js, K: rquickjs::IntoAtom<'js>>(
    object: &Object<'js>,
    key: K,
    value: rquickjs::Value<'js>,
) -> rquickjs::Result<()> {
    object.prop(
        key,
        rquickjs::object::Property::from(value)
            .writable()
            .enumerable()
            .configurable(),
    )
}

/// A JSON value as a fresh engine value (plain objects and arrays), built with an explicit stack.
pub(super) fn to_js<'js>(ctx: &Ctx<'js>, value: &Value) -> rquickjs::Result<rquickjs::Value<'js>> {
    enum Todo<'a, 'js> {
        Array(std::slice::Iter<'a, Value>, Object<'js>, u32),
        Object(serde_json::map::Iter<'a>, Object<'js>),
    }
    fn open<'a, 'js>(stack: &mut Vec<Todo<'a, 'js>>, value: &'a Value, js: &rquickjs::Value<'js>) {
        let Some(object) = js.as_object() else { return };
        match value {
            Value::Array(items) => stack.push(Todo::Array(items.iter(), object.clone(), 0)),
            Value::Object(map) => stack.push(Todo::Object(map.iter(), object.clone())),
            _ => {}
        }
    }
    let root = scalar(ctx, value)?;
    let mut stack: Vec<Todo<'_, 'js>> = Vec::new();
    open(&mut stack, value, &root);
    while let Some(top) = stack.last_mut() {
        let (child, js) = match top {
            Todo::Array(items, array, index) => match items.next() {
                Some(item) => {
                    let js = scalar(ctx, item)?;
                    define(array, *index, js.clone())?;
                    *index += 1;
                    (item, js)
                }
                None => {
                    stack.pop();
                    continue;
                }
            },
            Todo::Object(members, object) => match members.next() {
                Some((key, item)) => {
                    let js = scalar(ctx, item)?;
                    define(object, key.as_str(), js.clone())?;
                    (item, js)
                }
                None => {
                    stack.pop();
                    continue;
                }
            },
        };
        open(&mut stack, child, &js);
    }
    Ok(root)
}

//! The lossless check (Code Mode spec §3.8) done on the host: an engine value read straight into a
//! `serde_json::Value` with rquickjs calls, without recursion (§3.8.4) and without running a line
//! of the program's code (no getter, no trap). What it cannot decide that way, a Proxy, goes to
//! the bootstrap's own walk (`toTape`, in `rare.js`), which runs the traps as the language does;
//! so does a value over the host's budget or larger than it reads between the engine's interrupt
//! checks. Nothing the host walk did before that is observable, so the answer is the one the
//! bootstrap alone gives.
//!
//! It accepts exactly what `toTape` accepts: `null`, booleans, strings a Rust string holds,
//! finite numbers other than `-0`, arrays whose prototype is `Array.prototype` with an own,
//! enumerable data property at every index and no other own property than `length`, and objects
//! whose prototype is `Object.prototype` or `null` with only string keys, every one an own,
//! enumerable data property; no object twice on one path (a cycle). What the program may have
//! rewritten since (`Object.prototype.__lookupGetter__`, the prototypes) was captured by the
//! bootstrap before the program ran.

use super::convert::{TapeError, number};
use rquickjs::atom::PredefinedAtom;
use rquickjs::function::This;
use rquickjs::object::Filter;
use rquickjs::{Atom, Ctx, Function, Object, Persistent, Value};
use serde_json::Map;
use std::collections::HashSet;

/// Host bytes counted per value besides its strings (its slot, as `json::host_bytes` counts).
const NODE_BYTES: usize = crate::json::VALUE_HOST_BYTES;
/// Host bytes counted per object member besides its key's bytes.
const ENTRY_BYTES: usize = crate::json::ENTRY_HOST_BYTES;
/// Objects on the path deeper than this are also kept in a set (a scan of the path below it).
const SCAN_DEPTH: usize = 32;
/// The most values the host walk reads before it leaves the rest to the bootstrap's walk. The
/// engine checks its interrupts (the compute budget, the wall clock, cancellation) only while it
/// runs bytecode, never inside a host function: this bounds how long a binding call keeps them
/// waiting (a few milliseconds), and a larger value is read where they are checked.
const HOST_NODES: usize = 16_384;

/// What the walk reads from the engine as the bootstrap captured it, before the program ran.
pub(super) struct Intrinsics {
    object_proto: Persistent<Object<'static>>,
    array_proto: Persistent<Object<'static>>,
    /// `Object.prototype.__lookupGetter__`: an own property's getter, `undefined` for a data
    /// property; never runs the program's code on an ordinary object.
    lookup_getter: Persistent<Function<'static>>,
    /// The bootstrap's `toTape`, for what the host walk leaves to it.
    to_tape: Persistent<Function<'static>>,
}

impl Intrinsics {
    /// Reads the intrinsics from the list the bootstrap's setup returned: `[start, toTape,
    /// failFor, lookupGetter, Object.prototype, Array.prototype]`.
    pub(super) fn from_setup<'js>(
        ctx: &Ctx<'js>,
        setup: &rquickjs::Array<'js>,
    ) -> rquickjs::Result<Self> {
        Ok(Self {
            to_tape: Persistent::save(ctx, setup.get::<Function>(1)?),
            lookup_getter: Persistent::save(ctx, setup.get::<Function>(3)?),
            object_proto: Persistent::save(ctx, setup.get::<Object>(4)?),
            array_proto: Persistent::save(ctx, setup.get::<Object>(5)?),
        })
    }

    /// The intrinsics as values of `ctx`.
    pub(super) fn restore<'js>(&self, ctx: &Ctx<'js>) -> rquickjs::Result<Restored<'js>> {
        Ok(Restored {
            object_proto: self.object_proto.clone().restore(ctx)?,
            array_proto: self.array_proto.clone().restore(ctx)?,
            lookup_getter: self.lookup_getter.clone().restore(ctx)?,
            to_tape: self.to_tape.clone().restore(ctx)?,
        })
    }
}

/// [`Intrinsics`] in one context.
pub(super) struct Restored<'js> {
    object_proto: Object<'js>,
    array_proto: Object<'js>,
    lookup_getter: Function<'js>,
    to_tape: Function<'js>,
}

/// Why the host walk gave no value.
enum Refused {
    NotLossless,
    TooLarge,
    /// A Proxy (only the bootstrap's walk, which runs its traps, can say), or more than the
    /// host reads between interrupt checks.
    Elsewhere,
}

/// A container being read: the object, what is read of it so far.
enum Frame<'js> {
    Array {
        object: Object<'js>,
        len: u32,
        items: Vec<serde_json::Value>,
    },
    Object {
        object: Object<'js>,
        /// Every key (as an atom, as a value) with its text, in the engine's order; `map` has
        /// the first `map.len()`.
        keys: Vec<(Atom<'js>, Value<'js>, String)>,
        map: Map<String, serde_json::Value>,
    },
}

impl<'js> Frame<'js> {
    fn object(&self) -> &Object<'js> {
        match self {
            Frame::Array { object, .. } | Frame::Object { object, .. } => object,
        }
    }
}

/// The containers being read. What they hold is freed without recursion when the walk stops
/// early: a finished member may be 100,000 levels deep, and a value's own drop recurses.
struct Frames<'js>(Vec<Frame<'js>>);

impl Drop for Frames<'_> {
    fn drop(&mut self) {
        for frame in self.0.drain(..) {
            crate::json::free(match frame {
                Frame::Array { items, .. } => serde_json::Value::Array(items),
                Frame::Object { map, .. } => serde_json::Value::Object(map),
            });
        }
    }
}

/// `root` as lossless JSON within `budget` host bytes: the host walk, or the bootstrap's where
/// the host walk cannot decide (a Proxy; a value over the budget, which is refused as too large
/// only if it is lossless). An `Err` is an engine error to rethrow (an interrupt).
pub(super) fn lossless<'js>(
    ctx: &Ctx<'js>,
    root: Value<'js>,
    budget: usize,
    with: &Restored<'js>,
) -> rquickjs::Result<Result<serde_json::Value, TapeError>> {
    match walk(ctx, root.clone(), budget, HOST_NODES, with)? {
        Ok(value) => Ok(Ok(value)),
        Err(Refused::NotLossless) => Ok(Err(TapeError::Malformed)),
        // Over the budget before the whole value was seen: whether it is lossless at all
        // decides the answer, as in the bootstrap's walk, which checks everything first.
        Err(Refused::TooLarge | Refused::Elsewhere) => {
            // Compiled on first use: a full heap fails it, and that refuses the value.
            let tape: Value = match caught(ctx, with.to_tape.call((root,)))? {
                Ok(tape) => tape,
                Err(_) => return Ok(Err(TapeError::Malformed)),
            };
            Ok(match tape.as_array() {
                Some(tape) => super::convert::from_tape(tape, budget),
                None => Err(TapeError::Malformed),
            })
        }
    }
}

/// An engine error as the walk treats it: an uncatchable one (an interrupt) goes on up; any other
/// (the heap is full) means the value is not read, as a `catch` in the bootstrap's walk does.
fn caught<T>(ctx: &Ctx<'_>, result: rquickjs::Result<T>) -> rquickjs::Result<Result<T, Refused>> {
    match result {
        Ok(value) => Ok(Ok(value)),
        Err(rquickjs::Error::Exception) => {
            let thrown = ctx.catch();
            if thrown.is_uncatchable_error() {
                return Err(ctx.throw(thrown));
            }
            Ok(Err(Refused::NotLossless))
        }
        Err(_) => Ok(Err(Refused::NotLossless)),
    }
}

macro_rules! attempt {
    ($ctx:expr, $result:expr) => {
        match caught($ctx, $result)? {
            Ok(value) => value,
            Err(refused) => return Ok(Err(refused)),
        }
    };
}

/// The host walk: `root` within `budget` host bytes and `max_nodes` values.
fn walk<'js>(
    ctx: &Ctx<'js>,
    root: Value<'js>,
    budget: usize,
    max_nodes: usize,
    with: &Restored<'js>,
) -> rquickjs::Result<Result<serde_json::Value, Refused>> {
    let mut nodes = 0usize;
    let mut spent = 0usize;
    let mut charge = |bytes: usize| {
        spent = spent.saturating_add(bytes);
        spent <= budget
    };
    let mut frames = Frames(Vec::new());
    let stack = &mut frames.0;
    // Past SCAN_DEPTH, the objects on the path (a scan of `stack` below it).
    let mut deep: Option<HashSet<Value<'js>>> = None;
    let mut next = root;
    loop {
        nodes += 1;
        if nodes > max_nodes {
            return Ok(Err(Refused::Elsewhere));
        }
        if !charge(NODE_BYTES) {
            return Ok(Err(Refused::TooLarge));
        }
        let mut done = match scalar(&next) {
            Some(Ok(value)) => {
                if let serde_json::Value::String(text) = &value
                    && !charge(text.len())
                {
                    return Ok(Err(Refused::TooLarge));
                }
                Some(value)
            }
            Some(Err(refused)) => return Ok(Err(refused)),
            None => {
                let Some(object) = next.as_object() else {
                    return Ok(Err(Refused::NotLossless));
                };
                if next.is_proxy() {
                    return Ok(Err(Refused::Elsewhere));
                }
                if next.is_function() {
                    return Ok(Err(Refused::NotLossless));
                }
                let on_path = match &deep {
                    Some(set) => set.contains(&next),
                    None => stack.iter().any(|f| f.object().as_value() == &next),
                };
                if on_path {
                    return Ok(Err(Refused::NotLossless));
                }
                // What the cap leaves: a container with more members goes elsewhere before its
                // keys are listed.
                let room = max_nodes.saturating_sub(nodes);
                let frame = if next.is_array() {
                    attempt!(ctx, open_array(ctx, object, room, with))
                } else {
                    attempt!(ctx, open_object(object, room, with))
                };
                let frame = match frame {
                    Ok(frame) => frame,
                    Err(refused) => return Ok(Err(refused)),
                };
                if let Frame::Object { keys, .. } = &frame {
                    let bytes = keys.iter().fold(0usize, |sum, (_, _, key)| {
                        sum.saturating_add(key.len()).saturating_add(ENTRY_BYTES)
                    });
                    if !charge(bytes) {
                        return Ok(Err(Refused::TooLarge));
                    }
                }
                stack.push(frame);
                if let Some(set) = deep.as_mut() {
                    set.insert(next.clone());
                } else if stack.len() > SCAN_DEPTH {
                    deep = Some(
                        stack
                            .iter()
                            .map(|f| f.object().as_value().clone())
                            .collect(),
                    );
                }
                None
            }
        };
        // Attach what is done to its parent, closing every container it completes, until one
        // has a member left to read.
        loop {
            let Some(top) = stack.last_mut() else {
                return Ok(done.ok_or(Refused::NotLossless));
            };
            if let Some(value) = done.take() {
                match top {
                    Frame::Array { items, .. } => items.push(value),
                    Frame::Object { keys, map, .. } => {
                        let Some((_, _, key)) = keys.get(map.len()) else {
                            crate::json::free(value);
                            return Ok(Err(Refused::NotLossless));
                        };
                        map.insert(key.clone(), value);
                    }
                }
            }
            let member = match top {
                Frame::Array { object, len, items } if (items.len() as u32) < *len => {
                    let index = items.len() as u32;
                    Some(attempt!(ctx, member(object, index, index, with)))
                }
                Frame::Object { object, keys, map } if map.len() < keys.len() => {
                    let (atom, key, _) = &keys[map.len()];
                    Some(attempt!(
                        ctx,
                        member(object, atom.clone(), key.clone(), with)
                    ))
                }
                _ => None,
            };
            match member {
                Some(Some(value)) => {
                    next = value;
                    break;
                }
                Some(None) => return Ok(Err(Refused::NotLossless)),
                None => {
                    let Some(frame) = stack.pop() else {
                        return Ok(Err(Refused::NotLossless));
                    };
                    if let Some(set) = deep.as_mut() {
                        set.remove(frame.object().as_value());
                    }
                    done = Some(match frame {
                        Frame::Array { items, .. } => serde_json::Value::Array(items),
                        Frame::Object { map, .. } => serde_json::Value::Object(map),
                    });
                }
            }
        }
    }
}

/// A primitive as lossless JSON (`Some(Err)` when it is not), or `None` for an object.
fn scalar(value: &Value<'_>) -> Option<Result<serde_json::Value, Refused>> {
    use rquickjs::Type;
    Some(match value.type_of() {
        Type::Null => Ok(serde_json::Value::Null),
        Type::Bool => Ok(serde_json::Value::Bool(value.as_bool() == Some(true))),
        Type::Int => Ok(serde_json::Value::from(value.as_int().unwrap_or_default())),
        Type::Float => match value.as_float() {
            Some(x) if x.is_finite() && !(x == 0.0 && x.is_sign_negative()) => {
                number(x).ok_or(Refused::NotLossless)
            }
            _ => Err(Refused::NotLossless),
        },
        Type::String => match value.as_string().map(|s| s.to_string()) {
            Some(Ok(text)) => Ok(serde_json::Value::String(text)),
            _ => Err(Refused::NotLossless),
        },
        Type::Array
        | Type::Object
        | Type::Exception
        | Type::Promise
        | Type::Proxy
        | Type::Function
        | Type::Constructor => return None,
        _ => Err(Refused::NotLossless),
    })
}

/// An array's frame: its prototype `Array.prototype`, its own keys exactly its indices in order
/// and `length`, every index enumerable; `Elsewhere` past `room` items.
fn open_array<'js>(
    ctx: &Ctx<'js>,
    object: &Object<'js>,
    room: usize,
    with: &Restored<'js>,
) -> rquickjs::Result<Result<Frame<'js>, Refused>> {
    if object.get_prototype().as_ref() != Some(&with.array_proto) {
        return Ok(Err(Refused::NotLossless));
    }
    let len = match object.get::<_, Value>(PredefinedAtom::Length)?.as_number() {
        Some(len) if len >= 0.0 && len < f64::from(u32::MAX) && len.fract() == 0.0 => len as u32,
        _ => return Ok(Err(Refused::NotLossless)),
    };
    if len as usize > room {
        return Ok(Err(Refused::Elsewhere));
    }
    let mut index = 0u32;
    let length = Atom::from_predefined(ctx.clone(), PredefinedAtom::Length);
    let mut saw_length = false;
    for key in object.own_keys::<Atom>(Filter::new().string().symbol()) {
        let key = key?;
        if index < len {
            if key != Atom::from_u32(ctx.clone(), index)? {
                return Ok(Err(Refused::NotLossless));
            }
            index += 1;
        } else if !saw_length && key == length {
            saw_length = true;
        } else {
            return Ok(Err(Refused::NotLossless));
        }
    }
    let enumerable = object
        .own_keys::<Atom>(Filter::new().string().symbol().enum_only())
        .count();
    if index != len || !saw_length || enumerable != len as usize {
        return Ok(Err(Refused::NotLossless));
    }
    Ok(Ok(Frame::Array {
        object: object.clone(),
        len,
        items: Vec::with_capacity((len as usize).min(1 << 16)),
    }))
}

/// An object's frame: its prototype `Object.prototype` or `null`, every own key a string a Rust
/// string holds and enumerable. (A symbol key reads as its description once made an atom's
/// string: symbols are told by the count of string keys.) `Elsewhere` past `room` members.
fn open_object<'js>(
    object: &Object<'js>,
    room: usize,
    with: &Restored<'js>,
) -> rquickjs::Result<Result<Frame<'js>, Refused>> {
    match object.get_prototype() {
        None => {}
        Some(proto) if proto == with.object_proto => {}
        Some(_) => return Ok(Err(Refused::NotLossless)),
    }
    let atoms = object
        .own_keys::<Atom>(Filter::new().string().symbol())
        .collect::<rquickjs::Result<Vec<_>>>()?;
    if atoms.len() > room {
        return Ok(Err(Refused::Elsewhere));
    }
    // The enumerable string keys are all of them: no symbol, nothing hidden.
    let enumerable = object
        .own_keys::<Atom>(Filter::new().string().enum_only())
        .count();
    if enumerable != atoms.len() {
        return Ok(Err(Refused::NotLossless));
    }
    let mut keys = Vec::with_capacity(atoms.len());
    for atom in atoms {
        let key = atom.to_value()?;
        let text = match key.as_string().map(|s| s.to_string()) {
            Some(Ok(text)) => text,
            _ => return Ok(Err(Refused::NotLossless)),
        };
        keys.push((atom, key, text));
    }
    Ok(Ok(Frame::Object {
        object: object.clone(),
        keys,
        map: Map::new(),
    }))
}

/// An own data property's value, `None` for an accessor: `atom` and `key` name it.
fn member<'js>(
    object: &Object<'js>,
    atom: impl rquickjs::IntoAtom<'js>,
    key: impl rquickjs::IntoJs<'js>,
    with: &Restored<'js>,
) -> rquickjs::Result<Option<Value<'js>>> {
    let getter: Value = with.lookup_getter.call((This(object.clone()), key))?;
    if !getter.is_undefined() {
        return Ok(None);
    }
    object.get(atom).map(Some)
}

#[cfg(test)]
mod tests {
    //! The host walk against the bootstrap's `toTape` on the same engine values: the same value,
    //! or the same refusal, for everything but a Proxy (which the host leaves to `toTape`).

    use super::super::convert::{TapeError, from_tape};
    use super::super::host::install;
    use super::super::state::State;
    use super::{Refused, lossless, walk};
    use rquickjs::{Context, Ctx, Runtime, Value};
    use serde_json::json;
    use std::rc::Rc;

    /// What the bootstrap's walk reads from `value` within `budget`.
    fn by_tape<'js>(
        with: &super::Restored<'js>,
        value: Value<'js>,
        budget: usize,
    ) -> Result<serde_json::Value, TapeError> {
        let tape: Value = with.to_tape.call((value,)).unwrap();
        match tape.as_array() {
            Some(tape) => from_tape(tape, budget),
            None => Err(TapeError::Malformed),
        }
    }

    /// What the host walk reads, `None` when it leaves the value to `toTape`.
    fn by_host<'js>(
        ctx: &Ctx<'js>,
        with: &super::Restored<'js>,
        value: Value<'js>,
        budget: usize,
    ) -> Option<Result<serde_json::Value, TapeError>> {
        match walk(ctx, value, budget, usize::MAX, with).unwrap() {
            Ok(v) => Some(Ok(v)),
            Err(Refused::NotLossless) => Some(Err(TapeError::Malformed)),
            Err(Refused::TooLarge) => Some(Err(TapeError::TooLarge)),
            Err(Refused::Elsewhere) => None,
        }
    }

    fn free(result: Result<serde_json::Value, TapeError>) {
        if let Ok(value) = result {
            crate::json::free(value);
        }
    }

    /// Runs `check` in a fresh engine with the bootstrap installed and the program's usual
    /// vandalism done first: every intrinsic either walk could read, replaced.
    fn engine(check: impl for<'js> FnOnce(&Ctx<'js>, &super::Restored<'js>)) {
        let runtime = Runtime::new().unwrap();
        let context = Context::full(&runtime).unwrap();
        let state = Rc::new(State::new(1 << 20));
        context.with(|ctx| {
            let (start, bridge) = install(&ctx, 1 << 20, &state).unwrap();
            drop(start);
            ctx.eval::<(), _>(
                "Object.prototype.__lookupGetter__ = function () { return undefined };\n\
                 Object.getPrototypeOf = () => Object.prototype;\n\
                 Object.getOwnPropertyDescriptor = () => ({value: 'forged', enumerable: true});\n\
                 Reflect.ownKeys = () => [];\n\
                 Array.isArray = () => true;\n\
                 Object.defineProperty(Object.prototype, 'injected', {get() { return 'forged' }, enumerable: true});\n\
                 Object.defineProperty(Array.prototype, '7', {get() { return 'forged' }, set(v) {}});",
            )
            .unwrap();
            let with = bridge.walk.restore(&ctx).unwrap();
            check(&ctx, &with);
            drop(with);
            drop(bridge);
        });
    }

    const LOSSLESS: &[&str] = &[
        "null",
        "true",
        "false",
        "0",
        "-1",
        "1.5",
        "0.1",
        "2 ** 53",
        "2 ** 53 + 2",
        "1e300",
        "-1e-300",
        "'x'",
        "''",
        "'\\u00e9\\ud83d\\ude00'",
        "'a'.repeat(1000) + 'b'.repeat(1000)",
        "({})",
        "[]",
        "[[[]]]",
        "({a: 1, b: [1, 2, {c: null}], d: 'x', e: [true, false]})",
        "Object.create(null)",
        "(() => { const o = Object.create(null); o.k = [1]; return o })()",
        "JSON.parse('{\"__proto__\": 5}')",
        "(() => { const s = [1]; return {x: s, y: s} })()",
        "({1: 'a', 0: 'b', x: 1, '-1': 2, '01': 3})",
        "Object.freeze({a: Object.freeze([1, 2])})",
        "new Array(3).fill(0)",
        "(() => { const a = [1, 2, 3]; a.length = 2; return a })()",
        "(() => { const a = []; a[2] = 1; a[0] = 0; a[1] = 5; return a })()",
        "(() => { const o = {b: 1, a: 2}; delete o.b; o.b = 3; return o })()",
        "Array.from({length: 1000}, (_, i) => i % 3 ? i : {i})",
        "(() => { let v = 1; for (let i = 0; i < 100; i++) v = [v, {i}]; return v })()",
        "(() => { let v = null; for (let i = 0; i < 1000; i++) v = {a: v, b: 'x'}; return v })()",
        "Object.setPrototypeOf(new Uint8Array(2), Object.prototype)",
        "Object.setPrototypeOf(new Date(0), null)",
    ];

    const REFUSED: &[&str] = &[
        "undefined",
        "NaN",
        "-0",
        "Infinity",
        "-Infinity",
        "1n",
        "Symbol()",
        "() => 1",
        "(class {})",
        "new Date(0)",
        "new Map()",
        "/x/",
        "new Error('x')",
        "Promise.resolve(1)",
        "'\\ud800'",
        "'a\\udc00b'",
        "({'\\ud800': 1})",
        "[-0]",
        "({a: NaN})",
        "({a: undefined})",
        "(() => { const a = {}; a.self = a; return a })()",
        "(() => { const a = [1]; a.push([2, a]); return a })()",
        "(() => { const root = {}; let v = root; for (let i = 0; i < 50; i++) { const n = {}; v.n = n; v = n } v.back = root; return root })()",
        "(() => { const root = []; let v = root; for (let i = 0; i < 50; i++) { const n = [{}]; v.push(n); v = n } v.push(root); return root })()",
        "Array(2)",
        "[1, , 3]",
        "[0, , 2]",
        "[1, undefined]",
        "(() => { const a = new Array(9).fill(0); delete a[7]; return a })()",
        "(() => { const a = [1]; a.extra = 2; return a })()",
        "(() => { const a = [1]; a[Symbol('s')] = 2; return a })()",
        "({get x() { return 1 }})",
        "({set x(v) {}})",
        "({get x() { throw new Error('no') }})",
        "Object.defineProperty({}, 'x', {value: 1, enumerable: false})",
        "Object.defineProperty([1], 0, {get() { return 1 }, enumerable: true, configurable: true})",
        "Object.defineProperty([1, 2], 0, {value: 1, enumerable: false})",
        "({[Symbol('s')]: 1})",
        "(() => { const o = {a: 1}; Object.defineProperty(o, Symbol('h'), {value: 1}); return o })()",
        "new (class C { constructor() { this.x = 1 } })()",
        "Object.setPrototypeOf({}, {})",
        "Object.setPrototypeOf({a: 1}, Array.prototype)",
        "Object.setPrototypeOf([], Object.prototype)",
        "Object.setPrototypeOf([1], null)",
        "Object.setPrototypeOf(new String('ab'), Object.prototype)",
        "Object.setPrototypeOf(new Error('x'), Object.prototype)",
        "(function () { return arguments })(1, 2)",
        "globalThis",
        "({a: {b: [1, 2, () => 3]}})",
        "({a: 1, b: 2n})",
    ];

    #[test]
    fn the_host_walk_reads_what_the_bootstrap_reads() {
        engine(|ctx, with| {
            for (expected_ok, cases) in [(true, LOSSLESS), (false, REFUSED)] {
                for source in cases {
                    let value: Value = ctx
                        .eval(*source)
                        .unwrap_or_else(|e| panic!("{source}: {e}"));
                    for budget in [usize::MAX, 1 << 20, 4096, 256, 64, 16, 0] {
                        let tape = by_tape(with, value.clone(), budget);
                        let read = lossless(ctx, value.clone(), budget, with).unwrap();
                        assert_eq!(read, tape, "{source} within {budget} bytes");
                        let host = by_host(ctx, with, value.clone(), budget)
                            .unwrap_or_else(|| panic!("{source}: no Proxy, the host decides"));
                        if expected_ok || budget == usize::MAX {
                            // A refused value over the budget may be found too large first.
                            assert_eq!(host, tape, "{source} on the host within {budget} bytes");
                        }
                        if budget == usize::MAX {
                            assert_eq!(host.is_ok(), expected_ok, "{source}: {host:?}");
                        }
                        free(host);
                        free(read);
                        free(tape);
                    }
                }
            }
        });
    }

    #[test]
    fn a_value_a_hundred_thousand_levels_deep_is_read_without_recursion() {
        engine(|ctx, with| {
            for (source, ok) in [
                (
                    "(() => { let v = null; for (let i = 0; i < 100000; i++) v = {a: v}; return v })()",
                    true,
                ),
                (
                    "(() => { let v = 1; for (let i = 0; i < 100000; i++) v = [v]; return v })()",
                    true,
                ),
                (
                    "(() => { const root = {}; let v = root; for (let i = 0; i < 100000; i++) { const n = {}; v.a = n; v = n } v.a = root; return root })()",
                    false,
                ),
                // Refused after a finished member 100,000 levels deep, which is freed too.
                (
                    "(() => { let v = 1; for (let i = 0; i < 100000; i++) v = [v]; return [v, undefined] })()",
                    false,
                ),
                (
                    "(() => { let v = 1; for (let i = 0; i < 100000; i++) v = {a: v}; return {v, f() {}} })()",
                    false,
                ),
            ] {
                let value: Value = ctx.eval(source).unwrap();
                let host = by_host(ctx, with, value.clone(), usize::MAX).unwrap();
                let tape = by_tape(with, value, usize::MAX);
                assert_eq!((host.is_ok(), tape.is_ok()), (ok, ok), "{source}");
                free(host);
                free(tape);
            }
        });
    }

    #[test]
    fn a_read_over_its_budget_after_a_deep_member_frees_it_without_recursion() {
        engine(|ctx, with| {
            let value: Value = ctx
                .eval("(() => { let v = 1; for (let i = 0; i < 100000; i++) v = [v]; return [v, 'x'.repeat(1000)] })()")
                .unwrap();
            // Room for every node and 10 bytes of the string: the deep member is finished when
            // the string is found too large.
            let budget = super::NODE_BYTES * 100_003 + 10;
            let host = by_host(ctx, with, value.clone(), budget).unwrap();
            assert_eq!(host, Err(TapeError::TooLarge));
            assert_eq!(
                by_tape(with, value.clone(), budget),
                Err(TapeError::TooLarge)
            );
            let read = lossless(ctx, value.clone(), budget, with).unwrap();
            assert_eq!(read, Err(TapeError::TooLarge));
            let fits = by_host(ctx, with, value, budget + 990).unwrap();
            assert!(fits.is_ok());
            free(fits);
        });
    }

    #[test]
    fn a_value_larger_than_the_host_reads_between_interrupt_checks_is_read_by_the_bootstrap() {
        engine(|ctx, with| {
            let value: Value = ctx
                .eval("Array.from({length: 20000}, (_, i) => ({i, s: 'x'}))")
                .unwrap();
            let capped = walk(ctx, value.clone(), usize::MAX, super::HOST_NODES, with).unwrap();
            assert!(
                matches!(capped, Err(Refused::Elsewhere)),
                "left to the bootstrap"
            );
            let read = lossless(ctx, value.clone(), usize::MAX, with).unwrap();
            let host = by_host(ctx, with, value.clone(), usize::MAX).unwrap();
            assert_eq!(read, host);
            assert_eq!(read, by_tape(with, value, usize::MAX));
            assert_eq!(
                read.as_ref().map(|v| v.as_array().map(Vec::len)),
                Ok(Some(20_000))
            );
            free(read);
            free(host);
            // An array longer than what the cap leaves is left before its keys are listed: a
            // sparse one would otherwise be refused here, on its keys. (An object is left
            // after its keys are listed, before its members are read: the same answer, which
            // bounds only the work.)
            let sparse: Value = ctx
                .eval("(() => { const a = [1]; a.length = 4294967294; return a })()")
                .unwrap();
            let capped = walk(ctx, sparse.clone(), usize::MAX, 100, with).unwrap();
            assert!(matches!(capped, Err(Refused::Elsewhere)));
            let uncapped = walk(ctx, sparse.clone(), usize::MAX, usize::MAX, with).unwrap();
            assert!(matches!(uncapped, Err(Refused::NotLossless)));
            assert_eq!(
                lossless(ctx, sparse, usize::MAX, with).unwrap(),
                Err(TapeError::Malformed)
            );
        });
    }

    #[test]
    fn a_proxy_is_left_to_the_bootstrap_which_runs_its_traps_once() {
        engine(|ctx, with| {
            let value: Value = ctx
                .eval(
                    "globalThis.traps = 0;\n\
                     ({first: {x: [1, 2]}, p: new Proxy({a: 1}, {ownKeys(t) { traps++; return ['a'] }}), last: 'z'})",
                )
                .unwrap();
            assert!(by_host(ctx, with, value.clone(), usize::MAX).is_none());
            assert_eq!(
                ctx.eval::<i32, _>("traps").unwrap(),
                0,
                "the host walk ran no trap"
            );
            let read = lossless(ctx, value, usize::MAX, with).unwrap();
            assert_eq!(
                read,
                Ok(json!({"first": {"x": [1, 2]}, "p": {"a": 1}, "last": "z"}))
            );
            assert_eq!(ctx.eval::<i32, _>("traps").unwrap(), 1);
            let refused: Value = ctx
                .eval("new Proxy({}, {getPrototypeOf() { return Array.prototype }})")
                .unwrap();
            assert_eq!(
                lossless(ctx, refused, usize::MAX, with).unwrap(),
                Err(TapeError::Malformed)
            );
        });
    }
}

//! The corpus: argument types covering serde's attributes, each with a strategy for its values.

use super::{Case, any_json, finite_f32, finite_f64, free_key, text};
use dsh_tools::FastCheck;
use proptest::collection::{btree_map, btree_set, hash_map, hash_set, vec};
use proptest::option::of;
use proptest::prelude::*;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::num::{NonZeroU8, NonZeroU64};
use std::path::PathBuf;

macro_rules! case {
    ($ty:ty => $strategy:expr) => {
        impl Case for $ty {
            fn strategy() -> BoxedStrategy<Self> {
                $strategy.boxed()
            }
        }
    };
}

fn key() -> impl Strategy<Value = String> {
    "[a-z]{0,3}"
}

// ---- scalars ----

#[derive(Serialize, Deserialize, JsonSchema, FastCheck, Debug, Clone, Default)]
pub(crate) struct Ints {
    a: u8,
    b: u16,
    c: u32,
    d: u64,
    e: i8,
    f: i16,
    g: i32,
    h: i64,
    i: usize,
    j: isize,
}
case!(Ints => (any::<u8>(), any::<u16>(), any::<u32>(), any::<u64>(), any::<i8>(), any::<i16>(), any::<i32>(), any::<i64>(), any::<usize>(), any::<isize>())
    .prop_map(|(a, b, c, d, e, f, g, h, i, j)| Ints { a, b, c, d, e, f, g, h, i, j }));

#[derive(Serialize, Deserialize, JsonSchema, FastCheck, Debug, Clone)]
pub(crate) struct Floats {
    pub(crate) a: f32,
    pub(crate) b: f64,
}
case!(Floats => (finite_f32(), finite_f64()).prop_map(|(a, b)| Floats { a, b }));

#[derive(Serialize, Deserialize, JsonSchema, FastCheck, Debug, Clone)]
pub(crate) struct Scalars {
    flag: bool,
    name: String,
    path: PathBuf,
}
case!(Scalars => (any::<bool>(), text(), text()).prop_map(|(flag, name, p)| Scalars { flag, name, path: p.into() }));

#[derive(Serialize, Deserialize, JsonSchema, FastCheck, Debug, Clone)]
pub(crate) struct Anything {
    value: Value,
    maybe: Option<Value>,
}
case!(Anything => (any_json(), of(any_json())).prop_map(|(value, maybe)| Anything { value, maybe }));

#[derive(Serialize, Deserialize, JsonSchema, FastCheck, Debug, Clone)]
pub(crate) struct CharsAndBoxes {
    c: char,
    boxed: Box<Inner>,
    maybe: Option<Box<u8>>,
}
case!(CharsAndBoxes => (any::<char>(), Inner::strategy(), of(any::<u8>())).prop_map(|(c, i, m)| CharsAndBoxes { c, boxed: Box::new(i), maybe: m.map(Box::new) }));

#[derive(Serialize, Deserialize, JsonSchema, FastCheck, Debug, Clone)]
pub(crate) struct Positive {
    small: NonZeroU8,
    big: NonZeroU64,
}
case!(Positive => (1u8.., 1u64..).prop_map(|(s, b)| Positive {
    small: NonZeroU8::new(s).unwrap_or(NonZeroU8::MIN),
    big: NonZeroU64::new(b).unwrap_or(NonZeroU64::MIN),
}));

// ---- structs and collections ----

/// An item.
#[derive(Serialize, Deserialize, JsonSchema, FastCheck, Debug, Clone)]
pub(crate) struct Inner {
    /// Its id.
    id: u32,
    label: String,
}
case!(Inner => (any::<u32>(), text()).prop_map(|(id, label)| Inner { id, label }));

#[derive(Serialize, Deserialize, JsonSchema, FastCheck, Debug, Clone)]
pub(crate) struct Nested {
    inner: Inner,
    list: Vec<Inner>,
}
case!(Nested => (Inner::strategy(), vec(Inner::strategy(), 0..3)).prop_map(|(inner, list)| Nested { inner, list }));

#[derive(Serialize, Deserialize, JsonSchema, FastCheck, Debug, Clone)]
pub(crate) struct Lists {
    tags: Vec<String>,
    matrix: Vec<Vec<i16>>,
    set: HashSet<u8>,
}
case!(Lists => (vec(text(), 0..3), vec(vec(any::<i16>(), 0..3), 0..3), hash_set(any::<u8>(), 0..4))
    .prop_map(|(tags, matrix, set)| Lists { tags, matrix, set }));

#[derive(Serialize, Deserialize, JsonSchema, FastCheck, Debug, Clone)]
pub(crate) struct Fixed {
    rgb: [u8; 3],
}
case!(Fixed => any::<[u8; 3]>().prop_map(|rgb| Fixed { rgb }));

#[derive(Serialize, Deserialize, JsonSchema, FastCheck, Debug, Clone)]
pub(crate) struct Maps {
    counts: HashMap<String, u32>,
    nested: HashMap<String, Vec<bool>>,
}
case!(Maps => (hash_map(key(), any::<u32>(), 0..3), hash_map(key(), vec(any::<bool>(), 0..3), 0..3))
    .prop_map(|(counts, nested)| Maps { counts, nested }));

#[derive(Serialize, Deserialize, JsonSchema, FastCheck, Debug, Clone)]
pub(crate) struct Btree {
    weights: BTreeMap<String, f64>,
    names: BTreeSet<String>,
}
case!(Btree => (btree_map(key(), finite_f64(), 0..3), btree_set(key(), 0..3)).prop_map(|(weights, names)| Btree { weights, names }));

#[derive(Serialize, Deserialize, JsonSchema, FastCheck, Debug, Clone)]
pub(crate) struct Optionals {
    a: Option<u8>,
    b: Option<String>,
    c: Option<Inner>,
    d: Option<Vec<u8>>,
    e: Option<Option<bool>>,
}
case!(Optionals => (of(any::<u8>()), of(text()), of(Inner::strategy()), of(vec(any::<u8>(), 0..3)), of(of(any::<bool>())))
    .prop_map(|(a, b, c, d, e)| Optionals { a, b, c, d, e }));

#[derive(Serialize, Deserialize, JsonSchema, FastCheck, Debug, Clone)]
pub(crate) struct L2 {
    values: Vec<Option<HashMap<String, i8>>>,
}
#[derive(Serialize, Deserialize, JsonSchema, FastCheck, Debug, Clone)]
pub(crate) struct L1 {
    inner: L2,
}
#[derive(Serialize, Deserialize, JsonSchema, FastCheck, Debug, Clone)]
pub(crate) struct Deep {
    level: L1,
}
case!(Deep => vec(of(hash_map(key(), any::<i8>(), 0..3)), 0..3).prop_map(|values| Deep { level: L1 { inner: L2 { values } } }));

#[derive(Serialize, Deserialize, JsonSchema, FastCheck, Debug, Clone)]
pub(crate) struct Newtype(String);
case!(Newtype => text().prop_map(Newtype));

#[derive(Serialize, Deserialize, JsonSchema, FastCheck, Debug, Clone)]
pub(crate) struct Unit;
case!(Unit => Just(Unit));

// ---- enums ----

#[derive(Serialize, Deserialize, JsonSchema, FastCheck, Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) enum Mode {
    Read,
    Write,
    #[serde(rename = "rw")]
    ReadWrite,
}
case!(Mode => prop_oneof![Just(Mode::Read), Just(Mode::Write), Just(Mode::ReadWrite)]);

#[derive(Serialize, Deserialize, JsonSchema, FastCheck, Debug, Clone)]
pub(crate) struct WithMode {
    mode: Mode,
    modes: Vec<Mode>,
}
case!(WithMode => (Mode::strategy(), vec(Mode::strategy(), 0..3)).prop_map(|(mode, modes)| WithMode { mode, modes }));

#[derive(Serialize, Deserialize, JsonSchema, FastCheck, Debug, Clone)]
pub(crate) struct EnumKeys {
    limits: HashMap<Mode, u8>,
}
case!(EnumKeys => hash_map(Mode::strategy(), any::<u8>(), 0..3).prop_map(|limits| EnumKeys { limits }));

#[derive(Serialize, Deserialize, JsonSchema, FastCheck, Debug, Clone)]
pub(crate) enum External {
    Unit,
    Newtype(u8),
    Struct { x: String, y: Option<i32> },
    List(Vec<u16>),
}
case!(External => prop_oneof![
    Just(External::Unit),
    any::<u8>().prop_map(External::Newtype),
    (text(), of(any::<i32>())).prop_map(|(x, y)| External::Struct { x, y }),
    vec(any::<u16>(), 0..3).prop_map(External::List),
]);

#[derive(Serialize, Deserialize, JsonSchema, FastCheck, Debug, Clone)]
#[serde(tag = "type")]
pub(crate) enum Internal {
    Start { at: u64 },
    Stop,
    Wrap(Inner),
}
case!(Internal => prop_oneof![
    any::<u64>().prop_map(|at| Internal::Start { at }),
    Just(Internal::Stop),
    Inner::strategy().prop_map(Internal::Wrap),
]);

/// Internally tagged, struct and unit variants only: what `#[derive(FastCheck)]` covers.
#[derive(Serialize, Deserialize, JsonSchema, FastCheck, Debug, Clone)]
#[serde(tag = "op", rename_all = "snake_case", deny_unknown_fields)]
pub(crate) enum Command {
    MoveTo {
        x: i32,
        #[serde(rename = "Y")]
        y: Option<u16>,
    },
    Hold,
    #[serde(rename = "wait")]
    WaitFor {
        #[serde(default)]
        millis: u64,
        reason: Option<String>,
    },
}
case!(Command => prop_oneof![
    (any::<i32>(), of(any::<u16>())).prop_map(|(x, y)| Command::MoveTo { x, y }),
    Just(Command::Hold),
    (any::<u64>(), of(text())).prop_map(|(millis, reason)| Command::WaitFor { millis, reason }),
]);

/// The compact form `#[tool]` writes for inline arguments (a member table, one shared loop).
#[derive(Serialize, Deserialize, JsonSchema, FastCheck, Debug, Clone)]
#[dsh_tools(compact)]
#[serde(rename_all = "camelCase")]
pub(crate) struct CompactOpen {
    file_path: String,
    #[serde(default)]
    max_lines: u32,
    level: Option<Level>,
    step: Option<Command>,
    #[serde(rename = "T")]
    tags: BTreeMap<String, i8>,
}
case!(CompactOpen => (text(), any::<u32>(), of(prop_oneof![Just(Level::Info), Just(Level::WarnOnly)]), of(Command::strategy()), btree_map(key(), any::<i8>(), 0..3))
    .prop_map(|(file_path, max_lines, level, step, tags)| CompactOpen { file_path, max_lines, level, step, tags }));

/// The compact form, closed.
#[derive(Serialize, Deserialize, JsonSchema, FastCheck, Debug, Clone)]
#[dsh_tools(compact)]
#[serde(deny_unknown_fields)]
pub(crate) struct CompactStrict {
    a: i64,
    b: Option<f64>,
    c: Vec<bool>,
    d: CompactOpen,
}
case!(CompactStrict => (any::<i64>(), of(finite_f64()), vec(any::<bool>(), 0..3), CompactOpen::strategy())
    .prop_map(|(a, b, c, d)| CompactStrict { a, b, c, d }));

/// A unit enum with documented and plain variants (schemars: one `enum` plus `const` branches).
#[derive(Serialize, Deserialize, JsonSchema, FastCheck, Debug, Clone)]
#[serde(rename_all = "kebab-case")]
pub(crate) enum Level {
    /// Everything.
    TraceAll,
    Info,
    WarnOnly,
}

/// Commands and levels inside an open struct with camelCase names.
#[derive(Serialize, Deserialize, JsonSchema, FastCheck, Debug, Clone)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Script {
    steps: Vec<Command>,
    log_level: Option<Level>,
    r#type: Box<bool>,
    tags_by_name: BTreeMap<String, Vec<u8>>,
}
case!(Script => (vec(Command::strategy(), 0..4), of(prop_oneof![Just(Level::TraceAll), Just(Level::Info), Just(Level::WarnOnly)]), any::<bool>(), btree_map(key(), vec(any::<u8>(), 0..3), 0..3))
    .prop_map(|(steps, log_level, t, tags_by_name)| Script { steps, log_level, r#type: Box::new(t), tags_by_name }));

#[derive(Serialize, Deserialize, JsonSchema, FastCheck, Debug, Clone)]
#[serde(tag = "t", content = "c")]
pub(crate) enum Adjacent {
    Num(i32),
    Text(String),
    Pair { a: u8, b: u8 },
}
case!(Adjacent => prop_oneof![
    any::<i32>().prop_map(Adjacent::Num),
    text().prop_map(Adjacent::Text),
    (any::<u8>(), any::<u8>()).prop_map(|(a, b)| Adjacent::Pair { a, b }),
]);

#[derive(Serialize, Deserialize, JsonSchema, FastCheck, Debug, Clone)]
#[serde(untagged)]
pub(crate) enum Untagged {
    Num(i64),
    Text(String),
    Obj { key: String },
}
case!(Untagged => prop_oneof![
    any::<i64>().prop_map(Untagged::Num),
    text().prop_map(Untagged::Text),
    text().prop_map(|key| Untagged::Obj { key }),
]);

#[derive(Serialize, Deserialize, JsonSchema, FastCheck, Debug, Clone)]
#[serde(deny_unknown_fields)]
pub(crate) struct StrictA {
    x: String,
}
#[derive(Serialize, Deserialize, JsonSchema, FastCheck, Debug, Clone)]
#[serde(deny_unknown_fields)]
pub(crate) struct StrictB {
    y: u8,
    z: Option<bool>,
}
#[derive(Serialize, Deserialize, JsonSchema, FastCheck, Debug, Clone)]
#[serde(untagged)]
pub(crate) enum UntaggedStrict {
    A(StrictA),
    B(StrictB),
}
case!(UntaggedStrict => prop_oneof![
    text().prop_map(|x| UntaggedStrict::A(StrictA { x })),
    (any::<u8>(), of(any::<bool>())).prop_map(|(y, z)| UntaggedStrict::B(StrictB { y, z })),
]);

#[derive(Serialize, Deserialize, JsonSchema, FastCheck, Debug, Clone)]
pub(crate) struct OptionalEnums {
    ext: Option<External>,
    int: Option<Internal>,
    unt: Option<Untagged>,
    mode: Option<Mode>,
}
case!(OptionalEnums => (of(External::strategy()), of(Internal::strategy()), of(Untagged::strategy()), of(Mode::strategy()))
    .prop_map(|(ext, int, unt, mode)| OptionalEnums { ext, int, unt, mode }));

// ---- serde attributes ----

#[derive(Serialize, Deserialize, JsonSchema, FastCheck, Debug, Clone)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Renamed {
    first_name: String,
    #[serde(rename = "LAST")]
    last_name: String,
    is_admin: bool,
}
case!(Renamed => (text(), text(), any::<bool>()).prop_map(|(first_name, last_name, is_admin)| Renamed { first_name, last_name, is_admin }));

#[derive(Serialize, Deserialize, JsonSchema, FastCheck, Debug, Clone)]
#[serde(rename_all = "snake_case")]
pub(crate) enum RenamedEnum {
    FooBar,
    BazQux {
        #[serde(rename = "n")]
        some_field: u8,
    },
    #[serde(rename = "other")]
    Third(String),
}
case!(RenamedEnum => prop_oneof![
    Just(RenamedEnum::FooBar),
    any::<u8>().prop_map(|some_field| RenamedEnum::BazQux { some_field }),
    text().prop_map(RenamedEnum::Third),
]);

fn default_name() -> String {
    "anonymous".into()
}

#[derive(Serialize, Deserialize, JsonSchema, FastCheck, Debug, Clone)]
pub(crate) struct Defaults {
    #[serde(default)]
    count: u32,
    #[serde(default = "default_name")]
    name: String,
    #[serde(default)]
    list: Vec<u8>,
    required: bool,
}
case!(Defaults => (any::<u32>(), text(), vec(any::<u8>(), 0..3), any::<bool>()).prop_map(|(count, name, list, required)| Defaults { count, name, list, required }));

#[derive(Serialize, Deserialize, JsonSchema, FastCheck, Debug, Clone, Default)]
#[serde(default)]
pub(crate) struct StructDefault {
    a: u8,
    b: String,
    c: Option<i16>,
}
case!(StructDefault => (any::<u8>(), text(), of(any::<i16>())).prop_map(|(a, b, c)| StructDefault { a, b, c }));

#[derive(Serialize, Deserialize, JsonSchema, FastCheck, Debug, Clone)]
pub(crate) struct Skipped {
    keep: u8,
    #[allow(dead_code)] // serde skips it: never read
    #[serde(skip)]
    cache: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    note: Option<String>,
}
case!(Skipped => (any::<u8>(), any::<u64>(), of(text())).prop_map(|(keep, cache, note)| Skipped { keep, cache, note }));

#[derive(Serialize, Deserialize, JsonSchema, FastCheck, Debug, Clone)]
pub(crate) struct Meta {
    created: u64,
    author: Option<String>,
}
case!(Meta => (any::<u64>(), of(text())).prop_map(|(created, author)| Meta { created, author }));

#[derive(Serialize, Deserialize, JsonSchema, FastCheck, Debug, Clone)]
pub(crate) struct Flattened {
    id: String,
    #[serde(flatten)]
    meta: Meta,
}
case!(Flattened => (text(), Meta::strategy()).prop_map(|(id, meta)| Flattened { id, meta }));

#[derive(Serialize, Deserialize, JsonSchema, FastCheck, Debug, Clone)]
#[serde(tag = "action")]
pub(crate) enum Action {
    Move { dx: i32, dy: i32 },
    Stop,
}
case!(Action => prop_oneof![
    (any::<i32>(), any::<i32>()).prop_map(|(dx, dy)| Action::Move { dx, dy }),
    Just(Action::Stop),
]);

#[derive(Serialize, Deserialize, JsonSchema, FastCheck, Debug, Clone)]
pub(crate) struct FlattenInternal {
    id: u8,
    #[serde(flatten)]
    action: Action,
}
case!(FlattenInternal => (any::<u8>(), Action::strategy()).prop_map(|(id, action)| FlattenInternal { id, action }));

#[derive(Serialize, Deserialize, JsonSchema, FastCheck, Debug, Clone)]
pub(crate) enum ExtAction {
    Go(u8),
    Halt,
    Turn { deg: i16 },
}
#[derive(Serialize, Deserialize, JsonSchema, FastCheck, Debug, Clone)]
pub(crate) struct FlattenExternal {
    id: u8,
    #[serde(flatten)]
    action: ExtAction,
}
impl FlattenExternal {
    pub(crate) fn go(id: u8, n: u8) -> Self {
        Self {
            id,
            action: ExtAction::Go(n),
        }
    }
    pub(crate) fn halt(id: u8) -> Self {
        Self {
            id,
            action: ExtAction::Halt,
        }
    }
    pub(crate) fn turn(id: u8, deg: i16) -> Self {
        Self {
            id,
            action: ExtAction::Turn { deg },
        }
    }
}
case!(FlattenExternal => (any::<u8>(), prop_oneof![
    any::<u8>().prop_map(ExtAction::Go),
    Just(ExtAction::Halt),
    any::<i16>().prop_map(|deg| ExtAction::Turn { deg }),
]).prop_map(|(id, action)| FlattenExternal { id, action }));

#[derive(Serialize, Deserialize, JsonSchema, FastCheck, Debug, Clone)]
pub(crate) struct FlattenOptional {
    id: u8,
    #[serde(flatten)]
    action: Option<Action>,
}
case!(FlattenOptional => (any::<u8>(), of(Action::strategy())).prop_map(|(id, action)| FlattenOptional { id, action }));

#[derive(Serialize, Deserialize, JsonSchema, FastCheck, Debug, Clone)]
pub(crate) struct FlattenMap {
    id: u8,
    #[serde(flatten)]
    extra: HashMap<String, String>,
}
case!(FlattenMap => (any::<u8>(), hash_map(free_key(), text(), 0..3)).prop_map(|(id, extra)| FlattenMap { id, extra }));

#[derive(Serialize, Deserialize, JsonSchema, FastCheck, Debug, Clone)]
#[serde(deny_unknown_fields)]
pub(crate) struct Strict {
    a: u8,
    b: Option<String>,
}
case!(Strict => (any::<u8>(), of(text())).prop_map(|(a, b)| Strict { a, b }));

#[derive(Serialize, Deserialize, JsonSchema, FastCheck, Debug, Clone)]
#[serde(deny_unknown_fields)]
pub(crate) struct FlattenStrict {
    a: u8,
    #[serde(flatten)]
    meta: Meta,
}
case!(FlattenStrict => (any::<u8>(), Meta::strategy()).prop_map(|(a, meta)| FlattenStrict { a, meta }));

/// How a file is decoded.
#[derive(Serialize, Deserialize, JsonSchema, FastCheck, Debug, Clone)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Encoding {
    /// UTF-8.
    Utf8,
    /// ISO-8859-1.
    Latin1,
}

/// Reads part of a file.
#[derive(Serialize, Deserialize, JsonSchema, FastCheck, Debug, Clone)]
pub(crate) struct ReadFile {
    /// The file to read.
    path: PathBuf,
    /// First line to read (1-based).
    offset: Option<u64>,
    /// Most lines to read.
    #[schemars(range(min = 1, max = 2000))]
    limit: Option<u32>,
    /// Defaults to UTF-8.
    encoding: Option<Encoding>,
}
case!(ReadFile => (text(), of(any::<u64>()), of(1u32..=2000), of(prop_oneof![Just(Encoding::Utf8), Just(Encoding::Latin1)]))
    .prop_map(|(p, offset, limit, encoding)| ReadFile { path: p.into(), offset, limit, encoding }));

// ---- the exceptions' types (they exist for their schemas) ----

#[allow(dead_code)]
#[derive(JsonSchema)]
pub(crate) struct Recursive {
    children: Vec<Recursive>,
}

#[allow(dead_code)]
#[derive(JsonSchema)]
#[serde(untagged)]
pub(crate) enum Overlapping {
    A { x: String },
    B { x: String, y: u8 },
}

#[allow(dead_code)]
#[derive(JsonSchema)]
pub(crate) struct TupleStruct(u8, String);

#[allow(dead_code)]
#[derive(JsonSchema)]
pub(crate) enum TupleVariant {
    Point(i32, i32),
}

#[allow(dead_code)]
#[derive(JsonSchema)]
pub(crate) struct IntKeys {
    m: HashMap<u32, String>,
}

#[allow(dead_code)]
#[derive(JsonSchema)]
pub(crate) struct Formatted {
    ip: std::net::Ipv4Addr,
}

#[allow(dead_code)]
#[derive(JsonSchema)]
pub(crate) struct NonZero {
    n: std::num::NonZeroI8,
}

#[derive(Serialize, Deserialize, JsonSchema, FastCheck, Debug, Clone)]
#[serde(tag = "t", content = "c")]
pub(crate) enum AdjacentUnit {
    On(u8),
    Off,
}
case!(AdjacentUnit => prop_oneof![any::<u8>().prop_map(AdjacentUnit::On), Just(AdjacentUnit::Off)]);

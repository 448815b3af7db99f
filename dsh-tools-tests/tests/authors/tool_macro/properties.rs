//! Any argument value either validates and decodes (the call succeeds) or is rejected with at
//! least one violation; a generated tool never panics and never fails to decode a value it
//! accepted.

use super::tools::*;
use dsh_tools::{CancellationToken, Registry, Tool, ToolExecutionInput};
use proptest::prelude::*;
use serde_json::{Map, Value, json};

fn scalar() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        (-1e6f64..1e6).prop_map(|f| json!(f)),
        (-300i64..300).prop_map(|i| json!(i as f64)),
        "[a-z]{0,6}".prop_map(Value::String),
        prop_oneof![
            Just("fast"),
            Just("thorough"),
            Just("circle"),
            Just("polygon")
        ]
        .prop_map(|s| json!(s)),
    ]
}

/// Keys the example tools use, plus a few they do not.
const KEYS: &[&str] = &[
    "a", "b", "path", "offset", "limit", "pattern", "paths", "mode", "max", "labels", "text",
    "crlf", "shape", "scale", "kind", "center", "radius", "points", "x", "y", "ms", "other",
];

fn value() -> impl Strategy<Value = Value> {
    scalar().prop_recursive(4, 48, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::vec((prop::sample::select(KEYS), inner), 0..6).prop_map(|kv| {
                Value::Object(
                    kv.into_iter()
                        .map(|(k, v)| (k.to_owned(), v))
                        .collect::<Map<_, _>>(),
                )
            }),
        ]
    })
}

fn arguments() -> impl Strategy<Value = Value> {
    prop::collection::vec((prop::sample::select(KEYS), value()), 0..6)
        .prop_map(|kv| Value::Object(kv.into_iter().map(|(k, v)| (k.to_owned(), v)).collect()))
}

/// The required keys of each tool, filled with any values (so that some calls validate),
/// merged with any other keys.
fn call() -> impl Strategy<Value = (&'static str, Value)> {
    const REQUIRED: &[(&str, &[&str])] = &[
        ("read_file", &["path"]),
        ("add", &["a", "b"]),
        ("grep", &["pattern", "paths"]),
        ("write", &["text"]),
        ("measure", &["shape"]),
        ("cancelled", &[]),
    ];
    (prop::sample::select(REQUIRED), any::<bool>(), arguments()).prop_flat_map(
        |((tool, required), extra, others)| {
            prop::collection::vec(value(), required.len()).prop_map(move |values| {
                let mut args = Map::new();
                for (key, value) in required.iter().zip(values) {
                    args.insert((*key).to_owned(), value);
                }
                if let (true, Value::Object(others)) = (extra, &others) {
                    for (k, v) in others {
                        args.entry(k.clone()).or_insert_with(|| v.clone());
                    }
                }
                (tool, Value::Object(args))
            })
        },
    )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn every_value_validates_and_decodes_or_is_rejected(
        (tool, args) in call(),
    ) {
        let registry = Registry::new();
        registry.register_tool(ReadFile).unwrap().keep();
        registry.register_tool(Add).unwrap().keep();
        registry.register_tool(Search).unwrap().keep();
        registry.register_tool(Write).unwrap().keep();
        registry.register_tool(Measure).unwrap().keep();
        registry.register_tool(Cancelled).unwrap().keep();
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        let input = ToolExecutionInput::new("call_1", tool, args.clone(), CancellationToken::new());
        let result = runtime.block_on(registry.execute(input));
        match result.code() {
            None => prop_assert!(!result.is_error() || tool == "write", "{tool} {args}: {}", result.text()),
            Some("INVALID_ARGS") => prop_assert!(
                result.text().starts_with("Error: invalid arguments: ") && result.text().len() > 27,
                "{}", result.text()
            ),
            // `write` fails by design on empty text.
            Some("ENOSPC") => prop_assert_eq!(tool, "write"),
            Some("OVERFLOW") => prop_assert_eq!(tool, "add"),
            Some(other) => prop_assert!(false, "{tool} {args}: unexpected {other}: {}", result.text()),
        }
    }
}

/// The strategy reaches both outcomes, so the property above is not vacuous.
#[test]
fn generated_calls_both_validate_and_fail() {
    use proptest::strategy::ValueTree;
    use proptest::test_runner::TestRunner;
    let registry = Registry::new();
    for tool in [ReadFile.definition(), Add.definition(), Search.definition()] {
        registry.register(tool).unwrap().keep();
    }
    registry.register_tool(Write).unwrap().keep();
    registry.register_tool(Measure).unwrap().keep();
    registry.register_tool(Cancelled).unwrap().keep();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let mut runner = TestRunner::deterministic();
    let (mut valid, mut invalid) = (0, 0);
    for _ in 0..500 {
        let (tool, args) = call().new_tree(&mut runner).unwrap().current();
        let input = ToolExecutionInput::new("c", tool, args, CancellationToken::new());
        match runtime.block_on(registry.execute(input)).code() {
            Some("INVALID_ARGS") => invalid += 1,
            _ => valid += 1,
        }
    }
    assert!(
        valid >= 25 && invalid >= 25,
        "{valid} valid, {invalid} invalid"
    );
}

//! Schemas and values nested 100,000 deep assert, compile and validate on a thread with a
//! 256 KiB stack. `serde_json::Value`'s own `Drop` recurses, so every deep value here is built
//! by hand and freed with `drop_deep`.

use dsh_tools::json::drop_deep;
use dsh_tools::schema::{CompiledSchema, Root, assert_supported};
use serde_json::{Map, Value, json};

const DEPTH: usize = 100_000;

fn on_small_stack(f: impl FnOnce() + Send + 'static) {
    std::thread::Builder::new()
        .stack_size(256 * 1024)
        .spawn(f)
        .unwrap()
        .join()
        .expect("the check ran out of stack or panicked");
}

/// A violation whose path was cut: its start, its end, the note, and a bounded length.
fn assert_cut(violation: &str, start: &str, end: &str) {
    assert!(violation.starts_with(start), "{}", &violation[..80]);
    assert!(
        violation.ends_with(end),
        "{}",
        &violation[violation.len() - 80..]
    );
    assert!(violation.contains(" bytes of path)…"));
    assert!(violation.len() < 8 * 1024, "{}", violation.len());
}

fn object(entries: Vec<(&str, Value)>) -> Value {
    Value::Object(
        entries
            .into_iter()
            .map(|(k, v)| (k.to_owned(), v))
            .collect::<Map<_, _>>(),
    )
}

/// A deep value freed iteratively, even when a failed assertion unwinds past it.
struct Deep(Option<Value>);

impl std::ops::Deref for Deep {
    type Target = Value;
    fn deref(&self) -> &Value {
        self.0.as_ref().unwrap()
    }
}

impl Drop for Deep {
    fn drop(&mut self) {
        if let Some(v) = self.0.take() {
            drop_deep(v);
        }
    }
}

fn nest(depth: usize, leaf: Value, wrap: impl Fn(Value) -> Value) -> Deep {
    let mut cur = leaf;
    for _ in 0..depth {
        cur = wrap(cur);
    }
    Deep(Some(cur))
}

#[test]
fn deep_array_schema_and_value() {
    on_small_stack(|| {
        let schema = nest(DEPTH, json!({"type": "integer"}), |inner| {
            object(vec![("type", json!("array")), ("items", inner)])
        });
        assert!(assert_supported(&schema).is_ok());
        let compiled = CompiledSchema::compile(&schema).unwrap();

        let good = nest(DEPTH, json!(1), |inner| Value::Array(vec![inner]));
        assert!(compiled.is_valid(&good));
        assert!(compiled.validate(&good).is_empty());

        let bad = nest(DEPTH, json!("x"), |inner| Value::Array(vec![inner]));
        assert!(!compiled.is_valid(&bad));
        let violations = compiled.validate_at(&bad, Root::Parameters);
        assert_eq!(violations.len(), 1);
        // Past 4 KiB a path keeps its start and end with a note of what was cut.
        assert_cut(&violations[0], "\"[0][0][0]", "[0][0]\" must be an integer");
    });
}

#[test]
fn deep_one_of_chain() {
    on_small_stack(|| {
        let schema = nest(DEPTH, json!({"type": "string"}), |inner| {
            object(vec![(
                "oneOf",
                Value::Array(vec![inner, json!({"type": "null"})]),
            )])
        });
        assert!(assert_supported(&schema).is_ok());
        let compiled = CompiledSchema::compile(&schema).unwrap();
        assert!(compiled.is_valid(&json!("x")));
        // `null` matches the `null` branch at every level, so levels alternate between one
        // match and two: at an even depth the outermost chain matches twice.
        assert!(!compiled.is_valid(&json!(null)));
        assert_eq!(
            compiled.validate(&json!(null)),
            [r#""value" must match exactly one oneOf branch (matched 2)"#]
        );
        // Explained once (the sub-run explains nothing further, so it stays one pass).
        assert_eq!(
            compiled.validate(&json!(1)),
            [
                r#""value" must match exactly one oneOf branch (matched 0): closest is branch 0: "value" must match exactly one oneOf branch (matched 0) (or null)"#
            ]
        );
    });
}

#[test]
fn deep_object_schema_and_value() {
    on_small_stack(|| {
        let schema = nest(DEPTH, json!({"type": "boolean"}), |inner| {
            object(vec![
                ("type", json!("object")),
                ("properties", object(vec![("a", inner)])),
                ("required", json!(["a"])),
                ("additionalProperties", json!(false)),
            ])
        });
        let compiled = CompiledSchema::compile(&schema).unwrap();
        let good = nest(DEPTH, json!(true), |inner| object(vec![("a", inner)]));
        assert!(compiled.is_valid(&good));
        let bad = nest(DEPTH - 1, object(vec![]), |inner| {
            object(vec![("a", inner)])
        });
        let violations = compiled.validate(&bad);
        assert_eq!(violations.len(), 1);
        assert_cut(
            &violations[0],
            "missing required property \"value.a.a.a",
            ".a.a\"",
        );
    });
}

#[test]
fn deep_unsupported_schema_and_lossless_walk() {
    on_small_stack(|| {
        let schema = nest(
            DEPTH,
            json!({"type": "string", "format": "uuid"}),
            |inner| object(vec![("type", json!("array")), ("items", inner)]),
        );
        let err = assert_supported(&schema).unwrap_err();
        assert_eq!(err.violations().len(), 1);
        assert!(err.violations()[0].ends_with(".items.format is not a supported keyword (subset: type/oneOf/properties/required/additionalProperties/items/enum/const/minimum/maximum/exclusiveMinimum/exclusiveMaximum/minLength/maxLength/pattern/minItems/maxItems/uniqueItems + annotations)"));

        // An unconstrained schema walks the whole value for -0.
        let any = CompiledSchema::compile(&json!({})).unwrap();
        let value = nest(DEPTH, json!(-0.0), |inner| {
            object(vec![("k", Value::Array(vec![inner]))])
        });
        assert_eq!(
            any.validate(&value),
            [r#""value" must be a lossless JSON value"#]
        );
    });
}

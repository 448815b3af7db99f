//! The compiled validator on arbitrary (schema, value) pairs.
//!
//! Input: a JSON array `[schema, value, value, ...]`; any other JSON document is taken as a
//! schema and validated against itself. Schemas outside the subset are skipped after
//! `compile` returns its error.
//!
//! Invariants (for every value): `is_valid(v) == validate(v).is_empty()`, and the same for
//! `validate_at(v, Root::Parameters)` and `validate_at(v, Root::Label(..))`; a report lists at
//! most `MAX_LISTED_VIOLATIONS` messages plus one summary line; nothing panics.
#![no_main]

use dsh_tools::schema::{CompiledSchema, MAX_LISTED_VIOLATIONS, Root};
use dsh_tools_fuzz::parse_json;
use libfuzzer_sys::fuzz_target;
use serde_json::Value;

fuzz_target!(|data: &[u8]| {
    let Some(input) = parse_json(data) else {
        return;
    };
    let (schema, values): (&Value, &[Value]) = match &*input {
        Value::Array(items) if items.len() >= 2 => (&items[0], &items[1..]),
        other => (other, std::slice::from_ref(other)),
    };
    let Ok(compiled) = CompiledSchema::compile(schema) else {
        return;
    };
    for value in values {
        let valid = compiled.is_valid(value);
        let listed = compiled.validate(value);
        assert_eq!(
            valid,
            listed.is_empty(),
            "is_valid = {valid} but validate listed {listed:?}"
        );
        assert!(listed.len() <= MAX_LISTED_VIOLATIONS + 1);
        let params = compiled.validate_at(value, Root::Parameters);
        assert_eq!(
            valid,
            params.is_empty(),
            "is_valid = {valid} but validate_at(Parameters) listed {params:?}"
        );
        let labelled = compiled.validate_at(value, Root::Label("out"));
        assert_eq!(
            valid,
            labelled.is_empty(),
            "is_valid = {valid} but validate_at(Label) listed {labelled:?}"
        );
        // Deterministic: a second run gives the same report.
        assert_eq!(listed, compiled.validate(value));
    }
});

//! `assert_supported` on arbitrary JSON.
//!
//! Invariants:
//! * it never panics, overflows the stack or runs away in time/memory;
//! * an error lists at least one violation, and at most `MAX_LISTED_VIOLATIONS` plus one
//!   summary line;
//! * `CompiledSchema::compile` succeeds exactly when `assert_supported` does, with the same
//!   violations;
//! * a supported schema, compiled, gives `is_valid(v) == validate(v).is_empty()` for the schema
//!   text itself taken as a value (a cheap extra value that is related to the schema).
#![no_main]

use dsh_tools::schema::{CompiledSchema, MAX_LISTED_VIOLATIONS, Root, assert_supported};
use dsh_tools_fuzz::parse_json;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some(schema) = parse_json(data) else {
        return;
    };
    let verdict = assert_supported(&schema);
    let compiled = CompiledSchema::compile(&schema);
    match (&verdict, compiled) {
        (Ok(()), Ok(compiled)) => {
            let valid = compiled.is_valid(&schema);
            let listed = compiled.validate(&schema);
            assert_eq!(
                valid,
                listed.is_empty(),
                "is_valid disagrees with validate: {listed:?}"
            );
            assert_eq!(
                valid,
                compiled.validate_at(&schema, Root::Parameters).is_empty(),
                "is_valid disagrees with validate_at(Parameters)"
            );
        }
        (Err(e), Err(c)) => {
            assert!(!e.violations().is_empty(), "an error with no violation");
            assert!(e.violations().len() <= MAX_LISTED_VIOLATIONS + 1);
            assert_eq!(
                e, &c,
                "compile reports other violations than assert_supported"
            );
            assert_eq!(e.code(), "UNSUPPORTED_SCHEMA");
            let _ = e.to_string();
        }
        (v, c) => panic!(
            "assert_supported ({:?}) and compile ({:?}) disagree",
            v.is_ok(),
            c.is_ok()
        ),
    }
});

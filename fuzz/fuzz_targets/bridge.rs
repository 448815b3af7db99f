//! The schemars bridge on arbitrary JSON (any object or boolean is a `schemars::Schema`).
//!
//! Invariants:
//! * `from_schemars` never panics, overflows the stack or runs away in time/memory;
//! * an `Ok` result passes `assert_supported` (and so `CompiledSchema::compile`);
//! * an error lists at least one problem, every path is a JSON pointer starting at `#`, and no
//!   problem is the bridge's own "internal error" (its output failing the subset check).
//!
//! With `DSH_FUZZ_EXTRA=1` two checks beyond the documented contract are added: bridging an
//! `Ok` result again gives it back unchanged, and a schema that already passes
//! `assert_supported` (and is within the bridge's depth limit) bridges without error.
#![no_main]

use dsh_tools::json::{drop_deep, to_compact_string};
use dsh_tools::schema::bridge::{MAX_DEPTH, from_schemars};
use dsh_tools::schema::{CompiledSchema, assert_supported};
use dsh_tools_fuzz::{extra_checks, parse_json};
use libfuzzer_sys::fuzz_target;
use serde_json::Value;

/// Nesting depth of a value, in JSON levels (iterative).
fn depth(v: &Value) -> usize {
    let mut max = 0;
    let mut stack = vec![(v, 1usize)];
    while let Some((v, d)) = stack.pop() {
        max = max.max(d);
        match v {
            Value::Array(items) => stack.extend(items.iter().map(|x| (x, d + 1))),
            Value::Object(map) => stack.extend(map.values().map(|x| (x, d + 1))),
            _ => {}
        }
    }
    max
}

fuzz_target!(|data: &[u8]| {
    let Some(input) = parse_json(data) else {
        return;
    };
    let Ok(schema) = <&schemars::Schema>::try_from(&*input) else {
        return;
    };
    match from_schemars(schema) {
        Ok(out) => {
            if let Err(e) = assert_supported(&out) {
                panic!("from_schemars returned a schema outside the subset: {e}");
            }
            if let Err(e) = CompiledSchema::compile(&out) {
                panic!("from_schemars returned a schema that does not compile: {e}");
            }
            if extra_checks() {
                let again = <&schemars::Schema>::try_from(&out)
                    .ok()
                    .map(from_schemars)
                    .expect("an object is a schemars::Schema");
                match again {
                    Ok(again) => {
                        assert_eq!(
                            to_compact_string(&again),
                            to_compact_string(&out),
                            "bridging a bridged schema changed it"
                        );
                        drop_deep(again);
                    }
                    Err(e) => panic!("bridging a bridged schema failed: {e}"),
                }
            }
            drop_deep(out);
        }
        Err(e) => {
            assert!(
                !e.problems().is_empty(),
                "an error with no listed problem ({} unlisted)",
                e.unlisted()
            );
            for p in e.problems() {
                assert!(p.path().starts_with('#'), "problem path {:?}", p.path());
                assert!(
                    !p.message().starts_with("internal error"),
                    "the bridge produced a schema outside the subset: {p}"
                );
            }
            let _ = e.to_string();
            // Schemas of the subset are 2020-12 schemas the bridge keeps as they are.
            if extra_checks() && assert_supported(&input).is_ok() && depth(&input) <= MAX_DEPTH {
                panic!("a supported schema does not bridge: {e}");
            }
        }
    }
});

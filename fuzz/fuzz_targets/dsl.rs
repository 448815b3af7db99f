//! The author DSL on arbitrary JSON, as a value-root spec and as a parameter spec.
//!
//! Invariants, for both roots:
//! * `compile_*_spec` never panics; a successful compile passes `assert_supported` (and so
//!   `CompiledSchema::compile`);
//! * `*SchemaSpec::from_json` accepts exactly what `compile_*_spec` accepts, with the same
//!   error (documented on `from_json`);
//! * for an accepted spec, `to_json_schema()` gives the same schema as `compile_*_spec` (it is
//!   documented as the same code path on `to_author_json()`), and `to_author_json()` reads back
//!   into an equal typed spec; `Clone`, `PartialEq` and `Debug` do not panic.
#![no_main]

use dsh_tools::json::{drop_deep, to_compact_string};
use dsh_tools::schema::dsl::{
    ParameterSchemaSpec, ValueSchemaSpec, compile_parameter_spec, compile_value_spec,
};
use dsh_tools::schema::{CompiledSchema, JsonSchemaError, assert_supported};
use dsh_tools_fuzz::parse_json;
use libfuzzer_sys::fuzz_target;
use serde_json::Value;

fn check_compiled(which: &str, compiled: &Value) {
    if let Err(e) = assert_supported(compiled) {
        panic!("{which}: a compiled spec fails assert_supported: {e}");
    }
    if let Err(e) = CompiledSchema::compile(compiled) {
        panic!("{which}: a compiled spec fails CompiledSchema::compile: {e}");
    }
}

fn check_error(which: &str, e: &JsonSchemaError) {
    assert!(
        !e.violations().is_empty(),
        "{which}: an error with no violation"
    );
    let _ = e.to_string();
}

fuzz_target!(|data: &[u8]| {
    let Some(spec) = parse_json(data) else {
        return;
    };

    // Value root.
    match (compile_value_spec(&spec), ValueSchemaSpec::from_json(&spec)) {
        (Ok(compiled), Ok(typed)) => {
            check_compiled("value", &compiled);
            let again = typed
                .to_json_schema()
                .expect("value: to_json_schema of an accepted spec");
            assert_eq!(
                to_compact_string(&again),
                to_compact_string(&compiled),
                "value: to_json_schema differs from compile_value_spec"
            );
            let author = typed.to_author_json();
            let back = ValueSchemaSpec::from_json(&author)
                .expect("value: to_author_json does not read back");
            assert!(
                back == typed,
                "value: to_author_json reads back into another spec"
            );
            let copy = typed.clone();
            assert!(copy == typed, "value: a clone differs");
            let _ = format!("{typed:?}");
            drop_deep(author);
            drop_deep(again);
            drop_deep(compiled);
        }
        (Err(a), Err(b)) => {
            check_error("value", &a);
            assert_eq!(
                a, b,
                "value: from_json fails differently from compile_value_spec"
            );
        }
        (a, b) => panic!(
            "value: compile_value_spec ok = {}, ValueSchemaSpec::from_json ok = {}",
            a.is_ok(),
            b.is_ok()
        ),
    }

    // Parameter root.
    match (
        compile_parameter_spec(&spec),
        ParameterSchemaSpec::from_json(&spec),
    ) {
        (Ok(compiled), Ok(typed)) => {
            check_compiled("parameters", &compiled);
            let again = typed
                .to_json_schema()
                .expect("parameters: to_json_schema of an accepted spec");
            assert_eq!(
                to_compact_string(&again),
                to_compact_string(&compiled),
                "parameters: to_json_schema differs from compile_parameter_spec"
            );
            let author = typed.to_author_json();
            let back = ParameterSchemaSpec::from_json(&author)
                .expect("parameters: to_author_json does not read back");
            assert!(
                back == typed,
                "parameters: to_author_json reads back into another spec"
            );
            let copy = typed.clone();
            assert!(copy == typed, "parameters: a clone differs");
            let _ = format!("{typed:?}");
            drop_deep(author);
            drop_deep(again);
            drop_deep(compiled);
        }
        (Err(a), Err(b)) => {
            check_error("parameters", &a);
            assert_eq!(
                a, b,
                "parameters: from_json fails differently from compile_parameter_spec"
            );
        }
        (a, b) => panic!(
            "parameters: compile_parameter_spec ok = {}, ParameterSchemaSpec::from_json ok = {}",
            a.is_ok(),
            b.is_ok()
        ),
    }
});

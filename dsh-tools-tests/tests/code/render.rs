//! `run_code`'s rendering against the reference cases (`render.json`, produced by running
//! upstream's `run_code` on scripted runtime results): the text of a success, the canonical
//! value, the `CODE_RUN_FAILED` message of a failure, and the exact model-facing strings.

use dsh_tools::code::{
    CODE_RUN_FAILED, CodeFailure, CodeResult, FailureKind, RUN_CODE_DESCRIPTION, canonical_value,
    failure_message, render_success, run_code_call_card, run_code_output_schema,
    run_code_parameters,
};
use serde_json::{Map, Value, json};

const RENDER: &str = include_str!("../conformance/code-mode/render.json");

/// Decodes the escape objects of the conformance data (`{"$number": "1.0"}`).
fn decode(value: &Value) -> Value {
    match value {
        Value::Object(m) if m.len() == 1 && m.contains_key("$number") => {
            serde_json::from_str(m["$number"].as_str().unwrap()).unwrap()
        }
        Value::Object(m) => Value::Object(
            m.iter()
                .map(|(k, v)| (k.clone(), decode(v)))
                .collect::<Map<_, _>>(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(decode).collect()),
        other => other.clone(),
    }
}

/// `leaf` wrapped `depth` times as `[<prev>]`, built without recursion.
fn nested(depth: usize, leaf: Value) -> Value {
    let mut v = leaf;
    for _ in 0..depth {
        v = Value::Array(vec![v]);
    }
    v
}

#[test]
fn every_reference_result_renders_as_upstream_does() {
    let cases: Vec<Value> = serde_json::from_str(RENDER).unwrap();
    assert_eq!(cases.len(), 40);
    for case in cases {
        let name = case["name"].as_str().unwrap().to_owned();
        let logs: Vec<String> = case["logs"]
            .as_array()
            .unwrap()
            .iter()
            .map(|l| l.as_str().unwrap().to_owned())
            .collect();
        let value = match (case.get("result"), case.get("result_generate")) {
            (Some(r), _) => Some(decode(r)),
            (_, Some(g)) => Some(nested(
                g["depth"].as_u64().unwrap() as usize,
                decode(&g["leaf"]),
            )),
            _ => None,
        };
        let error = case.get("failure").map(|f| CodeFailure {
            kind: FailureKind::parse(f["kind"].as_str().unwrap()).unwrap(),
            message: f["message"].as_str().unwrap().to_owned(),
        });
        let result = CodeResult { logs, value, error };
        let is_error = case["is_error"].as_bool().unwrap();
        if is_error {
            let message = failure_message(&result).expect("a failure");
            assert_eq!(
                format!("Error: {message}"),
                case["text"].as_str().unwrap(),
                "{name}"
            );
            let expected = &case["error"];
            assert_eq!(message, expected["message"].as_str().unwrap(), "{name}");
            assert_eq!(expected["info"]["code"], CODE_RUN_FAILED, "{name}");
            assert_eq!(expected["info"]["name"], "CodeRunFailedError", "{name}");
        } else {
            assert!(failure_message(&result).is_none(), "{name}");
            let canonical = canonical_value(&result);
            let text = render_success(&canonical);
            if let Some(len) = case.get("text_length") {
                assert_eq!(text.len() as u64, len.as_u64().unwrap(), "{name}");
            }
            if let Some(expected) = case["text"].as_str() {
                if case.get("text_length").is_some() {
                    assert!(text.starts_with(expected) || text == expected, "{name}");
                } else {
                    assert_eq!(text, expected, "{name}");
                }
            }
            if let Some(expected) = case.get("value") {
                // Numeric equality of our value model: upstream's `1` is our `1.0` (spec §0).
                let expected = decode(expected);
                assert!(
                    dsh_tools::json::json_equal(&canonical, &expected),
                    "{name}: {canonical} != {expected}"
                );
            }
            dsh_tools::json::drop_deep(canonical);
        }
        if let Some(v) = result.value {
            dsh_tools::json::drop_deep(v);
        }
    }
}

#[test]
fn the_model_facing_strings_are_exact() {
    assert!(
        RUN_CODE_DESCRIPTION
            .starts_with("Execute a TypeScript program against the available tools.")
    );
    assert!(
        RUN_CODE_DESCRIPTION.ends_with("Image-bearing subtool results are attached after the run.")
    );
    let parameters = run_code_parameters();
    let keys: Vec<&String> = parameters["properties"]
        .as_object()
        .unwrap()
        .keys()
        .collect();
    assert_eq!(keys, ["code", "description"], "key order as specified");
    assert_eq!(parameters["required"], json!(["code", "description"]));
    assert!(
        parameters.get("additionalProperties").is_none(),
        "the root is open"
    );
    assert!(dsh_tools::schema::assert_supported(&parameters).is_ok());
    assert_eq!(
        dsh_tools::json::to_compact_string(&run_code_output_schema()),
        r#"{"type":"object","additionalProperties":false,"properties":{"logs":{"type":"array","items":{"type":"string"}},"result":{}},"required":["logs"]}"#
    );
    assert_eq!(
        run_code_call_card(&json!({"code": "return 1", "description": "  spaced "})),
        Some(
            json!({"card": "generic", "title": "  spaced ", "kind": "execute", "rawInput": "return 1"})
        )
    );
    assert_eq!(run_code_call_card(&json!({"code": 1})), None);
}

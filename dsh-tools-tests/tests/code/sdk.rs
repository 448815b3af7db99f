//! The SDK text against the reference cases (`ts_types.json`, produced by running upstream's
//! renderer; `ts_port` and `"origin": "port-extension"` entries are our documented divergences).

use dsh_tools::code::{SdkTool, render_sdk, schema_to_ts};
use serde_json::Value;

const TS_TYPES: &str = include_str!("../conformance/code-mode/ts_types.json");

/// Decodes the escape objects (`$number`, `$generate` nested_oneOf) without recursion for the
/// generated part.
fn decode(value: &Value) -> Value {
    match value {
        Value::Object(m) if m.len() == 1 && m.contains_key("$number") => {
            serde_json::from_str(m["$number"].as_str().unwrap()).unwrap()
        }
        Value::Object(m) if m.len() == 1 && m.contains_key("$generate") => {
            let g = &m["$generate"];
            assert_eq!(g["kind"], "nested_oneOf");
            let sibling = decode(&g["sibling"]);
            let mut v = decode(&g["leaf"]);
            for _ in 0..g["depth"].as_u64().unwrap() {
                // Moved in, not through `json!` (which serializes its operands recursively).
                let mut map = serde_json::Map::new();
                map.insert("oneOf".to_owned(), Value::Array(vec![v, sibling.clone()]));
                v = Value::Object(map);
            }
            v
        }
        Value::Object(m) => Value::Object(m.iter().map(|(k, v)| (k.clone(), decode(v))).collect()),
        Value::Array(items) => Value::Array(items.iter().map(decode).collect()),
        other => other.clone(),
    }
}

#[test]
fn every_reference_schema_and_sdk_renders_byte_for_byte() {
    let cases: Vec<Value> = serde_json::from_str(TS_TYPES).unwrap();
    assert_eq!(cases.len(), 75);
    let mut checked = 0;
    for case in cases {
        let name = case["name"].as_str().unwrap().to_owned();
        if case.get("js_only_inputs").is_some() {
            // Skipped by name: its input is JavaScript `undefined`, which no Rust value is.
            assert_eq!(name, "total_undefined");
            continue;
        }
        if let Some(tools) = case.get("tools") {
            let tools: Vec<Value> = tools.as_array().unwrap().iter().map(decode).collect();
            let sdk: Vec<SdkTool<'_>> = tools
                .iter()
                .map(|t| SdkTool {
                    name: t["name"].as_str().unwrap(),
                    description: t["description"].as_str().unwrap(),
                    parameters: &t["parameters"],
                    output: &t["output"],
                })
                .collect();
            assert_eq!(render_sdk(&sdk), case["sdk"].as_str().unwrap(), "{name}");
            drop(sdk);
            // One SDK case carries a 5,000-deep output type: freed without recursion.
            tools.into_iter().for_each(dsh_tools::json::drop_deep);
            checked += 1;
            continue;
        }
        let schema = decode(&case["schema"]);
        let indent = case["indent"].as_u64().unwrap() as usize;
        let expected = match (case.get("ts_port"), case.get("ts"), case.get("ts_generate")) {
            (Some(port), _, _) => port.as_str().unwrap().to_owned(),
            (None, Some(ts), _) => ts.as_str().unwrap().to_owned(),
            (None, None, Some(g)) => {
                let unit = g["unit"].as_str().unwrap();
                let mut s = g["head"].as_str().unwrap().to_owned();
                for _ in 0..g["count"].as_u64().unwrap() {
                    s.push_str(unit);
                }
                s
            }
            _ => panic!("{name}: no expectation"),
        };
        assert_eq!(schema_to_ts(&schema, indent), expected, "{name}");
        dsh_tools::json::drop_deep(schema);
        checked += 1;
    }
    assert_eq!(checked, 74);
}

/// `{type: array, items: …}` nested `depth` times around a string, built without recursion
/// (an object nest would indent every level: its text alone grows with the square of the depth).
fn deep_array(depth: usize) -> Value {
    let mut v = serde_json::json!({"type": "string"});
    for _ in 0..depth {
        let mut node = serde_json::Map::new();
        node.insert("type".to_owned(), Value::from("array"));
        node.insert("items".to_owned(), v);
        v = Value::Object(node);
    }
    v
}

#[test]
fn a_100000_deep_schema_renders_on_a_256_kib_stack() {
    std::thread::Builder::new()
        .stack_size(256 * 1024)
        .spawn(|| {
            let schema = deep_array(100_000);
            let text = schema_to_ts(&schema, 0);
            let sdk = render_sdk(&[SdkTool {
                name: "deep",
                description: "Deep.",
                parameters: &schema,
                output: &schema,
            }]);
            // Freed before any assertion: a panic would drop it recursively.
            dsh_tools::json::drop_deep(schema);
            assert!(
                text.starts_with("string[]"),
                "{}",
                &text[..40.min(text.len())]
            );
            assert_eq!(text.matches("[]").count(), 100_000);
            assert_eq!(sdk.matches("string[]").count(), 2, "arguments and output");
            assert_eq!(sdk.matches("[]").count(), 200_001, "and `JsonValue[]`");
        })
        .unwrap()
        .join()
        .expect("rendered without overflowing the stack");
}

#[test]
fn tool_output_map_is_typed_from_a_tools_rust_return_type() {
    use dsh_tools::registry::PresentationMode;
    use dsh_tools::testing::{FakeOutcome, FakeRuntime};
    use dsh_tools::{Registry, ToolError, tool};

    /// One match.
    #[derive(serde::Serialize, schemars::JsonSchema)]
    struct Hit {
        /// 1-based line number
        line: u32,
        text: String,
    }

    /// Find a pattern in a file.
    #[tool]
    async fn grep(
        /// The file
        path: String,
        /// What to find
        pattern: String,
    ) -> Result<Vec<Hit>, ToolError> {
        let _ = (path, pattern);
        Ok(Vec::new())
    }

    let registry = Registry::new();
    registry.register(Grep).unwrap().keep();
    registry.set_code_runtime(FakeRuntime::new(|_, _| async { FakeOutcome::Return(None) }));
    registry.set_presentation_mode(PresentationMode::Code);
    let prompt = registry.code_prompt(None).unwrap();
    let outputs = prompt
        .split("interface ToolOutputMap {")
        .nth(1)
        .and_then(|rest| rest.split("\n}").next())
        .unwrap();
    assert_eq!(
        outputs,
        // The output schema is open (a serialized struct is not closed). `u32` carries its
        // bounds, which are the type's own: not shown (issue 39.2).
        "\n  grep: ({\n    /** 1-based line number */\n    line: number;\n    text: string;\n  } & Record<string, JsonValue>)[];"
    );
    let args = prompt
        .split("interface ToolArgsMap {")
        .nth(1)
        .and_then(|rest| rest.split("\n}").next())
        .unwrap();
    assert!(
        args.contains(
            "  /** Find a pattern in a file. */\n  grep: {\n    /** The file */\n    path: string;"
        ),
        "{args}"
    );
}

/// Issue 39.2: a default reaches the model as `@default` (from the property or its first
/// branch; not null, not past 120 characters), and integer bounds show only when they are not
/// the type's own range.
#[test]
fn defaults_and_bounds_the_type_does_not_say_are_shown() {
    let schema = serde_json::json!({
        "type": "object",
        "additionalProperties": false,
        "properties": {
            "max_count": {"type": "integer", "minimum": 0, "maximum": 4294967295u64, "default": 10},
            "offset": {"oneOf": [{"type": "integer", "minimum": -9223372036854775808i64,
                                  "maximum": 9223372036854775807i64, "default": 0}, {"type": "null"}]},
            "page": {"type": "integer", "minimum": 1, "maximum": 4294967295u64},
            "mode": {"type": "string", "default": "fast"},
            "none": {"type": "string", "default": null},
            "big": {"type": "string", "default": "x".repeat(200)},
            "tags": {"type": "array", "items": {"type": "string"}, "default": ["a", "b"]}
        }
    });
    assert_eq!(
        schema_to_ts(&schema, 0),
        "{\n  /** @default 10 */\n  max_count?: number;\n  /** @default 0 */\n  offset?: number | null;\n  /** @minimum 1 @maximum 4294967295 */\n  page?: number;\n  /** @default \"fast\" */\n  mode?: string;\n  none?: string;\n  big?: string;\n  /** @default [\"a\",\"b\"] */\n  tags?: string[];\n}"
    );
}

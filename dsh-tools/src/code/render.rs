//! The `run_code` tool's model-facing strings and how its outcome reads (Code Mode spec §2.2,
//! §2.4–§2.7): the exact description and parameters, the output declaration, the rendered text
//! of a success, the `CODE_RUN_FAILED` message of a failure, and the call card.

use super::number::js_number;
use super::runtime::CodeResult;
use serde_json::{Map, Value, json};

/// The tool description (TypeScript flavor, exact).
pub const RUN_CODE_DESCRIPTION: &str = "Execute a TypeScript program against the available tools. Takes two required arguments: `code`, the BODY of an async function (erasable syntax only; top-level `await` and `return` work), and `description`, a short summary of what the program does. Call tools as `await tools.name(args)` per the declarations in the system prompt. Only what you print or return is program output — curate it. Image-bearing subtool results are attached after the run.";

/// The text when a run printed and returned nothing.
pub const NO_OUTPUT: &str = "(run_code completed with no output)";

/// The error code of a failed run.
pub const CODE_RUN_FAILED: &str = "CODE_RUN_FAILED";

/// The parameters schema (exact, key order as specified; the root is open).
pub fn run_code_parameters() -> Value {
    json!({
        "type": "object",
        "properties": {
            "code": {
                "type": "string",
                "description": "The program: the body of an async TypeScript function."
            },
            "description": {
                "type": "string",
                "description": "Clear, concise description of what this program does in active voice, 5-10 words (shown in the UI). Examples: \"Count TODO markers across packages\"; \"Read failing test and its fixture\"; \"Rename config key in every cordis.yml\"."
            }
        },
        "required": ["code", "description"]
    })
}

/// The output schema (compiled form, exact).
pub fn run_code_output_schema() -> Value {
    json!({
        "type": "object",
        "additionalProperties": false,
        "properties": {"logs": {"type": "array", "items": {"type": "string"}}, "result": {}},
        "required": ["logs"]
    })
}

/// The canonical value of a successful run: `{logs}` plus `result` when the program completed
/// with a value (`null` included).
pub fn canonical_value(result: &CodeResult) -> Value {
    let mut map = Map::new();
    map.insert(
        "logs".to_owned(),
        Value::Array(result.logs.iter().cloned().map(Value::String).collect()),
    );
    if let Some(value) = &result.value {
        map.insert("result".to_owned(), crate::json::clone_deep(value));
    }
    Value::Object(map)
}

/// The text a successful run renders (spec §2.5.1) from its canonical value.
///
/// ```
/// use dsh_tools::code::render_success;
/// use serde_json::json;
///
/// assert_eq!(render_success(&json!({"logs": ["printed"], "result": "returned"})), "printed\nreturned");
/// assert_eq!(render_success(&json!({"logs": [], "result": {"n": 1}})), "{\n  \"n\": 1\n}");
/// assert_eq!(render_success(&json!({"logs": []})), "(run_code completed with no output)");
/// ```
pub fn render_success(value: &Value) -> String {
    let logs: Vec<&str> = value
        .get("logs")
        .and_then(Value::as_array)
        .map(|l| l.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let joined = logs.join("\n");
    let result = match value.get("result") {
        None => String::new(),
        Some(Value::String(s)) => s.clone(),
        Some(other) => pretty(other),
    };
    let parts: Vec<&str> = [joined.as_str(), result.as_str()]
        .into_iter()
        .filter(|p| !p.is_empty())
        .collect();
    if parts.is_empty() {
        NO_OUTPUT.to_owned()
    } else {
        parts.join("\n")
    }
}

/// The message of a failed run (spec §2.6.1): `code run failed (<kind>): <message>`, then the
/// captured logs when there are any (even one empty entry).
pub fn failure_message(result: &CodeResult) -> Option<String> {
    let failure = result.error.as_ref()?;
    let mut message = format!("code run failed ({}): {}", failure.kind, failure.message);
    if !result.logs.is_empty() {
        message.push_str("\nCaptured output:\n");
        message.push_str(&result.logs.join("\n"));
    }
    Some(message)
}

/// The call card (spec §2.7.1): generic, titled by the description verbatim, kind `execute`,
/// the code as raw input.
pub fn run_code_call_card(args: &Value) -> Option<Value> {
    let title = args.get("description")?.as_str()?;
    let code = args.get("code")?.as_str()?;
    Some(json!({"card": "generic", "title": title, "kind": "execute", "rawInput": code}))
}

/// A non-string result as text (spec §2.5.2): `JSON.stringify(v, null, 2)` for the first five
/// levels, compact below, numbers in ECMAScript form. Iterative.
pub fn pretty(value: &Value) -> String {
    enum Task<'a> {
        Value(&'a Value, usize, bool),
        Text(String),
    }
    fn scalar(value: &Value, out: &mut String) {
        match value {
            Value::Null => out.push_str("null"),
            Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
            Value::Number(n) => match (n.as_i64(), n.as_u64()) {
                (Some(i), _) => out.push_str(&i.to_string()),
                (_, Some(u)) => out.push_str(&u.to_string()),
                _ => out.push_str(&js_number(n.as_f64().unwrap_or(0.0))),
            },
            Value::String(s) => crate::json::push_json_string(out, s),
            _ => {}
        }
    }
    let mut out = String::new();
    let mut stack = vec![Task::Value(value, 0, false)];
    while let Some(task) = stack.pop() {
        let (value, depth, compact) = match task {
            Task::Text(text) => {
                out.push_str(&text);
                continue;
            }
            Task::Value(v, d, c) => (v, d, c),
        };
        let compact = compact || 2 * (depth + 1) > 10;
        let indent = |n: usize| " ".repeat(2 * n);
        match value {
            Value::Array(items) if items.is_empty() => out.push_str("[]"),
            Value::Object(map) if map.is_empty() => out.push_str("{}"),
            Value::Array(items) => {
                out.push('[');
                let mut pending = Vec::with_capacity(items.len() * 2 + 1);
                for (i, item) in items.iter().enumerate() {
                    let sep = match (compact, i) {
                        (true, 0) => String::new(),
                        (true, _) => ",".to_owned(),
                        (false, 0) => format!("\n{}", indent(depth + 1)),
                        (false, _) => format!(",\n{}", indent(depth + 1)),
                    };
                    pending.push(Task::Text(sep));
                    pending.push(Task::Value(item, depth + 1, compact));
                }
                let close = if compact {
                    "]".to_owned()
                } else {
                    format!("\n{}]", indent(depth))
                };
                pending.push(Task::Text(close));
                stack.extend(pending.into_iter().rev());
            }
            Value::Object(map) => {
                out.push('{');
                let mut pending = Vec::with_capacity(map.len() * 2 + 1);
                for (i, (key, item)) in map.iter().enumerate() {
                    let mut sep = match (compact, i) {
                        (true, 0) => String::new(),
                        (true, _) => ",".to_owned(),
                        (false, 0) => format!("\n{}", indent(depth + 1)),
                        (false, _) => format!(",\n{}", indent(depth + 1)),
                    };
                    crate::json::push_json_string(&mut sep, key);
                    sep.push_str(if compact { ":" } else { ": " });
                    pending.push(Task::Text(sep));
                    pending.push(Task::Value(item, depth + 1, compact));
                }
                let close = if compact {
                    "}".to_owned()
                } else {
                    format!("\n{}}}", indent(depth))
                };
                pending.push(Task::Text(close));
                stack.extend(pending.into_iter().rev());
            }
            scalar_value => scalar(scalar_value, &mut out),
        }
    }
    out
}

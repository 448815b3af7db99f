//! Repairs of arguments that do not validate: what each does. The registry tries the ones
//! switched on ([`Registry::repair`](crate::Registry::repair)) before pre-execute.

use serde_json::{Map, Number, Value};
use std::sync::Arc;

/// A call whose arguments did not validate, as a repair hook
/// ([`Registry::on_invalid_call`](crate::Registry::on_invalid_call)) sees it.
#[derive(Debug)]
#[non_exhaustive]
pub struct InvalidCall<'a> {
    /// The tool's name.
    pub tool: &'a str,
    /// The arguments as the model sent them (a string: text that is not a JSON object).
    pub arguments: &'a Value,
    /// Every violation, as the model would read them.
    pub violations: &'a [String],
    /// The tool's parameters schema.
    pub parameters: &'a Value,
}

/// A repair hook: the repaired arguments, or `None` to leave the call as it is.
pub type RepairHook = Arc<dyn Fn(&InvalidCall<'_>) -> Option<Value> + Send + Sync>;

/// How deep [`Repair::ScalarStrings`] walks arguments and schema.
const MAX_REPAIR_DEPTH: usize = 32;

/// A repair the registry may make to a call's arguments that do not validate: each only
/// where the intent is unambiguous, never trusted (the result must validate, or the call goes
/// on with the model's arguments and fails as it would have).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Repair {
    /// No arguments (`null`, `""`) for a tool without required parameters: `{}`.
    EmptyArguments,
    /// The arguments as JSON text in a string, a Markdown code fence around it, trailing
    /// commas inside it: the object the text spells.
    TextArguments,
    /// A string where the parameters want a number, an integer or a boolean and nothing else
    /// (`"3"` for `integer`, `"true"` for `boolean`; `null` allowed beside it): the value the
    /// string spells exactly (`"3.5"` is no integer, `"yes"` no boolean).
    ScalarStrings,
}

impl Repair {
    /// The repair's name, as the model and the result's context read it.
    pub fn name(self) -> &'static str {
        match self {
            Repair::EmptyArguments => "empty-arguments",
            Repair::TextArguments => "text-arguments",
            Repair::ScalarStrings => "scalar-strings",
        }
    }

    /// The repaired arguments, or `None` where this repair does not apply.
    pub(crate) fn apply(self, arguments: &Value, parameters: &Value) -> Option<Value> {
        match self {
            Repair::EmptyArguments => {
                let empty = match arguments {
                    Value::Null => true,
                    Value::String(s) => s.trim().is_empty(),
                    _ => false,
                };
                let required = parameters
                    .get("required")
                    .and_then(Value::as_array)
                    .is_some_and(|r| !r.is_empty());
                (empty && !required).then(|| Value::Object(Map::new()))
            }
            Repair::TextArguments => {
                let Value::String(text) = arguments else {
                    return None;
                };
                let text = unfenced(text.trim());
                let value: Value = serde_json::from_str(text)
                    .ok()
                    .or_else(|| serde_json::from_str(&without_trailing_commas(text)).ok())?;
                value.is_object().then_some(value)
            }
            Repair::ScalarStrings => {
                let mut repaired = crate::json::clone_deep(arguments);
                if scalar_strings(&mut repaired, parameters, 0) {
                    Some(repaired)
                } else {
                    crate::json::free(repaired);
                    None
                }
            }
        }
    }
}

/// `text` without a Markdown code fence around it (```` ```json … ``` ````).
fn unfenced(text: &str) -> &str {
    let Some(rest) = text.strip_prefix("```") else {
        return text;
    };
    let Some(body) = rest.strip_suffix("```") else {
        return text;
    };
    // The info string (`json`) ends the first line.
    match body.find('\n') {
        Some(i) if !body[..i].contains(['{', '[']) => body[i + 1..].trim(),
        _ => body.trim(),
    }
}

/// `text` with every comma that only precedes a closing bracket or brace (whitespace between)
/// removed, outside strings.
fn without_trailing_commas(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut in_string = false;
    let mut escaped = false;
    let chars: Vec<char> = text.chars().collect();
    for (i, &c) in chars.iter().enumerate() {
        if in_string {
            out.push(c);
            match c {
                _ if escaped => escaped = false,
                '\\' => escaped = true,
                '"' => in_string = false,
                _ => {}
            }
            continue;
        }
        if c == '"' {
            in_string = true;
        } else if c == ','
            && chars[i + 1..]
                .iter()
                .find(|n| !n.is_whitespace())
                .is_some_and(|n| matches!(n, '}' | ']'))
        {
            continue;
        }
        out.push(c);
    }
    out
}

/// The one scalar type `schema` takes (beside `null`), if it takes exactly one: from its
/// `type`, or from the one branch of a `oneOf` / `anyOf` that is not `null` (how an `Option`
/// reads in the subset).
fn scalar_type(schema: &Value) -> Option<&str> {
    if let Some(branches) = schema
        .get("oneOf")
        .or_else(|| schema.get("anyOf"))
        .and_then(Value::as_array)
    {
        let mut others = branches
            .iter()
            .filter(|b| b.get("type").and_then(Value::as_str) != Some("null"));
        let only = others.next()?;
        return if others.next().is_none() {
            scalar_type(only)
        } else {
            None
        };
    }
    let types: Vec<&str> = match schema.get("type")? {
        Value::String(t) => vec![t.as_str()],
        Value::Array(ts) => ts.iter().filter_map(Value::as_str).collect(),
        _ => return None,
    };
    let mut non_null = types.into_iter().filter(|t| *t != "null");
    let only = non_null.next()?;
    (non_null.next().is_none() && matches!(only, "integer" | "number" | "boolean")).then_some(only)
}

/// The value `text` spells exactly as a `ty`.
fn spelled(text: &str, ty: &str) -> Option<Value> {
    match ty {
        "boolean" => match text {
            "true" => Some(Value::Bool(true)),
            "false" => Some(Value::Bool(false)),
            _ => None,
        },
        "integer" => text
            .parse::<i64>()
            .map(Value::from)
            .ok()
            .or_else(|| text.parse::<u64>().map(Value::from).ok()),
        "number" => {
            let number: Number = serde_json::from_str(text).ok()?;
            Some(Value::Number(number))
        }
        _ => None,
    }
}

/// Replaces, in `value`, the strings `schema` wants as numbers, integers or booleans; whether
/// any was.
fn scalar_strings(value: &mut Value, schema: &Value, depth: usize) -> bool {
    if depth > MAX_REPAIR_DEPTH {
        return false;
    }
    if let (Value::String(text), Some(ty)) = (&*value, scalar_type(schema))
        && let Some(repaired) = spelled(text, ty)
    {
        *value = repaired;
        return true;
    }
    let mut changed = false;
    match value {
        Value::Object(map) => {
            let Some(properties) = schema.get("properties").and_then(Value::as_object) else {
                return false;
            };
            for (key, item) in map.iter_mut() {
                if let Some(property) = properties.get(key) {
                    changed |= scalar_strings(item, property, depth + 1);
                }
            }
        }
        Value::Array(items) => {
            let Some(item_schema) = schema.get("items").filter(|s| s.is_object()) else {
                return false;
            };
            for item in items {
                changed |= scalar_strings(item, item_schema, depth + 1);
            }
        }
        _ => {}
    }
    changed
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn each_repair_does_only_what_it_says() {
        let params = json!({"type": "object", "properties": {
            "n": {"type": "integer"}, "x": {"type": ["number", "null"]}, "ok": {"type": "boolean"},
            "s": {"type": "string"}, "u": {"anyOf": [{"type": "integer"}, {"type": "string"}]},
            "list": {"type": "array", "items": {"type": "integer"}}}});
        let fixed = Repair::ScalarStrings
            .apply(
                &json!({"n": "3", "x": "2.5", "ok": "true", "s": "4", "u": "5", "list": ["1", "x"]}),
                &params,
            )
            .unwrap();
        assert_eq!(
            fixed,
            json!({"n": 3, "x": 2.5, "ok": true, "s": "4", "u": "5", "list": [1, "x"]})
        );
        assert_eq!(
            Repair::ScalarStrings.apply(&json!({"n": "3.5", "ok": "yes"}), &params),
            None
        );
        assert_eq!(
            Repair::TextArguments.apply(&json!("```json\n{\"a\": [1, 2,],}\n```"), &params),
            Some(json!({"a": [1, 2]}))
        );
        assert_eq!(
            Repair::TextArguments.apply(&json!("{\"a\": \"x,}\"}"), &params),
            Some(json!({"a": "x,}"}))
        );
        assert_eq!(Repair::TextArguments.apply(&json!("[1]"), &params), None);
        assert_eq!(
            Repair::EmptyArguments.apply(&json!(""), &params),
            Some(json!({}))
        );
        let required = json!({"type": "object", "required": ["n"]});
        assert_eq!(Repair::EmptyArguments.apply(&json!(null), &required), None);
    }
}

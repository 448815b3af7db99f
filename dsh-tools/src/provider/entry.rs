//! A provider's tool entry for one exported schema: the JSON shape each provider's API takes a
//! function tool in (OpenAI Chat and Responses, Anthropic, Gemini in both schema forms).

use super::dialect::{Dialect, Provider};
use serde_json::{Map, Value};

/// An object from its entries (moved in: `json!` would re-serialize the parameters).
fn object<const N: usize>(entries: [(&str, Value); N]) -> Value {
    let mut map = Map::with_capacity(N);
    for (k, v) in entries {
        map.insert(k.to_owned(), v);
    }
    Value::Object(map)
}

/// The provider's tool entry for one exported schema.
pub(super) fn entry(dialect: Dialect, name: &str, description: &str, parameters: Value) -> Value {
    let strict = dialect.is_strict();
    let name = Value::String(name.to_owned());
    let description = Value::String(description.to_owned());
    match dialect.provider() {
        Provider::OpenAiChat | Provider::DeepSeek => {
            let mut function = Map::new();
            function.insert("name".to_owned(), name);
            function.insert("description".to_owned(), description);
            function.insert("parameters".to_owned(), parameters);
            if strict || dialect.provider() == Provider::OpenAiChat {
                function.insert("strict".to_owned(), Value::Bool(strict));
            }
            object([
                ("type", Value::String("function".to_owned())),
                ("function", Value::Object(function)),
            ])
        }
        Provider::OpenAiResponses => object([
            ("type", Value::String("function".to_owned())),
            ("name", name),
            ("description", description),
            ("parameters", parameters),
            ("strict", Value::Bool(strict)),
        ]),
        Provider::Anthropic => {
            let mut tool = Map::new();
            tool.insert("name".to_owned(), name);
            tool.insert("description".to_owned(), description);
            tool.insert("input_schema".to_owned(), parameters);
            if strict {
                tool.insert("strict".to_owned(), Value::Bool(true));
            }
            Value::Object(tool)
        }
        Provider::Gemini => object([
            ("name", name),
            ("description", description),
            ("parametersJsonSchema", parameters),
        ]),
        Provider::GeminiOpenApi => object([
            ("name", name),
            ("description", description),
            ("parameters", parameters),
        ]),
    }
}

//! Deferred tools in a provider export: which form the search takes, the provider's own
//! tool-search entries, and a search's result in the provider's native shape.

use super::dialect::Provider;
use crate::definition::Namespace;
use serde_json::{Map, Value, json};

/// How an export with deferred tools lets the model find them (see
/// [`ProviderExport::provider_tools_searched`](crate::provider::ProviderExport::provider_tools_searched)).
///
/// | form | OpenAI Responses | Anthropic | other dialects |
/// |---|---|---|---|
/// | `Function` | `tool_search` function | `tool_search` tool | `tool_search` function |
/// | `Native` (default) | `{"type": "tool_search", "execution": "client"}`; deferred tools sent only in the `tool_search_output` that loads them | deferred tools with `"defer_loading": true`; `tool_search` answers with `tool_reference` blocks | as `Function` |
/// | `Hosted` | every tool sent, the deferred ones `"defer_loading": true` (in a `namespace` entry when they have one), plus `{"type": "tool_search"}` | every tool sent, the deferred ones `"defer_loading": true`, plus `tool_search_tool_bm25_20251119` | as `Function` |
///
/// `Function` and `Native` search with the registry's index, so a search never reveals a tool
/// the caller's [scope rules](crate::Registry::scope_rules) forbid; under `Function` the host
/// keeps what a search loaded ([`LoadedTools`](crate::registry::LoadedTools)), under the
/// other forms the provider does (the loading result stays in the conversation). Under
/// `Hosted` the provider ranks by its own index: the tools it sees are those of the exported
/// view.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ToolSearch {
    /// Our `tool_search` as an ordinary function tool, in every dialect.
    Function,
    /// The provider's deferral, searched by our index, where the dialect has it (OpenAI
    /// Responses, Anthropic); `Function` elsewhere.
    #[default]
    Native,
    /// The provider's deferral and its own search, where the dialect has them; `Function`
    /// elsewhere.
    Hosted,
}

/// Anthropic's server-side BM25 tool-search tool (its `name` and `type`).
pub(super) const ANTHROPIC_BM25: (&str, &str) =
    ("tool_search_tool_bm25", "tool_search_tool_bm25_20251119");

impl ToolSearch {
    /// The form `provider` gets: `Native` and `Hosted` only where it has native deferral.
    pub(super) fn for_provider(self, provider: Provider) -> ToolSearch {
        match provider {
            Provider::Anthropic | Provider::OpenAiResponses => self,
            _ => ToolSearch::Function,
        }
    }
}

/// Whether `form` puts the provider's own tool-search entry in place of our `tool_search`'s
/// (OpenAI Responses `Native` and `Hosted`, Anthropic `Hosted`).
pub(super) fn provider_searches(provider: Provider, form: ToolSearch) -> bool {
    matches!(
        (provider, form),
        (
            Provider::OpenAiResponses,
            ToolSearch::Native | ToolSearch::Hosted
        ) | (Provider::Anthropic, ToolSearch::Hosted)
    )
}

/// The provider's own tool-search entry where [`provider_searches`] (`description` and
/// `parameters` are `tool_search`'s, read by a client-executed search).
pub(super) fn search_entry(
    provider: Provider,
    form: ToolSearch,
    description: &str,
    parameters: Value,
) -> Value {
    match (provider, form) {
        (Provider::OpenAiResponses, ToolSearch::Native) => {
            // Moved in, not re-serialized as `json!` would.
            let mut entry = Map::new();
            entry.insert("type".to_owned(), json!("tool_search"));
            entry.insert("execution".to_owned(), json!("client"));
            entry.insert("description".to_owned(), json!(description));
            entry.insert("parameters".to_owned(), parameters);
            Value::Object(entry)
        }
        (Provider::OpenAiResponses, _) => {
            crate::json::free(parameters);
            json!({"type": "tool_search"})
        }
        _ => {
            crate::json::free(parameters);
            json!({"type": ANTHROPIC_BM25.1, "name": ANTHROPIC_BM25.0})
        }
    }
}

/// Marks a tool entry deferred (`"defer_loading": true`, after the fields it has).
pub(super) fn mark_deferred(entry: &mut Value) {
    if let Value::Object(map) = entry {
        map.insert("defer_loading".to_owned(), Value::Bool(true));
    }
}

/// OpenAI Responses entries with the tools of one namespace grouped: each entry of `entries`
/// that has a namespace goes into a `{"type": "namespace", "name", "description", "tools"}`
/// entry at the place of the namespace's first tool; the others stay where they are.
pub(super) fn grouped(entries: Vec<(Value, Option<&Namespace>)>) -> Vec<Value> {
    let mut out: Vec<Value> = Vec::with_capacity(entries.len());
    // Namespace name → its entry's place in `out`.
    let mut at: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
    for (entry, namespace) in entries {
        let Some(namespace) = namespace else {
            out.push(entry);
            continue;
        };
        match at.get(namespace.name()) {
            Some(&i) => {
                if let Some(Value::Array(tools)) = out[i].get_mut("tools") {
                    tools.push(entry);
                }
            }
            None => {
                at.insert(namespace.name(), out.len());
                // Built by hand: `json!` would copy the entry by serializing it again.
                let mut group = Map::new();
                group.insert("type".to_owned(), json!("namespace"));
                group.insert("name".to_owned(), json!(namespace.name()));
                group.insert("description".to_owned(), json!(namespace.description()));
                group.insert("tools".to_owned(), Value::Array(vec![entry]));
                out.push(Value::Object(group));
            }
        }
    }
    out
}

/// The names a successful `tool_search` result found (its `tools[].name`), in order.
pub(super) fn found_names(value: Option<&Value>) -> Vec<&str> {
    value
        .and_then(|v| v.get("tools"))
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|t| t.get("name").and_then(Value::as_str))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn namespaces_group_at_their_first_tool() {
        let crm = Namespace::new("crm", "Customers");
        let entries = vec![
            (json!({"name": "a"}), Some(&crm)),
            (json!({"name": "b"}), None),
            (json!({"name": "c"}), Some(&crm)),
        ];
        assert_eq!(
            grouped(entries),
            [
                json!({"type": "namespace", "name": "crm", "description": "Customers",
                       "tools": [{"name": "a"}, {"name": "c"}]}),
                json!({"name": "b"}),
            ]
        );
    }

    #[test]
    fn only_two_providers_have_native_forms() {
        for provider in Provider::ALL {
            let native = matches!(provider, Provider::Anthropic | Provider::OpenAiResponses);
            assert_eq!(
                ToolSearch::Hosted.for_provider(provider) == ToolSearch::Hosted,
                native,
                "{provider:?}"
            );
        }
    }
}

//! Large catalogs (issue 34): deferred tools, the search index, `tool_search` and what a
//! conversation loads; hostile queries and catalogs; the ranking on a real catalog.

mod catalog;
#[cfg(feature = "code")]
mod code;
mod deferred;
mod hostile;
mod providers;
mod visibility;

use dsh_tools::*;
use serde_json::{Value, json};

/// A tool answering its own name.
pub(crate) fn tool(name: &str, description: &str) -> ToolDefinition {
    let answer = name.to_owned();
    ToolDefinition::new(
        name,
        description,
        json!({"type": "object"}),
        OutputDecl::text(),
        move |_, _| {
            let answer = answer.clone();
            async move { Ok(json!(answer)) }
        },
    )
}

/// Runs `name` with `arguments` in `agent`'s scope.
pub(crate) async fn call(
    registry: &Registry,
    agent: Option<&str>,
    name: &str,
    arguments: Value,
) -> ToolExecutionResult {
    let mut input = ToolExecutionInput::new("c1", name, arguments, CancellationToken::new());
    if let Some(agent) = agent {
        input = input.agent(agent);
    }
    registry.execute(input).await
}

/// The names of what is presented to `agent` having loaded `loaded`.
pub(crate) fn presented(
    registry: &Registry,
    agent: Option<&str>,
    loaded: &registry::LoadedTools,
) -> Vec<String> {
    let agent = agent.map(AgentId::new);
    registry
        .presented_schemas(agent.as_ref(), loaded)
        .unwrap()
        .into_iter()
        .map(|s| s.name)
        .collect()
}

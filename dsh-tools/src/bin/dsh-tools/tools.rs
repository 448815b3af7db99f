//! `dsh-tools tools search`: rank a tool list for a query with the index the registry uses, so
//! authors of servers in any language can see which of their tools a model's search finds.

use crate::io::{EMPTY_OBJECT, InputError, out, printable, read_json};
use clap::Subcommand;
use dsh_tools::search::{Document, Index};
use serde_json::{Value, json};

#[derive(Subcommand)]
pub(crate) enum ToolsCommand {
    /// Rank the tools of a JSON array of `{name, description, parameters?, namespace?}` (the
    /// shape `code sdk` takes) for QUERY; print one name a line, best first. Exit 0 when
    /// something matched, 1 when nothing did.
    Search {
        /// At most this many results.
        #[arg(long, value_name = "N", default_value_t = 10)]
        limit: usize,
        /// Print `[{name, namespace?, score, matched}]` instead.
        #[arg(long)]
        json: bool,
        /// The tools (`-` for standard input).
        tools: String,
        /// What to search for.
        query: String,
    },
}

pub(crate) fn run(command: ToolsCommand, stdin_used: &mut bool) -> Result<u8, InputError> {
    let ToolsCommand::Search {
        limit,
        json: as_json,
        tools,
        query,
    } = command;
    let doc = read_json(&tools, stdin_used)?;
    let Some(items) = doc.as_array() else {
        return Err(InputError(
            "TOOLS must be a JSON array of {name, description, parameters?, namespace?}".into(),
        ));
    };
    let mut index = Index::new();
    for (i, item) in items.iter().enumerate() {
        let name = item.get("name").and_then(Value::as_str);
        let description = item.get("description").and_then(Value::as_str);
        let namespace = match item.get("namespace") {
            None | Some(Value::Null) => Some(""),
            Some(value) => value.as_str(),
        };
        let (Some(name), Some(description), Some(namespace)) = (name, description, namespace)
        else {
            return Err(InputError(format!(
                "TOOLS[{i}] needs a string \"name\" and a string \"description\" (\"namespace\", if given, a string)"
            )));
        };
        let parameters = item.get("parameters").unwrap_or(&EMPTY_OBJECT);
        index.insert(
            i,
            Document {
                name,
                namespace,
                description,
                parameters,
            },
        );
    }
    let hits = index.search(&query, limit, |_| true);
    if as_json {
        let list: Vec<Value> = hits
            .iter()
            .map(|hit| {
                let item = &items[hit.key];
                let mut entry = json!({
                    "name": item["name"],
                    "score": f64::from(hit.score),
                    "matched": hit.matched.as_str(),
                });
                if let Some(namespace) = item.get("namespace").filter(|n| n.is_string()) {
                    entry["namespace"] = namespace.clone();
                }
                entry
            })
            .collect();
        out!("{}", dsh_tools::json::to_compact_string(&Value::from(list)));
    } else {
        for hit in &hits {
            let name = items[hit.key]["name"].as_str().unwrap_or_default();
            out!("{}", printable(name));
        }
    }
    Ok(u8::from(hits.is_empty()))
}

//! Tools described by someone else (an MCP server's `tools/list`, a JSON file), as the SDK shows
//! them: one conversion for the importer and for `dsh-tools code sdk`, so that what the CLI
//! prints is what a program is shown.

use crate::schema::bridge::{BridgeProblem, from_foreign_lossy};
use serde_json::{Value, json};

/// A foreign tool's schemas as Code Mode's SDK renders them, and what the conversion left out.
#[derive(Clone, Debug, PartialEq)]
pub struct ForeignTool {
    /// The parameters, in the subset (never stricter than the original).
    pub parameters: Value,
    /// The output, what a program's call resolves to: the converted output schema (`{}` when
    /// there is none); for an MCP tool without an `outputSchema`, the call's result
    /// `{content, structuredContent?}` (rendered `McpResult`).
    pub output: Value,
    /// What was left out, each under the schema it came from.
    pub dropped: Vec<Dropped>,
}

/// One thing the SDK conversion left out of a foreign tool's schema.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Dropped {
    /// Which schema: `"parameters"` or `"output"`.
    pub schema: &'static str,
    /// The JSON-pointer path of the node (`#/properties/tags`).
    pub path: String,
    /// What was left out and why.
    pub message: String,
}

impl std::fmt::Display for Dropped {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} {}: {}", self.schema, self.path, self.message)
    }
}

/// The title that marks an MCP call's result schema.
pub(crate) const MCP_RESULT: &str = "McpResult";

/// What an imported MCP tool's call resolves to (`mcp::map::remote_value`), around its
/// converted `outputSchema` (`{}`: none).
pub(crate) fn mcp_result_schema(structured: Value) -> Value {
    json!({
        // The SDK renders a schema of this title and shape as `McpResult<T>` (`prompt::mcp_result`).
        "title": MCP_RESULT,
        "type": "object",
        "properties": {
            "content": {"type": "array", "items": {"type": "object"}},
            "structuredContent": structured,
        },
        "required": ["content"],
    })
}

/// Converts a foreign tool's schemas for the SDK
/// ([`from_foreign_lossy`]: formats, examples and deprecation as doc tags, what the subset
/// cannot say left out and listed, never a whole-tool `unknown`). `mcp`: the tool is an MCP
/// server's, whose call resolves to its structured value when it declares an `outputSchema`
/// ([`mcp_program_value`]) and to its whole result otherwise.
///
/// ```
/// use dsh_tools::code::{foreign_tool, schema_to_ts};
/// use serde_json::json;
///
/// let input = json!({
///     "$schema": "http://json-schema.org/draft-07/schema#",
///     "type": "object",
///     "properties": {"max_count": {"type": "integer", "default": 10}, "since": {"type": ["string", "null"], "format": "date"}},
///     "additionalProperties": false
/// });
/// let tool = foreign_tool(&input, None, true);
/// assert!(tool.dropped.is_empty());
/// assert!(tool.output.get("title").is_some(), "no outputSchema: the whole result");
/// assert_eq!(
///     schema_to_ts(&tool.parameters, 0),
///     "{\n  /** @default 10 */\n  max_count?: number;\n  /** @format date */\n  since?: string | null;\n}"
/// );
/// ```
pub fn foreign_tool(parameters: &Value, output: Option<&Value>, mcp: bool) -> ForeignTool {
    let mut dropped = Vec::new();
    let mut take = |schema: &'static str, problems: Vec<BridgeProblem>, unlisted: usize| {
        dropped.extend(problems.into_iter().map(|p| Dropped {
            schema,
            path: p.path().to_owned(),
            message: p.message().to_owned(),
        }));
        if unlisted > 0 {
            dropped.push(Dropped {
                schema,
                path: "#".to_owned(),
                message: format!("and {unlisted} more (not listed)"),
            });
        }
    };
    let input = from_foreign_lossy(parameters);
    take("parameters", input.dropped, input.unlisted);
    let output = match output {
        Some(schema) => {
            let shown = from_foreign_lossy(schema);
            take("output", shown.dropped, shown.unlisted);
            with_named(shown.schema, shown.named)
        }
        None if mcp => mcp_result_schema(json!({})),
        None => json!({}),
    };
    ForeignTool {
        parameters: with_named(input.schema, input.named),
        output,
        dropped,
    }
}

/// The key of an SDK view's root under which its recursive types travel to the renderer
/// (`[{pointer, name, schema}]`); `sdk` declares them and takes the key off before rendering.
pub(crate) const NAMED_TYPES: &str = "$sdkTypes";

/// `schema` with `named` under [`NAMED_TYPES`] (unchanged when there are none).
fn with_named(mut schema: Value, named: Vec<crate::schema::bridge::NamedType>) -> Value {
    if let (false, Value::Object(map)) = (named.is_empty(), &mut schema) {
        let list = named
            .into_iter()
            .map(|n| json!({"pointer": n.pointer, "name": n.name, "schema": n.schema}))
            .collect();
        map.insert(NAMED_TYPES.to_owned(), Value::Array(list));
    }
    schema
}

/// What a program receives from an imported MCP tool that declares an `outputSchema` (issue
/// 39.8: the value the same tool hands a program in-process): the result's
/// `structuredContent`; without one (a server of the 2025 revisions sends none for a value that
/// is not an object), its one text block, parsed when it is JSON (the serialized value the
/// revisions ask for beside structured content) or as the string; otherwise `None`, the whole
/// result.
///
/// ```
/// use dsh_tools::code::mcp_program_value;
/// use serde_json::json;
///
/// let result = json!({"content": [{"type": "text", "text": "{\"n\":1}"}], "structuredContent": {"n": 1}});
/// assert_eq!(mcp_program_value(&result), Some(json!({"n": 1})));
/// assert_eq!(mcp_program_value(&json!({"content": [{"type": "text", "text": "42"}]})), Some(json!(42)));
/// assert_eq!(mcp_program_value(&json!({"content": [{"type": "text", "text": "hi"}]})), Some(json!("hi")));
/// assert_eq!(mcp_program_value(&json!({"content": []})), None);
/// ```
pub fn mcp_program_value(result: &Value) -> Option<Value> {
    if let Some(structured) = result.get("structuredContent") {
        return Some(crate::json::clone_deep(structured));
    }
    let [block] = result.get("content")?.as_array()?.as_slice() else {
        return None;
    };
    if block.get("type")?.as_str()? != "text" {
        return None;
    }
    let text = block.get("text")?.as_str()?;
    // serde_json refuses nesting past 128 levels: deep text stays a string.
    Some(
        serde_json::from_str::<Value>(text)
            .ok()
            .filter(crate::json::is_lossless)
            .unwrap_or_else(|| Value::String(text.to_owned())),
    )
}

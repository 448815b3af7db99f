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
    /// The output: for an MCP tool, `{content, structuredContent?}` around the converted
    /// `outputSchema` (what an imported tool's call resolves to); otherwise the converted output
    /// schema, `{}` when there is none.
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
        // The SDK renders a schema of this title and shape as `McpResult<T>` (`sdk::mcp_result`).
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
/// cannot say left out and listed, never a whole-tool `unknown`). `mcp`: the output is an MCP
/// `outputSchema`, wrapped as an imported call's value is.
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
    let structured = match output {
        Some(schema) => {
            let shown = from_foreign_lossy(schema);
            take("output", shown.dropped, shown.unlisted);
            shown.schema
        }
        None => json!({}),
    };
    ForeignTool {
        parameters: input.schema,
        output: if mcp {
            mcp_result_schema(structured)
        } else {
            structured
        },
        dropped,
    }
}

//! The SDK text a Code Mode prompt carries (spec §5): the exact instructions upstream uses, the
//! `tools:sdk` section (each tool's parameters and output as TypeScript, the recursive types of
//! foreign schemas and MCP results declared once), `tools:deferred`, `tools:overlap`, and one
//! tool's declaration as `tools.$describe` returns it.

use super::sdk::{Names, doc_line, js_space, key, schema_to_ts, schema_to_ts_named};
use serde_json::Value;

/// The languages this crate has `run_code` strings and an SDK renderer for (Code Mode spec
/// §2.2.3, §6.3): TypeScript only.
pub const SDK_LANGUAGES: &[&str] = &["typescript"];

/// The instructions opening the SDK section (exact).
pub const SDK_INSTRUCTIONS: &str = "## Writing code for run_code

`run_code` takes two required arguments: `code` — the body of an async TypeScript function (erasable syntax only — no `enum` or namespaces; type annotations are advisory, the code runs type-stripped) — and `description`, a short summary of what the program does. Inside the program:

- Call tools as `await tools.name(args)` — quoted access for exotic names: `tools[\"my-tool\"](args)`. Every call resolves to the tool's typed canonical JSON value. Tool arguments must be lossless JSON.
- A FAILED tool call rejects with `ToolCallError`, whose `toolName` identifies the failed tool and whose `message` is human-readable — `try/catch` it to handle and continue.
- Independent read-only calls MAY overlap under `Promise.all` (safe calls run concurrently; mutating calls run alone, in submission order). Sequence dependent work with `await`.
- Emit results with `return` and/or `console.log(...)`. Only what you print or return is program output. A successful tool result containing an image is attached after the run so you can inspect it on the next step; every other intermediate result stays out of the conversation, so extract just what you need.

The available tools:";

/// The text of the `tools:code-only` section under mode `code` (exact).
pub const CODE_ONLY_INSTRUCTION: &str = "`run_code` is the only tool you can call directly — a tool call naming any other tool fails. Reach every tool the SDK declares below from inside the program.";

const JSON_VALUE: &str = "type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue }";

/// What an imported MCP tool's call resolves to, declared once when a tool returns it (issue
/// 39.2: the five content blocks typed, not `JsonValue`).
const MCP_TYPES: &str = "type McpContent = (
  | { type: \"text\"; text: string }
  | { type: \"image\"; data: string; mimeType: string }
  | { type: \"audio\"; data: string; mimeType: string }
  | { type: \"resource_link\"; uri: string; name: string; title?: string; description?: string; mimeType?: string; size?: number }
  | { type: \"resource\"; resource: { uri: string; mimeType?: string; text?: string; blob?: string } }
) & { annotations?: JsonValue; _meta?: { [key: string]: JsonValue } }

/** An MCP tool's result: its content blocks, and its structured value when it declares one. */
interface McpResult<T = JsonValue> {
  content: McpContent[];
  structuredContent?: T;
}";

/// The structured part of an MCP call's result schema (`code::foreign_tool`'s wrapper: titled
/// `McpResult`, `content` an array of objects, `structuredContent`): `McpResult<T>`'s `T`.
fn mcp_result(schema: &Value) -> Option<&Value> {
    let map = schema.as_object()?;
    if map.get("title").and_then(Value::as_str) != Some(super::foreign::MCP_RESULT)
        || map.get("type").and_then(Value::as_str) != Some("object")
    {
        return None;
    }
    let properties = map.get("properties")?.as_object()?;
    let content = properties.get("content")?;
    let items_are_objects = content.get("type").and_then(Value::as_str) == Some("array")
        && content.pointer("/items/type").and_then(Value::as_str) == Some("object");
    if properties.len() != 2 || !items_are_objects {
        return None;
    }
    properties.get("structuredContent")
}

/// One tool as the SDK declares it.
#[derive(Clone, Copy, Debug)]
pub struct SdkTool<'a> {
    /// The tool's name.
    pub name: &'a str,
    /// Its description (the doc line).
    pub description: &'a str,
    /// The projected parameters schema.
    pub parameters: &'a Value,
    /// The declared output schema (`{}` renders `JsonValue`).
    pub output: &'a Value,
}

/// The complete `tools:sdk` section for `tools` (spec §5.2): instructions, `JsonValue`, the two
/// maps in UTF-16 name order, `ToolName`, `ToolCallError` and `tools`.
///
/// An output schema that is an imported MCP tool's result (as [`foreign_tool`](super::foreign_tool)
/// writes it, titled `McpResult`) renders as `McpResult<T>` (or `McpResult` without an
/// `outputSchema`), and the section then declares `McpContent`, the five MCP content blocks, and
/// `McpResult` once, after `JsonValue` (issue 39.2; ours, not upstream's).
pub fn render_sdk(tools: &[SdkTool<'_>]) -> String {
    let mut sorted: Vec<&SdkTool<'_>> = tools.iter().collect();
    sorted.sort_by(|a, b| a.name.encode_utf16().cmp(b.name.encode_utf16()));
    let mut args = Vec::new();
    let mut outputs = Vec::new();
    let mut mcp = false;
    let mut types = Declared::default();
    for tool in &sorted {
        if let Some(doc) = doc_line(Some(tool.description), &[], 1) {
            args.push(doc);
        }
        args.push(format!(
            "  {}: {};",
            key(tool.name),
            types.render(tool.parameters, 1)
        ));
        let (output, is_mcp) = types.output(tool.output, 1);
        mcp |= is_mcp;
        outputs.push(format!("  {}: {output};", key(tool.name)));
    }
    let map = |name: &str, lines: Vec<String>| {
        if lines.is_empty() {
            format!("interface {name} {{}}")
        } else {
            format!("interface {name} {{\n{}\n}}", lines.join("\n"))
        }
    };
    let declarations = [
        map("ToolArgsMap", args),
        map("ToolOutputMap", outputs),
        "type ToolName = keyof ToolOutputMap".to_owned(),
        "declare class ToolCallError extends Error {\n  readonly name: \"ToolCallError\";\n  readonly toolName: ToolName;\n}".to_owned(),
        "declare const tools: {\n  [K in ToolName]: (args: ToolArgsMap[K]) => Promise<ToolOutputMap[K]>;\n}".to_owned(),
    ]
    .join("\n\n");
    let mut head = String::from(JSON_VALUE);
    if mcp {
        head.push_str("\n\n");
        head.push_str(MCP_TYPES);
    }
    for text in types.texts {
        head.push_str("\n\n");
        head.push_str(&text);
    }
    format!("{SDK_INSTRUCTIONS}\n\n```ts\n{head}\n\n{declarations}\n```")
}

/// The recursive types of foreign schemas (issue 39.1), declared once each as
/// `type Name = …` and referred to by name where they recur. Two views that name different
/// types alike get distinct names (`Tree`, `Tree_2`); the same type twice is declared once.
#[derive(Default)]
struct Declared {
    /// `(name, schema)` of each type declared.
    seen: Vec<(String, Value)>,
    /// Their declarations, in the order first met.
    texts: Vec<String>,
}

impl Declared {
    /// An output schema as TypeScript: `McpResult<T>` (or `McpResult`) for an MCP result, and
    /// whether it was one.
    fn output(&mut self, output: &Value, indent: usize) -> (String, bool) {
        match mcp_result(output) {
            Some(structured) => match self.render(structured, indent).as_str() {
                "JsonValue" => ("McpResult".to_owned(), true),
                text => (format!("McpResult<{text}>"), true),
            },
            None => (self.render(output, indent), false),
        }
    }

    /// `view` as TypeScript: its recursive types (under `$sdkTypes`) declared, their references
    /// named.
    fn render(&mut self, view: &Value, indent: usize) -> String {
        let Some(list) = view
            .get(super::foreign::NAMED_TYPES)
            .and_then(Value::as_array)
        else {
            return schema_to_ts(view, indent);
        };
        let mut names = Names::new();
        let mut fresh: Vec<(String, &Value)> = Vec::new();
        for entry in list {
            let (Some(pointer), Some(base), Some(schema)) = (
                entry.get("pointer").and_then(Value::as_str),
                entry.get("name").and_then(Value::as_str),
                entry.get("schema"),
            ) else {
                continue;
            };
            let same = self.seen.iter().find(|(n, s)| {
                (n == base || n.strip_prefix(base).is_some_and(|r| r.starts_with('_')))
                    && s == schema
            });
            let name = match same {
                Some((name, _)) => name.clone(),
                None => {
                    let mut name = base.to_owned();
                    let mut n = 1;
                    while self.seen.iter().any(|(taken, _)| *taken == name)
                        || fresh.iter().any(|(taken, _)| *taken == name)
                    {
                        n += 1;
                        name = format!("{base}_{n}");
                    }
                    fresh.push((name.clone(), schema));
                    name
                }
            };
            names.insert(pointer.to_owned(), name);
        }
        for (name, schema) in fresh {
            let text = schema_to_ts_named(schema, 0, &names);
            self.texts.push(format!("type {name} = {text}"));
            self.seen.push((name, schema.clone()));
        }
        let mut bare = view.clone();
        if let Value::Object(map) = &mut bare {
            map.shift_remove(super::foreign::NAMED_TYPES);
        }
        schema_to_ts_named(&bare, indent, &names)
    }
}

/// The member of `tools` a program searches with, where the view defers tools (reserved).
pub const PROGRAM_SEARCH: &str = "$search";
/// The member of `tools` that returns one tool's declaration (reserved).
pub const PROGRAM_DESCRIBE: &str = "$describe";

/// A tool the SDK names without declaring (deferred: a program finds it with `tools.$search`).
#[derive(Clone, Copy, Debug)]
pub struct DeferredSdkTool<'a> {
    /// The tool's name.
    pub name: &'a str,
    /// Its namespace's name and description, if it has one.
    pub namespace: Option<(&'a str, &'a str)>,
}

/// The `tools:deferred` section: the tools a program can call but the SDK above does not
/// declare, by name under their namespaces, and the two members that find and describe them.
pub fn render_deferred(tools: &[DeferredSdkTool<'_>]) -> String {
    type Group<'a> = (Option<(&'a str, &'a str)>, Vec<String>);
    let mut groups: Vec<Group<'_>> = Vec::new();
    for tool in tools {
        let key_name = key(tool.name);
        match groups
            .iter_mut()
            .find(|(ns, _)| ns.map(|n| n.0) == tool.namespace.map(|n| n.0))
        {
            Some((_, names)) => names.push(key_name),
            None => groups.push((tool.namespace, vec![key_name])),
        }
    }
    let mut text = String::from(concat!(
        "More tools can be called as `tools.name(args)` than are declared above; they are ",
        "listed here by name. Find them with `await tools.$search(\"what you need\")` (or ",
        "`{query, limit}`): the best matches, each `{name, description, namespace?}`. Read ",
        "one's declaration with `await tools.$describe(\"name\")` before calling it.\n\n",
        "```ts\ndeclare const tools: {\n",
        "  $search(query: string | { query: string; limit?: number }): ",
        "Promise<{ name: string; description: string; namespace?: string }[]>;\n",
        "  $describe(name: string): Promise<string>;\n};\n```\n",
    ));
    for (namespace, names) in groups {
        text.push('\n');
        match namespace {
            Some((name, description)) => {
                let doc = description
                    .split(js_space)
                    .filter(|w| !w.is_empty())
                    .collect::<Vec<_>>()
                    .join(" ");
                if doc.is_empty() {
                    text.push_str(&format!("- {}: ", key(name)));
                } else {
                    let mut quoted = String::new();
                    crate::json::push_json_string(&mut quoted, &doc);
                    text.push_str(&format!("- {} ({quoted}): ", key(name)));
                }
            }
            None => text.push_str("- "),
        }
        text.push_str(&names.join(", "));
    }
    text
}

/// The most tool names the `tools:overlap` section lists.
const MAX_OVERLAP_NAMES: usize = 40;

/// The `tools:overlap` section (issue 39.5): which of the declared tools' calls may overlap
/// under `Promise.all` (those with a concurrency classifier, `(name, true)`) and which run alone,
/// so that the instructions' "read-only calls MAY overlap" does not promise what does not
/// happen. Names the smaller group in UTF-16 order, at most 40 of them.
///
/// ```
/// use dsh_tools::code::render_overlap;
///
/// assert_eq!(
///     render_overlap(&[("read", true), ("write", false), ("stat", true), ("move", false), ("copy", false)]),
///     "Of the tools above, only these may overlap under `Promise.all`: `read`, `stat`. Every other call runs alone, in submission order."
/// );
/// assert!(render_overlap(&[("write", false)]).starts_with("No tool above overlaps"));
/// ```
pub fn render_overlap(tools: &[(&str, bool)]) -> String {
    let mut tools = tools.to_vec();
    tools.sort_by(|a, b| a.0.encode_utf16().cmp(b.0.encode_utf16()));
    let names = |safe: bool| -> String {
        let group: Vec<String> = tools
            .iter()
            .filter(|(_, s)| *s == safe)
            .map(|(name, _)| {
                let mut quoted = String::from("`");
                quoted.push_str(&key(name).replace('`', "\\`"));
                quoted.push('`');
                quoted
            })
            .collect();
        let more = group.len().saturating_sub(MAX_OVERLAP_NAMES);
        let mut text = group
            .into_iter()
            .take(MAX_OVERLAP_NAMES)
            .collect::<Vec<_>>()
            .join(", ");
        if more > 0 {
            text.push_str(&format!(" and {more} more"));
        }
        text
    };
    let safe = tools.iter().filter(|(_, s)| *s).count();
    let alone = tools.len() - safe;
    if safe == 0 {
        "No tool above overlaps: every call runs alone, in submission order, also under `Promise.all`.".to_owned()
    } else if alone == 0 {
        "Every tool above may overlap under `Promise.all`.".to_owned()
    } else if safe <= alone {
        format!(
            "Of the tools above, only these may overlap under `Promise.all`: {}. Every other call runs alone, in submission order.",
            names(true)
        )
    } else {
        format!(
            "Every tool above may overlap under `Promise.all` but these, whose calls run alone, in submission order: {}.",
            names(false)
        )
    }
}

/// One tool's declaration, as `tools.$describe` returns it: the types it names (`McpResult`
/// and its blocks, recursive types), its doc line, then its argument and output types.
pub fn render_declaration(tool: &SdkTool<'_>) -> String {
    let mut types = Declared::default();
    let parameters = types.render(tool.parameters, 0);
    // An MCP result is `McpResult<T>`, declared here as in the SDK.
    let (output, mcp) = types.output(tool.output, 0);
    let line = format!("{}(args: {parameters}): Promise<{output}>;", key(tool.name));
    // The types it names first, then its doc line and signature.
    let mut out = String::new();
    if mcp {
        out.push_str(MCP_TYPES);
        out.push('\n');
    }
    for text in types.texts {
        out.push_str(&text);
        out.push('\n');
    }
    if let Some(doc) = doc_line(Some(tool.description), &[], 0) {
        out.push_str(&doc);
        out.push('\n');
    }
    out.push_str(&line);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_an_mcp_result_renders_as_one() {
        let tool = |output: &Value| {
            let parameters = serde_json::json!({"type": "object"});
            render_sdk(&[SdkTool {
                name: "t",
                description: "",
                parameters: &parameters,
                output,
            }])
        };
        let wrapped = super::super::foreign::mcp_result_schema(serde_json::json!({
            "type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"],
            "additionalProperties": false
        }));
        let text = tool(&wrapped);
        assert!(
            text.contains("  t: McpResult<{\n    n: number;\n  }>;"),
            "{text}"
        );
        assert_eq!(
            text.matches("interface McpResult<T = JsonValue>").count(),
            1
        );
        // The same title on another shape is an ordinary object, and nothing is declared.
        let mut other = wrapped.clone();
        other["properties"]["extra"] = serde_json::json!({"type": "string"});
        let text = tool(&other);
        assert!(!text.contains("McpResult"), "{text}");
        assert!(!text.contains("McpContent"), "{text}");
        let mut untitled = wrapped.clone();
        untitled.as_object_mut().unwrap().shift_remove("title");
        assert!(!tool(&untitled).contains("McpResult"));
        // `$describe` says the same, and declares what it names.
        let parameters = serde_json::json!({"type": "object"});
        let declared = render_declaration(&SdkTool {
            name: "t",
            description: "T.",
            parameters: &parameters,
            output: &wrapped,
        });
        assert!(declared.starts_with("type McpContent = ("), "{declared}");
        assert!(
            declared.ends_with("/** T. */\nt(args: Record<string, JsonValue>): Promise<McpResult<{\n  n: number;\n}>>;"),
            "{declared}"
        );
    }

    #[test]
    fn deferred_tools_are_named_under_their_namespaces() {
        let text = render_deferred(&[
            DeferredSdkTool {
                name: "post",
                namespace: Some(("slack", "Chat\n  in */ Slack")),
            },
            DeferredSdkTool {
                name: "my-tool",
                namespace: None,
            },
            DeferredSdkTool {
                name: "archive",
                namespace: Some(("slack", "Chat in Slack")),
            },
        ]);
        assert!(text.starts_with("More tools can be called as `tools.name(args)` than are declared above; they are listed here by name."));
        assert!(text.contains("\n```ts\ndeclare const tools: {\n  $search(query: string | { query: string; limit?: number }): Promise<{ name: string; description: string; namespace?: string }[]>;\n  $describe(name: string): Promise<string>;\n};\n```\n"));
        assert!(
            text.ends_with("\n- slack (\"Chat in */ Slack\"): post, archive\n- \"my-tool\""),
            "{text}"
        );
    }
}

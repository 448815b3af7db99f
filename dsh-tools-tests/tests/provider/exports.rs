//! Every schema we have, exported to every dialect, for the providers' own SDKs to judge.
//!
//! The sources: the example `#[tool]`s (`common/tools.rs`), every bridge-corpus type
//! (`common/corpus.rs`, through [`bridge::schema_for`]) and the three bench schemas. The
//! dialects: each provider's default and, where it has one, its strict mode. Each export either
//! succeeds or fails with problems that name a path and a fix; the successes per dialect stay
//! above a floor; the example tools export the same through a [`Registry`] as through
//! [`export_tool`]. Every success is written to `target/provider-exports.json`, which
//! `.ci/provider_oracle.py` (run by `.ci/provider-oracle.sh`) checks against the `openai`,
//! `anthropic` and `google-genai` Python SDKs.

#[allow(dead_code, unreachable_pub)]
#[path = "../common/corpus.rs"]
mod corpus;

use dsh_tools::provider::ProviderExport;
use dsh_tools::provider::{Dialect, Problem, Provider, export_parameters, export_tool};
use dsh_tools::schema::bridge;
use dsh_tools::{Registry, Tool};
use proptest::prelude::*;
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::path::PathBuf;

// ---- what `common/corpus.rs` takes from its parent ----
// The corpus file gives each type a value strategy for the bridge's property tests. Nothing here
// draws values: these stand-ins only let the file compile.

/// A corpus type with random values (unused here).
#[allow(dead_code)]
trait Case: Sized + std::fmt::Debug {
    fn strategy() -> BoxedStrategy<Self>;
}

#[allow(dead_code)]
fn any_json() -> BoxedStrategy<Value> {
    Just(Value::Null).boxed()
}

#[allow(dead_code)]
fn finite_f64() -> impl Strategy<Value = f64> {
    Just(0.0)
}

#[allow(dead_code)]
fn finite_f32() -> impl Strategy<Value = f32> {
    Just(0.0)
}

#[allow(dead_code)]
fn text() -> impl Strategy<Value = String> {
    "[a-z]{0,5}"
}

#[allow(dead_code)]
fn free_key() -> impl Strategy<Value = String> {
    "x_[a-z]{0,4}"
}

// ---- the sources ----

/// One parameters schema to export, as a tool.
struct Source {
    /// `example`, `corpus` or `bench`.
    kind: &'static str,
    tool: String,
    description: String,
    parameters: Value,
}

/// The sources, and those left out with why.
fn sources() -> (Vec<Source>, Vec<(String, String)>) {
    let mut sources = Vec::new();
    let mut skipped = Vec::new();

    // The example tools. `unbridgeable` and `scalar_args` exist to fail at registration.
    macro_rules! examples {
        ($($tool:expr),* $(,)?) => {
            $(
                let tool = $tool;
                let name = tool.name().to_owned();
                match tool.try_definition() {
                    Ok(definition) => sources.push(Source {
                        kind: "example",
                        tool: name,
                        description: definition.description().to_owned(),
                        parameters: definition.parameters().clone(),
                    }),
                    Err(e) => skipped.push((name, format!("no definition: {e}"))),
                }
            )*
        };
    }
    {
        use crate::tools::*;
        examples!(
            ReadFile,
            Add,
            Search,
            Wait,
            NotANumber,
            Cancelled,
            Write,
            Measure,
            Unbridgeable,
            ScalarArgs,
        );
    }

    // Every type of the bridge corpus.
    macro_rules! corpus {
        ($($ty:ident),* $(,)?) => {
            $(
                let name = format!("corpus_{}", snake(stringify!($ty)));
                match bridge::schema_for::<corpus::$ty>() {
                    Err(e) => skipped.push((name, format!("the bridge refuses it: {e}"))),
                    Ok(schema) if schema.get("type").and_then(Value::as_str) != Some("object") => {
                        let root = schema
                            .get("type")
                            .map(|t| format!("type {t}"))
                            .or_else(|| {
                                ["oneOf", "anyOf", "enum", "const"]
                                    .into_iter()
                                    .find(|k| schema.get(*k).is_some())
                                    .map(|k| format!("a `{k}`"))
                            })
                            .unwrap_or_else(|| "no type".to_owned());
                        skipped.push((name, format!("not an object root ({root})")));
                    }
                    Ok(schema) => sources.push(Source {
                        kind: "corpus",
                        description: schema
                            .get("description")
                            .and_then(Value::as_str)
                            .map_or_else(
                                || format!("The bridge corpus type {}.", stringify!($ty)),
                                str::to_owned,
                            ),
                        tool: name,
                        parameters: schema,
                    }),
                }
            )*
        };
    }
    corpus!(
        Ints,
        Floats,
        Scalars,
        Anything,
        CharsAndBoxes,
        Positive,
        Inner,
        Nested,
        Lists,
        Fixed,
        Maps,
        Btree,
        Optionals,
        L2,
        L1,
        Deep,
        Newtype,
        Unit,
        Mode,
        WithMode,
        EnumKeys,
        External,
        Internal,
        Adjacent,
        Untagged,
        StrictA,
        StrictB,
        UntaggedStrict,
        OptionalEnums,
        Renamed,
        RenamedEnum,
        Defaults,
        StructDefault,
        Skipped,
        Meta,
        Flattened,
        Action,
        FlattenInternal,
        ExtAction,
        FlattenExternal,
        FlattenOptional,
        FlattenMap,
        Strict,
        FlattenStrict,
        Encoding,
        ReadFile,
        Recursive,
        Overlapping,
        TupleStruct,
        TupleVariant,
        IntKeys,
        Formatted,
        NonZero,
        AdjacentUnit,
    );

    // The bench schemas.
    for (name, text) in [
        (
            "small",
            include_str!("../../../dsh-tools/benches/data/small.schema.json"),
        ),
        (
            "medium",
            include_str!("../../../dsh-tools/benches/data/medium.schema.json"),
        ),
        (
            "large",
            include_str!("../../../dsh-tools/benches/data/large.schema.json"),
        ),
    ] {
        sources.push(Source {
            kind: "bench",
            tool: format!("bench_{name}"),
            description: format!("The bench's {name} schema."),
            parameters: serde_json::from_str(text).expect("a bench schema is JSON"),
        });
    }
    (sources, skipped)
}

/// `FlattenInternal` → `flatten_internal`.
fn snake(name: &str) -> String {
    let mut out = String::new();
    for (i, c) in name.chars().enumerate() {
        if c.is_ascii_uppercase() {
            if i > 0 {
                out.push('_');
            }
            out.push(c.to_ascii_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

/// Every dialect: each provider's default and, where it has one, its strict mode.
fn dialects() -> Vec<Dialect> {
    let mut all = Vec::new();
    for p in Provider::ALL {
        all.push(Dialect::new(p));
        if p.has_strict() {
            all.push(Dialect::strict(p));
        }
    }
    all
}

/// The parameters inside a dialect's tool entry.
fn parameters_of(dialect: Dialect, entry: &Value) -> &Value {
    match dialect.provider() {
        Provider::OpenAiChat | Provider::DeepSeek => &entry["function"]["parameters"],
        Provider::Anthropic => &entry["input_schema"],
        Provider::Gemini => &entry["parametersJsonSchema"],
        _ => &entry["parameters"],
    }
}

// ---- what is expected ----

/// What a problem's message must say to name a fix: one of these, per kind of problem.
const FIXES: &[&str] = &[
    "wrap it in a property of an object",
    "take a list of {key, value} objects",
    "use the non-strict dialect",
    "use the `gemini` dialect",
    "flatten the arguments",
    "split the tool",
    "take a string and check it in the tool",
];

/// The sources left out, and a part of the reason each must give.
const SKIPPED: &[(&str, &str)] = &[
    ("unbridgeable", "prefixItems"),
    ("scalar_args", "must be an object"),
    ("corpus_newtype", "not an object root (type \"string\")"),
    ("corpus_unit", "not an object root (type \"null\")"),
    ("corpus_mode", "not an object root (type \"string\")"),
    ("corpus_external", "not an object root (a `oneOf`)"),
    ("corpus_internal", "not an object root (a `oneOf`)"),
    ("corpus_adjacent", "not an object root (a `oneOf`)"),
    ("corpus_untagged", "not an object root (a `oneOf`)"),
    ("corpus_untagged_strict", "not an object root (a `oneOf`)"),
    ("corpus_renamed_enum", "not an object root (a `oneOf`)"),
    ("corpus_action", "not an object root (a `oneOf`)"),
    ("corpus_flatten_internal", "not an object root (a `oneOf`)"),
    ("corpus_ext_action", "not an object root (a `oneOf`)"),
    ("corpus_flatten_external", "not an object root (a `oneOf`)"),
    ("corpus_encoding", "not an object root (a `oneOf`)"),
    ("corpus_recursive", "recursive type"),
    ("corpus_overlapping", "may both match one value"),
    ("corpus_tuple_struct", "prefixItems"),
    ("corpus_tuple_variant", "prefixItems"),
    ("corpus_int_keys", "patternProperties"),
    ("corpus_formatted", "cannot be checked"),
    ("corpus_non_zero", "`not` is not supported"),
    ("corpus_adjacent_unit", "not an object root (a `oneOf`)"),
];

/// The sources with a map (a schema-valued `additionalProperties`): strict modes and
/// `gemini-openapi` cannot express one.
const MAPS: &[&str] = &[
    "grep",
    "corpus_maps",
    "corpus_btree",
    "corpus_l2",
    "corpus_l1",
    "corpus_deep",
    "corpus_flatten_map",
];

/// Strict grammars also need a `type` on every schema: a `serde_json::Value` field (any JSON)
/// cannot be expressed, besides the maps.
const STRICT: &[&str] = &[
    "grep",
    "corpus_maps",
    "corpus_btree",
    "corpus_l2",
    "corpus_l1",
    "corpus_deep",
    "corpus_flatten_map",
    "corpus_anything",
];

/// Per dialect name, the fewest exports that must succeed (of 43 sources), and the sources that
/// may fail. A change that loses an export, or fails where none may, shows here.
const FLOORS: &[(&str, usize, &[&str])] = &[
    ("openai-chat", 43, &[]),
    ("openai-chat (strict)", 35, STRICT),
    ("openai-responses", 43, &[]),
    ("openai-responses (strict)", 35, STRICT),
    ("anthropic", 43, &[]),
    ("anthropic (strict)", 35, STRICT),
    ("gemini", 43, &[]),
    ("gemini-openapi", 36, MAPS),
    ("deepseek", 43, &[]),
    ("deepseek (strict)", 35, STRICT),
];

// ---- the test ----

/// Where cargo puts this test's binary: `<target>/<profile>/deps/provider-…`.
fn target_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("the test binary's path");
    exe.ancestors()
        .find(|p| p.file_name().is_some_and(|n| n == "deps"))
        .and_then(|deps| deps.parent()?.parent())
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../target"))
}

#[test]
fn every_schema_exports_to_every_dialect_or_names_the_fix() {
    let (sources, skipped) = sources();

    // The sources left out are exactly the documented ones, for the documented reasons.
    for (name, why) in &skipped {
        eprintln!("skipped {name}: {why}");
    }
    let documented: Vec<&str> = SKIPPED.iter().map(|(n, _)| *n).collect();
    let actual: Vec<&str> = skipped.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(actual, documented, "the sources left out changed");
    for ((name, why), (_, needle)) in skipped.iter().zip(SKIPPED) {
        assert!(
            why.contains(needle),
            "{name} is left out for {why:?}, not {needle:?}"
        );
    }
    assert!(sources.len() >= 40, "only {} sources", sources.len());

    let mut exports = Vec::new();
    let mut failures: BTreeMap<String, Vec<(String, Vec<Problem>)>> = BTreeMap::new();
    let mut successes: BTreeMap<String, usize> = BTreeMap::new();
    for dialect in dialects() {
        let name = dialect.name();
        successes.insert(name.clone(), 0);
        for source in &sources {
            let result = export_tool(
                &source.tool,
                &source.description,
                &source.parameters,
                dialect,
            );
            // Deterministic, key order included.
            let again = export_tool(
                &source.tool,
                &source.description,
                &source.parameters,
                dialect,
            );
            assert_eq!(
                serde_json::to_string(&result).unwrap(),
                serde_json::to_string(&again).unwrap(),
                "{name}: {} exports differently twice",
                source.tool
            );
            match result {
                Ok(entry) => {
                    let parameters = parameters_of(dialect, &entry).clone();
                    let (alone, _) = export_parameters(&source.parameters, dialect)
                        .expect("the parameters export as the tool did");
                    assert_eq!(parameters, alone, "{name}: {}", source.tool);
                    assert_eq!(
                        parameters["type"],
                        json!(if dialect.provider() == Provider::GeminiOpenApi {
                            "OBJECT"
                        } else {
                            "object"
                        }),
                        "{name}: {} has no object root",
                        source.tool
                    );
                    if source.kind == "example" {
                        same_through_a_registry(dialect, source, &entry);
                    }
                    *successes.get_mut(&name).unwrap() += 1;
                    exports.push(json!({
                        "dialect": dialect.provider().id(),
                        "strict": dialect.is_strict(),
                        "tool": source.tool,
                        "source": source.kind,
                        "entry": entry,
                        "parameters": parameters,
                    }));
                }
                Err(problems) => {
                    assert!(
                        !problems.is_empty(),
                        "{name}: {} failed with no problem",
                        source.tool
                    );
                    for p in &problems {
                        assert!(
                            p.path.starts_with('#'),
                            "{name}: {}: the problem has no path: {p:?}",
                            source.tool
                        );
                        assert!(
                            FIXES.iter().any(|fix| p.message.contains(fix)),
                            "{name}: {} at {}: the message names no fix: {}",
                            source.tool,
                            p.path,
                            p.message
                        );
                    }
                    failures
                        .entry(name.clone())
                        .or_default()
                        .push((source.tool.clone(), problems));
                }
            }
        }
    }

    for (dialect, count) in &successes {
        let failed: Vec<String> = failures
            .get(dialect)
            .map(|f| {
                f.iter()
                    .map(|(tool, problems)| {
                        let first = &problems[0];
                        format!("{tool} ({} at {})", first.message, first.path)
                    })
                    .collect()
            })
            .unwrap_or_default();
        eprintln!(
            "{dialect}: {count}/{} exported; failed: {}",
            sources.len(),
            if failed.is_empty() {
                "none".to_owned()
            } else {
                failed.join("; ")
            }
        );
    }
    for (dialect, floor, may_fail) in FLOORS {
        let count = successes[*dialect];
        assert!(
            count >= *floor,
            "{dialect}: {count} exports, fewer than {floor}"
        );
        for (tool, problems) in failures.get(*dialect).into_iter().flatten() {
            assert!(
                may_fail.contains(&tool.as_str()),
                "{dialect}: {tool} failed: {problems:?}"
            );
        }
    }
    assert_eq!(FLOORS.len(), dialects().len(), "a floor for every dialect");

    let path = target_dir().join("provider-exports.json");
    let text = serde_json::to_string_pretty(&Value::Array(exports)).unwrap() + "\n";
    std::fs::write(&path, text).unwrap_or_else(|e| panic!("writing {}: {e}", path.display()));
    eprintln!("wrote {}", path.display());
}

/// A one-tool registry exports the example tool to the same entry, and its request fields
/// carry it where the provider expects it.
fn same_through_a_registry(dialect: Dialect, source: &Source, entry: &Value) {
    use crate::tools::*;
    let definition = match source.tool.as_str() {
        "read_file" => ReadFile.definition(),
        "add" => Add.definition(),
        "grep" => Search.definition(),
        "wait" => Wait.definition(),
        "not_a_number" => NotANumber.definition(),
        "cancelled" => Cancelled.definition(),
        "write" => Write.definition(),
        "measure" => Measure.definition(),
        other => panic!("no example tool {other}"),
    };
    let registry = Registry::new();
    registry.register(definition).unwrap().keep();
    let tools = registry
        .provider_tools(None, dialect)
        .unwrap_or_else(|e| panic!("{dialect}: {e}"));
    assert_eq!(tools.entries(), std::slice::from_ref(entry), "{dialect}");
    assert_eq!(tools.tools()[0].provider_name(), source.tool);
    let fields = tools.request_fields();
    let carried = match dialect.provider() {
        Provider::Gemini | Provider::GeminiOpenApi => &fields["tools"][0]["functionDeclarations"],
        _ => &fields["tools"],
    };
    assert_eq!(carried, &json!([entry]), "{dialect}");
    let openai_strict = dialect.is_strict()
        && matches!(
            dialect.provider(),
            Provider::OpenAiChat | Provider::OpenAiResponses
        );
    assert_eq!(
        fields.get("parallel_tool_calls"),
        openai_strict.then_some(&json!(false)),
        "{dialect}"
    );
}

// ---- deferred tools: the providers' native forms ----

/// A catalog with a plain tool, deferred tools in a namespace (one with a name mapped for the
/// providers) and one deferred tool without a namespace.
fn deferral_catalog() -> Registry {
    use dsh_tools::definition::Namespace;
    let registry = Registry::new();
    let tool = |name: &str, description: &str| {
        let answer = name.to_owned();
        dsh_tools::ToolDefinition::new(
            name,
            description,
            json!({"type": "object", "properties": {
                "repo": {"type": "string", "description": "owner/name"},
                "limit": {"type": "integer", "minimum": 1}},
                "required": ["repo"]}),
            dsh_tools::OutputDecl::text(),
            move |_, _| {
                let answer = answer.clone();
                async move { Ok(json!(answer)) }
            },
        )
    };
    registry
        .register(tool("ping", "Check that the service answers"))
        .unwrap()
        .keep();
    let github = Namespace::new("github", "Issues and pull requests on GitHub");
    for (name, description) in [
        ("github.create_issue", "Open a new issue in a repository"),
        ("merge_pull_request", "Merge a pull request"),
    ] {
        let t = tool(name, description)
            .namespace(github.clone())
            .defer_loading(true);
        registry.register(t).unwrap().keep();
    }
    registry
        .register(tool("list_commits", "List the commits of a branch").defer_loading(true))
        .unwrap()
        .keep();
    registry
}

/// One item for the oracle: what it is (`kind`), in which dialect and form.
fn deferral_item(dialect: Dialect, form: &str, kind: &str, value: &Value) -> Value {
    json!({"dialect": dialect.provider().id(), "strict": dialect.is_strict(), "form": form,
           "kind": kind, "value": value})
}

/// Every native deferral shape we send or read, for `.ci/provider_oracle.py`: the tool lists
/// (Anthropic `defer_loading` and its BM25 search tool; OpenAI Responses `defer_loading`,
/// `namespace`, `tool_search`), a search answered (`tool_result` of `tool_reference` blocks;
/// `tool_search_output`), and the replies the parser is tested with. Written to
/// `target/provider-deferral.json`.
#[tokio::test]
async fn deferral_shapes_for_the_oracle() {
    use dsh_tools::provider::ToolSearch;
    use dsh_tools::registry::LoadedTools;
    let registry = deferral_catalog();
    let mut items = Vec::new();
    for provider in [Provider::Anthropic, Provider::OpenAiResponses] {
        for dialect in [Dialect::new(provider), Dialect::strict(provider)] {
            for (form, name) in [
                (ToolSearch::Native, "native"),
                (ToolSearch::Hosted, "hosted"),
            ] {
                let tools = registry
                    .provider_tools_searched(None, dialect, &LoadedTools::new(), form)
                    .unwrap();
                for entry in tools.entries() {
                    items.push(deferral_item(dialect, name, "tool", entry));
                }
                if form != ToolSearch::Native {
                    continue;
                }
                let reply = if provider == Provider::Anthropic {
                    json!({"content": [{"type": "tool_use", "id": "toolu_01", "name": "tool_search",
                        "input": {"query": "open an issue or merge a pull request", "limit": 5}}]})
                } else {
                    json!({"output": [{"type": "tool_search_call", "id": "tsc_01", "call_id": "call_01",
                        "execution": "client", "status": "completed",
                        "arguments": {"query": "open an issue or list commits", "limit": 5}}]})
                };
                let calls = tools.parse_calls(&reply).unwrap();
                assert_eq!(calls.len(), 1);
                let result = calls[0]
                    .execute(&registry, dsh_tools::CancellationToken::new())
                    .await;
                assert!(!result.is_error(), "{result:?}");
                let messages = tools.format_results(&[(&calls[0], &result)]);
                let answer = if provider == Provider::Anthropic {
                    // The content block of the user message.
                    let block = &messages[0]["content"][0];
                    assert!(block["content"].as_array().unwrap().len() >= 2, "{block:#}");
                    block.clone()
                } else {
                    assert!(messages[0]["tools"].as_array().unwrap().len() >= 2);
                    messages[0].clone()
                };
                items.push(deferral_item(dialect, name, "search_result", &answer));
                items.push(deferral_item(dialect, name, "reply", &reply));
            }
        }
    }
    // The replies of the providers' own searches, which the parser skips.
    let hosted_anthropic = json!({"content": [
        {"type": "server_tool_use", "id": "srvtoolu_01", "name": "tool_search_tool_bm25",
         "input": {"query": "issue"}, "caller": {"type": "direct"}},
        {"type": "tool_search_tool_result", "tool_use_id": "srvtoolu_01", "content": {
            "type": "tool_search_tool_search_result",
            "tool_references": [{"type": "tool_reference", "tool_name": "github_create_issue"}]}},
        {"type": "tool_use", "id": "toolu_02", "name": "github_create_issue",
         "input": {"repo": "a/b"}, "caller": {"type": "direct"}}
    ]});
    let hosted_responses = json!({"output": [
        {"type": "tool_search_call", "id": "tsc_02", "execution": "server", "status": "completed",
         "arguments": {"query": "issue"}},
        {"type": "tool_search_output", "id": "tso_02", "execution": "server", "status": "completed",
         "tools": []},
        {"type": "function_call", "id": "fc_02", "call_id": "call_02", "namespace": "github",
         "name": "github_create_issue", "arguments": "{\"repo\":\"a/b\"}", "status": "completed"}
    ]});
    for (provider, reply) in [
        (Provider::Anthropic, hosted_anthropic),
        (Provider::OpenAiResponses, hosted_responses),
    ] {
        let dialect = Dialect::new(provider);
        let tools = registry
            .provider_tools_searched(None, dialect, &LoadedTools::new(), ToolSearch::Hosted)
            .unwrap();
        let calls = tools.parse_calls(&reply).unwrap();
        assert_eq!(calls.len(), 1);
        assert_eq!(calls[0].name(), "github.create_issue");
        items.push(deferral_item(dialect, "hosted", "reply", &reply));
    }
    let path = target_dir().join("provider-deferral.json");
    let text = serde_json::to_string_pretty(&Value::Array(items)).unwrap() + "\n";
    std::fs::write(&path, text).unwrap_or_else(|e| panic!("writing {}: {e}", path.display()));
    eprintln!("wrote {}", path.display());
}

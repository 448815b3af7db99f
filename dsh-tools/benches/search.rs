//! Tool search on a real catalog (issue 34): the tools of published MCP servers
//! (`dsh-tools-tests/fixtures/catalog`, see its SOURCES.md) and natural-language tasks labelled
//! with the tools that solve them.
//!
//! Printed once before the timings: recall@1, recall@5 and MRR of our index and of two crates
//! given the same documents (probly-search, fielded BM25 with the same weights; bm25, its
//! default English tokenizer over the concatenated text), and the bytes of the tool list sent
//! per request, everything against deferred + `tool_search`, per dialect.
//!
//! `search/{ours,probly,bm25}/{N}`: one query (the set cycled) over N tools (the catalog, and
//! the catalog repeated under new names to 10,000). `search/registry/N`: `Registry::search`
//! (ours plus the view's filter). `update/index/10000`: one document inserted into and removed
//! from a 10,000-document index; `update/register/{plain,indexed}/10000`: a registration and
//! its disposal in a registry of 10,000 tools without and with the index (issue 34: ≤ 50 µs).

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use dsh_tools::provider::ProviderExport;
use dsh_tools::registry::{DeferRule, LoadedTools, ToolQuery};
use dsh_tools::search::{Document, Index};
use dsh_tools::{OutputDecl, Registry, ToolDefinition};
use serde_json::{Value, json};
use std::borrow::Cow;
use std::hint::black_box;

struct Tool {
    name: String,
    namespace: String,
    description: String,
    parameters: Value,
}

struct Query {
    text: String,
    /// Indices into the catalog of the tools that solve it.
    relevant: Vec<usize>,
}

fn fixture(file: &str) -> Value {
    let path = format!(
        "{}/../dsh-tools-tests/fixtures/catalog/{file}",
        env!("CARGO_MANIFEST_DIR")
    );
    serde_json::from_str(&std::fs::read_to_string(&path).expect("the catalog fixture")).unwrap()
}

fn catalog() -> (Vec<Tool>, Vec<Query>) {
    let tools: Vec<Tool> = fixture("tools.json")
        .as_array()
        .unwrap()
        .iter()
        .map(|t| Tool {
            name: t["name"].as_str().unwrap().to_owned(),
            namespace: t["namespace"].as_str().unwrap_or_default().to_owned(),
            description: t["description"].as_str().unwrap_or_default().to_owned(),
            parameters: t["parameters"].clone(),
        })
        .collect();
    let queries = fixture("queries.json")
        .as_array()
        .unwrap()
        .iter()
        .map(|q| Query {
            text: q["query"].as_str().unwrap().to_owned(),
            relevant: q["relevant"]
                .as_array()
                .unwrap()
                .iter()
                .map(|r| {
                    tools
                        .iter()
                        .position(|t| t.namespace == r["namespace"] && t.name == r["name"])
                        .expect("a labelled tool is in the catalog")
                })
                .collect(),
        })
        .collect();
    (tools, queries)
}

/// The catalog repeated under new names (and namespaces) to `n` tools.
fn grown(tools: &[Tool], n: usize) -> Vec<Tool> {
    (0..n)
        .map(|i| {
            let t = &tools[i % tools.len()];
            let round = i / tools.len();
            let suffix = if round == 0 {
                String::new()
            } else {
                format!("_{round}")
            };
            Tool {
                name: format!("{}{suffix}", t.name),
                namespace: format!("{}{suffix}", t.namespace),
                description: t.description.clone(),
                parameters: t.parameters.clone(),
            }
        })
        .collect()
}

fn document(t: &Tool) -> Document<'_> {
    Document {
        name: &t.name,
        namespace: &t.namespace,
        description: &t.description,
        parameters: &t.parameters,
    }
}

fn ours(tools: &[Tool]) -> Index<usize> {
    let mut index = Index::new();
    for (i, t) in tools.iter().enumerate() {
        index.insert(i, document(t));
    }
    index
}

/// probly-search's documents: the same four fields.
struct Fields {
    fields: [String; 4],
}

fn field0(d: &Fields) -> Vec<&str> {
    vec![&d.fields[0]]
}
fn field1(d: &Fields) -> Vec<&str> {
    vec![&d.fields[1]]
}
fn field2(d: &Fields) -> Vec<&str> {
    vec![&d.fields[2]]
}
fn field3(d: &Fields) -> Vec<&str> {
    vec![&d.fields[3]]
}

fn probly_tokens(text: &str) -> Vec<Cow<'_, str>> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(|w| Cow::Owned(w.to_lowercase()))
        .collect()
}

const PROBLY_WEIGHTS: [f64; 4] = [3.0, 1.5, 1.0, 0.6];

fn parameter_text(schema: &Value) -> String {
    let mut text = String::new();
    if let Some(properties) = schema.get("properties").and_then(Value::as_object) {
        for (name, p) in properties {
            text.push_str(name);
            text.push(' ');
            if let Some(d) = p.get("description").and_then(Value::as_str) {
                text.push_str(d);
                text.push(' ');
            }
        }
    }
    text
}

fn probly(tools: &[Tool]) -> probly_search::Index<usize> {
    let mut index = probly_search::Index::<usize>::new(4);
    for (i, t) in tools.iter().enumerate() {
        let doc = Fields {
            fields: [
                t.name.replace(['_', '-'], " "),
                t.namespace.clone(),
                t.description.clone(),
                parameter_text(&t.parameters),
            ],
        };
        index.add_document(&[field0, field1, field2, field3], probly_tokens, i, &doc);
    }
    index
}

fn probly_search(index: &probly_search::Index<usize>, query: &str, limit: usize) -> Vec<usize> {
    let mut scorer = probly_search::score::bm25::new();
    let mut found = index.query(query, &mut scorer, probly_tokens, &PROBLY_WEIGHTS);
    found.truncate(limit);
    found.into_iter().map(|r| r.key).collect()
}

fn bm25(tools: &[Tool]) -> bm25::SearchEngine<usize> {
    let documents: Vec<bm25::Document<usize>> = tools
        .iter()
        .enumerate()
        .map(|(i, t)| {
            let text = format!(
                "{} {} {} {}",
                t.name.replace(['_', '-'], " "),
                t.namespace,
                t.description,
                parameter_text(&t.parameters)
            );
            bm25::Document::new(i, text)
        })
        .collect();
    bm25::SearchEngineBuilder::<usize>::with_documents(bm25::Language::English, documents).build()
}

/// recall@1, recall@5, MRR (first relevant rank, over the top 10).
fn quality(queries: &[Query], search: impl Fn(&str) -> Vec<usize>) -> (f64, f64, f64) {
    let (mut r1, mut r5, mut mrr) = (0.0, 0.0, 0.0);
    for q in queries {
        let found = search(&q.text);
        let rank = found.iter().take(10).position(|k| q.relevant.contains(k));
        if rank == Some(0) {
            r1 += 1.0;
        }
        if rank.is_some_and(|r| r < 5) {
            r5 += 1.0;
        }
        if let Some(r) = rank {
            mrr += 1.0 / (r as f64 + 1.0);
        }
    }
    let n = queries.len() as f64;
    (r1 / n, r5 / n, mrr / n)
}

/// The registered names: a tool's own, or `namespace__name` where two servers share it.
fn registered_names(tools: &[Tool]) -> Vec<String> {
    let mut seen = std::collections::HashSet::new();
    tools
        .iter()
        .map(|t| {
            if seen.insert(t.name.clone()) {
                t.name.clone()
            } else {
                format!("{}__{}", t.namespace, t.name)
            }
        })
        .collect()
}

fn registry_of(tools: &[Tool]) -> Registry {
    let registry = Registry::new();
    for (t, name) in tools.iter().zip(registered_names(tools)) {
        let definition = ToolDefinition::new(
            name,
            t.description.clone(),
            t.parameters.clone(),
            OutputDecl::text(),
            |_, _| async { Ok(json!("")) },
        )
        .skip_unexportable(true);
        registry.register(definition).unwrap().keep();
    }
    registry
}

fn report(tools: &[Tool], queries: &[Query]) {
    let index = ours(tools);
    let p = probly(tools);
    let b = bm25(tools);
    println!(
        "catalog: {} tools, {} queries (fixtures/catalog)",
        tools.len(),
        queries.len()
    );
    let rows = [
        (
            "ours",
            quality(queries, |q| {
                index
                    .search(q, 10, |_| true)
                    .into_iter()
                    .map(|h| h.key)
                    .collect()
            }),
        ),
        (
            "probly-search 2.0.1",
            quality(queries, |q| probly_search(&p, q, 10)),
        ),
        (
            "bm25 2.3.2",
            quality(queries, |q| {
                b.search(q, 10).into_iter().map(|r| r.document.id).collect()
            }),
        ),
    ];
    for (name, (r1, r5, mrr)) in rows {
        println!("ranking {name:<20} recall@1 {r1:.3}  recall@5 {r5:.3}  MRR {mrr:.3}");
    }
    // Tool-list bytes per request: every tool against all deferred (+ tool_search).
    let everything = registry_of(tools);
    let deferred = registry_of(tools);
    deferred.defer_loading(DeferRule::all());
    use dsh_tools::provider::{Dialect, Provider, ToolSearch};
    for provider in [
        Provider::OpenAiChat,
        Provider::OpenAiResponses,
        Provider::Anthropic,
        Provider::Gemini,
    ] {
        let dialect = Dialect::new(provider);
        let bytes = |tools: dsh_tools::provider::ProviderTools| {
            serde_json::to_vec(&tools.request_fields()).unwrap().len()
        };
        let all = bytes(everything.provider_tools(None, dialect).unwrap());
        let mut loaded = LoadedTools::new();
        let none = bytes(
            deferred
                .provider_tools_loaded(None, dialect, &loaded)
                .unwrap(),
        );
        for name in registered_names(tools).into_iter().take(5) {
            loaded.load(name);
        }
        let five = bytes(
            deferred
                .provider_tools_loaded(None, dialect, &loaded)
                .unwrap(),
        );
        println!(
            "bytes {:<18} everything {all:>7}  deferred+search {none:>5} ({:.2}%)  with 5 loaded {five:>6} ({:.2}%)",
            dialect.name(),
            100.0 * none as f64 / all as f64,
            100.0 * five as f64 / all as f64
        );
        // The providers' own deferral, where they have it (the list does not grow with what
        // a search loaded: the provider keeps that).
        if matches!(provider, Provider::Anthropic | Provider::OpenAiResponses) {
            for form in [ToolSearch::Native, ToolSearch::Hosted] {
                let tools = deferred
                    .provider_tools_searched(None, dialect, &LoadedTools::new(), form)
                    .unwrap();
                let native = bytes(tools);
                println!(
                    "bytes {:<18} {form:?}: {native:>7} ({:.2}%)",
                    dialect.name(),
                    100.0 * native as f64 / all as f64
                );
            }
        }
    }
}

fn search(c: &mut Criterion) {
    let (tools, queries) = catalog();
    report(&tools, &queries);
    let mut group = c.benchmark_group("search");
    for n in [tools.len(), 10_000] {
        let set = grown(&tools, n);
        let index = ours(&set);
        let p = probly(&set);
        let b = bm25(&set);
        let registry = registry_of(&set);
        let mut i = 0;
        let mut next = || {
            i = (i + 1) % queries.len();
            queries[i].text.as_str()
        };
        group.bench_function(BenchmarkId::new("ours", n), |bench| {
            bench.iter(|| black_box(index.search(next(), 5, |_| true)))
        });
        group.bench_function(BenchmarkId::new("registry", n), |bench| {
            bench.iter(|| black_box(registry.search(&ToolQuery::new(next()).limit(5))))
        });
        group.bench_function(BenchmarkId::new("probly", n), |bench| {
            bench.iter(|| black_box(probly_search(&p, next(), 5)))
        });
        group.bench_function(BenchmarkId::new("bm25", n), |bench| {
            bench.iter(|| black_box(b.search(next(), 5)))
        });
    }
    group.finish();
}

fn update(c: &mut Criterion) {
    let (tools, _) = catalog();
    let set = grown(&tools, 10_000);
    let mut group = c.benchmark_group("update");
    let mut index = ours(&set);
    let extra = Tool {
        name: "archive_project".into(),
        namespace: "projects".into(),
        description: "Archive a project and every board in it, keeping its history".into(),
        parameters: json!({"type": "object", "properties": {"project": {"type": "string", "description": "The project id"}}}),
    };
    group.bench_function("index/10000", |bench| {
        bench.iter(|| {
            index.insert(usize::MAX, document(&extra));
            black_box(index.remove(&usize::MAX))
        })
    });
    let plain = registry_of(&set);
    let indexed = registry_of(&set);
    indexed.search(&ToolQuery::new("build the index"));
    for (name, registry) in [("plain", &plain), ("indexed", &indexed)] {
        group.bench_function(
            BenchmarkId::new(format!("register/{name}"), 10_000),
            |bench| {
                bench.iter(|| {
                    let definition = ToolDefinition::new(
                        extra.name.clone(),
                        extra.description.clone(),
                        extra.parameters.clone(),
                        OutputDecl::text(),
                        |_, _| async { Ok(json!("")) },
                    );
                    registry.register(definition).unwrap().dispose();
                })
            },
        );
    }
    group.finish();
}

criterion_group!(benches, search, update);
criterion_main!(benches);

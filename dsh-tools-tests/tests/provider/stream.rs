//! Streamed replies (issue 38, part 1): every dialect's events assembled into the calls
//! `parse_calls` gives for the finished reply, for random arguments cut into random fragments,
//! interleaved parallel calls, and hostile streams.

use dsh_tools::provider::ProviderExport;
use dsh_tools::provider::stream::PartialJson;
use dsh_tools::provider::{Dialect, Provider, ProviderTools, StreamError, StreamUpdate};
use dsh_tools::{OutputDecl, Registry, ToolDefinition};
use proptest::prelude::*;
use serde_json::{Value, json};

fn tools(provider: Provider) -> ProviderTools {
    let registry = Registry::new();
    for name in ["read_file", "fs.write"] {
        registry
            .register(ToolDefinition::new(
                name,
                "d",
                json!({"type": "object"}),
                OutputDecl::text(),
                |_, _| async { Ok(json!("")) },
            ))
            .unwrap()
            .keep();
    }
    registry
        .provider_tools(None, Dialect::new(provider))
        .unwrap()
}

/// One call to stream: provider id, provider name, argument text.
type Call = (String, String, String);

/// The events of a reply with `calls`, each argument text cut at `cuts` (byte offsets on char
/// boundaries), the calls' fragments interleaved round-robin; and the finished reply.
fn events(provider: Provider, calls: &[Call], cuts: &[Vec<usize>]) -> (Vec<Value>, Value) {
    let pieces: Vec<Vec<&str>> = calls
        .iter()
        .zip(cuts)
        .map(|((_, _, text), cut)| {
            let mut at: Vec<usize> = cut
                .iter()
                .map(|c| c % (text.len() + 1))
                .filter(|c| text.is_char_boundary(*c))
                .collect();
            at.push(0);
            at.push(text.len());
            at.sort_unstable();
            at.dedup();
            at.windows(2).map(|w| &text[w[0]..w[1]]).collect()
        })
        .collect();
    let mut out = Vec::new();
    match provider {
        Provider::OpenAiChat | Provider::DeepSeek => {
            for (i, (id, name, _)) in calls.iter().enumerate() {
                out.push(
                    json!({"choices": [{"index": 0, "delta": {"tool_calls": [{"index": i, "id": id,
                    "type": "function", "function": {"name": name, "arguments": ""}}]}}]}),
                );
            }
            for round in 0..pieces.iter().map(Vec::len).max().unwrap_or(0) {
                for (i, p) in pieces.iter().enumerate() {
                    if let Some(piece) = p.get(round) {
                        out.push(
                            json!({"choices": [{"index": 0, "delta": {"tool_calls": [{"index": i,
                            "function": {"arguments": piece}}]}}]}),
                        );
                    }
                }
            }
            out.push(
                json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]}),
            );
            let reply = json!({"choices": [{"message": {"role": "assistant", "tool_calls":
                calls.iter().map(|(id, name, text)| json!({"id": id, "type": "function",
                    "function": {"name": name, "arguments": text}})).collect::<Vec<_>>()}}]});
            (out, reply)
        }
        Provider::OpenAiResponses => {
            for (i, (id, name, _)) in calls.iter().enumerate() {
                out.push(
                    json!({"type": "response.output_item.added", "output_index": i, "item": {
                    "type": "function_call", "id": format!("fc_{i}"), "call_id": id, "name": name,
                    "arguments": "", "status": "in_progress"}}),
                );
            }
            for round in 0..pieces.iter().map(Vec::len).max().unwrap_or(0) {
                for (i, p) in pieces.iter().enumerate() {
                    if let Some(piece) = p.get(round) {
                        out.push(json!({"type": "response.function_call_arguments.delta",
                            "item_id": format!("fc_{i}"), "output_index": i, "delta": piece}));
                    }
                }
            }
            for (i, (_, _, text)) in calls.iter().enumerate() {
                out.push(json!({"type": "response.function_call_arguments.done",
                    "item_id": format!("fc_{i}"), "output_index": i, "arguments": text}));
            }
            let reply = json!({"output": calls.iter().map(|(id, name, text)| json!({
                "type": "function_call", "call_id": id, "name": name, "arguments": text}))
                .collect::<Vec<_>>()});
            (out, reply)
        }
        Provider::Anthropic => {
            out.push(json!({"type": "content_block_start", "index": 0,
                "content_block": {"type": "text", "text": ""}}));
            for (i, (id, name, _)) in calls.iter().enumerate() {
                out.push(json!({"type": "content_block_start", "index": i + 1,
                    "content_block": {"type": "tool_use", "id": id, "name": name, "input": {}}}));
            }
            for round in 0..pieces.iter().map(Vec::len).max().unwrap_or(0) {
                for (i, p) in pieces.iter().enumerate() {
                    if let Some(piece) = p.get(round) {
                        out.push(json!({"type": "content_block_delta", "index": i + 1,
                            "delta": {"type": "input_json_delta", "partial_json": piece}}));
                    }
                }
            }
            for i in 0..calls.len() {
                out.push(json!({"type": "content_block_stop", "index": i + 1}));
            }
            out.push(json!({"type": "message_stop"}));
            let reply = json!({"content": calls.iter().map(|(id, name, text)| {
                let input: Value = if text.is_empty() { json!({}) } else {
                    serde_json::from_str(text).unwrap_or(Value::String(text.clone())) };
                json!({"type": "tool_use", "id": id, "name": name, "input": input})
            }).collect::<Vec<_>>()});
            (out, reply)
        }
        _ => {
            let parts: Vec<Value> = calls
                .iter()
                .map(|(id, name, text)| {
                    json!({"functionCall": {"id": id, "name": name,
                        "args": serde_json::from_str::<Value>(text).unwrap_or(json!({}))}})
                })
                .collect();
            for part in &parts {
                out.push(json!({"candidates": [{"content": {"role": "model", "parts": [part]}}]}));
            }
            let reply = json!({"candidates": [{"content": {"role": "model", "parts": parts}}]});
            (out, reply)
        }
    }
}

fn arguments() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|n| json!(n)),
        (-1e6f64..1e6).prop_map(|f| json!(f)),
        "[a-zé\"\\\\ \\n\u{1F600}]{0,12}".prop_map(Value::String),
    ];
    let value = leaf.prop_recursive(4, 32, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::btree_map("[a-z]{1,6}", inner, 0..4)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    });
    prop::collection::btree_map("[a-z]{1,6}", value, 0..4)
        .prop_map(|m| Value::Object(m.into_iter().collect()))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// For every dialect: random arguments, cut anywhere and interleaved, assemble into exactly
    /// what `parse_calls` gives for the finished reply; the last partial value is the value.
    #[test]
    fn streams_assemble_into_what_parse_calls_gives(
        args in prop::collection::vec(arguments(), 1..4),
        cuts in prop::collection::vec(prop::collection::vec(0usize..400, 0..12), 4),
    ) {
        for provider in Provider::ALL {
            let tools = tools(provider);
            let write = tools.tools().iter().find(|t| t.name() == "fs.write").unwrap().provider_name().to_owned();
            let calls: Vec<Call> = args.iter().enumerate().map(|(i, a)| (
                format!("call_{i}"),
                if i % 2 == 0 { "read_file".to_owned() } else { write.clone() },
                serde_json::to_string(a).unwrap(),
            )).collect();
            let (events, reply) = events(provider, &calls, &cuts);
            let mut stream = tools.call_stream();
            for event in &events {
                stream.feed(event).unwrap();
            }
            for (call, value) in stream.calls().iter().zip(&args) {
                prop_assert!(call.is_finished());
                let partial = call.partial();
                prop_assert_eq!(partial.as_ref(), Some(value), "{:?}", provider);
            }
            let streamed = stream.finish().unwrap();
            let parsed = tools.parse_calls(&reply).unwrap();
            prop_assert_eq!(&streamed, &parsed, "{:?}", provider);
            prop_assert_eq!(streamed[1 % streamed.len()].name(),
                if streamed.len() > 1 { "fs.write" } else { "read_file" });
        }
    }

    /// The partial value of any prefix never panics, and reading by single characters ends
    /// where reading the whole text does.
    #[test]
    fn any_prefix_has_a_partial_value(value in arguments(), cut in 0usize..500) {
        let text = serde_json::to_string(&value).unwrap();
        let mut at = cut % (text.len() + 1);
        while !text.is_char_boundary(at) { at -= 1; }
        let mut p = PartialJson::new();
        p.push(&text[..at]);
        let _ = p.partial();
        p.push(&text[at..]);
        prop_assert_eq!(p.partial(), Some(value));
    }
}

#[test]
fn a_stream_that_ends_inside_a_call_names_it() {
    let tools = tools(Provider::Anthropic);
    let mut stream = tools.call_stream();
    stream
        .feed(&json!({"type": "content_block_start", "index": 1,
            "content_block": {"type": "tool_use", "id": "toolu_9", "name": "read_file", "input": {}}}))
        .unwrap();
    stream
        .feed(&json!({"type": "content_block_delta", "index": 1,
            "delta": {"type": "input_json_delta", "partial_json": "{\"path\": \"a"}}))
        .unwrap();
    let error = stream.finish().unwrap_err();
    assert_eq!(
        error.to_string(),
        "the anthropic stream ended inside the call(s) \"read_file\" (toolu_9)"
    );
}

#[test]
fn a_delta_for_a_call_that_never_started_is_refused_and_the_stream_goes_on() {
    let tools = tools(Provider::OpenAiResponses);
    let mut stream = tools.call_stream();
    let stray = stream.feed(&json!({"type": "response.function_call_arguments.delta",
        "item_id": "fc_404", "delta": "{"}));
    assert!(
        matches!(stray, Err(StreamError::UnknownCall { .. })),
        "{stray:?}"
    );
    let updates = stream
        .feed(
            &json!({"type": "response.output_item.added", "output_index": 0, "item": {
            "type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "read_file",
            "arguments": ""}}),
        )
        .unwrap();
    assert_eq!(updates, [StreamUpdate::Started(0)]);
    stream
        .feed(
            &json!({"type": "response.output_item.done", "output_index": 0, "item": {
            "type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "read_file",
            "arguments": "{\"path\":\"x\"}"}}),
        )
        .unwrap();
    let calls = stream.finish().unwrap();
    assert_eq!(calls[0].arguments(), Some(&json!({"path": "x"})));
}

#[test]
fn hostile_streams_fail_their_call_not_the_process() {
    // 100,000 levels of nesting, a byte at a time: the partial value stops at the limit, the
    // call fails as INVALID_ARGS like the finished reply would.
    let tools = tools(Provider::Anthropic);
    let mut stream = tools.call_stream();
    stream
        .feed(&json!({"type": "content_block_start", "index": 0,
            "content_block": {"type": "tool_use", "id": "t", "name": "read_file", "input": {}}}))
        .unwrap();
    let deep = "[".repeat(100_000);
    for chunk in deep.as_bytes().chunks(1000) {
        let piece = std::str::from_utf8(chunk).unwrap();
        stream
            .feed(&json!({"type": "content_block_delta", "index": 0,
                "delta": {"type": "input_json_delta", "partial_json": piece}}))
            .unwrap();
    }
    assert!(stream.calls()[0].partial().is_some());
    stream.feed(&json!({"type": "message_stop"})).unwrap();
    let calls = stream.finish().unwrap();
    assert_eq!(calls[0].error().unwrap().code(), Some("INVALID_ARGS"));

    // 1,000 interleaved calls, in one chunk each direction.
    let tools = self::tools(Provider::OpenAiChat);
    let calls: Vec<Call> = (0..1000)
        .map(|i| {
            (
                format!("c{i}"),
                "read_file".to_owned(),
                format!("{{\"n\":{i}}}"),
            )
        })
        .collect();
    let cuts = vec![vec![3usize, 5]; 1000];
    let (events, reply) = events(Provider::OpenAiChat, &calls, &cuts);
    let mut stream = tools.call_stream();
    for event in &events {
        stream.feed(event).unwrap();
    }
    assert_eq!(stream.finish().unwrap(), tools.parse_calls(&reply).unwrap());

    // Ten megabytes of argument text: assembled, once.
    let tools = self::tools(Provider::OpenAiResponses);
    let mut stream = tools.call_stream();
    stream
        .feed(&json!({"type": "response.output_item.added", "output_index": 0, "item": {
            "type": "function_call", "id": "fc", "call_id": "c", "name": "read_file", "arguments": ""}}))
        .unwrap();
    let big = format!("{{\"text\": \"{}\"}}", "x".repeat(10 * 1024 * 1024));
    for chunk in big.as_bytes().chunks(64 * 1024) {
        let piece = std::str::from_utf8(chunk).unwrap();
        stream
            .feed(&json!({"type": "response.function_call_arguments.delta", "item_id": "fc", "delta": piece}))
            .unwrap();
    }
    stream.feed(&json!({"type": "response.completed"})).unwrap();
    let calls = stream.finish().unwrap();
    assert_eq!(
        calls[0].arguments().unwrap()["text"]
            .as_str()
            .unwrap()
            .len(),
        10 * 1024 * 1024
    );
}

/// Cards while streaming: the tool's presenter on each partial value (a command card that
/// grows), the generic card before the presenter can read anything, never a panic (a presenter
/// that panics on partial input falls back), and the last card is the finished call's.
#[test]
fn cards_grow_with_the_arguments_and_end_as_the_finished_calls_card() {
    use dsh_tools::present::ToolCallView;
    use std::sync::Arc;
    let registry = Registry::new();
    let shell = ToolDefinition::new(
        "shell",
        "Run a command.",
        json!({"type": "object"}),
        OutputDecl::text(),
        |_, _| async { Ok(json!("")) },
    )
    .present_call(Arc::new(|args: &Value| {
        // Panics on input without a command: a presenter written for finished calls.
        let command = args["command"].as_str().unwrap();
        Some(ToolCallView::Terminal {
            title: command.to_owned(),
            description: None,
            cwd: None,
        })
    }));
    registry.register(shell).unwrap().keep();
    let tools = registry
        .provider_tools(None, Dialect::new(Provider::Anthropic))
        .unwrap();
    let mut stream = tools.call_stream();
    stream
        .feed(&json!({"type": "content_block_start", "index": 0,
            "content_block": {"type": "tool_use", "id": "t1", "name": "shell", "input": {}}}))
        .unwrap();
    let mut titles = vec![stream.card(0, &registry).unwrap().title().to_owned()];
    for piece in ["{\"comm", "and\": \"cargo te", "st --work", "space\"}"] {
        stream
            .feed(&json!({"type": "content_block_delta", "index": 0,
                "delta": {"type": "input_json_delta", "partial_json": piece}}))
            .unwrap();
        titles.push(stream.card(0, &registry).unwrap().title().to_owned());
    }
    assert_eq!(
        titles,
        [
            "shell",
            "shell",
            "cargo te",
            "cargo test --work",
            "cargo test --workspace"
        ]
    );
    stream.feed(&json!({"type": "message_stop"})).unwrap();
    let last = stream.card(0, &registry).unwrap();
    let calls = stream.finish().unwrap();
    assert_eq!(
        last,
        registry.present_call("shell", calls[0].arguments().unwrap(), None)
    );
}

/// What the review found missing: a streamed client `tool_search_call` (OpenAI Responses, the
/// native form) is assembled as `parse_calls` reads it; an Anthropic server tool's own input
/// deltas are not ours and not an error; OpenAI-compatible servers that omit `index` (every
/// call at 0) still give one call per id.
#[test]
fn searches_server_tools_and_index_less_calls_stream_as_parse_calls_reads_them() {
    let tools = tools(Provider::OpenAiResponses);
    let item = json!({"type": "tool_search_call", "id": "ts_1", "call_id": "call_s",
        "execution": "client", "status": "completed", "arguments": {"query": "open an issue"}});
    let mut stream = tools.call_stream();
    let mut added = item.clone();
    added["arguments"] = json!({});
    added["status"] = json!("in_progress");
    stream
        .feed(&json!({"type": "response.output_item.added", "output_index": 0, "item": added}))
        .unwrap();
    stream
        .feed(&json!({"type": "response.output_item.done", "output_index": 0, "item": item}))
        .unwrap();
    let streamed = stream.finish().unwrap();
    let parsed = tools.parse_calls(&json!({"output": [item]})).unwrap();
    assert_eq!(streamed, parsed);
    assert!(streamed[0].is_native_search());
    assert_eq!(streamed[0].name(), "tool_search");
    // Arguments sent as a string are read as JSON text, as parse_calls reads them.
    let mut as_text = item.clone();
    as_text["arguments"] = json!("{\"query\": \"merge\"}");
    let mut stream = tools.call_stream();
    stream
        .feed(&json!({"type": "response.output_item.done", "output_index": 0, "item": as_text}))
        .unwrap();
    assert_eq!(
        stream.finish().unwrap(),
        tools.parse_calls(&json!({"output": [as_text]})).unwrap()
    );

    let tools = self::tools(Provider::Anthropic);
    let mut stream = tools.call_stream();
    for event in [
        json!({"type": "content_block_start", "index": 0, "content_block": {"type": "server_tool_use",
            "id": "srv_1", "name": "tool_search_tool_bm25", "input": {}}}),
        json!({"type": "content_block_delta", "index": 0,
            "delta": {"type": "input_json_delta", "partial_json": "{\"query\": \"x\"}"}}),
        json!({"type": "content_block_stop", "index": 0}),
        json!({"type": "message_stop"}),
    ] {
        stream.feed(&event).unwrap();
    }
    assert!(stream.finish().unwrap().is_empty());
    // An index that held another block and then a tool call reads the call's deltas.
    let mut stream = tools.call_stream();
    for event in [
        json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
        json!({"type": "content_block_start", "index": 0, "content_block": {"type": "tool_use",
            "id": "t9", "name": "read_file", "input": {}}}),
        json!({"type": "content_block_delta", "index": 0,
            "delta": {"type": "input_json_delta", "partial_json": "{\"path\": \"a\"}"}}),
        json!({"type": "message_stop"}),
    ] {
        stream.feed(&event).unwrap();
    }
    assert_eq!(
        stream.finish().unwrap()[0].arguments(),
        Some(&json!({"path": "a"}))
    );

    let tools = self::tools(Provider::OpenAiChat);
    let mut stream = tools.call_stream();
    for (id, args) in [("call_a", "{\"x\":1}"), ("call_b", "{\"y\":2}")] {
        stream
            .feed(
                &json!({"choices": [{"index": 0, "delta": {"tool_calls": [{"id": id,
                "type": "function", "function": {"name": "read_file", "arguments": ""}}]}}]}),
            )
            .unwrap();
        stream
            .feed(&json!({"choices": [{"index": 0, "delta": {"tool_calls": [
                {"function": {"arguments": args}}]}}]}))
            .unwrap();
    }
    stream
        .feed(&json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]}))
        .unwrap();
    let calls = stream.finish().unwrap();
    let arguments: Vec<&Value> = calls.iter().map(|c| c.arguments().unwrap()).collect();
    assert_eq!(arguments, [&json!({"x": 1}), &json!({"y": 2})]);
}

//! What a `run_code` program can make the host hold outside its engine (issue 43.2): argument
//! copies of calls in flight, the output ledger's host representation, and attached results.
//! Each is bounded; these tests drive the bounds with small limits on the real QuickJS engine.
//! What a hostile program reaches in RSS under the default limits is measured by
//! `CODE_MEMORY=1 cargo bench -p dsh-tools --bench code` (BENCHMARKS.md, "Code Mode memory").

use dsh_tools::code::quickjs::QuickJsRuntime;
use dsh_tools::code::{CodeDispatchKind, CodeDispatchRecord, CodeHostLimits, CodeRuntimeConfig};
use dsh_tools::registry::PresentationMode;
use dsh_tools::{
    AgentId, CancellationToken, ContentBlock, OutputDecl, Registry, ToolDefinition,
    ToolExecutionInput, ToolExecutionResult, ToolRunContext,
};
use serde_json::{Value, json};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

fn registry(config: CodeRuntimeConfig) -> Registry {
    let registry = Registry::new();
    registry.set_presentation_mode(PresentationMode::Code);
    registry.set_code_runtime(QuickJsRuntime::new(config).unwrap());
    registry
}

async fn run(registry: &Registry, code: &str) -> ToolExecutionResult {
    let mut input = ToolExecutionInput::new(
        "outer",
        "run_code",
        json!({"code": code, "description": "memory"}),
        CancellationToken::new(),
    );
    input.agent = Some(AgentId::new("a"));
    tokio::time::timeout(Duration::from_secs(120), registry.execute(input))
        .await
        .expect("the run ended")
}

/// A tool that counts its calls and holds each until the run is over.
fn holding(registry: &Registry) -> Arc<AtomicUsize> {
    let calls = Arc::new(AtomicUsize::new(0));
    let seen = Arc::clone(&calls);
    let tool = ToolDefinition::new(
        "hold",
        "holds until the run is over",
        json!({"type": "object"}),
        OutputDecl::text(),
        move |_, ctx: ToolRunContext| {
            seen.fetch_add(1, Ordering::SeqCst);
            async move {
                ctx.signal().cancelled().await;
                Ok(json!("held"))
            }
        },
    );
    registry.register(tool).unwrap().keep();
    calls
}

fn starts(registry: &Registry) -> Arc<Mutex<Vec<String>>> {
    let seen: Arc<Mutex<Vec<String>>> = Arc::default();
    let sink = Arc::clone(&seen);
    registry.on_code_dispatch(move |_: &AgentId, record: &CodeDispatchRecord| {
        if record.kind == CodeDispatchKind::Start {
            sink.lock().unwrap().push(record.sub_call_id.clone());
        }
    });
    seen
}

#[tokio::test]
async fn a_call_whose_arguments_pass_the_in_flight_budget_is_refused_saying_why() {
    let registry = registry(CodeRuntimeConfig::default());
    registry.set_code_host_limits(CodeHostLimits::default().max_in_flight_argument_bytes(1 << 20));
    let calls = holding(&registry);
    let result = run(
        &registry,
        "try { await tools.hold({ s: 'x'.repeat(1 << 20) }); return 'sent'; } \
         catch (e) { return e.message; }",
    )
    .await;
    assert!(!result.is_error(), "{}", result.text());
    let text = result.value().unwrap()["result"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(
        text.contains("would take more than 1 MiB on the host")
            && text.contains("CodeHostLimits::max_in_flight_argument_bytes")
            && text.ends_with("hold not dispatched"),
        "{text}"
    );
    assert_eq!(calls.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn unawaited_calls_with_large_arguments_hold_at_most_the_budget() {
    // The attack: one large string handed to 100 unawaited calls. Each costs its argument twice
    // (the call's copy and its record's); the budget admits one at a time, and the one admitted
    // is held until the run is over, so every later call is refused at submission.
    let registry = registry(CodeRuntimeConfig::default());
    registry.set_code_host_limits(CodeHostLimits::default().max_in_flight_argument_bytes(3 << 20));
    let calls = holding(&registry);
    let starts = starts(&registry);
    let result = run(
        &registry,
        "const s = 'x'.repeat(1 << 20);\n\
         for (let i = 0; i < 100; i++) tools.hold({ s }).catch(() => {});\n\
         return 'submitted';",
    )
    .await;
    assert!(!result.is_error(), "{}", result.text());
    // The admitted call's body may not have been entered when the program returned (its
    // dispatch is a task, and the run's end cancels it): at most one body, exactly one start.
    assert!(calls.load(Ordering::SeqCst) <= 1, "one call fit the budget");
    assert_eq!(
        starts.lock().unwrap().len(),
        1,
        "one call fit the budget; refused calls leave no records"
    );
}

// On two workers: the program's next call may be submitted while the lane is still writing the
// previous call's settle record, so the room must be given back before the program hears.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_budget_is_given_back_when_a_call_commits() {
    let registry = registry(CodeRuntimeConfig::default());
    registry.set_code_host_limits(CodeHostLimits::default().max_in_flight_argument_bytes(3 << 20));
    let echo = ToolDefinition::new(
        "echo",
        "echoes the length",
        json!({"type": "object"}),
        OutputDecl::json(json!({"type": "integer"})),
        |args: Arc<Value>, _| async move { Ok(json!(args["s"].as_str().map_or(0, str::len))) },
    );
    registry.register(echo).unwrap().keep();
    let result = run(
        &registry,
        "const s = 'x'.repeat(1 << 20); let total = 0;\n\
         for (let i = 0; i < 20; i++) total += await tools.echo({ s });\n\
         return total;",
    )
    .await;
    assert!(!result.is_error(), "{}", result.text());
    assert_eq!(result.value().unwrap()["result"], json!(20 << 20));
}

#[tokio::test]
async fn many_tiny_log_entries_reach_the_output_limit_by_their_host_size() {
    // 4 bytes of JSON each, about 65 on the host: at a 1 MiB cap the JSON alone would admit
    // 262,143 entries (17 MB on the host); the ledger stops at 3 MiB of host bytes.
    let config = CodeRuntimeConfig {
        max_output_bytes: f64::from(1 << 20),
        ..CodeRuntimeConfig::default()
    };
    let registry = registry(config);
    let result = run(&registry, "for (;;) console.log('a');").await;
    assert!(result.is_error());
    let text = result.text();
    assert!(
        text.contains("outer output exceeded 1048576 bytes"),
        "{}",
        &text[text.len().saturating_sub(300)..]
    );
    // Every admitted entry (3 MiB of host bytes at 65 each) and the one that did not fit.
    let logged = text.lines().filter(|l| *l == "a").count();
    assert_eq!(
        logged,
        (3 << 20) / (1 + dsh_tools::code::LOG_ENTRY_HOST_BYTES) + 1
    );
}

fn imaging(registry: &Registry, bytes: usize) {
    let data = "A".repeat(bytes);
    let tool = ToolDefinition::new(
        "shot",
        "a screenshot",
        json!({"type": "object"}),
        OutputDecl::new(json!({"type": "string"}), move |_, _| {
            vec![ContentBlock::image(data.clone(), "image/png").unwrap()]
        }),
        |_, _| async { Ok(json!("shot")) },
    );
    registry.register(tool).unwrap().keep();
}

#[tokio::test]
async fn attached_images_stop_at_the_count_and_the_program_still_gets_its_values() {
    let registry = registry(CodeRuntimeConfig::default());
    registry.set_code_host_limits(CodeHostLimits::default().max_attached_results(3));
    imaging(&registry, 1024);
    let result = run(
        &registry,
        "const got = []; for (let i = 0; i < 10; i++) got.push(await tools.shot({})); return got;",
    )
    .await;
    assert!(!result.is_error(), "{}", result.text());
    assert_eq!(result.value().unwrap()["result"], json!(vec!["shot"; 10]));
    let contexts = result.additional_contexts().unwrap();
    let images = contexts
        .iter()
        .filter(|m| m.content.iter().any(|b| b.kind() == "image"))
        .count();
    assert_eq!(images, 3);
    let note = contexts.last().unwrap().content[0].as_text().unwrap();
    assert!(
        note.contains("7 image-bearing tool results of this run were not attached")
            && note.contains("at most 3 results"),
        "{note}"
    );
}

#[tokio::test]
async fn attached_images_stop_at_the_byte_cap() {
    let registry = registry(CodeRuntimeConfig::default());
    registry.set_code_host_limits(CodeHostLimits::default().max_attached_bytes(3 << 20));
    imaging(&registry, 1 << 20);
    let result = run(
        &registry,
        "const all = []; for (let i = 0; i < 8; i++) all.push(tools.shot({}));\n\
         await Promise.all(all); return 'dropped';",
    )
    .await;
    assert!(!result.is_error(), "{}", result.text());
    let contexts = result.additional_contexts().unwrap();
    let images = contexts
        .iter()
        .filter(|m| m.content.iter().any(|b| b.kind() == "image"))
        .count();
    assert_eq!(images, 2, "two 1 MiB images fit in 3 MiB, with their JSON");
    let note = contexts.last().unwrap().content[0].as_text().unwrap();
    assert!(note.starts_with("dsh-tools: 6 image-bearing"), "{note}");
}

#[tokio::test]
async fn a_completion_is_bounded_by_what_it_takes_on_the_host_not_by_its_json() {
    // 100,000 zeros: 200 KB of JSON (under a 1 MiB cap) but about 7 MB as host values, more
    // than the completion's host bound (twice the cap plus 1 MiB).
    let config = CodeRuntimeConfig {
        max_output_bytes: f64::from(1 << 20),
        ..CodeRuntimeConfig::default()
    };
    let registry = registry(config);
    let result = run(&registry, "return new Array(100000).fill(0);").await;
    assert!(result.is_error(), "{}", &result.text()[..100]);
    assert!(
        result
            .text()
            .contains("outer output exceeded 1048576 bytes"),
        "{}",
        result.text()
    );
    // A completion that fits is returned whole.
    let fits = run(&registry, "return new Array(10000).fill(0);").await;
    assert!(!fits.is_error(), "{}", fits.text());
}

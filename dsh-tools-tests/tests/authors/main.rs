//! Tool authors, round 2 (issue #9): retries only what is marked transient, registrations kept
//! unless disposed.

use dsh_tools::{
    CancellationToken, OutputDecl, Registry, ToolDefinition, ToolError, ToolExecutionInput,
    wrappers,
};
use serde_json::json;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};

fn failing(name: &str, error: fn() -> ToolError, tries: Arc<AtomicU32>) -> ToolDefinition {
    ToolDefinition::new(name, "fails", json!({}), OutputDecl::text(), move |_, _| {
        tries.fetch_add(1, Ordering::SeqCst);
        async move { Err::<serde_json::Value, _>(error()) }
    })
}

#[tokio::test]
async fn retry_runs_again_only_what_the_tool_marked_transient() {
    let registry = Registry::new();
    registry.on_execute(wrappers::retry(3));
    let plain = Arc::new(AtomicU32::new(0));
    let io = Arc::new(AtomicU32::new(0));
    let transient = Arc::new(AtomicU32::new(0));
    registry
        .register(failing(
            "divide",
            || ToolError::new("division by zero"),
            plain.clone(),
        ))
        .unwrap();
    registry
        .register(failing(
            "read",
            || ToolError::from_error(&std::io::Error::other("no such file")),
            io.clone(),
        ))
        .unwrap();
    registry
        .register(failing(
            "fetch",
            || ToolError::transient("rate limited"),
            transient.clone(),
        ))
        .unwrap();
    for name in ["divide", "read", "fetch"] {
        let input = ToolExecutionInput::new("c", name, json!({}), CancellationToken::new());
        assert!(registry.execute(input).await.is_error());
    }
    assert_eq!(plain.load(Ordering::SeqCst), 1, "a plain error is final");
    assert_eq!(io.load(Ordering::SeqCst), 1, "an io::Error is final");
    assert_eq!(
        transient.load(Ordering::SeqCst),
        3,
        "a transient error is retried"
    );
}

#[test]
fn an_ignored_registration_keeps_the_tool_and_dispose_removes_it() {
    let registry = Registry::new();
    let tool = |name: &str| {
        ToolDefinition::new(name, "d", json!({}), OutputDecl::text(), |_, _| async {
            Ok(json!("ok"))
        })
    };
    // What rustc's `let _ = ...` help used to lose.
    let _ = registry.register(tool("a"));
    registry.register(tool("b")).unwrap();
    let c = registry.register(tool("c")).unwrap();
    let names = |r: &Registry| -> Vec<String> {
        r.schemas(None)
            .unwrap()
            .into_iter()
            .map(|s| s.name)
            .collect()
    };
    assert_eq!(names(&registry), ["a", "b", "c"]);
    c.dispose();
    assert_eq!(names(&registry), ["a", "b"]);
}

/// Drops set a flag: whether the body's future was dropped.
struct DropFlag(Arc<std::sync::atomic::AtomicBool>);

impl Drop for DropFlag {
    fn drop(&mut self) {
        self.0.store(true, Ordering::SeqCst);
    }
}

#[tokio::test(start_paused = true)]
async fn a_declared_timeout_is_enforced_without_a_wrapper() {
    use std::sync::atomic::AtomicBool;
    use std::time::Duration;
    let registry = Registry::new();
    let dropped = Arc::new(AtomicBool::new(false));
    let flag = dropped.clone();
    // Ignores its signal and would run for an hour.
    registry
        .register(
            ToolDefinition::new(
                "stuck",
                "hangs",
                json!({}),
                OutputDecl::text(),
                move |_, _| {
                    let guard = DropFlag(flag.clone());
                    async move {
                        tokio::time::sleep(Duration::from_secs(3600)).await;
                        drop(guard);
                        Ok(json!("late"))
                    }
                },
            )
            .timeout(Duration::from_millis(100))
            .timeout_grace(Duration::from_secs(1)),
        )
        .unwrap();
    // Honours its signal.
    registry
        .register(
            ToolDefinition::new(
                "polite",
                "stops",
                json!({}),
                OutputDecl::text(),
                |_, ctx| async move {
                    ctx.signal().cancelled().await;
                    Ok(json!("stopped"))
                },
            )
            .timeout(Duration::from_millis(100)),
        )
        .unwrap();
    let caller = CancellationToken::new();
    let started = tokio::time::Instant::now();
    let stuck = registry
        .execute(ToolExecutionInput::new(
            "c1",
            "stuck",
            json!({}),
            caller.clone(),
        ))
        .await;
    assert_eq!(stuck.code(), Some("TOOL_TIMEOUT"));
    assert_eq!(stuck.text(), "Error: tool call timed out after 100ms");
    assert!(
        dropped.load(Ordering::SeqCst),
        "the body was dropped after the grace period"
    );
    // Paused time: the call settled at the deadline plus the grace, not after an hour.
    assert_eq!(started.elapsed(), Duration::from_millis(1100));
    let polite = registry
        .execute(ToolExecutionInput::new(
            "c2",
            "polite",
            json!({}),
            caller.clone(),
        ))
        .await;
    assert_eq!(polite.code(), Some("TOOL_TIMEOUT"));
    assert!(
        !caller.is_cancelled(),
        "only the body's signal is cancelled"
    );
}

mod errors {
    use dsh_tools::{Tool, tool};

    /// Reads a config with anyhow.
    #[tool]
    async fn read_config(
        /// the path
        path: String,
    ) -> anyhow::Result<String> {
        use anyhow::Context;
        std::fs::read_to_string(&path).with_context(|| format!("reading {path}"))
    }

    /// Parses with a boxed error.
    #[tool]
    async fn parse_number(
        /// the text
        text: String,
    ) -> Result<i64, Box<dyn std::error::Error + Send + Sync>> {
        Ok(text.trim().parse::<i64>()?)
    }

    #[tokio::test]
    async fn anyhow_and_boxed_errors_become_tool_errors() {
        let registry = dsh_tools::Registry::new();
        registry.register(ReadConfig).unwrap();
        registry.register(ParseNumber).unwrap();
        let call = |name: &str, args: serde_json::Value| {
            dsh_tools::ToolExecutionInput::new("c", name, args, dsh_tools::CancellationToken::new())
        };
        let missing = registry
            .execute(call(
                "read_config",
                serde_json::json!({"path": "/nonexistent/x"}),
            ))
            .await;
        assert!(
            missing
                .text()
                .starts_with("Error: reading /nonexistent/x: "),
            "{}",
            missing.text()
        );
        let bad = registry
            .execute(call("parse_number", serde_json::json!({"text": "x"})))
            .await;
        assert_eq!(bad.text(), "Error: invalid digit found in string");
        assert_eq!(ParseNumber.name(), "parse_number");
    }

    static FLAKY_CALLS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    static BOXED_CALLS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

    /// Fails once as transient, through anyhow with context, then succeeds.
    #[tool]
    async fn flaky(
        /// unused
        n: u32,
    ) -> anyhow::Result<u32> {
        use anyhow::Context;
        if FLAKY_CALLS.fetch_add(1, std::sync::atomic::Ordering::SeqCst) == 0 {
            return Err(dsh_tools::ToolError::transient("busy")).context("calling the service");
        }
        Ok(n)
    }

    /// Fails once as transient, through a boxed error, then succeeds.
    #[tool]
    async fn flaky_boxed(
        /// unused
        n: u32,
    ) -> Result<u32, Box<dyn std::error::Error + Send + Sync>> {
        if BOXED_CALLS.fetch_add(1, std::sync::atomic::Ordering::SeqCst) == 0 {
            return Err(Box::new(dsh_tools::ToolError::transient("busy")));
        }
        Ok(n)
    }

    #[tokio::test]
    async fn codes_survive_anyhow_and_boxed_errors_so_transient_failures_are_retried() {
        use std::sync::atomic::Ordering;
        let registry = dsh_tools::Registry::new();
        registry.register(Flaky).unwrap().keep();
        registry.register(FlakyBoxed).unwrap().keep();
        registry.on_execute(dsh_tools::wrappers::retry(3)).keep();
        for (name, calls) in [("flaky", &FLAKY_CALLS), ("flaky_boxed", &BOXED_CALLS)] {
            let input = dsh_tools::ToolExecutionInput::new(
                "c",
                name,
                serde_json::json!({"n": 7}),
                dsh_tools::CancellationToken::new(),
            );
            let result = registry.execute(input).await;
            assert_eq!(result.text(), "7", "{name}");
            assert_eq!(calls.load(Ordering::SeqCst), 2, "{name}: retried once");
        }
        let error = dsh_tools::ToolError::from(anyhow::Error::from(dsh_tools::ToolError::coded(
            "QuotaError",
            "QUOTA",
            "out of quota",
        )));
        assert_eq!(
            (error.message(), error.code()),
            ("out of quota", Some("QUOTA"))
        );
    }
}

mod docs {
    use dsh_tools::{Tool, ToolError, tool};

    /// Search the code.
    ///
    /// Patterns are regular expressions.
    /// Results are capped at 100.
    #[tool]
    async fn search(
        /// the pattern
        ///
        /// (a regular expression)
        pattern: String,
    ) -> Result<String, ToolError> {
        Ok(pattern)
    }

    #[test]
    fn blank_doc_lines_separate_paragraphs() {
        assert_eq!(
            Search.description(),
            "Search the code.\n\nPatterns are regular expressions.\nResults are capped at 100."
        );
        let params = Search.definition().parameters().clone();
        assert_eq!(
            params["properties"]["pattern"]["description"],
            "the pattern\n\n(a regular expression)"
        );
    }
}

mod testing_helpers {
    use dsh_tools::{CancellationToken, State, ToolError, ToolRunContext, testing, tool};
    use serde_json::json;

    #[derive(Clone)]
    struct Root(String);

    /// Joins a path under the root.
    #[tool]
    async fn join(
        State(root): State<Root>,
        /// a relative path
        path: String,
        ctx: ToolRunContext,
    ) -> Result<String, ToolError> {
        if ctx.is_cancelled() {
            return Err(ToolError::aborted());
        }
        Ok(format!("{}/{path}", root.0))
    }

    #[tokio::test]
    async fn a_tool_runs_in_a_unit_test_directly_and_through_the_pipeline() {
        // The function itself, with a test context.
        let signal = CancellationToken::new();
        let ctx = ToolRunContext::for_test("join", json!({"path": "a"}), signal.clone());
        assert_eq!(
            join(State(Root("/srv".into())), "a".into(), ctx)
                .await
                .unwrap(),
            "/srv/a"
        );
        signal.cancel();
        let cancelled = ToolRunContext::for_test("join", json!({}), signal);
        assert!(
            join(State(Root("/srv".into())), "a".into(), cancelled)
                .await
                .is_err()
        );
        // The whole tool: validation, decode, body, output.
        let tool = Join::with(Root("/srv".into()));
        assert_eq!(
            testing::call(tool.clone(), json!({"path": "b"}))
                .await
                .text(),
            "/srv/b"
        );
        let bad = testing::call(tool, json!({"path": 3, "x": 1})).await;
        assert_eq!(bad.code(), Some("INVALID_ARGS"));
    }
}

#[test]
fn a_declared_timeout_on_a_runtime_without_timers_does_not_panic() {
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let registry = Registry::new();
    registry
        .register(
            ToolDefinition::new("quick", "d", json!({}), OutputDecl::text(), |_, _| async {
                Ok(json!("done"))
            })
            .timeout(std::time::Duration::from_millis(50)),
        )
        .unwrap();
    let input = ToolExecutionInput::new("c", "quick", json!({}), CancellationToken::new());
    assert_eq!(rt.block_on(registry.execute(input)).text(), "done");
}

#[test]
fn media_constructors_refuse_swapped_and_malformed_arguments() {
    use dsh_tools::{ContentBlock, ToolError};
    let message = |r: Result<ContentBlock, dsh_tools::InvalidMedia>| r.unwrap_err().to_string();
    assert_eq!(
        message(ContentBlock::image("image/png", "iVBORw0KGgo=")),
        "ContentBlock::image(data, mime_type): the arguments are swapped (data \"image/png\" is a \
         MIME type): the base64 data comes first"
    );
    assert_eq!(
        message(ContentBlock::audio("audio/wav", "UklGRg==")),
        "ContentBlock::audio(data, mime_type): the arguments are swapped (data \"audio/wav\" is a \
         MIME type): the base64 data comes first"
    );
    assert_eq!(
        message(ContentBlock::image("iVBORw0KGgo=", "png")),
        "ContentBlock::image(data, mime_type): mime_type \"png\" is not `type/subtype` (for \
         example \"image/png\")"
    );
    assert_eq!(
        message(ContentBlock::audio("UklGRg==", "image/png")),
        "ContentBlock::audio(data, mime_type): mime_type \"image/png\" is not an audio type \
         (`audio/…`); use the constructor for its kind, or `ContentBlock::new` for any other block"
    );
    assert_eq!(
        message(ContentBlock::image("iVBO Rw0K", "image/png")),
        "ContentBlock::image(data, mime_type): data is not base64: ' ' at byte 4 (standard \
         alphabet, no whitespace)"
    );
    assert_eq!(
        message(ContentBlock::image("iVBORw0", "image/png")),
        "ContentBlock::image(data, mime_type): data is not base64: its length 7 is not a multiple \
         of 4 (pad with `=`)"
    );
    assert_eq!(
        message(ContentBlock::image("", "image/png")),
        "ContentBlock::image(data, mime_type): data is empty"
    );
    // A long refused argument is quoted in part.
    let long = format!("image/{}", "x".repeat(10_000));
    assert!(message(ContentBlock::image(long.as_str(), "AAAA")).len() < 200);
    // Parameters and case are allowed; the block keeps the text as given.
    let block = ContentBlock::image("AAAA", "Image/SVG+xml; charset=utf-8").unwrap();
    assert_eq!(block.to_json()["mimeType"], "Image/SVG+xml; charset=utf-8");
    // In a body, `?` turns the refusal into a coded `ToolError`.
    let error = ToolError::from(ContentBlock::image("image/png", "AAAA").unwrap_err());
    assert_eq!(error.code(), Some("INVALID_MEDIA"));
    assert!(error.message().contains("swapped"), "{}", error.message());
}

#[test]
fn media_blocks_have_the_shapes_peers_read() {
    use dsh_tools::ContentBlock;
    let image = ContentBlock::image("AAAA", "image/png").unwrap();
    assert_eq!(
        image.to_json(),
        json!({"type": "image", "data": "AAAA", "mimeType": "image/png"})
    );
    assert_eq!(ContentBlock::new(image.to_json()).unwrap(), image);
    assert_eq!(
        ContentBlock::audio("AAAA", "audio/wav").unwrap().kind(),
        "audio"
    );
    assert_eq!(
        ContentBlock::resource_link("file:///a", "a").to_json(),
        json!({"type": "resource_link", "uri": "file:///a", "name": "a"})
    );
    assert_eq!(
        ContentBlock::text_resource("file:///a.md", "text/markdown", "# A").to_json(),
        json!({"type": "resource", "resource": {"uri": "file:///a.md", "mimeType": "text/markdown", "text": "# A"}})
    );
}

/// Cards drawn from the typed arguments and output (`Tool::call_card`, `Tool::result_card`).
mod typed_cards {
    use dsh_tools::present::{TerminalExit, TerminalResult, ToolCallView, ToolResultView};
    use dsh_tools::{CancellationToken, Registry, Tool, ToolError, ToolExecutionInput, tool};
    use serde::{Deserialize, Serialize};
    use serde_json::{Value, json};

    #[derive(Serialize, Deserialize, schemars::JsonSchema)]
    struct Ran {
        output: String,
        code: i32,
    }

    /// Runs a command.
    #[tool]
    async fn run(
        /// The command line
        command: String,
    ) -> Result<Ran, ToolError> {
        if command == "fail" {
            return Err(ToolError::new("could not start"));
        }
        Ok(Ran {
            output: format!("ran {command}\n"),
            code: 3,
        })
    }

    fn registry() -> Registry {
        let registry = Registry::new();
        let carded = Run
            .call_card(|args| {
                Some(ToolCallView::Terminal {
                    title: args.command.clone(),
                    description: None,
                    cwd: None,
                })
            })
            .result_card(|_args, out| {
                Some(ToolResultView::Terminal(TerminalResult {
                    title: None,
                    output: Some(out.output.clone()),
                    exit: Some(TerminalExit::Code(i64::from(out.code))),
                }))
            });
        registry.register(carded).unwrap();
        registry
    }

    async fn call(registry: &Registry, args: Value) -> dsh_tools::ToolExecutionResult {
        let input = ToolExecutionInput::new("c", "run", args, CancellationToken::new());
        registry.execute(input).await
    }

    #[tokio::test]
    async fn cards_read_the_typed_values_and_replay_from_the_result_meta() {
        let registry = registry();
        let args = json!({"command": "ls"});
        assert_eq!(
            registry.present_call("run", &args, None).to_string(),
            "$ ls"
        );
        let result = call(&registry, args.clone()).await;
        let expected = ToolResultView::Terminal(TerminalResult {
            title: None,
            output: Some("ran ls\n".into()),
            exit: Some(TerminalExit::Code(3)),
        });
        assert_eq!(
            registry.present_result("run", &args, &result, None),
            expected
        );
        // A replay (another process) has only the durable parts: the card comes back from the
        // meta, with no value to read.
        let replay = dsh_tools::ToolExecutionResult::success(Value::Null)
            .with_content(result.content().to_vec())
            .with_meta(result.meta().cloned());
        let another_process = self::registry();
        assert_eq!(
            another_process.present_result("run", &args, &replay, None),
            expected
        );
    }

    #[tokio::test]
    async fn a_result_card_that_panics_shows_the_generic_card_and_the_call_succeeds() {
        let registry = Registry::new();
        registry
            .register(Run.result_card(|_, _| panic!("card bug")))
            .unwrap();
        let args = json!({"command": "ls"});
        let result = call(&registry, args.clone()).await;
        assert!(!result.is_error(), "{}", result.text());
        assert!(matches!(
            registry.present_result("run", &args, &result, None),
            ToolResultView::Generic { .. }
        ));
    }

    #[tokio::test]
    async fn content_rendered_from_the_typed_values() {
        let registry = Registry::new();
        registry
            .register(Run.render_with(|args, out| {
                dsh_tools::content::text_content(format!(
                    "$ {}\n{}(exit {})",
                    args.command, out.output, out.code
                ))
            }))
            .unwrap();
        let result = call(&registry, json!({"command": "ls"})).await;
        assert_eq!(result.text(), "$ ls\nran ls\n(exit 3)");
        // The value is still the structured output.
        assert_eq!(
            result.value(),
            Some(&json!({"output": "ran ls\n", "code": 3}))
        );
    }

    #[tokio::test]
    async fn bad_arguments_and_failures_show_the_generic_cards() {
        let registry = registry();
        // Arguments that do not validate (and deep ones) never reach the typed card.
        for args in [json!({"cmd": "ls"}), json!({"command": 7})] {
            assert!(matches!(
                registry.present_call("run", &args, None),
                ToolCallView::Generic { .. }
            ));
        }
        let mut deep = json!("x");
        for _ in 0..100_000 {
            deep = Value::Array(vec![deep]);
        }
        let mut deep_args = serde_json::Map::new();
        deep_args.insert("command".into(), deep);
        let deep_args = Value::Object(deep_args);
        assert!(matches!(
            registry.present_call("run", &deep_args, None),
            ToolCallView::Generic { .. }
        ));
        dsh_tools::json::drop_deep(deep_args);
        let failed = call(&registry, json!({"command": "fail"})).await;
        assert!(failed.is_error());
        assert!(matches!(
            registry.present_result("run", &json!({"command": "fail"}), &failed, None),
            ToolResultView::Generic { .. }
        ));
    }
}

/// Media attached to the content, kept out of the value (`ToolRunContext::attach`).
mod attachments {
    use dsh_tools::{
        CancellationToken, ContentBlock, Registry, ToolError, ToolExecutionInput, ToolRunContext,
        tool, wrappers,
    };
    use serde_json::json;
    use std::sync::atomic::{AtomicU32, Ordering};

    static TRIES: AtomicU32 = AtomicU32::new(0);

    #[derive(serde::Serialize, schemars::JsonSchema)]
    struct Drawn {
        points: u32,
    }

    /// Draws a chart; the first attempt fails transiently after attaching its image.
    #[tool]
    async fn chart(
        /// How many points
        points: u32,
        ctx: ToolRunContext,
    ) -> Result<Drawn, ToolError> {
        let attempt = TRIES.fetch_add(1, Ordering::SeqCst);
        ctx.attach(ContentBlock::image(
            format!("attempt{attempt}"),
            "image/png",
        )?);
        if attempt == 0 {
            return Err(ToolError::transient("the renderer is warming up"));
        }
        if points == 0 {
            return Err(ToolError::new("nothing to draw"));
        }
        Ok(Drawn { points })
    }

    #[tokio::test]
    async fn blocks_land_in_the_content_once_and_never_in_the_value() {
        let registry = Registry::new();
        registry.register(Chart).unwrap();
        registry.on_execute(wrappers::retry(3));
        let run = |points| {
            let input = ToolExecutionInput::new(
                "c",
                "chart",
                json!({ "points": points }),
                CancellationToken::new(),
            );
            registry.execute(input)
        };
        let ok = run(5).await;
        assert_eq!(ok.value(), Some(&json!({"points": 5})));
        let blocks: Vec<_> = ok.content().iter().map(|b| b.to_json()).collect();
        assert_eq!(
            blocks,
            [
                json!({"type": "text", "text": "{\"points\":5}"}),
                // Only the successful attempt's image: the retried one's was dropped.
                json!({"type": "image", "data": "attempt1", "mimeType": "image/png"}),
            ]
        );
        // A failure keeps none.
        let failed = run(0).await;
        assert!(failed.is_error());
        assert!(
            failed.content().iter().all(|b| b.kind() == "text"),
            "{}",
            failed.text()
        );
    }
}

mod fuzz;
mod tool_macro;
#[allow(dead_code, unreachable_pub)]
#[path = "../common/tools.rs"]
mod tools;

#[path = "../common/warnings.rs"]
mod warnings;

/// Issue 22 item 2: a body that blocks its thread.
mod blocking_bodies {
    use super::warnings::Warnings;
    use dsh_tools::{ToolError, ToolRunContext, testing, tool};
    use serde_json::json;
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::time::Duration;

    static FINISHED: AtomicBool = AtomicBool::new(false);

    /// Blocks its thread (a plain `fn`: the blocking pool). The default grace (5 s) applies:
    /// the caller is released at the deadline anyway.
    #[tool(timeout_ms = 50)]
    fn blocks(
        /// How long to block, in milliseconds
        ms: u64,
    ) -> Result<String, ToolError> {
        std::thread::sleep(Duration::from_millis(ms));
        FINISHED.store(true, Ordering::SeqCst);
        Ok("done".into())
    }

    #[tokio::test]
    async fn a_plain_fn_runs_on_the_blocking_pool_and_its_timeout_releases_the_caller() {
        let result = testing::call(Blocks, json!({"ms": 1_000})).await;
        // Settled as a timeout while the thread still sleeps: the caller was not held.
        let finished_at_settlement = FINISHED.load(Ordering::SeqCst);
        assert_eq!(result.code(), Some("TOOL_TIMEOUT"), "{result:?}");
        assert!(!finished_at_settlement);
        // Within its deadline a blocking body is an ordinary call.
        let quick = testing::call(Blocks, json!({"ms": 0})).await;
        assert!(!quick.is_error(), "{}", quick.text());
        assert_eq!(quick.value(), Some(&json!("done")));
    }

    /// Reports whether its signal was cancelled, polling it from the blocking pool.
    #[tool(timeout_ms = 20, timeout_grace_ms = 2_000)]
    fn watches(
        /// Unused
        _x: Option<u8>,
        ctx: ToolRunContext,
    ) -> Result<String, ToolError> {
        while !ctx.signal().is_cancelled() {
            std::thread::sleep(Duration::from_millis(1));
        }
        Err(ToolError::new("stopped when asked"))
    }

    #[tokio::test]
    async fn a_blocking_body_sees_its_signal_cancelled_at_the_deadline() {
        // Within the grace the body notices and returns; the call is still a timeout.
        let result = testing::call(Watches, json!({})).await;
        assert_eq!(result.code(), Some("TOOL_TIMEOUT"), "{result:?}");
    }

    /// Panics on the blocking pool.
    #[tool]
    fn panics(
        /// Unused
        _x: Option<u8>,
    ) -> Result<String, ToolError> {
        panic!("the blocking body broke")
    }

    #[tokio::test]
    async fn a_panic_on_the_blocking_pool_is_the_calls_error() {
        let result = testing::call(Panics, json!({})).await;
        assert!(result.is_error());
        let text = result.text();
        assert!(text.contains("the blocking body broke"), "{text}");
    }

    /// Blocks the executor's thread (an `async fn` that never yields).
    #[tool(timeout_ms = 20)]
    async fn stalls() -> Result<String, ToolError> {
        std::thread::sleep(Duration::from_millis(200));
        Ok("late".into())
    }

    #[tokio::test]
    async fn an_async_body_that_blocks_past_its_deadline_is_reported() {
        let warnings = Warnings::default();
        let _subscriber = tracing::subscriber::set_default(warnings.clone());
        let result = testing::call(Stalls, json!({})).await;
        // It could not be interrupted: the result stands, and a warning says why.
        assert_eq!(result.value(), Some(&json!("late")), "{result:?}");
        let seen = warnings.0.lock().unwrap().clone();
        assert!(
            seen.iter().any(|w| w.starts_with("tool `stalls` settled ")
                && w.contains("ms past its 20ms timeout: its body blocked the thread")
                && w.contains("`#[tool]` on a plain `fn`")),
            "{seen:?}"
        );
    }
}

/// Issue 22 items 3 and 12: `fuzz_tool` draws the numbers that break arithmetic, and stays quiet
/// while shrinking.
mod fuzzing_edges {
    use dsh_tools::testing::{FuzzConfig, fuzz_tool};
    use dsh_tools::{ToolError, tool};

    /// Divides.
    #[tool]
    async fn fdiv(
        /// The dividend
        a: f64,
        /// The divisor
        b: f64,
    ) -> Result<f64, ToolError> {
        Ok(a / b)
    }

    /// Multiplies.
    #[tool]
    async fn fmul(
        /// A factor
        a: f64,
        /// A factor
        b: f64,
    ) -> Result<f64, ToolError> {
        Ok(a * b)
    }

    #[test]
    fn float_edges_find_the_infinite_and_undefined_outputs() {
        for (tool, name) in [
            (dsh_tools::ToolDefinition::from(Fdiv), "fdiv"),
            (dsh_tools::ToolDefinition::from(Fmul), "fmul"),
        ] {
            let failure = fuzz_tool(tool, FuzzConfig::default().cases(256)).unwrap_err();
            assert_eq!(failure.tool, name);
            assert!(
                failure.problem.starts_with("the output does not validate"),
                "{failure}"
            );
        }
    }

    /// Increments a byte.
    #[tool]
    async fn next_byte(
        /// The byte
        b: u8,
    ) -> Result<u8, ToolError> {
        Ok(b.checked_add(1).expect("255 + 1 overflows a byte")) // a bug at 255
    }

    /// Adds an `i32` to a `u32`.
    #[tool]
    async fn widen(
        /// Any `i64`
        n: i64,
    ) -> Result<u32, ToolError> {
        Ok(u32::try_from(n).unwrap_or(0).saturating_add(1))
    }

    #[test]
    fn integer_edges_hit_the_types_limits() {
        let failure = fuzz_tool(NextByte, FuzzConfig::default().cases(64)).unwrap_err();
        assert!(
            failure.problem.starts_with("the body panicked"),
            "{failure}"
        );
        assert_eq!(failure.arguments["b"], 255);
        // A tool that handles every edge passes.
        let report = fuzz_tool(Widen, FuzzConfig::default().cases(128)).unwrap();
        assert_eq!(report.cases, 128);
    }

    const QUIET_CHILD: &str = "DSH_TOOLS_FUZZ_QUIET_CHILD";

    /// Panics on every even number.
    #[tool]
    async fn even_panics(
        /// Any number
        n: i64,
    ) -> Result<i64, ToolError> {
        assert!(n % 2 != 0, "fuzz-quiet-marker: {n} is even");
        Ok(n)
    }

    /// Run in a child process (the panic hook is process-wide): shrinking calls the panicking
    /// body many times, and none of those panics is printed; a panic elsewhere still is.
    #[test]
    fn shrinking_is_quiet_and_the_failure_is_reported_once() {
        if std::env::var_os(QUIET_CHILD).is_some() {
            let failure = fuzz_tool(EvenPanics, FuzzConfig::default().cases(64)).unwrap_err();
            assert!(failure.problem.contains("fuzz-quiet-marker"), "{failure}");
            // Where it panicked, though nothing was printed.
            assert!(
                failure
                    .problem
                    .contains("(at dsh-tools-tests/tests/authors/main.rs:"),
                "{failure}"
            );
            assert_eq!(failure.arguments["n"].as_i64().unwrap() % 2, 0, "{failure}");
            let elsewhere = std::thread::spawn(|| panic!("outside-marker")).join();
            assert!(elsewhere.is_err());
            return;
        }
        let output = std::process::Command::new(std::env::current_exe().unwrap())
            .args([
                "--exact",
                "fuzzing_edges::shrinking_is_quiet_and_the_failure_is_reported_once",
                "--nocapture",
                "--test-threads=1",
            ])
            .env(QUIET_CHILD, "1")
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        let stdout = String::from_utf8_lossy(&output.stdout);
        assert!(output.status.success(), "{stdout}\n{stderr}");
        assert!(stdout.contains("1 passed"), "{stdout}");
        assert!(!stderr.contains("fuzz-quiet-marker"), "{stderr}");
        assert_eq!(stderr.matches("outside-marker").count(), 1, "{stderr}");
    }
}

/// Issue 22 item 5: an alias the validator would refuse is refused at registration.
#[allow(dead_code)] // the types are decoded, never read
mod serde_aliases {
    use dsh_tools::{Registry, ToolError, tool};
    use schemars::JsonSchema;
    use serde::Deserialize;
    use std::collections::BTreeMap;

    #[derive(Deserialize, JsonSchema)]
    struct FieldAliasArgs {
        /// The file
        #[serde(alias = "file")]
        path: String,
    }

    /// Reads.
    #[tool]
    async fn field_alias(args: FieldAliasArgs) -> Result<String, ToolError> {
        Ok(args.path)
    }

    #[derive(Deserialize, JsonSchema)]
    #[serde(rename_all = "snake_case")]
    enum Mode {
        #[serde(alias = "fast")]
        Quick,
        Slow,
    }

    #[derive(Deserialize, JsonSchema)]
    struct Inner {
        /// A deep field
        #[serde(alias = "deep_old")]
        deep: Option<Vec<Mode>>,
    }

    #[derive(Deserialize, JsonSchema)]
    struct VariantAliasArgs {
        /// Nested under a list and an option
        inner: Option<Vec<Inner>>,
    }

    /// Runs.
    #[tool]
    async fn variant_alias(args: VariantAliasArgs) -> Result<String, ToolError> {
        Ok(args.inner.map_or(0, |i| i.len()).to_string())
    }

    #[test]
    fn an_alias_on_a_field_or_variant_is_refused_at_registration_naming_it() {
        let registry = Registry::new();
        let error = registry.register(FieldAlias).unwrap_err().to_string();
        assert!(
            error.contains("accepts names its schema does not declare: `file`"),
            "{error}"
        );
        assert!(error.contains("#[serde(alias)]"), "{error}");
        let error = registry.register(VariantAlias).unwrap_err().to_string();
        assert!(error.contains("`deep_old`, `fast`"), "{error}");
        assert!(registry.tools(None).is_empty());
    }

    #[derive(Deserialize, JsonSchema)]
    #[serde(rename_all = "camelCase")]
    struct PlainArgs {
        /// A renamed field
        file_path: String,
        /// A map of structs
        extra: BTreeMap<String, Inner2>,
        /// An externally tagged enum with data
        shape: Shape,
        /// An internally tagged one
        op: Op,
    }

    #[derive(Deserialize, JsonSchema)]
    struct Inner2 {
        /// A number
        n: u8,
    }

    #[derive(Deserialize, JsonSchema)]
    enum Shape {
        Circle { radius: f64 },
        Square(f64),
        Point,
    }

    #[derive(Deserialize, JsonSchema)]
    #[serde(tag = "kind", rename_all = "snake_case")]
    enum Op {
        Add { a: i64 },
        Neg,
    }

    /// Plain.
    #[tool]
    async fn plain(args: PlainArgs) -> Result<String, ToolError> {
        let _ = (args.extra, args.shape, args.op);
        Ok(args.file_path)
    }

    #[derive(Deserialize)]
    struct Settings {
        #[serde(alias = "lvl")]
        level: u8,
    }

    #[derive(Deserialize, JsonSchema)]
    struct OpaqueArgs {
        /// Free-form settings (the schema admits any value)
        #[schemars(with = "serde_json::Value")]
        settings: Settings,
    }

    /// Configures.
    #[tool]
    async fn configure(args: OpaqueArgs) -> Result<u8, ToolError> {
        Ok(args.settings.level)
    }

    #[test]
    fn names_under_a_part_that_admits_any_value_are_not_refused() {
        Registry::new().register(Configure).unwrap();
    }

    #[test]
    fn types_without_aliases_register() {
        Registry::new().register(Plain).unwrap().keep();
    }

    /// Picks a mode.
    #[tool]
    async fn pick(
        /// The mode, nested in an option of a list
        modes: Option<Vec<Mode>>,
    ) -> Result<usize, ToolError> {
        Ok(modes.map_or(0, |m| m.len()))
    }

    #[test]
    fn an_alias_inside_an_inline_parameters_type_is_refused_too() {
        let error = Registry::new().register(Pick).unwrap_err().to_string();
        assert!(
            error.contains("accepts names its schema does not declare: `fast`"),
            "{error}"
        );
    }

    mod api {
        /// A type named like the tool's generated type, in another module.
        #[derive(serde::Deserialize, schemars::JsonSchema)]
        pub(super) struct ReadNote {
            /// The note
            pub(super) name: String,
        }
    }

    /// Reads a note: a qualified path cannot clash with the generated `ReadNote`.
    #[tool]
    async fn read_note(args: api::ReadNote) -> Result<String, ToolError> {
        Ok(args.name)
    }

    #[test]
    fn a_qualified_type_named_like_the_tool_is_not_a_clash() {
        Registry::new().register(ReadNote).unwrap();
    }
}

/// Issue 22 item 9: validation messages (they reach the model) with the right path and the whole
/// choice, in one format.
#[allow(dead_code)] // the types are decoded, never read
mod validation_messages {
    use dsh_tools::{ToolError, testing, tool};
    use schemars::JsonSchema;
    use serde::Deserialize;
    use serde_json::json;

    #[derive(Deserialize, JsonSchema)]
    #[serde(tag = "kind", rename_all = "snake_case")]
    enum Op {
        Add { a: i64, b: i64 },
        Neg { a: i64 },
    }

    #[derive(Deserialize, JsonSchema)]
    #[serde(rename_all = "snake_case")]
    enum Shape {
        Point,
        Circle { radius: f64 },
        Square(f64),
    }

    #[derive(Deserialize, JsonSchema)]
    #[serde(rename_all = "snake_case")]
    enum Color {
        Red,
        Green,
    }

    /// Computes.
    #[tool]
    async fn compute(
        /// The operation
        op: Op,
        /// Tags
        tags: Option<Vec<String>>,
        /// A shape
        shape: Option<Shape>,
        /// A color
        color: Option<Color>,
    ) -> Result<String, ToolError> {
        let _ = (op, tags, shape, color);
        Ok(String::new())
    }

    async fn message(args: serde_json::Value) -> String {
        let result = testing::call(Compute, args).await;
        assert_eq!(result.code(), Some("INVALID_ARGS"));
        result.text()
    }

    #[tokio::test]
    async fn messages_name_the_right_path_and_the_whole_choice() {
        let neg = json!({"kind": "neg", "a": 1});
        let cases = [
            // A string where the tagged enum's object goes: not the tag hint alone.
            (
                json!({"op": "add"}),
                r#""op" must be an object whose "op.kind" is one of ["add","neg"]"#,
            ),
            // The tag's path reads as the fields' paths do.
            (
                json!({"op": {"kind": "pow", "a": 1}}),
                r#""op.kind" must be one of ["add","neg"]"#,
            ),
            (
                json!({"op": {"kind": "add", "a": 1}}),
                r#"for "op.kind": "add", missing required property "op.b""#,
            ),
            // Null allowed: `(or null)` after the value's own violations, the label after its
            // insides'.
            (
                json!({"op": neg, "tags": [1]}),
                r#""tags[0]" must be a string ("tags" may also be null)"#,
            ),
            (
                json!({"op": neg, "tags": "x"}),
                r#""tags" must be an array (or null)"#,
            ),
            // An externally tagged enum: the whole choice, or the named variant's violations.
            (
                json!({"op": neg, "shape": "hexagon"}),
                r#""shape" must be one of ["point"], or an object with one key, one of ["circle","square"] (the variant's name, its data as the value) (or null)"#,
            ),
            (
                json!({"op": neg, "shape": {"circle": {"radius": "big"}}}),
                r#"for "circle", "shape.circle.radius" must be a number"#,
            ),
            // One list format everywhere: the spec's compact JSON.
            (
                json!({"op": neg, "color": "blue"}),
                r#""color" must be one of ["red","green"] (or null)"#,
            ),
        ];
        for (args, why) in cases {
            let text = message(args.clone()).await;
            assert!(
                text.ends_with(&format!("(matched 0): {why}")),
                "{args}: {text}"
            );
        }
    }
}

/// Issue 22 items 12 and 13: fuzzing around known-good arguments, a harness with the tools a
/// tool calls, an in-memory MCP round trip, and two instances of one stateful tool.
mod testing_round3 {
    #[cfg(feature = "mcp")]
    use dsh_tools::testing::McpRoundTrip;
    use dsh_tools::testing::{FuzzConfig, Harness, fuzz_tool, fuzz_tool_around};
    use dsh_tools::{Registry, State, ToolDefinition, ToolError, ToolRunContext, tool};
    use serde_json::json;

    /// Reads a line of the one file there is.
    #[tool]
    async fn read_line(
        /// The file
        path: String,
        /// The line, from 0
        line: u32,
    ) -> Result<String, ToolError> {
        if path != "notes.txt" {
            return Err(ToolError::new("no such file"));
        }
        let lines = ["first", "second"];
        Ok(lines[line as usize].to_owned()) // panics past the last line
    }

    #[test]
    fn fuzzing_around_an_example_reaches_the_code_past_the_error_paths() {
        // From the schema alone every valid case names a file that is not there.
        let report = fuzz_tool(ReadLine, FuzzConfig::default().cases(128)).unwrap();
        assert_eq!(report.tool_errors, report.valid, "{report:?}");
        let failure = fuzz_tool_around(
            ReadLine,
            [json!({"path": "notes.txt", "line": 0})],
            FuzzConfig::default().cases(128),
        )
        .unwrap_err();
        assert!(
            failure.problem.starts_with("the body panicked"),
            "{failure}"
        );
        assert_eq!(failure.arguments["path"], "notes.txt");
        assert!(
            failure.arguments["line"].as_u64().unwrap() >= 2,
            "{failure}"
        );
    }

    /// Looks a word up in a dictionary.
    #[tool]
    async fn lookup(
        State(words): State<Vec<&'static str>>,
        /// The word
        word: String,
        ctx: ToolRunContext,
    ) -> Result<bool, ToolError> {
        ctx.report_progress(1.0, Some(1.0), Some(&format!("looked up {word}")));
        Ok(words.contains(&word.as_str()))
    }

    /// Checks a sentence against both dictionaries.
    #[tool]
    async fn check(
        /// The sentence
        text: String,
        ctx: ToolRunContext,
    ) -> Result<Vec<String>, ToolError> {
        let mut unknown = Vec::new();
        for (i, word) in text.split_whitespace().enumerate() {
            let mut known = false;
            for dict in ["lookup_en", "lookup_fr"] {
                let input = ctx.nested(format!("w{i}{dict}"), dict, json!({"word": word}));
                known |= ctx.registry().execute(input).await.value() == Some(&json!(true));
            }
            if !known {
                unknown.push(word.to_owned());
            }
        }
        Ok(unknown)
    }

    #[tokio::test]
    async fn a_harness_holds_the_tools_a_tool_calls_two_instances_named_apart() {
        let en = ToolDefinition::from(Lookup::with(vec!["hello", "world"])).named("lookup_en");
        let fr = ToolDefinition::from(Lookup::with(vec!["bonjour"])).named("lookup_fr");
        let harness = Harness::new(Check)
            .unwrap()
            .with(en)
            .unwrap()
            .with(fr)
            .unwrap();
        let result = harness
            .call("check", json!({"text": "hello bonjour xyz"}))
            .await;
        assert_eq!(result.value(), Some(&json!(["xyz"])), "{}", result.text());
        let messages: Vec<String> = harness
            .progress()
            .into_iter()
            .filter_map(|p| p.message)
            .collect();
        assert_eq!(messages.len(), 6);
        assert_eq!(messages[0], "looked up hello");
        // The same name twice is still refused, with the way out in the message.
        let again = ToolDefinition::from(Lookup::with(vec![])).named("lookup_en");
        let error = harness.registry().register(again).unwrap_err().to_string();
        assert!(error.contains(".named("), "{error}");
    }

    #[cfg(feature = "mcp")]
    #[tokio::test]
    async fn an_mcp_round_trip_in_one_call() {
        let server = Registry::new();
        server.register(ReadLine).unwrap();
        let mcp = McpRoundTrip::new(&server).await.unwrap();
        assert_eq!(mcp.imported().names(), ["read_line"]);
        let ok = mcp
            .call("read_line", json!({"path": "notes.txt", "line": 1}))
            .await;
        assert_eq!(ok.text(), "second");
        let missing = mcp.call("read_line", json!({"path": "x", "line": 0})).await;
        assert!(missing.is_error());
        assert!(
            missing.text().contains("no such file"),
            "{}",
            missing.text()
        );
        let bad = mcp.call("read_line", json!({"path": 1})).await;
        assert_eq!(bad.code(), Some("INVALID_ARGS"));
    }
}

/// Issue 22 item 11: typed cards set on the tool itself, built with the one-expression
/// constructors.
mod card_keys {
    use dsh_tools::present::{ToolCallKind, ToolCallView, ToolResultView};
    use dsh_tools::{Registry, ToolError, ToolExecutionInput, tool};
    use schemars::JsonSchema;
    use serde::Serialize;
    use serde_json::json;

    /// Not `Deserialize`: the card is drawn from the output as the body returns it.
    #[derive(Serialize, JsonSchema)]
    struct Listing {
        lines: Vec<String>,
    }

    fn show_call(args: &ShowArgs) -> Option<ToolCallView> {
        Some(ToolCallView::Generic {
            title: format!("Show {}", args.path),
            kind: Some(ToolCallKind::Read),
            raw_input: None,
            content: None,
            locations: None,
        })
    }

    fn show_result(args: &ShowArgs, out: &Listing) -> Option<ToolResultView> {
        let lines = out.lines.iter().map(String::as_str);
        Some(ToolResultView::read(&args.path, 1, lines))
    }

    /// Shows a file.
    #[tool(call_card = show_call, result_card = show_result)]
    async fn show(
        /// The file
        path: String,
    ) -> Result<Listing, ToolError> {
        Ok(Listing {
            lines: vec![format!("contents of {path}"), "end".into()],
        })
    }

    #[test]
    fn a_read_card_from_any_offset_does_not_overflow() {
        let card = serde_json::to_value(ToolResultView::read("a", u64::MAX, ["x", "y"])).unwrap();
        assert_eq!(card["lines"][0]["number"], u64::MAX);
        assert_eq!(card["lines"][1]["number"], u64::MAX);
        assert_eq!(card["totalLines"], u64::MAX);
    }

    #[tokio::test]
    async fn card_keys_come_with_the_tool_however_it_is_registered() {
        use dsh_tools::Tool;
        let args = json!({"path": "b.txt"});
        // `register_tool`, `.definition()` and the card methods all keep the keys' cards.
        let registry = Registry::new();
        registry.register_tool(Show).unwrap();
        assert_eq!(
            registry.present_call("show", &args, None).title(),
            "Show b.txt"
        );
        let definition = Show.definition();
        let card = definition.call_presenter().map(|present| present(&args));
        assert_eq!(
            card.flatten().map(|c| c.title().to_owned()).as_deref(),
            Some("Show b.txt")
        );
        // A method's card replaces the key's of the same kind and keeps the other.
        let registry = Registry::new();
        registry
            .register(Show.result_card(|_, _| Some(ToolResultView::terminal("ok", 0))))
            .unwrap();
        assert_eq!(
            registry.present_call("show", &args, None).title(),
            "Show b.txt"
        );
        let input = ToolExecutionInput::new("c", "show", args.clone(), Default::default());
        let result = registry.execute(input).await;
        let card = registry.present_result("show", &args, &result, None);
        assert!(matches!(card, ToolResultView::Terminal(_)), "{card:?}");
    }

    #[tokio::test]
    async fn call_card_and_result_card_keys_attach_typed_cards() {
        let registry = Registry::new();
        registry.register(Show).unwrap();
        let args = json!({"path": "a.txt"});
        assert_eq!(
            registry.present_call("show", &args, None).title(),
            "Show a.txt"
        );
        let input = ToolExecutionInput::new("c", "show", args.clone(), Default::default());
        let result = registry.execute(input).await;
        let card = registry.present_result("show", &args, &result, None);
        assert_eq!(
            serde_json::to_value(card).unwrap(),
            json!({"card": "read", "path": "a.txt", "offset": 1, "totalLines": 2, "lines": [
                {"number": 1, "text": "contents of a.txt"}, {"number": 2, "text": "end"}
            ]})
        );
    }
}

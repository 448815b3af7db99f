//! The QuickJS runtime (`code::quickjs`): the runtime scenarios of
//! `conformance/code-mode/bridge.md` sections F–H, one named test each, the ledger table on the
//! real engine, and the hostile programs of the Code Mode issue (budgets, memory, stack,
//! cancellation, the lossless boundary, hostile names, no ambient authority). Every run is
//! bounded by a 60 s guard, so a hang fails instead of blocking CI.
//!
//! Skipped by name, with the reason:
//! - CM146 (`process.exit`): node-only; the sandbox has no `process` (spec §6.1).
//! - CM110's raw standard-output write: no standard streams in the sandbox (spec §6.1); the rest
//!   of CM110 runs.
//! - CM163's `maxWallMs` upper bound: a Node timer limit the port drops (spec §6.5).

use dsh_tools::code::quickjs::{BACKEND, QuickJsRuntime};
use dsh_tools::code::{
    CodeFailure, CodeRequest, CodeResult, CodeRuntime, CodeRuntimeConfig, ErrorClass, FailureKind,
    HostFn, Namespace,
};
use serde_json::{Value, json};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio_util::sync::CancellationToken;

fn rt(config: impl FnOnce(&mut CodeRuntimeConfig)) -> QuickJsRuntime {
    let mut c = CodeRuntimeConfig::default();
    config(&mut c);
    QuickJsRuntime::new(c).unwrap()
}

fn default_rt() -> QuickJsRuntime {
    rt(|_| {})
}

fn host<F>(f: F) -> HostFn
where
    F: Fn(Value) -> Result<Value, String> + Send + Sync + 'static,
{
    Arc::new(move |arg| {
        let out = f(arg);
        Box::pin(async move { out })
    })
}

fn tools(functions: Vec<(&str, HostFn)>) -> Vec<Namespace> {
    vec![Namespace {
        global: "tools".into(),
        functions: functions
            .into_iter()
            .map(|(n, f)| (n.to_owned(), f))
            .collect(),
        error_class: Some(ErrorClass {
            name: "ToolCallError".into(),
            member_name_property: "toolName".into(),
        }),
    }]
}

async fn run_with(
    runtime: &QuickJsRuntime,
    program: &str,
    bindings: Vec<Namespace>,
    signal: Option<CancellationToken>,
) -> CodeResult {
    let request = CodeRequest {
        program: program.into(),
        bindings,
        signal,
    };
    tokio::time::timeout(Duration::from_secs(60), runtime.run(request))
        .await
        .expect("the run ended within 60 s")
        .expect("no seam misuse")
}

async fn run(runtime: &QuickJsRuntime, program: &str) -> CodeResult {
    run_with(runtime, program, vec![], None).await
}

fn value(result: &CodeResult) -> &Value {
    assert!(result.error.is_none(), "{:?}", result.error);
    result.value.as_ref().expect("a value")
}

fn failure(result: &CodeResult) -> &CodeFailure {
    result.error.as_ref().expect("a failure")
}

// ---------------------------------------------------------------- F. Programs and bindings

#[tokio::test]
async fn cm110_typescript_in_value_out() {
    let program = "interface Point { x: number; y: number }\n\
                   const p: Point = { x: 1, y: 2 } as Point;\n\
                   console.log('point', p);\n\
                   console.warn('careful');\n\
                   return p.x + p.y;";
    let result = run(&default_rt(), program).await;
    assert_eq!(value(&result), &json!(3));
    assert_eq!(result.logs, ["point { x: 1, y: 2 }", "careful"]);
}

#[tokio::test]
async fn cm111_typed_rejections() {
    let echo_calls = Arc::new(Mutex::new(Vec::new()));
    let calls = Arc::clone(&echo_calls);
    let bindings = tools(vec![
        (
            "echo",
            host(move |a| {
                calls.lock().unwrap().push(a.clone());
                Ok(json!({"echoed": a}))
            }),
        ),
        ("fail", host(|_| Err("nope".into()))),
        ("failRaw", host(|_| Err("raw-nope".into()))),
    ]);
    let program = "const first = await tools.echo({n: 1});\n\
        let caught, caughtRaw;\n\
        try { await tools.fail({}) } catch (e) { caught = {isTyped: e instanceof ToolCallError && e instanceof Error, name: e.name, toolName: e.toolName, message: e.message} }\n\
        try { await tools.failRaw({}) } catch (e) { caughtRaw = {name: e.name, toolName: e.toolName, message: e.message, keys: Object.keys(e), text: String(e), code: 'code' in e, info: 'info' in e} }\n\
        return {first, caught, caughtRaw};";
    let result = run_with(&default_rt(), program, bindings, None).await;
    assert_eq!(
        value(&result),
        &json!({
            "first": {"echoed": {"n": 1}},
            "caught": {"isTyped": true, "name": "ToolCallError", "toolName": "fail", "message": "nope"},
            "caughtRaw": {"name": "ToolCallError", "toolName": "failRaw", "message": "raw-nope",
                          "keys": ["name", "toolName"], "text": "ToolCallError: raw-nope",
                          "code": false, "info": false}
        })
    );
    assert_eq!(*echo_calls.lock().unwrap(), [json!({"n": 1})]);
}

#[tokio::test]
async fn cm112_generic_error_class_and_plain_errors() {
    let fail = host(|_| Err("nope".into()));
    let ns = |class: Option<ErrorClass>| {
        vec![Namespace {
            global: "helpers".into(),
            functions: vec![("fail".into(), Arc::clone(&fail))],
            error_class: class,
        }]
    };
    let program = "try { await helpers.fail({}) } catch (e) { return {isTyped: typeof HelperCallError === 'function' && e instanceof HelperCallError, name: e.name, helperName: e.helperName ?? null, message: e.message, has: 'helperName' in e} }";
    let class = ErrorClass {
        name: "HelperCallError".into(),
        member_name_property: "helperName".into(),
    };
    let typed = run_with(&default_rt(), program, ns(Some(class)), None).await;
    assert_eq!(
        value(&typed),
        &json!({"isTyped": true, "name": "HelperCallError", "helperName": "fail", "message": "nope", "has": true})
    );
    let plain_program = "try { await helpers.fail({}) } catch (e) { return {name: e.name, message: e.message, has: 'helperName' in e, error: e instanceof Error} }";
    let plain = run_with(&default_rt(), plain_program, ns(None), None).await;
    assert_eq!(
        value(&plain),
        &json!({"name": "Error", "message": "nope", "has": false, "error": true})
    );
}

#[tokio::test]
async fn cm115_the_program_wrapper() {
    let runtime = default_rt();
    for (program, expected) in [
        (
            "return (function () { return this === undefined })()",
            Some(json!(true)),
        ),
        ("return typeof this", Some(json!("undefined"))),
        ("return typeof console.table", Some(json!("undefined"))),
        ("return typeof console.log", Some(json!("function"))),
        ("const x = 1", None),
        ("return undefined", None),
        (
            "const v = await Promise.resolve(4); return v",
            Some(json!(4)),
        ),
    ] {
        let result = run(&runtime, program).await;
        assert!(result.error.is_none(), "{program}: {:?}", result.error);
        assert_eq!(result.value, expected, "{program}");
    }
}

#[tokio::test]
async fn cm116_console_shim_forms() {
    let program = "console.log('plain', {a: 1}); console.info('i'); console.warn('w'); console.error('e'); console.debug('d');\n\
        console.log(1, true, null, undefined, 'a'); console.log(); console.info('%s!', 'fmt'); console.log({q: \"it's\"}, ['x']);\n\
        console.log(NaN, Infinity, 1e21, 1); console.log(-0, 10n, function f() {}, Symbol('s'));\n\
        console.log({a: {b: {c: {d: {e: {f: 1}}}}}}, [[[[[[1]]]]]]);";
    let result = run(&default_rt(), program).await;
    assert!(result.error.is_none(), "{:?}", result.error);
    assert_eq!(
        result.logs,
        [
            "plain { a: 1 }",
            "i",
            "w",
            "e",
            "d",
            "1 true null undefined a",
            "",
            "%s! fmt",
            "{ q: \"it's\" } [ 'x' ]",
            "NaN Infinity 1e+21 1",
            "-0 10n [Function: f] Symbol(s)",
            "{ a: { b: { c: { d: { e: [Object] } } } } } [ [ [ [ [ [Array] ] ] ] ] ]",
        ]
    );
}

#[tokio::test]
async fn cm117_erasable_only_typescript() {
    let runtime = default_rt();
    for (program, mention) in [
        ("enum E { A }\nreturn 1", "enum"),
        ("namespace N { export const x = 1 }\nreturn 1", "namespace"),
        ("return (1 +", "Expression expected"),
    ] {
        let result = run(&runtime, program).await;
        let f = failure(&result);
        assert_eq!(f.kind, FailureKind::Exception, "{program}");
        assert!(f.message.contains(mention), "{program}: {}", f.message);
        assert!(result.logs.is_empty());
    }
}

#[tokio::test]
async fn cm119_lossy_completions_are_invalid_output() {
    let runtime = default_rt();
    for program in [
        "return {f: () => 1}",
        "return NaN",
        "return -0",
        "return new Date(0)",
        "return new Map()",
        "const a = {}; a.self = a; return a",
        "return Array(2)",
        "class C { constructor() { this.x = 1 } } return new C()",
        "return [1, undefined]",
        "return {get x() { return 1 }}",
        "const a = [1]; a.extra = 2; return a",
        "return {[Symbol('s')]: 1}",
        "return 1n",
    ] {
        let result = run(&runtime, program).await;
        let f = failure(&result);
        assert_eq!(
            (f.kind, f.message.as_str()),
            (
                FailureKind::InvalidOutput,
                "program completion must be lossless JSON"
            ),
            "{program}"
        );
    }
    let ok = run(
        &runtime,
        "const o = Object.create(null); o.a = 1; const shared = [1]; return {o, x: shared, y: shared}",
    )
    .await;
    assert_eq!(value(&ok), &json!({"o": {"a": 1}, "x": [1], "y": [1]}));
}

#[tokio::test]
async fn cm121_lossy_resolutions() {
    let bindings = tools(vec![("bad", host(|_| Ok(json!(-0.0))))]);
    let program = "try { await tools.bad({}) } catch (e) { return {name: e.name, toolName: e.toolName, message: e.message} }";
    let result = run_with(&default_rt(), program, bindings, None).await;
    assert_eq!(
        value(&result),
        &json!({"name": "ToolCallError", "toolName": "bad", "message": "binding resolution must be lossless JSON"})
    );
}

fn echo_tools() -> Vec<Namespace> {
    tools(vec![("echo", host(Ok))])
}

#[tokio::test]
async fn cm123_deep_values_cross_both_ways() {
    let program =
        "let v = 'leaf'; for (let i = 0; i < 3000; i++) v = [v]; return await tools.echo(v)";
    let result = run_with(&default_rt(), program, echo_tools(), None).await;
    let mut v = value(&result);
    let mut depth = 0;
    while let Value::Array(items) = v {
        v = &items[0];
        depth += 1;
    }
    assert_eq!((depth, v), (3000, &json!("leaf")));
    let result = result.value.unwrap();
    dsh_tools::json::drop_deep(result);
}

#[tokio::test]
async fn a_100000_deep_value_crosses_without_overflowing_the_stack() {
    let program = "let v = 0; for (let i = 0; i < 100000; i++) v = {k: v}; const back = await tools.echo(v); let d = 0; for (let x = back; typeof x === 'object'; x = x.k) d++; return {d, v: back}";
    let result = run_with(&default_rt(), program, echo_tools(), None).await;
    let v = result.value.expect("a value");
    assert_eq!(v["d"], json!(100000));
    dsh_tools::json::drop_deep(v);
}

#[tokio::test]
async fn cm124_a_large_exact_completion() {
    let result = run(&default_rt(), "return new Array(50000).fill(7)").await;
    assert_eq!(value(&result), &json!(vec![7; 50000]));
}

#[tokio::test]
async fn cm125_runs_are_isolated() {
    let runtime = default_rt();
    assert_eq!(
        value(
            &run(
                &runtime,
                "globalThis.leak = 'value'; Object.prototype.polluted = 1; return 1"
            )
            .await
        ),
        &json!(1)
    );
    assert_eq!(
        value(
            &run(
                &runtime,
                "return [typeof globalThis.leak, typeof ({}).polluted]"
            )
            .await
        ),
        &json!(["undefined", "undefined"])
    );
}

#[tokio::test]
async fn cm126_no_ambient_authority() {
    let calls = Arc::new(AtomicUsize::new(0));
    let c = Arc::clone(&calls);
    let bindings = tools(vec![(
        "count",
        host(move |_| {
            c.fetch_add(1, Ordering::SeqCst);
            Ok(json!(null))
        }),
    )]);
    let program = "const names = ['require', 'process', 'fetch', 'setTimeout', 'setInterval', 'WebAssembly', 'std', 'os', 'Deno', 'Bun', 'XMLHttpRequest', 'performance'];\n\
        const types = names.map(n => typeof globalThis[n]);\n\
        let dynamicImport;\n\
        try { await import('os'); dynamicImport = 'loaded' } catch (e) { dynamicImport = 'failed' }\n\
        let staticImport;\n\
        try { new Function(\"import x from 'os'\"); staticImport = 'parsed' } catch (e) { staticImport = 'failed' }\n\
        await tools.count({});\n\
        return {types, dynamicImport, staticImport, members: Object.keys(tools), proto: Object.getPrototypeOf(tools)}";
    let result = run_with(&default_rt(), program, bindings, None).await;
    assert_eq!(
        value(&result),
        &json!({"types": vec!["undefined"; 12], "dynamicImport": "failed", "staticImport": "failed",
                "members": ["count"], "proto": null})
    );
    assert_eq!(
        calls.load(Ordering::SeqCst),
        1,
        "only the declared binding was reached"
    );
}

// ---------------------------------------------------------------- G. Budgets and the ledger

#[tokio::test]
async fn cm140_compute_budget_with_a_decoy_dispatch() {
    let never: HostFn = Arc::new(|_| Box::pin(std::future::pending()));
    let runtime = rt(|c| {
        c.compute_ms = 300.0;
        c.max_wall_ms = 30_000.0;
    });
    let program = "console.log('before'); void tools.slow({}); for (;;) {}";
    let result = run_with(&runtime, program, tools(vec![("slow", never)]), None).await;
    assert_eq!(result.logs, ["before"]);
    assert_eq!(
        failure(&result),
        &CodeFailure {
            kind: FailureKind::Timeout,
            message: "compute budget exhausted (300ms busy)".into()
        }
    );
}

#[tokio::test]
async fn hot_loops_in_every_shape_end_at_the_compute_budget() {
    let runtime = rt(|c| c.compute_ms = 200.0);
    for program in [
        "while (true) {}",
        "for (;;) { try { while (true) {} } catch (e) {} finally { continue } }",
        "function a() { for (let i = 0; i < 1e6; i++); } function b() { for (;;) a() } b()",
        "return /^(a+)+$/.test('a'.repeat(40) + 'b')",
        "const s = []; for (;;) { s.push(1); s.pop() }",
    ] {
        let result = run(&runtime, program).await;
        assert_eq!(
            failure(&result).message,
            "compute budget exhausted (200ms busy)",
            "{program}"
        );
    }
}

#[tokio::test]
async fn cm141_awaiting_is_not_computing() {
    let slow: HostFn = Arc::new(|_| {
        Box::pin(async {
            tokio::time::sleep(Duration::from_millis(600)).await;
            Ok(json!("slow-done"))
        })
    });
    let runtime = rt(|c| {
        c.compute_ms = 300.0;
        c.max_wall_ms = 30_000.0;
    });
    let result = run_with(
        &runtime,
        "return await tools.slow({})",
        tools(vec![("slow", slow)]),
        None,
    )
    .await;
    assert_eq!(value(&result), &json!("slow-done"));
}

#[tokio::test]
async fn cm142_the_wall_clock_ceiling() {
    let never: HostFn = Arc::new(|_| Box::pin(std::future::pending()));
    let runtime = rt(|c| {
        c.compute_ms = 30_000.0;
        c.max_wall_ms = 400.0;
    });
    let result = run_with(
        &runtime,
        "await tools.never({}); return 1",
        tools(vec![("never", never)]),
        None,
    )
    .await;
    assert_eq!(
        failure(&result),
        &CodeFailure {
            kind: FailureKind::Timeout,
            message: "wall-clock ceiling reached (400ms)".into()
        }
    );
}

#[tokio::test]
async fn cm144_a_late_resolution_is_dropped() {
    let signal = CancellationToken::new();
    let s = signal.clone();
    let late: HostFn = Arc::new(move |_| {
        let s = s.clone();
        Box::pin(async move {
            tokio::time::sleep(Duration::from_millis(100)).await;
            s.cancel();
            tokio::time::sleep(Duration::from_millis(300)).await;
            Ok(json!("late"))
        })
    });
    let result = run_with(
        &default_rt(),
        "void tools.late({}); for (;;) {}",
        tools(vec![("late", late)]),
        Some(signal),
    )
    .await;
    assert_eq!(failure(&result).kind, FailureKind::Abort);
    assert_eq!(
        failure(&result).message,
        "AbortError: This operation was aborted"
    );
    // The resolution lands after the run ended: nothing fails.
    tokio::time::sleep(Duration::from_millis(400)).await;
}

#[tokio::test]
async fn cm145_the_memory_limit_is_worker_exit_and_the_next_run_is_clean() {
    let runtime = rt(|c| c.max_old_generation_size_mb = 32.0);
    for program in [
        "const a = []; for (;;) a.push(new Array(10000).fill(1))",
        "const parts = []; for (let i = 0; ; i++) parts.push('x'.repeat(1 << 20) + i)",
    ] {
        let result = run(&runtime, program).await;
        let f = failure(&result);
        assert_eq!(f.kind, FailureKind::WorkerExit, "{program}: {}", f.message);
        assert!(f.message.contains("memory"), "{}", f.message);
    }
    assert_eq!(
        value(&run(&runtime, "return 'alive'").await),
        &json!("alive")
    );
}

#[tokio::test]
async fn unbounded_recursion_is_a_catchable_error() {
    let program = "function f(n) { return f(n + 1) + 1 }\n\
        try { f(0) } catch (e) { return {caught: true, range: e instanceof RangeError || e instanceof InternalError, message: String(e.message)} }";
    let result = run(&default_rt(), program).await;
    let v = value(&result);
    assert_eq!(v["caught"], json!(true));
    assert_eq!(v["range"], json!(true), "{v}");
}

#[tokio::test]
async fn cm147_runaway_logs() {
    let runtime = rt(|c| c.max_output_bytes = 300.0);
    let result = run(
        &runtime,
        "for (let i = 0; i < 1000; i++) console.log('spam line ' + i); return 1",
    )
    .await;
    let mut expected: Vec<String> = (0..18).map(|i| format!("spam line {i}")).collect();
    expected.push("spa".into());
    assert_eq!(result.logs, expected);
    assert_eq!(
        failure(&result),
        &CodeFailure {
            kind: FailureKind::OutputLimit,
            message: "outer output exceeded 300 bytes".into()
        }
    );
}

#[tokio::test]
async fn cm149_the_exact_combined_ledger() {
    for (cap, program, expected) in [
        (
            11.0,
            "console.log('abc'); return 'xy'",
            json!({"logs": ["abc"], "value": "xy"}),
        ),
        (
            10.0,
            "console.log('abc'); return 'xy'",
            json!({"logs": [], "error": {"kind": "output-limit", "message": "outer "}}),
        ),
        (
            11.0,
            "console.log('abc'); throw 'xy'",
            json!({"logs": ["abc"], "error": {"kind": "exception", "message": "xy"}}),
        ),
        (
            10.0,
            "console.log('abc'); throw 'xy'",
            json!({"logs": [], "error": {"kind": "output-limit", "message": "outer "}}),
        ),
    ] {
        let result = run(&rt(|c| c.max_output_bytes = cap), program).await;
        assert_eq!(as_json(&result), expected, "{cap} {program}");
    }
}

fn as_json(result: &CodeResult) -> Value {
    let mut out = json!({"logs": result.logs});
    if let Some(v) = &result.value {
        out["value"] = v.clone();
    }
    if let Some(e) = &result.error {
        out["error"] = json!({"kind": e.kind.as_str(), "message": e.message});
    }
    out
}

#[tokio::test]
async fn cm151_giant_diagnostics_never_cross() {
    let runtime = rt(|c| c.max_output_bytes = 64.0);
    for program in [
        "throw new Error('x'.repeat(1000000))",
        "throw 'x'.repeat(1000000)",
        "return 'y'.repeat(10000)",
    ] {
        let result = run(&runtime, program).await;
        assert_eq!(
            as_json(&result),
            json!({"logs": [], "error": {"kind": "output-limit", "message": "outer output exceeded 64 bytes"}}),
            "{program}"
        );
    }
}

#[tokio::test]
async fn cm153_the_default_cap_boundary() {
    let runtime = default_rt();
    let fits = run(&runtime, "return 'x'.repeat(67108860)").await;
    assert_eq!(
        fits.value.as_ref().and_then(Value::as_str).map(str::len),
        Some(67_108_860)
    );
    let over = run(&runtime, "return 'x'.repeat(67108861)").await;
    assert_eq!(
        failure(&over),
        &CodeFailure {
            kind: FailureKind::OutputLimit,
            message: "outer output exceeded 67108864 bytes".into()
        }
    );
}

#[tokio::test]
async fn cm154_the_ledger_table_on_the_engine() {
    let cases: Vec<Value> =
        serde_json::from_str(include_str!("../conformance/code-mode/ledger.json")).unwrap();
    for case in &cases {
        let name = case["name"].as_str().unwrap();
        let mut program = String::new();
        if let Some(logs) = case["logs"].as_array() {
            for entry in logs {
                program.push_str(&format!("console.log({entry});\n"));
            }
        }
        if let Some(g) = case.get("logs_generate") {
            program.push_str(&format!(
                "for (let i = 0; i < {}; i++) console.log({} + i);\n",
                g["count"], g["prefix"]
            ));
        }
        let c = &case["completion"];
        if let Some(v) = c.get("return") {
            program.push_str(&format!("return {v};"));
        } else if let Some(v) = c.get("throw") {
            program.push_str(&format!("throw {v};"));
        } else if let Some(r) = c.get("return_repeat") {
            program.push_str(&format!("return {}.repeat({});", r[0], r[1]));
        } else if let Some(r) = c.get("throw_repeat") {
            program.push_str(&format!("throw {}.repeat({});", r[0], r[1]));
        } else if c.get("return_function").is_some() {
            program.push_str("return () => 1;");
        }
        let cap = case["max_output_bytes"].as_f64().unwrap();
        let result = run(&rt(|c| c.max_output_bytes = cap), &program).await;
        let mut expected = case["expected"].clone();
        if expected.get("logs").is_none() {
            expected["logs"] = json!([]);
        }
        assert_eq!(as_json(&result), expected, "ledger case {name}");
    }
}

// ---------------------------------------------------------------- H. Misuse, configuration, lifecycle

#[tokio::test]
async fn cm160_invalid_namespace_globals() {
    let runtime = default_rt();
    let ns = |g: &str| Namespace {
        global: g.into(),
        functions: vec![],
        error_class: None,
    };
    for (global, message) in [
        (
            "not valid!",
            "binding global \"not valid!\" is not a usable identifier",
        ),
        (
            "await",
            "binding global \"await\" is not a usable identifier",
        ),
        (
            "$tools",
            "binding global \"$tools\" is not a usable identifier",
        ),
        ("a$b", "binding global \"a$b\" is not a usable identifier"),
        (
            "lambda",
            "binding global \"lambda\" is not a usable identifier",
        ),
        ("console", "reserved binding global \"console\""),
        ("__dsh_main__", "reserved binding global \"__dsh_main__\""),
        ("__name__", "reserved binding global \"__name__\""),
    ] {
        let request = CodeRequest {
            program: "return 1".into(),
            bindings: vec![ns(global)],
            signal: None,
        };
        let error = runtime.run(request).await.unwrap_err().to_string();
        assert_eq!(error, format!("{BACKEND}: {message}"));
    }
    let twice = CodeRequest {
        program: "return 1".into(),
        bindings: vec![ns("tools"), ns("tools")],
        signal: None,
    };
    assert_eq!(
        runtime.run(twice).await.unwrap_err().to_string(),
        format!("{BACKEND}: duplicate binding global \"tools\"")
    );
    let class_named = run_with(
        &runtime,
        "return typeof ToolCallError",
        vec![ns("ToolCallError")],
        None,
    )
    .await;
    assert_eq!(value(&class_named), &json!("object"));
}

#[test]
fn cm163_configuration_validation() {
    let bad = |f: fn(&mut CodeRuntimeConfig)| {
        let mut c = CodeRuntimeConfig::default();
        f(&mut c);
        QuickJsRuntime::new(c).unwrap_err().to_string()
    };
    assert_eq!(
        bad(|c| c.compute_ms = -1.0),
        format!("{BACKEND}: config.computeMs must be a positive number, got -1")
    );
    assert_eq!(
        bad(|c| c.max_old_generation_size_mb = 0.0),
        format!("{BACKEND}: config.maxOldGenerationSizeMb must be a positive number, got 0")
    );
    assert_eq!(
        bad(|c| c.max_output_bytes = 3.0),
        format!("{BACKEND}: config.maxOutputBytes must be a safe integer of at least 4, got 3")
    );
    assert_eq!(
        bad(|c| c.max_output_bytes = 4.5),
        format!("{BACKEND}: config.maxOutputBytes must be a safe integer of at least 4, got 4.5")
    );
}

#[tokio::test]
async fn cm164_disposal() {
    let runtime = Arc::new(default_rt());
    let r = Arc::clone(&runtime);
    let running = tokio::spawn(async move { run(&r, "for (;;) {}").await });
    tokio::time::sleep(Duration::from_millis(200)).await;
    runtime.dispose().await;
    assert_eq!(
        runtime.runs_in_flight(),
        0,
        "disposal waited for the thread"
    );
    let result = running.await.unwrap();
    assert_eq!(
        failure(&result),
        &CodeFailure {
            kind: FailureKind::Abort,
            message: "runtime disposed".into()
        }
    );
    let later = CodeRequest {
        program: "return 1".into(),
        bindings: vec![],
        signal: None,
    };
    assert_eq!(
        runtime.run(later).await.unwrap_err().to_string(),
        format!("{BACKEND}: run() after disposal")
    );
}

#[test]
fn cm165_descriptors() {
    let runtime = default_rt();
    assert_eq!(runtime.language(), "typescript");
    assert_eq!(runtime.isolation(), "quickjs-thread");
}

// ---------------------------------------------------------------- The issue's hostile programs

#[tokio::test]
async fn cancellation_before_during_a_hot_loop_and_during_an_awaited_tool_is_abort() {
    let runtime = default_rt();
    let before = CancellationToken::new();
    before.cancel();
    let result = run_with(&runtime, "return 1", vec![], Some(before)).await;
    assert_eq!(failure(&result).kind, FailureKind::Abort);
    assert_eq!(runtime.runs_in_flight(), 0);

    for program in ["for (;;) {}", "await tools.never({})"] {
        let never: HostFn = Arc::new(|_| Box::pin(std::future::pending()));
        let signal = CancellationToken::new();
        let s = signal.clone();
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(100)).await;
            s.cancel();
        });
        let result = run_with(
            &runtime,
            program,
            tools(vec![("never", never)]),
            Some(signal),
        )
        .await;
        assert_eq!(
            failure(&result),
            &CodeFailure {
                kind: FailureKind::Abort,
                message: "AbortError: This operation was aborted".into()
            },
            "{program}"
        );
    }
}

#[tokio::test(flavor = "current_thread")]
async fn the_host_runtime_keeps_serving_during_a_hot_loop() {
    let runtime = rt(|c| c.compute_ms = 300.0);
    let ticks = Arc::new(AtomicUsize::new(0));
    let t = Arc::clone(&ticks);
    let ticker = tokio::spawn(async move {
        loop {
            tokio::time::sleep(Duration::from_millis(10)).await;
            t.fetch_add(1, Ordering::SeqCst);
        }
    });
    let result = run(&runtime, "for (;;) {}").await;
    ticker.abort();
    assert_eq!(failure(&result).kind, FailureKind::Timeout);
    assert!(
        ticks.load(Ordering::SeqCst) > 0,
        "the single-threaded host ran other tasks while the program looped"
    );
}

fn thread_count() -> usize {
    std::fs::read_dir("/proc/self/task")
        .map(|d| d.count())
        .unwrap_or(0)
}

#[tokio::test]
async fn a_thousand_runs_leave_no_thread_behind() {
    let runtime = default_rt();
    let before = thread_count();
    for i in 0..1000 {
        let result = run(&runtime, &format!("return {i}")).await;
        assert_eq!(value(&result), &json!(i));
    }
    assert_eq!(runtime.runs_started(), 1000);
    // A run's result is delivered before its engine is freed and its thread exits; allow the
    // last one a moment to finish. The warm engines counted in `before` are refilled.
    for _ in 0..100 {
        if thread_count() <= before && runtime.runs_in_flight() == 0 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(runtime.runs_in_flight(), 0);
    assert!(thread_count() <= before, "{} > {before}", thread_count());
}

#[tokio::test]
async fn non_lossless_binding_arguments_are_refused_before_any_dispatch() {
    let calls = Arc::new(AtomicUsize::new(0));
    let c = Arc::clone(&calls);
    let bindings = tools(vec![(
        "echo",
        host(move |a| {
            c.fetch_add(1, Ordering::SeqCst);
            Ok(a)
        }),
    )]);
    let program = "const bad = [NaN, -0, undefined, () => 1, (() => { const a = {}; a.a = a; return a })(), {x: undefined}, [ , 1], new Date(), Infinity];\n\
        const out = [];\n\
        for (const b of bad) { try { await tools.echo(b); out.push('dispatched') } catch (e) { out.push(e instanceof ToolCallError ? e.message : 'other') } }\n\
        try { await tools.echo() } catch (e) { out.push(e.message) }\n\
        out.push(await tools.echo(9007199254740991));\n\
        out.push(await tools.echo(-9007199254740991));\n\
        return out";
    let result = run_with(&default_rt(), program, bindings, None).await;
    let mut expected = vec![json!("binding arguments must be lossless JSON"); 10];
    expected.push(json!(9007199254740991i64));
    expected.push(json!(-9007199254740991i64));
    assert_eq!(value(&result), &Value::Array(expected));
    assert_eq!(
        calls.load(Ordering::SeqCst),
        2,
        "only the two lossless calls"
    );
    let exact = run(
        &default_rt(),
        "return [9007199254740991, 2**53 - 1, 0.5, -7]",
    )
    .await;
    assert_eq!(
        value(&exact),
        &json!([9007199254740991i64, 9007199254740991i64, 0.5, -7])
    );
}

#[tokio::test]
async fn a_program_that_rewrites_intrinsics_cannot_change_what_the_host_reads() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let s = Arc::clone(&seen);
    let bindings = tools(vec![
        (
            "__proto__",
            host(move |a| {
                s.lock().unwrap().push(a);
                Ok(json!("proto-ok"))
            }),
        ),
        ("constructor", host(|_| Ok(json!("ctor-ok")))),
    ]);
    let program = "JSON.stringify = () => '\"forged\"';\n\
        Object.prototype.toJSON = () => 'forged';\n\
        Object.defineProperty(Object.prototype, 'injected', {get() { return 'forged' }, enumerable: true});\n\
        Array.prototype.push = () => { throw new Error('poisoned') };\n\
        Object.getPrototypeOf = () => null;\n\
        Reflect.ownKeys = () => [];\n\
        Set.prototype.has = () => true;\n\
        Promise.prototype.then = function () { throw new Error('poisoned then') };\n\
        const a = await tools['__proto__']({list: [1, 2], nested: {k: 'v'}});\n\
        const b = await tools.constructor({});\n\
        return {a, b, own: Object.keys(tools)}";
    let result = run_with(&default_rt(), program, bindings, None).await;
    assert_eq!(
        value(&result),
        &json!({"a": "proto-ok", "b": "ctor-ok", "own": ["__proto__", "constructor"]})
    );
    assert_eq!(
        *seen.lock().unwrap(),
        [json!({"list": [1, 2], "nested": {"k": "v"}})]
    );
}

// The log inspector is compiled on first use (handed to the bootstrap by quickjs/host.rs):
// after the program rewrote globals, it still reads values with the intrinsics the bootstrap
// captured.
#[tokio::test]
async fn the_log_inspector_compiled_late_still_reads_with_the_captured_intrinsics() {
    let program = "globalThis.Function = function () { throw new Error('forged Function') };\n\
        Array.isArray = () => false;\n\
        Reflect.ownKeys = () => ['forged'];\n\
        Reflect.apply = () => 'forged';\n\
        Object.getOwnPropertyDescriptor = () => ({ value: 'forged', enumerable: true });\n\
        Object.getPrototypeOf = () => null;\n\
        String.prototype.replace = () => 'forged';\n\
        RegExp.prototype.test = () => false;\n\
        console.log({ a: [1, 'x\\'y'], 'b-c': new Error('boom').message });\n\
        console.log([{ deep: { er: null } }], 2);\n\
        return 1";
    let result = run(&default_rt(), program).await;
    assert_eq!(value(&result), &json!(1));
    assert_eq!(
        result.logs,
        [
            r#"{ a: [ 1, "x'y" ], 'b-c': 'boom' }"#,
            "[ { deep: { er: null } } ] 2"
        ]
    );
}

// ---------------------------------------------------------------- run_code on a registry

#[tokio::test]
async fn run_code_on_a_registry_runs_programs_through_the_whole_pipeline() {
    use dsh_tools::registry::PresentationMode;
    use dsh_tools::{OutputDecl, PreToolDecision, Registry, ToolDefinition, ToolExecutionInput};
    let registry = Registry::new();
    let peak = Arc::new(AtomicUsize::new(0));
    let running = Arc::new(AtomicUsize::new(0));
    let (p, r) = (Arc::clone(&peak), Arc::clone(&running));
    let read = ToolDefinition::new(
        "read",
        "Read a file.",
        json!({"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}),
        OutputDecl::json(json!({"type": "string"})),
        move |args: Arc<Value>, _| {
            let (p, r) = (Arc::clone(&p), Arc::clone(&r));
            async move {
                let now = r.fetch_add(1, Ordering::SeqCst) + 1;
                p.fetch_max(now, Ordering::SeqCst);
                tokio::time::sleep(Duration::from_millis(30)).await;
                r.fetch_sub(1, Ordering::SeqCst);
                Ok(json!(format!(
                    "text of {}",
                    args["path"].as_str().unwrap_or("")
                )))
            }
        },
    )
    .concurrency_safe(|_| true);
    let write = ToolDefinition::new(
        "write",
        "Write a file.",
        json!({"type": "object"}),
        OutputDecl::text(),
        |_, _| async { Ok(json!("written")) },
    );
    registry.register(read).unwrap().keep();
    registry.register(write).unwrap().keep();
    registry.set_presentation_mode(PresentationMode::Code);
    registry.set_code_runtime(default_rt());
    registry
        .on_pre_execute(|exec: Arc<dsh_tools::ToolExecution>, next| async move {
            if exec.name() == "write" {
                return Ok(PreToolDecision::deny("writes are not allowed here"));
            }
            next.run().await
        })
        .keep();
    let program = "const files: string[] = ['a', 'b', 'c'];\n\
        const texts = await Promise.all(files.map(f => tools.read({path: f})));\n\
        let denied: string | undefined;\n\
        try { await tools.write({}) } catch (e) { denied = `${e.name} ${e.toolName}: ${e.message}` }\n\
        console.log(texts.join(' | '));\n\
        return denied;";
    let args = json!({"code": program, "description": "Read three files, try a write"});
    let input = ToolExecutionInput::new("c1", "run_code", args, CancellationToken::new());
    let result = tokio::time::timeout(Duration::from_secs(60), registry.execute(input))
        .await
        .unwrap();
    assert!(!result.is_error(), "{}", result.text());
    assert_eq!(
        result.text(),
        "text of a | text of b | text of c\nToolCallError write: writes are not allowed here"
    );
    assert_eq!(peak.load(Ordering::SeqCst), 3, "the reads overlapped");
    let sdk = registry.code_prompt(None).unwrap();
    assert!(sdk.contains("  read: {\n    path: string;\n  }"), "{sdk}");
}

#[tokio::test]
async fn a_binding_that_never_answers_does_not_outlive_its_run() {
    struct Dropped(Arc<AtomicUsize>);
    impl Drop for Dropped {
        fn drop(&mut self) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }
    let dropped = Arc::new(AtomicUsize::new(0));
    let d = Arc::clone(&dropped);
    let never: HostFn = Arc::new(move |_| {
        let guard = Dropped(Arc::clone(&d));
        Box::pin(async move {
            let _guard = guard;
            std::future::pending::<()>().await;
            Ok(json!(null))
        })
    });
    let runtime = rt(|c| c.max_wall_ms = 200.0);
    let result = run_with(
        &runtime,
        "await tools.never({})",
        tools(vec![("never", never)]),
        None,
    )
    .await;
    assert_eq!(failure(&result).kind, FailureKind::Timeout);
    for _ in 0..200 {
        if dropped.load(Ordering::SeqCst) == 1 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    assert_eq!(
        dropped.load(Ordering::SeqCst),
        1,
        "the host task was aborted"
    );
}

#[tokio::test]
async fn one_string_referenced_many_times_cannot_exhaust_the_host() {
    let runtime = rt(|c| c.max_output_bytes = 1024.0 * 1024.0);
    let result = run(&runtime, "return Array(4000).fill('x'.repeat(5e6))").await;
    assert_eq!(failure(&result).kind, FailureKind::OutputLimit);
    let echo = run_with(
        &default_rt(),
        "try { await tools.echo(Array(4000).fill('x'.repeat(5e6))) } catch (e) { return e.message }",
        echo_tools(),
        None,
    )
    .await;
    assert_eq!(
        value(&echo),
        &json!("binding arguments are larger than 64 MiB on the host")
    );
}

#[tokio::test]
async fn lone_surrogates_in_logs_and_errors_do_not_hang_the_run() {
    let runtime = default_rt();
    let result = run(
        &runtime,
        "const s = '😀'.slice(0, 1); console.log('a' + s); throw new Error(s)",
    )
    .await;
    assert_eq!(result.logs, ["a\u{FFFD}"]);
    let f = failure(&result);
    assert_eq!(f.kind, FailureKind::Exception);
    assert!(f.message.starts_with("Error: \u{FFFD}"), "{}", f.message);
}

#[tokio::test]
async fn calls_are_numbered_in_the_order_the_program_made_them() {
    use dsh_tools::registry::PresentationMode;
    use dsh_tools::{OutputDecl, Registry, ToolDefinition, ToolExecutionInput};
    let registry = Registry::new();
    let order = Arc::new(Mutex::new(Vec::new()));
    let o = Arc::clone(&order);
    let note = ToolDefinition::new(
        "note",
        "Note a call.",
        json!({"type": "object"}),
        OutputDecl::text(),
        move |args: Arc<Value>, ctx| {
            let o = Arc::clone(&o);
            async move {
                o.lock().unwrap().push((
                    ctx.execution().call_id().to_owned(),
                    args["i"].as_i64().unwrap_or(-1),
                ));
                Ok(json!("ok"))
            }
        },
    );
    registry.register(note).unwrap().keep();
    registry.set_presentation_mode(PresentationMode::Code);
    registry.set_code_runtime(default_rt());
    // Calls made without awaiting, of all sizes: the big argument must not let the next call
    // overtake it (each call's number follows the program's order).
    let program = "const big = Array(20000).fill('x');\n\
        const calls = [];\n\
        for (let i = 0; i < 20; i++) calls.push(tools.note(i % 2 ? {i} : {i, big}));\n\
        await Promise.all(calls);\n\
        return 'fired';";
    let args = json!({"code": program, "description": "Fire twenty calls"});
    let input = ToolExecutionInput::new("c1", "run_code", args, CancellationToken::new());
    let result = registry.execute(input).await;
    assert_eq!(result.text(), "fired");
    let seen = order.lock().unwrap().clone();
    let expected: Vec<(String, i64)> = (0..20).map(|i| (format!("c1:code:{}", i + 1), i)).collect();
    assert_eq!(seen, expected, "every call queued, in program order");
}

#[tokio::test]
async fn a_deep_completion_through_run_code_is_freed_without_recursion() {
    use dsh_tools::registry::PresentationMode;
    use dsh_tools::{Registry, ToolExecutionInput};
    let registry = Registry::new();
    registry.set_presentation_mode(PresentationMode::Code);
    registry.set_code_runtime(default_rt());
    let args = json!({"code": "let v = 0; for (let i = 0; i < 200000; i++) v = [v]; return v", "description": "Deep"});
    let input = ToolExecutionInput::new("c1", "run_code", args, CancellationToken::new());
    // On a small stack: any recursive drop of the 200,000-deep value would overflow it.
    let result = std::thread::Builder::new()
        .stack_size(512 * 1024)
        .spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap();
            let result = rt.block_on(registry.execute(input));
            let is_error = result.is_error();
            let text_len = result.text().len();
            // A result frees its value without recursion.
            drop(result);
            (is_error, text_len)
        })
        .unwrap()
        .join()
        .expect("no stack overflow");
    assert!(result.1 > 0);
}

#[tokio::test]
async fn work_left_after_the_program_completed_does_not_delay_its_result() {
    let runtime = rt(|c| c.compute_ms = 30_000.0);
    let result = run(
        &runtime,
        "Promise.resolve().then(() => 0).then(() => 0).then(() => { for (;;) {} }); return 'done'",
    )
    .await;
    // The loop is queued after the completion's reaction (three hops): the completion is the
    // first terminal event. (A loop queued before it runs first and ends at the budget, as
    // upstream's worker would.)
    assert_eq!(value(&result), &json!("done"));
}

#[tokio::test]
async fn the_program_receives_values_in_commit_order() {
    use dsh_tools::registry::PresentationMode;
    use dsh_tools::{OutputDecl, Registry, ToolDefinition, ToolExecutionInput};
    let registry = Registry::new();
    let sleepy = ToolDefinition::new(
        "sleepy",
        "Sleep then answer.",
        json!({"type": "object"}),
        OutputDecl::text(),
        |args: Arc<Value>, _| async move {
            let ms = args["ms"].as_u64().unwrap_or(0);
            tokio::time::sleep(Duration::from_millis(ms)).await;
            Ok(json!(ms.to_string()))
        },
    )
    .concurrency_safe(|_| true);
    registry.register(sleepy).unwrap().keep();
    registry.set_presentation_mode(PresentationMode::Code);
    registry.set_code_runtime(default_rt());
    // The slow call was made first: its commit comes first, and so does its value, although
    // the fast call's body finished long before.
    let program = "const seen: string[] = [];\n\
        const slow = tools.sleepy({ms: 40}).then(v => seen.push('slow ' + v));\n\
        const fast = tools.sleepy({ms: 0}).then(v => seen.push('fast ' + v));\n\
        await Promise.all([slow, fast]);\n\
        return seen;";
    for round in 0..10 {
        let args = json!({"code": program, "description": "Two calls"});
        let input = ToolExecutionInput::new("c1", "run_code", args, CancellationToken::new());
        let result = registry.execute(input).await;
        assert_eq!(
            result.value().map(|v| v["result"].clone()),
            Some(json!(["slow 40", "fast 0"])),
            "round {round}: {}",
            result.text()
        );
    }
}

type Calls = Arc<Mutex<Vec<(&'static str, Value)>>>;

/// Host functions that record each call (member, argument) and answer `"<member>-ok"`.
fn recording(names: &[&'static str]) -> (Vec<Namespace>, Calls) {
    let calls: Calls = Arc::new(Mutex::new(Vec::new()));
    let functions = names
        .iter()
        .map(|&name| {
            let calls = Arc::clone(&calls);
            let f = host(move |a| {
                calls.lock().unwrap().push((name, a.clone()));
                Ok(json!(format!("{name}-ok")))
            });
            (name, f)
        })
        .collect();
    (tools(functions), calls)
}

/// The settled outcome of a promise, and of a synchronous expression, as a program reads them.
const SETTLE: &str = "const settle = async (p) => {\n\
      try { return {value: await p} } catch (e) { return {error: `${e.name}: ${e.message}`, typeError: e instanceof TypeError} }\n\
    };\n\
    const sync = (f) => { try { return {value: f()} } catch (e) { return {error: `${e.name}: ${e.message}`, typeError: e instanceof TypeError} } };\n";

const THEN_ERROR: &str = "TypeError: tools.then is a tool, not a promise's then: the namespace \
    cannot be awaited or resolved (call the tool as tools[\"then\"]({...}))";

const TO_JSON_ERROR: &str = "TypeError: tools.toJSON is a tool, not a JSON conversion: it does \
    not take the string key JSON.stringify passes (call the tool as tools[\"toJSON\"]({...}))";

/// Issue 43.6: a tool named `then` made the namespace a thenable: `await tools` (or an async
/// function returning it) waited for a `resolve` the binding never called, until the wall-clock
/// ceiling. Resolving the namespace now rejects at once with a `TypeError`, and the member stays
/// callable explicitly.
#[tokio::test]
async fn a_tool_named_then_does_not_make_the_namespace_a_thenable() {
    let (bindings, calls) = recording(&["then", "constructor", "__proto__"]);
    // A regression waits for a `resolve` that never comes: a short ceiling fails it quickly.
    let runtime = rt(|c| c.max_wall_ms = 5_000.0);
    let program = format!(
        "{SETTLE}const out = {{}};\n\
        out.awaited = await settle((async () => await tools)());\n\
        out.returned = await settle((async () => tools)());\n\
        out.resolved = await settle(Promise.resolve(tools));\n\
        out.all = await settle(Promise.all([tools]));\n\
        out.inherited = await settle(Promise.resolve(Object.create(tools)));\n\
        out.caught = sync(() => Promise.prototype.catch.call(tools, () => 'handled'));\n\
        out.explicit = [await tools['then']({{n: 1}}), await tools.then({{n: 2}}),\n\
          await tools.constructor({{n: 3}}), await tools['__proto__']({{n: 4}})];\n\
        out.proto = Object.getPrototypeOf(tools);\n\
        return out;"
    );
    let result = run_with(&runtime, &program, bindings, None).await;
    let rejected = json!({"error": THEN_ERROR, "typeError": true});
    assert_eq!(
        value(&result),
        &json!({
            "awaited": rejected,
            "returned": rejected,
            "resolved": rejected,
            "all": rejected,
            "inherited": rejected,
            "caught": rejected,
            "explicit": ["then-ok", "then-ok", "constructor-ok", "__proto__-ok"],
            "proto": null,
        })
    );
    assert_eq!(
        *calls.lock().unwrap(),
        [
            ("then", json!({"n": 1})),
            ("then", json!({"n": 2})),
            ("constructor", json!({"n": 3})),
            ("__proto__", json!({"n": 4})),
        ],
        "only the explicit calls reached the host"
    );
    // A program that returns the namespace fails at once with that message.
    let (bindings, calls) = recording(&["then"]);
    let bare = run_with(&runtime, "return tools", bindings, None).await;
    assert_eq!(failure(&bare).kind, FailureKind::Exception);
    assert!(
        failure(&bare).message.starts_with(THEN_ERROR),
        "{:?}",
        failure(&bare)
    );
    assert!(calls.lock().unwrap().is_empty());
}

/// Issue 43.6: the engine's implicit uses of the namespace never issue a tool call:
/// `JSON.stringify(tools)` called a member named `toJSON` with the key `""` (a lossless
/// argument, so a real call); `String(tools)` and `tools + ''` call `toString` / `valueOf` with
/// no argument, which is refused before any dispatch.
#[tokio::test]
async fn implicit_conversions_of_the_namespace_never_call_a_tool() {
    let (bindings, calls) = recording(&["toJSON", "toString", "valueOf", "toLocaleString"]);
    let runtime = rt(|c| c.max_wall_ms = 5_000.0);
    let program = format!(
        "{SETTLE}const out = {{}};\n\
        out.json = sync(() => JSON.stringify(tools));\n\
        out.nested = sync(() => JSON.stringify({{t: [tools]}}));\n\
        out.string = sync(() => String(tools)).typeError;\n\
        out.template = sync(() => `${{tools}}`).typeError;\n\
        out.plus = sync(() => tools + '').typeError;\n\
        out.joined = sync(() => [tools].join()).typeError;\n\
        sync(() => [tools].toLocaleString());\n\
        out.explicit = [await tools.toJSON({{n: 1}}), await tools['toString']({{n: 2}}), await tools.valueOf({{n: 3}})];\n\
        return out;"
    );
    let result = run_with(&runtime, &program, bindings, None).await;
    let refused = json!({"error": TO_JSON_ERROR, "typeError": true});
    assert_eq!(
        value(&result),
        &json!({
            "json": refused,
            "nested": refused,
            "string": true,
            "template": true,
            "plus": true,
            "joined": true,
            "explicit": ["toJSON-ok", "toString-ok", "valueOf-ok"],
        })
    );
    assert_eq!(
        *calls.lock().unwrap(),
        [
            ("toJSON", json!({"n": 1})),
            ("toString", json!({"n": 2})),
            ("valueOf", json!({"n": 3})),
        ],
        "only the explicit calls reached the host"
    );
}

/// The argument walk reuses its working lists (issue 35); a Proxy trap that calls a tool while
/// an argument is walked starts a nested walk, which must not disturb the outer one.
#[tokio::test]
async fn a_tool_called_from_a_proxy_trap_while_arguments_are_walked_leaves_the_outer_walk_intact() {
    let (bindings, calls) = recording(&["outer", "inner"]);
    let program = "const target = {a: [1, {b: 'x'}], c: true};\n\
        const p = new Proxy(target, { ownKeys(t) { tools.inner({deep: [[{n: 1}]]}); return Reflect.ownKeys(t); } });\n\
        const r = await tools.outer({wrapped: p, after: [2, 3]});\n\
        return r";
    let result = run_with(&default_rt(), program, bindings, None).await;
    assert_eq!(value(&result), &json!("outer-ok"));
    let calls = calls.lock().unwrap().clone();
    assert_eq!(
        calls,
        [
            ("inner", json!({"deep": [[{"n": 1}]]})),
            (
                "outer",
                json!({"wrapped": {"a": [1, {"b": "x"}], "c": true}, "after": [2, 3]})
            ),
        ]
    );
}

// ---------------------------------------------------------------- warm engines and run slots

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn runs_past_the_bound_wait_for_a_slot_and_the_threads_stay_under_it() {
    use dsh_tools::code::quickjs::EnginePool;
    let runtime = Arc::new(
        QuickJsRuntime::with_pool(
            CodeRuntimeConfig::default(),
            EnginePool::default().warm(1).max_runs(3),
        )
        .unwrap(),
    );
    let (running, peak, threads) = (
        Arc::new(AtomicUsize::new(0)),
        Arc::new(AtomicUsize::new(0)),
        Arc::new(AtomicUsize::new(0)),
    );
    let (r, p, t) = (
        Arc::clone(&running),
        Arc::clone(&peak),
        Arc::clone(&threads),
    );
    let counted = Arc::downgrade(&runtime);
    let wait: HostFn = Arc::new(move |_| {
        let (r, p, t) = (Arc::clone(&r), Arc::clone(&p), Arc::clone(&t));
        let counted = counted.clone();
        let sample = move || counted.upgrade().map_or(0, |rt| rt.threads());
        Box::pin(async move {
            let now = r.fetch_add(1, Ordering::SeqCst) + 1;
            p.fetch_max(now, Ordering::SeqCst);
            t.fetch_max(sample(), Ordering::SeqCst);
            tokio::time::sleep(Duration::from_millis(40)).await;
            t.fetch_max(sample(), Ordering::SeqCst);
            r.fetch_sub(1, Ordering::SeqCst);
            Ok(json!("done"))
        })
    });
    let runs: Vec<_> = (0..12)
        .map(|i| {
            let runtime = Arc::clone(&runtime);
            let bindings = tools(vec![("wait", Arc::clone(&wait))]);
            tokio::spawn(async move {
                let program = format!("await tools.wait({{}}); return {i}");
                run_with(&runtime, &program, bindings, None).await
            })
        })
        .collect();
    for (i, run) in runs.into_iter().enumerate() {
        assert_eq!(value(&run.await.unwrap()), &json!(i));
    }
    assert_eq!(
        peak.load(Ordering::SeqCst),
        3,
        "three runs at once, never more"
    );
    // Three runs and one warm engine (a finished run's thread counts until its last act, after
    // its slot is handed back: at most one more per slot). Without the bound, twelve would run.
    let most = threads.load(Ordering::SeqCst);
    assert!((3..=3 + 1 + 3).contains(&most), "{most} engine threads");
    assert_eq!(runtime.runs_started(), 12);
}

#[tokio::test]
async fn a_run_waiting_for_a_slot_is_cancelled_as_abort() {
    use dsh_tools::code::quickjs::EnginePool;
    let runtime = Arc::new(
        QuickJsRuntime::with_pool(
            CodeRuntimeConfig::default(),
            EnginePool::default().max_runs(1),
        )
        .unwrap(),
    );
    let release = CancellationToken::new();
    let r = release.clone();
    let hold: HostFn = Arc::new(move |_| {
        let r = r.clone();
        Box::pin(async move {
            r.cancelled().await;
            Ok(json!("released"))
        })
    });
    let holding = {
        let runtime = Arc::clone(&runtime);
        let bindings = tools(vec![("hold", hold)]);
        tokio::spawn(async move {
            run_with(&runtime, "return await tools.hold({})", bindings, None).await
        })
    };
    while runtime.runs_in_flight() == 0 {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let signal = CancellationToken::new();
    let waiting = {
        let runtime = Arc::clone(&runtime);
        let signal = signal.clone();
        tokio::spawn(async move { run_with(&runtime, "return 2", vec![], Some(signal)).await })
    };
    while runtime.runs_in_flight() < 2 {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    signal.cancel();
    let cancelled = waiting.await.unwrap();
    assert_eq!(failure(&cancelled).kind, FailureKind::Abort);
    assert_eq!(
        failure(&cancelled).message,
        "AbortError: This operation was aborted"
    );
    // A queued run whose caller lets go of it (a timeout) stops counting as in flight.
    let dropped = tokio::time::timeout(Duration::from_millis(20), run(&runtime, "return 3")).await;
    assert!(dropped.is_err(), "it waited for the slot");
    assert_eq!(runtime.runs_in_flight(), 1, "only the slot's holder");
    // The slot's holder was never disturbed.
    release.cancel();
    assert_eq!(value(&holding.await.unwrap()), &json!("released"));
}

/// A sub-call's dispatch goes inline (on the run's own thread) once its tool proved quick, and
/// back to the host's runtime after one slow inline poll, until it proves quick again.
///
/// Which first polls count as quick is a wall-clock matter (under 100 µs), and on a loaded machine
/// any of them may not be, so the program retries until each state is reached (bounded) and the
/// test asserts only what no timing can change: no tool goes inline before four dispatches on
/// the runtime, and a call that blocked inline sends its tool back for at least four more.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_quick_tool_is_dispatched_inline_and_one_that_blocked_goes_back_to_the_runtime() {
    use dsh_tools::registry::PresentationMode;
    use dsh_tools::{OutputDecl, Registry, ToolDefinition, ToolExecutionInput};
    let registry = Registry::new();
    let place = ToolDefinition::new(
        "place",
        "Where its body ran.",
        json!({"type": "object"}),
        OutputDecl::json(json!({"type": "boolean"})),
        |args: Arc<Value>, _| async move {
            if args["block"] == json!(true) {
                // A body that blocks its thread (what a tool should not do, and some do).
                std::thread::sleep(Duration::from_millis(5));
            }
            let name = std::thread::current().name().unwrap_or("").to_owned();
            Ok(json!(name.starts_with("dsh-code")))
        },
    );
    registry.register(place).unwrap().keep();
    registry.set_presentation_mode(PresentationMode::Code);
    registry.set_code_runtime(default_rt());
    let program = "const first = [];\n\
        for (let i = 0; i < 4; i++) first.push(await tools.place({}));\n\
        const untilInline = async () => {\n\
          for (let i = 0; i < 200; i++) if (await tools.place({})) return true;\n\
          return false;\n\
        };\n\
        let promoted = false, blocked = false;\n\
        for (let attempt = 0; attempt < 50 && !blocked; attempt++) {\n\
          promoted = await untilInline();\n\
          if (!promoted) break;\n\
          blocked = await tools.place({block: true});\n\
        }\n\
        const after = [];\n\
        for (let i = 0; i < 4; i++) after.push(await tools.place({}));\n\
        const again = await untilInline();\n\
        return {first, promoted, blocked, after, again}";
    let args = json!({"code": program, "description": "where calls run"});
    let input = ToolExecutionInput::new("c1", "run_code", args, CancellationToken::new());
    let result = registry.execute(input).await;
    assert!(!result.is_error(), "{}", result.text());
    let seen = result.value().unwrap()["result"].clone();
    assert_eq!(
        seen["first"],
        json!([false, false, false, false]),
        "new tools start on the runtime"
    );
    assert_eq!(seen["promoted"], json!(true), "then quick ones go inline");
    assert_eq!(
        seen["blocked"],
        json!(true),
        "a call that blocked ran inline"
    );
    assert_eq!(
        seen["after"],
        json!([false, false, false, false]),
        "then its tool went back to the runtime"
    );
    assert_eq!(seen["again"], json!(true), "until it proved quick again");
}

/// Plain JavaScript compiles before any type stripping (issue 35): the stripper's own limits
/// (128 KiB, 1,000 nested brackets, which bound its recursive parser) apply to TypeScript only,
/// and the engine's parser, bounded by its stack limit, refuses what is too deep with an error.
#[tokio::test]
async fn plain_javascript_skips_the_stripper_and_its_limits() {
    let runtime = default_rt();
    let long = format!("const s = '{}';\nreturn s.length", "x".repeat(200 << 10));
    assert_eq!(value(&run(&runtime, &long).await), &json!(200 << 10));
    let typed = format!(
        "const s: string = '{}';\nreturn s.length",
        "x".repeat(200 << 10)
    );
    let refused = run(&runtime, &typed).await;
    assert_eq!(failure(&refused).kind, FailureKind::Exception);
    assert!(
        failure(&refused).message.contains("longer than"),
        "{}",
        failure(&refused).message
    );
    let generic = "const id = (x) => x; const f = id; return f<string>('a')";
    // Valid JavaScript too (`(f < string) > 'a'`, a ReferenceError), but TypeScript's meaning
    // wins: its type arguments send it to the stripper first.
    assert_eq!(value(&run(&runtime, generic).await), &json!("a"));
    let deep = format!("return {}1{}", "(".repeat(50_000), ")".repeat(50_000));
    let failed = run(&runtime, &deep).await;
    assert_eq!(failure(&failed).kind, FailureKind::Exception);
    assert!(
        failure(&failed)
            .message
            .contains("Maximum call stack size exceeded"),
        "{}",
        failure(&failed).message
    );
    // The engine is fine after it.
    assert_eq!(value(&run(&runtime, "return 2").await), &json!(2));
}

/// The lane is polled from the engine's interrupt checks while a program computes (issue 35): a
/// call the program made and did not await starts (and here cancels the run) during a hot loop,
/// instead of waiting for the program to yield.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unawaited_call_runs_while_the_program_computes() {
    use dsh_tools::registry::PresentationMode;
    use dsh_tools::{OutputDecl, Registry, ToolDefinition, ToolExecutionInput};
    let outer = CancellationToken::new();
    let o = outer.clone();
    let registry = Registry::new();
    let stop = ToolDefinition::new(
        "stop",
        "Cancels the run that called it.",
        json!({"type": "object"}),
        OutputDecl::text(),
        move |_, _| {
            let o = o.clone();
            async move {
                o.cancel();
                Ok(json!("stopped"))
            }
        },
    );
    registry.register(stop).unwrap().keep();
    registry.set_presentation_mode(PresentationMode::Code);
    registry.set_code_runtime(rt(|c| c.compute_ms = 5_000.0));
    let args = json!({"code": "tools.stop({}); for (;;) {}", "description": "spin"});
    let result = registry
        .execute(ToolExecutionInput::new("c1", "run_code", args, outer))
        .await;
    assert!(result.is_error());
    let text = result.text();
    assert!(
        !text.contains("compute budget"),
        "the call waited for the loop to end: {text}"
    );
    assert!(text.contains("abort"), "{text}");
}

// ---------------------------------------------------------------- Unknown members (issue 39.4)

/// A call of a member that does not exist names it and the nearest tools, in the engine's text
/// and the test double's alike (the bootstrap's JavaScript and `code/missing.rs` agree).
#[tokio::test]
async fn unknown_members_name_themselves_and_the_nearest_tools() {
    let declared = [
        "read_file",
        "write_file",
        "list_directory",
        "search",
        "get-time",
        "a-b-c-d-e-f",
    ];
    let noop = || host(|_| Ok(json!(null)));
    let bindings = || tools(declared.iter().map(|n| (*n, noop())).collect());
    let called: Vec<String> = [
        "readFile",
        "file",
        "serch",
        "nope",
        "GET_TIME",
        "a-b\"c",
        "Search",
        "",
        "A_B_C_D_E_F",
    ]
    .iter()
    .map(|s| (*s).to_owned())
    .chain(["x".repeat(100_000), "😀".repeat(40), "é".repeat(70)])
    .collect();
    let program = format!(
        "const names = {};\n\
        const out = [];\n\
        for (const name of names) {{\n\
          try {{ await tools[name]({{}}); out.push('called'); }}\n\
          catch (e) {{ out.push([e instanceof TypeError, e.message]); }}\n\
        }}\n\
        return out;",
        serde_json::to_string(&called).unwrap()
    );
    let result = run_with(&default_rt(), &program, bindings(), None).await;
    let engine = value(&result).as_array().unwrap().clone();

    let expected = called.clone();
    let fake = dsh_tools::testing::FakeRuntime::new(move |_, run| {
        let called = expected.clone();
        async move {
            let mut out = Vec::new();
            for name in &called {
                let message = run.call("tools", name, json!({})).await.unwrap_err();
                out.push(json!([true, message]));
            }
            dsh_tools::testing::FakeOutcome::Return(Some(Value::Array(out)))
        }
    });
    let request = CodeRequest {
        program: String::new(),
        bindings: bindings(),
        signal: None,
    };
    let reference = fake.run(request).await.unwrap().value.unwrap();
    assert_eq!(Value::Array(engine.clone()), reference);

    let message = |i: usize| engine[i][1].as_str().unwrap().to_owned();
    assert_eq!(
        message(0),
        "tools.readFile is not a tool; did you mean tools.read_file?"
    );
    assert_eq!(
        message(1),
        "tools.file is not a tool; did you mean tools.read_file or tools.write_file?"
    );
    assert_eq!(
        message(3),
        "tools.nope is not a tool; tools has read_file, write_file, list_directory, search, \
         get-time, a-b-c-d-e-f"
    );
    assert_eq!(
        message(8),
        "tools.A_B_C_D_E_F is not a tool; did you mean tools[\"a-b-c-d-e-f\"]?"
    );
    assert_eq!(
        message(4),
        "tools.GET_TIME is not a tool; did you mean tools[\"get-time\"]?"
    );
    assert!(message(9).len() < 300, "a long name is cut: {}", message(9));
}

/// The namespace keeps its shape (§3.6.2) around the named error: no prototype, only its tools
/// as keys, `in` false for absent names, Object.prototype's names and the engine's implicit
/// reads (`then`, `toJSON`) absent, so awaiting and stringifying it are unchanged; and an
/// uncaught call of an unknown member fails the run with the same text.
#[tokio::test]
async fn the_namespace_keeps_its_shape_around_unknown_members() {
    let bindings = || tools(vec![("echo", host(Ok))]);
    let program = "return {\n\
        proto: Object.getPrototypeOf(tools),\n\
        keys: Object.keys(tools),\n\
        has: ['echo' in tools, 'nope' in tools],\n\
        absent: [typeof tools.hasOwnProperty, typeof tools.then, typeof tools.toJSON,\n\
                 typeof tools.constructor, typeof tools.__proto__, typeof tools[Symbol.iterator]],\n\
        unknown: typeof tools.nope,\n\
        awaited: (await tools) === tools,\n\
        json: JSON.stringify(tools),\n\
        frozen: Object.isFrozen(tools),\n\
        call: await tools.echo({a: 1}),\n\
      };";
    let result = run_with(&default_rt(), program, bindings(), None).await;
    assert_eq!(
        value(&result),
        &json!({
            "proto": null,
            "keys": ["echo"],
            "has": [true, false],
            "absent": vec!["undefined"; 6],
            "unknown": "function",
            "awaited": true,
            "json": "{}",
            "frozen": true,
            "call": {"a": 1},
        })
    );
    let result = run_with(&default_rt(), "await tools.ecko({});", bindings(), None).await;
    let failure = failure(&result);
    assert_eq!(failure.kind, FailureKind::Exception);
    assert!(
        failure
            .message
            .contains("TypeError: tools.ecko is not a tool; did you mean tools.echo?"),
        "{}",
        failure.message
    );
}

// ---------------------------------------------------------------- Positions (issue 39.3)

/// Errors point at the program's own lines: a caught error's `stack` holds only the program's
/// frames (no header offset, no `apply (native)` or bootstrap frame), an uncaught one carries
/// them into the failure, a TypeScript program keeps its lines through stripping, and a syntax
/// error says its line and column.
#[tokio::test]
async fn errors_point_at_the_programs_own_lines() {
    let runtime = default_rt();
    let caught = "function f() {\n  const z = 1;\n  return z.q.y;\n}\ntry { f() } catch (e) { return e.stack }";
    let stack = value(&run(&runtime, caught).await)
        .as_str()
        .unwrap()
        .to_owned();
    assert_eq!(
        stack,
        "    at f (<program>:3:10)\n    at anonymous (<program>:5:7)\n"
    );

    let uncaught = "const a: number = 1;\nfunction f(x: number): number {\n  return (undefined as any).q + x;\n}\nreturn f(a);";
    let result = run(&runtime, uncaught).await;
    let failure = failure(&result);
    assert_eq!(failure.kind, FailureKind::Exception);
    assert!(
        failure.message.starts_with(
            "TypeError: cannot read property 'q' of undefined\n    at f (<program>:3:"
        ) && failure.message.contains("\n    at anonymous (<program>:5:"),
        "{}",
        failure.message
    );
    assert!(!failure.message.contains("eval_script") && !failure.message.contains("native"));

    let result = run(&runtime, "const a = 1;\nconst b = ;\nreturn a").await;
    let message = &result.error.as_ref().expect("a failure").message;
    assert!(message.ends_with("(line 2, column 11)"), "{message}");
}

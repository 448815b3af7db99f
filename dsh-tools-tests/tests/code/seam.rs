//! Code Mode's runtime seam: the output ledger against the reference cases (`ledger.json`,
//! produced by running upstream's runtime), namespace validation messages, configuration checks,
//! and the test double's contract.

use dsh_tools::code::{
    CodeRequest, CodeRuntime, CodeRuntimeConfig, ErrorClass, FailureKind, Namespace,
    validate_bindings,
};
use dsh_tools::testing::{FAKE_BACKEND, FakeOutcome, FakeRuntime};
use serde_json::{Value, json};
use std::sync::Arc;

const LEDGER: &str = include_str!("../conformance/code-mode/ledger.json");

fn request(bindings: Vec<Namespace>) -> CodeRequest {
    CodeRequest {
        program: String::new(),
        bindings,
        signal: None,
    }
}

#[tokio::test]
async fn the_output_ledger_matches_every_reference_case() {
    let cases: Vec<Value> = serde_json::from_str(LEDGER).unwrap();
    assert_eq!(cases.len(), 24);
    for case in cases {
        let name = case["name"].as_str().unwrap().to_owned();
        let logs: Vec<String> = match (&case.get("logs"), &case.get("logs_generate")) {
            (Some(Value::Array(logs)), _) => logs
                .iter()
                .map(|l| l.as_str().unwrap().to_owned())
                .collect(),
            (_, Some(g)) => {
                let prefix = g["prefix"].as_str().unwrap();
                (0..g["count"].as_u64().unwrap())
                    .map(|i| format!("{prefix}{i}"))
                    .collect()
            }
            _ => panic!("{name}: no logs"),
        };
        let completion = &case["completion"];
        let repeat = |key: &str| {
            completion.get(key).map(|p| {
                p[0].as_str()
                    .unwrap()
                    .repeat(p[1].as_u64().unwrap() as usize)
            })
        };
        let outcome = if let Some(v) = completion.get("return") {
            FakeOutcome::Return(Some(v.clone()))
        } else if let Some(s) = repeat("return_repeat") {
            FakeOutcome::Return(Some(Value::String(s)))
        } else if let Some(s) = completion.get("throw") {
            FakeOutcome::Throw(s.as_str().unwrap().to_owned())
        } else if let Some(s) = repeat("throw_repeat") {
            FakeOutcome::Throw(s)
        } else if completion.get("return_function").is_some() {
            FakeOutcome::Lossy
        } else {
            FakeOutcome::Return(None)
        };
        let cap = case["max_output_bytes"].as_u64().unwrap() as usize;
        let runtime = FakeRuntime::new(move |_, run| {
            let (logs, outcome) = (logs.clone(), outcome.clone());
            async move {
                for entry in logs {
                    run.log(entry);
                }
                outcome
            }
        })
        .max_output_bytes(cap);
        let result = runtime.run(request(vec![])).await.unwrap();
        let expected = &case["expected"];
        assert_eq!(json!(result.logs), expected["logs"], "{name}: logs");
        assert_eq!(
            result.value.as_ref(),
            expected.get("value"),
            "{name}: value"
        );
        let error = result
            .error
            .map(|e| json!({"kind": e.kind.as_str(), "message": e.message}));
        assert_eq!(error.as_ref(), expected.get("error"), "{name}: error");
    }
}

fn ns(global: &str, class: Option<(&str, &str)>) -> Namespace {
    Namespace {
        global: global.to_owned(),
        functions: Vec::new(),
        error_class: class.map(|(name, member)| ErrorClass {
            name: name.to_owned(),
            member_name_property: member.to_owned(),
        }),
    }
}

#[test]
fn namespaces_are_checked_in_the_specified_order_with_its_messages() {
    let cases: Vec<(Vec<Namespace>, &str)> = vec![
        (
            vec![ns("1tools", None)],
            r#"binding global "1tools" is not a usable identifier"#,
        ),
        (
            vec![ns("to$ls", None)],
            r#"binding global "to$ls" is not a usable identifier"#,
        ),
        (
            vec![ns("await", None)],
            r#"binding global "await" is not a usable identifier"#,
        ),
        (
            vec![ns("None", None)],
            r#"binding global "None" is not a usable identifier"#,
        ),
        (
            vec![ns("console", None)],
            r#"reserved binding global "console""#,
        ),
        (
            vec![ns("t", None), ns("t", None)],
            r#"duplicate binding global "t""#,
        ),
        (
            vec![ns("t", Some(("9E", "toolName")))],
            r#"binding error class "9E" is not a usable identifier"#,
        ),
        (
            vec![ns("t", Some(("__name__", "toolName")))],
            r#"reserved binding global "__name__""#,
        ),
        (
            vec![ns("t", Some(("t", "toolName")))],
            r#"duplicate injected global "t""#,
        ),
        (
            vec![ns("a", Some(("E", "m"))), ns("b", Some(("E", "m")))],
            r#"duplicate injected global "E""#,
        ),
        (
            vec![ns("t", Some(("E", "message")))],
            r#"binding error member property "message" is not usable"#,
        ),
        (
            vec![ns("t", Some(("E", "__dunder__")))],
            r#"binding error member property "__dunder__" is not usable"#,
        ),
        (
            vec![ns("t", Some(("E", "")))],
            r#"binding error member property "" is not usable"#,
        ),
        // Every global is checked before any error class.
        (
            vec![ns("t", Some(("E", "message"))), ns("t", None)],
            r#"duplicate binding global "t""#,
        ),
    ];
    for (bindings, message) in cases {
        let error = validate_bindings("backend", &bindings).unwrap_err();
        assert_eq!(error.to_string(), format!("backend: {message}"));
    }
    // A namespace named like a class is fine; Code Mode's own declaration passes.
    assert!(validate_bindings("b", &[ns("ToolCallError", None)]).is_ok());
    assert!(validate_bindings("b", &[ns("tools", Some(("ToolCallError", "toolName")))]).is_ok());
}

#[test]
fn configurations_are_validated_with_the_specified_messages() {
    assert!(CodeRuntimeConfig::default().validate("b").is_ok());
    let with = |f: fn(&mut CodeRuntimeConfig)| {
        let mut c = CodeRuntimeConfig::default();
        f(&mut c);
        c.validate("b").unwrap_err().to_string()
    };
    assert_eq!(
        with(|c| c.max_wall_ms = -1.0),
        "b: config.maxWallMs must be a positive number, got -1"
    );
    assert_eq!(
        with(|c| c.compute_ms = f64::NAN),
        "b: config.computeMs must be a positive number, got NaN"
    );
    assert_eq!(
        with(|c| c.max_output_bytes = 3.0),
        "b: config.maxOutputBytes must be a safe integer of at least 4, got 3"
    );
    assert_eq!(
        with(|c| c.max_output_bytes = 4.5),
        "b: config.maxOutputBytes must be a safe integer of at least 4, got 4.5"
    );
}

#[tokio::test]
async fn the_test_double_keeps_the_seam_contract() {
    // Misuse is an Err, before anything else (even a pre-cancelled signal).
    let runtime = FakeRuntime::new(|_, _| async { FakeOutcome::Return(None) });
    let signal = tokio_util::sync::CancellationToken::new();
    signal.cancel();
    let mut misuse = request(vec![ns("console", None)]);
    misuse.signal = Some(signal.clone());
    let error = runtime.run(misuse).await.unwrap_err();
    assert_eq!(
        error.to_string(),
        format!("{FAKE_BACKEND}: reserved binding global \"console\"")
    );
    // A pre-cancelled signal is an abort result, the program never starts.
    let mut aborted = request(vec![]);
    aborted.signal = Some(signal);
    let result = runtime.run(aborted).await.unwrap();
    assert_eq!(result.error.unwrap().kind, FailureKind::Abort);

    // Bindings: arguments and resolutions must be lossless; the host sees a copy.
    let echo: dsh_tools::code::HostFn = Arc::new(|arg: Value| Box::pin(async move { Ok(arg) }));
    let tools = Namespace {
        global: "tools".into(),
        functions: vec![("echo".into(), echo)],
        error_class: None,
    };
    let runtime = FakeRuntime::new(|_, run| async move {
        let ok = run.call("tools", "echo", json!({"a": 1})).await;
        let lossy = run.call("tools", "echo", json!(-0.0)).await;
        let missing = run.call("tools", "nope", json!({})).await;
        run.log(format!("{ok:?} {lossy:?} {missing:?}"));
        FakeOutcome::Return(Some(json!(-0.0)))
    });
    let result = runtime.run(request(vec![tools])).await.unwrap();
    assert_eq!(
        result.logs,
        [
            r#"Ok(Object {"a": Number(1)}) Err("binding arguments must be lossless JSON") Err("tools.nope is not a tool; tools has echo")"#
        ]
    );
    let failure = result.error.unwrap();
    assert_eq!(
        failure.kind,
        FailureKind::InvalidOutput,
        "a -0 completion is lossy"
    );
    assert_eq!(failure.message, "program completion must be lossless JSON");
}

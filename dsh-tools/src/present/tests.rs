use super::cards::*;
use crate::ContentBlock;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;
use serde_json::json;
use std::fmt::Debug;
use std::sync::Arc;

/// `view` serializes to exactly `expected` and reads back equal.
fn exact<T: Serialize + DeserializeOwned + PartialEq + Debug>(view: &T, expected: &str) {
    assert_eq!(serde_json::to_string(view).unwrap(), expected);
    assert_eq!(&serde_json::from_str::<T>(expected).unwrap(), view);
}

fn rejected<T: DeserializeOwned + Debug>(json: &str) -> String {
    serde_json::from_str::<T>(json).unwrap_err().to_string()
}

fn diff(old: Option<&str>, new: &str) -> FileDiff {
    FileDiff {
        path: "a.rs".into(),
        old_text: old.map(str::to_owned),
        new_text: new.into(),
    }
}

fn text(s: &str) -> Option<Vec<ContentBlock>> {
    Some(vec![ContentBlock::text(s)])
}

#[test]
fn call_views_exact_json() {
    exact(
        &ToolCallView::Generic {
            title: "t".into(),
            kind: Some(ToolCallKind::Read),
            raw_input: Some(json!({"p": 1})),
            content: text("hi"),
            locations: Some(vec![FileLocation {
                path: "a".into(),
                line: Some(3),
            }]),
        },
        r#"{"card":"generic","title":"t","kind":"read","rawInput":{"p":1},"content":[{"type":"text","text":"hi"}],"locations":[{"path":"a","line":3}]}"#,
    );
    exact(
        &ToolCallView::Generic {
            title: "t".into(),
            kind: None,
            raw_input: None,
            content: None,
            locations: None,
        },
        r#"{"card":"generic","title":"t"}"#,
    );
    exact(
        &ToolCallView::Terminal {
            title: "ls".into(),
            description: Some("List".into()),
            cwd: Some("/w".into()),
        },
        r#"{"card":"terminal","title":"ls","description":"List","cwd":"/w"}"#,
    );
    exact(
        &ToolCallView::Diff {
            title: "Edit".into(),
            diffs: vec![diff(None, "x")],
            locations: Some(vec![FileLocation {
                path: "a.rs".into(),
                line: None,
            }]),
        },
        r#"{"card":"diff","title":"Edit","diffs":[{"path":"a.rs","oldText":null,"newText":"x"}],"locations":[{"path":"a.rs"}]}"#,
    );
}

#[test]
fn result_views_exact_json() {
    exact(
        &ToolResultView::Generic {
            title: None,
            content: None,
        },
        r#"{"card":"generic"}"#,
    );
    exact(
        &ToolResultView::Generic {
            title: Some("Done".into()),
            content: text("ok"),
        },
        r#"{"card":"generic","title":"Done","content":[{"type":"text","text":"ok"}]}"#,
    );
    exact(
        &ToolResultView::Terminal(TerminalResult::default()),
        r#"{"card":"terminal"}"#,
    );
    exact(
        &ToolResultView::Terminal(TerminalResult {
            title: Some("ls".into()),
            output: Some("a\n".into()),
            exit: Some(TerminalExit::Code(2)),
        }),
        r#"{"card":"terminal","title":"ls","output":"a\n","exitCode":2}"#,
    );
    exact(
        &ToolResultView::Terminal(TerminalResult {
            exit: Some(TerminalExit::Signal("SIGTERM".into())),
            ..TerminalResult::default()
        }),
        r#"{"card":"terminal","signal":"SIGTERM"}"#,
    );
    exact(
        &ToolResultView::Diff {
            title: None,
            diffs: vec![diff(Some("a"), "b")],
        },
        r#"{"card":"diff","diffs":[{"path":"a.rs","oldText":"a","newText":"b"}]}"#,
    );
    exact(
        &ToolResultView::Search(SearchResult::Matches {
            title: Some("grep".into()),
            files: vec![SearchFile {
                path: "a.rs".into(),
                matches: vec![SearchMatch {
                    line_number: 4,
                    line: "fn x".into(),
                }],
            }],
            truncated: true,
            total: 9,
        }),
        r#"{"card":"search","shape":"matches","title":"grep","files":[{"path":"a.rs","matches":[{"lineNumber":4,"line":"fn x"}]}],"truncated":true,"total":9}"#,
    );
    exact(
        &ToolResultView::Search(SearchResult::Paths {
            title: None,
            paths: vec!["a".into(), "b".into(), "c".into()],
            truncated: false,
            total: 3,
        }),
        r#"{"card":"search","shape":"paths","paths":["a","b","c"],"truncated":false,"total":3}"#,
    );
    exact(
        &ToolResultView::Read {
            title: None,
            path: "a.rs".into(),
            offset: 10,
            lines: vec![ReadFileLine {
                number: 10,
                text: "x".into(),
            }],
            total_lines: 20,
            lang: Some("rust".into()),
            content: None,
        },
        r#"{"card":"read","path":"a.rs","offset":10,"lines":[{"number":10,"text":"x"}],"totalLines":20,"lang":"rust"}"#,
    );
    exact(
        &ToolResultView::Web(WebResult::Search {
            title: None,
            sources: vec![
                WebSource {
                    url: "https://a".into(),
                    title: Some("A".into()),
                    snippet: Some("s".into()),
                    published_at: Some("2024-01-02".into()),
                },
                WebSource {
                    url: "https://b".into(),
                    title: None,
                    snippet: None,
                    published_at: None,
                },
            ],
            answer: Some("42".into()),
            truncated: false,
        }),
        r#"{"card":"web","kind":"search","sources":[{"url":"https://a","title":"A","snippet":"s","publishedAt":"2024-01-02"},{"url":"https://b"}],"answer":"42","truncated":false}"#,
    );
    exact(
        &ToolResultView::Web(WebResult::Fetch {
            title: Some("Page".into()),
            url: "https://a".into(),
            status_code: 404,
            truncated: true,
        }),
        r#"{"card":"web","kind":"fetch","title":"Page","url":"https://a","statusCode":404,"truncated":true}"#,
    );
}

#[test]
fn every_call_kind_is_lowercase() {
    let kinds = [
        ToolCallKind::Read,
        ToolCallKind::Edit,
        ToolCallKind::Delete,
        ToolCallKind::Move,
        ToolCallKind::Search,
        ToolCallKind::Execute,
        ToolCallKind::Fetch,
        ToolCallKind::Other,
    ];
    for kind in kinds {
        exact(&kind, &format!("\"{}\"", kind.as_str()));
    }
    assert_eq!(ToolCallKind::default(), ToolCallKind::Other);
}

#[test]
fn spec_forms_deserialize_with_keys_in_any_order() {
    let view: ToolResultView = serde_json::from_value(
        json!({"total": 1, "shape": "paths", "paths": ["x"], "card": "search", "truncated": false}),
    )
    .unwrap();
    assert_eq!(
        view,
        ToolResultView::Search(SearchResult::Paths {
            title: None,
            paths: vec!["x".into()],
            truncated: false,
            total: 1
        })
    );
    let view: ToolCallView =
        serde_json::from_value(json!({"title": "ls", "card": "terminal"})).unwrap();
    assert_eq!(view.title(), "ls");
    // `rawInput: null` is kept; the other optional fields read `null` as absent.
    let view: ToolCallView = serde_json::from_value(
        json!({"card": "generic", "title": "t", "rawInput": null, "kind": null}),
    )
    .unwrap();
    assert_eq!(view, ToolCallView::fallback("t", &Value::Null));
    exact(&view, r#"{"card":"generic","title":"t","rawInput":null}"#);
}

#[test]
fn exit_code_and_signal_together_are_rejected() {
    let err = rejected::<ToolResultView>(r#"{"card":"terminal","exitCode":1,"signal":"SIGKILL"}"#);
    assert!(err.contains("either exitCode or signal"), "{err}");
}

#[test]
fn malformed_cards_are_rejected() {
    let unknown = rejected::<ToolResultView>(r#"{"card":"chart","title":"x"}"#);
    assert!(unknown.contains("unknown variant `chart`"), "{unknown}");
    assert!(rejected::<ToolCallView>(r#"{"card":"read","title":"x"}"#).contains("unknown variant"));
    assert!(rejected::<ToolCallView>(r#"{"title":"x"}"#).contains("missing field `card`"));
    assert!(
        rejected::<ToolResultView>(r#"{"card":"search","paths":[],"truncated":false,"total":0}"#)
            .contains("shape")
    );
    assert!(
        rejected::<ToolResultView>(r#"{"card":"web","kind":"crawl","url":"u"}"#)
            .contains("unknown variant")
    );
    // `oldText` is nullable but required; `kind` values are closed.
    assert!(rejected::<FileDiff>(r#"{"path":"a","newText":"b"}"#).contains("oldText"));
    assert!(
        rejected::<ToolCallView>(r#"{"card":"generic","title":"t","kind":"Read"}"#)
            .contains("unknown variant")
    );
    // A content block must be an object with a string `type`.
    assert!(
        rejected::<ToolResultView>(r#"{"card":"generic","content":[{"text":"x"}]}"#)
            .contains("content block")
    );
}

#[test]
fn fallbacks_are_generic_cards() {
    let args = json!({"path": "a"});
    exact(
        &ToolCallView::fallback("read", &args),
        r#"{"card":"generic","title":"read","rawInput":{"path":"a"}}"#,
    );
    let content = [ContentBlock::text("ok")];
    exact(
        &ToolResultView::fallback(&content),
        r#"{"card":"generic","content":[{"type":"text","text":"ok"}]}"#,
    );
    assert_eq!(ToolResultView::fallback(&content).title(), None);
}

#[test]
fn presenters_that_decline_or_panic_fall_back() {
    let args = json!({"command": "ls"});
    let summary = ResultSummary {
        content: vec![ContentBlock::text("a")],
        is_error: false,
        meta: Some(json!({"exitCode": 0})),
    };
    let call_fallback = ToolCallView::fallback("bash", &args);
    let result_fallback = ToolResultView::fallback(&summary.content);

    let terminal: CallPresenter = Arc::new(|args: &Value| {
        Some(ToolCallView::Terminal {
            title: args["command"].as_str()?.to_owned(),
            description: None,
            cwd: None,
        })
    });
    let declines: CallPresenter = Arc::new(|_: &Value| None);
    let panics: CallPresenter = Arc::new(|args: &Value| panic!("bad args {args}"));
    assert_eq!(
        present_call_safely("bash", Some(&*terminal), &args).title(),
        "ls"
    );
    assert_eq!(
        present_call_safely("bash", Some(&*terminal), &json!(7)),
        ToolCallView::fallback("bash", &json!(7))
    );
    assert_eq!(
        present_call_safely("bash", Some(&*declines), &args),
        call_fallback
    );
    assert_eq!(
        present_call_safely("bash", Some(&*panics), &args),
        call_fallback
    );
    assert_eq!(present_call_safely("bash", None, &args), call_fallback);

    let from_meta: ResultPresenter = Arc::new(|_: &Value, result: &ResultSummary| {
        let code = result.meta.as_ref()?.get("exitCode")?.as_i64()?;
        Some(ToolResultView::Terminal(TerminalResult {
            exit: Some(TerminalExit::Code(code)),
            ..TerminalResult::default()
        }))
    });
    let panics: ResultPresenter =
        Arc::new(|_: &Value, _: &ResultSummary| unreachable!("presenter bug"));
    assert_eq!(
        serde_json::to_string(&present_result_safely(Some(&*from_meta), &args, &summary)).unwrap(),
        r#"{"card":"terminal","exitCode":0}"#
    );
    let no_meta = ResultSummary {
        meta: None,
        ..summary.clone()
    };
    assert_eq!(
        present_result_safely(Some(&*from_meta), &args, &no_meta),
        result_fallback
    );
    assert_eq!(
        present_result_safely(Some(&*panics), &args, &summary),
        result_fallback
    );
    assert_eq!(
        present_result_safely(None, &args, &summary),
        result_fallback
    );
}

#[test]
fn result_summary_json() {
    let summary = ResultSummary {
        content: vec![ContentBlock::text("x")],
        is_error: true,
        meta: None,
    };
    exact(
        &summary,
        r#"{"content":[{"type":"text","text":"x"}],"isError":true}"#,
    );
    exact(
        &ResultSummary {
            meta: Some(Value::Null),
            ..summary
        },
        r#"{"content":[{"type":"text","text":"x"}],"isError":true,"meta":null}"#,
    );
}

#[test]
fn line_changes_count_lines_outside_the_common_ends() {
    assert_eq!(diff(Some("a\nb\nc\n"), "a\nB\nc\n").line_changes(), (1, 1));
    assert_eq!(diff(Some("a\nb"), "a\nb\nc\nd").line_changes(), (2, 0));
    assert_eq!(diff(Some("x\na\na"), "a\na").line_changes(), (0, 1));
    assert_eq!(diff(Some("same"), "same").line_changes(), (0, 0));
    assert_eq!(diff(None, "1\n2\n3\n").line_changes(), (3, 0));
    assert_eq!(diff(Some("a\nb"), "").line_changes(), (0, 2));
}

#[test]
fn call_views_display() {
    let generic = ToolCallView::Generic {
        title: "read_file".into(),
        kind: Some(ToolCallKind::Read),
        raw_input: Some(json!({"path": "a.rs"})),
        content: Some(vec![
            ContentBlock::text("one\ntwo"),
            ContentBlock::new(json!({"type": "image", "data": ""})).unwrap(),
        ]),
        locations: Some(vec![FileLocation {
            path: "a.rs".into(),
            line: Some(7),
        }]),
    };
    assert_eq!(
        generic.to_string(),
        "[read] read_file\n  {\"path\":\"a.rs\"}\n  one\n  two\n  [image]\n  at a.rs:7"
    );
    assert_eq!(
        ToolCallView::fallback("note", &json!("line 1\nline 2")).to_string(),
        "note\n  line 1\n  line 2"
    );
    let terminal = ToolCallView::Terminal {
        title: "cargo test".into(),
        description: Some("Run the tests".into()),
        cwd: Some("crates/a".into()),
    };
    assert_eq!(
        terminal.to_string(),
        "Run the tests\n$ cargo test\n  in crates/a"
    );
    let edit = ToolCallView::Diff {
        title: "Edit 2 files".into(),
        diffs: vec![diff(Some("a\nb\n"), "a\nc\nd\n"), diff(None, "x\n")],
        locations: None,
    };
    assert_eq!(
        edit.to_string(),
        "Edit 2 files\n  a.rs +2 -1\n  a.rs (new) +1"
    );
}

#[test]
fn result_views_display() {
    let show = |json: Value| {
        serde_json::from_value::<ToolResultView>(json)
            .unwrap()
            .to_string()
    };
    assert_eq!(
        show(json!({"card": "generic", "content": [{"type": "text", "text": "ok"}]})),
        "result\n  ok"
    );
    assert_eq!(
        show(json!({"card": "terminal", "title": "ls", "output": "a\nb\n", "exitCode": 1})),
        "ls\n  a\n  b\n  exit code 1"
    );
    assert_eq!(
        show(json!({"card": "terminal", "signal": "SIGINT"})),
        "terminal\n  killed by SIGINT"
    );
    assert_eq!(
        show(
            json!({"card": "diff", "diffs": [{"path": "b.rs", "oldText": "x", "newText": "y\nz"}]})
        ),
        "diff\n  b.rs +2 -1"
    );
    assert_eq!(
        show(
            json!({"card": "search", "shape": "matches", "total": 1, "truncated": false,
                    "files": [{"path": "a.rs", "matches": [{"lineNumber": 3, "line": "fn main()"}]}]})
        ),
        "search\n  1 match in 1 file\n  a.rs\n    3: fn main()"
    );
    assert_eq!(
        show(
            json!({"card": "search", "shape": "paths", "title": "glob", "paths": ["a", "b"], "truncated": true, "total": 5})
        ),
        "glob\n  5 paths (truncated)\n  a\n  b"
    );
    assert_eq!(
        show(
            json!({"card": "read", "path": "a.rs", "offset": 3, "totalLines": 40,
                    "lines": [{"number": 3, "text": "x"}, {"number": 4, "text": "y"}]})
        ),
        "read\n  a.rs:3, 2 lines of 40"
    );
    assert_eq!(
        show(
            json!({"card": "web", "kind": "search", "truncated": false, "answer": "Rust 1.0: 2015",
                    "sources": [{"url": "https://a", "title": "A"}, {"url": "https://b"}]})
        ),
        "web search\n  2 sources\n  - A <https://a>\n  - https://b\n  Rust 1.0: 2015"
    );
    assert_eq!(
        show(
            json!({"card": "web", "kind": "fetch", "url": "https://a", "statusCode": 200, "truncated": true})
        ),
        "fetch\n  https://a: status 200 (truncated)"
    );
}

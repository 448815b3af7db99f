//! The Code Mode example's comparison: the program reaches the same answer with fewer model
//! requests and fewer cumulative input bytes than native tool calling.

#[allow(dead_code)]
#[path = "../code_mode/compare.rs"]
mod compare;

#[tokio::test]
async fn code_mode_needs_fewer_requests_and_fewer_input_bytes() {
    let root = std::env::temp_dir().join(format!("dsh-code-mode-test-{}", std::process::id()));
    compare::seed(&root).unwrap();
    let native = compare::native(&root).await;
    let code = compare::code(&root).await;
    let _ = std::fs::remove_dir_all(&root);
    assert_eq!(native.answer, code.answer);
    assert_eq!(native.answer.lines().count(), 3, "{}", native.answer);
    assert_eq!((native.model_requests, code.model_requests), (4, 2));
    assert!(
        code.cumulative_input_bytes < native.cumulative_input_bytes,
        "{}",
        compare::table(&native, &code)
    );
    assert!(code.tool_result_bytes < native.tool_result_bytes);
}

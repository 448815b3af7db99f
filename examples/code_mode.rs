//! Code Mode against native tool calling, on the same task and real tools, with a scripted model
//! (no API key): prints what each conversation cost as a Markdown table.
//!
//! ```text
//! cargo run -p examples --features code --example code_mode
//! ```

#[path = "code_mode/compare.rs"]
mod compare;

fn main() {
    let root = std::env::temp_dir().join(format!("dsh-code-mode-{}", std::process::id()));
    compare::seed(&root).expect("a workspace");
    let runtime = tokio::runtime::Runtime::new().expect("a tokio runtime");
    let (native, code) =
        runtime.block_on(async { (compare::native(&root).await, compare::code(&root).await) });
    let _ = std::fs::remove_dir_all(&root);
    println!("Task: which of 20 files mention TODO, and what do those lines say?\n");
    println!("{}", compare::table(&native, &code));
    println!("Both answers:\n{}", code.answer);
    assert_eq!(native.answer, code.answer, "the same answer both ways");
}

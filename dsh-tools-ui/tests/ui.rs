//! Compile-time behaviour of `#[tool]` and `#[derive(FastCheck)]`: every supported form compiles (`ui/pass`), and every
//! mistake is an error at the author's code (the other folders, with their `.stderr`).
//! Regenerate the `.stderr` files with `TRYBUILD=overwrite cargo test -p dsh-tools-ui --test ui`
//! and review each; they are pinned to the machines' one toolchain.

#[test]
fn ui() {
    let cases = trybuild::TestCases::new();
    cases.pass("tests/ui/pass/*.rs");
    for category in [
        "attr",
        "name",
        "description",
        "signature",
        "types",
        "inline",
        "hooks",
        "state",
        "fast_check",
        "collisions",
        "cards",
    ] {
        cases.compile_fail(format!("tests/ui/{category}/*.rs"));
    }
}

//! The argument types of the `validate` benches (the payloads in `../data/` are their values):
//! small = `ReadArgs`, medium and invalid = `EditArgs`, large = `TableArgs`.

use dsh_tools::FastCheck;
use serde::Deserialize;

#[allow(dead_code)]
#[derive(Deserialize, schemars::JsonSchema, FastCheck)]
#[serde(deny_unknown_fields)]
pub(crate) struct ReadArgs {
    pub(crate) path: String,
    offset: Option<i64>,
    limit: Option<i64>,
}

#[allow(dead_code)]
#[derive(Deserialize, schemars::JsonSchema, FastCheck)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Mode {
    Replace,
    Insert,
    Delete,
}

#[allow(dead_code)]
#[derive(Deserialize, schemars::JsonSchema, FastCheck)]
#[serde(tag = "kind", rename_all = "lowercase", deny_unknown_fields)]
pub(crate) enum Target {
    File { path: String },
    Glob { pattern: String },
}

#[allow(dead_code)]
#[derive(Deserialize, schemars::JsonSchema, FastCheck)]
#[serde(rename_all = "lowercase")]
pub(crate) enum LineEndings {
    Lf,
    Crlf,
    Keep,
}

#[allow(dead_code)]
#[derive(Deserialize, schemars::JsonSchema, FastCheck)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Encoding {
    Utf8,
    Latin1,
}

#[allow(dead_code)]
#[derive(Deserialize, schemars::JsonSchema, FastCheck)]
#[serde(deny_unknown_fields)]
pub(crate) struct EditOptions {
    create_backup: bool,
    line_endings: LineEndings,
    encoding: Encoding,
}

#[allow(dead_code)]
#[derive(Deserialize, schemars::JsonSchema, FastCheck)]
#[serde(deny_unknown_fields)]
pub(crate) struct Edit {
    old: String,
    new: String,
    line: i64,
}

#[allow(dead_code)]
#[derive(Deserialize, schemars::JsonSchema, FastCheck)]
#[serde(deny_unknown_fields)]
pub(crate) struct EditArgs {
    path: String,
    mode: Mode,
    #[serde(default)]
    dry_run: bool,
    target: Target,
    options: EditOptions,
    edits: Vec<Edit>,
}

#[allow(dead_code)]
#[derive(Deserialize, schemars::JsonSchema, FastCheck)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Status {
    Active,
    Pending,
    Disabled,
}

#[allow(dead_code)]
#[derive(Deserialize, schemars::JsonSchema, FastCheck)]
#[serde(deny_unknown_fields)]
pub(crate) struct Row {
    id: i64,
    name: String,
    email: String,
    score: f64,
    active: bool,
    status: Status,
    tags: Vec<String>,
    created_at: String,
}

#[allow(dead_code)]
#[derive(Deserialize, schemars::JsonSchema, FastCheck)]
#[serde(deny_unknown_fields)]
pub(crate) struct TableArgs {
    table: String,
    rows: Vec<Row>,
}

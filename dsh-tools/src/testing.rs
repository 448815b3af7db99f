//! Helpers for tool authors' own tests.

use crate::provider::{Dialect, lint};
use crate::schema::bridge;

/// Panics, listing every issue per dialect and path, unless `Args`' parameters schema exports
/// to each of `dialects` without losing anything (no error, nothing moved into a description,
/// loosened or dropped; see [`provider::lint`](crate::provider::lint)).
///
/// ```
/// use dsh_tools::provider::{Dialect, Provider};
/// use dsh_tools::testing::assert_portable;
///
/// #[derive(serde::Deserialize, schemars::JsonSchema)]
/// struct ReadArgs {
///     /// File path
///     path: String,
///     /// First line, 1-based
///     offset: Option<u32>,
/// }
///
/// assert_portable::<ReadArgs>(&[
///     Dialect::new(Provider::OpenAiChat),
///     Dialect::new(Provider::Anthropic),
///     Dialect::new(Provider::Gemini),
/// ]);
/// ```
///
/// ```should_panic
/// # use dsh_tools::provider::{Dialect, Provider};
/// # use dsh_tools::testing::assert_portable;
/// #[derive(serde::Deserialize, schemars::JsonSchema)]
/// struct Env {
///     vars: std::collections::HashMap<String, String>,
/// }
/// // A map cannot be expressed in OpenAI's strict mode.
/// assert_portable::<Env>(&[Dialect::strict(Provider::OpenAiChat)]);
/// ```
#[track_caller]
pub fn assert_portable<Args: schemars::JsonSchema>(dialects: &[Dialect]) {
    let schema = match bridge::schema_for::<Args>() {
        Ok(schema) => schema,
        Err(e) => panic!(
            "`{}` has no schema in the subset: {e}",
            std::any::type_name::<Args>()
        ),
    };
    let mut report = Vec::new();
    for &dialect in dialects {
        for issue in lint(&schema, dialect) {
            report.push(format!("{dialect}: {}: {}", issue.path, issue.message));
        }
    }
    assert!(
        report.is_empty(),
        "`{}` is not portable:\n{}",
        std::any::type_name::<Args>(),
        report.join("\n")
    );
}

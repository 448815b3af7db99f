//! One parameters schema exported to a dialect: read into the subset, transformed, with the
//! plan that maps the model's arguments back; what the export would lose (`lint`); and the
//! single-schema exports the CLI uses (`provider export`, `provider restore`).

use super::dialect::Dialect;
use super::entry::entry;
use super::restore::{self, Plan};
use super::transform::{Change, ChangeKind, Problem, Transform};
use serde_json::Value;

/// The parameters of a tool as a subset schema the transform reads: as they are when they are
/// in the subset, else converted with [`bridge::from_foreign`](crate::schema::bridge::from_foreign).
fn subset(parameters: &Value) -> Result<std::borrow::Cow<'_, Value>, Problem> {
    if crate::schema::assert_supported(parameters).is_ok() {
        return Ok(std::borrow::Cow::Borrowed(parameters));
    }
    crate::schema::bridge::from_foreign(parameters)
        .map(std::borrow::Cow::Owned)
        .map_err(|e| Problem {
            path: "#".to_owned(),
            message: format!("the parameters schema cannot be read: {e}"),
        })
}

/// Exports one schema: the provider's parameters schema, the changes, and the restore plan.
fn export_schema(
    parameters: &Value,
    dialect: Dialect,
) -> Result<(Value, Vec<Change>, Plan), Vec<Problem>> {
    export_checked(parameters, dialect, false)
}

/// [`export_schema`]; `in_subset`: the schema is known to be in the subset (bridged).
pub(super) fn export_checked(
    parameters: &Value,
    dialect: Dialect,
    in_subset: bool,
) -> Result<(Value, Vec<Change>, Plan), Vec<Problem>> {
    let schema = if in_subset {
        std::borrow::Cow::Borrowed(parameters)
    } else {
        subset(parameters).map_err(|p| vec![p])?
    };
    let rules = dialect.rules();
    let mut transform = Transform::new(dialect, &rules);
    let (out, plan) = transform.root(&schema);
    // User values (`default`, `examples`, `const`) may nest as deep as the file allows: the
    // copies are freed without recursion.
    if let std::borrow::Cow::Owned(copy) = schema {
        crate::json::free(copy);
    }
    if transform.problems.is_empty() {
        Ok((out, transform.changes, plan))
    } else {
        crate::json::free(out);
        Err(transform.problems)
    }
}

/// What `schema` would lose or be refused in `dialect`, per path: every problem (the export
/// fails) and every change that tells the model less than the schema says (moved into the
/// description, loosened, dropped). Exact rewrites and the strict closure (undone when the
/// arguments come back) are not issues.
///
/// ```
/// use dsh_tools::provider::{Dialect, Provider, lint};
/// use serde_json::json;
///
/// let schema = json!({"type": "object", "properties": {
///     "name": {"type": "string", "minLength": 1}}, "required": ["name"]});
/// let issues = lint(&schema, Dialect::strict(Provider::Anthropic));
/// assert_eq!(issues[0].path, "#/properties/name");
/// assert!(issues[0].message.contains("minLength"));
/// assert!(lint(&schema, Dialect::new(Provider::OpenAiChat)).is_empty());
/// ```
pub fn lint(schema: &Value, dialect: Dialect) -> Vec<Problem> {
    match export_schema(schema, dialect) {
        Err(problems) => problems,
        Ok((exported, changes, _)) => {
            crate::json::free(exported);
            changes
                .into_iter()
                .filter(|c| !matches!(c.kind, ChangeKind::Rewritten | ChangeKind::Closed))
                .map(|c| Problem {
                    path: c.path,
                    message: c.message,
                })
                .collect()
        }
    }
}

/// Exports one parameters schema to `dialect` (the CLI's `provider export`): the parameters as
/// the provider sees them and the changes made.
pub fn export_parameters(
    parameters: &Value,
    dialect: Dialect,
) -> Result<(Value, Vec<Change>), Vec<Problem>> {
    export_schema(parameters, dialect).map(|(schema, changes, _)| (schema, changes))
}

/// The provider's tool entry for one raw tool (the CLI's `provider export`).
pub fn export_tool(
    name: &str,
    description: &str,
    parameters: &Value,
    dialect: Dialect,
) -> Result<Value, Vec<Problem>> {
    let rule = dialect.rules().name;
    if !rule.allows(name) {
        return Err(vec![Problem {
            path: "name".to_owned(),
            message: format!(
                "{name:?} is not a valid {} tool name (ASCII letters, digits and {:?}, at most {} characters); for example {:?}",
                dialect.provider().id(),
                rule.extra,
                rule.max,
                rule.fit(name)
            ),
        }]);
    }
    let (schema, _) = export_parameters(parameters, dialect)?;
    Ok(entry(dialect, name, description, schema))
}

/// Maps `arguments` produced under `parameters`' export to `dialect` back to ours (the CLI's
/// `provider restore`).
pub fn restore_arguments(
    parameters: &Value,
    dialect: Dialect,
    arguments: &mut Value,
) -> Result<(), Vec<Problem>> {
    let (exported, _, plan) = export_schema(parameters, dialect)?;
    crate::json::free(exported);
    restore::restore(arguments, &plan, 0);
    Ok(())
}

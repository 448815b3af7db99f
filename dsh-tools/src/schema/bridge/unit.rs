//! serde's adjacently tagged unit variants: found where schemars leaves them open, and closed
//! (`additionalProperties: false`), since serde rejects content beside them.

use crate::schema::keywords::{
    COMMENT, DEFAULT, DEFS, DEPRECATED, DESCRIPTION, EXAMPLES, ONE_OF, PROPERTIES, REQUIRED,
    SCHEMA, TITLE, TYPE,
};
use serde_json::{Map, Value};

/// Where schemars left the unit variant of a serde tagged enum open: `(the $defs entry or None
/// for the root, the oneOf branch)`.
///
/// In a type whose schema is only a `oneOf` of objects told apart by one required constant
/// property (`#[serde(tag = "t")]`, with or without `content`), a branch that declares no
/// property but the tag (and takes none from `$ref` or `allOf`) is a unit variant. schemars leaves
/// it open, so `{"t": "Off", "c": 5}` validated and then failed to decode: serde reads an
/// adjacently tagged unit variant's content only when absent or null, and the tag alone is all a
/// unit variant means in either form. [`from_schemars`] closes them (`additionalProperties:
/// false`). Only the enum's own schema (the root or a `$defs` entry) is looked at: flattened into
/// a struct, its branches stand beside the struct's properties.
pub(super) fn open_unit_variants(root: &Value) -> Vec<(Option<String>, usize)> {
    let mut out: Vec<(Option<String>, usize)> = Vec::new();
    let Some(root) = root.as_object() else {
        return out;
    };
    out.extend(unit_branches(root).into_iter().map(|i| (None, i)));
    if let Some(Value::Object(defs)) = root.get("$defs") {
        for (name, def) in defs {
            if let Value::Object(def) = def {
                out.extend(
                    unit_branches(def)
                        .into_iter()
                        .map(|i| (Some(name.clone()), i)),
                );
            }
        }
    }
    out
}

/// Closes the branches [`open_unit_variants`] found.
pub(super) fn close_unit_variants(root: &mut Value, open: &[(Option<String>, usize)]) {
    for (def, index) in open {
        let schema = match def {
            None => Some(&mut *root),
            Some(name) => root.get_mut("$defs").and_then(|d| d.get_mut(name)),
        };
        if let Some(Value::Object(branch)) = schema
            .and_then(|s| s.get_mut("oneOf"))
            .and_then(|b| b.get_mut(*index))
        {
            branch
                .entry("additionalProperties")
                .or_insert(Value::Bool(false));
        }
    }
}

fn unit_branches(schema: &Map<String, Value>) -> Vec<usize> {
    // What a type that is only a `oneOf` may have beside it.
    const ANNOTATIONS: [&str; 9] = [
        ONE_OF,
        DEFS,
        TITLE,
        DESCRIPTION,
        COMMENT,
        DEFAULT,
        EXAMPLES,
        DEPRECATED,
        SCHEMA,
    ];
    // What a unit variant's branch may have: the properties it declares are all it has.
    const UNIT_KEYS: [&str; 8] = [
        TYPE,
        PROPERTIES,
        REQUIRED,
        TITLE,
        DESCRIPTION,
        COMMENT,
        DEPRECATED,
        EXAMPLES,
    ];
    if schema.keys().any(|k| !ANNOTATIONS.contains(&k.as_str())) {
        return Vec::new();
    }
    let Some(Value::Array(branches)) = schema.get("oneOf") else {
        return Vec::new();
    };
    // The tags each branch could be told apart by: required properties with one constant value.
    let tags = |branch: &Value| -> Option<Vec<String>> {
        let branch = branch.as_object()?;
        let properties = branch.get("properties")?.as_object()?;
        let required = branch.get("required")?.as_array()?;
        Some(
            required
                .iter()
                .filter_map(Value::as_str)
                .filter(|name| {
                    properties.get(*name).is_some_and(|p| {
                        p.get("const").is_some()
                            || p.get("enum")
                                .and_then(Value::as_array)
                                .is_some_and(|e| e.len() == 1)
                    })
                })
                .map(str::to_owned)
                .collect(),
        )
    };
    let Some(mut common) = branches.first().and_then(tags) else {
        return Vec::new();
    };
    for branch in &branches[1..] {
        let Some(own) = tags(branch) else {
            return Vec::new();
        };
        common.retain(|t| own.contains(t));
    }
    let Some(tag) = common.first() else {
        return Vec::new();
    };
    // Only serde's adjacent tagging (`tag` + `content`) refuses content beside a unit variant:
    // every other branch is exactly `{tag, content}`, with one content key throughout. An
    // internally tagged unit variant ignores extra keys, and its branch looks the same as a
    // newtype variant around `serde_json::Value` (whose keys are the value's), so those stay open.
    let properties = |b: &Value| b.get("properties").and_then(Value::as_object).cloned();
    let mut content_key: Option<String> = None;
    let mut adjacent = false;
    for branch in branches {
        let Some(props) = properties(branch) else {
            return Vec::new();
        };
        if props.len() == 1 && props.contains_key(tag) {
            continue;
        }
        let required: Vec<&str> = branch
            .get("required")
            .and_then(Value::as_array)
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let others: Vec<&String> = props.keys().filter(|k| *k != tag).collect();
        let [content] = others.as_slice() else {
            return Vec::new();
        };
        if !required.contains(&content.as_str())
            || content_key.get_or_insert_with(|| (*content).clone()) != *content
        {
            return Vec::new();
        }
        adjacent = true;
    }
    if !adjacent {
        return Vec::new();
    }
    branches
        .iter()
        .enumerate()
        .filter(|(_, branch)| {
            branch.as_object().is_some_and(|b| {
                !b.contains_key("additionalProperties")
                    && b.keys().all(|k| UNIT_KEYS.contains(&k.as_str()))
                    && b.get("properties")
                        .and_then(Value::as_object)
                        .is_some_and(|p| p.len() == 1 && p.contains_key(tag))
            })
        })
        .map(|(i, _)| i)
        .collect()
}

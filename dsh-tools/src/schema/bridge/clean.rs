//! Cleaning a foreign schema: the annotation-only keywords removed from every schema position.

use crate::schema::keywords::{FORMAT, ID, NOTES, SCHEMA_MAPS, SUBSCHEMAS};
use serde_json::Value;

/// Removes annotation-only keywords from every schema position of `schema`, iteratively.
pub(super) fn strip_annotations(schema: &mut Value) {
    // The root's `$id` names the document; local `$ref`s resolve the same without it.
    if let Value::Object(root) = schema
        && let Some(id) = root.shift_remove(ID)
    {
        crate::json::drop_deep(id);
    }
    let mut stack = vec![schema];
    while let Some(node) = stack.pop() {
        let Value::Object(map) = node else { continue };
        let annotations: Vec<String> = map
            .keys()
            .filter(|key| key.starts_with("x-") || *key == FORMAT || NOTES.contains(&key.as_str()))
            .cloned()
            .collect();
        for key in annotations {
            // An `x-*` value may be arbitrarily deep: freed without recursion.
            if let Some(value) = map.shift_remove(&key) {
                crate::json::drop_deep(value);
            }
        }
        for (key, child) in map.iter_mut() {
            if SCHEMA_MAPS.contains(&key.as_str()) {
                if let Value::Object(children) = child {
                    stack.extend(children.values_mut());
                }
            } else if SUBSCHEMAS.contains(&key.as_str()) {
                match child {
                    Value::Array(items) => stack.extend(items.iter_mut()),
                    other => stack.push(other),
                }
            }
        }
    }
}

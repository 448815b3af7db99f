//! The schema transform: a subset schema into a dialect's, every change reported, plus the plan
//! that maps arguments produced under the exported schema back to ours.

use super::dialect::{Dialect, MAX_EXPORT_DEPTH, Nullable, Rules};
use super::restore::{Branch, Plan, PropPlan};
use crate::json::{clone_deep, to_compact_string};
use crate::schema::disjoint::branches_disjoint;
use crate::schema::keywords::{
    ADDITIONAL_PROPERTIES, ANNOTATIONS, CONST, DESCRIPTION, ENUM, ITEMS, PROPERTIES, REQUIRED, TYPE,
};
use serde_json::{Map, Value, json};
use std::collections::HashSet;

/// What happened to one part of a schema on its way to a dialect.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Change {
    /// The JSON-pointer path in the original schema (`#/properties/offset`).
    pub path: String,
    /// What kind of change.
    pub kind: ChangeKind,
    /// What was done, for a person.
    pub message: String,
}

/// How a change affects what the model is told.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ChangeKind {
    /// The same constraint, spelled the dialect's way (`const` → one-value `enum`).
    Rewritten,
    /// A constraint the grammar cannot carry: stated in the description instead, and still
    /// enforced by our validator when the call arrives.
    MovedToDescription,
    /// The model-facing schema accepts more than ours (`oneOf` → `anyOf`); our validator still
    /// checks the original.
    Loosened,
    /// Strict closure: every property required (optional ones made nullable; a `null` is
    /// mapped back to "absent"), no additional properties.
    Closed,
    /// An annotation the dialect does not take was dropped.
    Dropped,
}

/// Something a dialect cannot express: where, and how to fix it.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Problem {
    /// The JSON-pointer path in the original schema.
    pub path: String,
    /// What cannot be expressed, and the fix.
    pub message: String,
}

pub(crate) struct Transform<'a> {
    dialect: Dialect,
    rules: &'a Rules,
    pub(crate) changes: Vec<Change>,
    pub(crate) problems: Vec<Problem>,
    properties: usize,
    enum_values: usize,
}

impl<'a> Transform<'a> {
    pub(crate) fn new(dialect: Dialect, rules: &'a Rules) -> Self {
        Self {
            dialect,
            rules,
            changes: Vec::new(),
            problems: Vec::new(),
            properties: 0,
            enum_values: 0,
        }
    }

    fn change(&mut self, path: &str, kind: ChangeKind, message: impl Into<String>) {
        self.changes.push(Change {
            path: path.to_owned(),
            kind,
            message: message.into(),
        });
    }

    fn problem(&mut self, path: &str, message: impl Into<String>) {
        self.problems.push(Problem {
            path: path.to_owned(),
            message: message.into(),
        });
    }

    /// The parameters root.
    pub(crate) fn root(&mut self, schema: &Value) -> (Value, Plan) {
        let is_union = schema.get("oneOf").is_some() || schema.get("anyOf").is_some();
        if self.rules.union_root_forbidden && is_union {
            self.problem(
                "#",
                format!(
                    "{} does not accept a union (`oneOf`/`anyOf`) at the top of a tool's parameters \
                     (Anthropic fails the whole request); wrap it in a property of an object \
                     (`struct Args {{ action: Action }}`)",
                    self.dialect
                ),
            );
        } else if schema.get("type").and_then(Value::as_str) != Some("object") && !is_union {
            self.problem(
                "#",
                "a tool's parameters must be an object schema (`\"type\": \"object\"`)",
            );
        }
        let out = self.node(schema, "#", 0, 0);
        if let Some(max) = self.rules.max_properties
            && self.properties > max
        {
            self.problem(
                "#",
                format!(
                    "{} properties in all; {} allows {max} (split the tool)",
                    self.properties, self.dialect
                ),
            );
        }
        if let Some(max) = self.rules.max_enum_values
            && self.enum_values > max
        {
            self.problem(
                "#",
                format!(
                    "{} enum values in all; {} allows {max} (take a string and check it in the tool)",
                    self.enum_values, self.dialect
                ),
            );
        }
        out
    }

    /// One schema node at `path`, `depth` schemas and `objects` objects deep.
    fn node(&mut self, schema: &Value, path: &str, depth: usize, objects: usize) -> (Value, Plan) {
        if depth > MAX_EXPORT_DEPTH {
            self.problem(
                path,
                format!("schemas nested deeper than {MAX_EXPORT_DEPTH} levels are not exported"),
            );
            return (json!({}), Plan::Keep);
        }
        let Value::Object(map) = schema else {
            if self.rules.closure || self.rules.anthropic_strict_closure {
                self.problem(
                    path,
                    format!(
                        "a boolean schema (`{schema}`) cannot be expressed in {}: strict grammars \
                         need a `type` on every schema; give it a type, or use the non-strict \
                         dialect",
                        self.dialect
                    ),
                );
            }
            return (clone_deep(schema), Plan::Keep);
        };
        // Unions: `oneOf` (ours) is `anyOf` or kept; a `null` branch is spelled nullable.
        if let Some(Value::Array(branches)) = map.get("oneOf").or_else(|| map.get("anyOf")) {
            return self.union(map, branches, path, depth, objects);
        }
        let ty = map.get("type").and_then(Value::as_str);
        let strict = self.rules.closure || self.rules.anthropic_strict_closure;
        if strict && ty.is_none() && !map.contains_key("enum") && !map.contains_key("const") {
            self.problem(
                path,
                format!(
                    "a value of any type (a `serde_json::Value`) cannot be expressed in {}: strict \
                     grammars need a `type` on every schema; give it a type (a struct, or a string \
                     holding JSON), or use the non-strict dialect",
                    self.dialect
                ),
            );
        }
        let objects = objects + usize::from(ty == Some("object"));
        if let Some(max) = self.rules.max_depth
            && ty == Some("object")
            && objects > max
        {
            self.problem(
                path,
                format!(
                    "objects nested {objects} levels deep; {} allows {max} (flatten the arguments, \
                     or use the non-strict dialect)",
                    self.dialect
                ),
            );
        }
        let mut out = Map::new();
        let mut moved: Vec<String> = Vec::new();
        let mut plan = Plan::Keep;
        let mut additional_plan = None;
        for (key, value) in map {
            match key.as_str() {
                TYPE => {
                    let t = value.as_str().unwrap_or("object");
                    if self.rules.openapi_types {
                        if t == "null" {
                            self.problem(
                                path,
                                "a schema that only admits null cannot be expressed in gemini-openapi",
                            );
                        }
                        out.insert(key.clone(), Value::String(t.to_ascii_uppercase()));
                    } else {
                        out.insert(key.clone(), clone_deep(value));
                    }
                }
                PROPERTIES => {
                    let (props, p) = self.properties(map, value, path, depth, objects);
                    out.insert(key.clone(), props);
                    plan = p;
                }
                REQUIRED => {
                    if !self.rules.closure {
                        out.insert(key.clone(), clone_deep(value));
                    }
                }
                ADDITIONAL_PROPERTIES => {
                    additional_plan = self.additional(value, path, depth, objects, &mut out);
                }
                ITEMS => {
                    let (items, p) = self.node(value, &format!("{path}/items"), depth + 1, objects);
                    out.insert(key.clone(), items);
                    if !p.is_keep() {
                        plan = Plan::Array(Box::new(p));
                    }
                }
                ENUM => self.enumeration(key, value, ty, path, &mut out, &mut moved),
                CONST if self.rules.const_as_enum => {
                    self.change(path, ChangeKind::Rewritten, "`const` → a one-value `enum`");
                    let one = Value::Array(vec![clone_deep(value)]);
                    self.enumeration(ENUM, &one, ty, path, &mut out, &mut moved);
                }
                DESCRIPTION => {
                    out.insert(key.clone(), clone_deep(value));
                }
                // The other annotations: dropped where the grammar has no word for them.
                annotation if ANNOTATIONS.contains(&annotation) && !self.rules.keeps(key) => {
                    self.change(
                        path,
                        ChangeKind::Dropped,
                        format!("`{key}` dropped ({} does not take it)", self.dialect),
                    );
                }
                other if self.rules.keeps(other) => {
                    out.insert(key.clone(), clone_deep(value));
                }
                other => {
                    self.change(
                        path,
                        ChangeKind::MovedToDescription,
                        format!(
                            "`{other}` is not in {}'s grammar: stated in the description, still enforced",
                            self.dialect
                        ),
                    );
                    moved.push(format!("{other}: {}", to_compact_string(value)));
                }
            }
        }
        if let Some(additional) = additional_plan {
            plan = match plan {
                Plan::Object { props, .. } => Plan::Object {
                    props,
                    additional: Some(Box::new(additional)),
                },
                _ => Plan::Object {
                    props: Vec::new(),
                    additional: Some(Box::new(additional)),
                },
            };
        }
        if ty == Some("object") {
            self.close(map, path, &mut out);
        }
        if !moved.is_empty() {
            let note = format!("({})", moved.join(", "));
            let description = match out.get("description").and_then(Value::as_str) {
                Some(d) if !d.is_empty() => format!("{d} {note}"),
                _ => note,
            };
            out.insert("description".to_owned(), Value::String(description));
        }
        (Value::Object(out), plan)
    }

    fn enumeration(
        &mut self,
        key: &str,
        value: &Value,
        ty: Option<&str>,
        path: &str,
        out: &mut Map<String, Value>,
        moved: &mut Vec<String>,
    ) {
        let members = value.as_array().map_or(0, Vec::len);
        self.enum_values += members;
        if self.rules.openapi_types && ty != Some("string") {
            self.change(
                path,
                ChangeKind::MovedToDescription,
                "gemini-openapi takes string enums only: the values are stated in the description, still enforced",
            );
            moved.push(format!("one of: {}", to_compact_string(value)));
            return;
        }
        out.insert(key.to_owned(), clone_deep(value));
        if self.rules.openapi_types {
            out.insert("format".to_owned(), Value::String("enum".to_owned()));
        }
    }

    /// `additionalProperties`: kept, closed, or (a map's value schema) a problem where the
    /// dialect cannot express it. The plan for the map's values, if any.
    fn additional(
        &mut self,
        value: &Value,
        path: &str,
        depth: usize,
        objects: usize,
        out: &mut Map<String, Value>,
    ) -> Option<Plan> {
        if value.is_object() {
            if self.rules.no_additional_schema {
                self.problem(
                    path,
                    format!(
                        "a map (schema-valued `additionalProperties`) cannot be expressed in {}; \
                         take a list of {{key, value}} objects, or use {}",
                        self.dialect,
                        if self.dialect.is_strict() {
                            "the non-strict dialect"
                        } else {
                            "the `gemini` dialect (`parametersJsonSchema`)"
                        }
                    ),
                );
                return None;
            }
            let (schema, plan) = self.node(
                value,
                &format!("{path}/additionalProperties"),
                depth + 1,
                objects,
            );
            out.insert("additionalProperties".to_owned(), schema);
            return (!plan.is_keep()).then_some(plan);
        }
        if self.rules.drop_additional_properties {
            if value == &Value::Bool(false) {
                self.change(
                    path,
                    ChangeKind::Loosened,
                    "`additionalProperties: false` dropped (gemini-openapi rejects the keyword); unknown properties are still rejected",
                );
            }
            return None;
        }
        out.insert("additionalProperties".to_owned(), clone_deep(value));
        None
    }

    /// Strict closure of an object node.
    fn close(&mut self, original: &Map<String, Value>, path: &str, out: &mut Map<String, Value>) {
        let closes = self.rules.closure || self.rules.anthropic_strict_closure;
        if !closes {
            return;
        }
        let open = !matches!(
            original.get("additionalProperties"),
            Some(Value::Bool(false))
        );
        let map_valued = original
            .get("additionalProperties")
            .is_some_and(Value::is_object);
        if open && !map_valued {
            out.insert("additionalProperties".to_owned(), Value::Bool(false));
            self.change(
                path,
                ChangeKind::Closed,
                "`additionalProperties: false` added (strict mode requires it)",
            );
        }
        if self.rules.closure {
            let names: Vec<Value> = original
                .get("properties")
                .and_then(Value::as_object)
                .map(|p| p.keys().map(|k| Value::String(k.clone())).collect())
                .unwrap_or_default();
            out.insert("required".to_owned(), Value::Array(names));
        }
    }

    fn properties(
        &mut self,
        object: &Map<String, Value>,
        value: &Value,
        path: &str,
        depth: usize,
        objects: usize,
    ) -> (Value, Plan) {
        let Value::Object(props) = value else {
            return (clone_deep(value), Plan::Keep);
        };
        // A set: `required` may list 100,000 names.
        let required: HashSet<&str> = object
            .get("required")
            .and_then(Value::as_array)
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let mut out = Map::new();
        let mut plans = Vec::new();
        for (name, schema) in props {
            self.properties += 1;
            let at = format!("{path}/properties/{}", escape(name));
            let (mut exported, plan) = self.node(schema, &at, depth + 1, objects);
            let mut null_means_absent = false;
            if self.rules.closure && !required.contains(name.as_str()) {
                if admits_null(schema) {
                    self.change(
                        &at,
                        ChangeKind::Closed,
                        "optional and nullable: now required (send null for none)",
                    );
                } else {
                    exported = self.nullable(exported);
                    null_means_absent = true;
                    self.change(
                        &at,
                        ChangeKind::Closed,
                        "optional: now required and nullable (a null is read as absent)",
                    );
                }
            }
            if null_means_absent || !plan.is_keep() {
                plans.push(PropPlan {
                    name: name.clone(),
                    null_means_absent,
                    plan,
                });
            }
            out.insert(name.clone(), exported);
        }
        let plan = if plans.is_empty() {
            Plan::Keep
        } else {
            Plan::Object {
                props: plans,
                additional: None,
            }
        };
        (Value::Object(out), plan)
    }

    /// `schema` made to admit null, in the dialect's spelling.
    fn nullable(&self, schema: Value) -> Value {
        match self.rules.nullable {
            Nullable::Flag => {
                let mut schema = schema;
                if let Value::Object(m) = &mut schema {
                    m.insert("nullable".to_owned(), Value::Bool(true));
                }
                schema
            }
            Nullable::AnyOf => json!({"anyOf": [schema, {"type": "null"}]}),
        }
    }

    fn union(
        &mut self,
        map: &Map<String, Value>,
        branches: &[Value],
        path: &str,
        depth: usize,
        objects: usize,
    ) -> (Value, Plan) {
        let keyword = if map.contains_key("oneOf") {
            "oneOf"
        } else {
            "anyOf"
        };
        let is_null = |b: &Value| b.get("type").and_then(Value::as_str) == Some("null");
        let non_null: Vec<(usize, &Value)> = branches
            .iter()
            .enumerate()
            .filter(|(_, b)| !is_null(b))
            .collect();
        let has_null = non_null.len() < branches.len();
        let annotations: Map<String, Value> = map
            .iter()
            .filter(|(k, _)| k.as_str() != "oneOf" && k.as_str() != "anyOf")
            .map(|(k, v)| (k.clone(), clone_deep(v)))
            .collect();
        // Gemini `parameters`: `T` or null is `T` with `nullable: true`.
        if self.rules.nullable == Nullable::Flag && has_null && non_null.len() == 1 {
            let (i, branch) = non_null[0];
            let (mut out, plan) =
                self.node(branch, &format!("{path}/{keyword}/{i}"), depth + 1, objects);
            if let Value::Object(m) = &mut out {
                m.insert("nullable".to_owned(), Value::Bool(true));
                for (k, v) in annotations {
                    if k == "description" || self.rules.keeps(&k) {
                        m.insert(k, v);
                    }
                }
            }
            self.change(
                path,
                ChangeKind::Rewritten,
                "`T` or null → `nullable: true`",
            );
            let plan = if plan.is_keep() {
                Plan::Keep
            } else {
                Plan::Union(vec![Branch::new(branch, plan)])
            };
            return (out, plan);
        }
        let target = if keyword == "oneOf" && self.rules.one_of_as_any_of {
            // The schema prover's one-pass proof (`schema::disjoint`, the bridge's too): linear
            // in the schema, `false` when not shown, which only reports the change as loosened.
            if branches_disjoint(branches) {
                self.change(
                    path,
                    ChangeKind::Rewritten,
                    "`oneOf` → `anyOf` (the branches are disjoint: the same values)",
                );
            } else {
                self.change(
                    path,
                    ChangeKind::Loosened,
                    "`oneOf` → `anyOf` (exactly-one is still checked by our validator)",
                );
            }
            "anyOf"
        } else {
            keyword
        };
        let mut out_branches = Vec::new();
        let mut plans = Vec::new();
        let mut any_plan = false;
        for (i, branch) in branches.iter().enumerate() {
            if is_null(branch) && self.rules.nullable == Nullable::Flag {
                // A null branch beside several others: the flag on the union.
                continue;
            }
            let (out, plan) =
                self.node(branch, &format!("{path}/{keyword}/{i}"), depth + 1, objects);
            any_plan |= !plan.is_keep();
            plans.push((branch, plan));
            out_branches.push(out);
        }
        let mut out = Map::new();
        for (k, v) in annotations {
            if k == "description" || self.rules.keeps(&k) {
                out.insert(k, v);
            }
        }
        out.insert(target.to_owned(), Value::Array(out_branches));
        if has_null && self.rules.nullable == Nullable::Flag {
            out.insert("nullable".to_owned(), Value::Bool(true));
        }
        // Branch validators are compiled only when a branch has something to restore.
        let plan = if any_plan {
            Plan::Union(plans.into_iter().map(|(b, p)| Branch::new(b, p)).collect())
        } else {
            Plan::Keep
        };
        (Value::Object(out), plan)
    }
}

/// Whether a subset schema admits `null`.
fn admits_null(schema: &Value) -> bool {
    match schema {
        Value::Bool(b) => *b,
        Value::Object(m) => {
            if let Some(Value::Array(branches)) = m.get("oneOf").or_else(|| m.get("anyOf")) {
                return branches.iter().any(admits_null);
            }
            if let Some(t) = m.get("type").and_then(Value::as_str) {
                return t == "null";
            }
            if let Some(members) = m.get("enum").and_then(Value::as_array) {
                return members.contains(&Value::Null);
            }
            m.get("const").is_none_or(Value::is_null)
        }
        _ => false,
    }
}

/// A property name as a JSON-pointer segment.
fn escape(name: &str) -> String {
    name.replace('~', "~0").replace('/', "~1")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn disjointness_is_shown_by_type_and_by_one_tag() {
        let tagged = |k: &str| {
            json!({"type": "object", "properties": {"kind": {"const": k}, "x": {"type": "string"}},
                   "required": ["kind"]})
        };
        assert!(branches_disjoint(&[
            json!({"type": "string"}),
            json!({"type": "integer"})
        ]));
        assert!(!branches_disjoint(&[
            json!({"type": "integer"}),
            json!({"type": "number"})
        ]));
        assert!(branches_disjoint(&[
            tagged("a"),
            tagged("b"),
            json!({"type": "string"})
        ]));
        assert!(!branches_disjoint(&[tagged("a"), tagged("a")]));
        // 1 and 1.0 are the same value.
        let n = |v: Value| json!({"type": "object", "properties": {"k": {"const": v}}, "required": ["k"]});
        assert!(!branches_disjoint(&[n(json!(1)), n(json!(1.0))]));
        // The tag must be required by every branch.
        let untagged = json!({"type": "object", "properties": {"kind": {"const": "c"}}});
        assert!(!branches_disjoint(&[tagged("a"), untagged]));
    }
}

//! The shape comparison: whether the schema generated code decides is the type's bridged schema,
//! keyword by keyword, annotations and notes aside.

use crate::schema::keywords::{ANNOTATIONS, NOTES};
use serde_json::{Map, Value};

/// Whether `shape` (what generated code decides) is `bridged` (what the schema says), keyword by
/// keyword, annotations aside, `required` as a set. `Err` names the first difference.
pub(crate) fn same_shape(bridged: &Value, shape: &Value) -> Result<(), String> {
    // Iterative: a bridged schema nests as deep as the node limit allows.
    let mut stack = vec![(bridged, shape, String::new())];
    while let Some((b, s, at)) = stack.pop() {
        let (Value::Object(b), Value::Object(s)) = (b, s) else {
            return Err(format!("at `{at}`: {b} is not {s}"));
        };
        let keys = |m: &Map<String, Value>| -> Vec<String> {
            let mut k: Vec<String> = m
                .iter()
                .filter(|(k, v)| {
                    let empty_required =
                        *k == "required" && v.as_array().is_some_and(Vec::is_empty);
                    // Keywords that describe and never decide: ignored on the bridged side.
                    let describes =
                        ANNOTATIONS.contains(&k.as_str()) || NOTES.contains(&k.as_str());
                    !(describes || empty_required)
                })
                .map(|(k, _)| k.clone())
                .collect();
            k.sort();
            k
        };
        let (bk, sk) = (keys(b), keys(s));
        if bk != sk {
            return Err(format!(
                "at `{at}`: the schema has keywords {bk:?}, the generated check {sk:?}"
            ));
        }
        for k in bk {
            let (bv, sv) = (&b[&k], &s[&k]);
            let here = format!("{at}/{k}");
            match k.as_str() {
                "properties" => {
                    let (Some(bp), Some(sp)) = (bv.as_object(), sv.as_object()) else {
                        return Err(format!("at `{here}`: not an object"));
                    };
                    if bp.len() != sp.len() {
                        return Err(format!(
                            "at `{here}`: the schema declares {} members, the generated check {}",
                            bp.len(),
                            sp.len()
                        ));
                    }
                    for (name, bs) in bp {
                        let Some(ss) = sp.get(name) else {
                            return Err(format!("at `{here}`: no generated check for \"{name}\""));
                        };
                        stack.push((bs, ss, format!("{here}/{name}")));
                    }
                }
                "items" | "additionalProperties" if bv.is_object() => {
                    stack.push((bv, sv, here));
                }
                "oneOf" => {
                    let (Some(bb), Some(sb)) = (bv.as_array(), sv.as_array()) else {
                        return Err(format!("at `{here}`: not an array"));
                    };
                    if bb.len() != sb.len() {
                        return Err(format!(
                            "at `{here}`: {} branches, the generated check has {}",
                            bb.len(),
                            sb.len()
                        ));
                    }
                    for (i, (x, y)) in bb.iter().zip(sb).enumerate() {
                        stack.push((x, y, format!("{here}/{i}")));
                    }
                }
                "required" => {
                    let set = |v: &Value| -> Option<Vec<String>> {
                        let mut names: Vec<String> = v
                            .as_array()?
                            .iter()
                            .map(|n| n.as_str().map(str::to_owned))
                            .collect::<Option<_>>()?;
                        names.sort();
                        names.dedup();
                        Some(names)
                    };
                    if set(bv).is_none() || set(bv) != set(sv) {
                        return Err(format!("at `{here}`: {bv} is not {sv}"));
                    }
                }
                // `type`, `enum`, `const`, bounds, `additionalProperties: false`: equal JSON.
                _ => {
                    if bv != sv {
                        return Err(format!("at `{here}`: {bv} is not {sv}"));
                    }
                }
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::same_shape;
    use serde_json::json;

    fn object() -> serde_json::Value {
        json!({
            "type": "object",
            "properties": {
                "a": {"type": "string", "enum": ["x", "y"]},
                "b": {"oneOf": [{"type": "integer", "minimum": 0, "maximum": 255}, {"type": "null"}]}
            },
            "required": ["a"],
            "additionalProperties": false
        })
    }

    #[test]
    fn annotations_and_required_order_do_not_matter() {
        let mut bridged = object();
        bridged["description"] = json!("Reads.");
        bridged["properties"]["a"]["title"] = json!("A");
        bridged["properties"]["b"]["default"] = json!(null);
        bridged["required"] = json!(["a", "a"]);
        assert_eq!(same_shape(&bridged, &object()), Ok(()));
        // A member named like an annotation is a member, not an annotation.
        let mut named = object();
        named["properties"]["description"] = json!({"type": "string"});
        assert!(same_shape(&named, &object()).is_err());
    }

    #[test]
    fn every_deciding_difference_is_one() {
        type Change = fn(&mut serde_json::Value);
        let changes: [(&str, Change); 9] = [
            ("required", |s| s["required"] = json!(["a", "b"])),
            ("required empty", |s| s["required"] = json!([])),
            ("closedness", |s| {
                s.as_object_mut().unwrap().remove("additionalProperties");
            }),
            ("additionalProperties schema", |s| {
                s["additionalProperties"] = json!({"type": "string"})
            }),
            ("enum order", |s| {
                s["properties"]["a"]["enum"] = json!(["y", "x"])
            }),
            ("a bound", |s| {
                s["properties"]["b"]["oneOf"][0]["maximum"] = json!(256)
            }),
            ("oneOf branches", |s| {
                s["properties"]["b"]["oneOf"]
                    .as_array_mut()
                    .unwrap()
                    .push(json!({"type": "boolean"}))
            }),
            ("an extra keyword", |s| {
                s["properties"]["a"]["minLength"] = json!(1)
            }),
            ("a boolean schema", |s| s["properties"]["a"] = json!(true)),
        ];
        for (what, change) in changes {
            let mut bridged = object();
            change(&mut bridged);
            assert!(same_shape(&bridged, &object()).is_err(), "{what}");
            assert!(
                same_shape(&object(), &bridged).is_err(),
                "{what} (reversed)"
            );
        }
    }
}

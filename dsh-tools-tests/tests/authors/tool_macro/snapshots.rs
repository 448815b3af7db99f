//! The model-facing schema (and the output declaration) of every example tool, as JSON
//! snapshots: a change to what the macro or the bridge sends the model shows up in review.

use super::tools::*;
use dsh_tools::{Tool, ToolDefinition};
use serde_json::json;

fn facing(definition: &ToolDefinition) -> serde_json::Value {
    json!({
        "name": definition.name(),
        "description": definition.description(),
        "parameters": definition.parameters(),
        "output": definition.output().schema(),
    })
}

#[test]
fn read_file() {
    insta::assert_json_snapshot!(facing(&ReadFile.definition()));
}

#[test]
fn add() {
    insta::assert_json_snapshot!(facing(&Add.definition()));
}

#[test]
fn search() {
    insta::assert_json_snapshot!(facing(&Search.definition()));
}

#[test]
fn wait() {
    insta::assert_json_snapshot!(facing(&Wait.definition()));
}

#[test]
fn not_a_number() {
    insta::assert_json_snapshot!(facing(&NotANumber.definition()));
}

#[test]
fn cancelled() {
    insta::assert_json_snapshot!(facing(&Cancelled.definition()));
}

#[test]
fn write() {
    insta::assert_json_snapshot!(facing(&Write.definition()));
}

#[test]
fn measure() {
    insta::assert_json_snapshot!(facing(&Measure.definition()));
}

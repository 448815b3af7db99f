// inline parameters carry serde and schemars attributes; raw identifiers are property names
use dsh_tools::{tool, Tool, ToolError};

/// Finds things.
#[tool]
async fn find(
    /// what to look for
    r#type: String,
    /// how many results
    #[serde(default)]
    mut limit: u32,
    /// the label
    #[serde(rename = "label")]
    tag: Option<String>,
) -> Result<String, ToolError> {
    limit += 1;
    Ok(format!("{type} {limit} {tag:?}", type = r#type))
}

fn main() {
    let parameters = Find.definition().parameters().clone();
    assert!(parameters["properties"].get("type").is_some());
    assert!(parameters["properties"].get("label").is_some());
    assert_eq!(parameters["required"], serde_json::json!(["type"]));
}

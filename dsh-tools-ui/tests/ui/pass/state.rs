// state in both forms: the tool holds it and each call gets a clone
use dsh_tools::{tool, Registry, State, Tool, ToolError, ToolRunContext};
use schemars::JsonSchema;
use serde::Deserialize;
use std::sync::Arc;

#[derive(Clone)]
struct Db {
    rows: Arc<Vec<String>>,
}

#[derive(Deserialize, JsonSchema)]
struct Query {
    /// Row index
    index: usize,
}

/// Reads one row.
#[tool]
async fn row(State(db): State<Db>, q: Query, _ctx: ToolRunContext) -> Result<String, ToolError> {
    Ok(db.rows.get(q.index).cloned().unwrap_or_default())
}

/// Counts rows.
#[tool(struct_name = CountRows)]
async fn count(
    db: State<Db>,
    /// only rows longer than this
    longer_than: Option<usize>,
) -> Result<usize, ToolError> {
    Ok(db.rows.iter().filter(|r| r.len() > longer_than.unwrap_or(0)).count())
}

/// No arguments, only state.
#[tool]
async fn total(State(db): State<Db>) -> Result<usize, ToolError> {
    Ok(db.rows.len())
}

fn main() {
    let db = Db { rows: Arc::new(vec!["a".into()]) };
    let registry = Registry::new();
    registry.register(Row::with(db.clone())).unwrap().keep();
    registry.register(CountRows::with(db.clone())).unwrap().keep();
    let t = Total::with(db);
    let _copy = t.clone();
    println!("{t:?}");
    assert_eq!(t.name(), "total");
}

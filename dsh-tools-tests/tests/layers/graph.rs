//! The arrows as a graph: its cycles (strongly connected components of more than one file).

use crate::krate::Edges;
use std::collections::{BTreeMap, BTreeSet};

/// The files reachable from `from` by one arrow or more.
fn reachable<'e>(edges: &'e Edges, from: &'e String) -> BTreeSet<&'e String> {
    let mut seen = BTreeSet::new();
    let mut todo = vec![from];
    while let Some(file) = todo.pop() {
        for next in edges.get(file).into_iter().flatten() {
            if seen.insert(next) {
                todo.push(next);
            }
        }
    }
    seen
}

/// The sets of files that reach each other, of two files or more, each sorted.
pub(crate) fn cycles(edges: &Edges) -> Vec<Vec<String>> {
    let nodes: BTreeSet<&String> = edges.keys().chain(edges.values().flatten()).collect();
    let reach: BTreeMap<&String, BTreeSet<&String>> =
        nodes.iter().map(|&n| (n, reachable(edges, n))).collect();
    let mut placed = BTreeSet::new();
    let mut found = Vec::new();
    for &node in &nodes {
        if placed.contains(node) || !reach[node].contains(node) {
            continue;
        }
        let component: Vec<String> = reach[node]
            .iter()
            .filter(|&&other| reach[other].contains(node))
            .map(|&other| other.clone())
            .collect();
        placed.extend(component.iter().cloned());
        found.push(component);
    }
    found
}

/// A cycle's arrows, each with the path that makes it.
pub(crate) fn describe(
    arrows: &BTreeMap<(String, String), String>,
    component: &[String],
) -> String {
    let mut out = format!("a cycle over {} files:", component.len());
    for ((a, b), path) in arrows {
        if component.contains(a) && component.contains(b) {
            out.push_str(&format!("\n  {a} -> {b}  ({path})"));
        }
    }
    out
}

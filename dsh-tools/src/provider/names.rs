//! The names a provider sees for our tools: a name a conversation already gave keeps its tool,
//! a name that fits the provider's rule is its own, and only names made to fit get suffixes.

use super::dialect;
use std::collections::{HashMap, HashSet};

/// Provider names for `tools` (our names): a name the conversation already gave keeps its
/// tool; a name that fits the provider's rule is its own; only names made to fit get numeric
/// suffixes, assigned in the order of our names (not of registration), and never a name the
/// conversation gave to another tool.
pub(super) fn provider_names(
    ours: &[&str],
    rule: &dialect::NameRule,
    given: &HashMap<String, String>,
) -> Vec<String> {
    let before: HashMap<&str, &str> = given
        .iter()
        .map(|(theirs, ours)| (ours.as_str(), theirs.as_str()))
        .collect();
    let mut names: Vec<Option<String>> = vec![None; ours.len()];
    let mut taken: HashSet<String> = given.keys().cloned().collect();
    for (i, name) in ours.iter().enumerate() {
        if let Some(theirs) = before.get(name) {
            names[i] = Some((*theirs).to_owned());
        }
    }
    for (i, name) in ours.iter().enumerate() {
        if names[i].is_none() && rule.allows(name) && taken.insert((*name).to_owned()) {
            names[i] = Some((*name).to_owned());
        }
    }
    let mut mapped: Vec<usize> = (0..ours.len()).filter(|&i| names[i].is_none()).collect();
    mapped.sort_by(|&a, &b| ours[a].cmp(ours[b]));
    for i in mapped {
        let fitted = rule.fit(ours[i]);
        let mut candidate = fitted.clone();
        let mut n = 2;
        while !taken.insert(candidate.clone()) {
            let suffix = format!("_{n}");
            let mut base = fitted.clone();
            base.truncate(rule.max - suffix.len());
            candidate = base + &suffix;
            n += 1;
        }
        names[i] = Some(candidate);
    }
    names.into_iter().map(Option::unwrap_or_default).collect()
}

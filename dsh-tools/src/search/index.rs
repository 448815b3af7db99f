//! The index: fielded BM25 (BM25F) over a tool's name, namespace, description and parameters,
//! updated one document at a time, with exact and prefix name matches ranked first.

use super::tokens::{name_key, terms};
use rustc_hash::FxHashMap;
use serde_json::Value;
use std::cmp::Ordering;
use std::collections::BTreeMap;
use std::hash::Hash;

/// The fields, in this order: name, namespace, description, parameters.
const FIELDS: usize = 4;
/// How much a term counts in each field.
const WEIGHTS: [f32; FIELDS] = [3.0, 1.5, 1.0, 0.6];
/// How much each field's length normalizes (BM25's `b`): names are short and even.
const LENGTH_NORM: [f32; FIELDS] = [0.3, 0.3, 0.75, 0.5];
/// BM25's term-frequency saturation.
const K1: f32 = 1.2;
/// Of a document's text, at most this many bytes per field are indexed.
const MAX_FIELD_BYTES: usize = 8 * 1024;
/// Of a name, a namespace or a property name, at most this many bytes are indexed or kept.
const MAX_NAME_BYTES: usize = 1024;
/// Of a query, at most this many bytes are read, and at most this many distinct terms scored.
pub const MAX_QUERY_BYTES: usize = 4 * 1024;
const MAX_QUERY_TERMS: usize = 32;
/// A query key this short matches names exactly only, not as a prefix.
const MIN_PREFIX: usize = 3;
/// Of a schema, the properties read for the parameters field (nested ones too, breadth first).
const MAX_PARAMETERS: usize = 64;

/// What the index reads of one tool.
#[derive(Clone, Copy, Debug)]
pub struct Document<'a> {
    /// The tool's name.
    pub name: &'a str,
    /// Its namespace (a group such as the server it was imported from), or `""`.
    pub namespace: &'a str,
    /// Its description.
    pub description: &'a str,
    /// Its parameters' JSON Schema: property names and their descriptions are indexed.
    pub parameters: &'a Value,
}

/// How a hit matched: its name exactly, its name as a prefix, or its words.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
#[non_exhaustive]
pub enum Match {
    /// By words only (ranked by score).
    Words,
    /// The query is the start of the name (`create_iss` → `create_issue`).
    Prefix,
    /// The query spells the name.
    Name,
}

impl Match {
    /// `name`, `prefix` or `words`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Name => "name",
            Self::Prefix => "prefix",
            Self::Words => "words",
        }
    }
}

/// One result: the document's key, how it matched, and its BM25F score.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct Hit<K> {
    /// The key the document was added under.
    pub key: K,
    /// How it matched.
    pub matched: Match,
    /// The BM25F score of its words (0 for a name match with no scoring word).
    pub score: f32,
}

#[derive(Clone, Copy)]
struct Posting {
    slot: u32,
    tf: [u16; FIELDS],
}

impl<K> Slot<K> {
    fn empty() -> Self {
        Self {
            key: None,
            name: "".into(),
            name_key: "".into(),
            lens: [0; FIELDS],
            terms: Box::new([]),
        }
    }
}

struct Slot<K> {
    /// `None` once removed (its postings are dropped at the next compaction).
    key: Option<K>,
    name: Box<str>,
    name_key: Box<str>,
    lens: [u32; FIELDS],
    /// The distinct terms, so a removal can lower their document frequency.
    terms: Box<[u32]>,
}

/// A search index over tool documents keyed by `K`.
///
/// Adding or removing one document costs its own terms, not the index's size; removed
/// documents leave postings behind that the next compaction (when they outnumber the live
/// ones) drops.
pub struct Index<K> {
    terms: FxHashMap<Box<str>, u32>,
    postings: Vec<Vec<Posting>>,
    /// Live documents per term.
    df: Vec<u32>,
    slots: Vec<Slot<K>>,
    free: Vec<u32>,
    by_key: FxHashMap<K, u32>,
    names: BTreeMap<Box<str>, Vec<u32>>,
    lengths: [u64; FIELDS],
    live: usize,
    dead: usize,
}

impl<K> Default for Index<K> {
    fn default() -> Self {
        Self {
            terms: FxHashMap::default(),
            postings: Vec::new(),
            df: Vec::new(),
            slots: Vec::new(),
            free: Vec::new(),
            by_key: FxHashMap::default(),
            names: BTreeMap::new(),
            lengths: [0; FIELDS],
            live: 0,
            dead: 0,
        }
    }
}

/// `text` cut to at most `max` bytes, at a character boundary.
pub(crate) fn clip(text: &str, max: usize) -> &str {
    if text.len() <= max {
        return text;
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

/// The parameters field: property names and descriptions, breadth first, bounded.
fn parameter_text(schema: &Value) -> String {
    let mut text = String::new();
    let mut queue = std::collections::VecDeque::from([schema]);
    let mut seen = 0;
    while let Some(node) = queue.pop_front() {
        let Some(properties) = node.get("properties").and_then(Value::as_object) else {
            continue;
        };
        for (name, property) in properties {
            if seen == MAX_PARAMETERS || text.len() >= MAX_FIELD_BYTES {
                return text;
            }
            seen += 1;
            text.push_str(clip(name, MAX_NAME_BYTES));
            text.push(' ');
            if let Some(description) = property.get("description").and_then(Value::as_str) {
                text.push_str(clip(description, 512));
                text.push(' ');
            }
            queue.push_back(property);
            if let Some(items) = property.get("items") {
                queue.push_back(items);
            }
        }
    }
    text
}

impl<K: Copy + Eq + Hash> Index<K> {
    /// An empty index.
    pub fn new() -> Self {
        Self::default()
    }

    /// How many documents it holds.
    pub fn len(&self) -> usize {
        self.live
    }

    /// Whether it holds none.
    pub fn is_empty(&self) -> bool {
        self.live == 0
    }

    /// Adds `document` under `key`, replacing what `key` held.
    pub fn insert(&mut self, key: K, document: Document<'_>) {
        self.remove(&key);
        let parameters = parameter_text(document.parameters);
        let fields = [
            clip(document.name, MAX_NAME_BYTES),
            clip(document.namespace, MAX_NAME_BYTES),
            clip(document.description, MAX_FIELD_BYTES),
            parameters.as_str(),
        ];
        let mut counts: FxHashMap<u32, [u16; FIELDS]> = FxHashMap::default();
        let mut lens = [0u32; FIELDS];
        for (field, text) in fields.iter().enumerate() {
            terms(text, |term| {
                lens[field] += 1;
                let id = self.term_id(term);
                let tf = &mut counts.entry(id).or_insert([0; FIELDS])[field];
                *tf = tf.saturating_add(1);
            });
        }
        let slot = match self.free.pop() {
            Some(slot) => slot,
            None => {
                self.slots.push(Slot::empty());
                (self.slots.len() - 1) as u32
            }
        };
        let mut ids: Vec<u32> = counts.keys().copied().collect();
        ids.sort_unstable();
        for &id in &ids {
            self.postings[id as usize].push(Posting {
                slot,
                tf: counts[&id],
            });
            self.df[id as usize] += 1;
        }
        for (total, len) in self.lengths.iter_mut().zip(lens) {
            *total += u64::from(len);
        }
        let key_text: Box<str> = name_key(clip(document.name, MAX_NAME_BYTES)).into();
        self.names.entry(key_text.clone()).or_default().push(slot);
        self.slots[slot as usize] = Slot {
            key: Some(key),
            name: clip(document.name, MAX_NAME_BYTES).into(),
            name_key: key_text,
            lens,
            terms: ids.into_boxed_slice(),
        };
        self.by_key.insert(key, slot);
        self.live += 1;
    }

    fn term_id(&mut self, term: &str) -> u32 {
        if let Some(&id) = self.terms.get(term) {
            return id;
        }
        let id = self.postings.len() as u32;
        self.terms.insert(term.into(), id);
        self.postings.push(Vec::new());
        self.df.push(0);
        id
    }

    /// Removes what `key` held; `false` if nothing.
    pub fn remove(&mut self, key: &K) -> bool {
        let Some(slot) = self.by_key.remove(key) else {
            return false;
        };
        let entry = &mut self.slots[slot as usize];
        entry.key = None;
        for &id in entry.terms.iter() {
            self.df[id as usize] -= 1;
        }
        for (total, len) in self.lengths.iter_mut().zip(entry.lens) {
            *total -= u64::from(len);
        }
        if let Some(slots) = self.names.get_mut(&entry.name_key) {
            slots.retain(|&s| s != slot);
            if slots.is_empty() {
                self.names.remove(&entry.name_key);
            }
        }
        self.live -= 1;
        self.dead += 1;
        if self.dead > 64 && self.dead > self.live {
            self.compact();
        }
        true
    }

    /// Drops removed documents' postings and unused terms; frees their slots.
    fn compact(&mut self) {
        let slots = &self.slots;
        let mut remap = vec![u32::MAX; self.postings.len()];
        let mut postings = Vec::new();
        let mut df = Vec::new();
        for (old, list) in std::mem::take(&mut self.postings).into_iter().enumerate() {
            let list: Vec<Posting> = list
                .into_iter()
                .filter(|p| slots[p.slot as usize].key.is_some())
                .collect();
            if !list.is_empty() {
                remap[old] = postings.len() as u32;
                df.push(list.len() as u32);
                postings.push(list);
            }
        }
        self.terms.retain(|_, id| {
            *id = remap[*id as usize];
            *id != u32::MAX
        });
        self.postings = postings;
        self.df = df;
        // Every dead slot is free now (its postings are gone): the list is rebuilt, so a slot
        // whose document had no terms and an empty name is freed too.
        self.free.clear();
        for (index, slot) in self.slots.iter_mut().enumerate() {
            if slot.key.is_some() {
                for id in slot.terms.iter_mut() {
                    *id = remap[*id as usize];
                }
            } else {
                *slot = Slot::empty();
                self.free.push(index as u32);
            }
        }
        self.dead = 0;
    }

    /// The documents matching `query`, best first, at most `limit`, keeping only those `keep`
    /// accepts: exact name matches, then name prefixes, then by BM25F score; ties by name.
    ///
    /// The cost is bounded whatever the query: it is read to [`MAX_QUERY_BYTES`], and its first
    /// 32 distinct terms are scored.
    pub fn search(
        &self,
        query: &str,
        limit: usize,
        mut keep: impl FnMut(&K) -> bool,
    ) -> Vec<Hit<K>> {
        if limit == 0 || self.live == 0 {
            return Vec::new();
        }
        let query = clip(query, MAX_QUERY_BYTES);
        let mut scores: FxHashMap<u32, (Match, f32)> = FxHashMap::default();
        let key = name_key(query);
        if let Some(slots) = self.names.get(key.as_str()) {
            for &slot in slots {
                scores.insert(slot, (Match::Name, 0.0));
            }
        }
        if key.len() >= MIN_PREFIX {
            for (name, slots) in self.names.range::<str, _>((
                std::ops::Bound::Excluded(key.as_str()),
                std::ops::Bound::Unbounded,
            )) {
                if !name.starts_with(key.as_str()) {
                    break;
                }
                for &slot in slots {
                    scores.insert(slot, (Match::Prefix, 0.0));
                }
            }
        }
        let mut seen: Vec<u32> = Vec::new();
        terms(query, |term| {
            if seen.len() < MAX_QUERY_TERMS
                && let Some(&id) = self.terms.get(term)
                && !seen.contains(&id)
            {
                seen.push(id);
            }
        });
        let live = self.live as f32;
        let avg: [f32; FIELDS] = std::array::from_fn(|f| self.lengths[f] as f32 / live);
        for id in seen {
            let df = self.df[id as usize] as f32;
            if df == 0.0 {
                continue;
            }
            let idf = (1.0 + (live - df + 0.5) / (df + 0.5)).ln();
            for posting in &self.postings[id as usize] {
                let slot = &self.slots[posting.slot as usize];
                if slot.key.is_none() {
                    continue;
                }
                let mut weighted = 0.0;
                for f in 0..FIELDS {
                    let tf = f32::from(posting.tf[f]);
                    if tf > 0.0 {
                        let norm = if avg[f] > 0.0 {
                            1.0 - LENGTH_NORM[f] + LENGTH_NORM[f] * slot.lens[f] as f32 / avg[f]
                        } else {
                            1.0
                        };
                        weighted += WEIGHTS[f] * tf / norm;
                    }
                }
                let score = idf * weighted / (K1 + weighted);
                scores.entry(posting.slot).or_insert((Match::Words, 0.0)).1 += score;
            }
        }
        let mut ranked: Vec<(u32, Match, f32)> =
            scores.into_iter().map(|(s, (m, v))| (s, m, v)).collect();
        let order = |a: &(u32, Match, f32), b: &(u32, Match, f32)| {
            b.1.cmp(&a.1)
                .then_with(|| b.2.partial_cmp(&a.2).unwrap_or(Ordering::Equal))
                .then_with(|| {
                    self.slots[a.0 as usize]
                        .name
                        .cmp(&self.slots[b.0 as usize].name)
                })
        };
        // Most candidates are never shown: order a head big enough to fill `limit` after
        // `keep` usually, and the rest only if it does not.
        // When `keep` turns most of the head down, the rest is sorted whole (one more pass,
        // never a pass per head: that would be quadratic in the candidates).
        let head = limit.saturating_mul(4).saturating_add(16);
        let mut hits = Vec::new();
        let mut start = 0;
        while start < ranked.len() && hits.len() < limit {
            let rest = &mut ranked[start..];
            let take = if start == 0 {
                head.min(rest.len())
            } else {
                rest.len()
            };
            if take < rest.len() {
                rest.select_nth_unstable_by(take - 1, order);
            }
            rest[..take].sort_unstable_by(order);
            for &(slot, matched, score) in &rest[..take] {
                let Some(key) = self.slots[slot as usize].key else {
                    continue;
                };
                if keep(&key) {
                    hits.push(Hit {
                        key,
                        matched,
                        score,
                    });
                    if hits.len() == limit {
                        break;
                    }
                }
            }
            start += take;
        }
        hits
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn doc<'a>(name: &'a str, description: &'a str, parameters: &'a Value) -> Document<'a> {
        Document {
            name,
            namespace: "",
            description,
            parameters,
        }
    }

    fn names(index: &Index<usize>, query: &str, all: &[&str]) -> Vec<String> {
        index
            .search(query, 10, |_| true)
            .into_iter()
            .map(|h| all[h.key].to_owned())
            .collect()
    }

    #[test]
    fn ranks_by_words_and_names_first() {
        let none = json!({});
        let tools = [
            ("read_file", "Read the contents of a file from disk"),
            ("write_file", "Write text to a file, replacing it"),
            ("list_directory", "List the entries of a directory"),
            ("create_issue", "Open a new issue in a GitHub repository"),
            ("create_issue_comment", "Comment on an issue"),
        ];
        let mut index = Index::new();
        for (i, (name, description)) in tools.iter().enumerate() {
            index.insert(i, doc(name, description, &none));
        }
        let all: Vec<&str> = tools.iter().map(|t| t.0).collect();
        assert_eq!(names(&index, "read files", &all)[0], "read_file");
        assert_eq!(
            names(&index, "entries in a folder directory", &all)[0],
            "list_directory"
        );
        let issue = names(&index, "create_issue", &all);
        assert_eq!(issue[..2], ["create_issue", "create_issue_comment"]);
        let hits = index.search("createIssue", 1, |_| true);
        assert_eq!((hits[0].key, hits[0].matched), (3, Match::Name));
        assert_eq!(
            index.search("create_iss", 5, |_| true)[0].matched,
            Match::Prefix
        );
        assert!(index.search("", 5, |_| true).is_empty());
        assert!(index.search("!!! ??? ...", 5, |_| true).is_empty());
        assert!(index.search("the of and", 5, |_| true).is_empty());
    }

    #[test]
    fn removal_and_keep_hide_documents() {
        let none = json!({});
        let mut index = Index::new();
        for i in 0..200usize {
            index.insert(i, doc(&format!("tool_{i}"), "fetch a web page", &none));
        }
        assert_eq!(index.search("web page", 500, |_| true).len(), 200);
        for i in 0..150 {
            assert!(index.remove(&i));
        }
        assert!(!index.remove(&0));
        assert_eq!(index.len(), 50);
        let hits = index.search("web page", 500, |_| true);
        assert_eq!(hits.len(), 50);
        assert!(hits.iter().all(|h| h.key >= 150));
        // Ties are broken by name, so identical descriptions rank the same way every time.
        let first: Vec<usize> = hits.iter().map(|h| h.key).collect();
        let mut sorted = first.clone();
        sorted.sort_by_key(|k| format!("tool_{k}"));
        assert_eq!(first, sorted);
        let odd = index.search("web page", 500, |k| k % 2 == 1);
        assert_eq!(odd.len(), 25);
        // Slots freed by compaction are reused without resurrecting old postings.
        for i in 1000..1100usize {
            index.insert(i, doc(&format!("other_{i}"), "send an email", &none));
        }
        assert_eq!(index.search("web page", 500, |_| true).len(), 50);
        assert_eq!(index.search("email", 500, |_| true).len(), 100);
    }

    #[test]
    fn parameters_and_namespace_count() {
        let params = json!({"type": "object", "properties": {
            "timezone": {"type": "string", "description": "IANA zone such as Europe/Paris"}}});
        let none = json!({});
        let mut index = Index::new();
        index.insert(0, doc("now", "Current time", &params));
        index.insert(
            1,
            Document {
                namespace: "slack",
                ..doc("post", "Send a message", &none)
            },
        );
        assert_eq!(index.search("timezone", 5, |_| true)[0].key, 0);
        assert_eq!(index.search("slack", 5, |_| true)[0].key, 1);
    }

    #[test]
    fn documents_without_terms_free_their_slots() {
        let none = json!({});
        let mut index = Index::new();
        for round in 0..5usize {
            for i in 0..100usize {
                index.insert(round * 1000 + i, doc("", "the of a", &none));
            }
            for i in 0..100usize {
                assert!(index.remove(&(round * 1000 + i)));
            }
        }
        // Compaction frees every dead slot, so rounds reuse them rather than grow.
        assert!(index.slots.len() <= 200, "{} slots", index.slots.len());
    }

    #[test]
    fn a_keep_that_refuses_most_still_finds_the_rest_in_order() {
        let none = json!({});
        let mut index = Index::new();
        for i in 0..2000usize {
            index.insert(i, doc(&format!("t{i:04}"), "shared words here", &none));
        }
        let hits = index.search("shared words", 3, |k| *k >= 1990);
        let keys: Vec<usize> = hits.iter().map(|h| h.key).collect();
        assert_eq!(keys, [1990, 1991, 1992]);
    }

    #[test]
    fn replacing_a_key_replaces_its_document() {
        let none = json!({});
        let mut index = Index::new();
        index.insert(7, doc("t", "alpha", &none));
        index.insert(7, doc("t", "beta", &none));
        assert_eq!(index.len(), 1);
        assert!(index.search("alpha", 5, |_| true).is_empty());
        assert_eq!(index.search("beta", 5, |_| true).len(), 1);
    }
}

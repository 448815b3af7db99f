//! The layering of `dsh-tools` and `dsh-tools-derive`, read from the source: no file-level
//! cycle, and no module importing one above it (DESIGN.md draws the same layers).
//!
//! An arrow runs from a file to the file that *defines* what it names: `use crate::a::B`,
//! `use super::B`, `use self::m::B` and paths written inline (`crate::a::f(..)`) are resolved
//! through `pub use` re-exports to the defining file. `mod` declarations are not arrows (a
//! parent declares its children), and test-only files (`tests.rs`, `#[cfg(test)] mod tests`
//! blocks) are left out.
//!
//! Run alone: `cargo test -p dsh-tools-tests --test layers`.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};

/// The top-level modules of `dsh-tools`, ground first. A module may import only its own rank
/// or lower. `lib`, `__private` and the CLI sit on top.
const LAYERS: &[&[&str]] = &[
    &["json"],
    &["schema"],
    &["error", "content", "search"],
    &["call", "typed", "present", "code"],
    &["definition", "run_code"],
    &["registry"],
    &["pipeline"],
    &["tool"],
    &["wrappers", "schedule", "workspace", "durable"],
    &["mcp", "provider", "acp", "testing"],
    &["lib", "__private", "bin"],
];

type Module = Vec<String>;

struct Crate {
    /// File (relative to `src/`) → its text with comments and tests removed.
    files: BTreeMap<String, String>,
    /// Module path → file.
    modules: HashMap<Module, String>,
    /// (module, name) → defining file.
    defs: HashMap<(Module, String), String>,
    /// (module, name) → the path it re-exports.
    reexports: HashMap<(Module, String), Module>,
    /// (module, name) re-exported from another crate: naming it is no arrow.
    external: BTreeSet<(Module, String)>,
    /// File → the absolute paths it names.
    uses: BTreeMap<String, Vec<Module>>,
}

fn module_of(rel: &str) -> Module {
    let stem = rel.trim_end_matches(".rs");
    let mut parts: Vec<String> = stem.split('/').map(str::to_owned).collect();
    if matches!(
        parts.last().map(String::as_str),
        Some("mod" | "lib" | "main")
    ) {
        parts.pop();
    }
    parts
}

/// The text without line comments and without a trailing `#[cfg(test)] mod tests` block.
fn clean(text: &str) -> String {
    let text = match text.find("#[cfg(test)]\nmod tests") {
        Some(i) => &text[..i],
        None => text,
    };
    text.lines()
        .map(|line| match line.find("//") {
            Some(i) if !line[..i].contains('"') => &line[..i],
            _ => line,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn is_ident(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// The names an item line defines (`pub(crate) async fn name`, `struct Name<..>`, …).
fn defined_name(line: &str) -> Option<String> {
    let mut rest = line.trim_start();
    for prefix in ["pub(crate) ", "pub(super) ", "pub "] {
        rest = rest.strip_prefix(prefix).unwrap_or(rest);
    }
    for prefix in ["const fn ", "async fn ", "unsafe fn "] {
        if let Some(r) = rest.strip_prefix(prefix) {
            let name: String = r.chars().take_while(|&c| is_ident(c)).collect();
            return (!name.is_empty()).then_some(name);
        }
    }
    for keyword in [
        "struct ", "enum ", "fn ", "trait ", "type ", "const ", "static ", "union ",
    ] {
        if let Some(r) = rest.strip_prefix(keyword) {
            let name: String = r.chars().take_while(|&c| is_ident(c)).collect();
            return (!name.is_empty()).then_some(name);
        }
    }
    rest.strip_prefix("macro_rules! ")
        .map(|r| r.chars().take_while(|&c| is_ident(c)).collect())
}

/// `a::{b, c::{d, e as f}}` as `[a, b]`, `[a, c, d]`, `[a, c, e]`.
fn expand(prefix: &[String], body: &str, out: &mut Vec<Module>) {
    let body = body.trim();
    if body.is_empty() {
        return;
    }
    if let Some(inner) = body.strip_prefix('{').and_then(|b| b.strip_suffix('}')) {
        let mut depth = 0;
        let mut start = 0;
        for (i, c) in inner.char_indices() {
            match c {
                '{' => depth += 1,
                '}' => depth -= 1,
                ',' if depth == 0 => {
                    expand(prefix, &inner[start..i], out);
                    start = i + 1;
                }
                _ => {}
            }
        }
        expand(prefix, &inner[start..], out);
        return;
    }
    if let Some(i) = body.find("::{") {
        let mut longer = prefix.to_vec();
        longer.extend(body[..i].split("::").map(|s| s.trim().to_owned()));
        expand(&longer, &body[i + 2..], out);
        return;
    }
    let mut path = prefix.to_vec();
    let segments: Vec<&str> = body.split("::").collect();
    for (i, segment) in segments.iter().enumerate() {
        let segment = segment.trim();
        let segment = if i + 1 == segments.len() {
            segment.split(" as ").next().unwrap_or(segment).trim()
        } else {
            segment
        };
        path.push(segment.to_owned());
    }
    out.push(path);
}

impl Crate {
    fn read(src: &Path) -> Self {
        let mut files = BTreeMap::new();
        let mut stack = vec![src.to_path_buf()];
        while let Some(dir) = stack.pop() {
            for entry in std::fs::read_dir(&dir).unwrap() {
                let path = entry.unwrap().path();
                if path.is_dir() {
                    stack.push(path);
                } else if path.extension().is_some_and(|e| e == "rs")
                    && path.file_name().is_some_and(|n| n != "tests.rs")
                {
                    let rel = path
                        .strip_prefix(src)
                        .unwrap()
                        .to_string_lossy()
                        .replace('\\', "/");
                    files.insert(rel, clean(&std::fs::read_to_string(&path).unwrap()));
                }
            }
        }
        let modules: HashMap<Module, String> = files
            .keys()
            .map(|rel| (module_of(rel), rel.clone()))
            .collect();
        let mut krate = Self {
            files,
            modules,
            defs: HashMap::new(),
            reexports: HashMap::new(),
            external: BTreeSet::new(),
            uses: BTreeMap::new(),
        };
        krate.scan();
        krate
    }

    fn scan(&mut self) {
        for (rel, text) in &self.files {
            let module = module_of(rel);
            for line in text.lines() {
                if let Some(name) = defined_name(line) {
                    self.defs.insert((module.clone(), name), rel.clone());
                }
            }
            let mut paths = Vec::new();
            // `use` statements (possibly over several lines).
            let mut rest = text.as_str();
            while let Some(i) = find_use(rest) {
                let (public, start) = i;
                let Some(end) = rest[start..].find(';') else {
                    break;
                };
                let body: String = rest[start..start + end]
                    .split_whitespace()
                    .collect::<Vec<_>>()
                    .join(" ");
                let mut expanded = Vec::new();
                expand(&[], &body, &mut expanded);
                for path in expanded {
                    let Some(absolute) = self.absolute(&module, &path) else {
                        if public && let Some(name) = path.last().filter(|n| *n != "*") {
                            self.external.insert((module.clone(), name.clone()));
                        }
                        continue;
                    };
                    if public && absolute.last().is_some_and(|n| n != "*") {
                        let name = absolute.last().unwrap().clone();
                        self.reexports
                            .insert((module.clone(), name), absolute.clone());
                    }
                    paths.push(absolute);
                }
                rest = &rest[start + end..];
            }
            // Inline `crate::a::b` paths.
            let mut at = 0;
            while let Some(i) = text[at..].find("crate::") {
                let start = at + i;
                let before = text[..start].chars().next_back();
                at = start + "crate::".len();
                if before.is_some_and(|c| is_ident(c) || c == ':') {
                    continue;
                }
                let tail: String = text[at..]
                    .chars()
                    .take_while(|&c| is_ident(c) || c == ':')
                    .collect();
                let path: Module = tail
                    .split("::")
                    .filter(|s| !s.is_empty())
                    .map(str::to_owned)
                    .collect();
                if !path.is_empty() {
                    paths.push(path);
                }
            }
            self.uses.insert(rel.clone(), paths);
        }
    }

    /// `path` as seen from `module`, absolute (`None` for another crate).
    fn absolute(&self, module: &Module, path: &[String]) -> Option<Module> {
        let first = path.first()?;
        match first.as_str() {
            "crate" => Some(path[1..].to_vec()),
            "self" => Some(module.iter().chain(&path[1..]).cloned().collect()),
            "super" => {
                let mut base = module.clone();
                let mut rest = path;
                while rest.first().is_some_and(|s| s == "super") {
                    base.pop();
                    rest = &rest[1..];
                }
                Some(base.into_iter().chain(rest.iter().cloned()).collect())
            }
            name => {
                let mut child = module.clone();
                child.push(name.to_owned());
                self.modules
                    .contains_key(&child)
                    .then(|| module.iter().chain(path).cloned().collect())
            }
        }
    }

    /// The file that defines what `path` names.
    fn resolve(&self, path: &[String], hops: usize) -> Option<String> {
        let path: Vec<String> = path.iter().filter(|s| *s != "*").cloned().collect();
        for k in (0..=path.len()).rev() {
            let module = path[..k].to_vec();
            let Some(file) = self.modules.get(&module) else {
                continue;
            };
            let Some(name) = path.get(k) else {
                return Some(file.clone());
            };
            if let Some(defining) = self.defs.get(&(module.clone(), name.clone())) {
                return Some(defining.clone());
            }
            if self.external.contains(&(module.clone(), name.clone())) {
                return None;
            }
            if let Some(target) = self.reexports.get(&(module.clone(), name.clone()))
                && hops < 16
                && target.as_slice() != path.as_slice()
            {
                return self
                    .resolve(target, hops + 1)
                    .or_else(|| Some(file.clone()));
            }
            return Some(file.clone());
        }
        None
    }

    fn edges(&self) -> BTreeMap<String, BTreeSet<String>> {
        let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        for (file, paths) in &self.uses {
            for path in paths {
                if let Some(target) = self.resolve(path, 0)
                    && &target != file
                {
                    edges.entry(file.clone()).or_default().insert(target);
                }
            }
        }
        edges
    }
}

/// The next `use` statement in `text`: whether it is `pub` (any visibility), and where its path
/// starts.
fn find_use(text: &str) -> Option<(bool, usize)> {
    let mut offset = 0;
    for line in text.split_inclusive('\n') {
        let trimmed = line.trim_start();
        let indent = line.len() - trimmed.len();
        let mut rest = trimmed;
        let mut public = false;
        // Any visibility re-exports, to the crate or the parent at least.
        for prefix in ["pub(crate) ", "pub(super) ", "pub "] {
            if let Some(r) = rest.strip_prefix(prefix) {
                rest = r;
                public = true;
                break;
            }
        }
        if let Some(r) = rest.strip_prefix("use ") {
            let start = offset + indent + (trimmed.len() - r.len());
            return Some((public, start));
        }
        offset += line.len();
    }
    None
}

/// Strongly connected components of more than one file (Tarjan, iterative).
fn cycles(edges: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    let nodes: BTreeSet<&String> = edges.keys().chain(edges.values().flatten()).collect();
    let mut index: HashMap<&String, usize> = HashMap::new();
    let mut low: HashMap<&String, usize> = HashMap::new();
    let mut on_stack = BTreeSet::new();
    let mut stack: Vec<&String> = Vec::new();
    let mut found = Vec::new();
    let mut next = 0;
    let empty = BTreeSet::new();
    for &root in &nodes {
        if index.contains_key(root) {
            continue;
        }
        let mut work: Vec<(&String, Vec<&String>)> = Vec::new();
        index.insert(root, next);
        low.insert(root, next);
        next += 1;
        stack.push(root);
        on_stack.insert(root);
        work.push((root, edges.get(root).unwrap_or(&empty).iter().collect()));
        while let Some((v, pending)) = work.last_mut() {
            let v = *v;
            if let Some(w) = pending.pop() {
                if !index.contains_key(w) {
                    index.insert(w, next);
                    low.insert(w, next);
                    next += 1;
                    stack.push(w);
                    on_stack.insert(w);
                    work.push((w, edges.get(w).unwrap_or(&empty).iter().collect()));
                } else if on_stack.contains(w) {
                    let l = low[v].min(index[w]);
                    low.insert(v, l);
                }
                continue;
            }
            work.pop();
            if let Some((parent, _)) = work.last() {
                let l = low[parent].min(low[v]);
                low.insert(parent, l);
            }
            if low[v] == index[v] {
                let mut component = Vec::new();
                while let Some(w) = stack.pop() {
                    on_stack.remove(w);
                    component.push(w.clone());
                    if w == v {
                        break;
                    }
                }
                if component.len() > 1 {
                    component.sort();
                    found.push(component);
                }
            }
        }
    }
    found
}

fn source(krate: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .join(krate)
        .join("src")
}

fn describe(edges: &BTreeMap<String, BTreeSet<String>>, component: &[String]) -> String {
    let mut out = format!("a cycle over {} files:", component.len());
    for a in component {
        for b in edges.get(a).into_iter().flatten() {
            if component.contains(b) {
                out.push_str(&format!("\n  {a} -> {b}"));
            }
        }
    }
    out
}

#[test]
fn no_file_level_cycles_in_either_crate() {
    for name in ["dsh-tools", "dsh-tools-derive"] {
        let krate = Crate::read(&source(name));
        assert!(krate.files.len() > 5, "{name}: no sources read");
        let edges = krate.edges();
        let found = cycles(&edges);
        let report: Vec<String> = found.iter().map(|c| describe(&edges, c)).collect();
        assert!(found.is_empty(), "{name}:\n{}", report.join("\n"));
    }
}

#[test]
fn modules_import_only_their_own_layer_or_lower() {
    let krate = Crate::read(&source("dsh-tools"));
    let rank = |file: &str| -> usize {
        let top = file.split('/').next().unwrap().trim_end_matches(".rs");
        LAYERS
            .iter()
            .position(|layer| layer.contains(&top))
            .unwrap_or_else(|| panic!("{top} (from {file}) is in no layer: add it to LAYERS"))
    };
    let mut upward = Vec::new();
    for (a, targets) in krate.edges() {
        for b in targets {
            if rank(&b) > rank(&a) {
                upward.push(format!("{a} -> {b}"));
            }
        }
    }
    assert!(
        upward.is_empty(),
        "imports that point up the layers (DESIGN.md):\n  {}",
        upward.join("\n  ")
    );
}

/// The checker itself: a cycle written on purpose is found, through a re-export and an
/// inline path.
#[test]
fn the_checker_finds_a_planted_cycle() {
    let dir = std::env::temp_dir().join(format!("dsh-layers-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("a")).unwrap();
    std::fs::write(dir.join("lib.rs"), "mod a;\nmod b;\n").unwrap();
    std::fs::write(dir.join("a/mod.rs"), "mod inner;\npub use inner::Thing;\n").unwrap();
    std::fs::write(
        dir.join("a/inner.rs"),
        "pub struct Thing;\nfn f() { crate::b::helper(); }\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("b.rs"),
        "use crate::a::Thing;\npub fn helper() {}\n",
    )
    .unwrap();
    let krate = Crate::read(&dir);
    let edges = krate.edges();
    let found = cycles(&edges);
    assert_eq!(
        found,
        vec![vec!["a/inner.rs".to_owned(), "b.rs".to_owned()]],
        "{edges:?}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

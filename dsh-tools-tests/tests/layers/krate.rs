//! A crate read from its `src/`: which file is which module, what each file defines and binds,
//! and the arrows from a file to the files that define what it names.
//!
//! A path is made absolute from the scope it is written in (`crate`, `$crate`, `self`, any chain
//! of `super`, a child module, or a name a `use` bound there), then resolved to the defining
//! file: through `use` bindings (public or not: a child sees its parent's imports) and glob
//! imports, to the file with the definition. Naming a module alone is no arrow (its items are
//! followed where they are named); a glob import is an arrow to the module's file. Files under a
//! `bin/<name>` are that binary's crate (`crate::` starts there).

use crate::items::{FileScan, Module, scan};
use crate::lex::tokens;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::Path;

/// Re-export and binding chains longer than this are cut (a loop in the reading, not the code).
const MAX_HOPS: usize = 16;

pub(crate) struct Crate {
    /// File (relative to `src/`, `/`-separated) → what it defines and names. Test code is out.
    pub(crate) files: BTreeMap<String, FileScan>,
    /// Module path → file.
    modules: HashMap<Module, String>,
    /// (module, name) → defining file.
    defs: HashMap<(Module, String), String>,
    /// (module, name) → the scope and path (as written) of the `use` that binds it.
    bindings: HashMap<(Module, String), (Module, Vec<String>)>,
    /// Module → the scope and path of each of its glob imports (without the `*`).
    globs: HashMap<Module, Vec<(Module, Vec<String>)>>,
}

pub(crate) type Edges = BTreeMap<String, BTreeSet<String>>;

pub(crate) fn module_of(rel: &str) -> Module {
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

/// Where `crate::` points from `scope`: the library's root, or a binary's.
fn root(scope: &[String]) -> Module {
    match scope {
        [bin, name, ..] if bin == "bin" => vec![bin.clone(), name.clone()],
        _ => Vec::new(),
    }
}

fn joined(base: Module, rest: &[String]) -> Module {
    base.into_iter().chain(rest.iter().cloned()).collect()
}

/// Every `.rs` file under `src`, relative and `/`-separated.
fn rust_files(src: &Path) -> Vec<String> {
    let mut found = Vec::new();
    let mut stack = vec![src.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                let rel = path.strip_prefix(src).unwrap().to_string_lossy();
                found.push(rel.replace('\\', "/"));
            }
        }
    }
    found
}

/// Drops the files declared `#[cfg(test)] mod x;` (and all under them) or opening with
/// `#![cfg(test)]`.
fn drop_tests(files: &mut BTreeMap<String, FileScan>) {
    let tests: Vec<Module> = files
        .values()
        .flat_map(|f| f.test_modules.iter().cloned())
        .collect();
    files.retain(|rel, file| {
        let module = module_of(rel);
        !file.test_only && !tests.iter().any(|t| module.starts_with(t))
    });
}

enum Lookup {
    /// Defined in (or bound through to) this file.
    Found(String),
    /// Another crate's item, or a module named alone: no arrow.
    Nothing,
    /// Not found: the module's own file (a macro-made item, say).
    Unknown,
}

impl Crate {
    pub(crate) fn read(src: &Path) -> Self {
        let mut files = BTreeMap::new();
        for rel in rust_files(src) {
            let text = std::fs::read_to_string(src.join(&rel)).unwrap();
            let scanned = scan(&tokens(&text), &module_of(&rel));
            files.insert(rel, scanned);
        }
        drop_tests(&mut files);
        Self::index(files)
    }

    fn index(files: BTreeMap<String, FileScan>) -> Self {
        let mut krate = Self {
            modules: files.keys().map(|r| (module_of(r), r.clone())).collect(),
            defs: HashMap::new(),
            bindings: HashMap::new(),
            globs: HashMap::new(),
            files: BTreeMap::new(),
        };
        for (rel, file) in &files {
            for def in &file.defs {
                krate.defs.insert(def.clone(), rel.clone());
            }
            for item in &file.uses {
                let written = (item.scope.clone(), item.path.clone());
                if item.path.last().is_some_and(|s| s == "*") {
                    let (scope, mut path) = written;
                    path.pop();
                    let globs = krate.globs.entry(item.scope.clone()).or_default();
                    globs.push((scope, path));
                } else if let Some(alias) = &item.alias {
                    let key = (item.scope.clone(), alias.clone());
                    krate.bindings.insert(key, written);
                }
            }
        }
        krate.files = files;
        krate
    }

    /// `path` as written in `scope`, made absolute (`None`: another crate, a local type, …).
    fn absolute(&self, scope: &Module, path: &[String], hops: usize) -> Option<Module> {
        let (first, rest) = path.split_first()?;
        let supers = path.iter().take_while(|s| *s == "super").count();
        if supers > 0 {
            let mut base = scope.clone();
            for _ in 0..supers {
                base.pop()?;
            }
            return Some(joined(base, &path[supers..]));
        }
        match first.as_str() {
            "crate" | "$crate" => Some(joined(root(scope), rest)),
            "self" => Some(joined(scope.clone(), rest)),
            name => {
                let child = joined(scope.clone(), &[name.to_owned()]);
                if self.modules.contains_key(&child) {
                    return Some(joined(child, rest));
                }
                let (bound_in, bound) = self.bindings.get(&(scope.clone(), name.to_owned()))?;
                if hops >= MAX_HOPS || bound.as_slice() == path {
                    return None;
                }
                let target = self.absolute(bound_in, bound, hops + 1)?;
                Some(joined(target, rest))
            }
        }
    }

    /// The file that defines what the absolute `path` names (`None`: no arrow).
    fn resolve(&self, path: &[String], hops: usize) -> Option<String> {
        let k = (0..=path.len())
            .rev()
            .find(|&k| self.modules.contains_key(&path[..k]))?;
        let file = &self.modules[&path[..k]];
        let name = path.get(k)?;
        if name == "*" {
            return Some(file.clone());
        }
        match self.lookup(&path[..k], name, &path[k + 1..], hops) {
            Lookup::Found(defining) => Some(defining),
            Lookup::Nothing => None,
            Lookup::Unknown => Some(file.clone()),
        }
    }

    /// `name` in `module` (a file's module), followed by `rest`.
    fn lookup(&self, module: &[String], name: &str, rest: &[String], hops: usize) -> Lookup {
        let key = (module.to_vec(), name.to_owned());
        if let Some(defining) = self.defs.get(&key) {
            return Lookup::Found(defining.clone());
        }
        if hops >= MAX_HOPS {
            return Lookup::Unknown;
        }
        if let Some((scope, bound)) = self.bindings.get(&key) {
            let target = self.absolute(scope, bound, hops + 1);
            let full = target.map(|t| joined(t, rest));
            return match full.and_then(|f| self.resolve(&f, hops + 1)) {
                Some(defining) => Lookup::Found(defining),
                None => Lookup::Nothing,
            };
        }
        self.through_globs(module, name, rest, hops)
    }

    /// `name` found through one of `module`'s glob imports, where it is defined or bound.
    fn through_globs(&self, module: &[String], name: &str, rest: &[String], hops: usize) -> Lookup {
        for (scope, written) in self.globs.get(module).into_iter().flatten() {
            let Some(target) = self.absolute(scope, written, hops + 1) else {
                continue;
            };
            if !self.modules.contains_key(&target) {
                continue;
            }
            if let found @ (Lookup::Found(_) | Lookup::Nothing) =
                self.lookup(&target, name, rest, hops + 1)
            {
                return found;
            }
        }
        Lookup::Unknown
    }

    /// Each arrow (from, to), with the first path (as written) that makes it.
    pub(crate) fn arrows(&self) -> BTreeMap<(String, String), String> {
        let mut arrows = BTreeMap::new();
        for (rel, file) in &self.files {
            let written = file.uses.iter().map(|u| (&u.scope, &u.path));
            let inline = file.inline.iter().map(|(s, p)| (s, p));
            for (scope, path) in written.chain(inline) {
                let target = self
                    .absolute(scope, path, 0)
                    .and_then(|a| self.resolve(&a, 0));
                if let Some(target) = target.filter(|t| t != rel) {
                    let key = (rel.clone(), target);
                    arrows.entry(key).or_insert_with(|| path.join("::"));
                }
            }
        }
        arrows
    }

    /// The files each file's paths (its `use` trees and its inline paths) resolve to.
    pub(crate) fn edges(&self) -> Edges {
        let mut edges = Edges::new();
        for (from, to) in self.arrows().into_keys() {
            edges.entry(from).or_default().insert(to);
        }
        edges
    }
}

//! One file's tokens read as what the layers check needs: the names it defines, its `use` trees,
//! and every path it writes inline (`super::x::f(..)`, `self::m::T`, `crate::a::B`,
//! `$crate::a::b!`, `alias::f`), in expressions, types, attributes and macro bodies alike, each
//! with the module scope it is written in (inline `mod m { .. }` blocks open a scope).
//!
//! Items gated by `#[cfg(test)]` are left out wherever they are (a `mod` block brace-matched, a
//! `fn`, a `thread_local!`, …), and `#[cfg(test)] mod x;` is reported so the crate drops the file
//! `x` and everything under it. `use` statements are read as trees only, never again as inline
//! paths.

use crate::lex::is_word;

pub(crate) type Module = Vec<String>;

/// One leaf of a `use` tree: `path` is as written (relative), ending in `*` for a glob;
/// `alias` is the name it binds (`None` for a glob or `as _`).
pub(crate) struct UseItem {
    pub(crate) scope: Module,
    pub(crate) path: Vec<String>,
    pub(crate) alias: Option<String>,
}

#[derive(Default)]
pub(crate) struct FileScan {
    /// (module, name) the file defines at item level.
    pub(crate) defs: Vec<(Module, String)>,
    pub(crate) uses: Vec<UseItem>,
    /// (scope, path as written) for every path of two or more segments outside `use`.
    pub(crate) inline: Vec<(Module, Vec<String>)>,
    /// Modules declared `#[cfg(test)] mod x;`: their files are test code.
    pub(crate) test_modules: Vec<Module>,
    /// The file opens with `#![cfg(test)]`.
    pub(crate) test_only: bool,
    /// Its braces do not pair up: the tokens were misread (a literal or comment taken for code,
    /// or the reverse).
    pub(crate) unbalanced: bool,
}

enum Brace {
    /// An inline `mod name { .. }`.
    Module(String),
    /// A macro invocation at item level (`thread_local! { .. }`): its items are the module's.
    Macro,
    Other,
}

/// Items whose names are definitions (`fn name`, `struct Name`, …).
const DEFINING: &[&str] = &[
    "fn", "struct", "enum", "trait", "type", "const", "static", "union",
];

/// What may follow `#[cfg(test)]` (and more attributes, and a visibility) for the gated thing to
/// be an item, taken out whole.
const ITEMS: &[&str] = &[
    "mod",
    "fn",
    "use",
    "struct",
    "enum",
    "impl",
    "trait",
    "type",
    "const",
    "static",
    "union",
    "extern",
    "async",
    "unsafe",
    "macro_rules",
];

/// Not names, though words: what may follow a defining keyword before the name.
const NOT_NAMES: &[&str] = &["fn", "mut", "_", "unsafe", "extern", "async"];

pub(crate) fn scan(tokens: &[String], module: &Module) -> FileScan {
    let mut scanner = Scanner {
        t: tokens,
        base: module.clone(),
        stack: Vec::new(),
        out: FileScan::default(),
    };
    let mut i = 0;
    while i < tokens.len() {
        i = scanner.step(i);
    }
    scanner.out.unbalanced |= !scanner.stack.is_empty();
    scanner.out
}

struct Scanner<'t> {
    t: &'t [String],
    base: Module,
    stack: Vec<Brace>,
    out: FileScan,
}

impl<'t> Scanner<'t> {
    fn at(&self, i: usize) -> &'t str {
        self.t.get(i).map_or("", String::as_str)
    }

    /// `at(i - back)`, or "" before the start.
    fn before(&self, i: usize, back: usize) -> &'t str {
        i.checked_sub(back).map_or("", |j| self.at(j))
    }

    fn scope(&self) -> Module {
        let inline = self.stack.iter().filter_map(|b| match b {
            Brace::Module(name) => Some(name.clone()),
            _ => None,
        });
        self.base.iter().cloned().chain(inline).collect()
    }

    /// Directly in a module's body (a file's top, an inline `mod`, an item-level macro's).
    fn item_level(&self) -> bool {
        !self
            .stack
            .iter()
            .rev()
            .find(|b| !matches!(b, Brace::Macro))
            .is_some_and(|b| matches!(b, Brace::Other))
    }

    fn step(&mut self, i: usize) -> usize {
        match self.at(i) {
            "#" if self.is_cfg_test(i + 1) => self.skip_test_item(i),
            "#" if self.at(i + 1) == "!" && self.is_cfg_test(i + 2) => {
                self.out.test_only |= self.stack.is_empty();
                i + 1
            }
            "{" => {
                let brace = self.brace_kind(i);
                self.stack.push(brace);
                i + 1
            }
            "}" => {
                self.out.unbalanced |= self.stack.pop().is_none();
                i + 1
            }
            "use" if self.at(i + 1) != "<" => self.read_use(i + 1),
            word if is_word(word) => {
                self.record_def(i);
                self.read_path(i)
            }
            _ => i + 1,
        }
    }

    /// `[cfg(test)]` starting at `i`.
    fn is_cfg_test(&self, i: usize) -> bool {
        (0..6)
            .map(|k| self.at(i + k))
            .eq(["[", "cfg", "(", "test", ")", "]"])
    }

    fn brace_kind(&self, i: usize) -> Brace {
        let (name, keyword) = (self.before(i, 1), self.before(i, 2));
        if keyword == "mod" && is_word(name) {
            Brace::Module(name.to_owned())
        } else if name == "!" && is_word(keyword) && self.item_level() {
            Brace::Macro
        } else {
            Brace::Other
        }
    }

    fn record_def(&mut self, i: usize) {
        if !self.item_level() {
            return;
        }
        let word = self.at(i);
        let name = if DEFINING.contains(&word) {
            let next = self.at(i + 1);
            if next == "mut" { self.at(i + 2) } else { next }
        } else if word == "macro_rules" && self.at(i + 1) == "!" {
            self.at(i + 2)
        } else {
            return;
        };
        if is_word(name) && !NOT_NAMES.contains(&name) {
            let def = (self.scope(), name.to_owned());
            self.out.defs.push(def);
        }
    }

    /// A path starting at `i` (`a::b::c`, not continuing one); the index after it.
    fn read_path(&mut self, i: usize) -> usize {
        let mut path = vec![self.at(i).to_owned()];
        let mut j = i + 1;
        while self.at(j) == "::" && is_word(self.at(j + 1)) {
            path.push(self.at(j + 1).to_owned());
            j += 2;
        }
        let continues = self.before(i, 1) == "::";
        if path.len() > 1 && !continues {
            let scope = self.scope();
            self.out.inline.push((scope, path));
        }
        j
    }

    /// The `use` tree starting at `i`; the index after its `;`.
    fn read_use(&mut self, mut i: usize) -> usize {
        let scope = self.scope();
        let mut leaves = Vec::new();
        use_tree(self.t, &mut i, Vec::new(), &mut leaves);
        for (path, alias) in leaves {
            let scope = scope.clone();
            self.out.uses.push(UseItem { scope, path, alias });
        }
        while i < self.t.len() && self.at(i) != ";" {
            i += 1;
        }
        i + 1
    }

    /// `#[cfg(test)]` at `i`, more attributes, a visibility, then an item: the index after the
    /// item (a `;` or a matched `{ .. }`). Not an item (a statement, a field): only the `#`.
    fn skip_test_item(&mut self, i: usize) -> usize {
        let mut j = i;
        while self.at(j) == "#" && self.at(j + 1) == "[" {
            j = self.group_end(j + 1);
        }
        if self.at(j) == "pub" {
            j += 1;
            if self.at(j) == "(" {
                j = self.group_end(j);
            }
        }
        let kind = self.at(j);
        if kind == "mod" && is_word(self.at(j + 1)) && self.at(j + 2) == ";" {
            let mut module = self.scope();
            module.push(self.at(j + 1).to_owned());
            self.out.test_modules.push(module);
        }
        let is_macro = is_word(kind) && self.at(j + 1) == "!";
        if !ITEMS.contains(&kind) && !is_macro {
            return i + 1;
        }
        self.item_end(j)
    }

    /// The index after the bracketed group opening at `i`.
    fn group_end(&self, i: usize) -> usize {
        let mut depth = 0usize;
        for j in i..self.t.len() {
            match self.at(j) {
                "(" | "[" | "{" => depth += 1,
                ")" | "]" | "}" => {
                    depth -= 1;
                    if depth == 0 {
                        return j + 1;
                    }
                }
                _ => {}
            }
        }
        self.t.len()
    }

    /// An item starting at `i` ends at its `;` or its body's `}`, or before a closer it did not
    /// open.
    fn item_end(&self, i: usize) -> usize {
        let mut depth = 0usize;
        for j in i..self.t.len() {
            match self.at(j) {
                ";" if depth == 0 => return j + 1,
                "(" | "[" | "{" => depth += 1,
                ")" | "]" | "}" if depth == 0 => return j,
                "}" if depth == 1 => return j + 1,
                ")" | "]" | "}" => depth -= 1,
                _ => {}
            }
        }
        self.t.len()
    }
}

/// The leaves of the `use` tree at `*i`: `a::{b, c::{d, e as f}, g::*}` as `([a, b], b)`,
/// `([a, c, d], d)`, `([a, c, e], f)`, `([a, g, *], -)`; `x::{self}` as `([x], x)`.
fn use_tree(
    t: &[String],
    i: &mut usize,
    mut path: Vec<String>,
    out: &mut Vec<(Vec<String>, Option<String>)>,
) {
    let at = |i: usize| t.get(i).map_or("", String::as_str);
    if path.is_empty() && at(*i) == "::" {
        // `::name` is another crate.
        path.push("::".into());
        *i += 1;
    }
    loop {
        match at(*i) {
            "*" => {
                *i += 1;
                path.push("*".into());
                out.push((path, None));
                return;
            }
            "{" => {
                *i += 1;
                while !matches!(at(*i), "}" | "" | ";") {
                    let start = *i;
                    use_tree(t, i, path.clone(), out);
                    if at(*i) == "," || *i == start {
                        *i += 1;
                    }
                }
                *i += 1;
                return;
            }
            word if is_word(word) => {
                *i += 1;
                if word != "self" || path.is_empty() {
                    path.push(word.to_owned());
                }
                if at(*i) == "::" {
                    *i += 1;
                    continue;
                }
                let mut alias = path.last().cloned();
                if at(*i) == "as" {
                    alias = Some(at(*i + 1).to_owned()).filter(|a| a != "_");
                    *i += 2;
                }
                out.push((path, alias));
                return;
            }
            _ => return,
        }
    }
}

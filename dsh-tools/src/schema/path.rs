//! Paths of schema nodes and of values, stored as a parent-linked arena so that a walk over a
//! tree nested 100,000 deep never copies a path; a path is rendered only when a violation names it.

use std::fmt::Write;

/// One step from a parent path.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Seg<'a> {
    /// `.<key>` (for value paths: no dot under an empty parameter root).
    Key(&'a str),
    /// `[<index>]`.
    Index(usize),
    /// A fixed suffix, written verbatim (`.items`, `.properties.`).
    Lit(&'static str),
    /// `.properties.<key>` (schema paths).
    Prop(&'a str),
    /// `.oneOf[<index>]` (schema paths).
    OneOf(usize),
}

/// Index of a path in a [`PathArena`]; `ROOT` is the root label.
pub(crate) type PathId = u32;
pub(crate) const ROOT: PathId = u32::MAX;

/// Parent-linked paths.
#[derive(Default)]
pub(crate) struct PathArena<'a> {
    nodes: Vec<(PathId, Seg<'a>)>,
}

impl<'a> PathArena<'a> {
    pub(crate) fn push(&mut self, parent: PathId, seg: Seg<'a>) -> PathId {
        let id = u32::try_from(self.nodes.len()).unwrap_or(u32::MAX - 1);
        self.nodes.push((parent, seg));
        id
    }

    /// Renders `root` followed by the segments of `id`. Keys are spliced verbatim. When `root`
    /// is empty (parameter-root mode), a key directly under the root has no leading dot.
    pub(crate) fn render(&self, root: &str, id: PathId) -> String {
        let mut segs = Vec::new();
        let mut cur = id;
        while cur != ROOT {
            let (parent, seg) = self.nodes[cur as usize];
            segs.push(seg);
            cur = parent;
        }
        let mut out = String::from(root);
        for seg in segs.into_iter().rev() {
            match seg {
                Seg::Key(k) => {
                    if !out.is_empty() {
                        out.push('.');
                    }
                    out.push_str(k);
                }
                Seg::Index(i) => {
                    let _ = write!(out, "[{i}]");
                }
                Seg::Lit(s) => out.push_str(s),
                Seg::Prop(k) => {
                    out.push_str(".properties.");
                    out.push_str(k);
                }
                Seg::OneOf(i) => {
                    let _ = write!(out, ".oneOf[{i}]");
                }
            }
        }
        out
    }
}

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

    /// Renders `root` followed by the segments of `id`. Ordinary keys are spliced verbatim
    /// (`value.lines[1].number`); a key that holds a `"`, a `\\`, a `;` or a control
    /// character is written as a JSON string in brackets (`value["say \\"hi\\""]`), so no key
    /// can forge the text of another violation; a key over [`MAX_KEY_BYTES`] keeps its start
    /// and says how much was cut, and a whole path over [`MAX_PATH_BYTES`] keeps its start and
    /// end. When `root` is empty (parameter-root mode), a key directly under the root has no
    /// leading dot.
    pub(crate) fn render(&self, root: &str, id: PathId) -> String {
        let mut out = String::new();
        self.render_into(&mut out, root, id);
        out
    }

    /// An arena with room for `n` path steps.
    pub(crate) fn with_capacity(n: usize) -> Self {
        Self {
            nodes: Vec::with_capacity(n),
        }
    }

    /// [`render`](Self::render), appended to `out`.
    pub(crate) fn render_into(&self, out: &mut String, root: &str, id: PathId) {
        // The steps, root first: on the stack for ordinary depths.
        let mut depth = 0;
        let mut cur = id;
        while cur != ROOT {
            depth += 1;
            cur = self.nodes[cur as usize].0;
        }
        let mut small = [Seg::Lit(""); 16];
        let mut large = Vec::new();
        let segs: &mut [Seg<'a>] = if depth <= small.len() {
            &mut small[..depth]
        } else {
            large.resize(depth, Seg::Lit(""));
            &mut large
        };
        let mut cur = id;
        for slot in segs.iter_mut().rev() {
            let (parent, seg) = self.nodes[cur as usize];
            *slot = seg;
            cur = parent;
        }
        let start = out.len();
        out.push_str(root);
        for seg in segs.iter() {
            match *seg {
                Seg::Key(k) => {
                    if plain(k) {
                        if out.len() > start {
                            out.push('.');
                        }
                        out.push_str(k);
                    } else {
                        bracketed(out, k);
                    }
                }
                Seg::Index(i) => {
                    let _ = write!(out, "[{i}]");
                }
                Seg::Lit(s) => out.push_str(s),
                Seg::Prop(k) => {
                    if plain(k) {
                        out.push_str(".properties.");
                        out.push_str(k);
                    } else {
                        out.push_str(".properties");
                        bracketed(out, k);
                    }
                }
                Seg::OneOf(i) => {
                    let _ = write!(out, ".oneOf[{i}]");
                }
            }
        }
        let path = &out[start..];
        if path.len() > MAX_PATH_BYTES {
            let head = floor_char(path, MAX_PATH_BYTES / 4);
            let tail = ceil_char(path, path.len() - MAX_PATH_BYTES / 2);
            let cut = tail - head;
            let end = path[tail..].to_owned();
            out.truncate(start + head);
            let _ = write!(out, "…({cut} bytes of path)…{end}");
        }
    }
}

/// Longest key written whole in a path.
pub const MAX_KEY_BYTES: usize = 256;
/// Longest path written whole in a violation.
pub const MAX_PATH_BYTES: usize = 4096;

/// A key written verbatim: short, nothing that reads as message structure (an empty key is
/// verbatim too: the spec renders it, at the parameter root, as `arguments`).
fn plain(key: &str) -> bool {
    key.len() <= MAX_KEY_BYTES
        && !key
            .chars()
            .any(|c| c == '"' || c == '\\' || c == ';' || c.is_control())
}

/// `label` followed by `key`, as [`PathArena::render`] writes a key segment.
pub(crate) fn join_key(label: &str, key: &str) -> String {
    let mut out = label.to_owned();
    if plain(key) {
        if !out.is_empty() {
            out.push('.');
        }
        out.push_str(key);
    } else {
        bracketed(&mut out, key);
    }
    out
}

/// `["<key as a JSON string>"]`, the key cut to [`MAX_KEY_BYTES`] with a note of the rest.
fn bracketed(out: &mut String, key: &str) {
    let (shown, cut) = if key.len() > MAX_KEY_BYTES {
        let end = floor_char(key, MAX_KEY_BYTES);
        (&key[..end], key.len() - end)
    } else {
        (key, 0)
    };
    out.push('[');
    out.push_str(&serde_json::Value::from(shown).to_string());
    if cut > 0 {
        let _ = write!(out, "…({cut} more bytes)");
    }
    out.push(']');
}

/// The largest char boundary of `s` at or below `i`.
pub(super) fn floor_char(s: &str, mut i: usize) -> usize {
    while i > 0 && !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// The smallest char boundary of `s` at or above `i`.
fn ceil_char(s: &str, mut i: usize) -> usize {
    while i < s.len() && !s.is_char_boundary(i) {
        i += 1;
    }
    i
}

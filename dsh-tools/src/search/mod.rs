//! Tool search: the index a large catalog is searched with, by [`Registry::search`](crate::Registry::search),
//! the `tool_search` tool, Code Mode's `tools.$search` and the CLI alike.
//!
//! Ranking is fielded BM25 (BM25F) over a tool's name, namespace, description and parameter
//! names and descriptions, with field weights; a query that spells a tool's name, or starts
//! one, ranks that tool first. Why it is written here rather than taken from a crate is in
//! DESIGN.md ("Tool search").
//!
//! ```
//! use dsh_tools::search::{Document, Index};
//! use serde_json::json;
//!
//! let none = json!({});
//! let mut index = Index::new();
//! index.insert(0, Document { name: "read_file", namespace: "fs",
//!     description: "Read a file's contents", parameters: &none });
//! index.insert(1, Document { name: "send_message", namespace: "slack",
//!     description: "Post a message to a channel", parameters: &none });
//! let hits = index.search("post something in a slack channel", 5, |_| true);
//! assert_eq!(hits[0].key, 1);
//! ```

mod index;
mod tokens;

pub(crate) use index::clip;
pub use index::{Document, Hit, Index, MAX_QUERY_BYTES, Match};

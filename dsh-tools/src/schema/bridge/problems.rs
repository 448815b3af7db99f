//! What the bridge reports: each problem with its path, the error listing them, and the
//! collector that keeps to the listing limit.

use crate::schema::MAX_LISTED_VIOLATIONS;
use std::fmt;

/// One reason a schema could not be bridged: where, and what to do about it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BridgeProblem {
    path: String,
    message: String,
}

impl BridgeProblem {
    /// The JSON-pointer path of the schema node (`#`, `#/properties/a`, `#/anyOf/1`), through
    /// inlined `$ref`s.
    pub fn path(&self) -> &str {
        &self.path
    }

    /// What is wrong, and how to fix it where there is a fix.
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl fmt::Display for BridgeProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.path, self.message)
    }
}

/// A schemars schema that the bridge cannot turn into the subset, with every problem found.
///
/// Its message is `cannot bridge the schemars schema into the subset: <path>: <problem>; …`.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{}", describe(subject.as_deref(), problems, *unlisted))]
pub struct BridgeError {
    problems: Vec<BridgeProblem>,
    unlisted: usize,
    /// Whose schema it is (`the output type \`Shot\``), when not the arguments'.
    subject: Option<String>,
}

impl BridgeError {
    /// An error with one problem at the root (for failures past the bridge itself).
    pub(crate) fn internal(message: String) -> Self {
        Self {
            problems: vec![BridgeProblem {
                path: "#".to_owned(),
                message,
            }],
            unlisted: 0,
            subject: None,
        }
    }

    /// The same error, said of the output type `type_name`: a registration that fails because
    /// of the output says so.
    pub(crate) fn of_output(mut self, type_name: &str) -> Self {
        self.subject = Some(format!("the output type `{type_name}`"));
        self
    }

    /// Every problem, in schema order (at most
    /// [`MAX_LISTED_VIOLATIONS`]; the rest are only counted).
    pub fn problems(&self) -> &[BridgeProblem] {
        &self.problems
    }

    /// How many problems were found beyond those listed.
    pub fn unlisted(&self) -> usize {
        self.unlisted
    }
}

/// The message: the subject, every listed problem, and how many more there were.
fn describe(subject: Option<&str>, problems: &[BridgeProblem], unlisted: usize) -> String {
    let mut text = match subject {
        Some(subject) => {
            format!("cannot bridge the schemars schema of {subject} into the subset: ")
        }
        None => "cannot bridge the schemars schema into the subset: ".to_owned(),
    };
    for (i, p) in problems.iter().enumerate() {
        if i > 0 {
            text.push_str("; ");
        }
        text.push_str(&p.to_string());
    }
    if unlisted > 0 {
        text.push_str(&format!("; ... and {unlisted} more problems (not listed)"));
    }
    text
}

/// Collects problems up to the listing limit.
#[derive(Default)]
pub(crate) struct Problems {
    list: Vec<BridgeProblem>,
    unlisted: usize,
}

impl Problems {
    pub(crate) fn add(&mut self, path: &str, message: impl Into<String>) {
        if self.list.len() < MAX_LISTED_VIOLATIONS {
            self.list.push(BridgeProblem {
                path: path.to_owned(),
                message: message.into(),
            });
        } else {
            self.unlisted += 1;
        }
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.list.is_empty() && self.unlisted == 0
    }

    pub(super) fn finish(self) -> BridgeError {
        BridgeError {
            problems: self.list,
            unlisted: self.unlisted,
            subject: None,
        }
    }
}

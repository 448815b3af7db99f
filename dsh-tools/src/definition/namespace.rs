//! A named group of tools with a description the model reads: searched with the tool, named by
//! defer rules, and shown with deferred tools in Code Mode's SDK.

/// A named group of tools with a description the model reads (one per imported MCP server,
/// say): searched with the tool ([`Registry::search`](crate::Registry::search) weighs it), named
/// by [`DeferRule::namespace`](crate::registry::DeferRule::namespace), and shown with the
/// deferred tools' names in Code Mode's SDK section.
///
/// ```
/// use dsh_tools::definition::Namespace;
///
/// let github = Namespace::new("github", "Issues, pull requests and code on GitHub");
/// assert_eq!(github.name(), "github");
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct Namespace {
    name: String,
    description: String,
}

impl Namespace {
    /// A namespace called `name`, described by `description`.
    pub fn new(name: impl Into<String>, description: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            description: description.into(),
        }
    }

    /// Its name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Its description.
    pub fn description(&self) -> &str {
        &self.description
    }
}

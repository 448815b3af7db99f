//! `#[tool]` at run time: the generated definitions through a registry, their model-facing
//! schemas as snapshots, and a property test over argument values.

mod tool_macro {
    pub(crate) mod behaviour;
    pub(crate) mod properties;
    pub(crate) mod snapshots;
    pub(crate) mod tools;
}

/// `title` and the behaviour hints reach the registered definition; a tool without them has
/// neither.
mod hints {
    use super::tool_macro::tools::Add;
    use dsh_tools::{Registry, ToolError, ToolHints, tool};

    /// Delete a file.
    #[tool(
        title = " Delete file ",
        destructive,
        idempotent = true,
        open_world = false
    )]
    async fn delete_file(
        /// the path
        path: String,
    ) -> Result<String, ToolError> {
        Ok(path)
    }

    /// List a directory.
    #[tool(title = "List directory", read_only, destructive = false)]
    async fn list_dir() -> Result<Vec<String>, ToolError> {
        Ok(Vec::new())
    }

    #[test]
    fn registered_definitions_carry_title_and_hints() {
        let registry = Registry::new();
        registry.register(DeleteFile).unwrap().keep();
        registry.register(ListDir).unwrap().keep();
        registry.register(Add).unwrap().keep();
        let read = |name: &str| {
            let tool = registry.get(name, None).unwrap();
            let definition = tool.definition();
            (
                definition.tool_title().map(str::to_owned),
                definition.tool_hints(),
            )
        };

        let (title, hints) = read("delete_file");
        assert_eq!(title.as_deref(), Some("Delete file"));
        assert_eq!(
            hints,
            ToolHints::new()
                .destructive(true)
                .idempotent(true)
                .open_world(false)
        );
        assert_eq!(hints.read_only, None);

        let (title, hints) = read("list_dir");
        assert_eq!(title.as_deref(), Some("List directory"));
        assert_eq!(hints, ToolHints::new().read_only(true).destructive(false));

        let (title, hints) = read("add");
        assert_eq!(title, None);
        assert_eq!(hints, ToolHints::new());
        assert!(hints.is_empty());
    }
}

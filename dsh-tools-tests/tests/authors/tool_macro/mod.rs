//! `#[tool]` at run time: the generated definitions through a registry, their model-facing
//! schemas as snapshots, and a property test over argument values.

mod behaviour;
mod decode;
mod properties;
mod snapshots;
pub(crate) use crate::tools;

/// `title` and the behaviour hints reach the registered definition; a tool without them has
/// neither.
mod hints {
    use super::tools::Add;
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

/// Tools with state: the tool holds it, each registration its own, each call a clone; both forms.
mod state {
    use super::behaviour::call;
    use dsh_tools::{Registry, State, ToolError, tool};
    use serde_json::json;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

    #[derive(Clone)]
    struct Counter {
        prefix: String,
        calls: Arc<AtomicUsize>,
    }

    #[derive(serde::Deserialize, schemars::JsonSchema)]
    struct GreetArgs {
        name: String,
    }

    /// Greets with the state's prefix.
    #[tool]
    async fn greet(State(c): State<Counter>, args: GreetArgs) -> Result<String, ToolError> {
        c.calls.fetch_add(1, Ordering::SeqCst);
        Ok(format!("{} {}", c.prefix, args.name))
    }

    /// Counts the calls so far plus `extra`.
    #[tool(struct_name = CallsSoFar)]
    async fn calls(
        counter: State<Counter>,
        /// added to the count
        extra: Option<usize>,
    ) -> Result<usize, ToolError> {
        Ok(counter.calls.load(Ordering::SeqCst) + extra.unwrap_or(0))
    }

    #[tokio::test]
    async fn each_registration_has_its_own_state_and_calls_share_it() {
        let calls = Arc::new(AtomicUsize::new(0));
        let state = |prefix: &str| Counter {
            prefix: prefix.into(),
            calls: Arc::clone(&calls),
        };
        let global = Registry::new();
        global.register(Greet::with(state("Hello"))).unwrap().keep();
        global.register(CallsSoFar::with(state(""))).unwrap().keep();
        let other = Registry::new();
        other
            .register(Greet::with(state("Bonjour")))
            .unwrap()
            .keep();
        assert_eq!(
            call(&global, "greet", json!({"name": "Ada"})).await.text(),
            "Hello Ada"
        );
        assert_eq!(
            call(&other, "greet", json!({"name": "Ada"})).await.text(),
            "Bonjour Ada"
        );
        assert_eq!(
            call(&global, "calls", json!({"extra": 10})).await.text(),
            "12"
        );
        // Arguments are validated before the state is touched.
        let bad = call(&global, "greet", json!({})).await;
        assert_eq!(bad.code(), Some("INVALID_ARGS"));
        assert_eq!(calls.load(Ordering::SeqCst), 2);
        // The state is not part of the model-facing schema.
        let schemas = global.schemas(None).unwrap();
        let greet = schemas.iter().find(|s| s.name == "greet").unwrap();
        assert_eq!(greet.parameters["required"], json!(["name"]));
        assert_eq!(format!("{:?}", Greet::with(state("x"))), "Greet { .. }");
    }
}

/// One contract for unknown arguments (closed by default in both forms, `allow_unknown_args` to
/// opt out), outputs checked against what they serialize to, and a failing `Serialize`.
mod contracts {
    use super::behaviour::call;
    use dsh_tools::{Registry, ToolError, tool};
    use serde_json::json;

    #[derive(serde::Deserialize, schemars::JsonSchema)]
    struct WriteArgs {
        path: String,
        content: String,
    }

    /// Writes a file.
    #[tool]
    async fn write_file(args: WriteArgs) -> Result<usize, ToolError> {
        Ok(args.path.len() + args.content.len())
    }

    /// Writes a file, ignoring what it does not know.
    #[tool(allow_unknown_args)]
    async fn write_lenient(args: WriteArgs) -> Result<usize, ToolError> {
        Ok(args.path.len() + args.content.len())
    }

    /// Adds, ignoring extra keys.
    #[tool(allow_unknown_args)]
    async fn add_lenient(
        /// a term
        a: i64,
    ) -> Result<i64, ToolError> {
        Ok(a)
    }

    #[derive(serde::Serialize, schemars::JsonSchema)]
    struct Listing {
        #[serde(skip_serializing_if = "Vec::is_empty")]
        entries: Vec<String>,
        #[serde(skip_serializing)]
        #[allow(dead_code)]
        cache: u32,
    }

    /// Lists nothing.
    #[tool]
    async fn list_empty() -> Result<Listing, ToolError> {
        Ok(Listing {
            entries: Vec::new(),
            cache: 7,
        })
    }

    struct Unserializable;

    impl serde::Serialize for Unserializable {
        fn serialize<S: serde::Serializer>(&self, _: S) -> Result<S::Ok, S::Error> {
            Err(serde::ser::Error::custom("the clock is not serializable"))
        }
    }

    impl schemars::JsonSchema for Unserializable {
        fn schema_name() -> std::borrow::Cow<'static, str> {
            "Unserializable".into()
        }
        fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
            schemars::json_schema!({"type": "string"})
        }
    }

    /// Fails to serialize.
    #[tool]
    async fn broken() -> Result<Unserializable, ToolError> {
        Ok(Unserializable)
    }

    #[tokio::test]
    async fn unknown_arguments_outputs_and_serialize_failures() {
        let r = Registry::new();
        for d in [
            WriteFile.definition(),
            WriteLenient.definition(),
            AddLenient.definition(),
            ListEmpty.definition(),
            Broken.definition(),
        ] {
            r.register(d).unwrap().keep();
        }
        use dsh_tools::Tool;
        let made_up = json!({"path": "a", "content": "b", "append": true});
        let closed = call(&r, "write_file", made_up.clone()).await;
        assert_eq!(closed.code(), Some("INVALID_ARGS"));
        assert_eq!(
            closed.text(),
            "Error: invalid arguments: \"append\" is not a declared property \
             (additionalProperties: false): the declared properties are \"path\", \"content\""
        );
        assert_eq!(
            WriteFile.definition().parameters()["additionalProperties"],
            false
        );
        assert_eq!(call(&r, "write_lenient", made_up).await.text(), "2");
        assert!(
            WriteLenient
                .definition()
                .parameters()
                .get("additionalProperties")
                .is_none()
        );
        assert_eq!(
            call(&r, "add_lenient", json!({"a": 4, "b": 1}))
                .await
                .text(),
            "4"
        );
        // The output schema is what `Listing` serializes to: `entries` may be absent, `cache` is.
        let listed = call(&r, "list_empty", json!({})).await;
        assert!(!listed.is_error(), "{}", listed.text());
        assert_eq!(listed.value(), Some(&json!({})));
        let broken = call(&r, "broken", json!({})).await;
        assert_eq!(broken.code(), Some("INVALID_TOOL_OUTPUT"));
        assert!(
            broken.text().contains("the clock is not serializable"),
            "{}",
            broken.text()
        );
    }
}

/// Generated validators (`FastCheck`): the inline form gets one, the struct form when its type
/// derives it; where the code's shape differs from the bridged schema the interpreter decides.
/// Either way the messages are the interpreter's.
mod generated_check {
    use super::behaviour::call;
    use super::tools::{Add, ReadFile};
    use dsh_tools::{FastCheck, Registry, Tool, ToolError, tool};
    use serde_json::json;

    #[derive(serde::Deserialize, schemars::JsonSchema, FastCheck)]
    #[serde(rename_all = "camelCase")]
    struct MoveArgs {
        from_path: String,
        to_path: String,
        overwrite: Option<bool>,
    }

    /// Moves a file.
    #[tool]
    async fn move_file(args: MoveArgs) -> Result<String, ToolError> {
        let mode = if args.overwrite == Some(true) {
            "!"
        } else {
            ""
        };
        Ok(format!("{} -> {}{mode}", args.from_path, args.to_path))
    }

    #[derive(serde::Deserialize, schemars::JsonSchema, FastCheck)]
    struct TakeArgs {
        /// How many (schemars adds `minimum: 1`, which the derive does not read).
        #[schemars(range(min = 1))]
        count: u32,
    }

    /// Takes some.
    #[tool]
    async fn take(args: TakeArgs) -> Result<u32, ToolError> {
        Ok(args.count)
    }

    /// A type that contains itself where its schema does not: its shape is refused, not built
    /// forever.
    #[allow(dead_code)]
    #[derive(serde::Deserialize, schemars::JsonSchema, FastCheck)]
    struct Chain {
        name: String,
        #[schemars(skip)]
        #[serde(default)]
        next: Option<Box<Chain>>,
    }

    /// The compact form on a type that names itself (`Self` in the constant table) where its
    /// schema does not.
    #[allow(dead_code)]
    #[derive(serde::Deserialize, schemars::JsonSchema, FastCheck)]
    #[dsh_tools(compact)]
    struct Node {
        name: String,
        #[schemars(skip)]
        #[serde(default)]
        next: Option<Box<Self>>,
    }

    /// A check that always says no, with an honest shape: the collector then decides alone.
    #[allow(dead_code)]
    #[derive(serde::Deserialize, schemars::JsonSchema)]
    #[serde(deny_unknown_fields)]
    struct Doubtful {
        n: bool,
    }

    impl FastCheck for Doubtful {
        fn fast_shape(closed: bool) -> Result<serde_json::Value, String> {
            assert!(closed);
            Ok(
                json!({"type": "object", "properties": {"n": {"type": "boolean"}},
                      "required": ["n"], "additionalProperties": false}),
            )
        }
        fn fast_check(_: &serde_json::Value, _: bool) -> bool {
            false
        }
    }

    #[test]
    fn recursive_types_and_a_doubting_check_fall_back_to_the_interpreter() {
        use dsh_tools::schema::fast::ArgsValidator;
        let chain = ArgsValidator::of::<Chain>(false).unwrap();
        assert!(
            chain
                .fast_path()
                .unwrap_err()
                .contains("nests deeper than 64 objects"),
            "{:?}",
            chain.fast_path()
        );
        assert!(chain.validate(&json!({"name": "a"})).is_ok());
        let node = ArgsValidator::of::<Node>(false).unwrap();
        assert!(
            node.fast_path()
                .unwrap_err()
                .contains("nests deeper than 64 objects"),
            "{:?}",
            node.fast_path()
        );
        assert!(node.validate(&json!({"name": "a"})).is_ok());
        assert!(node.validate(&json!({"name": 1})).is_err());
        let doubtful = ArgsValidator::of::<Doubtful>(false).unwrap();
        assert_eq!(doubtful.fast_path(), Ok(()));
        assert_eq!(doubtful.fast_is_valid(&json!({"n": true})), Some(false));
        assert_eq!(doubtful.validate(&json!({"n": true})), Ok(()));
        assert_eq!(
            doubtful.validate(&json!({"n": 1})),
            Err(vec![r#""n" must be a boolean"#.to_owned()])
        );
    }

    #[derive(serde::Deserialize, schemars::JsonSchema, FastCheck)]
    struct Point {
        x: i32,
        y: i32,
    }

    #[derive(serde::Deserialize, schemars::JsonSchema)]
    struct NoCheck {
        a: String,
    }

    /// Places a label (the inline form: a constant member table).
    #[tool]
    async fn place(
        /// The label
        label: String,
        /// Where (a type with its own generated check)
        at: Point,
        /// How many times
        times: Option<u8>,
        /// Tags
        #[serde(default)]
        tags: Vec<String>,
        /// A renamed flag
        #[serde(rename = "dryRun")]
        dry_run: bool,
    ) -> Result<String, ToolError> {
        Ok(format!(
            "{label}@{},{} x{} {tags:?} {dry_run}",
            at.x,
            at.y,
            times.unwrap_or(1)
        ))
    }

    /// The same, open to unknown arguments.
    #[tool(allow_unknown_args)]
    async fn place_lenient(
        /// The label
        label: String,
        /// Where (a type with its own generated check)
        at: Point,
        /// How many times
        times: Option<u8>,
        /// Tags
        #[serde(default)]
        tags: Vec<String>,
        /// A renamed flag
        #[serde(rename = "dryRun")]
        dry_run: bool,
    ) -> Result<String, ToolError> {
        Ok(format!(
            "{label}@{},{} {times:?} {tags:?} {dry_run}",
            at.x, at.y
        ))
    }

    /// An argument without a generated check.
    #[tool]
    async fn unchecked(
        /// Without FastCheck
        p: NoCheck,
    ) -> Result<String, ToolError> {
        Ok(p.a)
    }

    /// The inline form's table decides exactly what its bridged schema does: required, optional,
    /// defaulted and renamed members, a nested generated check, closed and open roots.
    #[test]
    fn the_inline_forms_table_agrees_with_the_interpreter() {
        let base = json!({"label": "a", "at": {"x": 1, "y": 2}, "dryRun": true});
        let with = |key: &str, value: serde_json::Value| {
            let mut v = base.clone();
            v[key] = value;
            v
        };
        let without = |key: &str| {
            let mut v = base.clone();
            v.as_object_mut().unwrap().remove(key);
            v
        };
        // (value, valid when closed, valid when open)
        let cases = [
            (base.clone(), true, true),
            (with("times", json!(3)), true, true),
            (with("times", json!(null)), true, true),
            (with("times", json!(3.0)), true, true),
            (with("times", json!(256)), false, false),
            (with("times", json!(-1)), false, false),
            (with("tags", json!(["x", "y"])), true, true),
            (with("tags", json!([1])), false, false),
            (with("tags", json!(null)), false, false),
            (with("zzz", json!(1)), false, true),
            (with("dry_run", json!(true)), false, true),
            (without("dryRun"), false, false),
            (without("label"), false, false),
            (with("label", json!(7)), false, false),
            (with("at", json!({"x": 1})), false, false),
            (with("at", json!([1, 2])), false, false),
            (with("at", json!({"x": 1, "y": 2.5})), false, false),
            (
                with("at", json!({"x": 2147483648_i64, "y": 0})),
                false,
                false,
            ),
            (json!([]), false, false),
            (json!(null), false, false),
            (json!("label"), false, false),
        ];
        for (definition, open) in [
            (Place.definition(), false),
            (PlaceLenient.definition(), true),
        ] {
            let validator = definition.args_validator().expect("typed");
            assert_eq!(validator.fast_path(), Ok(()), "open: {open}");
            for (value, closed_ok, open_ok) in &cases {
                let expected = if open { *open_ok } else { *closed_ok };
                assert_eq!(
                    validator.compiled().is_valid(value),
                    expected,
                    "interpreter, open: {open}, {value}"
                );
                assert_eq!(
                    validator.fast_is_valid(value),
                    Some(expected),
                    "generated, open: {open}, {value}"
                );
            }
        }
        let unchecked = Unchecked.definition();
        let why = unchecked.args_validator().unwrap().fast_path().unwrap_err();
        assert!(
            why.contains("NoCheck` does not implement FastCheck"),
            "{why}"
        );
    }

    #[tokio::test]
    async fn the_generated_check_decides_where_its_shape_is_the_schema() {
        let fast = |d: dsh_tools::ToolDefinition| {
            d.args_validator()
                .expect("typed")
                .fast_path()
                .map_err(str::to_owned)
        };
        assert_eq!(fast(Add.definition()), Ok(()));
        assert_eq!(fast(MoveFile.definition()), Ok(()));
        assert!(
            fast(ReadFile.definition())
                .unwrap_err()
                .contains("ReadFileArgs` does not implement FastCheck")
        );
        assert_eq!(
            fast(Take.definition()).unwrap_err(),
            "at `/properties/count/minimum`: 1 is not 0"
        );

        let r = Registry::new();
        r.register(MoveFile).unwrap().keep();
        r.register(Take).unwrap().keep();
        let moved = call(&r, "move_file", json!({"fromPath": "a", "toPath": "b"})).await;
        assert_eq!(moved.text(), "a -> b");
        let bad = call(&r, "move_file", json!({"from_path": "a", "toPath": 1})).await;
        assert_eq!(
            bad.text(),
            "Error: invalid arguments: missing required property \"fromPath\"; \"toPath\" must \
             be a string; \"from_path\" is not a declared property (additionalProperties: \
             false): the declared properties are \"fromPath\", \"toPath\", \"overwrite\""
        );
        // The interpreter keeps the bound the generated code does not know.
        assert_eq!(
            call(&r, "take", json!({"count": 0})).await.text(),
            "Error: invalid arguments: \"count\" must be >= 1"
        );
        assert_eq!(call(&r, "take", json!({"count": 2.0})).await.text(), "2");
    }
}

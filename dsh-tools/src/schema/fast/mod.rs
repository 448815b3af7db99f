//! Validators generated at compile time: [`#[derive(FastCheck)]`](derive@crate::FastCheck).
//!
//! `#[tool]` validates arguments against the bridged schema of their type. The interpreter
//! ([`CompiledSchema`](super::CompiledSchema)) walks a node tree; a type that implements
//! [`FastCheck`] also carries straight-line code for the same decision: a match on the JSON
//! value, member by member, with bounds and names inline. Valid arguments (the common case) are
//! decided by that code alone; anything it rejects goes to the interpreter's collector, so every
//! message stays the same.
//!
//! Soundness does not rest on the derive knowing every serde and schemars attribute. Each
//! implementation also describes the schema its code decides (its *shape*, in the bridge's own
//! output form), and a tool uses the code only when that shape equals the type's bridged schema
//! (annotations such as `description` and `default` aside). On any difference, a
//! `#[schemars(range(min = 1))]` the derive does not read, say, the tool keeps the interpreter and
//! logs why at `debug` level (target `dsh_tools::schema::fast`). [`ArgsValidator::fast_path`]
//! reports which one a type gets.
//!
//! The struct form of `#[tool]` uses it when the author's type derives it. For the inline form,
//! `#[tool]` declares the check of its generated arguments struct itself, in the *compact* form:
//! a constant member table (`Tool::GENERATED_CHECK`) checked by one shared loop. It adds no
//! function to the tool (50 such tools rebuild with about 2 % more rustc instructions, see
//! BENCHMARKS.md) and runs at about 1.4–1.7× a serde decode instead of about 1.15× (the
//! interpreter: about 1.9×).
//! `#[dsh_tools(compact)]` asks the derive for that form too; `#[dsh_tools(crate = path)]` names
//! this crate when it is re-exported under another path.
//!
//! The derive reads serde's `rename`, `rename_all`, `deny_unknown_fields`, `default`, `tag`,
//! `skip` and `skip_deserializing`; it covers structs with named fields, enums of unit variants
//! and internally tagged enums of struct and unit variants; every other type (or a field whose
//! type has no fast check) makes the whole type fall back to the interpreter, and a generic type
//! is a compile error. Implemented here for `bool`, `String`, `PathBuf`, the integer types up to
//! 64 bits (`i128` / `u128` have none), `f64`, `Option<T>`, `Vec<T>`, `Box<T>` and `HashMap` /
//! `BTreeMap` with `String` keys.
//!
//! ```
//! use dsh_tools::FastCheck;
//! use dsh_tools::schema::fast::ArgsValidator;
//! use serde::Deserialize;
//! use serde_json::json;
//!
//! #[derive(Deserialize, schemars::JsonSchema, FastCheck)]
//! struct ReadArgs {
//!     path: String,
//!     offset: Option<u32>,
//! }
//!
//! let validator = ArgsValidator::of::<ReadArgs>(false)?;
//! assert!(validator.fast_path().is_ok());
//! assert!(validator.validate(&json!({"path": "a.txt", "offset": 3})).is_ok());
//! assert_eq!(
//!     validator.validate(&json!({"offset": -1})).unwrap_err(),
//!     [
//!         r#"missing required property "path""#,
//!         r#""offset" must match exactly one oneOf branch (matched 0): "offset" must be >= 0 (or null)"#,
//!     ]
//! );
//! # Ok::<(), dsh_tools::schema::bridge::BridgeError>(())
//! ```

pub(crate) mod check;
pub(crate) mod generated;
pub(crate) mod probe;
mod shape;
mod standard;
pub(crate) mod validator;

pub use check::FastCheck;
pub use validator::ArgsValidator;

// What generated code calls (the member tables, the probes, the shape builders) is public only
// at `__private::fast`: not API.

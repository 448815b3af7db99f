//! The typed specs: `ValueSchemaSpec`, `PropertySpec`, `ParameterSchemaSpec`, built in code or
//! deserialized from author JSON (through the author pass, so messages match).

mod annotations;
mod author;
mod tree;
mod walk;

pub use annotations::Annotations;
pub use tree::{
    ArraySpec, ObjectSpec, OneOfSpec, ParameterSchemaSpec, PropertySpec, ScalarSpec,
    ValueSchemaSpec,
};

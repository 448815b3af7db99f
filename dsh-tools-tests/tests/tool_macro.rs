//! `#[tool]` at run time: the generated definitions through a registry, their model-facing
//! schemas as snapshots, and a property test over argument values.

mod tool_macro {
    pub(crate) mod behaviour;
    pub(crate) mod properties;
    pub(crate) mod snapshots;
    pub(crate) mod tools;
}

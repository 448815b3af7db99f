//! The author DSL (spec §1): `ValueSchemaSpec` / `ParameterSchemaSpec`.

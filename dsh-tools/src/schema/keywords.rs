//! The JSON Schema vocabulary, spelled once: a constant per keyword the crate sorts keywords by,
//! and the named sets its modules read (as serde keeps its attribute names in one
//! `internals/symbol.rs`).
//!
//! Who reads which set:
//!
//! | reader | sets |
//! |---|---|
//! | `schema::subset` (is a value a schema of the subset?) | [`CONSTRAINTS`] (message order), [`ANNOTATIONS`], [`EXTENSION`], the per-type sets, [`BOUNDS`], [`COUNTS`], [`SUBSET_TEXT`] |
//! | `schema::compile` (which string / number nodes are plain) | [`MEMBERS`], [`STRING_KEYWORDS`], [`BOUNDS`] |
//! | `schema::dsl` (the author keys of each node kind) | [`ANNOTATIONS`], [`MEMBERS`] and the keyword constants |
//! | `schema::fast` (shapes compared annotations aside) | [`ANNOTATIONS`], [`NOTES`] |
//! | `schema::bridge` (what it drops, follows and reports) | [`NOTES`], [`BOUNDS`], [`COUNTS`], [`SCHEMA_MAPS`], [`SUBSCHEMAS`], [`SUBSET_TEXT`] and the constants |
//! | `code::sdk` (a property's JSDoc tags) | [`EXTENSION`] |
//! | `provider::dialect` (what each grammar accepts) | [`EXTENSION`], [`BOUNDS`], [`COUNTS`] and the constants, a provider's grammar as a list of sets |
//! | `provider::transform` (which keywords are annotations) | [`ANNOTATIONS`] and the constants |
//!
//! Where two readers' lists differ on purpose, the difference is a set of its own here (the
//! bridge's and `fast`'s extra [`NOTES`] beside the subset's [`ANNOTATIONS`]), never a second
//! spelling.

use std::fmt;

// ---- the subset's keywords (spec §2.1) ----

pub(crate) const TYPE: &str = "type";
pub(crate) const ONE_OF: &str = "oneOf";
pub(crate) const PROPERTIES: &str = "properties";
pub(crate) const REQUIRED: &str = "required";
pub(crate) const ADDITIONAL_PROPERTIES: &str = "additionalProperties";
pub(crate) const ITEMS: &str = "items";
pub(crate) const ENUM: &str = "enum";
pub(crate) const CONST: &str = "const";
pub(crate) const MINIMUM: &str = "minimum";
pub(crate) const MAXIMUM: &str = "maximum";
pub(crate) const EXCLUSIVE_MINIMUM: &str = "exclusiveMinimum";
pub(crate) const EXCLUSIVE_MAXIMUM: &str = "exclusiveMaximum";
pub(crate) const MIN_LENGTH: &str = "minLength";
pub(crate) const MAX_LENGTH: &str = "maxLength";
pub(crate) const PATTERN: &str = "pattern";
pub(crate) const MIN_ITEMS: &str = "minItems";
pub(crate) const MAX_ITEMS: &str = "maxItems";
pub(crate) const UNIQUE_ITEMS: &str = "uniqueItems";
pub(crate) const DESCRIPTION: &str = "description";
pub(crate) const TITLE: &str = "title";
pub(crate) const DEFAULT: &str = "default";
pub(crate) const EXAMPLES: &str = "examples";

// ---- beyond the subset: what the bridge rewrites or drops, and the dialects' own ----

pub(crate) const ANY_OF: &str = "anyOf";
pub(crate) const ALL_OF: &str = "allOf";
pub(crate) const NOT: &str = "not";
pub(crate) const IF: &str = "if";
pub(crate) const THEN: &str = "then";
pub(crate) const ELSE: &str = "else";
pub(crate) const REF: &str = "$ref";
pub(crate) const DEFS: &str = "$defs";
pub(crate) const DEFINITIONS: &str = "definitions";
pub(crate) const SCHEMA: &str = "$schema";
pub(crate) const ID: &str = "$id";
pub(crate) const COMMENT: &str = "$comment";
pub(crate) const FORMAT: &str = "format";
pub(crate) const DEPRECATED: &str = "deprecated";
pub(crate) const READ_ONLY: &str = "readOnly";
pub(crate) const WRITE_ONLY: &str = "writeOnly";
pub(crate) const UNEVALUATED_PROPERTIES: &str = "unevaluatedProperties";
pub(crate) const PATTERN_PROPERTIES: &str = "patternProperties";
pub(crate) const PROPERTY_NAMES: &str = "propertyNames";
pub(crate) const DEPENDENT_SCHEMAS: &str = "dependentSchemas";
pub(crate) const PREFIX_ITEMS: &str = "prefixItems";
pub(crate) const ADDITIONAL_ITEMS: &str = "additionalItems";
pub(crate) const UNEVALUATED_ITEMS: &str = "unevaluatedItems";
pub(crate) const CONTAINS: &str = "contains";
/// OpenAPI 3.0's `T` or null (Gemini `parameters` spells nullability with it).
pub(crate) const NULLABLE: &str = "nullable";
/// OpenAPI's single example (JSON Schema's is [`EXAMPLES`], an array).
pub(crate) const EXAMPLE: &str = "example";

// ---- the subset's sets ----

/// The subset's constraint keywords, in the fixed order every keyword-list message uses.
pub(crate) const CONSTRAINTS: [&str; 16] = [
    PROPERTIES,
    REQUIRED,
    ADDITIONAL_PROPERTIES,
    ITEMS,
    ENUM,
    CONST,
    MINIMUM,
    MAXIMUM,
    EXCLUSIVE_MINIMUM,
    EXCLUSIVE_MAXIMUM,
    MIN_LENGTH,
    MAX_LENGTH,
    PATTERN,
    MIN_ITEMS,
    MAX_ITEMS,
    UNIQUE_ITEMS,
];

/// The extension's constraints (beyond the reference implementation's subset), in
/// [`CONSTRAINTS`]' order: the tail after `const`. The SDK shows each as a JSDoc tag; every
/// non-strict dialect accepts them all.
pub(crate) const EXTENSION: &[&str] = CONSTRAINTS.split_at(6).1;

/// The subset's annotations: they describe and never decide.
pub(crate) const ANNOTATIONS: [&str; 4] = [DESCRIPTION, TITLE, DEFAULT, EXAMPLES];

/// The members keywords of a scalar node (`enum`, `const`).
pub(crate) const MEMBERS: [&str; 2] = [ENUM, CONST];

/// The constraints that apply to `object` only.
pub(crate) const OBJECT_KEYWORDS: [&str; 3] = [PROPERTIES, REQUIRED, ADDITIONAL_PROPERTIES];

/// The constraints that apply to `array` only.
pub(crate) const ARRAY_KEYWORDS: [&str; 4] = [ITEMS, MIN_ITEMS, MAX_ITEMS, UNIQUE_ITEMS];

/// The constraints that apply to `string` only.
pub(crate) const STRING_KEYWORDS: [&str; 3] = [MIN_LENGTH, MAX_LENGTH, PATTERN];

/// The numeric bounds (`number` and `integer`), in the order the bridge keeps them.
pub(crate) const BOUNDS: [&str; 4] = [MINIMUM, MAXIMUM, EXCLUSIVE_MINIMUM, EXCLUSIVE_MAXIMUM];

/// The non-negative integer counts (string lengths, item counts), in the order the bridge keeps
/// them.
pub(crate) const COUNTS: [&str; 4] = [MIN_LENGTH, MAX_LENGTH, MIN_ITEMS, MAX_ITEMS];

/// The subset's keywords as the unsupported-keyword message lists them:
/// `type/oneOf/properties/…/uniqueItems + annotations`.
pub(crate) const SUBSET_TEXT: SubsetText = SubsetText;

/// Displays as the subset's keyword list ([`SUBSET_TEXT`]).
#[derive(Clone, Copy)]
pub(crate) struct SubsetText;

impl fmt::Display for SubsetText {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(TYPE)?;
        for kw in [ONE_OF].iter().chain(&CONSTRAINTS) {
            write!(f, "/{kw}")?;
        }
        f.write_str(" + annotations")
    }
}

// ---- beyond the subset ----

/// Notes with no validation meaning that the subset has no keyword for: the bridge drops them,
/// and `fast`'s shape comparison ignores them beside the [`ANNOTATIONS`].
pub(crate) const NOTES: [&str; 4] = [COMMENT, READ_ONLY, WRITE_ONLY, DEPRECATED];

/// Keywords whose value is a map of schemas (JSON Schema 2020-12 and draft 7).
pub(crate) const SCHEMA_MAPS: [&str; 5] = [
    PROPERTIES,
    PATTERN_PROPERTIES,
    DEFS,
    DEFINITIONS,
    DEPENDENT_SCHEMAS,
];

/// Keywords whose value is a schema or an array of schemas (JSON Schema 2020-12 and draft 7).
pub(crate) const SUBSCHEMAS: [&str; 15] = [
    ADDITIONAL_PROPERTIES,
    UNEVALUATED_PROPERTIES,
    ITEMS,
    PREFIX_ITEMS,
    ADDITIONAL_ITEMS,
    UNEVALUATED_ITEMS,
    CONTAINS,
    PROPERTY_NAMES,
    ANY_OF,
    ONE_OF,
    ALL_OF,
    NOT,
    IF,
    THEN,
    ELSE,
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_subset_text_lists_type_one_of_and_every_constraint() {
        assert_eq!(
            SUBSET_TEXT.to_string(),
            "type/oneOf/properties/required/additionalProperties/items/enum/const/minimum/maximum/exclusiveMinimum/exclusiveMaximum/minLength/maxLength/pattern/minItems/maxItems/uniqueItems + annotations"
        );
    }

    #[test]
    fn the_per_type_sets_and_members_partition_the_constraints() {
        let mut all: Vec<&str> = [
            &OBJECT_KEYWORDS[..],
            &ARRAY_KEYWORDS,
            &STRING_KEYWORDS,
            &BOUNDS,
            &MEMBERS,
        ]
        .concat();
        let mut constraints = CONSTRAINTS.to_vec();
        all.sort_unstable();
        constraints.sort_unstable();
        assert_eq!(all, constraints);
        assert_eq!(EXTENSION.len(), 10);
        assert_eq!(EXTENSION[0], MINIMUM);
    }
}

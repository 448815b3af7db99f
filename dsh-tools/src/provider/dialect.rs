//! Dialects as data: each provider's wrapper shape, name rule, nullable spelling and what its
//! schema grammar accepts (`../spec/providers.md` §2.1–2.2).

use crate::schema::keywords::{
    ADDITIONAL_PROPERTIES, ANY_OF, BOUNDS, CONST, COUNTS, DEFAULT, DESCRIPTION, ENUM, EXAMPLES,
    EXTENSION, ITEMS, MAX_ITEMS, MAXIMUM, MIN_ITEMS, MINIMUM, NULLABLE, ONE_OF, PATTERN,
    PROPERTIES, REQUIRED, TITLE, TYPE,
};
use std::fmt;
use std::str::FromStr;

/// The deepest schema the transform walks (no provider accepts anything near it; OpenAI strict
/// stops at 10 levels of objects).
pub const MAX_EXPORT_DEPTH: usize = 128;

/// The model API a set of tools is exported to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Provider {
    /// OpenAI Chat Completions (`{"type": "function", "function": {…}}`).
    OpenAiChat,
    /// OpenAI Responses (flat `{"type": "function", "name", …}`).
    OpenAiResponses,
    /// Anthropic Messages (`input_schema`).
    Anthropic,
    /// Google Gemini with `parametersJsonSchema` (JSON Schema).
    Gemini,
    /// Google Gemini with `parameters` (the OpenAPI 3.0 subset `Schema`).
    GeminiOpenApi,
    /// DeepSeek (the OpenAI Chat Completions wrapper; strict mode is its beta endpoint).
    DeepSeek,
}

impl Provider {
    /// Every provider, in a fixed order.
    pub const ALL: [Provider; 6] = [
        Provider::OpenAiChat,
        Provider::OpenAiResponses,
        Provider::Anthropic,
        Provider::Gemini,
        Provider::GeminiOpenApi,
        Provider::DeepSeek,
    ];

    /// The dialect's id (`openai-chat`, `openai-responses`, `anthropic`, `gemini`,
    /// `gemini-openapi`, `deepseek`).
    pub const fn id(self) -> &'static str {
        match self {
            Provider::OpenAiChat => "openai-chat",
            Provider::OpenAiResponses => "openai-responses",
            Provider::Anthropic => "anthropic",
            Provider::Gemini => "gemini",
            Provider::GeminiOpenApi => "gemini-openapi",
            Provider::DeepSeek => "deepseek",
        }
    }

    /// Whether the provider has a strict mode (Gemini constrains nothing further).
    pub const fn has_strict(self) -> bool {
        !matches!(self, Provider::Gemini | Provider::GeminiOpenApi)
    }
}

/// A dialect: a provider and whether its strict mode is on. Chosen per request, never baked
/// into a tool.
///
/// ```
/// use dsh_tools::provider::{Dialect, Provider};
///
/// let d: Dialect = "openai-chat".parse().unwrap();
/// assert_eq!(d, Dialect::new(Provider::OpenAiChat));
/// assert!(Dialect::strict(Provider::OpenAiChat).is_strict());
/// assert!("mistral".parse::<Dialect>().is_err());
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Dialect {
    provider: Provider,
    strict: bool,
}

impl Dialect {
    /// The provider's default (non-strict) dialect.
    pub const fn new(provider: Provider) -> Self {
        Self {
            provider,
            strict: false,
        }
    }

    /// The provider's strict mode (for a provider without one, the same as [`new`](Self::new)).
    pub const fn strict(provider: Provider) -> Self {
        Self {
            provider,
            strict: provider.has_strict(),
        }
    }

    /// The provider.
    pub const fn provider(self) -> Provider {
        self.provider
    }

    /// Whether strict mode is on.
    pub const fn is_strict(self) -> bool {
        self.strict
    }

    /// The dialect's name: the provider id, with ` (strict)` when strict.
    pub fn name(self) -> String {
        if self.strict {
            format!("{} (strict)", self.provider.id())
        } else {
            self.provider.id().to_owned()
        }
    }

    pub(crate) fn rules(self) -> Rules {
        use Provider::*;
        let strict = self.strict;
        let p = self.provider;
        Rules {
            closure: strict && matches!(p, OpenAiChat | OpenAiResponses | DeepSeek),
            no_additional_schema: strict || p == GeminiOpenApi,
            anthropic_strict_closure: strict && p == Anthropic,
            union_root_forbidden: matches!(p, Anthropic) || (strict && p != Gemini),
            one_of_as_any_of: strict || matches!(p, Gemini | GeminiOpenApi | DeepSeek),
            const_as_enum: strict || matches!(p, Gemini | GeminiOpenApi),
            nullable: match p {
                GeminiOpenApi => Nullable::Flag,
                _ => Nullable::AnyOf,
            },
            openapi_types: p == GeminiOpenApi,
            drop_additional_properties: p == GeminiOpenApi,
            max_depth: match p {
                OpenAiChat | OpenAiResponses if strict => Some(10),
                _ => None,
            },
            max_properties: match p {
                OpenAiChat | OpenAiResponses | DeepSeek if strict => Some(5000),
                _ => None,
            },
            max_enum_values: match p {
                OpenAiChat | OpenAiResponses if strict => Some(1000),
                _ => None,
            },
            supported: supported(p, strict),
            name: match p {
                OpenAiChat | OpenAiResponses | DeepSeek => NameRule {
                    max: 64,
                    extra: "_-",
                    first_letter: false,
                },
                Anthropic => NameRule {
                    max: 64,
                    extra: "_-",
                    first_letter: false,
                },
                Gemini | GeminiOpenApi => NameRule {
                    max: 63,
                    extra: "_.:-",
                    first_letter: true,
                },
            },
        }
    }
}

impl fmt::Display for Dialect {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.name())
    }
}

/// A dialect id that is not one of [`Provider::ALL`]'s.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error(
    "unknown dialect {0:?} (expected one of openai-chat, openai-responses, anthropic, gemini, gemini-openapi, deepseek)"
)]
pub struct UnknownDialect(pub String);

impl FromStr for Dialect {
    type Err = UnknownDialect;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Provider::ALL
            .into_iter()
            .find(|p| p.id() == s)
            .map(Dialect::new)
            .ok_or_else(|| UnknownDialect(s.to_owned()))
    }
}

/// How a nullable value is spelled.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Nullable {
    /// `anyOf: [T, {"type": "null"}]`.
    AnyOf,
    /// `nullable: true` (OpenAPI 3.0).
    Flag,
}

/// A provider's function-name rule: ASCII letters, digits and `extra`, at most `max` long,
/// starting with a letter or `_` when `first_letter`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct NameRule {
    pub(crate) max: usize,
    pub(crate) extra: &'static str,
    pub(crate) first_letter: bool,
}

impl NameRule {
    pub(crate) fn allows(&self, name: &str) -> bool {
        !name.is_empty()
            && name.len() <= self.max
            && name
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || self.extra.as_bytes().contains(&b))
            && (!self.first_letter
                || name
                    .bytes()
                    .next()
                    .is_some_and(|b| b.is_ascii_alphabetic() || b == b'_'))
    }

    /// `name` made to fit: other characters become `_`, then it is cut to length.
    pub(crate) fn fit(&self, name: &str) -> String {
        let mut out: String = name
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || (c.is_ascii() && self.extra.contains(c)) {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        if out.is_empty()
            || (self.first_letter
                && !out
                    .bytes()
                    .next()
                    .is_some_and(|b| b.is_ascii_alphabetic() || b == b'_'))
        {
            out.insert(0, '_');
        }
        out.truncate(self.max);
        out
    }
}

/// What a dialect's schema grammar does, as data the transform reads.
#[derive(Clone, Debug)]
pub(crate) struct Rules {
    /// OpenAI / DeepSeek strict: every property required, optional ones nullable,
    /// `additionalProperties: false` everywhere.
    pub(crate) closure: bool,
    /// Anthropic strict: `additionalProperties: false` everywhere, `required` kept.
    pub(crate) anthropic_strict_closure: bool,
    /// A schema-valued `additionalProperties` (a map) cannot be expressed.
    pub(crate) no_additional_schema: bool,
    /// The root must be a plain object (no `oneOf` / `anyOf` at the top).
    pub(crate) union_root_forbidden: bool,
    pub(crate) one_of_as_any_of: bool,
    pub(crate) const_as_enum: bool,
    pub(crate) nullable: Nullable,
    /// Gemini `parameters`: upper-case OpenAPI type names.
    pub(crate) openapi_types: bool,
    /// Gemini `parameters` rejects `additionalProperties` altogether.
    pub(crate) drop_additional_properties: bool,
    pub(crate) max_depth: Option<usize>,
    pub(crate) max_properties: Option<usize>,
    pub(crate) max_enum_values: Option<usize>,
    /// Keywords the grammar accepts, as sets of the keyword table (every other is moved into
    /// the description or dropped).
    pub(crate) supported: &'static [&'static [&'static str]],
    pub(crate) name: NameRule,
}

/// The structural keywords every dialect keeps (the transform rewrites them as needed).
const CORE: &[&str] = &[
    TYPE,
    PROPERTIES,
    REQUIRED,
    ITEMS,
    ENUM,
    ANY_OF,
    DESCRIPTION,
    ADDITIONAL_PROPERTIES,
    NULLABLE,
];

fn supported(p: Provider, strict: bool) -> &'static [&'static [&'static str]] {
    use Provider::*;
    match (p, strict) {
        // OpenAI Structured Outputs, "Supported schemas".
        (OpenAiChat | OpenAiResponses, true) => &[&[TITLE, PATTERN, MIN_ITEMS, MAX_ITEMS], &BOUNDS],
        // Anthropic strict: no numeric, string-length or item-count constraints.
        (Anthropic, true) => &[&[TITLE, PATTERN, DEFAULT, EXAMPLES]],
        // DeepSeek strict beta: no string lengths, no item counts.
        (DeepSeek, true) => &[&[TITLE, PATTERN, DEFAULT], &BOUNDS],
        // Gemini `parametersJsonSchema`: the documented keyword list.
        (Gemini, _) => &[&[TITLE, MINIMUM, MAXIMUM, MIN_ITEMS, MAX_ITEMS]],
        // Gemini `parameters` (OpenAPI 3.0 `Schema`): no exclusive bounds, no `uniqueItems`.
        (GeminiOpenApi, _) => &[&[TITLE, PATTERN, MINIMUM, MAXIMUM, DEFAULT], &COUNTS],
        // Non-strict modes accept JSON Schema as is: every constraint of the subset's extension.
        _ => &[&[TITLE, DEFAULT, EXAMPLES, CONST, ONE_OF], EXTENSION],
    }
}

impl Rules {
    pub(crate) fn keeps(&self, keyword: &str) -> bool {
        CORE.contains(&keyword) || self.supported.iter().any(|set| set.contains(&keyword))
    }
}

//! serde's `rename_all` rules, applied as serde applies them to fields and to variants.

/// serde's `rename_all` rules.
#[derive(Clone, Copy)]
pub(crate) enum Rule {
    Lower,
    Upper,
    Pascal,
    Camel,
    Snake,
    ScreamingSnake,
    Kebab,
    ScreamingKebab,
}

impl Rule {
    pub(crate) fn parse(s: &str) -> Option<Rule> {
        Some(match s {
            "lowercase" => Rule::Lower,
            "UPPERCASE" => Rule::Upper,
            "PascalCase" => Rule::Pascal,
            "camelCase" => Rule::Camel,
            "snake_case" => Rule::Snake,
            "SCREAMING_SNAKE_CASE" => Rule::ScreamingSnake,
            "kebab-case" => Rule::Kebab,
            "SCREAMING-KEBAB-CASE" => Rule::ScreamingKebab,
            _ => return None,
        })
    }

    /// As serde's `RenameRule::apply_to_field` (fields are snake_case identifiers).
    pub(crate) fn field(self, name: &str) -> String {
        match self {
            Rule::Lower | Rule::Snake => name.to_owned(),
            Rule::Upper | Rule::ScreamingSnake => name.to_ascii_uppercase(),
            Rule::Pascal => {
                let mut out = String::new();
                let mut capitalize = true;
                for c in name.chars() {
                    if c == '_' {
                        capitalize = true;
                    } else if capitalize {
                        out.push(c.to_ascii_uppercase());
                        capitalize = false;
                    } else {
                        out.push(c);
                    }
                }
                out
            }
            Rule::Camel => {
                let pascal = Rule::Pascal.field(name);
                let mut chars = pascal.chars();
                match chars.next() {
                    Some(c) => c.to_ascii_lowercase().to_string() + chars.as_str(),
                    None => String::new(),
                }
            }
            Rule::Kebab => name.replace('_', "-"),
            Rule::ScreamingKebab => name.to_ascii_uppercase().replace('_', "-"),
        }
    }

    /// As serde's `RenameRule::apply_to_variant` (variants are PascalCase identifiers).
    pub(crate) fn variant(self, name: &str) -> String {
        let snake = || {
            let mut out = String::new();
            for (i, c) in name.char_indices() {
                if i > 0 && c.is_uppercase() {
                    out.push('_');
                }
                out.push(c.to_ascii_lowercase());
            }
            out
        };
        match self {
            Rule::Pascal => name.to_owned(),
            Rule::Lower => name.to_ascii_lowercase(),
            Rule::Upper => name.to_ascii_uppercase(),
            Rule::Camel => {
                let mut chars = name.chars();
                match chars.next() {
                    Some(c) => c.to_ascii_lowercase().to_string() + chars.as_str(),
                    None => String::new(),
                }
            }
            Rule::Snake => snake(),
            Rule::ScreamingSnake => snake().to_ascii_uppercase(),
            Rule::Kebab => snake().replace('_', "-"),
            Rule::ScreamingKebab => snake().to_ascii_uppercase().replace('_', "-"),
        }
    }
}

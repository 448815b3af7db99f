//! The attributes `#[derive(FastCheck)]` reads: `#[dsh_tools(crate = ..., compact)]`, and the
//! serde keys that change what a type accepts (`rename`, `rename_all`, `deny_unknown_fields`,
//! `default`, `tag`, `skip` / `skip_deserializing`). A key it does not model marks the type or
//! member unsupported, with the reason; a malformed attribute is an error in `Ctxt`, and the
//! next attribute is read all the same.

use super::case::Rule;
use crate::ctxt::Ctxt;
use proc_macro2::TokenStream;
use syn::ext::IdentExt;
use syn::meta::ParseNestedMeta;
use syn::{Attribute, Path};

#[derive(Default)]
pub(crate) struct Container {
    pub(crate) krate: Option<Path>,
    /// `#[dsh_tools(compact)]`: a struct checked from a member table.
    pub(crate) compact: bool,
    pub(crate) rename_all: Option<Rule>,
    pub(crate) deny_unknown: bool,
    pub(crate) default: bool,
    pub(crate) tag: Option<String>,
    /// Why the model does not cover this type.
    pub(crate) unsupported: Option<String>,
}

#[derive(Default)]
pub(crate) struct Member {
    pub(crate) rename: Option<String>,
    pub(crate) default: bool,
    pub(crate) skip: bool,
    pub(crate) unsupported: Option<String>,
}

/// Skips a key's value: `= expr` or `(…)`.
fn skip_value(meta: &ParseNestedMeta<'_>) -> syn::Result<()> {
    if meta.input.peek(syn::Token![=]) {
        meta.value()?.parse::<syn::Expr>()?;
    } else if meta.input.peek(syn::token::Paren) {
        let content;
        syn::parenthesized!(content in meta.input);
        content.parse::<TokenStream>()?;
    }
    Ok(())
}

/// A key's string value.
enum Text {
    /// `key = "text"`.
    Literal(String),
    /// The `key(…)` form (read as unsupported).
    List,
    /// Not a string literal: reported.
    Invalid,
}

/// `key = "text"`, or the `key(…)` form; a value that is not a string literal is reported, and
/// the attribute's next key is read.
fn string_value(meta: &ParseNestedMeta<'_>, cx: &mut Ctxt) -> syn::Result<Text> {
    if meta.input.peek(syn::Token![=]) {
        match meta.value()?.parse::<syn::Expr>()? {
            syn::Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Str(text),
                ..
            }) => Ok(Text::Literal(text.value())),
            other => {
                cx.error_spanned(other, "expected string literal");
                Ok(Text::Invalid)
            }
        }
    } else {
        skip_value(meta)?;
        Ok(Text::List)
    }
}

fn key_name(meta: &ParseNestedMeta<'_>) -> String {
    meta.path
        .get_ident()
        .map(|i| i.unraw().to_string())
        .unwrap_or_default()
}

/// The type's attributes.
pub(crate) fn container(attrs: &[Attribute], cx: &mut Ctxt) -> Container {
    let mut c = Container::default();
    for attr in attrs {
        if attr.path().is_ident("dsh_tools") {
            let parsed = attr.parse_nested_meta(|meta| {
                if meta.path.is_ident("crate") {
                    c.krate = Some(meta.value()?.parse()?);
                } else if meta.path.is_ident("compact") {
                    c.compact = true;
                } else {
                    cx.push(meta.error("expected `crate = path` or `compact`"));
                    skip_value(&meta)?;
                }
                Ok(())
            });
            if let Err(error) = parsed {
                cx.push(error);
            }
        }
        if !attr.path().is_ident("serde") {
            continue;
        }
        let parsed = attr.parse_nested_meta(|meta| {
            let key = key_name(&meta);
            match key.as_str() {
                "rename_all" => match string_value(&meta, cx)? {
                    Text::Literal(text) => match Rule::parse(&text) {
                        Some(rule) => c.rename_all = Some(rule),
                        None => c.unsupported = Some("this form of `rename_all`".into()),
                    },
                    Text::List => c.unsupported = Some("this form of `rename_all`".into()),
                    Text::Invalid => {}
                },
                "deny_unknown_fields" => c.deny_unknown = true,
                "default" => {
                    skip_value(&meta)?;
                    c.default = true;
                }
                "tag" => {
                    c.tag = match string_value(&meta, cx)? {
                        Text::Literal(tag) => Some(tag),
                        Text::List | Text::Invalid => None,
                    }
                }
                // Annotations and serialization: no effect on what the schema accepts.
                "rename" | "crate" | "bound" | "expecting" => skip_value(&meta)?,
                _ => {
                    skip_value(&meta)?;
                    c.unsupported = Some(format!("`#[serde({key})]`"));
                }
            }
            Ok(())
        });
        if let Err(error) = parsed {
            cx.push(error);
        }
    }
    c
}

/// A field's or variant's attributes.
pub(crate) fn member(attrs: &[Attribute], cx: &mut Ctxt) -> Member {
    let mut m = Member::default();
    for attr in attrs.iter().filter(|a| a.path().is_ident("serde")) {
        let parsed = attr.parse_nested_meta(|meta| {
            let key = key_name(&meta);
            match key.as_str() {
                "rename" => match string_value(&meta, cx)? {
                    Text::Literal(name) => m.rename = Some(name),
                    Text::List => m.unsupported = Some("this form of `rename`".into()),
                    Text::Invalid => {}
                },
                "default" => {
                    skip_value(&meta)?;
                    m.default = true;
                }
                "skip" | "skip_deserializing" => m.skip = true,
                // Serialization only, or not part of the schema.
                "alias"
                | "skip_serializing"
                | "skip_serializing_if"
                | "serialize_with"
                | "deserialize_with"
                | "with"
                | "bound"
                | "borrow" => skip_value(&meta)?,
                _ => {
                    skip_value(&meta)?;
                    m.unsupported = Some(format!("`#[serde({key})]`"));
                }
            }
            Ok(())
        });
        if let Err(error) = parsed {
            cx.push(error);
        }
    }
    m
}

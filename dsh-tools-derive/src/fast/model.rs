//! A typed model of the type `#[derive(FastCheck)]` checks: the shape serde accepts (an object
//! of named members, a set of names, objects told apart by a tag), each member with the name and
//! default serde gives it, or the reason the model does not cover the type. Members' attributes
//! are read only where the shape needs them (not past a container key the model does not cover,
//! nor in the variants of an enum that is not tagged).

use super::attr::{self, Container};
use super::case::Rule;
use crate::ctxt::Ctxt;
use syn::ext::IdentExt;
use syn::{Attribute, Data, DeriveInput, Fields, Type, Variant};

/// One member of an object, as serde names it.
pub(crate) struct Field<'a> {
    /// Its position among the declared members (skipped ones included).
    pub(crate) index: usize,
    pub(crate) name: String,
    /// Left out, it takes its default (`#[serde(default)]` on it or on the container).
    pub(crate) default: bool,
    pub(crate) ty: &'a Type,
}

/// A struct's or variant's members (those serde deserializes).
pub(crate) struct Object<'a> {
    pub(crate) fields: Vec<Field<'a>>,
    /// Why the model does not cover this object (the last reason found).
    pub(crate) unsupported: Option<String>,
}

/// What the type accepts.
pub(crate) enum Shape<'a> {
    /// A struct with named fields: an object.
    Struct(Object<'a>),
    /// An enum of unit variants: one of the names; a documented variant is a `const` branch.
    Names {
        names: Vec<String>,
        documented: Vec<bool>,
    },
    /// An internally tagged enum: objects told apart by the member `tag`.
    Tagged {
        tag: String,
        variants: Vec<(String, Object<'a>)>,
    },
    /// Not modelled, and why.
    Unsupported(String),
}

/// A struct's or variant's members as `(attributes, name, type)`; `None` for tuple fields.
fn named(fields: &Fields) -> Option<Vec<(&[Attribute], &syn::Ident, &Type)>> {
    match fields {
        Fields::Named(named) => Some(
            named
                .named
                .iter()
                .map(|f| (&f.attrs[..], f.ident.as_ref().expect("named"), &f.ty))
                .collect(),
        ),
        Fields::Unit => Some(Vec::new()),
        Fields::Unnamed(_) => None,
    }
}

/// The object of `fields` (tuple fields are unsupported).
fn object<'a>(
    fields: &'a Fields,
    rule: Option<Rule>,
    container_default: bool,
    cx: &mut Ctxt,
) -> Object<'a> {
    match named(fields) {
        Some(members) => object_of(&members, rule, container_default, cx),
        None => Object {
            fields: Vec::new(),
            unsupported: Some("tuple fields".into()),
        },
    }
}

/// The object of `named` members: each one's serde name (`rename`, else `rule` applied) and
/// default; skipped members are left out.
pub(crate) fn object_of<'a>(
    named: &[(&[Attribute], &syn::Ident, &'a Type)],
    rule: Option<Rule>,
    container_default: bool,
    cx: &mut Ctxt,
) -> Object<'a> {
    let mut object = Object {
        fields: Vec::new(),
        unsupported: None,
    };
    for (index, &(attrs, ident, ty)) in named.iter().enumerate() {
        let m = attr::member(attrs, cx);
        if let Some(why) = m.unsupported {
            object.unsupported = Some(why);
        }
        if m.skip {
            continue;
        }
        let raw = ident.unraw().to_string();
        let name = m
            .rename
            .unwrap_or_else(|| rule.map_or_else(|| raw.clone(), |r| r.field(&raw)));
        object.fields.push(Field {
            index,
            name,
            default: m.default || container_default,
            ty,
        });
    }
    object
}

/// The shape of `input`, read with its container attributes `c`.
pub(crate) fn shape<'a>(input: &'a DeriveInput, c: &Container, cx: &mut Ctxt) -> Shape<'a> {
    if let Some(why) = &c.unsupported {
        return Shape::Unsupported(why.clone());
    }
    match &input.data {
        Data::Struct(data) => {
            let object = object(&data.fields, c.rename_all, c.default, cx);
            match (&object.unsupported, &data.fields) {
                (Some(why), _) => Shape::Unsupported(why.clone()),
                (None, Fields::Named(_)) => Shape::Struct(object),
                (None, _) => Shape::Unsupported("a struct without named fields".into()),
            }
        }
        Data::Enum(data) => enum_shape(&data.variants, c, cx),
        Data::Union(_) => Shape::Unsupported("a union".into()),
    }
}

fn enum_shape<'a>(
    variants: impl IntoIterator<Item = &'a Variant>,
    c: &Container,
    cx: &mut Ctxt,
) -> Shape<'a> {
    let mut names = Vec::new();
    let mut kept = Vec::new();
    let mut why = None;
    for v in variants {
        let m = attr::member(&v.attrs, cx);
        if let Some(w) = m.unsupported {
            why = Some(w);
        }
        if m.skip {
            continue;
        }
        let raw = v.ident.unraw().to_string();
        let name = m.rename.unwrap_or_else(|| {
            c.rename_all
                .map_or_else(|| raw.clone(), |r| r.variant(&raw))
        });
        names.push(name.clone());
        kept.push((name, v));
    }
    let mut sorted = names.clone();
    sorted.sort();
    sorted.dedup();
    if sorted.len() != names.len() {
        why = Some("two variants with one name".to_owned());
    }
    if names.is_empty() {
        why = Some("an enum without variants to deserialize".to_owned());
    }
    let all_unit = kept.iter().all(|(_, v)| matches!(v.fields, Fields::Unit));
    match (why, &c.tag) {
        (Some(why), _) => Shape::Unsupported(why),
        (None, None) if all_unit => {
            // schemars lists plain unit variants in one `enum`; a documented one
            // is a `const` branch of a `oneOf` after it.
            let documented = kept
                .iter()
                .map(|(_, v)| {
                    // `/// text` is `#[doc = "text"]`; `#[doc(hidden)]` is no text.
                    v.attrs.iter().any(|a| {
                        a.path().is_ident("doc") && matches!(a.meta, syn::Meta::NameValue(_))
                    })
                })
                .collect();
            Shape::Names { names, documented }
        }
        (None, None) => Shape::Unsupported("an externally tagged enum with data".into()),
        (None, Some(tag)) => {
            let mut objects = Vec::new();
            let mut why = None;
            for (name, v) in kept {
                // Variants take no `rename_all` of the enum for their fields.
                let object = object(&v.fields, None, false, cx);
                if let Some(w) = &object.unsupported {
                    why = Some(w.clone());
                }
                objects.push((name, object));
            }
            match why {
                Some(why) => Shape::Unsupported(why),
                None => Shape::Tagged {
                    tag: tag.clone(),
                    variants: objects,
                },
            }
        }
    }
}

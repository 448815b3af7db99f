//! `#[derive(FastCheck)]`: straight-line validation code for a type's bridged schema, and the
//! shape that code decides (compared with the real schema at registration).
//!
//! The model reads serde's `rename`, `rename_all`, `deny_unknown_fields`, `default`, `tag` and
//! `skip` / `skip_deserializing`. Anything it does not model makes the type's shape an `Err` with
//! the reason, so the type keeps the interpreter: the model can be partial and still sound.

use proc_macro2::TokenStream;
use quote::{format_ident, quote, quote_spanned};
use syn::ext::IdentExt;
use syn::meta::ParseNestedMeta;
use syn::spanned::Spanned;
use syn::{Attribute, Data, DeriveInput, Fields, LitStr, Path, Type};

pub(crate) fn derive(input: TokenStream) -> TokenStream {
    let input: DeriveInput = match syn::parse2(input) {
        Ok(input) => input,
        Err(e) => return e.to_compile_error(),
    };
    match expand(&input, None) {
        Ok(tokens) => tokens,
        Err(e) => e.to_compile_error(),
    }
}

/// serde's `rename_all` rules.
#[derive(Clone, Copy)]
enum Rule {
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
    fn parse(s: &str) -> Option<Rule> {
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
    fn field(self, name: &str) -> String {
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
    fn variant(self, name: &str) -> String {
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

#[derive(Default)]
struct Container {
    krate: Option<Path>,
    /// `#[dsh_tools(compact)]`: a struct checked from a member table.
    compact: bool,
    rename_all: Option<Rule>,
    deny_unknown: bool,
    default: bool,
    tag: Option<String>,
    /// Why the model does not cover this type.
    unsupported: Option<String>,
}

#[derive(Default)]
struct Member {
    rename: Option<String>,
    default: bool,
    skip: bool,
    unsupported: Option<String>,
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

/// `key = "text"`, or `None` for the `key(…)` form (read as unsupported).
fn string_value(meta: &ParseNestedMeta<'_>) -> syn::Result<Option<String>> {
    if meta.input.peek(syn::Token![=]) {
        Ok(Some(meta.value()?.parse::<LitStr>()?.value()))
    } else {
        skip_value(meta)?;
        Ok(None)
    }
}

fn key_name(meta: &ParseNestedMeta<'_>) -> String {
    meta.path
        .get_ident()
        .map(|i| i.unraw().to_string())
        .unwrap_or_default()
}

fn container(attrs: &[Attribute]) -> syn::Result<Container> {
    let mut c = Container::default();
    for attr in attrs {
        if attr.path().is_ident("dsh_tools") {
            attr.parse_nested_meta(|meta| {
                if meta.path.is_ident("crate") {
                    c.krate = Some(meta.value()?.parse()?);
                    Ok(())
                } else if meta.path.is_ident("compact") {
                    c.compact = true;
                    Ok(())
                } else {
                    Err(meta.error("expected `crate = path` or `compact`"))
                }
            })?;
        }
        if !attr.path().is_ident("serde") {
            continue;
        }
        attr.parse_nested_meta(|meta| {
            let key = key_name(&meta);
            match key.as_str() {
                "rename_all" => match string_value(&meta)?.as_deref().map(Rule::parse) {
                    Some(Some(rule)) => c.rename_all = Some(rule),
                    _ => c.unsupported = Some("this form of `rename_all`".into()),
                },
                "deny_unknown_fields" => c.deny_unknown = true,
                "default" => {
                    skip_value(&meta)?;
                    c.default = true;
                }
                "tag" => c.tag = string_value(&meta)?,
                // Annotations and serialization: no effect on what the schema accepts.
                "rename" | "crate" | "bound" | "expecting" => skip_value(&meta)?,
                _ => {
                    skip_value(&meta)?;
                    c.unsupported = Some(format!("`#[serde({key})]`"));
                }
            }
            Ok(())
        })?;
    }
    Ok(c)
}

fn member(attrs: &[Attribute]) -> syn::Result<Member> {
    let mut m = Member::default();
    for attr in attrs.iter().filter(|a| a.path().is_ident("serde")) {
        attr.parse_nested_meta(|meta| {
            let key = key_name(&meta);
            match key.as_str() {
                "rename" => match string_value(&meta)? {
                    Some(name) => m.rename = Some(name),
                    None => m.unsupported = Some("this form of `rename`".into()),
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
        })?;
    }
    Ok(m)
}

/// Code for one object: the shape's field list and the check of a map `m` bound in scope.
struct ObjectCode {
    fields: Vec<TokenStream>,
    /// The same fields, as constant expressions (the compact form's table).
    const_fields: Vec<TokenStream>,
    lets: Vec<TokenStream>,
    arms: Vec<TokenStream>,
    required: Vec<TokenStream>,
    unsupported: Option<String>,
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

fn object(
    fields: &Fields,
    rule: Option<Rule>,
    container_default: bool,
    table: bool,
    fast: &TokenStream,
) -> syn::Result<ObjectCode> {
    match named(fields) {
        Some(members) => object_of(&members, rule, container_default, table, fast),
        None => Ok(ObjectCode {
            fields: Vec::new(),
            const_fields: Vec::new(),
            lets: Vec::new(),
            arms: Vec::new(),
            required: Vec::new(),
            unsupported: Some("tuple fields".into()),
        }),
    }
}

/// The code for an object of `named` members: with `table`, only the compact form's constant
/// table (`const_fields`); otherwise only the straight-line code's pieces.
fn object_of(
    named: &[(&[Attribute], &syn::Ident, &Type)],
    rule: Option<Rule>,
    container_default: bool,
    table: bool,
    fast: &TokenStream,
) -> syn::Result<ObjectCode> {
    let mut code = ObjectCode {
        fields: Vec::new(),
        const_fields: Vec::new(),
        lets: Vec::new(),
        arms: Vec::new(),
        required: Vec::new(),
        unsupported: None,
    };
    for (i, &(attrs, ident, ty)) in named.iter().enumerate() {
        let m = member(attrs)?;
        if let Some(why) = m.unsupported {
            code.unsupported = Some(why);
        }
        if m.skip {
            continue;
        }
        let raw = ident.unraw().to_string();
        let name = m
            .rename
            .unwrap_or_else(|| rule.map_or_else(|| raw.clone(), |r| r.field(&raw)));
        let default = m.default || container_default;
        // One probe per field and function: a `Yes<T>` (T's own check, static dispatch) where
        // `T: FastCheck`, a `No<T>` otherwise.
        let probe = quote_spanned! {ty.span()=> #fast::Probe::<#ty>::NEW.checker() };
        if table {
            // In a constant: the probe in a closure that is never called, its return type the
            // pick.
            code.const_fields.push(quote_spanned! {ty.span()=>
                #fast::field(#name, #default, &|| #probe)
            });
            continue;
        }
        code.fields.push(quote! {
            #fast::Field { name: #name, fns: #probe.fns(), default: #default }
        });
        let (c, r) = (format_ident!("__c{}", i), format_ident!("__r{}", i));
        code.lets.push(quote! {
            let #c = #probe;
            let #r = !(#c.optional() || #default);
        });
        code.arms.push(quote! {
            if #fast::key_is(__k, #name) {
                __required += usize::from(#r);
                #c.check(__x)
            } else
        });
        code.required.push(quote!(usize::from(#r)));
    }
    Ok(code)
}

/// The check of map `__m` against an object's members (`tag`: a known member already matched).
fn object_check(
    code: &ObjectCode,
    tag: Option<&str>,
    closed: TokenStream,
    fast: &TokenStream,
) -> TokenStream {
    let arms = &code.arms;
    let tag_arm = tag.map(|t| quote!(if #fast::key_is(__k, #t) { __required += 1; true } else));
    let tag_count = usize::from(tag.is_some());
    let required = &code.required;
    let lets = &code.lets;
    quote! {{
        #(#lets)*
        let mut __required = 0usize;
        for (__k, __x) in __m {
            let __k = __k.as_bytes();
            let __ok = #tag_arm #(#arms)* {
                !(#closed) && #fast::extra_ok(__x)
            };
            if !__ok {
                return false;
            }
        }
        __required == #tag_count #(+ #required)*
    }}
}

/// The compact form's table of `code`'s members, as a constant expression of type `Members`.
fn members(code: &ObjectCode, deny_unknown: bool, fast: &TokenStream) -> TokenStream {
    let fields = &code.const_fields;
    quote!(#fast::Members::new(&[#(#fields),*], #deny_unknown))
}

/// `Tool::GENERATED_CHECK` for the struct `#[tool]` writes for the inline form (`args`, serde's
/// `deny_unknown_fields` unless the tool allows unknown arguments): its member table, a
/// constant, so the check adds no function to the tool.
pub(crate) fn inline_check(
    struct_ident: &syn::Ident,
    args: &[crate::ast::InlineArg],
    deny_unknown: bool,
    krate: &TokenStream,
) -> syn::Result<TokenStream> {
    let fast = quote!(#krate::schema::fast);
    let named: Vec<_> = args
        .iter()
        .map(|a| (&a.attrs[..], &a.ident, &a.ty))
        .collect();
    let code = object_of(&named, None, false, true, &fast)?;
    if let Some(why) = &code.unsupported {
        let why = format!("`{struct_ident}`: {why} (not modelled by #[tool])");
        return Ok(quote!(::core::option::Option::Some(#fast::Generated::Unsupported(#why))));
    }
    let members = members(&code, deny_unknown, &fast);
    Ok(quote!(::core::option::Option::Some(#fast::Generated::Members(&#members))))
}

/// The impl for `input`; `krate` overrides a `#[dsh_tools(crate = …)]`.
pub(crate) fn expand(input: &DeriveInput, krate: Option<&TokenStream>) -> syn::Result<TokenStream> {
    if !input.generics.params.is_empty() {
        return Err(syn::Error::new(
            input.generics.span(),
            "`#[derive(FastCheck)]` does not support generic types",
        ));
    }
    let c = container(&input.attrs)?;
    let krate = match (krate, &c.krate) {
        (Some(krate), _) => krate.clone(),
        (None, Some(path)) => quote!(#path),
        (None, None) => quote!(::dsh_tools),
    };
    let fast = quote!(#krate::schema::fast);
    let json = quote!(#krate::serde_json);
    let ident = &input.ident;
    let unsupported = |why: &str| {
        let why = format!("`{ident}`: {why} (not modelled by #[derive(FastCheck)])");
        quote! {
            fn fast_shape(_: bool) -> ::core::result::Result<#json::Value, ::std::string::String> {
                ::core::result::Result::Err(::std::string::String::from(#why))
            }
            fn fast_check(_: &#json::Value, _: bool) -> bool {
                false
            }
        }
    };
    let mut extra = TokenStream::new();
    let body = if let Some(why) = &c.unsupported {
        unsupported(why)
    } else {
        match &input.data {
            Data::Struct(data) => {
                let code = object(&data.fields, c.rename_all, c.default, c.compact, &fast)?;
                match (&code.unsupported, &data.fields) {
                    (Some(why), _) => unsupported(why),
                    (None, Fields::Named(_)) if c.compact => {
                        // A constant table: no code for it but these two calls.
                        let members = members(&code, c.deny_unknown, &fast);
                        extra = quote! {
                            impl #ident {
                                #[doc(hidden)]
                                const __DSH_TOOLS_MEMBERS: &'static #fast::Members = &#members;
                            }
                        };
                        quote! {
                            fn fast_shape(__closed_arg: bool) -> ::core::result::Result<#json::Value, ::std::string::String> {
                                Self::__DSH_TOOLS_MEMBERS.shape(__closed_arg)
                            }

                            fn fast_check(__value: &#json::Value, __closed_arg: bool) -> bool {
                                Self::__DSH_TOOLS_MEMBERS.check(__value, __closed_arg)
                            }
                        }
                    }
                    (None, Fields::Named(_)) => {
                        let deny = c.deny_unknown;
                        let fields = &code.fields;
                        let check = object_check(&code, None, quote!(__closed), &fast);
                        quote! {
                            fn fast_shape(__closed_arg: bool) -> ::core::result::Result<#json::Value, ::std::string::String> {
                                #fast::object_shape(__closed_arg || #deny, ::core::option::Option::None, &[#(#fields),*])
                            }

                            fn fast_check(__value: &#json::Value, __closed_arg: bool) -> bool {
                                let #json::Value::Object(__m) = __value else {
                                    return false;
                                };
                                let __closed = __closed_arg || #deny;
                                #check
                            }
                        }
                    }
                    (None, _) => unsupported("a struct without named fields"),
                }
            }
            Data::Enum(data) => {
                let mut names = Vec::new();
                let mut variants = Vec::new();
                let mut why = None;
                for v in &data.variants {
                    let m = member(&v.attrs)?;
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
                    variants.push((name, v));
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
                let all_unit = variants
                    .iter()
                    .all(|(_, v)| matches!(v.fields, Fields::Unit));
                match (why, &c.tag) {
                    (Some(why), _) => unsupported(&why),
                    (None, None) if all_unit => {
                        // schemars lists plain unit variants in one `enum`; a documented one
                        // is a `const` branch of a `oneOf` after it.
                        let documented: Vec<bool> = variants
                            .iter()
                            .map(|(_, v)| {
                                // `/// text` is `#[doc = "text"]`; `#[doc(hidden)]` is no text.
                                v.attrs.iter().any(|a| {
                                    a.path().is_ident("doc")
                                        && matches!(a.meta, syn::Meta::NameValue(_))
                                })
                            })
                            .collect();
                        let plain: Vec<&String> = names
                            .iter()
                            .zip(&documented)
                            .filter(|(_, d)| !**d)
                            .map(|(n, _)| n)
                            .collect();
                        let consts: Vec<&String> = names
                            .iter()
                            .zip(&documented)
                            .filter(|(_, d)| **d)
                            .map(|(n, _)| n)
                            .collect();
                        quote! {
                            fn fast_shape(_: bool) -> ::core::result::Result<#json::Value, ::std::string::String> {
                                #fast::names_shape(&[#(#plain),*], &[#(#consts),*])
                            }

                            #[allow(unreachable_patterns)]
                            fn fast_check(__value: &#json::Value, _: bool) -> bool {
                                ::core::matches!(__value.as_str(), ::core::option::Option::Some(#(#names)|*))
                            }
                        }
                    }
                    (None, None) => unsupported("an externally tagged enum with data"),
                    (None, Some(tag)) => {
                        let mut shapes = Vec::new();
                        let mut arms = Vec::new();
                        let mut why = None;
                        for (name, v) in &variants {
                            // Variants take no `rename_all` of the enum for their fields.
                            let code = object(&v.fields, None, false, false, &fast)?;
                            if let Some(w) = &code.unsupported {
                                why = Some(w.clone());
                            }
                            let deny = c.deny_unknown;
                            let fields = &code.fields;
                            shapes.push(quote! {
                                #fast::object_shape(#deny, ::core::option::Option::Some((#tag, #name)), &[#(#fields),*])
                            });
                            let check = object_check(&code, Some(tag), quote!(#deny), &fast);
                            arms.push(quote!(#name => #check,));
                        }
                        match why {
                            Some(why) => unsupported(&why),
                            None => quote! {
                                fn fast_shape(_: bool) -> ::core::result::Result<#json::Value, ::std::string::String> {
                                        #fast::one_of_shape(::std::vec![#(#shapes),*])
                                }

                                fn fast_check(__value: &#json::Value, _: bool) -> bool {
                                        let #json::Value::Object(__m) = __value else {
                                        return false;
                                    };
                                    let ::core::option::Option::Some(#json::Value::String(__tag)) = #fast::member(__m, #tag) else {
                                        return false;
                                    };
                                    #[allow(unreachable_patterns)]
                                    match __tag.as_str() {
                                        #(#arms)*
                                        _ => false,
                                    }
                                }
                            },
                        }
                    }
                }
            }
            Data::Union(_) => unsupported("a union"),
        }
    };
    Ok(quote! {
        impl #fast::FastCheck for #ident {
            #body
        }
        #extra
    })
}

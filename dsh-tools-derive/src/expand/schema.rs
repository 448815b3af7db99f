//! The inline form's `JsonSchema`, written here rather than derived: the schema schemars' derive
//! would give the arguments struct, with each parameter's doc comment read as schemars reads it.

use super::respan::at_author_code;
use crate::ast::InlineArg;
use proc_macro2::TokenStream;
use quote::quote;
use syn::Ident;
use syn::spanned::Spanned;

/// A parameter's doc comment as schemars' derive reads it (lines joined with `\n`, one leading
/// space dropped from each), or `None` when one is not a string literal (`#[doc = macro!()]`).
pub(crate) fn literal_doc(attrs: &[syn::Attribute]) -> Option<String> {
    let mut lines = Vec::new();
    for attr in attrs.iter().filter(|a| a.path().is_ident("doc")) {
        let syn::Meta::NameValue(meta) = &attr.meta else {
            continue;
        };
        let syn::Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Str(text),
            ..
        }) = &meta.value
        else {
            return None;
        };
        let text = text.value();
        lines.push(text.strip_prefix(' ').map(str::to_owned).unwrap_or(text));
    }
    Some(lines.join("\n"))
}

/// schemars' split of a doc comment into a title and a description: a first line starting with
/// `#` is the title; the rest (or all of it) is the description; each trimmed.
fn title_and_description(doc: &str) -> (String, String) {
    let doc = doc.trim_matches(|c: char| c.is_ascii_whitespace());
    match doc.strip_prefix('#') {
        Some(_) => {
            let end = doc.find('\n').unwrap_or(doc.len());
            let title = doc[..end].trim_start_matches('#');
            let trim = |s: &str| s.trim_matches(|c: char| c.is_ascii_whitespace()).to_owned();
            (trim(title), trim(&doc[end..]))
        }
        None => (String::new(), doc.to_owned()),
    }
}

/// `JsonSchema` for the inline form's arguments struct `ident`: the schema schemars' derive
/// gives it (type, closed or not, each property with its doc comment, `required` for the
/// fields serde cannot leave out), built by `__private::schema`.
pub(crate) fn schema_impl(
    ident: &Ident,
    args: &[InlineArg],
    docs: &[String],
    deny_unknown: bool,
    private: &TokenStream,
) -> TokenStream {
    use syn::ext::IdentExt;
    let schemars = quote!(#private::schemars);
    let schema = quote!(#private::schema);
    let name_text = ident.to_string();
    let properties = args.iter().zip(docs).map(|(arg, doc)| {
        let name = arg.ident.unraw().to_string();
        let ty = &arg.ty;
        let (title, description) = title_and_description(doc);
        let property = quote! {
            #schema::property(
                &mut __dsh_tools_schema,
                #name,
                #title,
                #description,
                __dsh_tools_generator.subschema_for::<#ty>(),
                __dsh_tools_generator.contract().is_deserialize()
                    && #private::de::Optional::<#ty>::NEW.get(),
            );
        };
        // At the type: a type that is not `JsonSchema` is an error there.
        at_author_code(property, ty.span())
    });
    quote! {
        #[automatically_derived]
        impl #schemars::JsonSchema for #ident {
            fn schema_name() -> ::std::borrow::Cow<'static, str> {
                ::std::borrow::Cow::Borrowed(#name_text)
            }
            fn schema_id() -> ::std::borrow::Cow<'static, str> {
                ::std::borrow::Cow::Borrowed(::core::concat!(::core::module_path!(), "::", #name_text))
            }
            fn json_schema(
                __dsh_tools_generator: &mut #schemars::SchemaGenerator,
            ) -> #schemars::Schema {
                let mut __dsh_tools_schema = #schema::object(#deny_unknown);
                #(#properties)*
                __dsh_tools_schema
            }
        }
    }
}

//! What registration checks the arguments with: `GENERATED_CHECK` (the fast validator: the
//! inline form's member table, or the struct's own `FastCheck` when it has one) and, for the
//! inline form, `serde_names` (the names inside parameter types, probed for aliases).

use crate::ast::{Form, ToolFn};
use proc_macro2::TokenStream;
use quote::quote;

/// `const GENERATED_CHECK`: `inline_check` for the inline form, else a probe of `args_ty`.
pub(crate) fn generated_check(
    krate: &TokenStream,
    args_ty: &TokenStream,
    inline_check: Option<&TokenStream>,
) -> TokenStream {
    // `Args`'s generated validator: the inline form's member table; for the struct form, the
    // type's own when it has one (the probe picks `Yes` where `Args: FastCheck`, `No`
    // otherwise, in a closure that is never called).
    let fast = quote!(#krate::__private::fast);
    let check = inline_check.cloned().unwrap_or_else(|| {
        quote! {
            ::core::option::Option::Some(#fast::Generated::Code(#fast::fns_of(
                &|| #fast::Probe::<#args_ty>::NEW.checker(),
            )))
        }
    });
    quote!(const GENERATED_CHECK: ::core::option::Option<#fast::Generated> = #check;)
}

/// `serde_names` for the inline form.
///
/// The inline form's own parameters were checked for aliases when the macro expanded; the
/// names inside their types are probed at registration, except for types that hold no
/// struct or enum of the author's (strings, numbers, and lists or options of them), so the
/// common tool compiles no probe.
pub(crate) fn serde_names(tool: &ToolFn, private: &TokenStream) -> Option<TokenStream> {
    match &tool.form {
        Form::Inline(args) => {
            let probed: Vec<&syn::Type> = args
                .iter()
                .map(|a| &a.ty)
                .filter(|ty| needs_probe(ty))
                .collect();
            Some(quote! {
                fn serde_names() -> ::std::collections::BTreeSet<&'static str> {
                    #[allow(unused_mut)]
                    let mut names = ::std::collections::BTreeSet::new();
                    #( names.extend(#private::NamesOf::<#probed>::NEW.names()); )*
                    names
                }
            })
        }
        Form::Struct(_) => None,
    }
}

/// Whether a parameter type may hold a struct or enum whose serde names (aliases) need probing:
/// anything but the standard scalars and `Option`, `Vec`, `Box` or string-keyed maps of them.
fn needs_probe(ty: &syn::Type) -> bool {
    const SCALARS: &[&str] = &[
        "String", "str", "bool", "char", "i8", "i16", "i32", "i64", "i128", "isize", "u8", "u16",
        "u32", "u64", "u128", "usize", "f32", "f64", "PathBuf", "Value",
    ];
    const WRAPPERS: &[&str] = &["Option", "Vec", "Box", "BTreeMap", "HashMap", "IndexMap"];
    let mut stack = vec![ty];
    while let Some(ty) = stack.pop() {
        match ty {
            syn::Type::Reference(r) => stack.push(&r.elem),
            syn::Type::Paren(p) => stack.push(&p.elem),
            syn::Type::Group(g) => stack.push(&g.elem),
            syn::Type::Array(a) => stack.push(&a.elem),
            syn::Type::Slice(s) => stack.push(&s.elem),
            syn::Type::Tuple(t) => stack.extend(t.elems.iter()),
            syn::Type::Path(path) if path.qself.is_none() => {
                let Some(last) = path.path.segments.last() else {
                    return true;
                };
                let name = last.ident.to_string();
                if SCALARS.contains(&name.as_str()) {
                    continue;
                }
                if !WRAPPERS.contains(&name.as_str()) {
                    return true;
                }
                match &last.arguments {
                    syn::PathArguments::AngleBracketed(args) => {
                        for arg in &args.args {
                            match arg {
                                syn::GenericArgument::Type(inner) => stack.push(inner),
                                _ => return true,
                            }
                        }
                    }
                    _ => return true,
                }
            }
            _ => return true,
        }
    }
    false
}

//! The tool's own type: a unit struct named after the function with `Clone`, `Copy`, `Debug`
//! and `Default`, or, for a tool with state, a struct holding it, built with `with(state)`.

use super::names::Names;
use crate::check::Checked;
use proc_macro2::TokenStream;
use quote::quote_spanned;
use syn::Type;
use syn::spanned::Spanned;

/// The struct and its impls, spanned at the function's name: a clash with the author's own
/// type (E0428) is reported there, and `struct_name = ...` is the fix the docs give.
/// The impls are written out rather than derived: rustc re-checks a derive's output whenever
/// the lines above it move (BENCHMARKS.md, compile time).
pub(crate) fn tool_type(state: Option<&Type>, checked: &Checked, names: &Names<'_>) -> TokenStream {
    match state {
        None => unit(checked, names),
        Some(ty) => with_state(ty, checked, names),
    }
}

fn unit(checked: &Checked, names: &Names<'_>) -> TokenStream {
    let Names {
        vis, struct_ident, ..
    } = names;
    let description = &checked.description;
    let name_text = struct_ident.to_string();
    quote_spanned! {struct_ident.span()=>
        #[doc = #description]
        #vis struct #struct_ident;

        #[automatically_derived]
        impl ::core::clone::Clone for #struct_ident {
            #[inline]
            fn clone(&self) -> Self {
                *self
            }
        }

        #[automatically_derived]
        impl ::core::marker::Copy for #struct_ident {}

        #[automatically_derived]
        impl ::core::fmt::Debug for #struct_ident {
            fn fmt(&self, f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {
                f.write_str(#name_text)
            }
        }

        #[automatically_derived]
        impl ::core::default::Default for #struct_ident {
            #[inline]
            fn default() -> Self {
                Self
            }
        }
    }
}

fn with_state(ty: &Type, checked: &Checked, names: &Names<'_>) -> TokenStream {
    let Names {
        private,
        vis,
        struct_ident,
        ..
    } = names;
    let description = &checked.description;
    let with_doc = format!(
        "The `{}` tool with the state its body takes (each call gets a clone).",
        checked.name
    );
    let name_text = struct_ident.to_string();
    // At the state's type, like the call's clone: a `T` without `Clone` is one error there.
    let clone_state = quote_spanned! {ty.span()=>
        <#ty as ::core::clone::Clone>::clone(&self.state)
    };
    quote_spanned! {struct_ident.span()=>
        #[doc = #description]
        #[doc = ""]
        #[doc = "Built with `with(state)`: the tool holds the state its body takes."]
        #vis struct #struct_ident {
            state: #ty,
        }

        impl #struct_ident {
            #[doc = #with_doc]
            #vis fn with(state: #ty) -> Self {
                Self { state }
            }
        }

        #[automatically_derived]
        impl ::core::clone::Clone for #struct_ident {
            fn clone(&self) -> Self {
                Self { state: #clone_state }
            }
        }

        #[automatically_derived]
        impl ::core::fmt::Debug for #struct_ident {
            fn fmt(&self, f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {
                f.debug_struct(#name_text).finish_non_exhaustive()
            }
        }

        // The value namespace's `ReadFile` (a braced struct has none): written where a
        // tool goes (`register(ReadFile)`), it is an error naming `ReadFile::with`
        // instead of rustc's "use struct literal syntax".
        #[doc(hidden)]
        #[allow(non_upper_case_globals, dead_code)]
        #vis const #struct_ident: #private::NeedsState<#struct_ident> =
            #private::NeedsState::new();
    }
}

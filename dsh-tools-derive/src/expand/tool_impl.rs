//! `impl Tool` for the tool's type, assembled from the other parts (arguments, settings,
//! validation, cards, `call`), and `impl From<_> for ToolDefinition` (so `register(ReadFile)`
//! works).

use super::args::Arguments;
use super::names::Names;
use super::{call, cards, settings, validation};
use crate::ast::ToolFn;
use crate::attr::Attrs;
use crate::check::Checked;
use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};
use syn::spanned::Spanned;

/// `impl Tool for ReadFile`.
pub(crate) fn tool_impl(
    attrs: &Attrs,
    tool: &ToolFn,
    checked: &Checked,
    names: &Names<'_>,
    args: &Arguments,
) -> TokenStream {
    let Names {
        krate,
        private,
        struct_ident,
        output_ty,
        ..
    } = names;
    let Checked { name, description } = checked;
    let args_ty = &args.ty;
    let output_assoc = quote_spanned! {output_ty.span()=>
        <#output_ty as #private::ToolReturn>::Output
    };
    // The spanned assertions on the author's types are the impl's associated types themselves:
    // their tokens carry the author's spans, so an unsatisfied `Tool::Args` / `Tool::Output`
    // bound is reported at the parameter's or the return type (a separate assertion function
    // would only repeat each error).
    let methods = settings::methods(attrs, krate);
    let generated_check = {
        let settings = settings::settings(attrs, krate);
        let check = validation::generated_check(krate, args_ty, args.inline_check.as_ref());
        let serde_names = validation::serde_names(tool, private);
        let key_cards = cards::key_cards(attrs, krate);
        quote! {
            #settings
            #check
            #serde_names
            #key_cards
        }
    };
    let call = call::call(tool, names, &args.call_args, &args.destructure);

    // The impl's header is spanned at the return type too: an unsatisfied `Tool::Output` is
    // then reported there once, not also at `#[tool]`.
    quote_spanned! {output_ty.span()=>
        #[automatically_derived]
        impl #krate::Tool for #struct_ident {
            type Args = #args_ty;
            type Output = #output_assoc;

            fn name(&self) -> &'static str {
                #name
            }

            fn description(&self) -> &'static str {
                #description
            }

            #methods
            #generated_check

            #call
        }
    }
}

/// `impl From<ReadFile> for ToolDefinition`, through `Tool::definition`.
pub(crate) fn from_impl(names: &Names<'_>) -> TokenStream {
    let Names {
        krate,
        struct_ident,
        output_ty,
        ..
    } = names;
    quote_spanned! {output_ty.span()=>
        #[automatically_derived]
        impl ::core::convert::From<#struct_ident> for #krate::ToolDefinition {
            fn from(tool: #struct_ident) -> Self {
                #krate::Tool::definition(tool)
            }
        }
    }
}

//! What `#[tool]` emits when it finds errors: the function (so callers and the IDE keep
//! working), every error as a `compile_error!`, and, when its name is known, the tool's type
//! with stand-in impls, so that the author's `registry.register(ReadFile)` still compiles and
//! one mistake is one error (as tokio's `#[tokio::main]`, thiserror and clap do).

use crate::ast::ToolFn;
use crate::attr::Attrs;
use crate::check;
use proc_macro2::TokenStream;
use quote::{ToTokens, quote, quote_spanned};

pub(crate) fn emit(
    function: impl ToTokens,
    stand_in: Option<TokenStream>,
    errors: syn::Error,
) -> TokenStream {
    let errors = errors.into_compile_error();
    quote! {
        #function
        #stand_in
        #errors
    }
}

/// The tool's type as `register`, `register_tool`, `definition()` and `with(state)` take it: a
/// unit struct whose `Tool` impl has no arguments, no output and a body never called (the crate
/// does not compile). `None` when the name is unknown or declaring it would clash
/// (`check::fallback_type`). Spanned at the function's name, like the real type.
pub(crate) fn stand_in(attrs: &Attrs, tool: &ToolFn) -> Option<TokenStream> {
    let ident = check::fallback_type(attrs, tool)?;
    let krate = attrs.krate();
    let vis = &tool.item.vis;
    let name = tool.name();
    // A stateful tool is built with `with(state)`; any state will do here.
    let with = tool.state.is_some().then(|| {
        quote_spanned! {ident.span()=>
            impl #ident {
                #vis fn with<S>(_state: S) -> Self {
                    Self
                }
            }
        }
    });
    Some(quote_spanned! {ident.span()=>
        #[allow(dead_code, missing_docs, non_camel_case_types, unreachable_pub)]
        #[derive(
            ::core::clone::Clone,
            ::core::marker::Copy,
            ::core::fmt::Debug,
            ::core::default::Default,
        )]
        #vis struct #ident;

        #[allow(dead_code, missing_docs, unreachable_pub)]
        #with

        #[automatically_derived]
        impl #krate::Tool for #ident {
            type Args = ();
            type Output = ();

            fn name(&self) -> &'static str {
                #name
            }

            fn description(&self) -> &'static str {
                ""
            }

            fn call(
                &self,
                _: Self::Args,
                _: #krate::ToolRunContext,
            ) -> impl ::core::future::Future<
                Output = ::core::result::Result<Self::Output, #krate::ToolError>,
            > + ::core::marker::Send {
                ::core::future::pending()
            }
        }

        #[automatically_derived]
        impl ::core::convert::From<#ident> for #krate::ToolDefinition {
            fn from(tool: #ident) -> Self {
                #krate::Tool::definition(tool)
            }
        }
    })
}

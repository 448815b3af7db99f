//! The presentation cards set with `call_card = ...` and `result_card = ...`: `key_call_card`,
//! `key_result_card`, and a `definition` that builds them in however the tool is registered.

use crate::attr::Attrs;
use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};
use syn::spanned::Spanned;

/// Typed cards set on the tool itself: read by `Tool::definition` however the tool is
/// registered (`From`, `register_tool`, `.definition()`, the card methods).
pub(crate) fn key_cards(attrs: &Attrs, krate: &TokenStream) -> TokenStream {
    let call = attrs.call_card.as_ref().map(|set| {
        let path = &set.value;
        quote_spanned! {path.span()=>
            fn key_call_card() -> ::core::option::Option<
                fn(&Self::Args) -> ::core::option::Option<#krate::present::ToolCallView>,
            > {
                ::core::option::Option::Some(#path)
            }
        }
    });
    let result = attrs.result_card.as_ref().map(|set| {
        let path = &set.value;
        quote_spanned! {path.span()=>
            fn key_result_card() -> ::core::option::Option<
                fn(&Self::Args, &Self::Output)
                    -> ::core::option::Option<#krate::present::ToolResultView>,
            > {
                ::core::option::Option::Some(#path)
            }
        }
    });
    // With card keys, the tool's own `definition` builds them in (however it is
    // registered); without, the trait's defaults compile no card machinery.
    let definition = (attrs.call_card.is_some() || attrs.result_card.is_some()).then(|| {
        quote! {
            fn try_definition(
                self,
            ) -> ::core::result::Result<
                #krate::ToolDefinition,
                #krate::schema::bridge::BridgeError,
            > {
                #krate::Carded::keyed(self).try_definition()
            }
            fn definition(self) -> #krate::ToolDefinition {
                #krate::Carded::keyed(self).definition()
            }
        }
    });
    quote!(#call #result #definition)
}

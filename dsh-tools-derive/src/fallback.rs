//! What `#[tool]` emits when it finds errors: the function (so callers and the IDE keep
//! working), then every error as a `compile_error!`.

use proc_macro2::TokenStream;
use quote::{ToTokens, quote};

pub(crate) fn emit(function: impl ToTokens, errors: syn::Error) -> TokenStream {
    let errors = errors.into_compile_error();
    quote! {
        #function
        #errors
    }
}

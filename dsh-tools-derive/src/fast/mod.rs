//! `#[derive(FastCheck)]`: straight-line validation code for a type's bridged schema, and the
//! shape that code decides (compared with the real schema at registration).
//!
//! The model reads serde's `rename`, `rename_all`, `deny_unknown_fields`, `default`, `tag` and
//! `skip` / `skip_deserializing`. Anything it does not model makes the type's shape an `Err` with
//! the reason, so the type keeps the interpreter: the model can be partial and still sound.
//!
//! The stages, as for `#[tool]`: `attr` reads the attributes (`case` holds serde's renaming
//! rules), `model` turns the type into the [`Shape`](model::Shape) serde accepts, and `expand`
//! writes the code. Every problem goes to one `Ctxt`, so every malformed attribute is reported
//! in one compile; with any, only the errors are emitted.

mod attr;
mod case;
mod expand;
mod model;

use crate::ctxt::Ctxt;
use proc_macro2::TokenStream;
use quote::quote;
use syn::DeriveInput;
use syn::spanned::Spanned;

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

/// `Tool::GENERATED_CHECK` for the struct `#[tool]` writes for the inline form (`args`, serde's
/// `deny_unknown_fields` unless the tool allows unknown arguments): its member table, a
/// constant, so the check adds no function to the tool. A malformed serde attribute on a
/// parameter is an error in its place (every one, in one block expression).
pub(crate) fn inline_check(
    struct_ident: &syn::Ident,
    args: &[crate::ast::InlineArg],
    deny_unknown: bool,
    krate: &TokenStream,
) -> TokenStream {
    let fast = quote!(#krate::__private::fast);
    let named: Vec<_> = args
        .iter()
        .map(|a| (&a.attrs[..], &a.ident, &a.ty))
        .collect();
    let mut cx = Ctxt::default();
    let object = model::object_of(&named, None, false, &mut cx);
    if let Err(errors) = cx.finish() {
        let several = (&errors).into_iter().nth(1).is_some();
        let errors = errors.into_compile_error();
        // One `compile_error!` is an expression; several are one in a block.
        return if several { quote!({ #errors }) } else { errors };
    }
    if let Some(why) = &object.unsupported {
        let why = format!("`{struct_ident}`: {why} (not modelled by #[tool])");
        return quote!(::core::option::Option::Some(#fast::Generated::Unsupported(#why)));
    }
    let members = expand::members(&object, deny_unknown, &fast);
    quote!(::core::option::Option::Some(#fast::Generated::Members(&#members)))
}

/// The impl for `input`; `krate` overrides a `#[dsh_tools(crate = …)]`. Every error at once.
pub(crate) fn expand(input: &DeriveInput, krate: Option<&TokenStream>) -> syn::Result<TokenStream> {
    let mut cx = Ctxt::default();
    if !input.generics.params.is_empty() {
        cx.error(
            input.generics.span(),
            "`#[derive(FastCheck)]` does not support generic types",
        );
    }
    let c = attr::container(&input.attrs, &mut cx);
    let krate = match (krate, &c.krate) {
        (Some(krate), _) => krate.clone(),
        (None, Some(path)) => quote!(#path),
        (None, None) => quote!(::dsh_tools),
    };
    let shape = model::shape(input, &c, &mut cx);
    cx.finish()?;
    Ok(expand::impl_for(
        &input.ident,
        &shape,
        c.compact,
        c.deny_unknown,
        &krate,
    ))
}

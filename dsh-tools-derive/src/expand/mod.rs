//! Code generation: a unit struct named after the function, an `impl Tool` for it, an
//! `impl From<_> for ToolDefinition`, and for the inline form the arguments struct with its
//! `Deserialize` and `JsonSchema` impls (written here rather than derived where the parameters
//! allow: see DESIGN.md, "`#[tool]` derives nothing when it can write the code itself").
//! Generated items use absolute paths through `<crate>::__private`, `__dsh_tools_` identifiers,
//! and spans of the author's code (never the attribute's).
//!
//! This module holds the macro's entry point and the order of the parts; each part is a file:
//! `names` (what every part shares), `args` (the arguments struct and its decode), `schema` (its
//! `JsonSchema`), `tool_type` (the tool's struct), `tool_impl` (the `Tool` and `From` impls),
//! `settings` (the methods the keys set), `validation` (`GENERATED_CHECK`, `serde_names`),
//! `cards` (the presentation cards), `call` (`Tool::call`), and `respan` (spans at the author's
//! code).

mod args;
mod call;
mod cards;
mod names;
mod respan;
mod schema;
mod settings;
mod tool_impl;
mod tool_type;
mod validation;

use crate::ast::ToolFn;
use crate::attr::Attrs;
use crate::check::{self, Checked};
use crate::ctxt::Ctxt;
use crate::{attr, fallback};
use names::Names;
use proc_macro2::TokenStream;
use quote::quote;
use respan::at_author_code;
use syn::ItemFn;
use syn::spanned::Spanned;

/// The whole macro: parse, model, check, then generate or fall back.
pub(crate) fn tool(args: TokenStream, item: TokenStream) -> TokenStream {
    let mut cx = Ctxt::default();
    let attrs = attr::parse(args, &mut cx);
    let item_fn: ItemFn = match syn::parse2(item.clone()) {
        Ok(item_fn) => item_fn,
        Err(error) => {
            cx.error(
                error.span(),
                format!("`#[tool]` applies to a function (`async fn`, or `fn` for a blocking body): {error}"),
            );
            let errors = cx.finish().expect_err("an error was pushed");
            return fallback::emit(item, None, errors);
        }
    };
    let tool = ToolFn::from_item(item_fn, &mut cx);
    let checked = check::check(&attrs, &tool, &mut cx);
    match cx.finish() {
        Ok(()) => generate(&attrs, &tool, &checked),
        Err(errors) => fallback::emit(&tool.item, fallback::stand_in(&attrs, &tool), errors),
    }
}

/// The function, then the tool's type, the arguments struct, and the impls.
fn generate(attrs: &Attrs, tool: &ToolFn, checked: &Checked) -> TokenStream {
    let names = Names::new(attrs, tool);
    let args = args::arguments(attrs, tool, &names);
    let tool_struct = tool_type::tool_type(tool.state.as_ref(), checked, &names);
    let tool_impl = tool_impl::tool_impl(attrs, tool, checked, &names, &args);
    let from_impl = tool_impl::from_impl(&names);

    // The impls are spanned at the return type (see `tool_impl`), the types at the name.
    let (at_name, at_output) = (names.fn_ident.span(), names.output_ty.span());
    let tool_struct = at_author_code(tool_struct, at_name);
    let args_struct = at_author_code(args.item, at_name);
    let tool_impl = at_author_code(tool_impl, at_output);
    let from_impl = at_author_code(from_impl, at_output);
    let item = &tool.item;
    quote! {
        #item

        #tool_struct

        #args_struct

        #tool_impl

        #from_impl
    }
}

//! The names every part of the generated code shares: the crate's path and its `__private`
//! module, the tool's type, the function, its return type and visibility, and the call's two
//! `__dsh_tools_` parameters.

use crate::ast::ToolFn;
use crate::attr::Attrs;
use crate::check;
use proc_macro2::TokenStream;
use quote::{format_ident, quote};
use syn::{Ident, Type, Visibility};

pub(crate) struct Names<'a> {
    /// `::dsh_tools`, or the path set with `crate = ...`.
    pub(crate) krate: TokenStream,
    /// `<krate>::__private`.
    pub(crate) private: TokenStream,
    pub(crate) vis: &'a Visibility,
    /// The author's function.
    pub(crate) fn_ident: &'a Ident,
    /// The tool's type (`ReadFile`, or `struct_name`).
    pub(crate) struct_ident: Ident,
    /// The declared return type.
    pub(crate) output_ty: &'a Type,
    /// `call`'s context parameter.
    pub(crate) ctx_ident: Ident,
    /// `call`'s arguments parameter.
    pub(crate) args_ident: Ident,
}

impl<'a> Names<'a> {
    pub(crate) fn new(attrs: &Attrs, tool: &'a ToolFn) -> Self {
        let krate = attrs.krate();
        let private = quote!(#krate::__private);
        Names {
            private,
            krate,
            vis: &tool.item.vis,
            fn_ident: &tool.item.sig.ident,
            struct_ident: check::struct_ident(attrs, tool),
            output_ty: tool.output.as_ref().expect("checked: a return type"),
            ctx_ident: format_ident!("__dsh_tools_ctx"),
            args_ident: format_ident!("__dsh_tools_args"),
        }
    }
}

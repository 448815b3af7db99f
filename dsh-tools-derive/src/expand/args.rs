//! The tool's arguments: the author's struct, or, for the inline form, a struct built from the
//! documented parameters with its `Deserialize` written here (serde's derive where a parameter
//! has serde attributes), and what `call` passes the body (the parameters, destructured).

use super::names::Names;
use super::respan::at_author_code;
use super::schema;
use crate::ast::{Form, InlineArg, ToolFn};
use crate::attr::Attrs;
use proc_macro2::TokenStream;
use quote::{format_ident, quote};
use syn::Ident;
use syn::spanned::Spanned;

/// The arguments as the rest of the expansion uses them.
pub(crate) struct Arguments {
    /// `Tool::Args`.
    pub(crate) ty: TokenStream,
    /// The inline form's struct and its impls (empty for the struct form).
    pub(crate) item: TokenStream,
    /// What the body is called with, in order (state and context are added by `call`).
    pub(crate) call_args: Vec<TokenStream>,
    /// The inline form's `let Args { a, b } = args;`.
    pub(crate) destructure: TokenStream,
    /// The inline form's `GENERATED_CHECK` (its member table).
    pub(crate) inline_check: Option<TokenStream>,
}

fn path_string(tokens: &TokenStream) -> String {
    tokens.to_string().replace(' ', "")
}

/// The arguments: the author's struct, or one built from the parameters.
pub(crate) fn arguments(attrs: &Attrs, tool: &ToolFn, names: &Names<'_>) -> Arguments {
    let args_ident = &names.args_ident;
    match &tool.form {
        Form::Struct(ty) => Arguments {
            ty: quote!(#ty),
            item: TokenStream::new(),
            call_args: vec![quote!(#args_ident)],
            destructure: TokenStream::new(),
            inline_check: None,
        },
        Form::Inline(args) => inline(attrs, args, names),
    }
}

fn inline(attrs: &Attrs, args: &[InlineArg], names: &Names<'_>) -> Arguments {
    let Names {
        krate,
        private,
        vis,
        struct_ident,
        args_ident,
        ..
    } = names;
    // The name an author would write (documented with the macro), so that rustc's
    // messages about it read naturally. Hidden from rustdoc rather than documented: a
    // doc comment on the struct would become the schema's description, which the model
    // reads.
    let ident = format_ident!("{}Args", struct_ident);
    let serde = format!("{}::serde", path_string(private));
    let schemars = format!("{}::schemars", path_string(private));
    let fields = args.iter().map(|arg| {
        let (attrs, ident, ty) = (&arg.attrs, &arg.ident, &arg.ty);
        quote!(#(#attrs)* #ident: #ty)
    });
    let idents: Vec<&Ident> = args.iter().map(|a| &a.ident).collect();
    let allow_unknown = attrs
        .allow_unknown_args
        .as_ref()
        .is_some_and(|set| set.value);
    let deny = if allow_unknown {
        quote!(#[serde(crate = #serde)])
    } else {
        quote!(#[serde(crate = #serde, deny_unknown_fields)])
    };
    // Without serde attributes on the parameters (the common tool), `#[tool]` writes
    // the decode itself, and without schemars attributes either, the schema: rustc
    // re-checks a derive's output whenever the lines above it move, and regenerates
    // serde_json's code for it (BENCHMARKS.md, compile time).
    let has_attr = |name: &str| {
        args.iter()
            .any(|a| a.attrs.iter().any(|attr| attr.path().is_ident(name)))
    };
    let docs: Option<Vec<String>> = args.iter().map(|a| schema::literal_doc(&a.attrs)).collect();
    let own_decode = !has_attr("serde");
    let own_schema = own_decode && !has_attr("schemars") && docs.is_some();
    let decode = if own_decode {
        decode_impl(&ident, args, !allow_unknown, private)
    } else {
        TokenStream::new()
    };
    let (derive, helpers, schema) = match (own_decode, own_schema, docs) {
        (true, true, Some(docs)) => (
            TokenStream::new(),
            TokenStream::new(),
            schema::schema_impl(&ident, args, &docs, !allow_unknown, private),
        ),
        (true, _, _) => (
            quote!(#[derive(#private::schemars::JsonSchema)]),
            quote!(#deny #[schemars(crate = #schemars)]),
            TokenStream::new(),
        ),
        (false, _, _) => (
            quote!(#[derive(#private::serde::Deserialize, #private::schemars::JsonSchema)]),
            quote!(#deny #[schemars(crate = #schemars)]),
            TokenStream::new(),
        ),
    };
    let item = quote! {
        #[doc(hidden)]
        #[allow(non_camel_case_types)]
        #derive
        #helpers
        #vis struct #ident {
            #(#fields,)*
        }

        #decode

        #schema
    };
    // Its generated validator, declared here rather than by `#[derive(FastCheck)]`, in
    // the compact form: a constant member table checked by one shared loop, so the
    // check adds no function to the tool (BENCHMARKS.md, compile time).
    let inline_check = crate::fast::inline_check(&ident, args, !allow_unknown, krate);
    Arguments {
        ty: quote!(#ident),
        item,
        call_args: idents.iter().map(|n| quote!(#n)).collect(),
        destructure: quote!(let #ident { #(#idents),* } = #args_ident;),
        inline_check: Some(inline_check),
    }
}

/// `Deserialize` for the inline form's arguments struct `ident`, as serde's derive would decode
/// it from a map (a sequence is not accepted: arguments are a JSON object). The per-field work
/// is in `__private::de`, generic only over the field types and the map.
fn decode_impl(
    ident: &Ident,
    args: &[InlineArg],
    deny_unknown: bool,
    private: &TokenStream,
) -> TokenStream {
    use syn::ext::IdentExt;
    let de = quote!(#private::de);
    let serde = quote!(#private::serde);
    let names: Vec<String> = args.iter().map(|a| a.ident.unraw().to_string()).collect();
    let fields: Vec<&Ident> = args.iter().map(|a| &a.ident).collect();
    let types: Vec<&syn::Type> = args.iter().map(|a| &a.ty).collect();
    let slots: Vec<Ident> = (0..args.len())
        .map(|i| format_ident!("__dsh_tools_slot{i}"))
        .collect();
    let indices = 0..args.len();
    // Each field's decode at its type: a type that is not `Deserialize` is one error there.
    let values = args
        .iter()
        .zip(&slots)
        .zip(&names)
        .map(|((arg, slot), name)| {
            let value = quote!(#de::value(&mut __dsh_tools_map, &mut #slot, #name)?);
            at_author_code(value, arg.ty.span())
        });
    let takes = args
        .iter()
        .zip(&slots)
        .zip(&names)
        .map(|((arg, slot), name)| {
            at_author_code(quote!(#de::field(#slot, #name)?), arg.ty.span())
        });
    let expecting = format!("struct {ident}");
    let struct_name = ident.to_string();
    quote! {
        #[automatically_derived]
        impl<'de> #serde::Deserialize<'de> for #ident {
            fn deserialize<__D: #serde::Deserializer<'de>>(
                __dsh_tools_deserializer: __D,
            ) -> ::core::result::Result<Self, __D::Error> {
                const __DSH_TOOLS_FIELDS: &[&str] = &[#(#names),*];
                struct __DshToolsVisitor;
                impl<'de> #serde::de::Visitor<'de> for __DshToolsVisitor {
                    type Value = #ident;
                    fn expecting(
                        &self,
                        f: &mut ::core::fmt::Formatter<'_>,
                    ) -> ::core::fmt::Result {
                        f.write_str(#expecting)
                    }
                    fn visit_map<__A: #serde::de::MapAccess<'de>>(
                        self,
                        mut __dsh_tools_map: __A,
                    ) -> ::core::result::Result<#ident, __A::Error> {
                        #( let mut #slots: ::core::option::Option<#types> = ::core::option::Option::None; )*
                        while let ::core::option::Option::Some(__dsh_tools_key) =
                            __dsh_tools_map.next_key_seed(#de::Key {
                                fields: __DSH_TOOLS_FIELDS,
                                deny_unknown: #deny_unknown,
                            })?
                        {
                            match __dsh_tools_key {
                                #( #indices => #values, )*
                                _ => #de::skip(&mut __dsh_tools_map)?,
                            }
                        }
                        ::core::result::Result::Ok(#ident {
                            #( #fields: #takes, )*
                        })
                    }
                }
                __dsh_tools_deserializer.deserialize_struct(
                    #struct_name,
                    __DSH_TOOLS_FIELDS,
                    __DshToolsVisitor,
                )
            }
        }
    }
}

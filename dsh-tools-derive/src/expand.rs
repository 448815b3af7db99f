//! Code generation: a unit struct named after the function, an `impl Tool` for it, an
//! `impl From<_> for ToolDefinition`, and for the inline form the arguments struct with its
//! `Deserialize` and `JsonSchema` impls (written here rather than derived where the parameters
//! allow: see DESIGN.md, "`#[tool]` derives nothing when it can write the code itself").
//! Generated items use absolute paths through `<crate>::__private`, `__dsh_tools_` identifiers,
//! and spans of the author's code (never the attribute's).

use crate::ast::{Form, ToolFn};
use crate::attr::{Attrs, Concurrency};
use crate::check::{self, Checked};
use crate::ctxt::Ctxt;
use crate::{attr, fallback};
use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{Ident, ItemFn};

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
            return fallback::emit(item, errors);
        }
    };
    let tool = ToolFn::from_item(item_fn, &mut cx);
    let checked = check::check(&attrs, &tool, &mut cx);
    match cx.finish() {
        Ok(()) => generate(&attrs, &tool, &checked),
        Err(errors) => fallback::emit(&tool.item, errors),
    }
}

fn path_string(tokens: &TokenStream) -> String {
    tokens.to_string().replace(' ', "")
}

fn generate(attrs: &Attrs, tool: &ToolFn, checked: &Checked) -> TokenStream {
    let item = &tool.item;
    let vis = &item.vis;
    let fn_ident = &item.sig.ident;
    let krate = match &attrs.krate {
        Some(set) => {
            let path = &set.value;
            quote!(#path)
        }
        None => quote!(::dsh_tools),
    };
    let private = quote!(#krate::__private);
    let struct_ident = match &attrs.struct_name {
        Some(set) => set.value.clone(),
        // At the function's name: a clash with the author's own type (E0428) points there.
        None => Ident::new(&crate::ast::upper_camel(&tool.name()), fn_ident.span()),
    };
    let name = &checked.name;
    let description = &checked.description;

    // The arguments: the author's struct, or one built from the parameters.
    let ctx_ident = format_ident!("__dsh_tools_ctx");
    let args_ident = format_ident!("__dsh_tools_args");
    let mut inline_check = None;
    let (args_ty, args_struct, mut call_args, destructure) = match &tool.form {
        Form::Struct(ty) => (
            quote!(#ty),
            TokenStream::new(),
            vec![quote!(#args_ident)],
            TokenStream::new(),
        ),
        Form::Inline(args) => {
            // The name an author would write (documented with the macro), so that rustc's
            // messages about it read naturally. Hidden from rustdoc rather than documented: a
            // doc comment on the struct would become the schema's description, which the model
            // reads.
            let ident = format_ident!("{}Args", struct_ident);
            let serde = format!("{}::serde", path_string(&private));
            let schemars = format!("{}::schemars", path_string(&private));
            let fields = args.iter().map(|arg| {
                let (attrs, ident, ty) = (&arg.attrs, &arg.ident, &arg.ty);
                quote!(#(#attrs)* #ident: #ty)
            });
            let names: Vec<&Ident> = args.iter().map(|a| &a.ident).collect();
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
            let docs: Option<Vec<String>> = args.iter().map(|a| literal_doc(&a.attrs)).collect();
            let own_decode = !has_attr("serde");
            let own_schema = own_decode && !has_attr("schemars") && docs.is_some();
            let decode = if own_decode {
                decode_impl(&ident, args, !allow_unknown, &private)
            } else {
                TokenStream::new()
            };
            let (derive, helpers, schema) = match (own_decode, own_schema, docs) {
                (true, true, Some(docs)) => (
                    TokenStream::new(),
                    TokenStream::new(),
                    schema_impl(&ident, args, &docs, !allow_unknown, &private),
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
            let args_struct = quote! {
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
            inline_check = Some(
                crate::fast::inline_check(&ident, args, !allow_unknown, &krate)
                    .unwrap_or_else(|e| e.to_compile_error()),
            );
            (
                quote!(#ident),
                args_struct,
                names.iter().map(|n| quote!(#n)).collect(),
                quote!(let #ident { #(#names),* } = #args_ident;),
            )
        }
    };
    if let Some(ty) = &tool.state {
        // Spanned at the state's type: a `T` that is not `Clone` is reported there.
        call_args.insert(
            0,
            quote_spanned! {ty.span()=>
                #krate::State(<#ty as ::core::clone::Clone>::clone(&self.state))
            },
        );
    }
    if let Some(ty) = &tool.context {
        call_args.push(quote_spanned! {ty.span()=>
            <#ty as #private::ToolContext>::from_context(#ctx_ident)
        });
    }
    let ignore_ctx = tool
        .context
        .is_none()
        .then(|| quote!(::core::mem::drop(#ctx_ident);));

    let output_ty = tool.output.as_ref().expect("checked: a return type");
    let output_assoc = quote_spanned! {output_ty.span()=>
        <#output_ty as #private::ToolReturn>::Output
    };
    // The spanned assertions on the author's types are the impl's associated types themselves:
    // their tokens carry the author's spans, so an unsatisfied `Tool::Args` / `Tool::Output`
    // bound is reported at the parameter's or the return type (a separate assertion function
    // would only repeat each error).
    let into_result = if tool.blocking {
        quote_spanned! {output_ty.span()=>
            match __dsh_tools_future.await {
                ::core::result::Result::Ok(returned) => #private::ToolReturn::into_tool_result(returned),
                ::core::result::Result::Err(error) => ::core::result::Result::Err(error),
            }
        }
    } else {
        quote_spanned! {output_ty.span()=>
            #private::ToolReturn::into_tool_result(__dsh_tools_future.await)
        }
    };
    let result_ty = quote_spanned! {output_ty.span()=>
        ::core::result::Result<Self::Output, #krate::ToolError>
    };
    let send_span = fn_ident.span();
    let future = if tool.blocking {
        // The arguments are evaluated here (`self.state` is borrowed) and moved to the pool.
        let names: Vec<Ident> = (0..call_args.len())
            .map(|i| format_ident!("__dsh_tools_arg{i}"))
            .collect();
        quote_spanned! {send_span=>
            {
                let (#(#names,)*) = (#(#call_args,)*);
                #private::blocking(__dsh_tools_signal, move || #fn_ident(#(#names),*))
            }
        }
    } else {
        // The check is type-checked and never run: no function per tool to compile.
        quote_spanned! {send_span=>
            {
                let __dsh_tools_body = #fn_ident(#(#call_args),*);
                if false {
                    #private::assert_send(&__dsh_tools_body);
                }
                __dsh_tools_body
            }
        }
    };

    // Spanned at the return type: a return type that is not `Result<O, E: Into<ToolError>>`
    // fails here too, and the same error at the same span is reported once.
    // A blocking body is abandoned when its signal fires (a deadline, the caller's abort): the
    // caller is released at once, the thread finishes on its own.
    let blocking_signal = tool
        .blocking
        .then(|| quote!(let __dsh_tools_signal = #ctx_ident.signal().clone();));
    let call = quote_spanned! {output_ty.span()=>
        fn call(
            &self,
            #args_ident: Self::Args,
            #ctx_ident: #krate::ToolRunContext,
        ) -> impl ::core::future::Future<Output = #result_ty> + ::core::marker::Send {
            #blocking_signal
            #ignore_ctx
            #destructure
            let __dsh_tools_future = #future;
            let __dsh_tools_boxed: ::core::pin::Pin<::std::boxed::Box<
                dyn ::core::future::Future<Output = #result_ty> + ::core::marker::Send + '_,
            >> = ::std::boxed::Box::pin(async move { #into_result });
            __dsh_tools_boxed
        }
    };

    let title = attrs.title.as_ref().map(|set| {
        let title = &set.value.1;
        quote! {
            fn title(&self) -> ::core::option::Option<&'static str> {
                ::core::option::Option::Some(#title)
            }
        }
    });
    let setters: Vec<TokenStream> = attrs
        .hints
        .set()
        .map(|(key, set)| {
            let setter = Ident::new(key, Span::call_site());
            let value = set.value;
            quote!(.#setter(#value))
        })
        .collect();
    let hints = (!setters.is_empty()).then(|| {
        quote! {
            fn hints(&self) -> #krate::ToolHints {
                #krate::ToolHints::new() #(#setters)*
            }
        }
    });
    let timeout = attrs.timeout_ms.as_ref().map(|set| {
        let ms = set.value.1;
        quote! {
            fn timeout(&self) -> ::core::option::Option<::core::time::Duration> {
                ::core::option::Option::Some(::core::time::Duration::from_millis(#ms))
            }
        }
    });
    let timeout_grace = attrs.timeout_grace_ms.as_ref().map(|set| {
        let ms = set.value.1;
        quote! {
            fn timeout_grace(&self) -> ::core::option::Option<::core::time::Duration> {
                ::core::option::Option::Some(::core::time::Duration::from_millis(#ms))
            }
        }
    });
    let concurrency = attrs.concurrency.as_ref().map(|set| {
        let value = match &set.value {
            Concurrency::Parallel => quote!(#krate::Concurrency::Parallel),
            Concurrency::Classified(path) => {
                // The whole path at the classifier: a mismatch is reported there, not across
                // the lines between it and the tool (see `at_author_code`).
                let krate = at_author_code(krate.clone(), path.span());
                quote_spanned!(path.span()=> #krate::Concurrency::Classified(#path))
            }
        };
        quote! {
            fn concurrency(&self) -> #krate::Concurrency<Self::Args> {
                #value
            }
        }
    });
    let hook = |set: &Option<attr::Set<syn::Path>>, method: &str, ty: TokenStream| {
        set.as_ref().map(|set| {
            let method = Ident::new(method, Span::call_site());
            let path = &set.value;
            let value = quote_spanned!(path.span()=> ::std::sync::Arc::new(#path));
            quote! {
                fn #method(&self) -> ::core::option::Option<#ty> {
                    let hook: #ty = #value;
                    ::core::option::Option::Some(hook)
                }
            }
        })
    };
    let allow_unknown = attrs.allow_unknown_args.as_ref().map(|set| {
        let value = set.value;
        quote! {
            fn allow_unknown_args(&self) -> bool {
                #value
            }
        }
    });
    let render = hook(
        &attrs.render,
        "render",
        quote!(#krate::definition::RenderFn),
    );
    let present_call = hook(
        &attrs.present_call,
        "present_call",
        quote!(#krate::present::CallPresenter),
    );
    let present_result = hook(
        &attrs.present_result,
        "present_result",
        quote!(#krate::present::ResultPresenter),
    );
    let finalize = hook(
        &attrs.finalize_content,
        "finalize_content",
        quote!(#krate::definition::FinalizeFn),
    );

    // `Args`'s generated validator: the inline form's member table; for the struct form, the
    // type's own when it has one (the probe picks `Yes` where `Args: FastCheck`, `No`
    // otherwise, in a closure that is never called).
    let fast = quote!(#krate::schema::fast);
    let check = inline_check.unwrap_or_else(|| {
        quote! {
            ::core::option::Option::Some(#fast::Generated::Code(#fast::fns_of(
                &|| #fast::Probe::<#args_ty>::NEW.checker(),
            )))
        }
    });
    // Typed cards set on the tool itself: read by `Tool::definition` however the tool is
    // registered (`From`, `register_tool`, `.definition()`, the card methods).
    let key_cards = {
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
    };
    // The inline form's own parameters were checked for aliases when the macro expanded; the
    // names inside their types are probed at registration, except for types that hold no
    // struct or enum of the author's (strings, numbers, and lists or options of them), so the
    // common tool compiles no probe.
    let serde_names = match &tool.form {
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
    };
    // One function for every value building the definition asks: the methods a key set, the
    // defaults for the rest (see `Tool::__settings`).
    let settings = {
        let set = |is_set: bool, method: &str, default: TokenStream| {
            let method = Ident::new(method, Span::call_site());
            if is_set {
                quote!(#krate::Tool::#method(self))
            } else {
                default
            }
        };
        let none = quote!(::core::option::Option::None);
        let title = set(attrs.title.is_some(), "title", none.clone());
        let hints = set(
            !setters.is_empty(),
            "hints",
            quote!(#krate::ToolHints::new()),
        );
        let timeout = set(attrs.timeout_ms.is_some(), "timeout", none.clone());
        let grace = set(
            attrs.timeout_grace_ms.is_some(),
            "timeout_grace",
            none.clone(),
        );
        let concurrency = set(
            attrs.concurrency.is_some(),
            "concurrency",
            quote!(#krate::Concurrency::Exclusive),
        );
        let render = set(attrs.render.is_some(), "render", none.clone());
        let present_call = set(attrs.present_call.is_some(), "present_call", none.clone());
        let present_result = set(
            attrs.present_result.is_some(),
            "present_result",
            none.clone(),
        );
        let finalize = set(attrs.finalize_content.is_some(), "finalize_content", none);
        quote! {
            fn __settings(&self) -> #krate::tool::Settings<'_, Self::Args> {
                #krate::tool::Settings {
                    title: #title,
                    hints: #hints,
                    timeout: #timeout,
                    timeout_grace: #grace,
                    concurrency: #concurrency,
                    render: #render,
                    present_call: #present_call,
                    present_result: #present_result,
                    finalize_content: #finalize,
                }
            }
        }
    };
    let generated_check = quote! {
        #settings
        const GENERATED_CHECK: ::core::option::Option<#fast::Generated> = #check;
        #serde_names
        #key_cards
    };

    // The impl's header is spanned at the return type too: an unsatisfied `Tool::Output` is
    // then reported there once, not also at `#[tool]`.
    let tool_impl = quote_spanned! {output_ty.span()=>
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

            #title
            #hints
            #timeout
            #timeout_grace
            #concurrency
            #render
            #present_call
            #present_result
            #finalize
            #allow_unknown
            #generated_check

            #call
        }
    };

    let tool_struct = match &tool.state {
        // Spanned at the function's name: a clash with the author's own type (E0428) is
        // reported there, and `struct_name = ...` is the fix the docs give.
        // The four impls are written out rather than derived: rustc re-checks a derive's output
        // whenever the lines above it move (BENCHMARKS.md, compile time).
        None => {
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
        Some(ty) => {
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
    };

    let from_impl = quote_spanned! {output_ty.span()=>
        #[automatically_derived]
        impl ::core::convert::From<#struct_ident> for #krate::ToolDefinition {
            fn from(tool: #struct_ident) -> Self {
                #krate::Tool::definition(tool)
            }
        }
    };

    // The impls are spanned at the return type (see `tool_impl`), the types at the name.
    let (at_name, at_output) = (fn_ident.span(), output_ty.span());
    let tool_struct = at_author_code(tool_struct, at_name);
    let args_struct = at_author_code(args_struct, at_name);
    let tool_impl = at_author_code(tool_impl, at_output);
    let from_impl = at_author_code(from_impl, at_output);
    quote! {
        #item

        #tool_struct

        #args_struct

        #tool_impl

        #from_impl
    }
}

/// `Deserialize` for the inline form's arguments struct `ident`, as serde's derive would decode
/// it from a map (a sequence is not accepted: arguments are a JSON object). The per-field work
/// is in `__private::de`, generic only over the field types and the map.
fn decode_impl(
    ident: &Ident,
    args: &[crate::ast::InlineArg],
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

/// A parameter's doc comment as schemars' derive reads it (lines joined with `\n`, one leading
/// space dropped from each), or `None` when one is not a string literal (`#[doc = macro!()]`).
fn literal_doc(attrs: &[syn::Attribute]) -> Option<String> {
    let mut lines = Vec::new();
    for attr in attrs.iter().filter(|a| a.path().is_ident("doc")) {
        let syn::Meta::NameValue(meta) = &attr.meta else {
            continue;
        };
        let syn::Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Str(text),
            ..
        }) = &meta.value
        else {
            return None;
        };
        let text = text.value();
        lines.push(text.strip_prefix(' ').map(str::to_owned).unwrap_or(text));
    }
    Some(lines.join("\n"))
}

/// schemars' split of a doc comment into a title and a description: a first line starting with
/// `#` is the title; the rest (or all of it) is the description; each trimmed.
fn title_and_description(doc: &str) -> (String, String) {
    let doc = doc.trim_matches(|c: char| c.is_ascii_whitespace());
    match doc.strip_prefix('#') {
        Some(_) => {
            let end = doc.find('\n').unwrap_or(doc.len());
            let title = doc[..end].trim_start_matches('#');
            let trim = |s: &str| s.trim_matches(|c: char| c.is_ascii_whitespace()).to_owned();
            (trim(title), trim(&doc[end..]))
        }
        None => (String::new(), doc.to_owned()),
    }
}

/// `JsonSchema` for the inline form's arguments struct `ident`: the schema schemars' derive
/// gives it (type, closed or not, each property with its doc comment, `required` for the
/// fields serde cannot leave out), built by `__private::schema`.
fn schema_impl(
    ident: &Ident,
    args: &[crate::ast::InlineArg],
    docs: &[String],
    deny_unknown: bool,
    private: &TokenStream,
) -> TokenStream {
    use syn::ext::IdentExt;
    let schemars = quote!(#private::schemars);
    let schema = quote!(#private::schema);
    let name_text = ident.to_string();
    let properties = args.iter().zip(docs).map(|(arg, doc)| {
        let name = arg.ident.unraw().to_string();
        let ty = &arg.ty;
        let (title, description) = title_and_description(doc);
        let property = quote! {
            #schema::property(
                &mut __dsh_tools_schema,
                #name,
                #title,
                #description,
                __dsh_tools_generator.subschema_for::<#ty>(),
                __dsh_tools_generator.contract().is_deserialize()
                    && #private::de::Optional::<#ty>::NEW.get(),
            );
        };
        // At the type: a type that is not `JsonSchema` is an error there.
        at_author_code(property, ty.span())
    });
    quote! {
        #[automatically_derived]
        impl #schemars::JsonSchema for #ident {
            fn schema_name() -> ::std::borrow::Cow<'static, str> {
                ::std::borrow::Cow::Borrowed(#name_text)
            }
            fn schema_id() -> ::std::borrow::Cow<'static, str> {
                ::std::borrow::Cow::Borrowed(::core::concat!(::core::module_path!(), "::", #name_text))
            }
            fn json_schema(
                __dsh_tools_generator: &mut #schemars::SchemaGenerator,
            ) -> #schemars::Schema {
                let mut __dsh_tools_schema = #schema::object(#deny_unknown);
                #(#properties)*
                __dsh_tools_schema
            }
        }
    }
}

/// Gives every token `quote!` made (spanned at the `#[tool]` attribute, in the expansion's
/// context) the span `to`, a token of the author's function; tokens taken from the author's code
/// keep their own.
///
/// This is for incremental builds. Items made of attribute-spanned tokens were all re-checked
/// and re-generated by rustc whenever the file's length changed, though nothing in them had: in
/// the 50-tool crate an appended constant rebuilt in about 2.3 s instead of 1.0 s (BENCHMARKS.md,
/// compile time). Spanned at the author's own tokens, they are reused. Error messages point at
/// the function's name or return type instead of at `#[tool]`, and rustc lints the generated
/// code like the author's (`ui/pass/strict_lints.rs` keeps it clean).
///
/// A token is the attribute's when its span prints like `Span::call_site()` (the compiler's
/// `Debug` shows the context and byte range); where spans print alike (outside a compiler),
/// nothing is changed.
fn at_author_code(tokens: TokenStream, to: Span) -> TokenStream {
    let call_site = format!("{:?}", Span::call_site());
    if format!("{to:?}") == call_site {
        return tokens;
    }
    respan_call_site(tokens, &call_site, to)
}

fn respan_call_site(tokens: TokenStream, call_site: &str, to: Span) -> TokenStream {
    use proc_macro2::{Group, TokenTree};
    let fix = |span: Span| {
        if format!("{span:?}") == call_site {
            to
        } else {
            span
        }
    };
    tokens
        .into_iter()
        .map(|tree| match tree {
            TokenTree::Group(group) => {
                let mut fixed = Group::new(
                    group.delimiter(),
                    respan_call_site(group.stream(), call_site, to),
                );
                fixed.set_span(fix(group.span()));
                TokenTree::Group(fixed)
            }
            mut other => {
                other.set_span(fix(other.span()));
                other
            }
        })
        .collect()
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

#[cfg(test)]
mod tests {
    use crate::ast::upper_camel;

    #[test]
    fn camel() {
        assert_eq!(upper_camel("read_file"), "ReadFile");
        assert_eq!(upper_camel("add"), "Add");
        assert_eq!(upper_camel("_private_x"), "PrivateX");
        assert_eq!(upper_camel("do_2x"), "Do2x");
        assert_eq!(upper_camel("_"), "Tool");
    }
}

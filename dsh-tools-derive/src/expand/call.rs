//! `Tool::call`: the body called with the decoded arguments (the state cloned in first, the
//! context last), awaited on the caller's task with a `Send` check, or run on the blocking pool
//! for a plain `fn`; its return value mapped into `Result<Output, ToolError>`.

use super::names::Names;
use crate::ast::ToolFn;
use proc_macro2::TokenStream;
use quote::{format_ident, quote, quote_spanned};
use syn::Ident;
use syn::spanned::Spanned;

/// The `call` method; `call_args` are the arguments' part of the body's parameters and
/// `destructure` unpacks them from `Self::Args`.
pub(crate) fn call(
    tool: &ToolFn,
    names: &Names<'_>,
    call_args: &[TokenStream],
    destructure: &TokenStream,
) -> TokenStream {
    let Names {
        krate,
        private,
        output_ty,
        ctx_ident,
        args_ident,
        ..
    } = names;
    let call_args = with_state_and_context(tool, names, call_args);
    let ignore_ctx = tool
        .context
        .is_none()
        .then(|| quote!(::core::mem::drop(#ctx_ident);));
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
    let future = future(tool, names, &call_args);

    // Spanned at the return type: a return type that is not `Result<O, E: Into<ToolError>>`
    // fails here too, and the same error at the same span is reported once.
    // A blocking body is abandoned when its signal fires (a deadline, the caller's abort): the
    // caller is released at once, the thread finishes on its own.
    let blocking_signal = tool
        .blocking
        .then(|| quote!(let __dsh_tools_signal = #ctx_ident.signal().clone();));
    quote_spanned! {output_ty.span()=>
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
    }
}

/// The body's parameters: the state's clone first, the arguments, then the context.
fn with_state_and_context(
    tool: &ToolFn,
    names: &Names<'_>,
    call_args: &[TokenStream],
) -> Vec<TokenStream> {
    let mut call_args = call_args.to_vec();
    let Names {
        krate,
        private,
        ctx_ident,
        ..
    } = names;
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
    call_args
}

/// The body's future: awaited here (with its `Send` check), or the blocking pool's.
fn future(tool: &ToolFn, names: &Names<'_>, call_args: &[TokenStream]) -> TokenStream {
    let Names {
        private, fn_ident, ..
    } = names;
    let send_span = fn_ident.span();
    if tool.blocking {
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
    }
}

//! The `Tool` methods the keys set (title, hints, timeouts, concurrency, the hooks, unknown
//! arguments), and `__settings`, the one function that building the definition asks, returning
//! what the keys set and the trait's defaults for the rest.

use super::respan::at_author_code;
use crate::attr::{self, Attrs, Concurrency};
use proc_macro2::{Span, TokenStream};
use quote::{quote, quote_spanned};
use syn::Ident;
use syn::spanned::Spanned;

/// The methods the keys set, in the impl's order.
pub(crate) fn methods(attrs: &Attrs, krate: &TokenStream) -> TokenStream {
    let title = attrs.title.as_ref().map(|set| {
        let title = &set.value.1;
        quote! {
            fn title(&self) -> ::core::option::Option<&'static str> {
                ::core::option::Option::Some(#title)
            }
        }
    });
    let hints = hints(attrs, krate);
    let (timeout, timeout_grace) = timeouts(attrs);
    let concurrency = concurrency(attrs, krate);
    let hooks = hooks(attrs, krate);
    let allow_unknown = attrs.allow_unknown_args.as_ref().map(|set| {
        let value = set.value;
        quote! {
            fn allow_unknown_args(&self) -> bool {
                #value
            }
        }
    });
    let defer = attrs.defer_loading.as_ref().map(|set| {
        let value = set.value;
        quote! {
            fn defer_loading(&self) -> ::core::option::Option<bool> {
                ::core::option::Option::Some(#value)
            }
        }
    });
    let task = attrs.task.as_ref().map(|set| {
        let variant = Ident::new(set.value, Span::call_site());
        quote! {
            fn task_support(&self) -> #krate::task::TaskSupport {
                #krate::task::TaskSupport::#variant
            }
        }
    });
    quote! {
        #title
        #hints
        #timeout
        #timeout_grace
        #concurrency
        #hooks
        #allow_unknown
        #defer
        #task
    }
}

/// `hints`, when a hint key is set.
fn hints(attrs: &Attrs, krate: &TokenStream) -> Option<TokenStream> {
    let setters: Vec<TokenStream> = attrs
        .hints
        .set()
        .map(|(key, set)| {
            let setter = Ident::new(key, Span::call_site());
            let value = set.value;
            quote!(.#setter(#value))
        })
        .collect();
    (!setters.is_empty()).then(|| {
        quote! {
            fn hints(&self) -> #krate::ToolHints {
                #krate::ToolHints::new() #(#setters)*
            }
        }
    })
}

/// `timeout` and `timeout_grace`, each when its key is set.
fn timeouts(attrs: &Attrs) -> (Option<TokenStream>, Option<TokenStream>) {
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
    (timeout, timeout_grace)
}

/// `concurrency`, when `concurrency_safe` is set.
fn concurrency(attrs: &Attrs, krate: &TokenStream) -> Option<TokenStream> {
    attrs.concurrency.as_ref().map(|set| {
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
    })
}

/// `render`, `present_call`, `present_result` and `finalize_content`, each when its key names
/// a function.
fn hooks(attrs: &Attrs, krate: &TokenStream) -> TokenStream {
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
    quote!(#render #present_call #present_result #finalize)
}

/// One function for every value building the definition asks: the methods a key set, the
/// defaults for the rest (see `Tool::__settings`).
pub(crate) fn settings(attrs: &Attrs, krate: &TokenStream) -> TokenStream {
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
        attrs.hints.set().next().is_some(),
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
    let finalize = set(
        attrs.finalize_content.is_some(),
        "finalize_content",
        none.clone(),
    );
    let defer = set(attrs.defer_loading.is_some(), "defer_loading", none);
    let task = set(
        attrs.task.is_some(),
        "task_support",
        quote!(#krate::task::TaskSupport::Forbidden),
    );
    quote! {
        fn __settings(&self) -> #krate::__private::Settings<'_, Self::Args> {
            #krate::__private::Settings {
                title: #title,
                hints: #hints,
                timeout: #timeout,
                timeout_grace: #grace,
                concurrency: #concurrency,
                render: #render,
                present_call: #present_call,
                present_result: #present_result,
                finalize_content: #finalize,
                defer_loading: #defer,
                task_support: #task,
            }
        }
    }
}

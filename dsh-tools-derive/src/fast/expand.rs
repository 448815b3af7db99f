//! The code `#[derive(FastCheck)]` writes for a [`Shape`]: `fast_shape` (the shape the check
//! decides, compared with the real schema at registration) and `fast_check`, as straight-line
//! code, or for the compact form a constant member table checked by one shared loop.

use super::model::{Object, Shape};
use proc_macro2::TokenStream;
use quote::{format_ident, quote, quote_spanned};
use syn::Ident;
use syn::spanned::Spanned;

/// One probe per field and function: a `Yes<T>` (T's own check, static dispatch) where
/// `T: FastCheck`, a `No<T>` otherwise.
fn probe(ty: &syn::Type, fast: &TokenStream) -> TokenStream {
    quote_spanned! {ty.span()=> #fast::Probe::<#ty>::NEW.checker() }
}

/// The compact form's table of `object`'s members, as a constant expression of type `Members`.
pub(crate) fn members(object: &Object<'_>, deny_unknown: bool, fast: &TokenStream) -> TokenStream {
    let fields = object.fields.iter().map(|field| {
        let (name, default, ty) = (&field.name, field.default, field.ty);
        let probe = probe(ty, fast);
        // In a constant: the probe in a closure that is never called, its return type the
        // pick.
        quote_spanned! {ty.span()=>
            #fast::field(#name, #default, &|| #probe)
        }
    });
    quote!(#fast::Members::new(&[#(#fields),*], #deny_unknown))
}

/// Straight-line code for an object: the shape's field list and the check of a map `__m` bound
/// in scope.
struct ObjectCode {
    fields: Vec<TokenStream>,
    lets: Vec<TokenStream>,
    arms: Vec<TokenStream>,
    required: Vec<TokenStream>,
}

fn object_code(object: &Object<'_>, fast: &TokenStream) -> ObjectCode {
    let mut code = ObjectCode {
        fields: Vec::new(),
        lets: Vec::new(),
        arms: Vec::new(),
        required: Vec::new(),
    };
    for field in &object.fields {
        let (name, default) = (&field.name, field.default);
        let probe = probe(field.ty, fast);
        code.fields.push(quote! {
            #fast::Field { name: #name, fns: #probe.fns(), default: #default }
        });
        let (c, r) = (
            format_ident!("__c{}", field.index),
            format_ident!("__r{}", field.index),
        );
        code.lets.push(quote! {
            let #c = #probe;
            let #r = !(#c.optional() || #default);
        });
        code.arms.push(quote! {
            if #fast::key_is(__k, #name) {
                __required += usize::from(#r);
                #c.check(__x)
            } else
        });
        code.required.push(quote!(usize::from(#r)));
    }
    code
}

/// The check of map `__m` against an object's members (`tag`: a known member already matched).
fn object_check(
    code: &ObjectCode,
    tag: Option<&str>,
    closed: TokenStream,
    fast: &TokenStream,
) -> TokenStream {
    let arms = &code.arms;
    let tag_arm = tag.map(|t| quote!(if #fast::key_is(__k, #t) { __required += 1; true } else));
    let tag_count = usize::from(tag.is_some());
    let required = &code.required;
    let lets = &code.lets;
    quote! {{
        #(#lets)*
        let mut __required = 0usize;
        for (__k, __x) in __m {
            let __k = __k.as_bytes();
            let __ok = #tag_arm #(#arms)* {
                !(#closed) && #fast::extra_ok(__x)
            };
            if !__ok {
                return false;
            }
        }
        __required == #tag_count #(+ #required)*
    }}
}

/// `impl FastCheck for #ident` (and, for the compact form, the table it reads).
pub(crate) fn impl_for(
    ident: &Ident,
    shape: &Shape<'_>,
    compact: bool,
    deny_unknown: bool,
    krate: &TokenStream,
) -> TokenStream {
    let fast = quote!(#krate::__private::fast);
    let json = quote!(#krate::serde_json);
    let mut extra = TokenStream::new();
    let body = match shape {
        Shape::Unsupported(why) => unsupported(ident, why, &json),
        Shape::Struct(object) if compact => {
            // A constant table: no code for it but these two calls.
            let members = members(object, deny_unknown, &fast);
            extra = quote! {
                impl #ident {
                    #[doc(hidden)]
                    const __DSH_TOOLS_MEMBERS: &'static #fast::Members = &#members;
                }
            };
            quote! {
                fn fast_shape(__closed_arg: bool) -> ::core::result::Result<#json::Value, ::std::string::String> {
                    Self::__DSH_TOOLS_MEMBERS.shape(__closed_arg)
                }

                fn fast_check(__value: &#json::Value, __closed_arg: bool) -> bool {
                    Self::__DSH_TOOLS_MEMBERS.check(__value, __closed_arg)
                }
            }
        }
        Shape::Struct(object) => struct_body(object, deny_unknown, &fast, &json),
        Shape::Names { names, documented } => names_body(names, documented, &fast, &json),
        Shape::Tagged { tag, variants } => tagged_body(tag, variants, deny_unknown, &fast, &json),
    };
    quote! {
        impl #fast::FastCheck for #ident {
            #body
        }
        #extra
    }
}

/// The impl's body for a type the model does not cover: its shape is the reason, and the
/// check always defers to the interpreter.
fn unsupported(ident: &Ident, why: &str, json: &TokenStream) -> TokenStream {
    let why = format!("`{ident}`: {why} (not modelled by #[derive(FastCheck)])");
    quote! {
        fn fast_shape(_: bool) -> ::core::result::Result<#json::Value, ::std::string::String> {
            ::core::result::Result::Err(::std::string::String::from(#why))
        }
        fn fast_check(_: &#json::Value, _: bool) -> bool {
            false
        }
    }
}

fn struct_body(
    object: &Object<'_>,
    deny: bool,
    fast: &TokenStream,
    json: &TokenStream,
) -> TokenStream {
    let code = object_code(object, fast);
    let fields = &code.fields;
    let check = object_check(&code, None, quote!(__closed), fast);
    quote! {
        fn fast_shape(__closed_arg: bool) -> ::core::result::Result<#json::Value, ::std::string::String> {
            #fast::object_shape(__closed_arg || #deny, ::core::option::Option::None, &[#(#fields),*])
        }

        fn fast_check(__value: &#json::Value, __closed_arg: bool) -> bool {
            let #json::Value::Object(__m) = __value else {
                return false;
            };
            let __closed = __closed_arg || #deny;
            #check
        }
    }
}

fn names_body(
    names: &[String],
    documented: &[bool],
    fast: &TokenStream,
    json: &TokenStream,
) -> TokenStream {
    let plain: Vec<&String> = names
        .iter()
        .zip(documented)
        .filter(|(_, d)| !**d)
        .map(|(n, _)| n)
        .collect();
    let consts: Vec<&String> = names
        .iter()
        .zip(documented)
        .filter(|(_, d)| **d)
        .map(|(n, _)| n)
        .collect();
    quote! {
        fn fast_shape(_: bool) -> ::core::result::Result<#json::Value, ::std::string::String> {
            #fast::names_shape(&[#(#plain),*], &[#(#consts),*])
        }

        #[allow(unreachable_patterns)]
        fn fast_check(__value: &#json::Value, _: bool) -> bool {
            ::core::matches!(__value.as_str(), ::core::option::Option::Some(#(#names)|*))
        }
    }
}

fn tagged_body(
    tag: &str,
    variants: &[(String, Object<'_>)],
    deny: bool,
    fast: &TokenStream,
    json: &TokenStream,
) -> TokenStream {
    let mut shapes = Vec::new();
    let mut arms = Vec::new();
    for (name, object) in variants {
        let code = object_code(object, fast);
        let fields = &code.fields;
        shapes.push(quote! {
            #fast::object_shape(#deny, ::core::option::Option::Some((#tag, #name)), &[#(#fields),*])
        });
        let check = object_check(&code, Some(tag), quote!(#deny), fast);
        arms.push(quote!(#name => #check,));
    }
    quote! {
        fn fast_shape(_: bool) -> ::core::result::Result<#json::Value, ::std::string::String> {
                #fast::one_of_shape(::std::vec![#(#shapes),*])
        }

        fn fast_check(__value: &#json::Value, _: bool) -> bool {
                let #json::Value::Object(__m) = __value else {
                return false;
            };
            let ::core::option::Option::Some(#json::Value::String(__tag)) = #fast::member(__m, #tag) else {
                return false;
            };
            #[allow(unreachable_patterns)]
            match __tag.as_str() {
                #(#arms)*
                _ => false,
            }
        }
    }
}

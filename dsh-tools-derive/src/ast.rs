//! A typed model of the annotated function: its documentation, the form of its arguments, its
//! context parameter and its return type. Rules about one part are checked here; rules that
//! span several parts are in `check`.
//!
//! The form is decided by position and by doc comments, never by a type's name (with one
//! exception before the form is decided: a first parameter written `State<T>` is the tool's
//! state, as in axum, and is not part of the arguments):
//!
//! * If any parameter has a `///` doc comment, the function uses the **inline form**: every
//!   documented parameter is an argument (its doc comment is the property's description), and a
//!   last undocumented parameter is the context. Any other undocumented parameter is an error.
//! * Otherwise, with no parameter the tool takes no arguments (inline form, no properties); with
//!   one or two, the first is the **arguments struct** and the second the context. More is an
//!   error.
//!
//! An `async fn` is awaited on the caller's task; a plain `fn` is a blocking body, run on Tokio's
//! blocking pool.

use crate::ctxt::Ctxt;
use syn::ext::IdentExt;
use syn::{Attribute, FnArg, Ident, ItemFn, Pat, ReturnType, Type};

pub(crate) struct ToolFn {
    /// The function, with what rustc does not accept on parameters (doc comments, `serde` and
    /// `schemars` attributes) moved to the generated arguments struct.
    pub(crate) item: ItemFn,
    /// The function's doc comment, lines joined.
    pub(crate) docs: Option<String>,
    /// A `#[doc = ...]` whose value is not a string literal (`include_str!(...)`): its text is
    /// unknown when the macro runs.
    pub(crate) opaque_doc: Option<proc_macro2::TokenStream>,
    pub(crate) form: Form,
    /// The context parameter's type.
    pub(crate) context: Option<Type>,
    /// A first parameter of type `State<T>`: `T`.
    pub(crate) state: Option<Type>,
    /// The declared return type.
    pub(crate) output: Option<Type>,
    /// A plain `fn` (not `async`): its body runs on Tokio's blocking pool.
    pub(crate) blocking: bool,
}

pub(crate) enum Form {
    /// One parameter whose type is the arguments struct.
    Struct(Box<Type>),
    /// Arguments built from the parameters.
    Inline(Vec<InlineArg>),
}

pub(crate) struct InlineArg {
    pub(crate) ident: Ident,
    pub(crate) ty: Type,
    /// Doc comments, `serde` and `schemars` attributes, for the struct's field.
    pub(crate) attrs: Vec<Attribute>,
}

fn is_doc(attr: &Attribute) -> bool {
    attr.path().is_ident("doc")
}

fn moves_to_field(attr: &Attribute) -> bool {
    is_doc(attr) || attr.path().is_ident("serde") || attr.path().is_ident("schemars")
}

/// The text of literal `#[doc = "..."]` attributes, one leading space dropped per line.
pub(crate) fn doc_text(attrs: &[Attribute]) -> Option<String> {
    let lines: Vec<String> = attrs
        .iter()
        .filter(|a| is_doc(a))
        .filter_map(|a| match &a.meta {
            syn::Meta::NameValue(nv) => match &nv.value {
                syn::Expr::Lit(syn::ExprLit {
                    lit: syn::Lit::Str(s),
                    ..
                }) => Some(s.value()),
                _ => None,
            },
            _ => None,
        })
        // `split`, not `lines`: a blank `///` line is an empty string, and it separates
        // paragraphs.
        .flat_map(|text| {
            text.split('\n')
                .map(|l| l.strip_prefix(' ').unwrap_or(l).trim_end().to_owned())
                .collect::<Vec<_>>()
        })
        .collect();
    let text = lines.join("\n").trim().to_owned();
    (!text.is_empty()).then_some(text)
}

impl ToolFn {
    pub(crate) fn from_item(mut item: ItemFn, cx: &mut Ctxt) -> Self {
        let sig = &item.sig;
        // A plain `fn` is a blocking body: it runs on the blocking pool, where a deadline
        // releases the caller (a blocked thread cannot be preempted).
        let blocking = sig.asyncness.is_none();
        qualifiers(sig, cx);
        let output = output(sig, cx);
        let (params, state) = parameters(sig, cx);
        let (form, context) = form(&params, cx);

        for input in item.sig.inputs.iter_mut() {
            if let FnArg::Typed(param) = input {
                param.attrs.retain(|a| !moves_to_field(a));
            }
        }
        let docs = doc_text(&item.attrs);
        let opaque_doc = item.attrs.iter().find_map(|a| match &a.meta {
            syn::Meta::NameValue(nv) if is_doc(a) && !matches!(&nv.value, syn::Expr::Lit(_)) => {
                Some(quote::ToTokens::to_token_stream(&nv.value))
            }
            _ => None,
        });
        Self {
            item,
            docs,
            opaque_doc,
            form,
            context,
            state,
            output,
            blocking,
        }
    }

    /// The function's name without `r#`.
    pub(crate) fn name(&self) -> String {
        self.item.sig.ident.unraw().to_string()
    }
}

/// What a tool function cannot be: `const`, `unsafe`, `extern`, generic or variadic.
fn qualifiers(sig: &syn::Signature, cx: &mut Ctxt) {
    if let Some(constness) = &sig.constness {
        cx.error_spanned(constness, "a `#[tool]` function cannot be `const`");
    }
    if let syn::Safety::Unsafe(token) = &sig.safety {
        cx.error_spanned(
            token,
            "a `#[tool]` function cannot be `unsafe`: the registry calls it with arguments \
             from the model",
        );
    }
    if let Some(abi) = &sig.abi {
        cx.error_spanned(abi, "a `#[tool]` function cannot have an `extern` ABI");
    }
    if !sig.generics.params.is_empty() || sig.generics.where_clause.is_some() {
        cx.error_spanned(
            &sig.generics,
            "a `#[tool]` function cannot be generic: its schema is computed from concrete \
             types (write a non-generic function per type, or implement `Tool` by hand)",
        );
    }
    if let Some(variadic) = &sig.variadic {
        cx.error_spanned(variadic, "a `#[tool]` function cannot be variadic");
    }
}

/// The declared return type (required).
fn output(sig: &syn::Signature, cx: &mut Ctxt) -> Option<Type> {
    match &sig.output {
        ReturnType::Type(_, ty) => Some((**ty).clone()),
        ReturnType::Default => {
            cx.error_spanned(
                &sig.ident,
                "a `#[tool]` function returns `Result<O, E>`: add `-> Result<O, ToolError>`",
            );
            None
        }
    }
}

/// The typed parameters after the state, and the state's type (a first `State<T>`).
fn parameters(sig: &syn::Signature, cx: &mut Ctxt) -> (Vec<syn::PatType>, Option<Type>) {
    let mut params = Vec::new();
    for input in &sig.inputs {
        match input {
            FnArg::Receiver(receiver) => cx.error_spanned(
                receiver,
                "a `#[tool]` function cannot take `self`: write a free function, or \
                 implement `dsh_tools::Tool` by hand for your type",
            ),
            FnArg::Typed(param) => params.push(param.clone()),
        }
    }
    // A first parameter `State<T>` is the tool's state, outside the arguments' form.
    let state = match params.first().and_then(|p| state_type(&p.ty)) {
        Some(ty) => {
            params.remove(0);
            if let Type::Reference(_) = &ty {
                cx.error_spanned(
                    &ty,
                    "the state is held by the tool and cloned into every call, so it cannot \
                     borrow: share one value with `State<Arc<T>>` (or hold any `T: Clone + \
                     Send + Sync + 'static`)",
                );
            }
            Some(ty)
        }
        None => None,
    };
    // A documented context would become an argument the model must send.
    for param in &params {
        if param.attrs.iter().any(is_doc) && is_context(&param.ty) {
            let doc = param
                .attrs
                .iter()
                .find(|a| is_doc(a))
                .expect("checked: documented");
            cx.error_spanned(
                doc,
                "the context is never documented: remove this doc comment (a documented \
                 parameter is an argument the model sends; the last undocumented parameter \
                 is the context)",
            );
        }
    }
    for param in &params {
        if state_type(&param.ty).is_some() {
            cx.error_spanned(
                &param.ty,
                "the `State<T>` parameter comes first: `async fn f(State(s): State<T>, ...)` \
                 (a tool has at most one state; put several values in one struct)",
            );
        }
    }
    (params, state)
}

/// The arguments' form and the context's type, from the parameters after the state (see the
/// module docs).
fn form(params: &[syn::PatType], cx: &mut Ctxt) -> (Form, Option<Type>) {
    let documented: Vec<bool> = params.iter().map(|p| p.attrs.iter().any(is_doc)).collect();
    let last = params.len().saturating_sub(1);
    if documented.iter().any(|d| *d) {
        let mut args = Vec::new();
        let mut context = None;
        for (i, param) in params.iter().enumerate() {
            if documented[i] {
                if let Some(arg) = inline_arg(param, cx) {
                    args.push(arg);
                }
            } else if i == last {
                context = Some((*param.ty).clone());
            } else {
                cx.error_spanned(
                    &param.pat,
                    "document this argument with `///`: in the inline form (chosen because \
                     another parameter has a doc comment) every argument carries its \
                     description for the model; only the last parameter may be undocumented, \
                     as the context",
                );
            }
        }
        return (Form::Inline(args), context);
    }
    match params {
        [] => (Form::Inline(Vec::new()), None),
        [args] => (Form::Struct(args.ty.clone()), None),
        [args, ctx] => (Form::Struct(args.ty.clone()), Some((*ctx.ty).clone())),
        [_, _, extra @ ..] => {
            for param in extra {
                cx.error_spanned(
                    param,
                    "too many parameters: a `#[tool]` function takes its arguments struct \
                     and optionally the context (`args: Args, ctx: ToolRunContext`); to \
                     take each argument as a parameter (the inline form), document each \
                     with `///`; host state (a database, a client) is \
                     `State(db): State<Db>`, first",
                );
            }
            (
                Form::Struct(params[0].ty.clone()),
                Some((*params[1].ty).clone()),
            )
        }
    }
}

/// Whether `ty` is written `ToolRunContext` (any path ending so): for a diagnostic only.
fn is_context(ty: &Type) -> bool {
    matches!(ty, Type::Path(path) if path.path.segments.last().is_some_and(|s| s.ident == "ToolRunContext"))
}

/// `T` when `ty` is written `State<T>` (any path ending in `State` with one type argument).
fn state_type(ty: &Type) -> Option<Type> {
    let Type::Path(path) = ty else {
        return None;
    };
    let last = path.path.segments.last()?;
    if last.ident != "State" {
        return None;
    }
    let syn::PathArguments::AngleBracketed(args) = &last.arguments else {
        return None;
    };
    match args.args.iter().collect::<Vec<_>>().as_slice() {
        [syn::GenericArgument::Type(inner)] => Some(inner.clone()),
        _ => None,
    }
}

fn inline_arg(param: &syn::PatType, cx: &mut Ctxt) -> Option<InlineArg> {
    let ident = match &*param.pat {
        Pat::Ident(p) if p.by_ref.is_none() && p.subpat.is_none() => Some(p.ident.clone()),
        other => {
            cx.error_spanned(
                other,
                "in the inline form each argument is a plain name: it becomes the argument's \
                 property name",
            );
            None
        }
    };
    match &*param.ty {
        Type::Reference(_) => {
            cx.error_spanned(
                &param.ty,
                "inline arguments are owned: the model's arguments are decoded into them (write \
                 `String` for `&str`, `Vec<T>` for `&[T]`)",
            );
            return None;
        }
        Type::ImplTrait(_) => {
            cx.error_spanned(
                &param.ty,
                "a `#[tool]` argument cannot be `impl Trait`: its schema is computed from a \
                 concrete type",
            );
            return None;
        }
        _ => {}
    }
    // schemars leaves an alias out of the schema: the model never sees it, and the closed
    // arguments object refuses it.
    for attr in param.attrs.iter().filter(|a| a.path().is_ident("serde")) {
        let _ = attr.parse_nested_meta(|meta| {
            if meta.path.is_ident("alias") {
                cx.error_spanned(
                    &meta.path,
                    "an inline argument cannot have a serde `alias`: the model only sees the \
                     schema's name, and the arguments object refuses any other; rename the \
                     parameter to the name the model should use",
                );
            }
            // Skip the value (`= "..."`, or a nested list) to reach the next key.
            if meta.input.peek(syn::Token![=]) {
                let _: syn::Expr = meta.value()?.parse()?;
            } else if meta.input.peek(syn::token::Paren) {
                let _ = meta.parse_nested_meta(|_| Ok(()));
            }
            Ok(())
        });
    }
    Some(InlineArg {
        ident: ident?,
        ty: (*param.ty).clone(),
        attrs: param
            .attrs
            .iter()
            .filter(|a| moves_to_field(a))
            .cloned()
            .collect(),
    })
}

/// `read_file` → `ReadFile`.
pub(crate) fn upper_camel(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    let mut upper = true;
    for c in name.chars() {
        if c == '_' {
            upper = true;
        } else if upper {
            out.extend(c.to_uppercase());
            upper = false;
        } else {
            out.push(c);
        }
    }
    if out.is_empty() {
        "Tool".to_owned()
    } else {
        out
    }
}

#[cfg(test)]
mod tests {
    use super::upper_camel;

    #[test]
    fn camel() {
        assert_eq!(upper_camel("read_file"), "ReadFile");
        assert_eq!(upper_camel("add"), "Add");
        assert_eq!(upper_camel("_private_x"), "PrivateX");
        assert_eq!(upper_camel("do_2x"), "Do2x");
        assert_eq!(upper_camel("_"), "Tool");
    }
}

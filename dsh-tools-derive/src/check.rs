//! Rules that span several parts: the tool's name (from `name = ...` or the function's), its
//! description (from `description = ...` or the doc comment), and hints that contradict each
//! other.

use crate::ast::ToolFn;
use crate::attr::Attrs;
use crate::ctxt::Ctxt;

/// The model-facing name and description, once checked.
pub(crate) struct Checked {
    pub(crate) name: String,
    pub(crate) description: String,
}

/// `^[a-zA-Z_][a-zA-Z0-9_-]{0,63}$`.
fn valid_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && name.len() <= 64
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

const NAME_RULE: &str = "must match `^[a-zA-Z_][a-zA-Z0-9_-]{0,63}$` (an ASCII letter or `_`, \
                         then at most 63 ASCII letters, digits, `_` or `-`)";

/// The Code Mode transport's name: the registry refuses it, so the macro does too.
const RESERVED: &str = "run_code";

pub(crate) fn check(attrs: &Attrs, tool: &ToolFn, cx: &mut Ctxt) -> Checked {
    if let (Some(grace), None) = (&attrs.timeout_grace_ms, &attrs.timeout_ms) {
        cx.error(
            grace.value.0.span(),
            "`timeout_grace_ms` applies after a timeout: add `timeout_ms = N` too",
        );
    }
    let name = match &attrs.name {
        Some(set) => {
            let name = set.value.value();
            if !valid_name(&name) {
                cx.error(
                    set.value.span(),
                    format!("invalid tool name {name:?}: a tool name {NAME_RULE}"),
                );
            } else if name == RESERVED {
                cx.error(
                    set.value.span(),
                    "the tool name \"run_code\" is reserved for the Code Mode presentation \
                     transport: registering it would fail; choose another name",
                );
            }
            name
        }
        None => {
            let name = tool.name();
            if !valid_name(&name) {
                cx.error_spanned(
                    &tool.item.sig.ident,
                    format!(
                        "the function's name {name:?} is not a valid tool name: set one with \
                         `#[tool(name = \"...\")]`; a tool name {NAME_RULE}"
                    ),
                );
            } else if name == RESERVED {
                cx.error_spanned(
                    &tool.item.sig.ident,
                    "the tool name \"run_code\" is reserved for the Code Mode presentation \
                     transport: registering it would fail; set another with \
                     `#[tool(name = \"...\")]`",
                );
            }
            name
        }
    };
    let description = match &attrs.description {
        Some(set) => {
            let text = set.value.value().trim().to_owned();
            if text.is_empty() {
                cx.error(
                    set.value.span(),
                    "the tool's description is empty: the model reads it to choose the tool",
                );
            }
            text
        }
        None => match &tool.docs {
            Some(docs) => docs.clone(),
            None => {
                match &tool.opaque_doc {
                    Some(doc) => cx.error_spanned(
                        doc,
                        "`#[tool]` reads the description from the doc comment when it expands, \
                         and this `#[doc = ...]` is not a string literal: set \
                         `#[tool(description = \"...\")]`",
                    ),
                    None => cx.error_spanned(
                        &tool.item.sig.ident,
                        "a tool needs a description for the model: add a `///` doc comment to \
                         the function, or `#[tool(description = \"...\")]`",
                    ),
                }
                String::new()
            }
        },
    };
    hints(attrs, cx);
    collisions(attrs, tool, cx);
    Checked { name, description }
}

/// The type `#[tool]` generates for the tool (`ReadFile` for `fn read_file`, or `struct_name`).
pub(crate) fn struct_ident(attrs: &Attrs, tool: &ToolFn) -> syn::Ident {
    match &attrs.struct_name {
        Some(set) => set.value.clone(),
        // At the function's name: a clash with the author's own type (E0428) points there.
        None => syn::Ident::new(
            &crate::ast::upper_camel(&tool.name()),
            tool.item.sig.ident.span(),
        ),
    }
}

/// [`struct_ident`] as text (without building an `Ident`, which the text may not be).
pub(crate) fn struct_name(attrs: &Attrs, tool: &ToolFn) -> String {
    match &attrs.struct_name {
        Some(set) => set.value.to_string(),
        None => crate::ast::upper_camel(&tool.name()),
    }
}

/// The name of the tool's type for the fallback (`fallback::stand_in`), when declaring it adds
/// no error of its own: not when a `struct_name` or `crate` key was not read, when the function
/// takes `self` (it is in an `impl`, where no struct can be declared), when the name is not an
/// identifier (`fn self_` would be `Self`), or when a type in the signature is written with it
/// (the clash `collisions` reports, or one it stops before).
pub(crate) fn fallback_type(attrs: &Attrs, tool: &ToolFn) -> Option<syn::Ident> {
    let takes_self = tool
        .item
        .sig
        .inputs
        .iter()
        .any(|input| matches!(input, syn::FnArg::Receiver(_)));
    if attrs.unread_path || takes_self {
        return None;
    }
    let name = struct_name(attrs, tool);
    syn::parse_str::<syn::Ident>(&name).ok()?;
    if bare_names(&tool.item.sig)
        .iter()
        .any(|(_, ident)| **ident == name)
    {
        return None;
    }
    Some(struct_ident(attrs, tool))
}

/// Each type in the signature written as a bare name (`ReadFile`, `self::ReadFile`), with that
/// name, in the order they are written (a generic type before its arguments): only a bare name
/// can be a type `#[tool]` generates (`api::ReadFile` cannot clash).
fn bare_names(sig: &syn::Signature) -> Vec<(&syn::Type, &syn::Ident)> {
    let mut stack: Vec<&syn::Type> = sig
        .inputs
        .iter()
        .filter_map(|input| match input {
            syn::FnArg::Typed(param) => Some(&*param.ty),
            syn::FnArg::Receiver(_) => None,
        })
        .collect();
    if let syn::ReturnType::Type(_, ty) = &sig.output {
        stack.push(ty);
    }
    stack.reverse();
    let mut names = Vec::new();
    while let Some(ty) = stack.pop() {
        match ty {
            syn::Type::Path(path) => {
                for segment in path.path.segments.iter().rev() {
                    if let syn::PathArguments::AngleBracketed(args) = &segment.arguments {
                        for arg in args.args.iter().rev() {
                            if let syn::GenericArgument::Type(inner) = arg {
                                stack.push(inner);
                            }
                        }
                    }
                }
                let segments = &path.path.segments;
                let bare = path.qself.is_none()
                    && path.path.leading_colon.is_none()
                    && (segments.len() == 1
                        || (segments.len() == 2 && segments[0].ident == "self"));
                if let Some(last) = segments.last().filter(|_| bare) {
                    names.push((ty, &last.ident));
                }
            }
            syn::Type::Reference(r) => stack.push(&r.elem),
            syn::Type::Paren(p) => stack.push(&p.elem),
            syn::Type::Group(g) => stack.push(&g.elem),
            syn::Type::Array(a) => stack.push(&a.elem),
            syn::Type::Slice(s) => stack.push(&s.elem),
            syn::Type::Tuple(t) => stack.extend(t.elems.iter().rev()),
            _ => {}
        }
    }
    names
}

/// A type in the signature with the name of a generated type (the tool's, or the inline form's
/// arguments): rustc would report E0428 and follow-on errors, none naming the fix. One error at
/// the author's type instead, naming `struct_name`.
fn collisions(attrs: &Attrs, tool: &ToolFn, cx: &mut Ctxt) {
    let tool_type = struct_name(attrs, tool);
    let args_type =
        matches!(tool.form, crate::ast::Form::Inline(_)).then(|| format!("{tool_type}Args"));
    for (ty, name) in bare_names(&tool.item.sig) {
        let fix = format!("`#[tool(struct_name = {tool_type}Tool)]`");
        if *name == tool_type {
            cx.error_spanned(
                ty,
                format!(
                    "`{tool_type}` is also the name `#[tool]` gives the tool's own type \
                     (after `fn {}`): name the tool's type another way with {fix}",
                    tool.name()
                ),
            );
            return;
        }
        if args_type.as_deref().is_some_and(|args| *name == args) {
            cx.error_spanned(
                ty,
                format!(
                    "`{tool_type}Args` is also the name `#[tool]` gives the tool's \
                     arguments type (its documented parameters as one struct): name \
                     both another way with {fix} (the arguments become \
                     `{tool_type}ToolArgs`)"
                ),
            );
            return;
        }
    }
}

/// `read_only` with `destructive`: MCP reads `destructive` only when the tool is not read-only,
/// so the pair is a mistake whichever was meant. Reported on both keys.
fn hints(attrs: &Attrs, cx: &mut Ctxt) {
    let hints = &attrs.hints;
    if let (Some(read_only), Some(destructive)) = (&hints.read_only, &hints.destructive)
        && read_only.value
        && destructive.value
    {
        let message = "`read_only` and `destructive` contradict each other: a read-only tool \
                       modifies nothing, so it cannot be destructive; keep the one that holds";
        cx.error(read_only.key, message);
        cx.error(destructive.key, message);
    }
}

#[cfg(test)]
mod tests {
    use super::valid_name;

    #[test]
    fn names() {
        assert!(valid_name("read_file"));
        assert!(valid_name("_x-1"));
        assert!(valid_name(&"a".repeat(64)));
        assert!(!valid_name(&"a".repeat(65)));
        assert!(!valid_name(""));
        assert!(!valid_name("1abc"));
        assert!(!valid_name("-abc"));
        assert!(!valid_name("read file"));
        assert!(!valid_name("lé"));
    }
}

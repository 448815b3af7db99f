//! `#[tool(...)]`: every key parsed with `syn::meta`, unknown and duplicate keys reported and
//! skipped so that parsing goes on.

use crate::ctxt::Ctxt;
use proc_macro2::{Span, TokenStream};
use syn::meta::ParseNestedMeta;
use syn::parse::Parser;
use syn::{Expr, Lit, LitInt, LitStr, Path};

pub(crate) const NAME: &str = "name";
pub(crate) const TITLE: &str = "title";
pub(crate) const DESCRIPTION: &str = "description";
pub(crate) const TIMEOUT_MS: &str = "timeout_ms";
pub(crate) const TIMEOUT_GRACE_MS: &str = "timeout_grace_ms";
pub(crate) const CONCURRENCY_SAFE: &str = "concurrency_safe";
pub(crate) const READ_ONLY: &str = "read_only";
pub(crate) const DESTRUCTIVE: &str = "destructive";
pub(crate) const IDEMPOTENT: &str = "idempotent";
pub(crate) const OPEN_WORLD: &str = "open_world";
pub(crate) const RENDER: &str = "render";
pub(crate) const PRESENT_CALL: &str = "present_call";
pub(crate) const CALL_CARD: &str = "call_card";
pub(crate) const RESULT_CARD: &str = "result_card";
pub(crate) const PRESENT_RESULT: &str = "present_result";
pub(crate) const FINALIZE_CONTENT: &str = "finalize_content";
pub(crate) const STRUCT_NAME: &str = "struct_name";
pub(crate) const ALLOW_UNKNOWN_ARGS: &str = "allow_unknown_args";
pub(crate) const DEFER_LOADING: &str = "defer_loading";
pub(crate) const TASK: &str = "task";
pub(crate) const CRATE: &str = "crate";

/// Every key, in the order the docs list them.
pub(crate) const KEYS: &[&str] = &[
    NAME,
    TITLE,
    DESCRIPTION,
    TIMEOUT_MS,
    TIMEOUT_GRACE_MS,
    CONCURRENCY_SAFE,
    READ_ONLY,
    DESTRUCTIVE,
    IDEMPOTENT,
    OPEN_WORLD,
    RENDER,
    CALL_CARD,
    RESULT_CARD,
    PRESENT_CALL,
    PRESENT_RESULT,
    FINALIZE_CONTENT,
    ALLOW_UNKNOWN_ARGS,
    DEFER_LOADING,
    TASK,
    STRUCT_NAME,
    CRATE,
];

/// A key's value and the span of the key, to report a duplicate on both.
pub(crate) struct Set<T> {
    pub(crate) key: Span,
    pub(crate) value: T,
}

/// `concurrency_safe` alone, or naming a classifier.
pub(crate) enum Concurrency {
    Parallel,
    Classified(Path),
}

/// The behaviour hints, each `Some(true)` for a bare flag or the literal's value.
#[derive(Default)]
pub(crate) struct Hints {
    pub(crate) read_only: Option<Set<bool>>,
    pub(crate) destructive: Option<Set<bool>>,
    pub(crate) idempotent: Option<Set<bool>>,
    pub(crate) open_world: Option<Set<bool>>,
}

impl Hints {
    /// Each hint that is set, with its key (which is also the `ToolHints` setter's name).
    pub(crate) fn set(&self) -> impl Iterator<Item = (&'static str, &Set<bool>)> {
        [
            (READ_ONLY, &self.read_only),
            (DESTRUCTIVE, &self.destructive),
            (IDEMPOTENT, &self.idempotent),
            (OPEN_WORLD, &self.open_world),
        ]
        .into_iter()
        .filter_map(|(key, slot)| slot.as_ref().map(|set| (key, set)))
    }
}

#[derive(Default)]
pub(crate) struct Attrs {
    pub(crate) name: Option<Set<LitStr>>,
    /// The literal and its trimmed, non-empty text.
    pub(crate) title: Option<Set<(LitStr, String)>>,
    pub(crate) description: Option<Set<LitStr>>,
    pub(crate) hints: Hints,
    pub(crate) timeout_ms: Option<Set<(LitInt, u64)>>,
    pub(crate) timeout_grace_ms: Option<Set<(LitInt, u64)>>,
    pub(crate) concurrency: Option<Set<Concurrency>>,
    pub(crate) render: Option<Set<Path>>,
    pub(crate) present_call: Option<Set<Path>>,
    pub(crate) call_card: Option<Set<Path>>,
    pub(crate) result_card: Option<Set<Path>>,
    pub(crate) present_result: Option<Set<Path>>,
    pub(crate) finalize_content: Option<Set<Path>>,
    pub(crate) krate: Option<Set<Path>>,
    pub(crate) struct_name: Option<Set<syn::Ident>>,
    pub(crate) allow_unknown_args: Option<Set<bool>>,
    pub(crate) defer_loading: Option<Set<bool>>,
    /// `task = "optional" | "required" | "forbidden"`: the variant's name.
    pub(crate) task: Option<Set<&'static str>>,
    /// A `struct_name` or `crate` key is written but was not read (malformed, set twice, or
    /// after a syntax error): the name of the tool's type, or the crate's path, is unknown.
    pub(crate) unread_path: bool,
}

impl Attrs {
    /// The path generated code names the crate by: `crate = ...`, or `::dsh_tools`.
    pub(crate) fn krate(&self) -> TokenStream {
        match &self.krate {
            Some(set) => {
                let path = &set.value;
                quote::quote!(#path)
            }
            None => quote::quote!(::dsh_tools),
        }
    }
}

/// Parses the attribute's arguments; every problem goes to `cx`.
pub(crate) fn parse(args: TokenStream, cx: &mut Ctxt) -> Attrs {
    let mut attrs = Attrs::default();
    let parser = syn::meta::parser(|meta| parse_key(&mut attrs, meta, cx));
    if let Err(error) = parser.parse2(args.clone()) {
        cx.push(error);
    }
    let read = [
        (STRUCT_NAME, attrs.struct_name.is_some()),
        (CRATE, attrs.krate.is_some()),
    ];
    attrs.unread_path = read
        .into_iter()
        .any(|(key, read)| written(&args, key) != usize::from(read));
    attrs
}

/// How many times `key` is written as a key (first, or after a `,`), read or not.
fn written(args: &TokenStream, key: &str) -> usize {
    let mut at_key = true;
    let mut count = 0;
    for token in args.clone() {
        if at_key && matches!(&token, proc_macro2::TokenTree::Ident(ident) if ident == key) {
            count += 1;
        }
        at_key = matches!(&token, proc_macro2::TokenTree::Punct(p) if p.as_char() == ',');
    }
    count
}

fn parse_key(attrs: &mut Attrs, meta: ParseNestedMeta<'_>, cx: &mut Ctxt) -> syn::Result<()> {
    let key_span = syn::spanned::Spanned::span(&meta.path);
    let path = &meta.path;
    let key = quote::quote!(#path).to_string().replace(' ', "");
    // `None`: a `key(...)` list, already reported.
    let Some(value) = value(&meta, &key, cx)? else {
        return Ok(());
    };
    match key.as_str() {
        NAME => {
            let v = string(NAME, value, key_span, "\"read_file\"", cx);
            store(&mut attrs.name, NAME, key_span, v, cx);
        }
        TITLE => {
            let v = title(value, key_span, cx);
            store(&mut attrs.title, TITLE, key_span, v, cx);
        }
        DESCRIPTION => {
            let v = string(DESCRIPTION, value, key_span, "\"Read a file.\"", cx);
            store(&mut attrs.description, DESCRIPTION, key_span, v, cx);
        }
        TIMEOUT_MS => {
            let v = timeout(value, key_span, cx);
            store(&mut attrs.timeout_ms, TIMEOUT_MS, key_span, v, cx);
        }
        TIMEOUT_GRACE_MS => {
            let v = grace(value, key_span, cx);
            store(
                &mut attrs.timeout_grace_ms,
                TIMEOUT_GRACE_MS,
                key_span,
                v,
                cx,
            );
        }
        CONCURRENCY_SAFE => {
            let v = concurrency(value, cx);
            store(&mut attrs.concurrency, CONCURRENCY_SAFE, key_span, v, cx);
        }
        READ_ONLY => flag(&mut attrs.hints.read_only, READ_ONLY, value, key_span, cx),
        DESTRUCTIVE => flag(
            &mut attrs.hints.destructive,
            DESTRUCTIVE,
            value,
            key_span,
            cx,
        ),
        IDEMPOTENT => flag(&mut attrs.hints.idempotent, IDEMPOTENT, value, key_span, cx),
        OPEN_WORLD => flag(&mut attrs.hints.open_world, OPEN_WORLD, value, key_span, cx),
        RENDER => path_key(&mut attrs.render, RENDER, value, key_span, cx),
        PRESENT_CALL => path_key(&mut attrs.present_call, PRESENT_CALL, value, key_span, cx),
        CALL_CARD => path_key(&mut attrs.call_card, CALL_CARD, value, key_span, cx),
        RESULT_CARD => path_key(&mut attrs.result_card, RESULT_CARD, value, key_span, cx),
        PRESENT_RESULT => path_key(
            &mut attrs.present_result,
            PRESENT_RESULT,
            value,
            key_span,
            cx,
        ),
        FINALIZE_CONTENT => path_key(
            &mut attrs.finalize_content,
            FINALIZE_CONTENT,
            value,
            key_span,
            cx,
        ),
        CRATE => path_key(&mut attrs.krate, CRATE, value, key_span, cx),
        ALLOW_UNKNOWN_ARGS => flag(
            &mut attrs.allow_unknown_args,
            ALLOW_UNKNOWN_ARGS,
            value,
            key_span,
            cx,
        ),
        DEFER_LOADING => flag(&mut attrs.defer_loading, DEFER_LOADING, value, key_span, cx),
        TASK => {
            let v = task(value, key_span, cx);
            store(&mut attrs.task, TASK, key_span, v, cx);
        }
        STRUCT_NAME => {
            let v = struct_name(value, key_span, cx);
            store(&mut attrs.struct_name, STRUCT_NAME, key_span, v, cx);
        }
        _ => {
            let hint = closest(&key)
                .map(|k| format!(" (did you mean `{k}`?)"))
                .unwrap_or_default();
            cx.error(
                key_span,
                format!(
                    "unknown `#[tool]` key `{key}`{hint}; the keys are: {}",
                    KEYS.join(", ")
                ),
            );
        }
    }
    Ok(())
}

/// `title = "..."`: a non-empty title, trimmed.
fn title(value: Option<Expr>, key_span: Span, cx: &mut Ctxt) -> Option<(LitStr, String)> {
    string(TITLE, value, key_span, "\"Read file\"", cx).and_then(|lit| {
        let text = lit.value().trim().to_owned();
        if text.is_empty() {
            cx.error(
                lit.span(),
                "the tool's title is empty: give a human-readable title, or leave \
                 `title` out",
            );
            return None;
        }
        Some((lit, text))
    })
}

/// `concurrency_safe` (a flag) or `concurrency_safe = classifier`.
fn concurrency(value: Option<Expr>, cx: &mut Ctxt) -> Option<Concurrency> {
    match value {
        None => Some(Concurrency::Parallel),
        Some(Expr::Path(p)) if p.qself.is_none() => Some(Concurrency::Classified(p.path)),
        Some(other) => {
            cx.error_spanned(
                other,
                "`concurrency_safe` is a flag (always parallel), or names a classifier \
                 `fn(&Args) -> bool`: `concurrency_safe = path::to::classifier`",
            );
            None
        }
    }
}

/// `task = "optional" | "required" | "forbidden"`: the `TaskSupport` variant's name.
fn task(value: Option<Expr>, key_span: Span, cx: &mut Ctxt) -> Option<&'static str> {
    string(TASK, value, key_span, "\"optional\"", cx).and_then(|s| match s.value().as_str() {
        "optional" => Some("Optional"),
        "required" => Some("Required"),
        "forbidden" => Some("Forbidden"),
        other => {
            cx.error(
                s.span(),
                format!("`task` is \"optional\", \"required\" or \"forbidden\", not {other:?}"),
            );
            None
        }
    })
}

/// `struct_name = TypeName`.
fn struct_name(value: Option<Expr>, key_span: Span, cx: &mut Ctxt) -> Option<syn::Ident> {
    match value {
        Some(Expr::Path(p)) if p.qself.is_none() && p.path.get_ident().is_some() => {
            p.path.get_ident().cloned()
        }
        Some(other) => {
            cx.error_spanned(
                other,
                "`struct_name` takes a type name: `struct_name = ReadFileTool`",
            );
            None
        }
        None => {
            cx.error(
                key_span,
                "`struct_name` needs a value: `struct_name = ReadFileTool`",
            );
            None
        }
    }
}

/// `Some(Some(expr))` for `= <expr>`, `Some(None)` for a bare key; a `key(...)` list is
/// reported and skipped (`None`).
fn value(
    meta: &ParseNestedMeta<'_>,
    key: &str,
    cx: &mut Ctxt,
) -> syn::Result<Option<Option<Expr>>> {
    if meta.input.peek(syn::Token![=]) {
        return Ok(Some(Some(meta.value()?.parse()?)));
    }
    if meta.input.peek(syn::token::Paren) {
        let content;
        let paren = syn::parenthesized!(content in meta.input);
        let _: TokenStream = content.parse()?;
        cx.error(
            paren.span.join(),
            format!("`#[tool]` keys take `=`, not a list: write `{key} = ...`"),
        );
        return Ok(None);
    }
    Ok(Some(None))
}

fn store<T>(slot: &mut Option<Set<T>>, key: &str, span: Span, value: Option<T>, cx: &mut Ctxt) {
    if let Some(first) = slot {
        let message = format!("duplicate `#[tool]` key `{key}`: set it once");
        cx.error(first.key, &message);
        cx.error(span, message);
        return;
    }
    if let Some(value) = value {
        *slot = Some(Set { key: span, value });
    }
}

fn string(
    key: &str,
    value: Option<Expr>,
    key_span: Span,
    example: &str,
    cx: &mut Ctxt,
) -> Option<LitStr> {
    match value {
        Some(Expr::Lit(syn::ExprLit {
            lit: Lit::Str(s), ..
        })) => Some(s),
        Some(other) => {
            cx.error_spanned(
                other,
                format!("`{key}` takes a string literal: `{key} = {example}`"),
            );
            None
        }
        None => {
            cx.error(
                key_span,
                format!("`{key}` needs a value: `{key} = {example}`"),
            );
            None
        }
    }
}

/// `timeout_grace_ms = N`: any integer literal, zero included (drop at the deadline).
fn grace(value: Option<Expr>, key_span: Span, cx: &mut Ctxt) -> Option<(LitInt, u64)> {
    const HELP: &str = "`timeout_grace_ms` takes an integer literal (milliseconds after the \
                        timeout before an unresponsive body is dropped): `timeout_grace_ms = 500`";
    millis(value, key_span, HELP, None, cx)
}

fn timeout(value: Option<Expr>, key_span: Span, cx: &mut Ctxt) -> Option<(LitInt, u64)> {
    const HELP: &str = "`timeout_ms` takes a positive integer literal (milliseconds): \
                        `timeout_ms = 30_000`";
    const ZERO: &str = "`timeout_ms` must be positive: a zero timeout would fail every call";
    millis(value, key_span, HELP, Some(ZERO), cx)
}

/// A `u64` integer literal of milliseconds; `zero`, when set, refuses 0 with that message.
fn millis(
    value: Option<Expr>,
    key_span: Span,
    help: &str,
    zero: Option<&str>,
    cx: &mut Ctxt,
) -> Option<(LitInt, u64)> {
    match value {
        Some(Expr::Lit(syn::ExprLit {
            lit: Lit::Int(lit), ..
        })) => match (lit.base10_parse::<u64>(), zero) {
            (Ok(0), Some(refusal)) => {
                cx.error(lit.span(), refusal);
                None
            }
            (Ok(ms), _) => Some((lit, ms)),
            (Err(_), _) => {
                cx.error(lit.span(), format!("{help}, at most {}", u64::MAX));
                None
            }
        },
        Some(other) => {
            cx.error_spanned(other, help);
            None
        }
        None => {
            cx.error(key_span, help);
            None
        }
    }
}

/// A behaviour hint: a bare flag is `true`, `key = true | false` sets it explicitly.
fn flag(
    slot: &mut Option<Set<bool>>,
    key: &str,
    value: Option<Expr>,
    key_span: Span,
    cx: &mut Ctxt,
) {
    let v = match value {
        None => Some(true),
        Some(Expr::Lit(syn::ExprLit {
            lit: Lit::Bool(b), ..
        })) => Some(b.value),
        Some(other) => {
            cx.error_spanned(
                other,
                format!(
                    "`{key}` takes `true` or `false`, or stands alone as a flag: `{key}` means \
                     `{key} = true`"
                ),
            );
            None
        }
    };
    store(slot, key, key_span, v, cx);
}

fn path_key(
    slot: &mut Option<Set<Path>>,
    key: &str,
    value: Option<Expr>,
    key_span: Span,
    cx: &mut Ctxt,
) {
    let help = if key == CRATE {
        "`crate` names the path of the re-exported `dsh_tools`: `crate = my_crate::dsh_tools`"
            .to_owned()
    } else {
        format!("`{key}` names a function: `{key} = path::to::function`")
    };
    let v = match value {
        Some(Expr::Path(p)) if p.qself.is_none() => Some(p.path),
        Some(other) => {
            cx.error_spanned(other, &help);
            None
        }
        None => {
            cx.error(key_span, &help);
            None
        }
    };
    store(slot, key, key_span, v, cx);
}

/// The valid key nearest to `key`: one that extends it (`timeout` → `timeout_ms`) or is at most
/// two edits away.
fn closest(key: &str) -> Option<&'static str> {
    if let Some(k) = KEYS.iter().find(|k| key.len() >= 3 && k.starts_with(key)) {
        return Some(k);
    }
    KEYS.iter()
        .map(|k| (edits(key, k), *k))
        .filter(|(d, _)| *d <= 2)
        .min()
        .map(|(_, k)| k)
}

/// Levenshtein distance.
fn edits(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut previous = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let current = row[j + 1];
            row[j + 1] = if ca == *cb {
                previous
            } else {
                1 + previous.min(row[j]).min(current)
            };
            previous = current;
        }
    }
    row[b.len()]
}

#[cfg(test)]
mod tests {
    use super::{closest, parse};
    use crate::ctxt::Ctxt;

    #[test]
    fn unread_paths() {
        let unread = |args: &str| {
            let mut cx = Ctxt::default();
            parse(args.parse().expect("tokens"), &mut cx).unread_path
        };
        assert!(!unread(""));
        assert!(!unread("struct_name = ReadTool, crate = crate::dsh_tools"));
        assert!(!unread("name = \"x\", render = struct_name"));
        assert!(unread("struct_name = \"ReadTool\""));
        assert!(unread("struct_name = A, struct_name = B"));
        assert!(unread("crate(dsh_tools)"));
        assert!(unread("1 + 2, struct_name = A"));
    }

    #[test]
    fn suggestions() {
        assert_eq!(closest("timeout"), Some("timeout_ms"));
        assert_eq!(closest("nmae"), Some("name"));
        assert_eq!(closest("concurrency"), Some("concurrency_safe"));
        assert_eq!(closest("descripton"), Some("description"));
        assert_eq!(closest("readonly"), Some("read_only"));
        assert_eq!(closest("read"), Some("read_only"));
        assert_eq!(closest("destructve"), Some("destructive"));
        assert_eq!(closest("idempotant"), Some("idempotent"));
        assert_eq!(closest("openworld"), Some("open_world"));
        assert_eq!(closest("titel"), Some("title"));
        assert_eq!(closest("zzz"), None);
    }
}

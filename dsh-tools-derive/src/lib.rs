//! Procedural macros for `dsh-tools`. Use them through the `dsh-tools` crate, which re-exports
//! them; this crate is an implementation detail and pinned by an exact version.
//!
//! The stages of `#[tool]`: `attr` parses `#[tool(...)]`, `ast` models the annotated function,
//! `check` applies the rules that span several parts, `expand` writes the code (a folder, a file
//! per part it generates), and `fallback` is what is emitted on error (the user's function
//! unchanged, every error at once, and the tool's type with stand-in impls so that its uses add
//! no error). Every stage reports to one `ctxt::Ctxt`. `#[derive(FastCheck)]` has the same
//! stages in `fast/` (`attr`, `model`, `expand`), on the same `Ctxt`.

mod ast;
mod attr;
mod check;
mod ctxt;
mod expand;
mod fallback;
mod fast;

use proc_macro::TokenStream;

/// Makes an `async fn` a typed tool. Documented, with every key and examples, at
/// `dsh_tools::tool` (the re-export that users name).
#[proc_macro_attribute]
pub fn tool(args: TokenStream, item: TokenStream) -> TokenStream {
    expand::tool(args.into(), item.into()).into()
}

/// Generates a validator for a type's arguments schema at compile time. Documented at
/// `dsh_tools::FastCheck` (the re-export that users name).
#[proc_macro_derive(FastCheck, attributes(serde, dsh_tools))]
pub fn fast_check(item: TokenStream) -> TokenStream {
    fast::derive(item.into()).into()
}

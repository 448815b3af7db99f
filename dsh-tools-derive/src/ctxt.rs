//! Collects every error of one expansion, so the author sees every mistake in one compile.

use proc_macro2::Span;
use std::fmt::Display;

/// The errors found so far.
#[derive(Default)]
pub(crate) struct Ctxt {
    errors: Vec<syn::Error>,
}

impl Ctxt {
    pub(crate) fn push(&mut self, error: syn::Error) {
        self.errors.push(error);
    }

    pub(crate) fn error(&mut self, span: Span, message: impl Display) {
        self.push(syn::Error::new(span, message));
    }

    pub(crate) fn error_spanned(&mut self, tokens: impl quote::ToTokens, message: impl Display) {
        self.push(syn::Error::new_spanned(tokens, message));
    }

    /// Every error folded into one, or `Ok` when there is none.
    pub(crate) fn finish(self) -> syn::Result<()> {
        let mut errors = self.errors.into_iter();
        let Some(mut first) = errors.next() else {
            return Ok(());
        };
        for error in errors {
            first.combine(error);
        }
        Err(first)
    }
}

//! Starting a program: as plain JavaScript when compiling it so means what stripping its types
//! would mean, else with its types stripped; either way through the bootstrap's `start`, with
//! the run's namespaces.

use super::host::fail;
use crate::code::Namespace;
use rquickjs::{Array, Context, Ctx, Function, Persistent};

/// Starts the program: as plain JavaScript first when it may be (no type stripping), else, or
/// when that does not compile, with its types stripped. `Err` carries an exception's text.
pub(super) fn begin(
    context: &Context,
    start: &Persistent<Function<'static>>,
    bindings: &[Namespace],
    program: String,
) -> Result<(), String> {
    let javascript_first = cfg!(feature = "typescript") && may_be_javascript(&program);
    if javascript_first {
        match context.with(|ctx| call_start(&ctx, start, bindings, &program, true))? {
            Started::Running => return Ok(()),
            Started::NotJavaScript => {}
        }
    }
    let program = strip(program)?;
    context
        .with(|ctx| call_start(&ctx, start, bindings, &program, false))
        .map(|_| ())
}

/// Whether `program` may run as JavaScript unchanged: compiling it as JavaScript means what
/// stripping its types would mean. TypeScript that also compiles as JavaScript with another
/// meaning has type arguments (`f<T>(x)`, `g<T>` at a line's end): a `<` and then a `>` that
/// TypeScript reads as closing them, i.e. one not followed on its line by what starts an operand
/// (TypeScript's own rule, `canFollowTypeArgumentsInExpression`), or followed by `in`,
/// `instanceof`, `as` or `satisfies`. A program without `<`, or whose every `>` is an arrow's,
/// part of `>=`, or followed by an operand, is one; any other is stripped first (which changes
/// nothing in plain JavaScript: the only cost is the stripper's time).
pub(super) fn may_be_javascript(program: &str) -> bool {
    let Some(first_lt) = program.find('<') else {
        return true;
    };
    let mut chars = program[first_lt..].char_indices().peekable();
    let mut previous = '<';
    while let Some((_, c)) = chars.next() {
        if c != '>' || previous == '=' {
            // Not a `>`, or an arrow's.
            previous = c;
            continue;
        }
        while chars.peek().is_some_and(|&(_, c)| c == '>') {
            chars.next();
        }
        // Whitespace on the same line (any of JavaScript's); a line break ends type arguments
        // in TypeScript, so what follows it is not an operand of this `>`.
        while chars
            .peek()
            .is_some_and(|&(_, c)| c.is_whitespace() && !is_line_break(c))
        {
            chars.next();
        }
        let Some(&(at, next)) = chars.peek() else {
            return false;
        };
        let operand = match next {
            '=' => true,
            c if c == '_' || c == '$' || c.is_alphabetic() => {
                let rest = &program[first_lt + at..];
                let word_end = rest
                    .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == '$'))
                    .unwrap_or(rest.len());
                !matches!(&rest[..word_end], "in" | "instanceof" | "as" | "satisfies")
            }
            '0'..='9' | '\'' | '"' | '[' | '{' | '!' | '~' | '+' | '-' | '<' => true,
            _ => false,
        };
        if !operand {
            return false;
        }
        previous = '>';
    }
    true
}

/// A JavaScript line terminator.
fn is_line_break(c: char) -> bool {
    matches!(c, '\n' | '\r' | '\u{2028}' | '\u{2029}')
}

/// How a start went.
enum Started {
    Running,
    /// `javascript_first` and the program did not compile as JavaScript: nothing ran.
    NotJavaScript,
}

/// Calls the bootstrap's `start` with the run's namespaces and `program`.
fn call_start(
    ctx: &Ctx<'_>,
    start: &Persistent<Function<'static>>,
    bindings: &[Namespace],
    program: &str,
    javascript_first: bool,
) -> Result<Started, String> {
    let start = start.clone().restore(ctx).map_err(|e| fail(ctx, e))?;
    let spec = Array::new(ctx.clone()).map_err(|e| fail(ctx, e))?;
    for (i, ns) in bindings.iter().enumerate() {
        let names: Vec<&str> = ns.functions.iter().map(|(n, _)| n.as_str()).collect();
        let class = ns.error_class.as_ref();
        let entry = (
            ns.global.as_str(),
            names,
            class.map(|c| c.name.as_str()),
            class.map(|c| c.member_name_property.as_str()),
        );
        let entry = rquickjs::IntoJs::into_js(
            vec![
                rquickjs::IntoJs::into_js(entry.0, ctx).map_err(|e| fail(ctx, e))?,
                rquickjs::IntoJs::into_js(entry.1, ctx).map_err(|e| fail(ctx, e))?,
                rquickjs::IntoJs::into_js(entry.2, ctx).map_err(|e| fail(ctx, e))?,
                rquickjs::IntoJs::into_js(entry.3, ctx).map_err(|e| fail(ctx, e))?,
            ],
            ctx,
        )
        .map_err(|e| fail(ctx, e))?;
        spec.set(i, entry).map_err(|e| fail(ctx, e))?;
    }
    let compiled: bool = start
        .call((spec, program, javascript_first))
        .map_err(|e| fail(ctx, e))?;
    Ok(if compiled {
        Started::Running
    } else {
        Started::NotJavaScript
    })
}

/// The program as JavaScript: type annotations stripped when the `typescript` feature is on.
#[cfg(feature = "typescript")]
fn strip(program: String) -> Result<String, String> {
    super::typescript::strip(&program)
}

#[cfg(not(feature = "typescript"))]
fn strip(program: String) -> Result<String, String> {
    Ok(program)
}

#[cfg(test)]
mod tests {
    use super::may_be_javascript;

    #[test]
    fn plain_javascript_skips_the_stripper_and_type_arguments_do_not() {
        for js in [
            "return 1",
            "for (let i = 0; i < 100; i++) await tools.a({}); return 1",
            "const xs = [1, 2].map((x) => x > 1); return xs",
            "if (a.length > 0 && b <= c) return a >= b",
            "return x < y ? -1 : x > y ? 1 : 0",
            "const f = (a) => ({ a }); return f(1) > [0]",
            "return a >> 2 < b",
            "return a < b > \u{00A0}c",
            "return a < b > é",
        ] {
            assert!(may_be_javascript(js), "{js}");
        }
        for ts in [
            "return f<string>(x)",
            "return f<A, B>(x)",
            "return new Map<string, number>()",
            "const g = f<string>\nreturn g",
            "return f<T>`x`",
            "return f<Array<T>>(x)",
            "return a<b> in c",
            "return f<T> /* c */ (x)",
            "return x < y >",
            "const T = 0; return f<T>\u{00A0}(1)",
            "return a<b>\u{2028}c",
            "return a<b>\u{3000}`x`",
        ] {
            assert!(!may_be_javascript(ts), "{ts}");
        }
    }
}

//! Numbers as JavaScript prints them: the ledger counts their bytes, the configuration's checks,
//! the rendered values and the SDK text print them.

/// ECMAScript Number-to-String (radix 10) of `x` (spec §5.8.2): shortest round-trip digits, no
/// `.0`, plain decimals for 1e-6 ≤ |x| < 1e21, otherwise `1e+21` / `1.5e-7` forms.
///
/// ```
/// use dsh_tools::code::js_number;
/// assert_eq!(js_number(1.0), "1");
/// assert_eq!(js_number(1e21), "1e+21");
/// assert_eq!(js_number(1e-7), "1e-7");
/// assert_eq!(js_number(0.000001), "0.000001");
/// assert_eq!(js_number(123456789012345680000.0), "123456789012345680000");
/// assert_eq!(js_number(-2.5e-8), "-2.5e-8");
/// ```
pub fn js_number(x: f64) -> String {
    if x == 0.0 {
        return "0".to_owned();
    }
    if x.is_nan() {
        return "NaN".to_owned();
    }
    if x.is_infinite() {
        return if x > 0.0 { "Infinity" } else { "-Infinity" }.to_owned();
    }
    let sign = if x < 0.0 { "-" } else { "" };
    // Rust's `{:e}` gives the shortest round-trip digits: `d.ddde<n>`.
    let sci = format!("{:e}", x.abs());
    let (mantissa, exponent) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exponent: i32 = exponent.parse().unwrap_or(0);
    let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    let k = digits.len() as i32;
    let n = exponent + 1; // the decimal point sits after `n` digits
    let body = if k <= n && n <= 21 {
        format!("{digits}{}", "0".repeat((n - k) as usize))
    } else if 0 < n && n <= 21 {
        format!("{}.{}", &digits[..n as usize], &digits[n as usize..])
    } else if -6 < n && n <= 0 {
        format!("0.{}{digits}", "0".repeat((-n) as usize))
    } else {
        let e = n - 1;
        let e = if e >= 0 {
            format!("+{e}")
        } else {
            e.to_string()
        };
        if k == 1 {
            format!("{digits}e{e}")
        } else {
            format!("{}.{}e{e}", &digits[..1], &digits[1..])
        }
    };
    format!("{sign}{body}")
}

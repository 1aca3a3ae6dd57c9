//! `string.format(list)` as the apiserver runs it (cel-go's strings extension, version 2, in
//! the `en_US` locale): `%s`, `%d`, `%f`, `%e`, `%x`, `%X`, `%o`, `%b` and `%%`, an optional
//! `.precision`, and the apiserver's error messages.
//!
//! Its quirks are kept: `%f` groups thousands (`1,234.500000`) and rounds the shortest decimal
//! form of a double half to even; `%e` ignores the precision (it is taken as a width) and
//! writes `1.500000×10⁰⁰`; `%s` of a double is Go's shortest `%g` (`1e+09`); a list or map
//! formats its strings quoted and its doubles as `%.6f`.

use cel::common::types::{CelBool, CelBytes, CelDouble, CelInt, CelString, CelUInt, Kind};
use cel::common::value::Val;

/// The precision of `%f` and `%e` when the clause has none.
const PRECISION: usize = 6;

/// The largest precision (or `%e` width) the fake writes out. The apiserver has no such limit
/// but its CEL cost budget; past it, the fake fails as a rule over budget fails.
const MAX_PRECISION: usize = 10_000;

/// `format` with each clause replaced by the next argument.
pub(crate) fn format(format: &str, args: &[&dyn Val]) -> Result<String, String> {
    let mut out = String::new();
    let mut rest = format;
    let mut next = 0;
    while let Some(at) = rest.find('%') {
        out.push_str(&rest[..at]);
        rest = &rest[at + 1..];
        if let Some(after) = rest.strip_prefix('%') {
            out.push('%');
            rest = after;
            continue;
        }
        let arg = args
            .get(next)
            .ok_or_else(|| format!("index {next} out of range"))?;
        if rest.is_empty() {
            return Err("unexpected end of string".into());
        }
        let (clause, precision, after) =
            clause(rest).map_err(|e| format!("could not parse formatting clause: {e}"))?;
        let text =
            apply(clause, precision, *arg).map_err(|e| format!("error during formatting: {e}"))?;
        out.push_str(&text);
        rest = after;
        next += 1;
    }
    out.push_str(rest);
    Ok(out)
}

/// The clause at the start of `s` (after its `%`): its letter, its precision, and the rest.
fn clause(s: &str) -> Result<(char, Option<usize>, &str), String> {
    let (precision, s) = match s.strip_prefix('.') {
        Some(after) => {
            let digits = after.bytes().take_while(u8::is_ascii_digit).count();
            if digits == after.len() {
                return Err(
                    "error while parsing precision: could not find end of precision specifier"
                        .into(),
                );
            }
            let p = after[..digits].parse::<usize>().map_err(|_| {
                format!("error while parsing precision: error while converting precision to integer: strconv.Atoi: parsing {:?}: invalid syntax", &after[..digits])
            })?;
            (Some(p), &after[digits..])
        }
        None => (None, s),
    };
    let c = s.chars().next().unwrap_or_default();
    if !"sdfebxXo".contains(c) {
        return Err(format!(
            "unrecognized formatting clause {:?}",
            c.to_string()
        ));
    }
    Ok((c, precision, &s[c.len_utf8()..]))
}

fn type_name(v: &dyn Val) -> String {
    v.get_type().name().to_owned()
}

fn apply(clause: char, precision: Option<usize>, v: &dyn Val) -> Result<String, String> {
    let kind = v.get_type().kind();
    let bad = |what: &str| Err(format!("{what}, was given {}", type_name(v)));
    match clause {
        's' => string(v),
        'd' => match kind {
            Kind::Int | Kind::UInt => decimal(v),
            _ => bad("decimal clause can only be used on integers"),
        },
        'f' | 'e' => {
            let Some(f) = double(v) else {
                return if clause == 'f' {
                    bad("fixed-point clause can only be used on doubles")
                } else {
                    bad("scientific clause can only be used on doubles")
                };
            };
            let precision = precision.unwrap_or(PRECISION);
            if precision > MAX_PRECISION {
                return Err("operation cancelled: actual cost limit exceeded".into());
            }
            Ok(if clause == 'f' {
                fixed(f, precision)
            } else {
                scientific(f, precision)
            })
        }
        'b' => match (
            v.downcast_ref::<CelInt>(),
            v.downcast_ref::<CelUInt>(),
            v.downcast_ref::<CelBool>(),
        ) {
            (Some(i), _, _) => Ok(signed(*i.inner(), |n| format!("{n:b}"))),
            (_, Some(u), _) => Ok(format!("{:b}", u.inner())),
            (_, _, Some(b)) => Ok(if *b.inner() { "1" } else { "0" }.into()),
            _ => bad("only integers and bools can be formatted as binary"),
        },
        'o' => match (v.downcast_ref::<CelInt>(), v.downcast_ref::<CelUInt>()) {
            (Some(i), _) => Ok(signed(*i.inner(), |n| format!("{n:o}"))),
            (_, Some(u)) => Ok(format!("{:o}", u.inner())),
            _ => bad("octal clause can only be used on integers"),
        },
        _ => hex(v, clause == 'X').map_or_else(
            || bad("only integers, byte buffers, and strings can be formatted as hex"),
            Ok,
        ),
    }
}

/// `n` written by `digits` (of its magnitude) after a `-` when negative, as Go writes it.
fn signed(n: i64, digits: impl Fn(u64) -> String) -> String {
    let sign = if n < 0 { "-" } else { "" };
    format!("{sign}{}", digits(n.unsigned_abs()))
}

fn hex(v: &dyn Val, upper: bool) -> Option<String> {
    let text = if let Some(i) = v.downcast_ref::<CelInt>() {
        signed(*i.inner(), |n| format!("{n:x}"))
    } else if let Some(u) = v.downcast_ref::<CelUInt>() {
        format!("{:x}", u.inner())
    } else {
        let bytes = match (v.downcast_ref::<CelString>(), v.downcast_ref::<CelBytes>()) {
            (Some(s), _) => s.inner().as_bytes().to_vec(),
            (_, Some(b)) => b.inner().to_vec(),
            _ => return None,
        };
        bytes.iter().map(|b| format!("{b:02x}")).collect()
    };
    Some(if upper { text.to_uppercase() } else { text })
}

/// A double `%f` and `%e` take: a double, or the strings `NaN`, `Infinity` and `-Infinity`.
fn double(v: &dyn Val) -> Option<f64> {
    if let Some(d) = v.downcast_ref::<CelDouble>() {
        return Some(*d.inner());
    }
    match v.downcast_ref::<CelString>()?.inner() {
        "NaN" => Some(f64::NAN),
        "Infinity" => Some(f64::INFINITY),
        "-Infinity" => Some(f64::NEG_INFINITY),
        _ => None,
    }
}

fn decimal(v: &dyn Val) -> Result<String, String> {
    if let Some(i) = v.downcast_ref::<CelInt>() {
        return Ok(i.inner().to_string());
    }
    v.downcast_ref::<CelUInt>()
        .map(|u| u.inner().to_string())
        .ok_or_else(|| {
            format!(
                "decimal clause can only be used on integers, was given {}",
                type_name(v)
            )
        })
}

/// The shortest decimal digits of `f` (finite, not negative) and the position of the decimal
/// point in them.
fn digits_of(f: f64) -> (Vec<u8>, i32) {
    let text = format!("{f:e}");
    let (mantissa, exp) = text.split_once('e').unwrap_or((&text, "0"));
    let digits: Vec<u8> = mantissa
        .bytes()
        .filter(u8::is_ascii_digit)
        .map(|b| b - b'0')
        .collect();
    (digits, exp.parse::<i32>().unwrap_or(0) + 1)
}

/// `digits` (point after `point` of them) rounded half to even to `keep` digits after the
/// point: the digits, and the new point (one more when rounding carried).
fn round(mut digits: Vec<u8>, mut point: i32, keep: usize) -> (Vec<u8>, i32) {
    if point < 0 {
        let pad = point.unsigned_abs() as usize;
        digits.splice(0..0, std::iter::repeat_n(0, pad));
        point = 0;
    }
    let len = (point as usize + keep).min(digits.len());
    if len < digits.len() {
        let tail = &digits[len..];
        let half = tail[0] == 5 && tail[1..].iter().all(|d| *d == 0);
        let up =
            tail[0] > 5 || (tail[0] == 5 && !half) || (half && len > 0 && digits[len - 1] % 2 == 1);
        digits.truncate(len);
        if up {
            let mut i = len;
            loop {
                if i == 0 {
                    digits.insert(0, 1);
                    point += 1;
                    break;
                }
                i -= 1;
                if digits[i] == 9 {
                    digits[i] = 0;
                } else {
                    digits[i] += 1;
                    break;
                }
            }
        }
    }
    let want = point as usize + keep;
    digits.resize(want.max(digits.len()), 0);
    (digits, point)
}

/// `%f`: thousands grouped with `,`, `precision` digits after the point.
fn fixed(f: f64, precision: usize) -> String {
    if !f.is_finite() {
        return special(f);
    }
    let sign = if f < 0.0 { "-" } else { "" };
    let (digits, point) = round(digits_of(f.abs()).0, digits_of(f.abs()).1, precision);
    let point = point.max(0) as usize;
    let text: String = digits.iter().map(|d| char::from(b'0' + d)).collect();
    let (int, frac) = text.split_at(point.min(text.len()));
    let int = if int.is_empty() { "0" } else { int };
    let mut grouped = String::new();
    for (i, c) in int.chars().enumerate() {
        if i > 0 && (int.len() - i) % 3 == 0 {
            grouped.push(',');
        }
        grouped.push(c);
    }
    let frac = &frac[..precision.min(frac.len())];
    if precision == 0 {
        format!("{sign}{grouped}")
    } else {
        format!("{sign}{grouped}.{frac}")
    }
}

/// `%e`: six digits after the point and `×10` with the exponent in superscript, padded to
/// `width` characters.
fn scientific(f: f64, width: usize) -> String {
    let text = if !f.is_finite() {
        special(f)
    } else if f == 0.0 {
        format!("0.{}×10⁰⁰", "0".repeat(PRECISION))
    } else {
        let sign = if f < 0.0 { "-" } else { "" };
        let (digits, point) = digits_of(f.abs());
        let (digits, moved) = round(digits, 1, PRECISION);
        let exp = point - 1 + (moved - 1);
        let text: String = digits
            .iter()
            .take(PRECISION + 1)
            .map(|d| char::from(b'0' + d))
            .collect();
        let (lead, rest) = text.split_at(1);
        let sup = |c: char| {
            "⁰¹²³⁴⁵⁶⁷⁸⁹"
                .chars()
                .nth(c.to_digit(10).unwrap_or(0) as usize)
                .unwrap_or('⁰')
        };
        let minus = if exp < 0 { "⁻" } else { "" };
        let power: String = format!("{:02}", exp.unsigned_abs())
            .chars()
            .map(sup)
            .collect();
        format!("{sign}{lead}.{rest}×10{minus}{power}")
    };
    format!("{text:>width$}")
}

fn special(f: f64) -> String {
    if f.is_nan() {
        "NaN".into()
    } else if f > 0.0 {
        "∞".into()
    } else {
        "-∞".into()
    }
}

/// A double as CEL's `string()` writes it in Go: the shortest digits, in exponent form below
/// 1e-4 and from 1e6 on.
pub(crate) fn go_double(f: f64) -> String {
    if f.is_nan() {
        return "NaN".into();
    }
    if f.is_infinite() {
        return if f > 0.0 { "+Inf" } else { "-Inf" }.into();
    }
    if f == 0.0 {
        return if f.is_sign_negative() { "-0" } else { "0" }.into();
    }
    let sign = if f < 0.0 { "-" } else { "" };
    let (digits, point) = digits_of(f.abs());
    let exp = point - 1;
    let text: String = digits.iter().map(|d| char::from(b'0' + d)).collect();
    if !(-4..6).contains(&exp) {
        let (lead, rest) = text.split_at(1);
        let dot = if rest.is_empty() { "" } else { "." };
        let esign = if exp < 0 { '-' } else { '+' };
        return format!("{sign}{lead}{dot}{rest}e{esign}{:02}", exp.unsigned_abs());
    }
    format!("{sign}{}", f.abs())
}

/// `%s`: strings, bytes, numbers, bools and null as they are; lists and maps as CEL writes
/// their items.
fn string(v: &dyn Val) -> Result<String, String> {
    match v.get_type().kind() {
        Kind::List | Kind::Map => nested(v),
        Kind::Int | Kind::UInt => decimal(v),
        Kind::Double => Ok(go_double(
            v.downcast_ref::<CelDouble>().map_or(0.0, |d| *d.inner()),
        )),
        Kind::Boolean => Ok(v
            .downcast_ref::<CelBool>()
            .is_some_and(|b| *b.inner())
            .to_string()),
        Kind::String => Ok(v
            .downcast_ref::<CelString>()
            .map(|s| s.inner().to_owned())
            .unwrap_or_default()),
        Kind::Bytes => Ok(v
            .downcast_ref::<CelBytes>()
            .map(|b| String::from_utf8_lossy(b.inner()).into_owned())
            .unwrap_or_default()),
        Kind::NullType => Ok("null".into()),
        _ => Err(format!(
            "string clause can only be used on strings, bools, bytes, ints, doubles, maps, lists, types, durations, and timestamps, was given {}",
            type_name(v)
        )),
    }
}

/// `s` in double quotes with `\a` ... `\v`, `\\` and `\"` escaped; other control characters
/// too (`\x..` in ASCII, else `\u....`) when `controls`, as Go's `%q` does, or as they are,
/// as `strings.quote` does.
pub(crate) fn quoted(s: &str, controls: bool) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '\u{7}' => out.push_str("\\a"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{b}' => out.push_str("\\v"),
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            c if controls && c.is_ascii_control() => {
                out.push_str(&format!("\\x{:02x}", u32::from(c)))
            }
            c if controls && c.is_control() => out.push_str(&format!("\\u{:04x}", u32::from(c))),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

fn go_quote(s: &str) -> String {
    quoted(s, true)
}

/// An item of a list or map: strings quoted, bytes `b"..."`, doubles `%.6f`.
fn item(v: &dyn Val) -> Result<String, String> {
    match v.get_type().kind() {
        Kind::String => Ok(go_quote(&string(v)?)),
        Kind::Bytes => Ok(format!("b{}", go_quote(&string(v)?))),
        Kind::Double => {
            let f = v.downcast_ref::<CelDouble>().map_or(0.0, |d| *d.inner());
            Ok(if f.is_finite() {
                format!("{f:.6}")
            } else {
                format!("{:?}", go_double(f))
            })
        }
        Kind::List | Kind::Map => nested(v),
        Kind::Int | Kind::UInt | Kind::Boolean | Kind::NullType => string(v),
        _ => Err(format!("no formatting function for {}", type_name(v))),
    }
}

fn nested(v: &dyn Val) -> Result<String, String> {
    let iterable = v.as_iterable().ok_or("not iterable")?;
    let mut iter = iterable.iter();
    if v.get_type().kind() == Kind::List {
        let mut parts = Vec::new();
        while let Some(i) = iter.next() {
            parts.push(item(i)?);
        }
        return Ok(format!("[{}]", parts.join(", ")));
    }
    let indexer = v.as_indexer().ok_or("not a map")?;
    let mut pairs = Vec::new();
    while let Some(k) = iter.next() {
        let key = item(k)?;
        let value = indexer.get(k).map_err(|e| e.to_string())?;
        pairs.push((key, item(value.as_ref())?));
    }
    pairs.sort_by(|a, b| a.0.cmp(&b.0));
    let parts: Vec<String> = pairs.into_iter().map(|(k, v)| format!("{k}:{v}")).collect();
    Ok(format!("{{{}}}", parts.join(", ")))
}

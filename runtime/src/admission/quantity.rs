//! Kubernetes' `quantity` CEL library: `quantity(...)` values read as the apiserver's
//! `resource.ParseQuantity` reads them, their `isInteger`, `asInteger`, `asApproximateFloat`,
//! `sign`, `add`, `sub`, `compareTo`, `isGreaterThan` and `isLessThan`, and `isQuantity`.

use std::cmp::Ordering;

use cel::common::types::{CelBool, CelDouble, CelInt, CelString};
use cel::{DeclarationError, Env, ExecutionError};

use super::values::{cel_value, error};

/// A quantity, exactly, in billionths (the finest a quantity holds: finer values are rounded
/// up, away from zero, as the apiserver rounds them).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Quantity {
    nanos: i128,
}

cel_value!(Quantity, QUANTITY_TYPE, "kubernetes.Quantity");

const FORMAT: &str =
    "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'";
const SUFFIX: &str = "unable to parse quantity's suffix";
const NUMERIC: &str = "unable to parse numeric part of quantity";

/// A number's parts as the apiserver splits them: sign, integer digits, fraction digits,
/// suffix.
fn split(s: &str) -> Result<(bool, &str, &str, &str), &'static str> {
    let (negative, body) = match s.as_bytes().first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    let digits = |t: &str| t.bytes().take_while(u8::is_ascii_digit).count();
    let n = digits(body);
    let (int, rest) = body.split_at(n);
    let (frac, rest) = match rest.strip_prefix('.') {
        Some(after) => after.split_at(digits(after)),
        None => ("", rest),
    };
    let letters = rest
        .bytes()
        .take_while(|b| b"eEinumkKMGTP".contains(b))
        .count();
    let after = rest[letters..].trim_start_matches(['-', '+']);
    let signs = rest.len() - letters - after.len();
    if signs > 1 || digits(after) != after.len() {
        return Err(FORMAT);
    }
    Ok((negative, int, frac, rest))
}

/// The power of 10 (decimal) or of 2 (binary) a suffix stands for.
fn suffix(s: &str) -> Option<(u32, i32)> {
    let binary = ["Ki", "Mi", "Gi", "Ti", "Pi", "Ei"];
    if let Some(i) = binary.iter().position(|b| *b == s) {
        return Some((2, 10 * (i as i32 + 1)));
    }
    let decimal = [
        ("n", -9),
        ("u", -6),
        ("m", -3),
        ("", 0),
        ("k", 3),
        ("M", 6),
        ("G", 9),
        ("T", 12),
        ("P", 15),
        ("E", 18),
    ];
    if let Some((_, e)) = decimal.iter().find(|(d, _)| *d == s) {
        return Some((10, *e));
    }
    let exp = s.strip_prefix(['e', 'E'])?;
    let digits = exp.trim_start_matches(['-', '+']);
    (!digits.is_empty() && exp.len() - digits.len() <= 1)
        .then(|| exp.parse::<i32>().ok())
        .flatten()
        .map(|e| (10, e))
}

/// `s` as `resource.ParseQuantity` reads it, or its error.
pub(crate) fn parse(s: &str) -> Result<Quantity, &'static str> {
    if s.is_empty() {
        return Err(FORMAT);
    }
    let (negative, int, frac, suf) = split(s)?;
    let (base, exp) = suffix(suf).ok_or(SUFFIX)?;
    let digits = format!("{int}{frac}");
    let mantissa: i128 = if digits.is_empty() {
        0
    } else {
        digits.parse().map_err(|_| NUMERIC)?
    };
    // value = mantissa * 10^-len(frac) * base^exp, in billionths, rounded away from zero
    let (mut num, mut den): (i128, i128) = (mantissa, 1);
    let scale = |n: i128, pow: u32, by: i128| by.checked_pow(pow).and_then(|p| n.checked_mul(p));
    den = scale(den, frac.len() as u32, 10).ok_or(NUMERIC)?;
    let (pow, up) = (exp.unsigned_abs(), exp >= 0);
    if up {
        num = scale(num, pow, i128::from(base)).ok_or(NUMERIC)?;
    } else {
        den = scale(den, pow, i128::from(base)).ok_or(NUMERIC)?;
    }
    num = num.checked_mul(1_000_000_000).ok_or(NUMERIC)?;
    let nanos = num / den + i128::from(num % den != 0);
    Ok(Quantity {
        nanos: if negative { -nanos } else { nanos },
    })
}

impl Quantity {
    fn of_int(i: i64) -> Self {
        Quantity {
            nanos: i128::from(i) * 1_000_000_000,
        }
    }

    fn integer(&self) -> Option<i64> {
        (self.nanos % 1_000_000_000 == 0)
            .then(|| i64::try_from(self.nanos / 1_000_000_000).ok())
            .flatten()
    }
}

fn quantity(s: &CelString<'_>) -> Result<Quantity, ExecutionError> {
    parse(s).map_err(|e| error("quantity", e))
}

fn is_quantity(s: &CelString<'_>) -> CelBool {
    CelBool::from(parse(s).is_ok())
}

fn sign(this: &Quantity) -> CelInt {
    CelInt::from(this.nanos.signum() as i64)
}

fn is_integer(this: &Quantity) -> CelBool {
    CelBool::from(this.integer().is_some())
}

fn as_integer(this: &Quantity) -> Result<CelInt, ExecutionError> {
    this.integer()
        .map(CelInt::from)
        .ok_or_else(|| error("asInteger", "cannot convert value to integer"))
}

fn as_approximate_float(this: &Quantity) -> CelDouble {
    let whole = this.nanos % 1_000_000_000 == 0;
    CelDouble::from(if whole {
        (this.nanos / 1_000_000_000) as f64
    } else {
        this.nanos as f64 / 1e9
    })
}

fn ordering(this: &Quantity, other: &Quantity) -> Ordering {
    this.nanos.cmp(&other.nanos)
}

fn compare_to(this: &Quantity, other: &Quantity) -> CelInt {
    CelInt::from(ordering(this, other) as i64)
}

fn is_greater_than(this: &Quantity, other: &Quantity) -> CelBool {
    CelBool::from(ordering(this, other) == Ordering::Greater)
}

fn is_less_than(this: &Quantity, other: &Quantity) -> CelBool {
    CelBool::from(ordering(this, other) == Ordering::Less)
}

fn sum(a: &Quantity, b: Quantity, negate: bool) -> Result<Quantity, ExecutionError> {
    let b = if negate { -b.nanos } else { b.nanos };
    a.nanos
        .checked_add(b)
        .map(|nanos| Quantity { nanos })
        .ok_or_else(|| error("add", "integer overflow"))
}

fn add(this: &Quantity, other: &Quantity) -> Result<Quantity, ExecutionError> {
    sum(this, *other, false)
}

fn add_int(this: &Quantity, other: &CelInt) -> Result<Quantity, ExecutionError> {
    sum(this, Quantity::of_int(*other.inner()), false)
}

fn sub(this: &Quantity, other: &Quantity) -> Result<Quantity, ExecutionError> {
    sum(this, *other, true)
}

fn sub_int(this: &Quantity, other: &CelInt) -> Result<Quantity, ExecutionError> {
    sum(this, Quantity::of_int(*other.inner()), true)
}

/// Registers the `quantity` library on `env`.
pub(crate) fn extension(env: &mut Env) -> Result<(), DeclarationError> {
    env.add_type(QUANTITY_TYPE.to_owned())?;
    cel::add_overload!(env, fn quantity: (CelString) -> Result<Quantity>, id = "string_to_quantity")?;
    cel::add_overload!(env, fn is_quantity: (CelString) -> CelBool)?;
    cel::add_overload!(env, fn sign: (Quantity) -> CelInt)?;
    cel::add_member_overload!(env, fn is_integer: (Quantity) -> CelBool)?;
    cel::add_member_overload!(env, fn as_integer: (Quantity) -> Result<CelInt>)?;
    cel::add_member_overload!(env, fn as_approximate_float: (Quantity) -> CelDouble)?;
    cel::add_member_overload!(env, fn compare_to: (Quantity, Quantity) -> CelInt)?;
    cel::add_member_overload!(env, fn is_greater_than: (Quantity, Quantity) -> CelBool)?;
    cel::add_member_overload!(env, fn is_less_than: (Quantity, Quantity) -> CelBool)?;
    cel::add_member_overload!(env, fn add: (Quantity, Quantity) -> Result<Quantity>)?;
    cel::add_member_overload!(env, fn add_int: (Quantity, CelInt) -> Result<Quantity>, name = "add")?;
    cel::add_member_overload!(env, fn sub: (Quantity, Quantity) -> Result<Quantity>)?;
    cel::add_member_overload!(env, fn sub_int: (Quantity, CelInt) -> Result<Quantity>, name = "sub")?;
    Ok(())
}

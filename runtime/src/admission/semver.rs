//! Kubernetes' `semver` CEL library: `semver(...)` values (and `semver(s, true)`, which
//! normalizes `v1`, `1.2` and leading zeros first) read as the apiserver reads them, their
//! `major`, `minor`, `patch`, `compareTo`, `isGreaterThan` and `isLessThan`, and `isSemver`.

use std::cmp::Ordering;

use cel::common::types::{CelBool, CelInt, CelString};
use cel::{DeclarationError, Env, ExecutionError};

use super::values::{cel_value, error};

/// A prerelease identifier: numeric ones sort before alphanumeric ones.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
enum Pre {
    Num(u64),
    Text(String),
}

/// A `semver(...)` value; build metadata is kept but neither compared nor equal-tested.
#[derive(Debug, Clone)]
pub(crate) struct Semver {
    major: u64,
    minor: u64,
    patch: u64,
    pre: Vec<Pre>,
}

impl PartialEq for Semver {
    fn eq(&self, other: &Self) -> bool {
        self.cmp_to(other) == Ordering::Equal
    }
}

cel_value!(Semver, SEMVER_TYPE, "kubernetes.Semver");

fn only(s: &str, alphanumeric: bool) -> bool {
    s.bytes()
        .all(|b| b.is_ascii_digit() || (alphanumeric && (b.is_ascii_alphabetic() || b == b'-')))
}

fn number(s: &str, what: &str) -> Result<u64, String> {
    if !only(s, false) {
        return Err(format!("Invalid character(s) found in {what} number {s:?}"));
    }
    if s.len() > 1 && s.starts_with('0') {
        let cap = format!("{}{}", what[..1].to_uppercase(), &what[1..]);
        return Err(format!(
            "{cap} number must not contain leading zeroes {s:?}"
        ));
    }
    let why = if s.is_empty() {
        "invalid syntax"
    } else {
        "value out of range"
    };
    s.parse()
        .map_err(|_| format!("strconv.ParseUint: parsing {s:?}: {why}"))
}

fn prerelease(s: &str) -> Result<Pre, String> {
    if s.is_empty() {
        return Err("Prerelease is empty".into());
    }
    if only(s, false) {
        if s.len() > 1 && s.starts_with('0') {
            return Err(format!(
                "Numeric PreRelease version must not contain leading zeroes {s:?}"
            ));
        }
        return s
            .parse()
            .map(Pre::Num)
            .map_err(|_| format!("strconv.ParseUint: parsing {s:?}: value out of range"));
    }
    if only(s, true) {
        return Ok(Pre::Text(s.to_owned()));
    }
    Err(format!("Invalid character(s) found in prerelease {s:?}"))
}

/// `s` as the apiserver's semver parser reads it, or its error.
pub(crate) fn parse(s: &str) -> Result<Semver, String> {
    if s.is_empty() {
        return Err("Version string empty".into());
    }
    let parts: Vec<&str> = s.splitn(3, '.').collect();
    let [major, minor, rest] = parts[..] else {
        return Err("No Major.Minor.Patch elements found".into());
    };
    let (major, minor) = (number(major, "major")?, number(minor, "minor")?);
    let (rest, build) = match rest.split_once('+') {
        Some((r, b)) => (r, Some(b)),
        None => (rest, None),
    };
    let (patch, pre) = match rest.split_once('-') {
        Some((p, pre)) => (p, Some(pre)),
        None => (rest, None),
    };
    let patch = number(patch, "patch")?;
    let pre = pre.map_or(Ok(Vec::new()), |p| p.split('.').map(prerelease).collect())?;
    for b in build
        .map(|b| b.split('.').collect::<Vec<_>>())
        .unwrap_or_default()
    {
        if b.is_empty() {
            return Err("Build meta data is empty".into());
        }
        if !only(b, true) {
            return Err(format!(
                "Invalid character(s) found in build meta data {b:?}"
            ));
        }
    }
    Ok(Semver {
        major,
        minor,
        patch,
        pre,
    })
}

/// `s` read after the apiserver's normalization: no leading `v`, leading zeros dropped, a
/// missing minor or patch version `0`.
fn normalized(s: &str) -> Result<Semver, String> {
    let s = s.strip_prefix('v').unwrap_or(s);
    let mut parts: Vec<String> = s
        .splitn(3, '.')
        .map(|p| {
            if p.len() <= 1 {
                return p.to_owned();
            }
            let t = p.trim_start_matches('0');
            if t.is_empty() || !t.as_bytes()[0].is_ascii_digit() {
                format!("0{t}")
            } else {
                t.to_owned()
            }
        })
        .collect();
    if parts.len() < 3 {
        if parts.last().is_some_and(|p| p.contains(['+', '-'])) {
            return Err("short version cannot contain PreRelease/Build meta data".into());
        }
        parts.resize(3, "0".into());
    }
    parse(&parts.join("."))
}

impl Semver {
    fn cmp_to(&self, o: &Semver) -> Ordering {
        let core = (self.major, self.minor, self.patch).cmp(&(o.major, o.minor, o.patch));
        core.then_with(|| match (self.pre.is_empty(), o.pre.is_empty()) {
            (true, true) => Ordering::Equal,
            (true, false) => Ordering::Greater,
            (false, true) => Ordering::Less,
            (false, false) => self.pre.cmp(&o.pre),
        })
    }
}

fn semver(s: &CelString<'_>) -> Result<Semver, ExecutionError> {
    parse(s).map_err(|e| error("semver", e))
}

fn semver_normalized(s: &CelString<'_>, normalize: &CelBool) -> Result<Semver, ExecutionError> {
    let read = if *normalize.inner() {
        normalized(s)
    } else {
        parse(s)
    };
    read.map_err(|e| error("semver", e))
}

fn is_semver(s: &CelString<'_>) -> CelBool {
    CelBool::from(parse(s).is_ok())
}

fn is_semver_normalized(s: &CelString<'_>, normalize: &CelBool) -> CelBool {
    CelBool::from(if *normalize.inner() {
        normalized(s).is_ok()
    } else {
        parse(s).is_ok()
    })
}

fn major(this: &Semver) -> CelInt {
    CelInt::from(this.major as i64)
}

fn minor(this: &Semver) -> CelInt {
    CelInt::from(this.minor as i64)
}

fn patch(this: &Semver) -> CelInt {
    CelInt::from(this.patch as i64)
}

fn compare_to(this: &Semver, other: &Semver) -> CelInt {
    CelInt::from(this.cmp_to(other) as i64)
}

fn is_greater_than(this: &Semver, other: &Semver) -> CelBool {
    CelBool::from(this.cmp_to(other) == Ordering::Greater)
}

fn is_less_than(this: &Semver, other: &Semver) -> CelBool {
    CelBool::from(this.cmp_to(other) == Ordering::Less)
}

/// Registers the `semver` library on `env`.
pub(crate) fn extension(env: &mut Env) -> Result<(), DeclarationError> {
    env.add_type(SEMVER_TYPE.to_owned())?;
    cel::add_overload!(env, fn semver: (CelString) -> Result<Semver>, id = "string_to_semver")?;
    cel::add_overload!(env, fn semver_normalized: (CelString, CelBool) -> Result<Semver>, name = "semver")?;
    cel::add_overload!(env, fn is_semver: (CelString) -> CelBool)?;
    cel::add_overload!(env, fn is_semver_normalized: (CelString, CelBool) -> CelBool, name = "isSemver")?;
    cel::add_member_overload!(env, fn major: (Semver) -> CelInt)?;
    cel::add_member_overload!(env, fn minor: (Semver) -> CelInt)?;
    cel::add_member_overload!(env, fn patch: (Semver) -> CelInt)?;
    cel::add_member_overload!(env, fn compare_to: (Semver, Semver) -> CelInt, id = "semver_compare_to")?;
    cel::add_member_overload!(env, fn is_greater_than: (Semver, Semver) -> CelBool, id = "semver_is_greater_than")?;
    cel::add_member_overload!(env, fn is_less_than: (Semver, Semver) -> CelBool, id = "semver_is_less_than")?;
    Ok(())
}

//! The string formats the apiserver checks in a CRD schema (apiextensions' supported formats,
//! as kube-openapi's `strfmt` validates them). Other formats are not checked, as the apiserver
//! strips them before validating.

use std::collections::HashMap;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::sync::{Mutex, OnceLock, PoisonError};

use base64::Engine;
use regex::Regex;

/// `pattern` compiled once; `None` when the regex crate cannot read it.
pub(crate) fn regex(pattern: &str) -> Option<Regex> {
    static CACHE: OnceLock<Mutex<HashMap<String, Option<Regex>>>> = OnceLock::new();
    let cache = CACHE.get_or_init(Mutex::default);
    let mut cache = cache.lock().unwrap_or_else(PoisonError::into_inner);
    cache
        .entry(pattern.to_owned())
        .or_insert_with(|| Regex::new(pattern).ok())
        .clone()
}

fn matches(pattern: &str, s: &str) -> bool {
    regex(pattern).is_some_and(|r| r.is_match(s))
}

/// Whether the apiserver validates strings of `format` (`date-time` and `datetime` alike).
pub(crate) fn checked(format: &str) -> bool {
    const FORMATS: &[&str] = &[
        "bsonobjectid",
        "uri",
        "email",
        "hostname",
        "ipv4",
        "ipv6",
        "cidr",
        "mac",
        "uuid",
        "uuid3",
        "uuid4",
        "uuid5",
        "isbn",
        "isbn10",
        "isbn13",
        "creditcard",
        "ssn",
        "hexcolor",
        "rgbcolor",
        "byte",
        "password",
        "date",
        "duration",
        "datetime",
        "k8sshortname",
        "k8slongname",
    ];
    FORMATS.contains(&format.replace('-', "").as_str())
}

/// Whether `s` is of `format`; formats the apiserver does not check always hold.
pub(crate) fn valid(format: &str, s: &str) -> bool {
    match format.replace('-', "").as_str() {
        "bsonobjectid" => matches("^[0-9a-fA-F]{24}$", s),
        "uri" => uri(s),
        "email" => email(s),
        "hostname" => {
            s.len() <= 255
                && matches(
                    r"^([a-zA-Z0-9\p{S}\p{L}]((-?[a-zA-Z0-9\p{S}\p{L}]{0,62})?)|([a-zA-Z0-9\p{S}\p{L}](([a-zA-Z0-9-\p{S}\p{L}]{0,61}[a-zA-Z0-9\p{S}\p{L}])?)(\.)){1,}([a-zA-Z\p{L}]){2,63})$",
                    s,
                )
        }
        "ipv4" => ip(s).is_some() && s.contains('.'),
        "ipv6" => ip(s).is_some() && s.contains(':'),
        "cidr" => cidr(s),
        "mac" => mac(s),
        "uuid" => matches(
            r"(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$",
            s,
        ),
        "uuid3" => matches(
            r"(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?3[0-9a-f]{3}-?[0-9a-f]{4}-?[0-9a-f]{12}$",
            s,
        ),
        "uuid4" => matches(
            r"(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?4[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}$",
            s,
        ),
        "uuid5" => matches(
            r"(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?5[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}$",
            s,
        ),
        "isbn" => isbn10(s) || isbn13(s),
        "isbn10" => isbn10(s),
        "isbn13" => isbn13(s),
        "creditcard" => credit_card(s),
        "ssn" => matches(r"^\d{3}[- ]?\d{2}[- ]?\d{4}$", s),
        "hexcolor" => matches("^#?([0-9a-fA-F]{3}|[0-9a-fA-F]{6})$", s),
        "rgbcolor" => {
            let c = r"\s*(0|[1-9]\d?|1\d\d?|2[0-4]\d|25[0-5])\s*";
            matches(&format!(r"^rgb\({c},{c},{c}\)$"), s)
        }
        "byte" => base64::engine::general_purpose::STANDARD.decode(s).is_ok(),
        "date" => date(s),
        "datetime" => date_time(s),
        "duration" => duration(s),
        "k8sshortname" => s.len() <= 63 && matches("^[a-z0-9]([-a-z0-9]*[a-z0-9])?$", s),
        "k8slongname" => {
            s.len() <= 253
                && matches(
                    r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$",
                    s,
                )
        }
        _ => true,
    }
}

fn ip(s: &str) -> Option<IpAddr> {
    s.parse::<Ipv4Addr>()
        .map(IpAddr::V4)
        .or_else(|_| s.parse::<Ipv6Addr>().map(IpAddr::V6))
        .ok()
}

fn cidr(s: &str) -> bool {
    let Some((addr, bits)) = s.split_once('/') else {
        return false;
    };
    let Ok(bits) = bits.parse::<u8>() else {
        return false;
    };
    match ip(addr) {
        Some(IpAddr::V4(_)) => bits <= 32,
        Some(IpAddr::V6(_)) => bits <= 128,
        None => false,
    }
}

fn mac(s: &str) -> bool {
    let hex2 = "[0-9a-fA-F]{2}";
    [6, 8, 20].iter().any(|n| {
        [':', '-']
            .iter()
            .any(|sep| matches(&format!("^{hex2}(\\{sep}{hex2}){{{}}}$", n - 1), s))
            || matches(
                &format!(r"^[0-9a-fA-F]{{4}}(\.[0-9a-fA-F]{{4}}){{{}}}$", n / 2 - 1),
                s,
            )
    })
}

fn uri(s: &str) -> bool {
    !s.chars().any(|c| c.is_control() || c == ' ')
        && (s.starts_with('/') || matches("^[a-zA-Z][a-zA-Z0-9+.-]*:.", s))
}

fn email(s: &str) -> bool {
    let addr = match (s.find('<'), s.ends_with('>')) {
        (Some(open), true) => &s[open + 1..s.len() - 1],
        _ => s,
    };
    matches(r"^[^\s@<>()]+@[^\s@<>()]+$", addr)
}

fn digits_of(s: &str) -> Vec<u32> {
    s.chars().filter_map(|c| c.to_digit(10)).collect()
}

fn isbn10(s: &str) -> bool {
    let clean: String = s.chars().filter(|c| *c != '-' && *c != ' ').collect();
    if !matches("^[0-9]{9}[0-9X]$", &clean) {
        return false;
    }
    let sum: u32 = clean
        .chars()
        .enumerate()
        .map(|(i, c)| {
            let v = if c == 'X' {
                10
            } else {
                c.to_digit(10).unwrap_or(0)
            };
            (i as u32 + 1) * v
        })
        .sum();
    sum.is_multiple_of(11)
}

fn isbn13(s: &str) -> bool {
    let clean: String = s.chars().filter(|c| *c != '-' && *c != ' ').collect();
    if !matches("^[0-9]{13}$", &clean) {
        return false;
    }
    let d = digits_of(&clean);
    let sum: u32 = d[..12]
        .iter()
        .enumerate()
        .map(|(i, v)| if i % 2 == 0 { *v } else { v * 3 })
        .sum();
    (10 - sum % 10) % 10 == d[12]
}

fn credit_card(s: &str) -> bool {
    let clean: String = s.chars().filter(char::is_ascii_digit).collect();
    let pattern = r"^(?:4[0-9]{12}(?:[0-9]{3})?|5[1-5][0-9]{14}|(222[1-9]|22[3-9][0-9]|2[3-6][0-9]{2}|27[01][0-9]|2720)[0-9]{12}|6(?:011|5[0-9][0-9])[0-9]{12}|3[47][0-9]{13}|3(?:0[0-5]|[68][0-9])[0-9]{11}|(?:2131|1800|35\d{3})\d{11}|6[27][0-9]{14})$";
    if !matches(pattern, &clean) {
        return false;
    }
    let sum: u32 = digits_of(&clean)
        .iter()
        .rev()
        .enumerate()
        .map(|(i, d)| match (i % 2, d * 2) {
            (1, twice) if twice > 9 => twice - 9,
            (1, twice) => twice,
            _ => *d,
        })
        .sum();
    sum.is_multiple_of(10)
}

fn leap(year: u32) -> bool {
    year.is_multiple_of(4) && (!year.is_multiple_of(100) || year.is_multiple_of(400))
}

/// `YYYY-MM-DD`, a day that exists.
fn date(s: &str) -> bool {
    let Some(caps) = regex(r"^(\d{4})-(\d{2})-(\d{2})$").and_then(|r| {
        r.captures(s)
            .map(|c| [1, 2, 3].map(|i| c[i].parse::<u32>().unwrap_or(0)))
    }) else {
        return false;
    };
    let [year, month, day] = caps;
    let days = match month {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if leap(year) => 29,
        2 => 28,
        _ => return false,
    };
    (1..=days).contains(&day)
}

/// RFC 3339 date-time (with or without fractional seconds), or a local time without a zone.
fn date_time(s: &str) -> bool {
    let Some(c) =
        regex(r"^(\d{4}-\d{2}-\d{2})T(\d{2}):(\d{2}):(\d{2})(\.\d+)?(Z|[+-]\d{2}:\d{2})?$")
            .and_then(|r| r.captures(s))
    else {
        return false;
    };
    let part = |i: usize| c[i].parse::<u32>().unwrap_or(99);
    date(&c[1]) && part(2) <= 23 && part(3) <= 59 && part(4) <= 59
}

/// A Go duration (`1h30m`, `-1.5s`) or a number and unit (`3 days`), as `strfmt` reads it.
fn duration(s: &str) -> bool {
    if s == "0" || matches(r"^[-+]?((\d+(\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h))+$", s) {
        return true;
    }
    const UNITS: &[&str] = &[
        "ns", "nano", "us", "µs", "micro", "ms", "milli", "s", "sec", "m", "min", "h", "hr",
        "hour", "d", "day", "w", "wk", "week",
    ];
    let Some(r) = regex(r"(\d+)\s*([A-Za-zµ]+)") else {
        return false;
    };
    let mut found = false;
    for c in r.captures_iter(s) {
        let unit = c[2].to_lowercase();
        let unit = unit
            .strip_suffix('s')
            .filter(|u| !u.is_empty())
            .unwrap_or(&unit);
        if !UNITS.contains(&unit) && !UNITS.contains(&c[2].to_lowercase().as_str()) {
            return false;
        }
        found = true;
    }
    found
}

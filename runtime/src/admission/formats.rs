//! The string formats the apiserver checks in a CRD schema (apiextensions' supported formats,
//! as kube-openapi's `strfmt` validates them). Other formats are not checked, as the apiserver
//! strips them before validating.

use std::collections::HashMap;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::sync::{Mutex, OnceLock, PoisonError};

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
                && s.split('.').all(|label| label.len() <= 63)
                && matches(
                    r"^([a-zA-Z0-9\p{S}\p{L}]((-?[a-zA-Z0-9\p{S}\p{L}]{0,62})?)|([a-zA-Z0-9\p{S}\p{L}](([a-zA-Z0-9-\p{S}\p{L}]{0,61}[a-zA-Z0-9\p{S}\p{L}])?)(\.)){1,}([a-zA-Z\p{L}]){2,63})$",
                    s,
                )
        }
        "ipv4" => sloppy_ip(s).is_some() && s.contains('.'),
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
        "ssn" => s.len() == 11 && matches(r"^\d{3}[- ]?\d{2}[- ]?\d{4}$", s),
        "hexcolor" => matches("^#?([0-9a-fA-F]{3}|[0-9a-fA-F]{6})$", s),
        "rgbcolor" => {
            let c = r"\s*(0|[1-9]\d?|1\d\d?|2[0-4]\d|25[0-5])\s*";
            matches(&format!(r"^rgb\({c},{c},{c}\)$"), s)
        }
        "byte" => matches(
            r"^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=|[A-Za-z0-9+/]{4})$",
            s,
        ),
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

/// An IPv4 address as Go's `ParseIPSloppy` reads it: leading zeros allowed, or any IPv6 one.
fn sloppy_ip(s: &str) -> Option<IpAddr> {
    let parts: Vec<&str> = s.split('.').collect();
    let octet = |p: &&str| -> Option<u8> {
        (!p.is_empty() && p.len() <= 3 && p.bytes().all(|b| b.is_ascii_digit()))
            .then(|| p.parse::<u8>().ok())
            .flatten()
    };
    if parts.len() == 4
        && let Some(octets) = parts.iter().map(octet).collect::<Option<Vec<u8>>>()
    {
        return Some(IpAddr::V4(Ipv4Addr::new(
            octets[0], octets[1], octets[2], octets[3],
        )));
    }
    s.parse::<Ipv6Addr>().map(IpAddr::V6).ok()
}

fn cidr(s: &str) -> bool {
    let Some((addr, bits)) = s.split_once('/') else {
        return false;
    };
    let Ok(bits) = bits.parse::<u8>() else {
        return false;
    };
    match sloppy_ip(addr) {
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

/// The first bad `%` escape of `s`, as Go quotes it (`%` and up to two more bytes); in a host
/// (`host`), an escape of an ASCII byte but `%25` is bad too.
fn bad_escape(s: &str, host: bool) -> Option<String> {
    let b = s.as_bytes();
    let at = (0..b.len()).find(|&i| {
        b[i] == b'%'
            && !(i + 2 < b.len()
                && b[i + 1].is_ascii_hexdigit()
                && b[i + 2].is_ascii_hexdigit()
                && (!host || b[i + 1] >= b'8' || &b[i..i + 3] == b"%25"))
    })?;
    Some(String::from_utf8_lossy(&b[at..(at + 3).min(b.len())]).into_owned())
}

/// Why Go's `url.ParseRequestURI` refuses the host (with its port) of an authority, if it does.
fn host_error(host: &str) -> Option<String> {
    let port_ok = |p: &str| {
        p.is_empty()
            || p.strip_prefix(':')
                .is_some_and(|d| d.bytes().all(|b| b.is_ascii_digit()))
    };
    let colon_port = if host.starts_with('[') {
        let Some(end) = host.rfind(']') else {
            return Some("missing ']' in host".into());
        };
        &host[end + 1..]
    } else {
        host.rfind(':').map_or("", |i| &host[i..])
    };
    if !port_ok(colon_port) {
        return Some(format!("invalid port {colon_port:?} after host"));
    }
    if let Some(escape) = bad_escape(host, true) {
        return Some(format!("invalid URL escape {escape:?}"));
    }
    let allowed = |c: char| {
        !c.is_ascii() || c.is_ascii_alphanumeric() || "-_.~!$&'()*+,;=:[]<>\"%".contains(c)
    };
    host.chars()
        .find(|c| !allowed(*c))
        .map(|c| format!("invalid character {:?} in host name", c.to_string()))
}

/// Why Go's `url.ParseRequestURI` refuses `s`, as Go words it after `parse "<s>": `; `None`
/// when it accepts it: an absolute path, or a scheme followed by an opaque part or an
/// authority whose host and port are well-formed, with valid escapes.
pub(crate) fn uri_error(s: &str) -> Option<String> {
    if s.bytes().any(|b| b < 0x20 || b == 0x7f) {
        return Some("net/url: invalid control character in URL".into());
    }
    if s.is_empty() {
        return Some("empty url".into());
    }
    if s == "*" {
        return None;
    }
    let (scheme, rest) = match regex("^([a-zA-Z][a-zA-Z0-9+.-]*):(.*)$").and_then(|r| r.captures(s))
    {
        Some(c) => (true, c.get(2).map_or("", |m| m.as_str())),
        None if s.starts_with(':') => return Some("missing protocol scheme".into()),
        None => (false, s),
    };
    let rest = rest.split_once('?').map_or(rest, |(r, _)| r);
    if !rest.starts_with('/') {
        return (!scheme).then(|| "invalid URI for request".into());
    }
    let path = match rest.strip_prefix("//").filter(|_| scheme) {
        Some(after) => {
            let (authority, path) = after.split_at(after.find('/').unwrap_or(after.len()));
            let host = authority.rsplit('@').next().unwrap_or_default();
            if let Some(why) = host_error(host) {
                return Some(why);
            }
            path
        }
        None => rest,
    };
    bad_escape(path, false).map(|e| format!("invalid URL escape {e:?}"))
}

fn uri(s: &str) -> bool {
    uri_error(s).is_none()
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

/// A date-time as `strfmt` checks it: lower-cased and split at `t`, a date, then a time with
/// a zone (`z` or an offset).
fn date_time(s: &str) -> bool {
    let lower = s.to_lowercase();
    let parts: Vec<&str> = lower.split('t').collect();
    if s.len() < 4 || parts.len() < 2 || !date(parts[0]) {
        return false;
    }
    let Some(c) = regex(r"^([0-9]{2}):([0-9]{2}):([0-9]{2})(.[0-9]+)?(z|([+-][0-9]{2}:[0-9]{2}))$")
        .and_then(|r| r.captures(parts[1]))
    else {
        return false;
    };
    &c[1] <= "23" && &c[2] <= "59" && &c[3] <= "59"
}

/// A Go duration (`1h30m`, `-1.5s`), or numbers with units (`3 days`, `2 hours`) as `strfmt`
/// reads them: at least one unit it knows, by a name or the start of its longest name.
fn duration(s: &str) -> bool {
    if s == "0" || matches(r"^[-+]?((\d+(\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h))+$", s) {
        return true;
    }
    const UNITS: &[&[&str]] = &[
        &["ns", "nano"],
        &["us", "µs", "micro"],
        &["ms", "milli"],
        &["s", "sec"],
        &["m", "min"],
        &["h", "hr", "hour"],
        &["d", "day"],
        &["w", "wk", "week"],
    ];
    let Some(r) = regex(r"(\d+)\s*([A-Za-zµ]+)") else {
        return false;
    };
    r.captures_iter(s).any(|c| {
        let unit = c[2].to_lowercase();
        UNITS.iter().any(|names| {
            let last = names.len() - 1;
            names.iter().enumerate().any(|(i, name)| {
                unit.eq_ignore_ascii_case(name) || (i == last && unit.starts_with(name))
            })
        })
    })
}

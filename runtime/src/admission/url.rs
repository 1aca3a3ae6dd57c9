//! Kubernetes' `url` CEL library: `url(...)` values read as Go's `url.ParseRequestURI` and
//! `url.Parse` read them, their `getScheme`, `getHost`, `getHostname`, `getPort`,
//! `getEscapedPath` and `getQuery`, and `isURL`.

use std::collections::HashMap;

use cel::common::types::{CelBool, CelList, CelMap, CelMapKey, CelString};
use cel::common::value::Val;
use cel::{DeclarationError, Env, ExecutionError};

use super::formats;
use super::values::{cel_value, error};

/// A `url(...)` value: the parts of the URL as written.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Url {
    scheme: String,
    host: String,
    path: String,
    query: String,
    fragment: String,
}

cel_value!(Url, URL_TYPE, "kubernetes.URL");

/// Whether `%` in `s` starts escapes of two hex digits only.
fn escapes_valid(s: &str) -> bool {
    let b = s.as_bytes();
    (0..b.len()).all(|i| {
        b[i] != b'%'
            || (i + 2 < b.len() && b[i + 1].is_ascii_hexdigit() && b[i + 2].is_ascii_hexdigit())
    })
}

/// `s` split into its parts, as Go's `url.Parse` splits a URL `url.ParseRequestURI` accepts.
fn parse(s: &str) -> Result<Url, String> {
    if let Some(why) = formats::uri_error(s) {
        return Err(format!("parse {s:?}: {why}"));
    }
    let (rest, fragment) = s.split_once('#').unwrap_or((s, ""));
    let scheme_re = formats::regex("^([a-zA-Z][a-zA-Z0-9+.-]*):(.*)$");
    let (scheme, rest) = match scheme_re.as_ref().and_then(|r| r.captures(rest)) {
        Some(c) => (
            c[1].to_ascii_lowercase(),
            c.get(2).map_or("", |m| m.as_str()),
        ),
        None => (String::new(), rest),
    };
    let (rest, query) = rest.split_once('?').unwrap_or((rest, ""));
    let mut url = Url {
        scheme,
        host: String::new(),
        path: String::new(),
        query: query.to_owned(),
        fragment: fragment.to_owned(),
    };
    if !url.scheme.is_empty() && !rest.starts_with('/') {
        return Ok(url);
    }
    // `url.Parse` reads an authority after `//` without a scheme too, but not after `///`
    let authority = !url.scheme.is_empty() || !rest.starts_with("///");
    let path = match rest.strip_prefix("//").filter(|_| authority) {
        Some(after) => {
            let (authority, path) = after.split_at(after.find('/').unwrap_or(after.len()));
            url.host = authority.rsplit('@').next().unwrap_or_default().to_owned();
            path
        }
        None => rest,
    };
    url.path = path.to_owned();
    Ok(url)
}

/// Whether Go's path escaping (`escape` with `encodePath`) leaves byte `c` as it is.
fn path_kept(c: u8) -> bool {
    c.is_ascii_alphanumeric() || b"-_.~$&+,/:;=@".contains(&c)
}

/// Whether Go takes byte `c` of a path as written to be validly encoded (`validEncoded`).
fn path_valid(c: u8) -> bool {
    path_kept(c) || b"!'()*[]%".contains(&c)
}

/// The path as Go's `EscapedPath` gives it: as written when that is a valid encoding, else
/// the decoded path with each byte Go escapes escaped.
fn escaped_path(path: &str) -> String {
    if escapes_valid(path) && path.bytes().all(path_valid) {
        return path.to_owned();
    }
    let mut out = String::new();
    for b in unescape(path, false).bytes() {
        if path_kept(b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// `s` with its `%XX` escapes decoded, and `+` as a space in a query.
fn unescape(s: &str, query: bool) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let hex = |c: u8| (c as char).to_digit(16);
        match b[i] {
            b'%' if i + 2 < b.len() => {
                let (Some(h), Some(l)) = (hex(b[i + 1]), hex(b[i + 2])) else {
                    out.push(b[i]);
                    i += 1;
                    continue;
                };
                out.push((h * 16 + l) as u8);
                i += 3;
                continue;
            }
            b'+' if query => out.push(b' '),
            c => out.push(c),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The query as Go's `Query()` reads it: `&`-separated `key=value` pairs, pairs with a `;` or
/// a bad escape left out.
fn query_map(query: &str) -> HashMap<CelMapKey<'static>, Box<dyn Val>> {
    let mut pairs: Vec<(String, Vec<String>)> = Vec::new();
    for pair in query
        .split('&')
        .filter(|p| !p.is_empty() && !p.contains(';'))
    {
        let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
        if !escapes_valid(k) || !escapes_valid(v) {
            continue;
        }
        let (k, v) = (unescape(k, true), unescape(v, true));
        match pairs.iter_mut().find(|(key, _)| *key == k) {
            Some((_, values)) => values.push(v),
            None => pairs.push((k, vec![v])),
        }
    }
    pairs
        .into_iter()
        .map(|(k, values)| {
            let list: Vec<Box<dyn Val>> = values
                .into_iter()
                .map(|v| Box::new(CelString::from(v)) as Box<dyn Val>)
                .collect();
            (
                CelMapKey::from(k),
                Box::new(CelList::from(list)) as Box<dyn Val>,
            )
        })
        .collect()
}

/// The host without its port, and the port: Go's `Hostname()` and `Port()`.
fn split_host(host: &str) -> (&str, &str) {
    if let Some(rest) = host.strip_prefix('[') {
        let (name, after) = rest.split_once(']').unwrap_or((rest, ""));
        return (name, after.strip_prefix(':').unwrap_or_default());
    }
    match host.rsplit_once(':') {
        Some((name, port)) if port.bytes().all(|b| b.is_ascii_digit()) => (name, port),
        _ => (host, ""),
    }
}

fn url(s: &CelString<'_>) -> Result<Url, ExecutionError> {
    parse(s).map_err(|e| {
        error(
            "url",
            format!("URL parse error during conversion from string: {e}"),
        )
    })
}

fn get_scheme(this: &Url) -> CelString<'static> {
    this.scheme.clone().into()
}

fn get_host(this: &Url) -> CelString<'static> {
    this.host.clone().into()
}

fn get_hostname(this: &Url) -> CelString<'static> {
    split_host(&this.host).0.to_owned().into()
}

fn get_port(this: &Url) -> CelString<'static> {
    split_host(&this.host).1.to_owned().into()
}

fn get_escaped_path(this: &Url) -> CelString<'static> {
    escaped_path(&this.path).into()
}

fn get_query(this: &Url) -> CelMap<'static> {
    CelMap::from(query_map(&this.query))
}

fn is_url(s: &CelString<'_>) -> CelBool {
    CelBool::from(formats::valid("uri", s))
}

/// Registers the `url` library on `env`.
pub(crate) fn extension(env: &mut Env) -> Result<(), DeclarationError> {
    env.add_type(URL_TYPE.to_owned())?;
    cel::add_overload!(env, fn url: (CelString) -> Result<Url>, id = "string_to_url")?;
    cel::add_overload!(env, fn is_url: (CelString) -> CelBool, name = "isURL")?;
    cel::add_member_overload!(env, fn get_scheme: (Url) -> CelString)?;
    cel::add_member_overload!(env, fn get_host: (Url) -> CelString)?;
    cel::add_member_overload!(env, fn get_hostname: (Url) -> CelString)?;
    cel::add_member_overload!(env, fn get_port: (Url) -> CelString)?;
    cel::add_member_overload!(env, fn get_escaped_path: (Url) -> CelString)?;
    cel::add_member_overload!(env, fn get_query: (Url) -> CelMap)?;
    Ok(())
}

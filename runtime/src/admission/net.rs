//! Kubernetes' `ip` and `cidr` CEL libraries: `ip(...)` and `cidr(...)` values, their members,
//! `isIP`, `isCIDR` and `ip.isCanonical`, with the apiserver's (Go's `net/netip`) reading of
//! addresses and its error messages.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use cel::common::types::{CelBool, CelInt, CelString};
use cel::{DeclarationError, Env, ExecutionError};

use super::values::{cel_value, error};

/// An `ip(...)` value.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Ip(pub(crate) IpAddr);

/// A `cidr(...)` value: the address as written and the prefix length.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Cidr {
    addr: IpAddr,
    bits: u8,
}

cel_value!(Ip, IP_TYPE, "net.IP");
cel_value!(Cidr, CIDR_TYPE, "net.CIDR");

/// `s` as Go's `netip.ParseAddr` reads it, or its error: `ParseAddr("..."): <why>`.
fn go_parse_addr(s: &str) -> Result<(IpAddr, bool), String> {
    let fail = |msg: &str, at: Option<&str>| {
        let at = at.map(|a| format!(" (at {a:?})")).unwrap_or_default();
        Err(format!("ParseAddr({s:?}): {msg}{at}"))
    };
    match s.bytes().find(|b| matches!(b, b'.' | b':' | b'%')) {
        Some(b'.') => parse_v4(s)
            .map(|a| (IpAddr::V4(a), false))
            .or_else(|(m, at)| fail(m, at)),
        Some(b':') => {
            let (addr, zone) = match s.split_once('%') {
                Some((_, "")) => return fail("zone must be a non-empty string", None),
                Some((a, _)) => (a, true),
                None => (s, false),
            };
            match parse_v6(addr) {
                Ok(a) => Ok((IpAddr::V6(a), zone)),
                Err((m, at)) => fail(m, at),
            }
        }
        Some(_) => fail("missing IPv6 address", None),
        None => fail("unable to parse IP", None),
    }
}

/// Dotted-quad IPv4 as `netip` reads it: no leading zeros, four fields of at most 255.
fn parse_v4(s: &str) -> Result<Ipv4Addr, (&'static str, Option<&str>)> {
    let (mut fields, mut val, mut digits) = (Vec::new(), 0u32, 0);
    let b = s.as_bytes();
    for (i, c) in b.iter().enumerate() {
        match c {
            b'0'..=b'9' => {
                if digits == 1 && val == 0 {
                    return Err(("IPv4 field has octet with leading zero", None));
                }
                val = val * 10 + u32::from(c - b'0');
                digits += 1;
                if val > 255 {
                    return Err(("IPv4 field has value >255", None));
                }
            }
            b'.' => {
                if i == 0 || i == b.len() - 1 || b[i - 1] == b'.' {
                    return Err(("IPv4 field must have at least one digit", Some(&s[i..])));
                }
                if fields.len() == 3 {
                    return Err(("IPv4 address too long", None));
                }
                fields.push(val as u8);
                (val, digits) = (0, 0);
            }
            _ => return Err(("unexpected character", Some(&s[i..]))),
        }
    }
    if fields.len() < 3 {
        return Err(("IPv4 address too short", None));
    }
    Ok(Ipv4Addr::new(fields[0], fields[1], fields[2], val as u8))
}

type Refusal<'a> = (&'static str, Option<&'a str>);

/// One hex field at the start of `s`: its value and how many digits it has.
fn hex_field(s: &str) -> Result<(u16, usize), Refusal<'_>> {
    let digits = s.bytes().take_while(u8::is_ascii_hexdigit).count();
    if digits > 4 {
        return Err(("each group must have 4 or less digits", Some(s)));
    }
    if digits == 0 {
        return Err((
            "each colon-separated field must have at least one digit",
            Some(s),
        ));
    }
    Ok((
        u16::from_str_radix(&s[..digits], 16).unwrap_or_default(),
        digits,
    ))
}

/// IPv6 as `netip` reads it, fields of one to four hex digits, one `::`, an IPv4 address in
/// the last two fields, with its error and the text left where it stopped.
fn parse_v6(s: &str) -> Result<Ipv6Addr, Refusal<'_>> {
    let mut bytes = [0u8; 16];
    let mut ellipsis: Option<usize> = None;
    let mut rest = s;
    if let Some(after) = rest.strip_prefix("::") {
        ellipsis = Some(0);
        rest = after;
        if rest.is_empty() {
            return Ok(Ipv6Addr::UNSPECIFIED);
        }
    }
    let mut i = 0;
    while i < 16 {
        let (value, n) = hex_field(rest)?;
        if rest[n..].starts_with('.') {
            if ellipsis.is_none() && i != 12 {
                let why = "embedded IPv4 address must replace the final 2 fields of the address";
                return Err((why, Some(rest)));
            }
            if i + 4 > 16 {
                let why = "too many hex fields to fit an embedded IPv4 at the end of the address";
                return Err((why, Some(rest)));
            }
            bytes[i..i + 4].copy_from_slice(&parse_v4(rest)?.octets());
            rest = "";
            i += 4;
            break;
        }
        bytes[i..i + 2].copy_from_slice(&value.to_be_bytes());
        i += 2;
        rest = &rest[n..];
        if rest.is_empty() {
            break;
        }
        let Some(after) = rest.strip_prefix(':') else {
            return Err(("unexpected character, want colon", Some(rest)));
        };
        if after.is_empty() {
            return Err(("colon must be followed by more characters", Some(rest)));
        }
        rest = after;
        if let Some(after) = rest.strip_prefix(':') {
            if ellipsis.is_some() {
                return Err(("multiple :: in address", Some(rest)));
            }
            ellipsis = Some(i);
            rest = after;
            if rest.is_empty() {
                break;
            }
        }
    }
    if !rest.is_empty() {
        return Err(("trailing garbage after address", Some(rest)));
    }
    match ellipsis {
        None if i < 16 => return Err(("address string too short", None)),
        Some(_) if i == 16 => {
            return Err(("the :: must expand to at least one field of zeros", None));
        }
        Some(at) => {
            let n = 16 - i;
            bytes.copy_within(at..i, at + n);
            bytes[at..at + n].fill(0);
        }
        None => {}
    }
    Ok(Ipv6Addr::from(bytes))
}

/// Whether `a` is an IPv4-mapped IPv6 address, which Kubernetes refuses.
fn mapped(a: IpAddr) -> bool {
    matches!(a, IpAddr::V6(v6) if v6.to_ipv4_mapped().is_some())
}

/// `s` as Kubernetes' `ip()` reads it, or its error.
pub(crate) fn parse_ip(s: &str) -> Result<IpAddr, String> {
    let (addr, zone) = go_parse_addr(s)
        .map_err(|e| format!("IP Address {s:?} parse error during conversion from string: {e}"))?;
    if zone {
        return Err(format!("IP address {s:?} with zone value is not allowed"));
    }
    if mapped(addr) {
        return Err(format!("IPv4-mapped IPv6 address {s:?} is not allowed"));
    }
    Ok(addr)
}

/// `s` as Kubernetes' `cidr()` reads it (Go's `netip.ParsePrefix`), or its error.
fn parse_cidr(s: &str) -> Result<Cidr, String> {
    const PREFIX: &str = "network address parse error during conversion from string";
    let fail = |msg: String| Err(format!("{PREFIX}: netip.ParsePrefix({s:?}): {msg}"));
    let Some((addr, bits)) = s.rsplit_once('/') else {
        return fail("no '/'".into());
    };
    let (addr, zone) = match go_parse_addr(addr) {
        Ok(a) => a,
        Err(e) => return fail(e),
    };
    if zone {
        return fail("IPv6 zones cannot be present in a prefix".into());
    }
    let leading = bits.len() > 1 && !(b'1'..=b'9').contains(&bits.as_bytes()[0]);
    let Some(n) = bits
        .parse::<i64>()
        .ok()
        .filter(|_| !leading && !bits.starts_with('+'))
    else {
        return fail(format!("bad bits after slash: {bits:?}"));
    };
    let max = if addr.is_ipv4() { 32 } else { 128 };
    if !(0..=max).contains(&n) {
        return fail("prefix length out of range".into());
    }
    if mapped(addr) {
        return Err(format!("IPv4-mapped IPv6 address {s:?} is not allowed"));
    }
    Ok(Cidr {
        addr,
        bits: n as u8,
    })
}

/// Whether `s` is an address `ip()` accepts.
pub(crate) fn is_ip(s: &str) -> bool {
    parse_ip(s).is_ok()
}

/// Whether `s` is a CIDR `cidr()` accepts.
pub(crate) fn is_cidr(s: &str) -> bool {
    parse_cidr(s).is_ok()
}

fn bits_of(a: IpAddr) -> u128 {
    match a {
        IpAddr::V4(v4) => u128::from(u32::from(v4)),
        IpAddr::V6(v6) => u128::from(v6),
    }
}

fn width(a: IpAddr) -> u8 {
    if a.is_ipv4() { 32 } else { 128 }
}

impl Cidr {
    /// The address with the bits past the prefix cleared.
    fn network(&self) -> IpAddr {
        let keep = u128::MAX
            .checked_shl(u32::from(width(self.addr) - self.bits))
            .unwrap_or(0);
        let bits = bits_of(self.addr) & keep;
        match self.addr {
            IpAddr::V4(_) => IpAddr::V4(Ipv4Addr::from(bits as u32)),
            IpAddr::V6(_) => IpAddr::V6(Ipv6Addr::from(bits)),
        }
    }

    fn contains(&self, a: IpAddr) -> bool {
        a.is_ipv4() == self.addr.is_ipv4()
            && Cidr {
                addr: a,
                bits: self.bits,
            }
            .network()
                == self.network()
    }
}

impl std::fmt::Display for Cidr {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.addr, self.bits)
    }
}

fn ip(s: &CelString<'_>) -> Result<Ip, ExecutionError> {
    parse_ip(s).map(Ip).map_err(|e| error("ip", e))
}

fn cidr(s: &CelString<'_>) -> Result<Cidr, ExecutionError> {
    parse_cidr(s).map_err(|e| {
        error(
            "cidr",
            format!("network address parse error during conversion from string: {e}"),
        )
    })
}

fn is_canonical(s: &CelString<'_>) -> Result<CelBool, ExecutionError> {
    let addr = parse_ip(s).map_err(|e| error("ip.isCanonical", e))?;
    Ok(CelBool::from(addr.to_string() == s.inner()))
}

fn family(this: &Ip) -> CelInt {
    CelInt::from(if this.0.is_ipv4() { 4 } else { 6 })
}

fn is_unspecified(this: &Ip) -> CelBool {
    CelBool::from(this.0.is_unspecified())
}

fn is_loopback(this: &Ip) -> CelBool {
    CelBool::from(this.0.is_loopback())
}

fn is_link_local_multicast(this: &Ip) -> CelBool {
    CelBool::from(match this.0 {
        IpAddr::V4(v4) => v4.octets()[..3] == [224, 0, 0],
        IpAddr::V6(v6) => v6.segments()[0] == 0xff02,
    })
}

fn is_link_local_unicast(this: &Ip) -> CelBool {
    CelBool::from(match this.0 {
        IpAddr::V4(v4) => v4.is_link_local(),
        IpAddr::V6(v6) => v6.segments()[0] & 0xffc0 == 0xfe80,
    })
}

/// Go's `IsGlobalUnicast`: any address but the unspecified, loopback, multicast and
/// link-local unicast ones and the IPv4 broadcast address; private ranges included.
fn is_global_unicast(this: &Ip) -> CelBool {
    let a = this.0;
    let broadcast = a == IpAddr::V4(Ipv4Addr::BROADCAST);
    let link_local = *is_link_local_unicast(this).inner();
    CelBool::from(
        !broadcast && !a.is_unspecified() && !a.is_loopback() && !a.is_multicast() && !link_local,
    )
}

fn ip_string(this: &Ip) -> CelString<'static> {
    this.0.to_string().into()
}

fn contains_ip(this: &Cidr, other: &Ip) -> CelBool {
    CelBool::from(this.contains(other.0))
}

/// The apiserver's answer when the string argument of `containsIP` or `containsCIDR` does not
/// parse: no such overload.
fn no_overload(function: &str) -> ExecutionError {
    ExecutionError::no_such_member_overload(function, vec!["net.CIDR".into(), "string".into()])
}

fn contains_ip_string(this: &Cidr, other: &CelString<'_>) -> Result<CelBool, ExecutionError> {
    let other = parse_ip(other).map_err(|_| no_overload("containsIP"))?;
    Ok(contains_ip(this, &Ip(other)))
}

fn contains_cidr(this: &Cidr, other: &Cidr) -> CelBool {
    CelBool::from(this.bits <= other.bits && this.contains(other.addr))
}

fn contains_cidr_string(this: &Cidr, other: &CelString<'_>) -> Result<CelBool, ExecutionError> {
    let other = parse_cidr(other).map_err(|_| no_overload("containsCIDR"))?;
    Ok(contains_cidr(this, &other))
}

fn cidr_ip(this: &Cidr) -> Ip {
    Ip(this.addr)
}

fn prefix_length(this: &Cidr) -> CelInt {
    CelInt::from(i64::from(this.bits))
}

fn masked(this: &Cidr) -> Cidr {
    Cidr {
        addr: this.network(),
        bits: this.bits,
    }
}

fn cidr_string(this: &Cidr) -> CelString<'static> {
    this.to_string().into()
}

fn is_ip_string(s: &CelString<'_>) -> CelBool {
    CelBool::from(is_ip(s))
}

fn is_cidr_string(s: &CelString<'_>) -> CelBool {
    CelBool::from(is_cidr(s))
}

/// Registers the `ip` and `cidr` libraries on `env`.
pub(crate) fn extension(env: &mut Env) -> Result<(), DeclarationError> {
    env.add_type(IP_TYPE.to_owned())?;
    env.add_type(CIDR_TYPE.to_owned())?;
    cel::add_overload!(env, fn ip: (CelString) -> Result<Ip>, id = "string_to_ip")?;
    cel::add_overload!(env, fn is_canonical: (CelString) -> Result<CelBool>, name = "ip.isCanonical")?;
    cel::add_overload!(env, fn is_ip_string: (CelString) -> CelBool, name = "isIP")?;
    cel::add_overload!(env, fn ip_string: (Ip) -> CelString, name = "string", id = "ip_to_string")?;
    cel::add_member_overload!(env, fn family: (Ip) -> CelInt)?;
    cel::add_member_overload!(env, fn is_unspecified: (Ip) -> CelBool)?;
    cel::add_member_overload!(env, fn is_loopback: (Ip) -> CelBool)?;
    cel::add_member_overload!(env, fn is_link_local_multicast: (Ip) -> CelBool)?;
    cel::add_member_overload!(env, fn is_link_local_unicast: (Ip) -> CelBool)?;
    cel::add_member_overload!(env, fn is_global_unicast: (Ip) -> CelBool)?;
    cel::add_overload!(env, fn cidr: (CelString) -> Result<Cidr>, id = "string_to_cidr")?;
    cel::add_overload!(env, fn is_cidr_string: (CelString) -> CelBool, name = "isCIDR")?;
    cel::add_overload!(env, fn cidr_string: (Cidr) -> CelString, name = "string", id = "cidr_to_string")?;
    cel::add_member_overload!(env, fn contains_ip: (Cidr, Ip) -> CelBool, name = "containsIP")?;
    cel::add_member_overload!(env, fn contains_ip_string: (Cidr, CelString) -> Result<CelBool>, name = "containsIP")?;
    cel::add_member_overload!(env, fn contains_cidr: (Cidr, Cidr) -> CelBool, name = "containsCIDR")?;
    cel::add_member_overload!(env, fn contains_cidr_string: (Cidr, CelString) -> Result<CelBool>, name = "containsCIDR")?;
    cel::add_member_overload!(env, fn cidr_ip: (Cidr) -> Ip, name = "ip")?;
    cel::add_member_overload!(env, fn prefix_length: (Cidr) -> CelInt)?;
    cel::add_member_overload!(env, fn masked: (Cidr) -> Cidr)?;
    Ok(())
}

//! The domain-pattern grammar shared by the proxy, the launcher and the controller.
//!
//! One entry is `host[:port]` where host is an exact DNS name, `*.suffix` (any strictly
//! deeper subdomain, never the apex), an IPv4 literal or a bracketed IPv6 literal. Bare
//! `*` (and `*:port`) is only meaningful in `deniedDomains`. Matching is label-based and
//! case-insensitive: a wildcard never matches an IP literal and never crosses into a
//! longer label (`*.example.com` does not match `evilexample.com`).

use std::fmt;
use std::net::{Ipv4Addr, Ipv6Addr};

/// Which list an entry comes from; only deny lists may use the catch-all `*`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ListKind {
    Allowed,
    Denied,
}

/// The host part of a parsed pattern, already canonical (lower-case, numeric IPv4 forms
/// folded to a dotted quad).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum HostPattern {
    /// `example.com`, `localhost`.
    Exact(String),
    /// `*.example.com`: stores `example.com`.
    Subdomains(String),
    Ipv4(Ipv4Addr),
    Ipv6(Ipv6Addr),
    /// `*` (deny lists only).
    Any,
}

/// A parsed `allowedDomains` / `deniedDomains` entry.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct DomainPattern {
    pub host: HostPattern,
    /// `None` matches every port.
    pub port: Option<u16>,
}

/// Why an entry was refused. Each message says what to write instead.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PatternError {
    #[error("is empty")]
    Empty,
    #[error("contains whitespace or control characters")]
    Whitespace,
    #[error("has a scheme; write only the host, e.g. \"example.com\"")]
    Scheme,
    #[error("has a path; write only the host, e.g. \"example.com\"")]
    Path,
    #[error("has user info ('@'); write only the host")]
    UserInfo,
    #[error("is not ASCII; write the punycode form \"{0}\"")]
    NonAscii(String),
    #[error("is not ASCII and has no valid punycode form")]
    BadUnicode,
    #[error("ends with a dot; remove the trailing '.'")]
    TrailingDot,
    #[error("has an empty label ('..' or a leading '.')")]
    EmptyLabel,
    #[error("label \"{0}\" has a character other than a-z, 0-9, '-' or '_'")]
    BadLabelChar(String),
    #[error("label \"{0}\" starts or ends with '-'")]
    HyphenEdge(String),
    #[error("label \"{0}\" is longer than 63 characters")]
    LabelTooLong(String),
    #[error("is longer than 253 characters")]
    TooLong,
    #[error("bare '*' matches every host and is only allowed in deniedDomains")]
    BareStarAllowed,
    #[error("'*' may only be a whole first label followed by a dot, as in \"*.example.com\"")]
    MisplacedStar,
    #[error("\"*.{0}\" is too broad: a wildcard needs at least two labels after \"*.\"")]
    WildcardTooBroad(String),
    #[error("a single-label name other than \"localhost\" is not allowed (it would be a TLD)")]
    SingleLabel,
    #[error("port \"{0}\" is not a number from 1 to 65535 without leading zeros")]
    BadPort(String),
    #[error("IPv6 literals must be bracketed, as in \"[::1]\" or \"[2001:db8::1]:443\"")]
    UnbracketedIpv6,
    #[error("\"{0}\" is not a valid IPv6 address")]
    BadIpv6(String),
    #[error("IPv6 zone ids ('%') are not allowed")]
    ZoneId,
    #[error("\"{0}\" looks like an IPv4 address but is not one")]
    BadIpv4(String),
}

impl DomainPattern {
    /// Parses one entry of `allowedDomains` (`ListKind::Allowed`) or `deniedDomains`.
    pub fn parse(entry: &str, kind: ListKind) -> Result<Self, PatternError> {
        if entry.is_empty() {
            return Err(PatternError::Empty);
        }
        if entry.chars().any(|c| c.is_whitespace() || c.is_control()) {
            return Err(PatternError::Whitespace);
        }
        if !entry.is_ascii() {
            return Err(match idna::domain_to_ascii(entry) {
                Ok(ascii) if ascii.is_ascii() && !ascii.is_empty() => PatternError::NonAscii(ascii),
                _ => PatternError::BadUnicode,
            });
        }
        if entry.contains("://") {
            return Err(PatternError::Scheme);
        }
        if entry.contains('/') {
            return Err(PatternError::Path);
        }
        if entry.contains('@') {
            return Err(PatternError::UserInfo);
        }
        let (host, port) = split_port(entry)?;
        let host = parse_host(host, kind)?;
        Ok(DomainPattern { host, port })
    }

    /// Whether this entry matches a request for `host:port`. `host` must already be
    /// canonical (see [`CanonicalHost`]).
    pub fn matches(&self, host: &CanonicalHost, port: u16) -> bool {
        if self.port.is_some_and(|p| p != port) {
            return false;
        }
        match (&self.host, host) {
            (HostPattern::Any, _) => true,
            (HostPattern::Exact(e), CanonicalHost::Name(n)) => e == n,
            (HostPattern::Subdomains(base), CanonicalHost::Name(n)) => is_strict_subdomain(n, base),
            (HostPattern::Ipv4(a), CanonicalHost::Ipv4(b)) => a == b,
            (HostPattern::Ipv6(a), CanonicalHost::Ipv6(b)) => a == b,
            _ => false,
        }
    }
}

/// `name` is a strict subdomain of `base` at a label boundary.
pub fn is_strict_subdomain(name: &str, base: &str) -> bool {
    name.len() > base.len() + 1 && name.ends_with(base) && name.as_bytes()[name.len() - base.len() - 1] == b'.'
}

impl fmt::Display for DomainPattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.host {
            HostPattern::Exact(h) => write!(f, "{h}")?,
            HostPattern::Subdomains(b) => write!(f, "*.{b}")?,
            HostPattern::Ipv4(a) => write!(f, "{a}")?,
            HostPattern::Ipv6(a) => write!(f, "[{a}]")?,
            HostPattern::Any => write!(f, "*")?,
        }
        if let Some(p) = self.port {
            write!(f, ":{p}")?;
        }
        Ok(())
    }
}

fn split_port(entry: &str) -> Result<(&str, Option<u16>), PatternError> {
    if let Some(rest) = entry.strip_prefix('[') {
        let Some(close) = rest.find(']') else {
            return Err(PatternError::BadIpv6(entry.to_string()));
        };
        let after = &rest[close + 1..];
        let host = &entry[..close + 2];
        return match after {
            "" => Ok((host, None)),
            p => match p.strip_prefix(':') {
                Some(p) => Ok((host, Some(parse_port(p)?))),
                None => Err(PatternError::BadIpv6(entry.to_string())),
            },
        };
    }
    match entry.matches(':').count() {
        0 => Ok((entry, None)),
        1 => {
            let (h, p) = entry.split_once(':').unwrap_or((entry, ""));
            Ok((h, Some(parse_port(p)?)))
        }
        _ => Err(PatternError::UnbracketedIpv6),
    }
}

/// Ports are 1..=65535 written in plain decimal (no sign, no leading zero).
pub fn parse_port(p: &str) -> Result<u16, PatternError> {
    let bad = || PatternError::BadPort(p.to_string());
    if p.is_empty() || !p.bytes().all(|b| b.is_ascii_digit()) || (p.len() > 1 && p.starts_with('0')) {
        return Err(bad());
    }
    match p.parse::<u32>() {
        Ok(n) if (1..=65535).contains(&n) => Ok(n as u16),
        _ => Err(bad()),
    }
}

fn parse_host(host: &str, kind: ListKind) -> Result<HostPattern, PatternError> {
    if let Some(inner) = host.strip_prefix('[') {
        let inner = inner.strip_suffix(']').unwrap_or(inner);
        if inner.contains('%') {
            return Err(PatternError::ZoneId);
        }
        return inner.parse::<Ipv6Addr>().map(HostPattern::Ipv6).map_err(|_| PatternError::BadIpv6(inner.to_string()));
    }
    if host == "*" {
        return match kind {
            ListKind::Denied => Ok(HostPattern::Any),
            ListKind::Allowed => Err(PatternError::BareStarAllowed),
        };
    }
    let lower = host.to_ascii_lowercase();
    if lower.ends_with('.') {
        return Err(PatternError::TrailingDot);
    }
    if let Some(base) = lower.strip_prefix("*.") {
        if base.contains('*') {
            return Err(PatternError::MisplacedStar);
        }
        check_labels(base)?;
        if base.split('.').count() < 2 || looks_numeric(base) {
            return Err(PatternError::WildcardTooBroad(base.to_string()));
        }
        return Ok(HostPattern::Subdomains(base.to_string()));
    }
    if lower.contains('*') {
        return Err(PatternError::MisplacedStar);
    }
    if looks_numeric(&lower) {
        return parse_ipv4_loose(&lower).map(HostPattern::Ipv4).ok_or_else(|| PatternError::BadIpv4(lower.clone()));
    }
    check_labels(&lower)?;
    if !lower.contains('.') && lower != "localhost" {
        return Err(PatternError::SingleLabel);
    }
    Ok(HostPattern::Exact(lower))
}

fn check_labels(name: &str) -> Result<(), PatternError> {
    if name.len() > 253 {
        return Err(PatternError::TooLong);
    }
    for label in name.split('.') {
        if label.is_empty() {
            return Err(PatternError::EmptyLabel);
        }
        if label.len() > 63 {
            return Err(PatternError::LabelTooLong(label.to_string()));
        }
        if !label.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_') {
            return Err(PatternError::BadLabelChar(label.to_string()));
        }
        if label.starts_with('-') || label.ends_with('-') {
            return Err(PatternError::HyphenEdge(label.to_string()));
        }
    }
    Ok(())
}

/// A name whose last label is all digits or hex (`0x..`) is an IPv4 spelling to inet_aton,
/// so it must be judged as an address, never as a DNS name.
fn looks_numeric(name: &str) -> bool {
    let last = name.rsplit('.').next().unwrap_or("");
    !last.is_empty()
        && (last.bytes().all(|b| b.is_ascii_digit())
            || (last.starts_with("0x") && last[2..].bytes().all(|b| b.is_ascii_hexdigit())))
}

/// inet_aton's forms: `a.b.c.d`, `a.b.c`, `a.b`, `a`, each part decimal, octal (`0..`)
/// or hex (`0x..`), so `127.1`, `2130706433` and `0x7f.1` all mean 127.0.0.1.
pub fn parse_ipv4_loose(s: &str) -> Option<Ipv4Addr> {
    let parts: Vec<&str> = s.split('.').collect();
    if parts.is_empty() || parts.len() > 4 {
        return None;
    }
    let mut nums = Vec::with_capacity(4);
    for p in &parts {
        nums.push(parse_inet_part(p)?);
    }
    let last = *nums.last()?;
    let head = &nums[..nums.len() - 1];
    if head.iter().any(|&n| n > 255) {
        return None;
    }
    let max_last: u64 = match head.len() {
        0 => u32::MAX as u64,
        1 => 0xff_ffff,
        2 => 0xffff,
        _ => 0xff,
    };
    if last > max_last {
        return None;
    }
    let mut v: u64 = 0;
    for (i, &n) in head.iter().enumerate() {
        v |= n << (24 - 8 * i);
    }
    Some(Ipv4Addr::from((v | last) as u32))
}

fn parse_inet_part(p: &str) -> Option<u64> {
    if p.is_empty() || p.len() > 12 {
        return None;
    }
    let (digits, radix) = if let Some(h) = p.strip_prefix("0x").or_else(|| p.strip_prefix("0X")) {
        (h, 16)
    } else if p.len() > 1 && p.starts_with('0') {
        (&p[1..], 8)
    } else {
        (p, 10)
    };
    if digits.is_empty() {
        return if radix == 16 { Some(0) } else { None };
    }
    u64::from_str_radix(digits, radix).ok()
}

/// A request's host after the one canonicalisation every component applies before
/// matching: lower-case, one trailing dot stripped, numeric IPv4 forms folded, IPv6
/// unbracketed (IPv4-mapped IPv6 becomes IPv4), zone ids refused.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum CanonicalHost {
    Name(String),
    Ipv4(Ipv4Addr),
    Ipv6(Ipv6Addr),
}

impl CanonicalHost {
    pub fn parse(raw: &str) -> Result<Self, PatternError> {
        if raw.is_empty() {
            return Err(PatternError::Empty);
        }
        if let Some(inner) = raw.strip_prefix('[').and_then(|r| r.strip_suffix(']')) {
            if inner.contains('%') {
                return Err(PatternError::ZoneId);
            }
            let a: Ipv6Addr = inner.parse().map_err(|_| PatternError::BadIpv6(inner.to_string()))?;
            return Ok(match a.to_ipv4_mapped() {
                Some(v4) => CanonicalHost::Ipv4(v4),
                None => CanonicalHost::Ipv6(a),
            });
        }
        if raw.contains(':') {
            return Err(PatternError::UnbracketedIpv6);
        }
        if !raw.is_ascii() {
            return Err(PatternError::BadUnicode);
        }
        let lower = raw.to_ascii_lowercase();
        let name = lower.strip_suffix('.').unwrap_or(&lower);
        if looks_numeric(name) {
            return parse_ipv4_loose(name)
                .map(CanonicalHost::Ipv4)
                .ok_or_else(|| PatternError::BadIpv4(name.to_string()));
        }
        check_labels(name)?;
        Ok(CanonicalHost::Name(name.to_string()))
    }
}

impl fmt::Display for CanonicalHost {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CanonicalHost::Name(n) => write!(f, "{n}"),
            CanonicalHost::Ipv4(a) => write!(f, "{a}"),
            CanonicalHost::Ipv6(a) => write!(f, "[{a}]"),
        }
    }
}

#[cfg(test)]
#[path = "domain_tests.rs"]
mod tests;

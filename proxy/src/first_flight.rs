//! The client's first bytes in a tunnel, and whether they name the host the tunnel was
//! allowed for. A tunnel is allowed for one name (the CONNECT target, the SOCKS target, the
//! name behind a transparent connection's address), but a TLS client says which site it
//! wants in the ClientHello's SNI and an HTTP client in `Host`; a CDN routes by those. So
//! a tunnel opened for an allowed name that then asks for another would front for it.
//! Pure: the bytes in, a decision out; the relay forwards the same bytes untouched.

use crate::client_hello::{self, Hello};
use crate::policy::{Policy, Verdict};
use crate::target::{self, Target};
use settings_schema::CanonicalHost;

/// What the first bytes are.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Seen {
    Tls(Hello),
    /// An HTTP/1.x request head: the hosts its Host header and absolute-form target name
    /// (without port); `head_end` is where its blank line starts.
    Http {
        names: Vec<String>,
        head_end: usize,
    },
    /// Anything else (SSH, database protocols, ...): carries no name to check.
    Other,
    NeedMore,
    /// TLS or HTTP that could be read two ways: refused.
    Malformed(&'static str),
}

/// Largest request head read before deciding.
pub const MAX_HEAD: usize = 64 * 1024;

pub fn classify(buf: &[u8]) -> Seen {
    match buf.first() {
        None => Seen::NeedMore,
        Some(&client_hello::HANDSHAKE) => match client_hello::parse(buf) {
            client_hello::Parsed::Hello(h) => Seen::Tls(h),
            client_hello::Parsed::NeedMore => Seen::NeedMore,
            client_hello::Parsed::Malformed(why) => Seen::Malformed(why),
        },
        // an SSL 2.0-format ClientHello (length with the top bit, then type 1): TLS without SNI
        Some(b) if b & 0x80 != 0 && buf.get(2).is_none_or(|&t| t == 1) => {
            Seen::Malformed("an SSL 2.0-format ClientHello")
        }
        Some(_) => http_head(buf),
    }
}

/// A first line naming `HTTP/` is an HTTP request and must be exactly `METHOD SP target SP
/// HTTP/1.x` with its headers up to the blank line: any other spelling (lowercase method,
/// tabs, HTTP/1.2, HTTP/2's preface) could be read by a server as a request we did not
/// judge, so it is refused. Lines without `HTTP/` are another protocol.
fn http_head(buf: &[u8]) -> Seen {
    let Some(nl) = buf.iter().position(|&c| c == b'\n') else {
        // no line yet: text may still become a request line, binary will not
        let text = buf.iter().all(|&c| c == b'\t' || (0x20..0x7f).contains(&c));
        return if text && buf.len() < MAX_HEAD { Seen::NeedMore } else { Seen::Other };
    };
    let line = &buf[..nl];
    if !line.windows(5).any(|w| w.eq_ignore_ascii_case(b"HTTP/")) {
        return Seen::Other;
    }
    let Some(end) = find(buf, b"\r\n\r\n") else {
        return if buf.len() >= MAX_HEAD { Seen::Malformed("HTTP request head too large") } else { Seen::NeedMore };
    };
    let head = &buf[..end];
    let mut lines = head.split(|&c| c == b'\n').map(|l| l.strip_suffix(b"\r").unwrap_or(l));
    let request_line = lines.next().unwrap_or_default();
    let parts: Vec<&[u8]> = request_line.split(|&c| c == b' ').collect();
    let [method, target, version] = parts[..] else {
        return Seen::Malformed("HTTP request line is not METHOD SP target SP version");
    };
    if method.is_empty() || !method.iter().all(|c| c.is_ascii_uppercase() || *c == b'-') {
        return Seen::Malformed("HTTP method is not an uppercase token");
    }
    if version != b"HTTP/1.1" && version != b"HTTP/1.0" {
        return Seen::Malformed("not HTTP/1.0 or HTTP/1.1");
    }
    let mut names = Vec::new();
    // an absolute-form target names the site too, and wins over Host (RFC 9112 3.2.2)
    if !target.starts_with(b"/") && target != b"*" {
        let Some(authority) = std::str::from_utf8(target)
            .ok()
            .and_then(|t| t.split_once("://"))
            .map(|(_, rest)| rest.split(['/', '?', '#']).next().unwrap_or_default())
        else {
            return Seen::Malformed("HTTP request target is neither a path nor an absolute URL");
        };
        match target::parse_authority(authority, Some(80)) {
            Ok(t) => names.push(t.host.to_string()),
            Err(_) => return Seen::Malformed("HTTP request target names no host"),
        }
    }
    let mut host_seen = false;
    for line in lines {
        let Some(colon) = line.iter().position(|&c| c == b':') else {
            return Seen::Malformed("HTTP header line without a colon");
        };
        if !line[..colon].eq_ignore_ascii_case(b"host") {
            continue;
        }
        if host_seen {
            return Seen::Malformed("two Host headers");
        }
        host_seen = true;
        let Ok(value) = std::str::from_utf8(&line[colon + 1..]) else {
            return Seen::Malformed("Host header is not text");
        };
        let value = value.trim_matches([' ', '\t']);
        // host[:port], [v6][:port]: only the host part names the site
        match target::parse_authority(value, Some(80)) {
            Ok(t) => names.push(t.host.to_string()),
            Err(_) => return Seen::Malformed("Host header is not a host"),
        }
    }
    Seen::Http { names, head_end: end }
}

/// The request with `Connection: close` added: the server answers it and closes, so no
/// second request (with another Host) rides the same judged tunnel.
pub fn one_request_only(buf: &[u8], head_end: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(buf.len() + 19);
    out.extend_from_slice(&buf[..head_end + 2]);
    out.extend_from_slice(b"Connection: close\r\n");
    out.extend_from_slice(&buf[head_end + 2..]);
    out
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

/// Why a tunnel's first bytes were refused (the log's `reason`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// The SNI or Host names a host the policy does not allow on this port.
    NameMismatch,
    /// TLS without a server name, to a target that is a name.
    NoServerName,
    /// Encrypted Client Hello whose outer name is not the target itself.
    EncryptedName,
    Malformed,
}

impl Refusal {
    pub fn reason(self) -> &'static str {
        match self {
            Refusal::NameMismatch => "sni-mismatch",
            Refusal::NoServerName => "sni-missing",
            Refusal::EncryptedName => "ech",
            Refusal::Malformed => "malformed-first-flight",
        }
    }
}

/// Decides a tunnel to `target` (already allowed by `policy`) by its first bytes.
///
/// A name in SNI or Host is fine when it is the target itself or a host the policy allows
/// on the same port. No name at all is fine for an IP-literal target (clients send no SNI
/// for addresses). Encrypted Client Hello hides the real name, so it passes only when its
/// outer name is the target itself (Chrome's GREASE ECH does that; a real ECH hello
/// carries the provider's public name instead). `nameless` (the settings'
/// `allowTlsWithoutSni`) lets unnamed and encrypted hellos through.
pub fn judge(target: &Target, seen: &Seen, policy: &Policy, nameless: bool) -> Result<(), Refusal> {
    let names: Vec<&str> = match seen {
        Seen::Other => return Ok(()),
        Seen::NeedMore | Seen::Malformed(_) => return Err(Refusal::Malformed),
        Seen::Tls(h) => {
            if h.encrypted_name && !nameless && !is_target(target, h.server_name.as_deref()) {
                return Err(Refusal::EncryptedName);
            }
            h.server_name.as_deref().into_iter().collect()
        }
        Seen::Http { names, .. } => names.iter().map(String::as_str).collect(),
    };
    if names.is_empty() {
        return if nameless || !matches!(target.host, CanonicalHost::Name(_)) {
            Ok(())
        } else {
            Err(Refusal::NoServerName)
        };
    }
    for n in names {
        if is_target(target, Some(n)) {
            continue;
        }
        match target::parse_authority(n, Some(target.port)) {
            Ok(t)
                if matches!(
                    policy.decide(&Target { host: t.host.clone(), port: target.port }),
                    Verdict::Allow { .. }
                ) => {}
            _ => return Err(Refusal::NameMismatch),
        }
    }
    Ok(())
}

fn is_target(target: &Target, name: Option<&str>) -> bool {
    name.and_then(|n| CanonicalHost::parse(n).ok()).is_some_and(|h| h == target.host)
}

#[cfg(test)]
#[path = "first_flight_tests.rs"]
mod tests;

/// A fatal TLS `unrecognized_name` alert: the client prints a TLS error naming the
/// problem rather than a bare reset.
const TLS_ALERT: &[u8] = &[0x15, 0x03, 0x03, 0x00, 0x02, 0x02, 0x70];
const HTTP_REFUSED: &[u8] = b"HTTP/1.1 403 Blocked by sandbox network policy (Host not allowed for this connection)\r\nContent-Type: text/plain\r\nX-Proxy-Error: blocked-by-host-mismatch\r\nContent-Length: 56\r\nConnection: close\r\n\r\nConnection blocked: the Host header names another host.\n";

/// The tunnel gate for [`crate::tunnel::relay_gated`]: waits for enough bytes, then judges.
pub fn gate(target: &Target, policy: &Policy, nameless: bool, buf: &[u8], last_chance: bool) -> crate::tunnel::Gate {
    use crate::tunnel::Gate;
    let seen = classify(buf);
    if seen == Seen::NeedMore && !last_chance {
        return Gate::NeedMore;
    }
    match judge(target, &seen, policy, nameless) {
        Ok(()) => match seen {
            Seen::Http { head_end, .. } => Gate::PassWith(one_request_only(buf, head_end)),
            _ => Gate::Pass,
        },
        Err(r) => {
            let reply = if matches!(seen, Seen::Http { .. }) { HTTP_REFUSED } else { TLS_ALERT };
            Gate::Refuse { reason: r.reason(), reply }
        }
    }
}

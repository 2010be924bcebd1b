//! The client's first bytes in a tunnel, and whether they name the host the tunnel was
//! allowed for. A tunnel is allowed for one name (the CONNECT target, the SOCKS target, the
//! name behind a transparent connection's address), but a TLS client says which site it
//! wants in the ClientHello's SNI and an HTTP client in `Host`; a CDN routes by those. So
//! a tunnel opened for an allowed name that then asks for another would front for it.
//!
//! The gate recognises, it never defaults to pass. Bytes are read as the most lenient
//! common server would read them (OpenSSL, BoringSSL, Go, rustls, nginx, Node, Envoy,
//! HAProxy): anything one of them could take as a TLS handshake or an HTTP request is
//! judged as that, and refused unless it is spelled so that every server reads the same
//! name. Only bytes no such server reads as TLS or HTTP are "another protocol", and those
//! pass only where the settings allow them (`network.allowOtherProtocols`).
//!
//! What the lenient ends of each family accept, which the rules below follow:
//! - before a ClientHello: Go's crypto/tls drops warning alerts (up to 16 useless
//!   records), rustls 0.23 ignores up to 4 warning alerts, BoringSSL up to 4 and up to 32
//!   empty records, OpenSSL refuses an alert there; an SSL 2.0-format hello (OpenSSL
//!   still reads one) carries no SNI. So only a handshake record may come first.
//! - before a request line: nginx, Node's llhttp, HAProxy (`H1_MSG_RQBEFORE`) and Apache
//!   skip any CR and LF (Envoy's http-parser codec as Node's); Go skips up to four after
//!   a POST only.
//!   So empty lines are skipped here and the request after them judged.
//! - the request line: HAProxy takes any method token and runs of SP/HT, and reads
//!   `METHOD URI` without a version as HTTP/0.9 (served from the default backend), as do
//!   nginx and Apache for `GET`; Go takes lowercase methods; none takes a control byte in
//!   it except Apache's non-default `HttpProtocolOptions Unsafe`. Sizes: Go reads heads of
//!   1 MiB, Envoy 60 KiB (configurable to 8 MiB), nginx 4 x 8 KiB, Node 16 KiB, HAProxy
//!   its buffer (16 KiB). So only the exact spelling passes, within 64 KiB.
//! - headers: Go and HAProxy unfold continuation lines, HAProxy's
//!   `accept-invalid-http-request` takes non-token names; duplicate Hosts are refused or
//!   merged. So folding, non-token names and a second Host are refused.
//!
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
    /// (without port); `head_end` is where its blank line starts; `strip` the header lines
    /// that are left out when it is passed on (an h2c upgrade, the Connection headers).
    Http {
        names: Vec<String>,
        head_end: usize,
        strip: Vec<std::ops::Range<usize>>,
    },
    /// Neither TLS nor HTTP as any server reads them (SSH, databases, git://): carries no
    /// name the gate can check.
    Other,
    NeedMore,
    /// TLS or HTTP that could be read two ways, or longer than the gate reads: refused.
    Malformed(&'static str),
}

/// Largest request head (leading empty lines included) read before deciding: longer is
/// refused, never passed (Go's net/http reads heads of up to 1 MiB).
pub const MAX_HEAD: usize = 64 * 1024;

/// TLS record content types other than handshake (change_cipher_spec, alert,
/// application_data, heartbeat): none may open a stream. Go and rustls skip warning
/// alerts before a ClientHello and BoringSSL skips empty records, so a stream opening with
/// one of these could still carry a hello the gate never saw.
const TLS_OTHER_RECORDS: std::ops::RangeInclusive<u8> = 0x14..=0x18;

pub fn classify(buf: &[u8]) -> Seen {
    classify_len(buf).0
}

/// [`classify`], and for a ClientHello how many bytes its records take.
fn classify_len(buf: &[u8]) -> (Seen, usize) {
    if buf.first() == Some(&client_hello::HANDSHAKE) {
        return hello(buf);
    }
    (classify_other(buf), 0)
}

fn hello(buf: &[u8]) -> (Seen, usize) {
    match client_hello::parse_with_len(buf) {
        (client_hello::Parsed::Hello(h), len) => (Seen::Tls(h), len),
        (client_hello::Parsed::NeedMore, _) => (Seen::NeedMore, 0),
        (client_hello::Parsed::Malformed(why), _) => (Seen::Malformed(why), 0),
    }
}

fn classify_other(buf: &[u8]) -> Seen {
    match buf.first() {
        None => Seen::NeedMore,
        Some(b) if TLS_OTHER_RECORDS.contains(b) => Seen::Malformed("a TLS record other than a ClientHello came first"),
        // an SSL 2.0-format ClientHello (length with the top bit, then type 1): TLS without SNI
        Some(b) if b & 0x80 != 0 && buf.get(2).is_none_or(|&t| t == 1) => {
            Seen::Malformed("an SSL 2.0-format ClientHello")
        }
        // a PROXY protocol header: nginx (`proxy_protocol`), HAProxy (`accept-proxy`) and
        // Envoy listeners that take one read the TLS or HTTP after it
        Some(_) if buf.starts_with(PROXY_V2) || buf.starts_with(b"PROXY ") => {
            Seen::Malformed("a PROXY protocol header")
        }
        Some(_) if PROXY_V2.starts_with(buf) || b"PROXY ".starts_with(buf) => Seen::NeedMore,
        Some(_) => text(buf),
    }
}

/// The signature of a PROXY protocol version 2 header.
const PROXY_V2: &[u8] = b"\r\n\r\n\0\r\nQUIT\n";

/// A token character (RFC 9110 5.6.2): what a method is made of.
fn tchar(c: u8) -> bool {
    c.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&c)
}

/// Bytes that do not open with a TLS record. HTTP servers skip empty lines (CR, LF) before
/// a request (RFC 9112 2.2; nginx, Node, HAProxy, Apache do), so the request line is the
/// first line after them. A line naming `HTTP/` anywhere is an HTTP/1.x request, and a line
/// starting `GET ` an HTTP/0.9 one (nginx, Apache and HAProxy serve those from the default
/// host); both are judged. Any other complete first line, and bytes that cannot start a
/// line (binary), are another protocol.
fn text(buf: &[u8]) -> Seen {
    let start = buf.iter().position(|&c| c != b'\r' && c != b'\n');
    let Some(start) = start else {
        return if buf.len() >= MAX_HEAD { Seen::Malformed("only empty lines") } else { Seen::NeedMore };
    };
    let first = buf[start];
    if first == b' ' || first == b'\t' {
        // Apache's lenient mode skips whitespace before a request line too
        return Seen::Malformed("whitespace before the first line");
    }
    if !tchar(first) {
        return Seen::Other;
    }
    // The first line ends at LF; a server reading C strings ends it at NUL, one ending lines
    // at bare CR there. So the line is judged up to the first control byte: if that is not
    // an LF, every server either rejects the line or reads only what precedes it.
    let Some(end) = buf[start..].iter().position(|&c| (c < b' ' && c != b'\t') || c == 0x7f) else {
        // the line may still become a request: wait for its end, up to the bound
        return if buf.len() >= MAX_HEAD {
            Seen::Malformed("first line longer than the gate reads")
        } else {
            Seen::NeedMore
        };
    };
    let at = start + end;
    let full_line = match (buf[at], buf.get(at + 1)) {
        (b'\n', _) | (b'\r', Some(b'\n')) => true,
        (b'\r', None) => return Seen::NeedMore, // CR LF split between reads
        _ => false,
    };
    // what a server ending lines at LF only reads as the line, as far as it has come
    let to_lf = buf[start..].iter().position(|&c| c == b'\n').map_or(&buf[start..], |nl| &buf[start..start + nl]);
    if names_http(&buf[start..at]) || names_http(to_lf) {
        return if full_line { http_head(buf, start) } else { Seen::Malformed("a control byte in a request line") };
    }
    let line = &buf[start..at];
    if line.starts_with(b"GET") && line.get(3).is_none_or(|c| c.is_ascii_whitespace()) {
        return Seen::Malformed("an HTTP/0.9 request names no host");
    }
    Seen::Other
}

/// Whether a (first) line could be an HTTP/1.x request line to some server: it names
/// `HTTP/` anywhere, or ends in another protocol's version that llhttp (Node) serves as
/// HTTP with its Host (`POST / RTSP/1.0`, `SOURCE / ICE/1.0`), or any `NAME/digit` there.
fn names_http(line: &[u8]) -> bool {
    if line.windows(5).any(|w| w.eq_ignore_ascii_case(b"HTTP/")) {
        return true;
    }
    let line = trim(line);
    let last = line.rsplit(|&c| c == b' ' || c == b'\t').next().unwrap_or_default();
    let letters = last.iter().take_while(|c| c.is_ascii_alphabetic()).count();
    line.len() > last.len()
        && letters > 0
        && last.get(letters) == Some(&b'/')
        && last.get(letters + 1).is_some_and(u8::is_ascii_digit)
}

/// One line of a head: its bytes without the line end, and where the next line starts.
/// A bare CR inside a line is refused: some servers end lines there, others do not.
fn next_line(buf: &[u8], at: usize) -> Option<Result<(&[u8], usize), &'static str>> {
    let nl = buf[at..].iter().position(|&c| c == b'\n')?;
    let line = &buf[at..at + nl];
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    if line.contains(&b'\r') {
        return Some(Err("a bare CR inside an HTTP line"));
    }
    Some(Ok((line, at + nl + 1)))
}

/// An HTTP/1.x request head starting at `start`, spelled exactly (`METHOD SP target SP
/// HTTP/1.x`, `name: value` headers, no folding, no control characters): any other
/// spelling (lowercase method, tabs, HTTP/1.2, HTTP/2's preface, `Host :`) could be read by
/// some server as a request naming a host we did not judge, so it is refused.
fn http_head(buf: &[u8], start: usize) -> Seen {
    // each line with where it starts and where the next one does
    let mut lines = Vec::new();
    let mut at = start;
    let head_end = loop {
        match next_line(buf, at) {
            None if buf.len() >= MAX_HEAD => return Seen::Malformed("HTTP request head longer than the gate reads"),
            None => return Seen::NeedMore,
            Some(Err(why)) => return Seen::Malformed(why),
            Some(Ok((line, next))) => {
                if next > MAX_HEAD {
                    return Seen::Malformed("HTTP request head longer than the gate reads");
                }
                if line.is_empty() {
                    break at;
                }
                lines.push((line, at..next));
                at = next;
            }
        }
    };
    let request_line = lines.first().map(|l| l.0).unwrap_or_default();
    let parts: Vec<&[u8]> = request_line.split(|&c| c == b' ').collect();
    let [method, target, version] = parts[..] else {
        return Seen::Malformed("HTTP request line is not METHOD SP target SP version");
    };
    if method.is_empty() || !method.iter().all(|c| c.is_ascii_uppercase() || *c == b'-' || *c == b'_') {
        return Seen::Malformed("HTTP method is not an uppercase token");
    }
    if version != b"HTTP/1.1" && version != b"HTTP/1.0" {
        return Seen::Malformed("not HTTP/1.0 or HTTP/1.1");
    }
    if target.is_empty() || target.iter().any(|&c| c <= b' ' || c >= 0x7f) {
        return Seen::Malformed("HTTP request target has control or non-ASCII bytes");
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
    let (mut chunked, mut length) = (false, false);
    let mut strip = Vec::new();
    for (line, span) in &lines[1..] {
        if line.first().is_some_and(|&c| c == b' ' || c == b'\t') {
            return Seen::Malformed("a folded HTTP header line");
        }
        let Some(colon) = line.iter().position(|&c| c == b':') else {
            return Seen::Malformed("HTTP header line without a colon");
        };
        let (name, value) = (&line[..colon], &line[colon + 1..]);
        // `Host :` or `Ho st:` is an error to most servers and a Host to a lenient one
        if name.is_empty() || !name.iter().all(|&c| tchar(c)) {
            return Seen::Malformed("HTTP header name is not a token");
        }
        if value.iter().any(|&c| (c < b' ' && c != b'\t') || c == 0x7f) {
            return Seen::Malformed("control bytes in an HTTP header value");
        }
        let value = trim(value);
        // h2c (and RFC 2817's TLS) would turn the tunnel into streams that name hosts anew:
        // such an Upgrade is left out, and the server answers in HTTP/1.1 (Java's
        // HttpClient offers h2c on every plain request and carries on without it)
        if (name.eq_ignore_ascii_case(b"upgrade")
            && value.split(|&c| c == b',').any(|p| !trim(p).eq_ignore_ascii_case(b"websocket")))
            || name.eq_ignore_ascii_case(b"http2-settings")
        {
            strip.push(span.clone());
            continue;
        }
        // the client's Connection headers give way to one the gate writes, `close` and
        // nothing else: a server that read only the first (or the last) would otherwise
        // keep the tunnel alive, and Python's http.server and gunicorn close only on a
        // value that is exactly `close` (so no `Upgrade` beside it: plain ws:// upgrades
        // through a tunnel work only where the front adds its own, as nginx's usual
        // WebSocket configuration does)
        if name.eq_ignore_ascii_case(b"connection") {
            strip.push(span.clone());
            continue;
        }
        chunked |= name.eq_ignore_ascii_case(b"transfer-encoding");
        length |= name.eq_ignore_ascii_case(b"content-length");
        if !name.eq_ignore_ascii_case(b"host") {
            continue;
        }
        if host_seen {
            return Seen::Malformed("two Host headers");
        }
        host_seen = true;
        let Ok(value) = std::str::from_utf8(value) else {
            return Seen::Malformed("Host header is not text");
        };
        // host[:port], [v6][:port]: only the host part names the site
        match target::parse_authority(value, Some(80)) {
            Ok(t) => names.push(t.host.to_string()),
            Err(_) => return Seen::Malformed("Host header is not a host"),
        }
    }
    if chunked && length {
        // the front and its backends may frame the body differently
        return Seen::Malformed("both Transfer-Encoding and Content-Length");
    }
    Seen::Http { names, head_end, strip }
}

fn trim(v: &[u8]) -> &[u8] {
    let s = v.iter().position(|&c| c != b' ' && c != b'\t').unwrap_or(v.len());
    let e = v.iter().rposition(|&c| c != b' ' && c != b'\t').map_or(s, |e| e + 1);
    &v[s..e.max(s)]
}

/// The request with the `strip` lines left out and one `Connection: close` header as its
/// last: the server answers it and closes, so no second request (with another Host) rides
/// the same judged tunnel.
pub fn one_request_only(buf: &[u8], head_end: usize, strip: &[std::ops::Range<usize>]) -> Vec<u8> {
    let mut out = Vec::with_capacity(buf.len() + 32);
    let mut from = 0;
    for r in strip {
        out.extend_from_slice(&buf[from..r.start]);
        from = r.end;
    }
    out.extend_from_slice(&buf[from..head_end]);
    out.extend_from_slice(b"Connection: close\r\n");
    out.extend_from_slice(&buf[head_end..]);
    out
}

/// Why a tunnel's first bytes were refused (the log's `reason`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// The SNI or Host names a host the policy does not allow on this port.
    NameMismatch,
    /// TLS without a server name, to a target that is a name.
    NoServerName,
    /// An Encrypted Client Hello: the name the server serves is hidden.
    EncryptedName,
    /// Neither TLS nor HTTP, to a target `allowOtherProtocols` does not list.
    OtherProtocol,
    /// The first bytes stopped (end of stream, the first-flight timeout) before they made
    /// a whole hello or request head.
    Incomplete,
    Malformed,
}

impl Refusal {
    pub fn reason(self) -> &'static str {
        match self {
            Refusal::NameMismatch => "sni-mismatch",
            Refusal::NoServerName => "sni-missing",
            Refusal::EncryptedName => "ech",
            Refusal::OtherProtocol => "other-protocol",
            Refusal::Incomplete => "first-flight-incomplete",
            Refusal::Malformed => "malformed-first-flight",
        }
    }
}

/// Decides a tunnel to `target` (already allowed by `policy`) by its first bytes.
///
/// A name in SNI or Host is fine when it is the target itself or a host the policy allows
/// on the same port. No name at all is fine for an IP-literal target (clients send no SNI
/// for addresses). An Encrypted Client Hello hides the name the server will serve: a real
/// one and Chrome's GREASE look alike on the wire (by ECH's design), so both are refused.
/// `allowTlsWithoutSni` lets unnamed and encrypted hellos through; `allowOtherProtocols`
/// lets bytes that are neither TLS nor HTTP through to the targets it lists.
pub fn judge(target: &Target, seen: &Seen, policy: &Policy) -> Result<(), Refusal> {
    let nameless = policy.nameless_tls;
    let names: Vec<&str> = match seen {
        Seen::Other => {
            return if policy.other_protocols(target) { Ok(()) } else { Err(Refusal::OtherProtocol) };
        }
        Seen::NeedMore => return Err(Refusal::Incomplete),
        Seen::Malformed(_) => return Err(Refusal::Malformed),
        Seen::Tls(h) => {
            if h.encrypted_name && !nameless {
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
const HTTP_MALFORMED: &[u8] = b"HTTP/1.1 403 Blocked by sandbox network policy (request not spelled plainly)\r\nContent-Type: text/plain\r\nX-Proxy-Error: blocked-by-malformed-request\r\nContent-Length: 75\r\nConnection: close\r\n\r\nConnection blocked: servers could read this request as naming other hosts.\n";

/// The tunnel gate for [`crate::tunnel::relay_gated`]: waits for enough bytes, then judges.
/// `last_chance`: no more bytes will come (end of stream, the bound, the first-flight
/// timeout), so bytes still incomplete are refused, never passed.
pub fn gate(target: &Target, policy: &Policy, buf: &[u8], last_chance: bool) -> crate::tunnel::Gate {
    let (seen, hello_len) = classify_len(buf);
    decide(target, policy, buf, seen, hello_len, last_chance)
}

/// The records a client may send between a HelloRetryRequest and its second ClientHello:
/// ChangeCipherSpec (middlebox compatibility) and application data (0-RTT data the server
/// skips once it has asked for a retry). At most this many.
const MAX_RECORDS_BEFORE_RETRY: usize = 64;

/// The gate for the client's bytes after the server answered its ClientHello with a
/// HelloRetryRequest: OpenSSL (and so nginx, HAProxy, Node, Python) reads the second
/// ClientHello as a new one and serves its name, so it is judged as the first was. Only
/// ChangeCipherSpec and application-data records may come before it.
pub fn gate_retry(target: &Target, policy: &Policy, buf: &[u8], last_chance: bool) -> crate::tunnel::Gate {
    let mut at = 0;
    for _ in 0..MAX_RECORDS_BEFORE_RETRY {
        match buf.get(at..at + 5) {
            Some([0x14 | 0x17, 3, _, hi, lo]) => {
                let next = at + 5 + usize::from(u16::from_be_bytes([*hi, *lo]));
                if next > buf.len() {
                    break;
                }
                at = next;
            }
            _ => break,
        }
    }
    let (seen, hello_len) = match buf.get(at) {
        None => (Seen::NeedMore, 0),
        Some(&client_hello::HANDSHAKE) => hello(&buf[at..]),
        // a partial record header of one of the skipped kinds
        Some(0x14 | 0x17) if buf.len() - at < 5 || buf.get(at + 1) == Some(&3) => (Seen::NeedMore, 0),
        Some(_) => (Seen::Malformed("a retried TLS handshake goes on with something else than a ClientHello"), 0),
    };
    decide(target, policy, buf, seen, at + hello_len, last_chance)
}

fn decide(
    target: &Target,
    policy: &Policy,
    buf: &[u8],
    seen: Seen,
    hello_len: usize,
    last_chance: bool,
) -> crate::tunnel::Gate {
    use crate::tunnel::Gate;
    if seen == Seen::NeedMore && !last_chance {
        return Gate::NeedMore;
    }
    match judge(target, &seen, policy) {
        Ok(()) => match seen {
            Seen::Http { head_end, strip, .. } => Gate::PassWith(one_request_only(buf, head_end, &strip)),
            Seen::Tls(_) => Gate::PassHello { len: hello_len },
            _ => Gate::Pass,
        },
        Err(r) => {
            let reply: &'static [u8] = match (&seen, buf.first()) {
                (Seen::Http { .. }, _) => HTTP_REFUSED,
                (Seen::Other, _) => b"",
                // text that was or could become a request gets an HTTP answer, TLS an alert
                (_, Some(&c)) if c == b'\r' || c == b'\n' || tchar(c) || c == b' ' || c == b'\t' => HTTP_MALFORMED,
                _ => TLS_ALERT,
            };
            Gate::Refuse { reason: r.reason(), reply }
        }
    }
}

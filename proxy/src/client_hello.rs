//! Reading the server name out of a TLS ClientHello without terminating TLS: the proxy
//! only looks at the client's first flight and forwards those bytes untouched. Pure
//! functions over a byte buffer, so every malformed shape is a unit test.

/// What the start of a client's byte stream holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Parsed {
    /// A complete ClientHello.
    Hello(Hello),
    /// A TLS handshake whose ClientHello has not fully arrived yet.
    NeedMore,
    /// Starts like TLS but is not a well-formed ClientHello (refused: a server might read
    /// it differently from us).
    Malformed(&'static str),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hello {
    /// The `server_name` extension's host name, lowercase, if any.
    pub server_name: Option<String>,
    /// An Encrypted Client Hello (or the older ESNI) extension is present: the name the
    /// server will really serve may be hidden inside.
    pub encrypted_name: bool,
}

/// TLS record content type of handshake messages: the first byte of every TLS client.
pub const HANDSHAKE: u8 = 0x16;
const CLIENT_HELLO: u8 = 1;
const EXT_SERVER_NAME: u16 = 0;
/// encrypted_client_hello (RFC 9849) and the draft ESNI extension.
const EXT_ECH: u16 = 0xfe0d;
const EXT_ESNI: u16 = 0xffce;
/// A ClientHello larger than this is refused (post-quantum key shares make them ~2 KiB).
pub const MAX_HELLO: usize = 64 * 1024;

/// Parses the ClientHello at the start of `buf` (TLS records carrying a handshake
/// message, possibly split over several records).
pub fn parse(buf: &[u8]) -> Parsed {
    let mut msg = Vec::new();
    let mut rest = buf;
    loop {
        if rest.len() < 5 {
            return NeedMoreOr(rest).check();
        }
        if rest[0] != HANDSHAKE {
            return Parsed::Malformed("a non-handshake record before the ClientHello ended");
        }
        if rest[1] != 3 {
            return Parsed::Malformed("not a TLS record version");
        }
        let len = usize::from(u16::from_be_bytes([rest[3], rest[4]]));
        if len == 0 || len > 16384 + 2048 {
            return Parsed::Malformed("bad TLS record length");
        }
        if rest.len() < 5 + len {
            return Parsed::NeedMore;
        }
        msg.extend_from_slice(&rest[5..5 + len]);
        rest = &rest[5 + len..];
        if msg.len() >= 4 {
            if msg[0] != CLIENT_HELLO {
                return Parsed::Malformed("the first handshake message is not a ClientHello");
            }
            let body_len = usize::from(msg[1]) << 16 | usize::from(msg[2]) << 8 | usize::from(msg[3]);
            if body_len + 4 > MAX_HELLO {
                return Parsed::Malformed("ClientHello too large");
            }
            if msg.len() >= body_len + 4 {
                return match hello_body(&msg[4..4 + body_len]) {
                    Some(h) => Parsed::Hello(h),
                    None => Parsed::Malformed("malformed ClientHello"),
                };
            }
        }
        if msg.len() > MAX_HELLO {
            return Parsed::Malformed("ClientHello too large");
        }
    }
}

/// A partial record header: only the bytes seen so far can rule TLS out.
struct NeedMoreOr<'a>(&'a [u8]);

impl NeedMoreOr<'_> {
    fn check(self) -> Parsed {
        match self.0 {
            [t, ..] if *t != HANDSHAKE => Parsed::Malformed("a non-handshake record before the ClientHello ended"),
            [_, v, ..] if *v != 3 => Parsed::Malformed("not a TLS record version"),
            _ => Parsed::NeedMore,
        }
    }
}

/// A cursor over length-prefixed TLS vectors; every read is bounds-checked.
struct Reader<'a>(&'a [u8]);

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        if self.0.len() < n {
            return None;
        }
        let (a, b) = self.0.split_at(n);
        self.0 = b;
        Some(a)
    }
    fn u8(&mut self) -> Option<u8> {
        self.take(1).map(|b| b[0])
    }
    fn u16(&mut self) -> Option<u16> {
        self.take(2).map(|b| u16::from_be_bytes([b[0], b[1]]))
    }
    fn vec8(&mut self) -> Option<&'a [u8]> {
        let n = self.u8()?;
        self.take(usize::from(n))
    }
    fn vec16(&mut self) -> Option<&'a [u8]> {
        let n = self.u16()?;
        self.take(usize::from(n))
    }
}

fn hello_body(body: &[u8]) -> Option<Hello> {
    let mut r = Reader(body);
    r.take(2 + 32)?; // legacy_version, random
    r.vec8()?; // legacy_session_id
    r.vec16()?; // cipher_suites
    r.vec8()?; // legacy_compression_methods
    let mut hello = Hello { server_name: None, encrypted_name: false };
    if r.0.is_empty() {
        return Some(hello); // no extensions at all (TLS 1.0-era clients)
    }
    let mut exts = Reader(r.vec16()?);
    if !r.0.is_empty() {
        return None;
    }
    let mut seen_sni = false;
    while !exts.0.is_empty() {
        let kind = exts.u16()?;
        let data = exts.vec16()?;
        match kind {
            EXT_SERVER_NAME => {
                // two server_name extensions could be read differently by the server
                if seen_sni {
                    return None;
                }
                seen_sni = true;
                hello.server_name = server_name(data)?;
            }
            EXT_ECH | EXT_ESNI => hello.encrypted_name = true,
            _ => {}
        }
    }
    Some(hello)
}

/// The one host_name entry of a server_name extension (RFC 6066 allows one per type).
fn server_name(data: &[u8]) -> Option<Option<String>> {
    let mut r = Reader(data);
    let mut list = Reader(r.vec16()?);
    if !r.0.is_empty() {
        return None;
    }
    let mut found = None;
    while !list.0.is_empty() {
        let kind = list.u8()?;
        let name = list.vec16()?;
        if kind != 0 {
            continue;
        }
        if found.is_some() || name.is_empty() {
            return None;
        }
        // a host name is ASCII letters, digits, '-', '.', '_'; anything else (NUL, '%',
        // spaces) could compare differently here and at the server
        if !name.iter().all(|c| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'.' | b'_')) {
            return None;
        }
        found = Some(String::from_utf8_lossy(name).to_ascii_lowercase());
    }
    Some(found)
}

#[cfg(test)]
#[path = "client_hello_tests.rs"]
mod tests;

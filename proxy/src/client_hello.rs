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
/// encrypted_client_hello (RFC 9849, 0xfe0d; its drafts used 0xfe08..0xfe0c, which
/// deployed servers of their time still read) and the draft ESNI extension.
const EXT_ECH: u16 = 0xfe0d;
const EXT_ECH_DRAFTS: std::ops::RangeInclusive<u16> = 0xfe08..=EXT_ECH;
const EXT_ESNI: u16 = 0xffce;
/// A ClientHello larger than this is refused (post-quantum key shares make them ~2 KiB).
pub const MAX_HELLO: usize = 64 * 1024;

/// Parses the ClientHello at the start of `buf` (TLS records carrying a handshake
/// message, possibly split over several records).
pub fn parse(buf: &[u8]) -> Parsed {
    parse_with_len(buf).0
}

/// [`parse`], and how many bytes of `buf` the records holding a whole hello take.
pub fn parse_with_len(buf: &[u8]) -> (Parsed, usize) {
    let mut msg = Vec::new();
    let mut rest = buf;
    loop {
        if rest.len() < 5 {
            return (NeedMoreOr(rest).check(), 0);
        }
        if rest[0] != HANDSHAKE {
            return (Parsed::Malformed("a non-handshake record before the ClientHello ended"), 0);
        }
        if rest[1] != 3 {
            return (Parsed::Malformed("not a TLS record version"), 0);
        }
        let len = usize::from(u16::from_be_bytes([rest[3], rest[4]]));
        if len == 0 || len > 16384 + 2048 {
            return (Parsed::Malformed("bad TLS record length"), 0);
        }
        if rest.len() < 5 + len {
            return (Parsed::NeedMore, 0);
        }
        msg.extend_from_slice(&rest[5..5 + len]);
        rest = &rest[5 + len..];
        if msg.len() >= 4 {
            if msg[0] != CLIENT_HELLO {
                return (Parsed::Malformed("the first handshake message is not a ClientHello"), 0);
            }
            let body_len = usize::from(msg[1]) << 16 | usize::from(msg[2]) << 8 | usize::from(msg[3]);
            if body_len + 4 > MAX_HELLO {
                return (Parsed::Malformed("ClientHello too large"), 0);
            }
            if msg.len() > body_len + 4 {
                // a client sends nothing after its hello before the server answers; a
                // message behind it in the same record (a second ClientHello, read after a
                // HelloRetryRequest) would reach the server unjudged
                return (Parsed::Malformed("bytes after the ClientHello in its record"), 0);
            }
            if msg.len() == body_len + 4 {
                let used = buf.len() - rest.len();
                return match hello_body(&msg[4..]) {
                    Some(h) => (Parsed::Hello(h), used),
                    None => (Parsed::Malformed("malformed ClientHello"), 0),
                };
            }
        }
        if msg.len() > MAX_HELLO {
            return (Parsed::Malformed("ClientHello too large"), 0);
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
            EXT_ESNI => hello.encrypted_name = true,
            k if EXT_ECH_DRAFTS.contains(&k) => hello.encrypted_name = true,
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

/// The server's last word on hellos, as far as the gate needs to know.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ServerSaid {
    /// A ServerHello: the handshake goes on encrypted (TLS 1.3) or without another hello.
    Hello,
    /// Anything else (an alert, bytes that are not TLS, a server that closed): no further
    /// hello will be read, and no further client byte is judged.
    NotTls,
}

/// The random of a HelloRetryRequest (RFC 8446 4.1.3): SHA-256 of "HelloRetryRequest".
const HRR_RANDOM: [u8; 32] = [
    0xcf, 0x21, 0xad, 0x74, 0xe5, 0x9a, 0x61, 0x11, 0xbe, 0x1d, 0x8c, 0x02, 0x1e, 0x65, 0xb8, 0x91, 0xc2, 0xa2, 0x11,
    0x16, 0x7a, 0xbb, 0x8c, 0x5e, 0x07, 0x9e, 0x09, 0xe2, 0xc8, 0xa8, 0x33, 0x9c,
];
const SERVER_HELLO: u8 = 2;
const CHANGE_CIPHER_SPEC: u8 = 0x14;

/// Reads the server's side of a handshake as it streams past, holding no more than a
/// record header and the start of one message: each ServerHello is told apart from a
/// HelloRetryRequest by its random. Feeding stops mattering once it says `Hello` or
/// `NotTls`.
#[derive(Debug, Default)]
pub struct ServerWatch {
    /// The current record's header as far as it has come, and its payload bytes still to come.
    header: Vec<u8>,
    record_left: usize,
    record_type: u8,
    /// The current handshake message's first bytes (type, length, version, random), and
    /// its bytes still to skip once those were read.
    msg: Vec<u8>,
    msg_left: usize,
    retries: u8,
    done: Option<ServerSaid>,
}

/// A message's header and a ServerHello's version and random.
const SERVER_HELLO_HEAD: usize = 4 + 2 + 32;

impl ServerWatch {
    /// HelloRetryRequests seen so far: each means a second ClientHello the server reads
    /// as a new one (OpenSSL serves the name in it).
    pub fn retries(&self) -> u8 {
        self.retries
    }

    /// The server's last word on hellos, once said.
    pub fn done(&self) -> Option<ServerSaid> {
        self.done
    }

    /// The server's stream ended (or is no longer watched) before it said more.
    pub fn end(&mut self) {
        self.done.get_or_insert(ServerSaid::NotTls);
    }

    pub fn feed(&mut self, mut bytes: &[u8]) {
        while !bytes.is_empty() && self.done.is_none() {
            if self.record_left == 0 {
                let want = 5 - self.header.len();
                let n = want.min(bytes.len());
                self.header.extend_from_slice(&bytes[..n]);
                bytes = &bytes[n..];
                if self.header.len() < 5 {
                    return;
                }
                let (kind, version) = (self.header[0], self.header[1]);
                let len = usize::from(u16::from_be_bytes([self.header[3], self.header[4]]));
                self.header.clear();
                if version != 3 || len == 0 || !(kind == HANDSHAKE || kind == CHANGE_CIPHER_SPEC) {
                    self.done = Some(ServerSaid::NotTls);
                    return;
                }
                self.record_type = kind;
                self.record_left = len;
                continue;
            }
            let n = self.record_left.min(bytes.len());
            let (payload, after) = bytes.split_at(n);
            bytes = after;
            self.record_left -= n;
            if self.record_type == HANDSHAKE {
                self.handshake(payload);
            }
        }
    }

    fn handshake(&mut self, mut bytes: &[u8]) {
        while !bytes.is_empty() && self.done.is_none() {
            if self.msg_left > 0 {
                let n = self.msg_left.min(bytes.len());
                self.msg_left -= n;
                bytes = &bytes[n..];
                continue;
            }
            let n = (SERVER_HELLO_HEAD - self.msg.len()).min(bytes.len());
            self.msg.extend_from_slice(&bytes[..n]);
            bytes = &bytes[n..];
            if self.msg.len() < 4 {
                return;
            }
            let len = usize::from(self.msg[1]) << 16 | usize::from(self.msg[2]) << 8 | usize::from(self.msg[3]);
            if self.msg[0] != SERVER_HELLO || len + 4 < SERVER_HELLO_HEAD {
                self.done = Some(ServerSaid::NotTls);
                return;
            }
            if self.msg.len() < SERVER_HELLO_HEAD {
                return;
            }
            if self.msg[6..SERVER_HELLO_HEAD] != HRR_RANDOM {
                self.done = Some(ServerSaid::Hello);
                return;
            }
            self.retries = self.retries.saturating_add(1);
            self.msg_left = len + 4 - SERVER_HELLO_HEAD;
            self.msg.clear();
        }
    }
}

#[cfg(test)]
#[path = "client_hello_tests.rs"]
mod tests;

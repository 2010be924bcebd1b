//! The three ways past the first-flight gate an outside review found, each tried against
//! every server family that runs here (Go, rustls, OpenSSL via Python, Node, nginx), over
//! CONNECT and SOCKS5, through a tunnel allowed for `allowed.test` to a server that also
//! serves `evil.test`: a TLS warning alert before the ClientHello, empty lines before an
//! HTTP request, and a request line longer than the gate reads. Each must be refused
//! before it reaches the server; the honest request through the same tunnel must work.
//! Against the gate of 15dfcbd (`SRT_TEST_PROXY_BIN=<old srt-proxy>`) Go and rustls serve
//! evil.test after the alert, Node and nginx after the empty lines, Go after the long line.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is the failure report

mod common;
#[path = "gate/servers.rs"]
mod servers;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::Duration;

use common::*;
use servers::Family;
use srt_tests::vhost::{Certs, LenientHttp, VhostTls};

#[derive(Clone, Copy, Debug)]
enum Via {
    Connect,
    Socks5,
}

/// A tunnel through the proxy to allowed.test:port.
fn tunnel(p: &Proxy, via: Via, port: u16) -> TcpStream {
    let timeout = Duration::from_secs(10);
    match via {
        Via::Connect => connect_tunnel(p, &format!("allowed.test:{port}"), timeout),
        Via::Socks5 => socks5_tunnel(p, "allowed.test", port, timeout),
    }
}

fn read_all(s: &mut impl Read) -> String {
    let mut out = Vec::new();
    let _ = s.read_to_end(&mut out);
    String::from_utf8_lossy(&out).into()
}

/// A TLS request for `sni` (Host too) over `s`, with `before` written first.
fn tls_request(mut s: TcpStream, certs: &Certs, sni: &str, before: &[u8]) -> String {
    let mut roots = rustls::RootCertStore::empty();
    roots.add(certs.ca_der.clone()).unwrap();
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_root_certificates(roots)
        .with_no_client_auth();
    if !before.is_empty() {
        s.write_all(before).unwrap();
    }
    let name = rustls::pki_types::ServerName::try_from(sni.to_string()).unwrap();
    let conn = rustls::ClientConnection::new(Arc::new(config), name).unwrap();
    let mut tls = rustls::StreamOwned::new(conn, s);
    if write!(tls, "GET / HTTP/1.1\r\nHost: {sni}\r\nConnection: close\r\n\r\n").is_err() {
        return String::new();
    }
    read_all(&mut tls)
}

struct Fixture {
    certs: Certs,
    families: Vec<Family>,
    _rustls: (VhostTls, LenientHttp),
    proxy: Proxy,
}

fn fixture(tag: &str, test: &str) -> Fixture {
    let dir = tempdir(tag);
    let certs = Certs::new(&dir, &["allowed.test", "evil.test"]);
    let rustls = (VhostTls::start(&certs), LenientHttp::start());
    let mut families = vec![Family::in_process("rustls", rustls.0.port, Some(rustls.1.port))];
    for (name, start) in [
        ("go", servers::go as fn(&std::path::Path, &Certs) -> Option<Family>),
        ("python-openssl", servers::python),
        ("node", servers::node),
        ("nginx", servers::nginx),
    ] {
        match start(&dir, &certs) {
            Some(f) => families.push(f),
            None => srt_tests::skip(test, &format!("{name} is not installed (scripts/deps.sh installs it)")),
        }
    }
    let proxy = Proxy::start(
        &settings(&["allowed.test"], &[]),
        &["--resolve", "allowed.test:*:127.0.0.1", "--resolve", "evil.test:*:127.0.0.1"],
    );
    Fixture { certs, families, _rustls: rustls, proxy }
}

/// Runs `attack` (and `honest`) through every family and both tunnel kinds; returns what
/// reached evil.test and what honest request failed.
fn matrix(
    f: &Fixture,
    tls: bool,
    attack: impl Fn(TcpStream) -> String,
    honest: impl Fn(TcpStream) -> String,
) -> Vec<String> {
    let mut wrong = Vec::new();
    for fam in &f.families {
        let Some(port) = (if tls { Some(fam.tls) } else { fam.http }) else { continue };
        for via in [Via::Connect, Via::Socks5] {
            let got = attack(tunnel(&f.proxy, via, port));
            if got.contains("=evil.test") {
                wrong.push(format!("{} over {via:?} reached evil.test: {got:?}", fam.name));
            }
            let ok = honest(tunnel(&f.proxy, via, port));
            if !ok.contains("vhost=allowed.test") {
                wrong.push(format!("{} over {via:?}: the honest request failed: {ok:?}", fam.name));
            }
        }
    }
    wrong
}

fn refusals(p: &Proxy, reason: &str) -> usize {
    p.log.lock().unwrap().iter().filter(|l| l.contains(&format!("\"reason\":\"{reason}\""))).count()
}

/// The refusals logged for `reason` once `want` of them are (or 2 s have passed): the
/// proxy logs a refusal after it has answered it, so under load the last line can still be
/// on its way when the client has read the answer.
fn refusals_reaching(p: &Proxy, reason: &str, want: usize) -> usize {
    for _ in 0..100 {
        if refusals(p, reason) >= want {
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    refusals(p, reason)
}

#[test]
fn a_tls_alert_before_the_client_hello_is_refused_for_every_server_family() {
    let f = fixture("gate-alert", "a_tls_alert_before_the_client_hello_is_refused_for_every_server_family");
    // a warning-level user_canceled alert: Go and rustls drop it and read the hello after it
    let alert = [0x15, 0x03, 0x03, 0x00, 0x02, 0x01, 0x5a];
    let wrong = matrix(
        &f,
        true,
        |s| tls_request(s, &f.certs, "evil.test", &alert),
        |s| tls_request(s, &f.certs, "allowed.test", &[]),
    );
    assert!(wrong.is_empty(), "{wrong:#?}");
    assert_eq!(refusals_reaching(&f.proxy, "malformed-first-flight", 2 * f.families.len()), 2 * f.families.len());
    // a ChangeCipherSpec or an application-data record first is refused alike
    for rec in [&[0x14u8, 3, 3, 0, 1, 1][..], &[0x17, 3, 3, 0, 1, 0]] {
        let got = tls_request(tunnel(&f.proxy, Via::Connect, f.families[0].tls), &f.certs, "evil.test", rec);
        assert!(!got.contains("=evil.test"), "{got}");
    }
}

#[test]
fn empty_lines_before_a_request_are_judged_for_every_server_family() {
    let f = fixture("gate-empty", "empty_lines_before_a_request_are_judged_for_every_server_family");
    let send = |mut s: TcpStream, req: &[u8]| {
        s.write_all(req).unwrap();
        read_all(&mut s)
    };
    for lead in ["\r\n", "\n", "\r\n\r\n"] {
        let evil = format!("{lead}GET / HTTP/1.1\r\nHost: evil.test\r\n\r\nGET / HTTP/1.1\r\nHost: evil.test\r\n\r\n");
        // the judged request gets Connection: close, so the one riding behind it is never read
        let honest = |lead: &str| {
            format!("{lead}GET / HTTP/1.1\r\nHost: allowed.test\r\n\r\nGET / HTTP/1.1\r\nHost: evil.test\r\n\r\n")
        };
        let wrong = matrix(&f, false, |s| send(s, evil.as_bytes()), |s| send(s, honest("").as_bytes()));
        assert!(wrong.is_empty(), "{lead:?}: {wrong:#?}");
        // where the server skips empty lines (Go and Python answer 400), the honest request
        // after them is served, and only it
        for fam in f.families.iter().filter(|f| ["rustls", "node", "nginx"].contains(&f.name)) {
            let got = send(tunnel(&f.proxy, Via::Connect, fam.http.unwrap()), honest(lead).as_bytes());
            assert!(got.contains("vhost=allowed.test") && !got.contains("evil"), "{} {lead:?}: {got:?}", fam.name);
        }
    }
    assert!(refusals_reaching(&f.proxy, "sni-mismatch", 3 * 2 * f.families.len()) >= 3 * 2 * f.families.len());
}

#[test]
fn a_request_line_longer_than_the_gate_reads_is_refused_for_every_server_family() {
    let f = fixture("gate-long", "a_request_line_longer_than_the_gate_reads_is_refused_for_every_server_family");
    let send = |mut s: TcpStream, req: Vec<u8>| {
        let _ = s.write_all(&req);
        read_all(&mut s)
    };
    let long =
        |host: &str, len: usize| format!("GET /{} HTTP/1.1\r\nHost: {host}\r\n\r\n", "a".repeat(len)).into_bytes();
    let wrong = matrix(&f, false, |s| send(s, long("evil.test", 70_000)), |s| send(s, long("allowed.test", 1000)));
    assert!(wrong.is_empty(), "{wrong:#?}");
    let want = 2 * f.families.iter().filter(|f| f.http.is_some()).count();
    assert_eq!(refusals_reaching(&f.proxy, "malformed-first-flight", want), want);
    // a long header line is refused alike
    let mut head = b"GET / HTTP/1.1\r\nHost: evil.test\r\nX: ".to_vec();
    head.extend(vec![b'a'; 70_000]);
    head.extend(b"\r\n\r\n");
    let go = f.families.iter().find(|f| f.name == "go").or(f.families.first()).unwrap();
    let got = send(tunnel(&f.proxy, Via::Connect, go.http.unwrap()), head);
    assert!(!got.contains("=evil.test"), "{got}");
}

/// An OpenSSL server (Python's ssl) that prints each name its server-name callback is
/// given and asks every client whose key share is X25519 for a retry (P-256 only).
const RETRYING: &str = r#"import http.server, ssl, sys
class H(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def do_GET(self):
        host = (self.headers.get("Host") or "-").split(":")[0]
        body = ("vhost=%s sni=%s\n" % (host, getattr(self.connection, "sni", "-"))).encode()
        self.send_response(200); self.send_header("Content-Length", str(len(body))); self.end_headers()
        self.wfile.write(body)
    def log_message(self, *a): pass
ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER); ctx.load_cert_chain(sys.argv[1], sys.argv[2])
ctx.set_ecdh_curve("prime256v1")
names = open(sys.argv[3], "a")
def sni(sock, name, c):
    sock.sni = name
    names.write("%s\n" % name); names.flush()
ctx.sni_callback = sni
t = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
t.socket = ctx.wrap_socket(t.socket, server_side=True)
print("tls=%d" % t.server_address[1], flush=True)
t.serve_forever()
"#;

/// P-256's generator: a valid point for a key share.
const P256_G: [u8; 65] = [
    0x04, 0x6b, 0x17, 0xd1, 0xf2, 0xe1, 0x2c, 0x42, 0x47, 0xf8, 0xbc, 0xe6, 0xe5, 0x63, 0xa4, 0x40, 0xf2, 0x77, 0x03,
    0x7d, 0x81, 0x2d, 0xeb, 0x33, 0xa0, 0xf4, 0xa1, 0x39, 0x45, 0xd8, 0x98, 0xc2, 0x96, 0x4f, 0xe3, 0x42, 0xe2, 0xfe,
    0x1a, 0x7f, 0x9b, 0x8e, 0xe7, 0xeb, 0x4a, 0x7c, 0x0f, 0x9e, 0x16, 0x2b, 0xce, 0x33, 0x57, 0x6b, 0x31, 0x5e, 0xce,
    0xcb, 0xb6, 0x40, 0x68, 0x37, 0xbf, 0x51, 0xf5,
];

/// A TLS 1.3 ClientHello for `sni` offering X25519 and P-256, with a P-256 key share
/// (without one every TLS 1.3 server answers with a HelloRetryRequest), in one record.
fn hello_for(sni: &str, share: bool) -> Vec<u8> {
    let ext = |t: u16, d: &[u8]| [&t.to_be_bytes()[..], &(d.len() as u16).to_be_bytes(), d].concat();
    let n = sni.as_bytes();
    let mut name = ((n.len() + 3) as u16).to_be_bytes().to_vec();
    name.push(0);
    name.extend((n.len() as u16).to_be_bytes());
    name.extend(n);
    let shares = if share { [&[0u8, 0x17, 0, 65][..], &P256_G].concat() } else { Vec::new() };
    let exts = [
        ext(0, &name),
        ext(10, &[0, 4, 0, 0x1d, 0, 0x17]),
        ext(13, &[0, 4, 4, 3, 8, 4]),
        ext(43, &[2, 3, 4]),
        ext(45, &[1, 1]),
        ext(51, &[&(shares.len() as u16).to_be_bytes()[..], &shares].concat()),
    ]
    .concat();
    let mut body = vec![3, 3];
    body.extend([0x42; 32]); // the same random and session id in both hellos
    body.push(32);
    body.extend([0x24; 32]);
    body.extend([0, 2, 0x13, 0x01, 1, 0]);
    body.extend((exts.len() as u16).to_be_bytes());
    body.extend(exts);
    let mut msg = vec![1];
    msg.extend(&(body.len() as u32).to_be_bytes()[1..]);
    msg.extend(body);
    let mut rec = vec![0x16, 3, 1];
    rec.extend((msg.len() as u16).to_be_bytes());
    rec.extend(msg);
    rec
}

/// Reads one TLS record; None at the end of the stream.
fn record(s: &mut TcpStream) -> Option<Vec<u8>> {
    let mut h = [0u8; 5];
    s.read_exact(&mut h).ok()?;
    let mut r = h.to_vec();
    r.resize(5 + usize::from(u16::from_be_bytes([h[3], h[4]])), 0);
    s.read_exact(&mut r[5..]).ok()?;
    Some(r)
}

const HRR_RANDOM: [u8; 32] = [
    0xcf, 0x21, 0xad, 0x74, 0xe5, 0x9a, 0x61, 0x11, 0xbe, 0x1d, 0x8c, 0x02, 0x1e, 0x65, 0xb8, 0x91, 0xc2, 0xa2, 0x11,
    0x16, 0x7a, 0xbb, 0x8c, 0x5e, 0x07, 0x9e, 0x09, 0xe2, 0xc8, 0xa8, 0x33, 0x9c,
];

fn is_retry(r: &[u8]) -> bool {
    r.len() > 43 && r[0] == 0x16 && r[5] == 2 && r[11..43] == HRR_RANDOM
}

#[test]
fn the_second_client_hello_after_a_retry_request_is_judged() {
    let test = "the_second_client_hello_after_a_retry_request_is_judged";
    if !Command::new("python3").arg("-c").arg("import ssl").status().is_ok_and(|s| s.success()) {
        return srt_tests::skip(test, "python3 is not installed (scripts/deps.sh installs it)");
    }
    let dir = tempdir("gate-retry");
    let certs = Certs::new(&dir, &["allowed.test", "x.allowed.test", "evil.test"]);
    std::fs::write(dir.join("retrying.py"), RETRYING).unwrap();
    let names = dir.join("names");
    let mut child = Command::new("python3")
        .arg(dir.join("retrying.py"))
        .arg(&certs.cert)
        .arg(&certs.key)
        .arg(&names)
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).unwrap();
    let port: u16 = line.trim().strip_prefix("tls=").unwrap().parse().unwrap();
    let proxy = Proxy::start(
        &settings(&["allowed.test", "*.allowed.test"], &["denied.allowed.test"]),
        &["--resolve", "allowed.test:*:127.0.0.1", "--resolve", "evil.test:*:127.0.0.1"],
    );
    let mut wrong = Vec::new();
    for via in [Via::Connect, Via::Socks5] {
        for second in ["evil.test", "denied.allowed.test"] {
            // the second hello after the server asked for a retry, and the same sent at once
            for pipelined in [false, true] {
                let mut s = tunnel(&proxy, via, port);
                let retry = [&[0x14u8, 3, 3, 0, 1, 1][..], &hello_for(second, true)].concat();
                let first = hello_for("allowed.test", false);
                s.write_all(&if pipelined { [&first[..], &retry].concat() } else { first }).unwrap();
                let answer = record(&mut s);
                if !answer.as_deref().is_some_and(is_retry) {
                    wrong.push(format!("{via:?} {second} {pipelined}: no retry request first: {answer:?}"));
                    continue;
                }
                if !pipelined {
                    let _ = s.write_all(&retry);
                }
                // the server's answer to the second hello, if it got it: a ServerHello
                while let Some(r) = record(&mut s) {
                    if r[0] == 0x16 && r[5] == 2 {
                        wrong.push(format!("{via:?} {second} {pipelined}: the server answered the second hello"));
                    }
                }
            }
        }
        // an honest client the server asks for a retry (rustls offers X25519, the server
        // wants P-256) still gets through, by either name
        for sni in ["allowed.test", "x.allowed.test"] {
            let got = tls_request(tunnel(&proxy, via, port), &certs, sni, &[]);
            if !got.contains(&format!("vhost={sni} sni={sni}")) {
                wrong.push(format!("{via:?}: the honest retried handshake for {sni} failed: {got:?}"));
            }
        }
    }
    let _ = child.kill();
    let _ = child.wait();
    let seen = std::fs::read_to_string(&names).unwrap_or_default();
    assert!(!seen.contains("evil.test") && !seen.contains("denied"), "the server was asked for: {seen}");
    assert!(wrong.is_empty(), "{wrong:#?}");
    for _ in 0..100 {
        if refusals(&proxy, "sni-mismatch") == 8 {
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(refusals(&proxy, "sni-mismatch"), 8);
}

#[test]
fn request_lines_node_serves_as_http_are_judged_even_where_other_protocols_pass() {
    let test = "request_lines_node_serves_as_http_are_judged_even_where_other_protocols_pass";
    let dir = tempdir("gate-rtsp");
    let certs = Certs::new(&dir, &["allowed.test", "evil.test"]);
    let Some(node) = servers::node(&dir, &certs) else {
        return srt_tests::skip(test, "node is not installed (scripts/deps.sh installs it)");
    };
    // every nameless protocol is allowed: only what no server reads as HTTP may pass as one
    let text = settings(&["allowed.test"], &[]).replacen(
        "\"allowedDomains\"",
        "\"allowOtherProtocols\": [\"*\"], \"allowedDomains\"",
        1,
    );
    let proxy = Proxy::start(&text, &["--resolve", "allowed.test:*:127.0.0.1"]);
    let port = node.http.unwrap();
    let mut wrong = Vec::new();
    for via in [Via::Connect, Via::Socks5] {
        for req in [
            "POST / RTSP/1.0\r\nHost: evil.test\r\nContent-Length: 0\r\n\r\n",
            "SOURCE / ICE/1.0\r\nHost: evil.test\r\n\r\n",
            "OPTIONS / RTSP/1.0\r\nHost: evil.test\r\n\r\n",
        ] {
            let mut s = tunnel(&proxy, via, port);
            s.write_all(req.as_bytes()).unwrap();
            let got = read_all(&mut s);
            if got.contains("=evil.test") {
                wrong.push(format!("{via:?} {req:?} reached evil.test: {got:?}"));
            }
        }
    }
    assert!(wrong.is_empty(), "{wrong:#?}");
    // the last refusal may be logged a moment after its tunnel closed
    for _ in 0..100 {
        if refusals(&proxy, "malformed-first-flight") == 6 {
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(refusals(&proxy, "malformed-first-flight"), 6);
}

#[test]
fn a_second_request_hidden_behind_an_allowed_one_reaches_no_other_vhost() {
    let f = fixture("gate-hidden", "a_second_request_hidden_behind_an_allowed_one_reaches_no_other_vhost");
    let send = |mut s: TcpStream, req: &[u8]| {
        let _ = s.write_all(req);
        read_all(&mut s)
    };
    let evil = "GET / HTTP/1.1\r\nHost: evil.test\r\n\r\n";
    let attacks = [
        // pipelined behind a WebSocket upgrade the server may not take
        format!("GET / HTTP/1.1\r\nHost: allowed.test\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n{evil}"),
        // inside a chunked body, and behind it
        format!("POST / HTTP/1.1\r\nHost: allowed.test\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n{evil}"),
        format!("POST / HTTP/1.1\r\nHost: allowed.test\r\nTransfer-Encoding: chunked, identity\r\n\r\n0\r\n\r\n{evil}"),
        format!("POST / HTTP/1.1\r\nHost: allowed.test\r\nContent-Length: 0\r\n\r\n{evil}"),
        format!("POST / HTTP/1.1\r\nHost: allowed.test\r\nContent-Length: 0\r\nContent-Length: 5\r\n\r\n{evil}"),
        // any token beside close: Python's http.server closes only on exactly `close`
        format!("GET / HTTP/1.1\r\nHost: allowed.test\r\nConnection: te\r\nTE: trailers\r\n\r\n{evil}"),
        // an HTTP/1.0 client asking to keep the connection
        format!("GET / HTTP/1.0\r\nHost: allowed.test\r\nConnection: keep-alive\r\n\r\n{evil}"),
        format!("GET / HTTP/1.1\r\nHost: allowed.test\r\nProxy-Connection: keep-alive\r\nKeep-Alive: 300\r\n\r\n{evil}"),
        // the name spelled otherwise
        "GET / HTTP/1.1\r\nHost: EVIL.test.\r\n\r\n".to_string(),
        "GET http://evil.test/ HTTP/1.1\r\nHost: allowed.test\r\n\r\n".to_string(),
        "GET HTTP://evil.test:80/ HTTP/1.1\r\nHost: allowed.test\r\n\r\n".to_string(),
        "GET / HTTP/1.1\r\nhost:evil.test\r\n\r\n".to_string(),
        "GET / HTTP/1.1\r\nHost: allowed.test\r\nhost: evil.test\r\n\r\n".to_string(),
        // a request inside the tunnel to a proxy-minded front
        "CONNECT evil.test:80 HTTP/1.1\r\nHost: allowed.test\r\n\r\n".to_string(),
    ];
    let mut wrong = Vec::new();
    for a in &attacks {
        for w in
            matrix(&f, false, |s| send(s, a.as_bytes()), |s| send(s, b"GET / HTTP/1.1\r\nHost: allowed.test\r\n\r\n"))
        {
            wrong.push(format!("{a:?}: {w}"));
        }
    }
    assert!(wrong.is_empty(), "{wrong:#?}");
}

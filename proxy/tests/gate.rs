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

use std::io::{Read, Write};
use std::net::TcpStream;
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
    let mut s = TcpStream::connect(p.addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    match via {
        Via::Connect => {
            s.write_all(format!("CONNECT allowed.test:{port} HTTP/1.1\r\n{}\r\n", basic()).as_bytes()).unwrap();
            let mut head = Vec::new();
            let mut b = [0u8; 1];
            while !head.ends_with(b"\r\n\r\n") {
                s.read_exact(&mut b).unwrap();
                head.push(b[0]);
            }
            assert!(head.starts_with(b"HTTP/1.1 200"), "{}", String::from_utf8_lossy(&head));
        }
        Via::Socks5 => {
            s.write_all(&[5, 1, 2]).unwrap();
            let mut b = [0u8; 2];
            s.read_exact(&mut b).unwrap();
            let mut auth = vec![1, 3];
            auth.extend(b"srt");
            auth.push(TOKEN.len() as u8);
            auth.extend(TOKEN.as_bytes());
            s.write_all(&auth).unwrap();
            s.read_exact(&mut b).unwrap();
            assert_eq!(b, [1, 0]);
            let mut req = vec![5, 1, 0, 3, 12];
            req.extend(b"allowed.test");
            req.extend(port.to_be_bytes());
            s.write_all(&req).unwrap();
            let mut rep = [0u8; 10];
            s.read_exact(&mut rep).unwrap();
            assert_eq!(rep[1], 0, "the tunnel itself is allowed");
        }
    }
    s
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
    assert_eq!(refusals(&f.proxy, "malformed-first-flight"), 2 * f.families.len());
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
    assert!(refusals(&f.proxy, "sni-mismatch") >= 3 * 2 * f.families.len());
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
    assert_eq!(
        refusals(&f.proxy, "malformed-first-flight"),
        2 * f.families.iter().filter(|f| f.http.is_some()).count()
    );
    // a long header line is refused alike
    let mut head = b"GET / HTTP/1.1\r\nHost: evil.test\r\nX: ".to_vec();
    head.extend(vec![b'a'; 70_000]);
    head.extend(b"\r\n\r\n");
    let go = f.families.iter().find(|f| f.name == "go").or(f.families.first()).unwrap();
    let got = send(tunnel(&f.proxy, Via::Connect, go.http.unwrap()), head);
    assert!(!got.contains("=evil.test"), "{got}");
}

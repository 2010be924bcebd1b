//! Domain fronting through an allowed name: a tunnel opened for `allowed.test` whose TLS
//! ClientHello (or HTTP Host) asks for another host is refused before a byte of it reaches
//! the origin, over CONNECT and SOCKS5, logged and counted. openssl s_client sets the SNI
//! independently of the CONNECT target, as an attacker would.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is the failure report

mod common;

use std::io::{Read, Write};
use std::process::{Command, Stdio};
use std::sync::atomic::Ordering;
use std::time::Duration;

use common::*;

struct Run {
    ok: bool,
    out: String,
}

/// openssl s_client to `allowed.test` through the proxy with the given SNI (`None`: no SNI).
fn s_client(p: &Proxy, tls: &TlsOrigin, sni: Option<&str>) -> Run {
    let mut c = Command::new("openssl");
    c.args(["s_client", "-brief", "-verify_return_error", "-CAfile", tls.ca.to_str().unwrap()])
        .args(["-connect", &format!("allowed.test:{}", tls.port), "-proxy", &p.addr.to_string()])
        .args(["-proxy_user", "srt", "-proxy_pass", &format!("pass:{TOKEN}")]);
    match sni {
        Some(n) => c.args(["-servername", n]),
        None => c.arg("-noservername"),
    };
    let o = c.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped()).output().unwrap();
    let out = String::from_utf8_lossy(&o.stdout).to_string() + &String::from_utf8_lossy(&o.stderr);
    Run { ok: o.status.success() && out.contains("CONNECTION ESTABLISHED"), out }
}

fn setup(tag: &str, allow: &[&str], extra_settings: &str) -> (TlsOrigin, Proxy) {
    let dir = tempdir(tag);
    let tls = TlsOrigin::start(&dir, &["allowed.test", "evil.test", "also.test"]);
    let mut text = settings(allow, &[]);
    if !extra_settings.is_empty() {
        text = text.replacen("\"allowedDomains\"", &format!("{extra_settings}, \"allowedDomains\""), 1);
    }
    let p = Proxy::start(
        &text,
        &["--resolve", "allowed.test:*:127.0.0.1", "--resolve", "also.test:*:127.0.0.1", "--metrics", "127.0.0.1:0"],
    );
    (tls, p)
}

fn metrics(p: &Proxy) -> String {
    let line = p.wait_log(&["metrics_listening"]);
    let v: serde_json::Value = serde_json::from_str(&line).unwrap();
    curl(&[&format!("http://{}/metrics", v["addr"].as_str().unwrap())]).stdout
}

#[test]
fn a_foreign_sni_through_an_allowed_connect_is_refused_before_the_origin_sees_it() {
    let (tls, p) = setup("fronting", &["allowed.test", "also.test"], "");
    let fronted = s_client(&p, &tls, Some("evil.test"));
    assert!(!fronted.ok, "{}", fronted.out);
    assert!(fronted.out.contains("unrecognized name"), "the client is told why: {}", fronted.out);
    assert_eq!(tls.handshakes.load(Ordering::SeqCst), 0, "the fronted hello never reached the origin");
    let line = p.wait_log(&["\"reason\":\"sni-mismatch\""]);
    assert!(line.contains("\"host\":\"allowed.test\"") && line.contains("\"allow\":false"), "{line}");
    // the target itself and another allowed name are fine
    let own = s_client(&p, &tls, Some("allowed.test"));
    assert!(own.ok, "{}", own.out);
    let other = s_client(&p, &tls, Some("also.test"));
    assert!(other.ok, "{}", other.out);
    assert_eq!(tls.handshakes.load(Ordering::SeqCst), 2);
    let m = metrics(&p);
    assert!(m.contains("proxy_requests_total{kind=\"connect\",decision=\"deny\",reason=\"sni-mismatch\"} 1"), "{m}");
}

#[test]
fn no_sni_is_refused_unless_the_settings_allow_it() {
    let (tls, p) = setup("nosni", &["allowed.test"], "");
    let r = s_client(&p, &tls, None);
    assert!(!r.ok, "{}", r.out);
    p.wait_log(&["\"reason\":\"sni-missing\""]);
    assert_eq!(tls.handshakes.load(Ordering::SeqCst), 0);
    let (tls, p) = setup("nosni-allowed", &["allowed.test"], "\"allowTlsWithoutSni\": true");
    // the origin's certificate does not verify without a name, but the tunnel is let through
    let r = s_client(&p, &tls, None);
    assert!(r.out.contains("CONNECTION ESTABLISHED") || tls.handshakes.load(Ordering::SeqCst) == 1, "{}", r.out);
    assert_eq!(tls.handshakes.load(Ordering::SeqCst), 1, "{}", r.out);
}

#[test]
fn fronting_over_socks5_and_plain_http_in_a_tunnel_is_refused() {
    let (tls, p) = setup("fronting-socks", &["allowed.test"], "");
    // SOCKS5 with user/password auth, then a ClientHello naming evil.test
    let mut s = socks5_tunnel(&p, "allowed.test", tls.port, Duration::from_secs(5));
    s.write_all(&client_hello("evil.test")).unwrap();
    let mut rest = Vec::new();
    let _ = s.read_to_end(&mut rest);
    assert_eq!(rest, [0x15, 0x03, 0x03, 0x00, 0x02, 0x02, 0x70], "an unrecognized_name alert, then the end");
    p.wait_log(&["\"kind\":\"socks\"", "\"reason\":\"sni-mismatch\""]);
    assert_eq!(tls.handshakes.load(Ordering::SeqCst), 0);

    // plain HTTP inside a CONNECT tunnel is judged by its Host
    let o = Origin::start();
    let p = Proxy::start(&settings(&["allowed.test"], &[]), &["--resolve", "allowed.test:*:127.0.0.1"]);
    for (host, allowed) in [("evil.test", false), ("allowed.test", true)] {
        let mut s = connect_tunnel(&p, &format!("allowed.test:{}", o.port), Duration::from_secs(5));
        s.write_all(format!("GET /small HTTP/1.1\r\nHost: {host}\r\n\r\n").as_bytes()).unwrap();
        let mut answer = String::new();
        let _ = s.read_to_string(&mut answer);
        if allowed {
            assert!(answer.ends_with("origin-ok\n"), "{answer}");
        } else {
            assert!(answer.starts_with("HTTP/1.1 403 "), "{answer}");
            assert!(answer.contains("X-Proxy-Error: blocked-by-host-mismatch"), "{answer}");
        }
    }
    let heads = o.heads.lock().unwrap().clone();
    assert_eq!(heads.len(), 1, "only the allowed request reached the origin: {heads:?}");
}

/// A minimal TLS 1.2-style ClientHello naming `name`.
fn client_hello(name: &str) -> Vec<u8> {
    let mut sni = vec![0];
    sni.extend((name.len() as u16).to_be_bytes());
    sni.extend(name.as_bytes());
    let mut ext_data = (sni.len() as u16).to_be_bytes().to_vec();
    ext_data.extend(sni);
    let mut exts = vec![0, 0];
    exts.extend((ext_data.len() as u16).to_be_bytes());
    exts.extend(ext_data);
    let mut body = vec![3, 3];
    body.extend([1u8; 32]);
    body.extend([0, 0, 2, 0x13, 0x01, 1, 0]);
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

use super::*;

fn policy(allow: &[&str]) -> Policy {
    policy_with(allow, serde_json::json!({}))
}

fn policy_with(allow: &[&str], extra: serde_json::Value) -> Policy {
    let mut v = serde_json::json!({
        "network": {"allowedDomains": allow, "deniedDomains": ["denied.allowed.test"]},
        "filesystem": {"denyRead": [], "allowWrite": [], "denyWrite": []}
    });
    for (k, x) in extra.as_object().unwrap() {
        v["network"][k] = x.clone();
    }
    Policy::from_settings(&serde_json::from_value(v).unwrap()).unwrap()
}

fn nameless(allow: &[&str]) -> Policy {
    policy_with(allow, serde_json::json!({"allowTlsWithoutSni": true}))
}

fn t(s: &str) -> Target {
    target::parse_authority(s, None).unwrap()
}

fn tls(name: Option<&str>, encrypted: bool) -> Seen {
    Seen::Tls(Hello { server_name: name.map(str::to_string), encrypted_name: encrypted })
}

fn http(names: &[&str], head_end: usize) -> Seen {
    Seen::Http { names: names.iter().map(|n| n.to_string()).collect(), head_end, strip: Vec::new() }
}

/// `classify` of a request head, with its blank line where it is.
fn head(req: &[u8], names: &[&str]) {
    let end = req.windows(4).position(|w| w == b"\r\n\r\n").unwrap() + 2;
    assert_eq!(classify(req), http(names, end), "{}", String::from_utf8_lossy(req));
}

#[test]
fn http_heads_are_read_for_their_host() {
    head(b"GET / HTTP/1.1\r\nHost: A.test:8080\r\n\r\n", &["a.test"]);
    head(b"GET / HTTP/1.0\r\n\r\n", &[]);
    head(b"GET / HTTP/1.1\r\nHost: [::1]\r\n\r\n", &["[::1]"]);
    // an absolute-form target names a host too
    head(b"GET http://evil.test/x HTTP/1.1\r\nHost: allowed.test\r\n\r\n", &["evil.test", "allowed.test"]);
    assert_eq!(classify(b"GE"), Seen::NeedMore);
    assert_eq!(classify(b"GET / HTTP/1.1\r\nHost: a"), Seen::NeedMore);
    assert_eq!(classify(b""), Seen::NeedMore);
    for bad in [
        &b"GET / HTTP/1.1\r\nHost: a.test\r\nhost: b.test\r\n\r\n"[..],
        b"GET / HTTP/1.1\r\nHost: a b\r\n\r\n",
        b"GET / HTTP/1.1\r\nbroken\r\n\r\n",
        // spellings a server might still take as a request
        b"get / HTTP/1.1\r\nHost: evil.test\r\n\r\n",
        b"GET / HTTP/1.2\r\nHost: evil.test\r\n\r\n",
        b"GET / HTTP/1.1 \r\nHost: evil.test\r\n\r\n",
        b"GET\t/ HTTP/1.1\r\nHost: evil.test\r\n\r\n",
        b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n",
        b"GET evil.test HTTP/1.1\r\n\r\n",
    ] {
        assert!(matches!(classify(bad), Seen::Malformed(_)), "{}", String::from_utf8_lossy(bad));
    }
    let mut big = b"GET / HTTP/1.1\r\nX: ".to_vec();
    big.resize(MAX_HEAD, b'a');
    assert!(matches!(classify(&big), Seen::Malformed(_)));
}

#[test]
fn an_allowed_request_is_its_tunnels_only_one() {
    let req = b"GET /a HTTP/1.1\r\nHost: allowed.test\r\n\r\nGET /b HTTP/1.1\r\nHost: evil.test\r\n\r\n";
    let p = policy(&["allowed.test"]);
    match gate(&t("allowed.test:80"), &p, req, false) {
        crate::tunnel::Gate::PassWith(out) => assert_eq!(
            out,
            b"GET /a HTTP/1.1\r\nHost: allowed.test\r\nConnection: close\r\n\r\nGET /b HTTP/1.1\r\nHost: evil.test\r\n\r\n"
        ),
        other => panic!("{other:?}"),
    }
}

/// Finding 2: servers (nginx, Node, HAProxy, Apache) skip empty lines before a request;
/// the request after them is judged, and gets `Connection: close`.
#[test]
fn empty_lines_before_a_request_are_skipped_and_the_request_judged() {
    let p = policy(&["allowed.test"]);
    let target = t("allowed.test:80");
    for lead in [&b"\r\n"[..], b"\n", b"\r\n\r\n\n", b"\r", b"\n\r\r\n"] {
        let evil = [lead, b"GET / HTTP/1.1\r\nHost: evil.test\r\n\r\n"].concat();
        let seen = classify(&evil);
        assert!(matches!(&seen, Seen::Http { names, .. } if names == &["evil.test"]), "{lead:?}: {seen:?}");
        assert_eq!(judge(&target, &seen, &p), Err(Refusal::NameMismatch));
        let good =
            [lead, b"GET / HTTP/1.1\r\nHost: allowed.test\r\n\r\nGET / HTTP/1.1\r\nHost: evil.test\r\n\r\n"].concat();
        match gate(&target, &p, &good, false) {
            crate::tunnel::Gate::PassWith(out) => {
                let text = String::from_utf8_lossy(&out);
                assert!(text.contains("Host: allowed.test\r\nConnection: close\r\n\r\nGET"), "{text:?}");
            }
            other => panic!("{lead:?}: {other:?}"),
        }
    }
    // only empty lines so far: wait; bare-LF heads are read too
    assert_eq!(classify(b"\r\n\r\n"), Seen::NeedMore);
    assert!(
        matches!(classify(b"GET / HTTP/1.1\nHost: evil.test\n\n"), Seen::Http { names, .. } if names == ["evil.test"])
    );
    assert!(matches!(classify(b" GET / HTTP/1.1\r\nHost: evil.test\r\n\r\n"), Seen::Malformed(_)));
}

/// Finding 3: a request line or head longer than the gate reads is refused, not passed
/// (Go's net/http reads 1 MiB).
#[test]
fn lines_and_heads_longer_than_the_bound_are_refused() {
    let p = policy(&["allowed.test"]);
    let target = t("allowed.test:80");
    let mut line = b"GET /".to_vec();
    line.resize(MAX_HEAD + 10, b'a');
    assert!(matches!(classify(&line), Seen::Malformed(_)));
    assert_eq!(judge(&target, &classify(&line), &p), Err(Refusal::Malformed));
    // a line of text without its end is waited for, and refused when no more comes
    assert_eq!(classify(&line[..1000]), Seen::NeedMore);
    assert!(matches!(gate(&target, &p, &line[..1000], true), crate::tunnel::Gate::Refuse { .. }));
    let mut head = b"GET / HTTP/1.1\r\nHost: allowed.test\r\nX: ".to_vec();
    head.resize(MAX_HEAD + 10, b'a');
    head.extend(b"\r\n\r\n");
    assert!(matches!(classify(&head), Seen::Malformed(_)));
    let mut lines = vec![b'\n'; MAX_HEAD];
    lines.extend(b"GET / HTTP/1.1\r\nHost: evil.test\r\n\r\n");
    assert!(matches!(classify(&lines), Seen::Malformed(_)), "empty lines count against the bound");
}

/// Finding 1: nothing but a ClientHello may open TLS: Go and rustls skip a warning alert
/// before the hello, BoringSSL empty records.
#[test]
fn only_a_client_hello_may_open_tls() {
    let p = nameless(&["allowed.test"]);
    let p = &p;
    let target = t("allowed.test:443");
    let alert = [0x15, 3, 3, 0, 2, 1, 0];
    let ccs = [0x14, 3, 3, 0, 1, 1];
    let app = [0x17, 3, 3, 0, 1, 0];
    let heartbeat = [0x18, 3, 3, 0, 3, 1, 0, 0];
    for rec in [&alert[..], &ccs, &app, &heartbeat, &[0x15], &[0x16, 3, 3, 0, 0]] {
        let seen = classify(rec);
        assert!(matches!(seen, Seen::Malformed(_)), "{rec:?}: {seen:?}");
        assert_eq!(judge(&target, &seen, p), Err(Refusal::Malformed));
        match gate(&target, p, rec, true) {
            crate::tunnel::Gate::Refuse { reply, .. } => assert_eq!(reply, TLS_ALERT),
            other => panic!("{other:?}"),
        }
    }
}

#[test]
fn an_ssl2_format_hello_is_refused() {
    assert!(matches!(classify(&[0x80, 0x2e, 0x01, 0x03, 0x01]), Seen::Malformed(_)));
    assert!(matches!(classify(&[0x80]), Seen::Malformed(_)));
}

#[test]
fn other_protocols_are_what_no_server_reads_as_http_or_tls() {
    for other in [
        &b"SSH-2.0-OpenSSH_9.2p1 Debian-2+deb12u3\r\n"[..],
        b"SSH-2.0-OpenSSH_9.2\r\n",
        b"\x00\x00\x00\x08\x04\xd2\x16\x2f",              // PostgreSQL SSLRequest
        b"\x00\x00\x00\x28\x00\x03\x00\x00user\x00a\x00", // PostgreSQL startup
        b"0032git-upload-pack /x.git\x00host=a.test\x00",
        b"*1\r\n$4\r\nPING\r\n",     // Redis
        b"EHLO client.test\r\n",     // SMTP, after the server's greeting
        b"get key\r\n",              // memcached
        b"\xb5\x00\x00\x01\x85\xa6", // MySQL handshake response
    ] {
        assert_eq!(classify(other), Seen::Other, "{:?}", String::from_utf8_lossy(other));
    }
    for http_like in [
        &b"GET /\r\n"[..], // HTTP/0.9: nginx serves its default host
        b"GET / HTTP/1.1 evil\r\n\r\n",
        b"SSH-2.0-x HTTP/1.1\r\nHost: evil.test\r\n\r\n",
        b"X\rGET / HTTP/1.1\r\nHost: evil.test\r\n\r\n",
        b"\tGET / HTTP/1.1\r\n\r\n",
    ] {
        assert!(matches!(classify(http_like), Seen::Malformed(_)), "{:?}", String::from_utf8_lossy(http_like));
    }
    // text still without its line end may become a request
    assert_eq!(classify(b"SSH-2.0-OpenSSH"), Seen::NeedMore);
    assert_eq!(classify(b"GET / SPDY/3"), Seen::NeedMore);
}

#[test]
fn other_protocols_pass_only_where_the_settings_allow_them() {
    let off = policy(&["allowed.test", "*.allowed.test"]);
    let on = policy_with(
        &["allowed.test", "*.allowed.test"],
        serde_json::json!({"allowOtherProtocols": ["allowed.test:22", "*:5432"]}),
    );
    assert_eq!(judge(&t("allowed.test:22"), &Seen::Other, &off), Err(Refusal::OtherProtocol));
    assert_eq!(judge(&t("allowed.test:22"), &Seen::Other, &on), Ok(()));
    assert_eq!(judge(&t("allowed.test:23"), &Seen::Other, &on), Err(Refusal::OtherProtocol));
    assert_eq!(judge(&t("db.allowed.test:5432"), &Seen::Other, &on), Ok(()));
    // TLS and HTTP are judged there all the same
    assert_eq!(judge(&t("allowed.test:22"), &tls(Some("evil.test"), false), &on), Err(Refusal::NameMismatch));
    match gate(&t("allowed.test:22"), &off, b"SSH-2.0-x\r\n", false) {
        crate::tunnel::Gate::Refuse { reason, reply } => assert_eq!((reason, reply), ("other-protocol", &b""[..])),
        other => panic!("{other:?}"),
    }
}

#[test]
fn tricky_header_spellings_are_refused() {
    for bad in [
        &b"GET / HTTP/1.1\r\nHost : evil.test\r\n\r\n"[..],
        b"GET / HTTP/1.1\r\nHost: allowed.test\r\n evil.test\r\n\r\n",
        b"GET / HTTP/1.1\r\nHost: allowed.test\r\nX: a\rHost: evil.test\r\n\r\n",
        b"GET / HTTP/1.1\r\nHost: allowed.test\x00evil.test\r\n\r\n",
        b"POST / HTTP/1.1\r\nHost: allowed.test\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n",
        b"GET /\x01 HTTP/1.1\r\nHost: allowed.test\r\n\r\n",
    ] {
        assert!(matches!(classify(bad), Seen::Malformed(_)), "{:?}", String::from_utf8_lossy(bad));
    }
    let ws = b"GET /ws HTTP/1.1\r\nHost: allowed.test\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n";
    // the WebSocket upgrade stays; its Connection header gives way to the gate's `close`
    assert!(matches!(classify(ws), Seen::Http { strip, .. } if strip.len() == 1));
    // h2c and TLS upgrades would open streams naming hosts anew: left out, the request passes
    let p = policy(&["allowed.test"]);
    let h2c = b"GET / HTTP/1.1\r\nHost: allowed.test\r\nConnection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\nHTTP2-Settings: AAMAAABkAAQAAP__\r\nAccept: */*\r\n\r\nbody";
    match gate(&t("allowed.test:80"), &p, h2c, false) {
        crate::tunnel::Gate::PassWith(out) => assert_eq!(
            String::from_utf8_lossy(&out),
            "GET / HTTP/1.1\r\nHost: allowed.test\r\nAccept: */*\r\nConnection: close\r\n\r\nbody"
        ),
        other => panic!("{other:?}"),
    }
    let tls = b"GET / HTTP/1.1\r\nHost: allowed.test\r\nUpgrade: websocket, TLS/1.0\r\n\r\n";
    assert!(matches!(classify(tls), Seen::Http { strip, .. } if strip.len() == 1));
}

/// A server reading only the first Connection header (or only the last), or closing only
/// on a value that is exactly `close` (Python's http.server, gunicorn), would keep the
/// tunnel alive for a second request: the gate's is the only one, and says only `close`.
#[test]
fn the_clients_connection_headers_give_way_to_one_close() {
    let p = policy(&["allowed.test"]);
    let req = b"GET / HTTP/1.1\r\nConnection: keep-alive\r\nHost: allowed.test\r\nconnection: Keep-Alive, Upgrade\r\nUpgrade: websocket\r\n\r\nGET / HTTP/1.1\r\nHost: evil.test\r\n\r\n";
    match gate(&t("allowed.test:80"), &p, req, false) {
        crate::tunnel::Gate::PassWith(out) => assert_eq!(
            String::from_utf8_lossy(&out),
            "GET / HTTP/1.1\r\nHost: allowed.test\r\nUpgrade: websocket\r\nConnection: close\r\n\r\nGET / HTTP/1.1\r\nHost: evil.test\r\n\r\n"
        ),
        other => panic!("{other:?}"),
    }
}

#[test]
fn the_target_itself_or_another_allowed_host_passes() {
    let p = policy(&["allowed.test", "*.allowed.test", "other.test:443"]);
    assert_eq!(judge(&t("allowed.test:443"), &tls(Some("allowed.test"), false), &p), Ok(()));
    assert_eq!(judge(&t("api.allowed.test:443"), &tls(Some("cdn.allowed.test"), false), &p), Ok(()));
    assert_eq!(judge(&t("allowed.test:443"), &tls(Some("other.test"), false), &p), Ok(()));
    assert_eq!(judge(&t("allowed.test:443"), &http(&["allowed.test"], 0), &p), Ok(()));
}

#[test]
fn fronting_through_an_allowed_name_is_refused() {
    let p = policy(&["allowed.test", "*.allowed.test", "other.test:443"]);
    let target = t("allowed.test:443");
    assert_eq!(judge(&target, &tls(Some("evil.test"), false), &p), Err(Refusal::NameMismatch));
    assert_eq!(judge(&target, &tls(Some("denied.allowed.test"), false), &p), Err(Refusal::NameMismatch));
    assert_eq!(judge(&t("allowed.test:8443"), &tls(Some("other.test"), false), &p), Err(Refusal::NameMismatch));
    assert_eq!(judge(&target, &http(&["evil.test"], 0), &p), Err(Refusal::NameMismatch));
    assert_eq!(judge(&target, &http(&["evil.test", "allowed.test"], 0), &p), Err(Refusal::NameMismatch));
    let n = nameless(&["allowed.test"]);
    assert_eq!(judge(&target, &tls(Some("evil.test"), false), &n), Err(Refusal::NameMismatch), "nameless");
    assert_eq!(judge(&target, &Seen::Malformed("x"), &n), Err(Refusal::Malformed));
}

#[test]
fn unnamed_and_encrypted_hellos_are_a_settings_choice() {
    let p = policy(&["allowed.test", "public.test", "127.0.0.1"]);
    let n = nameless(&["allowed.test", "public.test", "127.0.0.1"]);
    let target = t("allowed.test:443");
    assert_eq!(judge(&target, &tls(None, false), &p), Err(Refusal::NoServerName));
    assert_eq!(judge(&target, &tls(None, false), &n), Ok(()));
    assert_eq!(judge(&t("127.0.0.1:443"), &tls(None, false), &p), Ok(()), "addresses have no SNI");
    assert_eq!(judge(&target, &http(&[], 0), &p), Err(Refusal::NoServerName));
    // ECH: real and GREASE look alike, whatever the outer name
    assert_eq!(judge(&target, &tls(Some("public.test"), true), &p), Err(Refusal::EncryptedName));
    assert_eq!(judge(&target, &tls(None, true), &p), Err(Refusal::EncryptedName));
    assert_eq!(judge(&target, &tls(Some("allowed.test"), true), &p), Err(Refusal::EncryptedName));
    assert_eq!(judge(&target, &tls(Some("public.test"), true), &n), Ok(()));
}

/// A ClientHello in one record naming `name`.
fn client_hello(name: &str) -> Vec<u8> {
    let mut b = vec![3, 3];
    b.extend([7u8; 32]);
    b.extend([0, 0, 2, 0x13, 0x01, 1, 0]);
    let mut list = vec![0];
    list.extend((name.len() as u16).to_be_bytes());
    list.extend(name.as_bytes());
    let mut ext = vec![0, 0];
    ext.extend(((list.len() + 2) as u16).to_be_bytes());
    ext.extend((list.len() as u16).to_be_bytes());
    ext.extend(list);
    b.extend((ext.len() as u16).to_be_bytes());
    b.extend(ext);
    let mut m = vec![1];
    m.extend(&(b.len() as u32).to_be_bytes()[1..]);
    m.extend(b);
    let mut r = vec![0x16, 3, 1];
    r.extend((m.len() as u16).to_be_bytes());
    r.extend(m);
    r
}

#[test]
fn a_hello_passes_with_its_length_and_the_hello_after_a_retry_is_judged() {
    use crate::tunnel::Gate;
    let p = policy(&["allowed.test", "*.allowed.test"]);
    let target = t("allowed.test:443");
    let first = client_hello("allowed.test");
    let mut pipelined = first.clone();
    pipelined.extend(client_hello("evil.test"));
    assert_eq!(gate(&target, &p, &pipelined, false), Gate::PassHello { len: first.len() });
    let ccs = [0x14, 3, 3, 0, 1, 1];
    let early = [0x17, 3, 3, 0, 3, 9, 9, 9];
    for (name, ok) in
        [("allowed.test", true), ("x.allowed.test", true), ("evil.test", false), ("denied.allowed.test", false)]
    {
        for before in [&[][..], &ccs[..], &[&early[..], &ccs[..]].concat()] {
            let mut second = before.to_vec();
            second.extend(client_hello(name));
            let got = gate_retry(&target, &p, &second, false);
            if ok {
                assert_eq!(got, Gate::PassHello { len: second.len() }, "{name} {before:?}");
            } else {
                assert!(matches!(got, Gate::Refuse { reason: "sni-mismatch", .. }), "{name} {before:?}: {got:?}");
            }
            // every prefix waits
            for cut in 0..second.len() {
                assert_eq!(gate_retry(&target, &p, &second[..cut], false), Gate::NeedMore, "{name} {cut}");
            }
        }
    }
    // after a retry only a ClientHello may follow, with nothing but CCS and 0-RTT data before it
    for bad in [&b"GET / HTTP/1.1\r\nHost: allowed.test\r\n\r\n"[..], &[0x15, 3, 3, 0, 2, 1, 0], &[0x14, 2, 0, 0, 1, 1]]
    {
        assert!(matches!(gate_retry(&target, &p, bad, false), Gate::Refuse { .. }), "{bad:?}");
    }
    assert!(matches!(gate_retry(&target, &p, &ccs, true), Gate::Refuse { reason: "first-flight-incomplete", .. }));
}

#[test]
fn request_lines_of_http_like_protocols_are_judged_as_http() {
    // llhttp (Node) serves these as HTTP requests, with their Host
    for req in [
        &b"POST / RTSP/1.0\r\nHost: evil.test\r\nContent-Length: 0\r\n\r\n"[..],
        b"SOURCE / ICE/1.0\r\nHost: evil.test\r\n\r\n",
        b"OPTIONS * RTSP/1.0\r\nHost: evil.test\r\n\r\n",
        b"PUT /x SIP/2.0\r\n\r\n",
    ] {
        assert!(matches!(classify(req), Seen::Malformed(_)), "{:?}", String::from_utf8_lossy(req));
    }
}

#[test]
fn a_proxy_protocol_header_is_refused() {
    let v2 = b"\r\n\r\n\0\r\nQUIT\n\x21\x11\x00\x0c\x7f\x00\x00\x01\x7f\x00\x00\x01\x00\x50\x00\x50";
    for header in [&b"PROXY TCP4 192.0.2.1 192.0.2.2 1234 443\r\n\x16\x03\x01"[..], b"PROXY UNKNOWN\r\nGET", v2] {
        assert!(matches!(classify(header), Seen::Malformed(_)), "{header:?}");
        // every prefix of the signature waits, as empty lines do
        let sig = if header.starts_with(b"PROXY") { 6 } else { 12 };
        for cut in 1..sig {
            assert_eq!(classify(&header[..cut]), Seen::NeedMore, "{:?}", &header[..cut]);
        }
    }
    assert_eq!(classify(b"PROXYish\r\n"), Seen::Other);
}

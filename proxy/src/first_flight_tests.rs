use super::*;

fn policy(allow: &[&str]) -> Policy {
    let s: settings_schema::Settings = serde_json::from_value(serde_json::json!({
        "network": {"allowedDomains": allow, "deniedDomains": ["denied.allowed.test"]},
        "filesystem": {"denyRead": [], "allowWrite": [], "denyWrite": []}
    }))
    .unwrap();
    Policy::from_settings(&s).unwrap()
}

fn t(s: &str) -> Target {
    target::parse_authority(s, None).unwrap()
}

fn tls(name: Option<&str>, encrypted: bool) -> Seen {
    Seen::Tls(Hello { server_name: name.map(str::to_string), encrypted_name: encrypted })
}

fn http(names: &[&str], head_end: usize) -> Seen {
    Seen::Http { names: names.iter().map(|n| n.to_string()).collect(), head_end }
}

/// `classify` of a request head, with its blank line where it is.
fn head(req: &[u8], names: &[&str]) {
    let end = req.windows(4).position(|w| w == b"\r\n\r\n").unwrap();
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
    match gate(&t("allowed.test:80"), &p, false, req, false) {
        crate::tunnel::Gate::PassWith(out) => assert_eq!(
            out,
            b"GET /a HTTP/1.1\r\nHost: allowed.test\r\nConnection: close\r\n\r\nGET /b HTTP/1.1\r\nHost: evil.test\r\n\r\n"
        ),
        other => panic!("{other:?}"),
    }
}

#[test]
fn an_ssl2_format_hello_is_refused() {
    assert!(matches!(classify(&[0x80, 0x2e, 0x01, 0x03, 0x01]), Seen::Malformed(_)));
    assert!(matches!(classify(&[0x80]), Seen::Malformed(_)));
}

#[test]
fn other_protocols_carry_no_name() {
    assert_eq!(classify(b"SSH-2.0-OpenSSH_9.2\r\n"), Seen::Other);
    assert_eq!(classify(b"\x00\x00\x00\x08"), Seen::Other);
    assert_eq!(classify(b"GET / SPDY/3\r\n\r\n"), Seen::Other);
}

#[test]
fn the_target_itself_or_another_allowed_host_passes() {
    let p = policy(&["allowed.test", "*.allowed.test", "other.test:443"]);
    assert_eq!(judge(&t("allowed.test:443"), &tls(Some("allowed.test"), false), &p, false), Ok(()));
    assert_eq!(judge(&t("api.allowed.test:443"), &tls(Some("cdn.allowed.test"), false), &p, false), Ok(()));
    assert_eq!(judge(&t("allowed.test:443"), &tls(Some("other.test"), false), &p, false), Ok(()));
    assert_eq!(judge(&t("allowed.test:443"), &http(&["allowed.test"], 0), &p, false), Ok(()));
    assert_eq!(judge(&t("allowed.test:22"), &Seen::Other, &p, false), Ok(()));
}

#[test]
fn fronting_through_an_allowed_name_is_refused() {
    let p = policy(&["allowed.test", "*.allowed.test", "other.test:443"]);
    let target = t("allowed.test:443");
    assert_eq!(judge(&target, &tls(Some("evil.test"), false), &p, false), Err(Refusal::NameMismatch));
    assert_eq!(judge(&target, &tls(Some("denied.allowed.test"), false), &p, false), Err(Refusal::NameMismatch));
    assert_eq!(judge(&t("allowed.test:8443"), &tls(Some("other.test"), false), &p, false), Err(Refusal::NameMismatch));
    assert_eq!(judge(&target, &http(&["evil.test"], 0), &p, false), Err(Refusal::NameMismatch));
    assert_eq!(judge(&target, &http(&["evil.test", "allowed.test"], 0), &p, false), Err(Refusal::NameMismatch));
    assert_eq!(judge(&target, &tls(Some("evil.test"), false), &p, true), Err(Refusal::NameMismatch), "nameless");
    assert_eq!(judge(&target, &Seen::Malformed("x"), &p, true), Err(Refusal::Malformed));
}

#[test]
fn unnamed_and_encrypted_hellos_are_a_settings_choice() {
    let p = policy(&["allowed.test", "public.test", "127.0.0.1"]);
    let target = t("allowed.test:443");
    assert_eq!(judge(&target, &tls(None, false), &p, false), Err(Refusal::NoServerName));
    assert_eq!(judge(&target, &tls(None, false), &p, true), Ok(()));
    assert_eq!(judge(&t("127.0.0.1:443"), &tls(None, false), &p, false), Ok(()), "addresses have no SNI");
    assert_eq!(judge(&target, &http(&[], 0), &p, false), Err(Refusal::NoServerName));
    // real ECH: the outer name is the provider's, even an allowed one
    assert_eq!(judge(&target, &tls(Some("public.test"), true), &p, false), Err(Refusal::EncryptedName));
    assert_eq!(judge(&target, &tls(None, true), &p, false), Err(Refusal::EncryptedName));
    assert_eq!(judge(&target, &tls(Some("public.test"), true), &p, true), Ok(()));
    // GREASE ECH names the target outside
    assert_eq!(judge(&target, &tls(Some("allowed.test"), true), &p, false), Ok(()));
}

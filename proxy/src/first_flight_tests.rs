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

#[test]
fn http_heads_are_read_for_their_host() {
    assert_eq!(classify(b"GET / HTTP/1.1\r\nHost: A.test:8080\r\n\r\n"), Seen::Http { host: Some("a.test".into()) });
    assert_eq!(classify(b"GET / HTTP/1.0\r\n\r\n"), Seen::Http { host: None });
    assert_eq!(classify(b"GET / HTTP/1.1\r\nHost: [::1]\r\n\r\n"), Seen::Http { host: Some("[::1]".into()) });
    assert_eq!(classify(b"GE"), Seen::NeedMore);
    assert_eq!(classify(b"GET / HTTP/1.1\r\nHost: a"), Seen::NeedMore);
    assert_eq!(classify(b""), Seen::NeedMore);
    assert!(matches!(classify(b"GET / HTTP/1.1\r\nHost: a.test\r\nhost: b.test\r\n\r\n"), Seen::Malformed(_)));
    assert!(matches!(classify(b"GET / HTTP/1.1\r\nHost: a b\r\n\r\n"), Seen::Malformed(_)));
    assert!(matches!(classify(b"GET / HTTP/1.1\r\nbroken\r\n\r\n"), Seen::Malformed(_)));
    let mut big = b"GET / HTTP/1.1\r\nX: ".to_vec();
    big.resize(MAX_HEAD, b'a');
    assert!(matches!(classify(&big), Seen::Malformed(_)));
}

#[test]
fn other_protocols_carry_no_name() {
    assert_eq!(classify(b"SSH-2.0-OpenSSH_9.2\r\n"), Seen::Other);
    assert_eq!(classify(b"\x00\x00\x00\x08"), Seen::Other);
    assert_eq!(classify(b"get / HTTP/1.1\r\n\r\n"), Seen::Other);
    assert_eq!(classify(b"GET / SPDY/3\r\n\r\n"), Seen::Other);
}

#[test]
fn the_target_itself_or_another_allowed_host_passes() {
    let p = policy(&["allowed.test", "*.allowed.test", "other.test:443"]);
    assert_eq!(judge(&t("allowed.test:443"), &tls(Some("allowed.test"), false), &p, false), Ok(()));
    assert_eq!(judge(&t("api.allowed.test:443"), &tls(Some("cdn.allowed.test"), false), &p, false), Ok(()));
    assert_eq!(judge(&t("allowed.test:443"), &tls(Some("other.test"), false), &p, false), Ok(()));
    assert_eq!(judge(&t("allowed.test:443"), &Seen::Http { host: Some("allowed.test".into()) }, &p, false), Ok(()));
    assert_eq!(judge(&t("allowed.test:22"), &Seen::Other, &p, false), Ok(()));
}

#[test]
fn fronting_through_an_allowed_name_is_refused() {
    let p = policy(&["allowed.test", "*.allowed.test", "other.test:443"]);
    let target = t("allowed.test:443");
    assert_eq!(judge(&target, &tls(Some("evil.test"), false), &p, false), Err(Refusal::NameMismatch));
    assert_eq!(judge(&target, &tls(Some("denied.allowed.test"), false), &p, false), Err(Refusal::NameMismatch));
    assert_eq!(judge(&t("allowed.test:8443"), &tls(Some("other.test"), false), &p, false), Err(Refusal::NameMismatch));
    assert_eq!(judge(&target, &Seen::Http { host: Some("evil.test".into()) }, &p, false), Err(Refusal::NameMismatch));
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
    assert_eq!(judge(&target, &Seen::Http { host: None }, &p, false), Err(Refusal::NoServerName));
    // real ECH: the outer name is the provider's, even an allowed one
    assert_eq!(judge(&target, &tls(Some("public.test"), true), &p, false), Err(Refusal::EncryptedName));
    assert_eq!(judge(&target, &tls(None, true), &p, false), Err(Refusal::EncryptedName));
    assert_eq!(judge(&target, &tls(Some("public.test"), true), &p, true), Ok(()));
    // GREASE ECH names the target outside
    assert_eq!(judge(&target, &tls(Some("allowed.test"), true), &p, false), Ok(()));
}

use super::*;
use ListKind::{Allowed, Denied};

/// (entry, list, canonical rendering)
const ACCEPTED: &[(&str, ListKind, &str)] = &[
    ("example.com", Allowed, "example.com"),
    ("EXAMPLE.COM", Allowed, "example.com"),
    ("Api.Example.Com", Allowed, "api.example.com"),
    ("localhost", Allowed, "localhost"),
    ("LOCALHOST:8080", Allowed, "localhost:8080"),
    ("*.example.com", Allowed, "*.example.com"),
    ("*.co.uk", Allowed, "*.co.uk"),
    ("*.example.com:8443", Allowed, "*.example.com:8443"),
    ("example.com:443", Allowed, "example.com:443"),
    ("example.com:1", Allowed, "example.com:1"),
    ("example.com:65535", Allowed, "example.com:65535"),
    ("a-b.example.com", Allowed, "a-b.example.com"),
    ("_dmarc.example.com", Allowed, "_dmarc.example.com"),
    ("xn--mnchen-3ya.de", Allowed, "xn--mnchen-3ya.de"),
    ("1.2.3.4", Allowed, "1.2.3.4"),
    ("1.2.3.4:80", Allowed, "1.2.3.4:80"),
    ("127.1", Allowed, "127.0.0.1"),
    ("2130706433", Allowed, "127.0.0.1"),
    ("0x7f.0.0.1", Allowed, "127.0.0.1"),
    ("[::1]", Allowed, "[::1]"),
    ("[2001:db8::1]:443", Allowed, "[2001:db8::1]:443"),
    ("[2001:DB8:0:0::1]", Allowed, "[2001:db8::1]"),
    ("*", Denied, "*"),
    ("*:22", Denied, "*:22"),
    ("github.com:22", Denied, "github.com:22"),
    ("*.internal.example", Denied, "*.internal.example"),
    ("a.b.c.d.e.example.com", Allowed, "a.b.c.d.e.example.com"),
];

const REJECTED: &[(&str, ListKind)] = &[
    ("", Allowed),
    ("*", Allowed),
    ("*:443", Allowed),
    ("*.com", Allowed),
    ("*.com", Denied),
    ("com", Allowed),
    ("intranet", Allowed),
    ("a.*.example.com", Allowed),
    ("*.*.example.com", Allowed),
    ("*foo.com", Allowed),
    ("foo*.com", Allowed),
    ("*.", Allowed),
    ("example.com.", Allowed),
    ("example..com", Allowed),
    (".example.com", Allowed),
    ("http://example.com", Allowed),
    ("https://example.com:443", Allowed),
    ("example.com/path", Allowed),
    ("user@example.com", Allowed),
    ("exa mple.com", Allowed),
    (" example.com", Allowed),
    ("example.com\t", Allowed),
    ("münchen.de", Allowed),
    ("exa$mple.com", Allowed),
    ("-example.com", Allowed),
    ("example-.com", Allowed),
    ("example.com:0", Allowed),
    ("example.com:65536", Allowed),
    ("example.com:0443", Allowed),
    ("example.com:", Allowed),
    ("example.com:-1", Allowed),
    ("example.com:http", Allowed),
    ("::1", Allowed),
    ("2001:db8::1", Allowed),
    ("[::1", Allowed),
    ("[fe80::1%eth0]", Allowed),
    ("[not-an-ip]", Allowed),
    ("[::1]443", Allowed),
    ("256.1.1.1", Allowed),
    ("1.2.3.4.5", Allowed),
    ("*.1.2.3", Allowed),
    ("0x1g.com.99999999999", Allowed),
];

#[test]
fn accepted_entries_parse_to_their_canonical_form() {
    for (entry, kind, canon) in ACCEPTED {
        let p = DomainPattern::parse(entry, *kind).unwrap_or_else(|e| panic!("{entry:?} ({kind:?}) was rejected: {e}"));
        assert_eq!(p.to_string(), *canon, "{entry:?}");
    }
    assert!(ACCEPTED.len() >= 20);
}

#[test]
fn rejected_entries_are_refused() {
    for (entry, kind) in REJECTED {
        if let Ok(p) = DomainPattern::parse(entry, *kind) {
            panic!("{entry:?} ({kind:?}) was accepted as {p}");
        }
    }
    assert!(ACCEPTED.len() + REJECTED.len() >= 40);
}

#[test]
fn non_ascii_suggests_punycode() {
    let e = DomainPattern::parse("münchen.de", Allowed).unwrap_err();
    assert_eq!(e, PatternError::NonAscii("xn--mnchen-3ya.de".into()));
    assert!(e.to_string().contains("xn--mnchen-3ya.de"));
}

fn m(pattern: &str, kind: ListKind, host: &str, port: u16) -> bool {
    let p = DomainPattern::parse(pattern, kind).unwrap();
    let h = CanonicalHost::parse(host).unwrap();
    p.matches(&h, port)
}

#[test]
fn matching_rules() {
    // wildcard: strict subdomains only, at label boundaries
    assert!(m("*.example.com", Allowed, "a.example.com", 443));
    assert!(m("*.example.com", Allowed, "A.B.EXAMPLE.COM.", 443));
    assert!(!m("*.example.com", Allowed, "example.com", 443));
    assert!(!m("*.example.com", Allowed, "evilexample.com", 443));
    assert!(!m("*.example.com", Allowed, "example.com.evil.net", 443));
    // exact
    assert!(m("example.com", Allowed, "EXAMPLE.com", 80));
    assert!(!m("example.com", Allowed, "a.example.com", 80));
    // ports
    assert!(m("example.com:443", Allowed, "example.com", 443));
    assert!(!m("example.com:443", Allowed, "example.com", 80));
    // IP literals: numeric spellings fold; wildcards never match IPs
    assert!(m("127.0.0.1", Allowed, "2130706433", 1));
    assert!(m("127.0.0.1", Allowed, "0x7f.1", 1));
    assert!(m("127.0.0.1", Allowed, "[::ffff:127.0.0.1]", 1));
    assert!(m("[::1]", Allowed, "[0:0::1]", 1));
    // deny-all
    assert!(m("*", Denied, "anything.example", 1));
    assert!(m("*", Denied, "10.0.0.1", 1));
    assert!(m("*:22", Denied, "github.com", 22));
    assert!(!m("*:22", Denied, "github.com", 443));
}

#[test]
fn canonical_host_refuses_zone_ids_and_garbage() {
    assert!(CanonicalHost::parse("[fe80::1%25eth0]").is_err());
    assert!(CanonicalHost::parse("a b").is_err());
    assert!(CanonicalHost::parse("::1").is_err());
    assert!(CanonicalHost::parse("999.1.1.1").is_err());
    assert_eq!(CanonicalHost::parse("127.1").unwrap(), CanonicalHost::Ipv4([127, 0, 0, 1].into()));
}

proptest::proptest! {
    #[test]
    fn wildcard_never_matches_a_name_that_does_not_end_in_dot_base(
        label in "[a-z0-9]{1,10}", prefix in "[a-z0-9]{1,10}"
    ) {
        let p = DomainPattern::parse("*.example.com", Allowed).unwrap();
        let glued = CanonicalHost::parse(&format!("{prefix}example.com")).unwrap();
        proptest::prop_assert!(!p.matches(&glued, 443));
        let sub = CanonicalHost::parse(&format!("{label}.example.com")).unwrap();
        proptest::prop_assert!(p.matches(&sub, 443));
    }
}

use super::*;

/// A ClientHello body with the given extensions (type, data).
fn body(exts: &[(u16, Vec<u8>)]) -> Vec<u8> {
    let mut b = vec![3, 3];
    b.extend([7u8; 32]);
    b.push(0); // session id
    b.extend([0, 2, 0x13, 0x01]); // one cipher suite
    b.extend([1, 0]); // null compression
    let mut e = Vec::new();
    for (t, d) in exts {
        e.extend(t.to_be_bytes());
        e.extend((d.len() as u16).to_be_bytes());
        e.extend(d);
    }
    b.extend((e.len() as u16).to_be_bytes());
    b.extend(e);
    b
}

fn sni(names: &[&[u8]]) -> Vec<u8> {
    let mut list = Vec::new();
    for n in names {
        list.push(0);
        list.extend((n.len() as u16).to_be_bytes());
        list.extend(*n);
    }
    let mut d = (list.len() as u16).to_be_bytes().to_vec();
    d.extend(list);
    d
}

/// The handshake message in records of at most `chunk` bytes.
fn records(body: &[u8], chunk: usize) -> Vec<u8> {
    let mut msg = vec![CLIENT_HELLO];
    msg.extend(&(body.len() as u32).to_be_bytes()[1..]);
    msg.extend(body);
    let mut out = Vec::new();
    for part in msg.chunks(chunk) {
        out.extend([HANDSHAKE, 3, 1]);
        out.extend((part.len() as u16).to_be_bytes());
        out.extend(part);
    }
    out
}

fn name_of(buf: &[u8]) -> Parsed {
    parse(buf)
}

#[test]
fn reads_the_server_name() {
    let b = records(&body(&[(EXT_SERVER_NAME, sni(&[b"API.Example.test"]))]), 16384);
    assert_eq!(
        name_of(&b),
        Parsed::Hello(Hello { server_name: Some("api.example.test".into()), encrypted_name: false })
    );
}

#[test]
fn a_hello_split_over_records_and_reads_is_assembled() {
    let b = records(&body(&[(10, vec![0; 300]), (EXT_SERVER_NAME, sni(&[b"a.test"]))]), 7);
    // every prefix is NeedMore, the whole is the hello: never a wrong early answer
    for cut in 0..b.len() {
        assert_eq!(parse(&b[..cut]), Parsed::NeedMore, "prefix of {cut} bytes");
    }
    assert_eq!(parse(&b), Parsed::Hello(Hello { server_name: Some("a.test".into()), encrypted_name: false }));
}

#[test]
fn no_sni_and_encrypted_client_hello_are_reported() {
    assert_eq!(parse(&records(&body(&[]), 16384)), Parsed::Hello(Hello { server_name: None, encrypted_name: false }));
    let ech = records(&body(&[(EXT_SERVER_NAME, sni(&[b"public.test"])), (EXT_ECH, vec![1, 2, 3])]), 16384);
    assert_eq!(parse(&ech), Parsed::Hello(Hello { server_name: Some("public.test".into()), encrypted_name: true }));
    let esni = records(&body(&[(EXT_ESNI, vec![1])]), 16384);
    assert_eq!(parse(&esni), Parsed::Hello(Hello { server_name: None, encrypted_name: true }));
}

#[test]
fn ambiguous_names_are_malformed() {
    for bad in [
        body(&[(EXT_SERVER_NAME, sni(&[b"a.test", b"b.test"]))]),
        body(&[(EXT_SERVER_NAME, sni(&[b"a.test"])), (EXT_SERVER_NAME, sni(&[b"b.test"]))]),
        body(&[(EXT_SERVER_NAME, sni(&[b"a.test\0.evil.test"]))]),
        body(&[(EXT_SERVER_NAME, sni(&[b"a test"]))]),
        body(&[(EXT_SERVER_NAME, sni(&[b""]))]),
    ] {
        assert!(matches!(parse(&records(&bad, 16384)), Parsed::Malformed(_)), "{bad:?}");
    }
}

#[test]
fn truncated_vectors_and_trailing_bytes_are_malformed() {
    let good = body(&[(EXT_SERVER_NAME, sni(&[b"a.test"]))]);
    // a body cut anywhere (with the lengths of the outer message adjusted) never panics and
    // never yields a name
    for cut in 0..good.len() {
        let p = parse(&records(&good[..cut], 16384));
        assert!(matches!(p, Parsed::Malformed(_) | Parsed::Hello(Hello { server_name: None, .. })), "{cut}: {p:?}");
    }
    let mut trailing = good.clone();
    trailing.push(0);
    assert!(matches!(parse(&records(&trailing, 16384)), Parsed::Malformed(_)));
}

#[test]
fn other_protocols_and_other_records_are_told_apart() {
    assert!(matches!(parse(b"GET / HTTP/1.1\r\n"), Parsed::Malformed(_)));
    assert!(matches!(parse(&[HANDSHAKE, 2]), Parsed::Malformed(_)), "SSL 2 version byte");
    assert_eq!(parse(&[HANDSHAKE]), Parsed::NeedMore);
    let mut server_hello = records(&body(&[]), 16384);
    server_hello[5] = 2;
    assert!(matches!(parse(&server_hello), Parsed::Malformed(_)));
    // an alert record in the middle of the hello
    let mut b = records(&body(&[(EXT_SERVER_NAME, sni(&[b"a.test"]))]), 20);
    b[25] = 0x15;
    assert!(matches!(parse(&b), Parsed::Malformed(_)));
}

#[test]
fn oversized_hellos_are_refused_before_they_are_buffered() {
    let mut header = vec![HANDSHAKE, 3, 1, 0, 4, CLIENT_HELLO];
    header.extend(&((MAX_HELLO as u32) + 1).to_be_bytes()[1..]);
    assert!(matches!(parse(&header), Parsed::Malformed(_)));
}

#[test]
fn a_real_rustls_client_hello() {
    use std::sync::Arc;
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_root_certificates(rustls::RootCertStore::empty())
        .with_no_client_auth();
    let name = rustls::pki_types::ServerName::try_from("files.example.test").unwrap();
    let mut conn = rustls::ClientConnection::new(Arc::new(config), name).unwrap();
    let mut wire = Vec::new();
    conn.write_tls(&mut wire).unwrap();
    assert_eq!(
        parse(&wire),
        Parsed::Hello(Hello { server_name: Some("files.example.test".into()), encrypted_name: false })
    );
}

#[test]
fn a_message_behind_the_hello_in_its_record_is_malformed() {
    let one = body(&[(EXT_SERVER_NAME, sni(&[b"allowed.test"]))]);
    let two = body(&[(EXT_SERVER_NAME, sni(&[b"evil.test"]))]);
    // both hellos in one record: the second would be read after a HelloRetryRequest
    let mut msgs = records(&one, 16384)[5..].to_vec();
    msgs.extend(&records(&two, 16384)[5..]);
    let mut rec = vec![HANDSHAKE, 3, 1];
    rec.extend((msgs.len() as u16).to_be_bytes());
    rec.extend(&msgs);
    assert!(matches!(parse(&rec), Parsed::Malformed(_)), "{:?}", parse(&rec));
    // in records of their own, the first is the hello, and its length says where it ends
    let first = records(&one, 16384);
    let mut both = first.clone();
    both.extend(records(&two, 16384));
    let (p, len) = parse_with_len(&both);
    assert_eq!(p, Parsed::Hello(Hello { server_name: Some("allowed.test".into()), encrypted_name: false }));
    assert_eq!(len, first.len());
}

#[test]
fn draft_ech_extensions_are_encrypted_names_too() {
    for kind in 0xfe08..=0xfe0du16 {
        let b = records(&body(&[(EXT_SERVER_NAME, sni(&[b"public.test"])), (kind, vec![0; 8])]), 16384);
        assert!(matches!(parse(&b), Parsed::Hello(Hello { encrypted_name: true, .. })), "{kind:x}");
    }
}

/// A server's record of handshake messages.
fn server_records(kind: u8, payload: &[u8]) -> Vec<u8> {
    let mut r = vec![kind, 3, 3];
    r.extend((payload.len() as u16).to_be_bytes());
    r.extend(payload);
    r
}

fn server_hello(random: [u8; 32], extra: usize) -> Vec<u8> {
    let mut b = vec![3, 3];
    b.extend(random);
    b.extend(vec![0; extra]);
    let mut m = vec![SERVER_HELLO];
    m.extend(&(b.len() as u32).to_be_bytes()[1..]);
    m.extend(b);
    m
}

fn watch(bytes: &[u8], step: usize) -> (u8, Option<ServerSaid>) {
    let mut w = ServerWatch::default();
    for part in bytes.chunks(step) {
        w.feed(part);
    }
    (w.retries(), w.done())
}

#[test]
fn the_server_watch_tells_a_retry_from_a_hello_however_the_bytes_come() {
    let hello = server_records(HANDSHAKE, &server_hello([9; 32], 40));
    let retry = server_records(HANDSHAKE, &server_hello(HRR_RANDOM, 300));
    let ccs = server_records(CHANGE_CIPHER_SPEC, &[1]);
    for step in [1, 2, 5, 7, 1000] {
        assert_eq!(watch(&hello, step), (0, Some(ServerSaid::Hello)), "{step}");
        assert_eq!(watch(&retry, step), (1, None), "{step}");
        let mut then = retry.clone();
        then.extend(&ccs);
        then.extend(&hello);
        assert_eq!(watch(&then, step), (1, Some(ServerSaid::Hello)), "{step}");
        let mut twice = retry.clone();
        twice.extend(&retry);
        assert_eq!(watch(&twice, step), (2, None), "{step}");
    }
    // a ServerHello split over records
    let msg = server_hello([9; 32], 40);
    let mut split = server_records(HANDSHAKE, &msg[..10]);
    split.extend(server_records(HANDSHAKE, &msg[10..]));
    assert_eq!(watch(&split, 3), (0, Some(ServerSaid::Hello)));
    // an alert, plain text, another message first, an empty record: no hello will come
    for other in [
        server_records(0x15, &[2, 40]),
        b"HTTP/1.1 400 Bad Request\r\n\r\n".to_vec(),
        server_records(HANDSHAKE, &[11, 0, 0, 40]),
        server_records(HANDSHAKE, &[]),
        server_records(0x17, &[0; 20]),
    ] {
        assert_eq!(watch(&other, 1).1, Some(ServerSaid::NotTls), "{other:?}");
    }
    let mut w = ServerWatch::default();
    w.feed(&hello[..20]);
    assert_eq!(w.done(), None);
    w.end();
    assert_eq!(w.done(), Some(ServerSaid::NotTls));
}

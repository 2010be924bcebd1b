use super::*;

fn query(name: &str, qtype: u16) -> Vec<u8> {
    let mut q = vec![0xab, 0xcd, 0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 0];
    for label in name.split('.').filter(|l| !l.is_empty()) {
        q.push(label.len() as u8);
        q.extend(label.as_bytes());
    }
    q.push(0);
    q.extend(qtype.to_be_bytes());
    q.extend(1u16.to_be_bytes());
    q
}

#[test]
fn an_allowed_name_gets_its_synthetic_address() {
    let q = query("API.Example.test", TYPE_A);
    let r = reply(&q, |q| {
        assert_eq!(q.name, "api.example.test");
        Answer::A(Ipv4Addr::new(198, 18, 0, 2))
    })
    .unwrap();
    assert_eq!(&r[..2], &[0xab, 0xcd], "id");
    assert_eq!(r[2] & 0x80, 0x80, "a response");
    assert_eq!(r[2] & 0x01, 0x01, "RD echoed");
    assert_eq!(r[3] & 0x0f, 0, "NOERROR");
    assert_eq!(&r[4..8], &[0, 1, 0, 1], "one question, one answer");
    assert_eq!(&r[12..q.len()], &q[12..], "the question echoed");
    assert_eq!(&r[r.len() - 4..], &[198, 18, 0, 2]);
    assert_eq!(r.len(), q.len() + 16);
}

#[test]
fn other_types_get_no_records_and_denied_names_nxdomain() {
    let aaaa = reply(&query("a.test", 28), |_| Answer::A(Ipv4Addr::new(198, 18, 0, 2))).unwrap();
    assert_eq!((aaaa[3] & 0x0f, &aaaa[6..8]), (0, &[0u8, 0][..]), "NODATA for AAAA");
    let nx = reply(&query("evil.test", TYPE_A), |_| Answer::NxDomain).unwrap();
    assert_eq!((nx[3] & 0x0f, &nx[6..8]), (3, &[0u8, 0][..]));
    let sf = reply(&query("a.test", TYPE_A), |_| Answer::ServFail).unwrap();
    assert_eq!(sf[3] & 0x0f, 2);
}

#[test]
fn malformed_queries_get_an_error_or_nothing() {
    assert_eq!(reply(&[0; 11], |_| Answer::NxDomain), None, "shorter than a header");
    let mut response = query("a.test", TYPE_A);
    response[2] |= 0x80;
    assert_eq!(reply(&response, |_| Answer::NxDomain), None, "a response is not answered");
    let never = |_: &Question| -> Answer { panic!("not a question to answer") };
    let mut two = query("a.test", TYPE_A);
    two[5] = 2;
    assert_eq!(reply(&two, never).unwrap()[3] & 0x0f, 1, "FORMERR");
    let mut pointer = query("a.test", TYPE_A);
    pointer[12] = 0xc0;
    assert_eq!(reply(&pointer, never).unwrap()[3] & 0x0f, 1);
    let mut odd = query("a.test", TYPE_A);
    odd[13] = b'%';
    assert_eq!(reply(&odd, never).unwrap()[3] & 0x0f, 1);
    let mut update = query("a.test", TYPE_A);
    update[2] = 5 << 3;
    assert_eq!(reply(&update, never).unwrap()[3] & 0x0f, 4, "NOTIMP");
    let q = query("a.test", TYPE_A);
    for cut in 12..q.len() {
        let r = reply(&q[..cut], never).unwrap();
        assert_eq!(r[3] & 0x0f, 1, "truncated at {cut}");
        assert_eq!(&r[4..6], &[0, 0], "no question echoed from a malformed query");
    }
}

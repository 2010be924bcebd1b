//! The transparent-mode preamble: what srt's supervisor writes on a connection it hands
//! to the proxy (a magic, the per-run key, the address the command asked for). The
//! supervisor writes it and the proxy reads it, so it depends on nothing else here.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

/// The first byte of a preamble: no HTTP request or SOCKS greeting starts with it.
pub const MAGIC: &[u8; 4] = b"\0SRT";
pub const KEY_LEN: usize = 16;
pub const PREAMBLE_LEN: usize = 4 + KEY_LEN + 1 + 2 + 16;

/// The preamble the supervisor writes for a connection the command made to `dest`.
pub fn preamble(key: &[u8; KEY_LEN], dest: SocketAddr) -> [u8; PREAMBLE_LEN] {
    let mut p = [0u8; PREAMBLE_LEN];
    p[..4].copy_from_slice(MAGIC);
    p[4..4 + KEY_LEN].copy_from_slice(key);
    let at = 4 + KEY_LEN;
    match dest.ip() {
        IpAddr::V4(a) => {
            p[at] = 4;
            p[at + 3..at + 7].copy_from_slice(&a.octets());
        }
        IpAddr::V6(a) => {
            p[at] = 6;
            p[at + 3..at + 19].copy_from_slice(&a.octets());
        }
    }
    p[at + 1..at + 3].copy_from_slice(&dest.port().to_be_bytes());
    p
}

/// The destination in a preamble, if it carries `key`.
pub fn parse_preamble(key: &[u8; KEY_LEN], p: &[u8; PREAMBLE_LEN]) -> Option<SocketAddr> {
    if &p[..4] != MAGIC {
        return None;
    }
    let mut diff = 0u8;
    for (a, b) in key.iter().zip(&p[4..4 + KEY_LEN]) {
        diff |= a ^ b;
    }
    if diff != 0 {
        return None;
    }
    let at = 4 + KEY_LEN;
    let port = u16::from_be_bytes([p[at + 1], p[at + 2]]);
    let ip: IpAddr = match p[at] {
        4 => Ipv4Addr::new(p[at + 3], p[at + 4], p[at + 5], p[at + 6]).into(),
        6 => {
            let mut b = [0u8; 16];
            b.copy_from_slice(&p[at + 3..at + 19]);
            let a = Ipv6Addr::from(b);
            a.to_ipv4_mapped().map_or(IpAddr::V6(a), IpAddr::V4)
        }
        _ => return None,
    };
    Some(SocketAddr::new(ip, port))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn preambles_carry_the_destination_and_need_the_key() {
        let key = [7u8; KEY_LEN];
        for dest in ["198.18.0.2:443", "[2001:db8::1]:80", "[::ffff:10.0.0.1]:53"] {
            let d: SocketAddr = dest.parse().unwrap();
            let want = match d.ip() {
                IpAddr::V6(a) => a.to_ipv4_mapped().map_or(d, |v4| SocketAddr::new(v4.into(), d.port())),
                IpAddr::V4(_) => d,
            };
            assert_eq!(parse_preamble(&key, &preamble(&key, d)), Some(want));
        }
        let p = preamble(&key, "1.2.3.4:5".parse().unwrap());
        assert_eq!(parse_preamble(&[8u8; KEY_LEN], &p), None, "another key");
        let mut bad = p;
        bad[0] = b'G';
        assert_eq!(parse_preamble(&key, &bad), None);
        let mut family = p;
        family[4 + KEY_LEN] = 5;
        assert_eq!(parse_preamble(&key, &family), None);
    }
}

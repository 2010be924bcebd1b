//! Which resolved addresses an allowed *name* may never be dialed at: loopback,
//! unspecified, link-local, multicast, broadcast, cloud metadata endpoints, this host's
//! own addresses, and the user's `deniedResolvedAddresses`. IPv4 embedded in IPv6
//! (mapped, compatible, NAT64, 6to4) is judged by the IPv4 rules.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use settings_schema::cidr::Cidr;

/// Why an address is refused (`blocked-by-resolved-address` detail).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AddrClass {
    Loopback,
    Unspecified,
    LinkLocal,
    Multicast,
    Broadcast,
    Metadata,
    OwnInterface,
    DeniedByPolicy,
}

impl AddrClass {
    pub fn as_str(self) -> &'static str {
        match self {
            AddrClass::Loopback => "loopback",
            AddrClass::Unspecified => "unspecified",
            AddrClass::LinkLocal => "link-local",
            AddrClass::Multicast => "multicast",
            AddrClass::Broadcast => "broadcast",
            AddrClass::Metadata => "metadata",
            AddrClass::OwnInterface => "own-interface",
            AddrClass::DeniedByPolicy => "denied-resolved-address",
        }
    }
}

const METADATA_V4: [Ipv4Addr; 3] = [
    Ipv4Addr::new(100, 100, 100, 200), // Alibaba
    Ipv4Addr::new(168, 63, 129, 16),   // Azure wire server
    Ipv4Addr::new(192, 0, 0, 192),     // Oracle
];

fn metadata_v6(a: &Ipv6Addr) -> bool {
    let s = a.segments();
    (s[0] == 0xfd00 && s[1] == 0x0ec2) // AWS fd00:ec2::/32
        || *a == Ipv6Addr::new(0xfd20, 0xce, 0, 0, 0, 0, 0, 0x254)
        || *a == Ipv6Addr::new(0xfd00, 0xc1, 0, 0, 0, 0, 0xa9fe, 0xa9fe)
        || *a == Ipv6Addr::new(0xfd00, 0x42, 0, 0, 0, 0, 0, 0x42)
        || *a == Ipv6Addr::new(0xfd00, 0xa9fe, 0xa9fe, 0, 0, 0, 0, 1)
        || *a == Ipv6Addr::new(0xfd00, 0x100, 0, 0, 0, 0, 0x100, 0x200)
}

/// The IPv4 address an IPv6 one carries, for the embedding forms routed to IPv4.
pub fn embedded_v4(a: &Ipv6Addr) -> Option<Ipv4Addr> {
    if let Some(v4) = a.to_ipv4_mapped() {
        return Some(v4);
    }
    let s = a.segments();
    let tail = Ipv4Addr::new((s[6] >> 8) as u8, s[6] as u8, (s[7] >> 8) as u8, s[7] as u8);
    if s[..6] == [0; 6] && !a.is_loopback() && !a.is_unspecified() {
        return Some(tail); // IPv4-compatible ::a.b.c.d
    }
    if s[0] == 0x64 && s[1] == 0xff9b && s[2..6] == [0; 4] {
        return Some(tail); // NAT64 64:ff9b::/96
    }
    if s[0] == 0x2002 {
        return Some(Ipv4Addr::new((s[1] >> 8) as u8, s[1] as u8, (s[2] >> 8) as u8, s[2] as u8));
        // 6to4
    }
    None
}

/// Classifies one address; `own` are this host's interface addresses.
pub fn classify(ip: IpAddr, own: &[IpAddr], denied: &[Cidr]) -> Option<AddrClass> {
    if denied.iter().any(|c| c.contains(ip)) {
        return Some(AddrClass::DeniedByPolicy);
    }
    match ip {
        IpAddr::V4(a) => classify_v4(a, own, denied),
        IpAddr::V6(a) => {
            if let Some(v4) = embedded_v4(&a) {
                return classify_v4(v4, own, denied);
            }
            if a.is_loopback() {
                Some(AddrClass::Loopback)
            } else if a.is_unspecified() {
                Some(AddrClass::Unspecified)
            } else if a.segments()[0] & 0xffc0 == 0xfe80 {
                Some(AddrClass::LinkLocal)
            } else if a.is_multicast() {
                Some(AddrClass::Multicast)
            } else if metadata_v6(&a) {
                Some(AddrClass::Metadata)
            } else if own.contains(&ip) {
                Some(AddrClass::OwnInterface)
            } else {
                None
            }
        }
    }
}

fn classify_v4(a: Ipv4Addr, own: &[IpAddr], denied: &[Cidr]) -> Option<AddrClass> {
    if denied.iter().any(|c| c.contains(IpAddr::V4(a))) {
        Some(AddrClass::DeniedByPolicy)
    } else if a.is_loopback() {
        Some(AddrClass::Loopback)
    } else if a.octets()[0] == 0 {
        Some(AddrClass::Unspecified)
    } else if a.is_link_local() {
        Some(AddrClass::LinkLocal) // includes 169.254.169.254
    } else if a.is_multicast() {
        Some(AddrClass::Multicast)
    } else if a.is_broadcast() {
        Some(AddrClass::Broadcast)
    } else if METADATA_V4.contains(&a) {
        Some(AddrClass::Metadata)
    } else if own.contains(&IpAddr::V4(a)) {
        Some(AddrClass::OwnInterface)
    } else {
        None
    }
}

/// Every address configured on this host's interfaces. `Err` when they cannot be listed
/// (getifaddrs needs a netlink socket: out of descriptors, it fails), which must never be
/// read as "this host has no addresses".
pub fn own_addresses() -> std::io::Result<Vec<IpAddr>> {
    let mut out = Vec::new();
    let mut ifap: *mut libc::ifaddrs = std::ptr::null_mut();
    // SAFETY: getifaddrs fills `ifap` with a list we walk read-only and then free.
    unsafe {
        if libc::getifaddrs(&mut ifap) != 0 {
            return Err(std::io::Error::last_os_error());
        }
        let mut cur = ifap;
        while !cur.is_null() {
            let sa = (*cur).ifa_addr;
            if !sa.is_null() {
                match i32::from((*sa).sa_family) {
                    libc::AF_INET => {
                        let sin = &*(sa as *const libc::sockaddr_in);
                        out.push(IpAddr::V4(Ipv4Addr::from(u32::from_be(sin.sin_addr.s_addr))));
                    }
                    libc::AF_INET6 => {
                        let sin6 = &*(sa as *const libc::sockaddr_in6);
                        out.push(IpAddr::V6(Ipv6Addr::from(sin6.sin6_addr.s6_addr)));
                    }
                    _ => {}
                }
            }
            cur = (*cur).ifa_next;
        }
        libc::freeifaddrs(ifap);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn c(s: &str) -> Option<AddrClass> {
        let own: Vec<IpAddr> = vec!["10.1.2.3".parse().unwrap(), "fd12::5".parse().unwrap()];
        let denied = vec![Cidr::parse("203.0.113.0/24").unwrap()];
        classify(s.parse().unwrap(), &own, &denied)
    }

    #[test]
    fn classifier_table() {
        use AddrClass::*;
        let cases: &[(&str, Option<AddrClass>)] = &[
            ("127.0.0.1", Some(Loopback)),
            ("127.255.0.9", Some(Loopback)),
            ("::1", Some(Loopback)),
            ("0.0.0.0", Some(Unspecified)),
            ("0.1.2.3", Some(Unspecified)),
            ("::", Some(Unspecified)),
            ("169.254.169.254", Some(LinkLocal)),
            ("fe80::1", Some(LinkLocal)),
            ("224.0.0.1", Some(Multicast)),
            ("ff02::1", Some(Multicast)),
            ("255.255.255.255", Some(Broadcast)),
            ("100.100.100.200", Some(Metadata)),
            ("168.63.129.16", Some(Metadata)),
            ("fd00:ec2::254", Some(Metadata)),
            ("10.1.2.3", Some(OwnInterface)),
            ("fd12::5", Some(OwnInterface)),
            ("203.0.113.7", Some(DeniedByPolicy)),
            ("::ffff:127.0.0.1", Some(Loopback)),
            ("::ffff:169.254.169.254", Some(LinkLocal)),
            ("::127.0.0.1", Some(Loopback)),
            ("64:ff9b::7f00:1", Some(Loopback)),
            ("64:ff9b::a9fe:a9fe", Some(LinkLocal)),
            ("2002:7f00:1::1", Some(Loopback)),
            ("2002:cb00:7107::1", Some(DeniedByPolicy)),
            ("93.184.216.34", None),
            ("10.0.0.1", None),
            ("192.168.1.1", None),
            ("2606:2800:220:1::1", None),
        ];
        for (ip, want) in cases {
            assert_eq!(c(ip), *want, "{ip}");
        }
    }

    #[test]
    fn own_addresses_include_loopback() {
        assert!(own_addresses().unwrap().contains(&IpAddr::V4(Ipv4Addr::LOCALHOST)));
    }
}

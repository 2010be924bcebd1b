//! Landlock mode's local TCP servers: where the command's `bind()`s go, which sockets may
//! `listen()`, and which loopback connects may reach the listeners the command made. Pure
//! decisions, tested without a kernel; the supervisor acts on them
//! (`supervisor/listen.rs`, `supervisor/local.rs`).
//!
//! The command shares the host's loopback in this mode. So that it can neither stand in for
//! a host service on `127.0.0.1` (a host client would talk to it) nor be reached by host
//! clients that meant a service of their own, its loopback and wildcard binds go to an
//! address of the run's own in `127.0.0.0/8` (the whole block is local on Linux), and its
//! loopback connects are mapped there. IPv6 has a single loopback address, `::1`, which the
//! host shares and which host clients of `localhost` try first: nothing of the command's
//! goes there. Sockets it made IPv6-only are made dual-stack and placed on a second
//! address of the run's own, so that a server with one IPv4 and one IPv6-only socket on
//! the same port (nginx's `listen 80; listen [::]:80;`) still starts.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, SocketAddrV4, SocketAddrV6};

/// How the run's local servers are placed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Local {
    /// The run's own loopback address (`127.A.B.C`, never in `127.0.0.0/16`).
    pub addr: Ipv4Addr,
    /// `allowLocalBinding`: binds go exactly where the command asks (any address, also
    /// `0.0.0.0` and the host's interfaces).
    pub as_asked: bool,
}

impl Local {
    /// A fresh address for a run: random in `127.1.0.1`..`127.254.255.254`, away from the
    /// addresses hosts give meaning to (`127.0.0.1`, `127.0.0.53`, `127.0.1.1`).
    pub fn for_run(random: [u8; 3], as_asked: bool) -> Local {
        let a = 1 + random[0] % 254;
        let c = 1 + random[2] % 254;
        Local { addr: Ipv4Addr::new(127, a, random[1], c), as_asked }
    }

    fn mapped(&self) -> Ipv6Addr {
        self.addr.to_ipv6_mapped()
    }

    /// The run's second address, for the sockets the command made IPv6-only: `127.A.B.C`
    /// with the last octet's lowest bit flipped within `1..=254`.
    pub fn v6only_addr(&self) -> Ipv4Addr {
        let [a, b, c, d] = self.addr.octets();
        Ipv4Addr::new(a, b, c, if d % 2 == 1 { d + 1 } else { d - 1 })
    }
}

/// An address as the kernel routes it: v4-mapped IPv6 addresses are the IPv4 address.
pub fn folded(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V6(a) => a.to_ipv4_mapped().map_or(IpAddr::V6(a), IpAddr::V4),
        v4 => v4,
    }
}

/// A loopback or wildcard address: what a connect reaches on this host.
pub fn is_local(ip: IpAddr) -> bool {
    let ip = folded(ip);
    ip.is_loopback() || ip.is_unspecified()
}

/// Where a `bind()` to `asked` goes, or the errno it fails with. `v6only`: the socket's
/// `IPV6_V6ONLY` (an IPv6-only socket cannot take an IPv4 address). A v4-mapped target
/// for an IPv6-only socket means: clear `IPV6_V6ONLY` first ([`clears_v6only`]).
pub fn bind_target(l: &Local, asked: SocketAddr, v6only: bool) -> Result<SocketAddr, i32> {
    if l.as_asked {
        return Ok(asked);
    }
    let port = asked.port();
    match asked {
        SocketAddr::V4(a) if is_local(IpAddr::V4(*a.ip())) => Ok(SocketAddr::V4(SocketAddrV4::new(l.addr, port))),
        SocketAddr::V6(a) if is_local(IpAddr::V6(*a.ip())) => {
            let v4_asked = a.ip().to_ipv4_mapped().is_some();
            let v6_loopback = a.ip().is_loopback();
            match (v6only, v4_asked) {
                // the kernel refuses an IPv4 address on an IPv6-only socket itself
                (true, true) => Err(libc::EINVAL),
                // never ::1, where host clients of `localhost` would reach it first; a
                // socket bound to ::1 serves IPv6 clients only, so it goes there too
                (true, false) => Ok(SocketAddr::V6(SocketAddrV6::new(l.v6only_addr().to_ipv6_mapped(), port, 0, 0))),
                (false, false) if v6_loopback => {
                    Ok(SocketAddr::V6(SocketAddrV6::new(l.v6only_addr().to_ipv6_mapped(), port, 0, 0)))
                }
                (false, _) => Ok(SocketAddr::V6(SocketAddrV6::new(l.mapped(), port, 0, 0))),
            }
        }
        _ => Err(libc::EACCES),
    }
}

/// Whether placing an IPv6-only socket at `target` needs its `IPV6_V6ONLY` cleared.
pub fn clears_v6only(v6only: bool, target: SocketAddr) -> bool {
    matches!(target, SocketAddr::V6(a) if v6only && a.ip().to_ipv4_mapped().is_some())
}

/// Whether a socket bound at `bound` may listen: only where [`bind_target`] puts sockets,
/// never on an unbound one (`listen()` would bind it to the wildcard address itself).
pub fn may_listen(l: &Local, bound: SocketAddr) -> bool {
    if bound.port() == 0 {
        return false;
    }
    if l.as_asked {
        return true;
    }
    match bound.ip() {
        IpAddr::V4(a) => a == l.addr,
        IpAddr::V6(a) => a == l.mapped() || a == l.v6only_addr().to_ipv6_mapped(),
    }
}

/// The listeners a connect to `dest` (a local address, see [`is_local`]) may reach, in
/// the order tried: the run's own address on that port first (where the command's
/// listeners are; for an IPv6 destination, where its IPv6-only ones are, then the other),
/// then `dest` as the kernel would route it. Each must turn out to be a
/// listener the command made before srt connects to it.
pub fn candidates(l: &Local, dest: SocketAddr) -> Vec<SocketAddr> {
    let port = dest.port();
    let routed = match folded(dest.ip()) {
        IpAddr::V4(a) if a.is_unspecified() => IpAddr::V4(Ipv4Addr::LOCALHOST),
        IpAddr::V6(a) if a.is_unspecified() => IpAddr::V6(Ipv6Addr::LOCALHOST),
        ip => ip,
    };
    let own = SocketAddr::new(IpAddr::V4(l.addr), port);
    let mut out = match routed {
        IpAddr::V6(_) => vec![SocketAddr::new(IpAddr::V4(l.v6only_addr()), port), own],
        IpAddr::V4(_) => vec![own],
    };
    let routed = SocketAddr::new(routed, port);
    if !out.contains(&routed) {
        out.push(routed);
    }
    out
}

/// `target` as a socket of the given family connects to it: an IPv4 target becomes
/// v4-mapped for an IPv6 socket; an IPv4 socket cannot reach an IPv6 target (`None`).
pub fn in_family(target: SocketAddr, v6: bool) -> Option<SocketAddr> {
    match (target, v6) {
        (SocketAddr::V4(a), true) => Some(SocketAddr::V6(SocketAddrV6::new(a.ip().to_ipv6_mapped(), a.port(), 0, 0))),
        (SocketAddr::V6(_), false) => None,
        (t, _) => Some(t),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sa(s: &str) -> SocketAddr {
        s.parse().unwrap()
    }

    const RUN: Local = Local { addr: Ipv4Addr::new(127, 9, 8, 7), as_asked: false };

    #[test]
    fn run_addresses_stay_out_of_the_hosts_part_of_loopback() {
        for r in [[0, 0, 0], [255, 255, 255], [253, 0, 253], [1, 1, 1]] {
            let l = Local::for_run(r, false);
            let o = l.addr.octets();
            assert_eq!(o[0], 127);
            assert!((1..=254).contains(&o[1]) && (1..=254).contains(&o[3]), "{}", l.addr);
            let v = l.v6only_addr().octets();
            assert_eq!(v[..3], o[..3]);
            assert!((1..=254).contains(&v[3]) && v[3] != o[3], "{}", l.v6only_addr());
        }
    }

    #[test]
    fn loopback_and_wildcard_binds_go_to_the_runs_address() {
        for asked in ["127.0.0.1:8000", "0.0.0.0:8000", "127.5.5.5:8000"] {
            assert_eq!(bind_target(&RUN, sa(asked), false), Ok(sa("127.9.8.7:8000")), "{asked}");
        }
        for asked in ["[::]:0", "[::ffff:127.0.0.1]:0", "[::ffff:0.0.0.0]:0"] {
            assert_eq!(bind_target(&RUN, sa(asked), false), Ok(sa("[::ffff:127.9.8.7]:0")), "{asked}");
        }
        // ::1 serves IPv6 clients only: where IPv6-only sockets go, which 127.0.0.1 does not reach
        assert_eq!(bind_target(&RUN, sa("[::1]:0"), false), Ok(sa("[::ffff:127.9.8.8]:0")));
        // an IPv6-only socket goes to the run's second address, never to ::1 (the host's)
        assert_eq!(bind_target(&RUN, sa("[::]:80"), true), Ok(sa("[::ffff:127.9.8.8]:80")));
        assert_eq!(bind_target(&RUN, sa("[::1]:80"), true), Ok(sa("[::ffff:127.9.8.8]:80")));
        assert!(clears_v6only(true, sa("[::ffff:127.9.8.8]:80")));
        assert!(!clears_v6only(false, sa("[::ffff:127.9.8.7]:80")));
        assert!(!clears_v6only(true, sa("[::1]:80")));
        assert_eq!(bind_target(&RUN, sa("[::ffff:127.0.0.1]:80"), true), Err(libc::EINVAL));
    }

    #[test]
    fn other_addresses_are_refused_unless_local_binding_is_allowed() {
        for asked in ["10.0.0.5:80", "192.0.2.1:0", "[2001:db8::1]:0", "[fe80::1]:0", "[::ffff:10.0.0.5]:0"] {
            assert_eq!(bind_target(&RUN, sa(asked), false), Err(libc::EACCES), "{asked}");
            let open = Local { as_asked: true, ..RUN };
            assert_eq!(bind_target(&open, sa(asked), false), Ok(sa(asked)), "{asked}");
        }
        let open = Local { as_asked: true, ..RUN };
        assert_eq!(bind_target(&open, sa("127.0.0.1:80"), false), Ok(sa("127.0.0.1:80")), "exactly as asked");
    }

    #[test]
    fn only_sockets_srt_placed_may_listen() {
        assert!(may_listen(&RUN, sa("127.9.8.7:8000")));
        assert!(may_listen(&RUN, sa("[::ffff:127.9.8.7]:8000")));
        assert!(may_listen(&RUN, sa("[::ffff:127.9.8.8]:8000")));
        for bound in
            ["127.9.8.7:0", "0.0.0.0:0", "0.0.0.0:8000", "127.0.0.1:8000", "[::]:8000", "[::1]:8000", "10.0.0.1:80"]
        {
            assert!(!may_listen(&RUN, sa(bound)), "{bound}");
        }
        let open = Local { as_asked: true, ..RUN };
        assert!(may_listen(&open, sa("0.0.0.0:8000")));
        assert!(!may_listen(&open, sa("0.0.0.0:0")), "never an unbound socket");
    }

    #[test]
    fn connects_try_the_runs_address_then_the_routed_one() {
        assert_eq!(candidates(&RUN, sa("127.0.0.1:80")), [sa("127.9.8.7:80"), sa("127.0.0.1:80")]);
        assert_eq!(candidates(&RUN, sa("0.0.0.0:80")), [sa("127.9.8.7:80"), sa("127.0.0.1:80")]);
        assert_eq!(candidates(&RUN, sa("[::]:80")), [sa("127.9.8.8:80"), sa("127.9.8.7:80"), sa("[::1]:80")]);
        assert_eq!(candidates(&RUN, sa("[::1]:80")), [sa("127.9.8.8:80"), sa("127.9.8.7:80"), sa("[::1]:80")]);
        assert_eq!(candidates(&RUN, sa("127.9.8.8:80")), [sa("127.9.8.7:80"), sa("127.9.8.8:80")]);
        assert_eq!(candidates(&RUN, sa("[::ffff:127.0.0.2]:80")), [sa("127.9.8.7:80"), sa("127.0.0.2:80")]);
        assert_eq!(candidates(&RUN, sa("127.9.8.7:80")), [sa("127.9.8.7:80")]);
        assert!(is_local("::ffff:0.0.0.0".parse().unwrap()) && !is_local("10.0.0.1".parse().unwrap()));
    }

    #[test]
    fn targets_in_the_sockets_family() {
        assert_eq!(in_family(sa("127.9.8.7:80"), true), Some(sa("[::ffff:127.9.8.7]:80")));
        assert_eq!(in_family(sa("127.9.8.7:80"), false), Some(sa("127.9.8.7:80")));
        assert_eq!(in_family(sa("[::1]:80"), false), None);
        assert_eq!(in_family(sa("[::1]:80"), true), Some(sa("[::1]:80")));
    }
}

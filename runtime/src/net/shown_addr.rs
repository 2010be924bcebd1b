//! Landlock mode: the addresses the command is shown for its own sockets. srt places the
//! command's servers on a loopback address of the run's own ([`super::local_addr`]), but a
//! program must see what it asked for: express's and werkzeug's suites compare
//! `server.address()` with `127.0.0.1`, and frameworks derive `SERVER_NAME` from
//! `getsockname()`. The supervisor answers `getsockname` and `getpeername` with the run's
//! addresses shown as the loopback addresses they stand for; it also binds the command's
//! loopback clients to `127.0.0.1` before connecting them, so that a server's `accept()`
//! (which srt does not see) reports the peer a shared loopback would.
//!
//! Pure decisions, tested without a kernel; `supervisor/sockname.rs` acts on them. The
//! run's own addresses stay srt's business: `NO_PROXY` still names them.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, SocketAddrV4, SocketAddrV6};

use super::local_addr::{folded, Local};

/// What the command asked of one of its sockets, remembered by the socket's inode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Asked {
    /// `bind()` to this address (the port may be 0: the kernel's choice is shown).
    Bound(SocketAddr),
    /// `connect()` to this loopback or wildcard address.
    Dialed(SocketAddr),
}

/// Which end of a socket the command asks about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum End {
    /// `getsockname`.
    Own,
    /// `getpeername`.
    Peer,
}

/// Which of the run's two addresses `ip` is, if either: `Some(false)` the first (where
/// IPv4 and dual-stack sockets are placed), `Some(true)` the second (IPv6-only sockets).
fn run_address(l: &Local, ip: IpAddr) -> Option<bool> {
    match folded(ip) {
        IpAddr::V4(a) if a == l.addr => Some(false),
        IpAddr::V4(a) if a == l.v6only_addr() => Some(true),
        _ => None,
    }
}

/// The loopback address a shared loopback would show in `real`'s family: `127.0.0.1`,
/// its v4-mapped form, or `::1` for what stands for IPv6's loopback.
fn loopback_like(real: SocketAddr, ipv6_loopback: bool) -> IpAddr {
    match real {
        SocketAddr::V4(_) => IpAddr::V4(Ipv4Addr::LOCALHOST),
        SocketAddr::V6(_) if ipv6_loopback => IpAddr::V6(Ipv6Addr::LOCALHOST),
        SocketAddr::V6(_) => IpAddr::V6(Ipv4Addr::LOCALHOST.to_ipv6_mapped()),
    }
}

/// `ip` in `real`'s family (a v4 address on an IPv6 socket is shown v4-mapped).
fn in_family_of(real: SocketAddr, ip: IpAddr) -> IpAddr {
    match (real, ip) {
        (SocketAddr::V6(_), IpAddr::V4(a)) => IpAddr::V6(a.to_ipv6_mapped()),
        (SocketAddr::V4(_), IpAddr::V6(a)) => a.to_ipv4_mapped().map_or(IpAddr::V4(Ipv4Addr::LOCALHOST), IpAddr::V4),
        (_, ip) => ip,
    }
}

/// A wildcard destination is reached at the loopback address (`connect(0.0.0.0:P)` talks
/// to `127.0.0.1:P`, and `getpeername` says so).
fn dialed_as(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V4(a) if a.is_unspecified() => IpAddr::V4(Ipv4Addr::LOCALHOST),
        IpAddr::V6(a) if a.is_unspecified() => IpAddr::V6(Ipv6Addr::LOCALHOST),
        IpAddr::V6(a) if a.to_ipv4_mapped().is_some_and(|v| v.is_unspecified()) => {
            IpAddr::V6(Ipv4Addr::LOCALHOST.to_ipv6_mapped())
        }
        ip => ip,
    }
}

fn with_ip(real: SocketAddr, ip: IpAddr) -> SocketAddr {
    match (real, ip) {
        (SocketAddr::V4(r), IpAddr::V4(a)) => SocketAddr::V4(SocketAddrV4::new(a, r.port())),
        (SocketAddr::V6(r), IpAddr::V6(a)) => SocketAddr::V6(SocketAddrV6::new(a, r.port(), r.flowinfo(), 0)),
        // families always agree after in_family_of; keep the kernel's answer otherwise
        (r, _) => r,
    }
}

/// The address the command is shown for one end of its socket, whose real address is
/// `real`, given what it asked of that socket (if srt remembers). Only the run's own
/// addresses are ever changed: anything else is shown as the kernel has it.
pub fn shown(l: &Local, real: SocketAddr, end: End, asked: Option<Asked>) -> SocketAddr {
    if l.as_asked {
        return real;
    }
    // srt bound the command's loopback clients to 127.0.0.1 ([`client_source`])
    let srt_source = end == End::Own
        && matches!(asked, Some(Asked::Dialed(_)))
        && folded(real.ip()) == IpAddr::V4(Ipv4Addr::LOCALHOST);
    let Some(second) = run_address(l, real.ip()).or(srt_source.then_some(false)) else { return real };
    let ip = match (end, asked) {
        // a server sees where it bound: `0.0.0.0`, `::`, `127.0.0.1`, `::1`, as asked
        (End::Own, Some(Asked::Bound(a))) => in_family_of(real, a.ip()),
        // a client sees the address it dialed
        (End::Peer, Some(Asked::Dialed(a))) => in_family_of(real, dialed_as(a.ip())),
        // the client end of a dial to ::1 is ::1 on a shared loopback
        (End::Own, Some(Asked::Dialed(a))) => {
            loopback_like(real, matches!(dialed_as(a.ip()), IpAddr::V6(v) if v.to_ipv4_mapped().is_none()))
        }
        // an accepted connection, or nothing remembered: the loopback address it stands for
        _ => loopback_like(real, second),
    };
    with_ip(real, ip)
}

/// Where srt binds the command's loopback client before connecting it to the run's
/// address: `127.0.0.1` (v4-mapped on an IPv6 socket), the source a shared loopback would
/// pick, so that the command's server `accept()`s a peer named as without srt. The port is
/// chosen at connect time (`IP_BIND_ADDRESS_NO_PORT`), so clients share the port space.
pub fn client_source(v6: bool) -> SocketAddr {
    if v6 {
        SocketAddr::V6(SocketAddrV6::new(Ipv4Addr::LOCALHOST.to_ipv6_mapped(), 0, 0, 0))
    } else {
        SocketAddr::V4(SocketAddrV4::new(Ipv4Addr::LOCALHOST, 0))
    }
}

/// The addresses srt holds for the run so that the command's servers never get srt's own
/// ports: each of `ports` at both of the run's addresses. A bind there fails with
/// `EADDRINUSE`, as on a shared loopback where the proxy holds the port, and the kernel's
/// port-0 choice skips them (it skips every port bound on the address).
pub fn reserved(l: &Local, ports: &[u16]) -> Vec<SocketAddr> {
    if l.as_asked {
        // binds go where asked: the proxy's own listeners hold its ports on 127.0.0.1
        return Vec::new();
    }
    let mut out = Vec::new();
    for &p in ports {
        for a in [l.addr, l.v6only_addr()] {
            let sa = SocketAddr::V4(SocketAddrV4::new(a, p));
            if p != 0 && !out.contains(&sa) {
                out.push(sa);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const RUN: Local = Local { addr: Ipv4Addr::new(127, 9, 8, 7), as_asked: false };

    fn sa(s: &str) -> SocketAddr {
        s.parse().unwrap()
    }

    #[test]
    fn a_server_sees_the_address_it_bound() {
        for (asked, real, want) in [
            ("127.0.0.1:0", "127.9.8.7:4000", "127.0.0.1:4000"),
            ("0.0.0.0:0", "127.9.8.7:4000", "0.0.0.0:4000"),
            ("127.5.5.5:80", "127.9.8.7:80", "127.5.5.5:80"),
            ("[::]:0", "[::ffff:127.9.8.7]:4000", "[::]:4000"),
            ("[::1]:0", "[::ffff:127.9.8.7]:4000", "[::1]:4000"),
            ("[::1]:0", "[::ffff:127.9.8.8]:4000", "[::1]:4000"),
            ("[::ffff:127.0.0.1]:0", "[::ffff:127.9.8.7]:4000", "[::ffff:127.0.0.1]:4000"),
        ] {
            assert_eq!(shown(&RUN, sa(real), End::Own, Some(Asked::Bound(sa(asked)))), sa(want), "{asked}");
        }
    }

    #[test]
    fn a_client_sees_what_it_dialed_and_the_source_a_shared_loopback_picks() {
        let dialed = |a: &str| Some(Asked::Dialed(sa(a)));
        assert_eq!(shown(&RUN, sa("127.9.8.7:80"), End::Peer, dialed("127.0.0.1:80")), sa("127.0.0.1:80"));
        assert_eq!(shown(&RUN, sa("127.9.8.7:80"), End::Peer, dialed("0.0.0.0:80")), sa("127.0.0.1:80"));
        assert_eq!(shown(&RUN, sa("127.9.8.7:80"), End::Peer, dialed("127.0.0.2:80")), sa("127.0.0.2:80"));
        assert_eq!(shown(&RUN, sa("[::ffff:127.9.8.8]:80"), End::Peer, dialed("[::1]:80")), sa("[::1]:80"));
        assert_eq!(shown(&RUN, sa("[::ffff:127.9.8.7]:80"), End::Peer, dialed("[::]:80")), sa("[::1]:80"));
        assert_eq!(
            shown(&RUN, sa("[::ffff:127.9.8.7]:80"), End::Peer, dialed("[::ffff:127.0.0.1]:80")),
            sa("[::ffff:127.0.0.1]:80")
        );
        // srt bound the client to 127.0.0.1 itself: nothing to change there...
        assert_eq!(shown(&RUN, sa("127.0.0.1:5000"), End::Own, dialed("127.0.0.1:80")), sa("127.0.0.1:5000"));
        assert_eq!(
            shown(&RUN, sa("[::ffff:127.0.0.1]:5000"), End::Own, dialed("[::ffff:127.0.0.1]:80")),
            sa("[::ffff:127.0.0.1]:5000")
        );
        // ...but the source of a dial to ::1 is ::1 on a shared loopback
        assert_eq!(shown(&RUN, sa("[::ffff:127.0.0.1]:5000"), End::Own, dialed("[::1]:80")), sa("[::1]:5000"));
        assert_eq!(shown(&RUN, sa("[::ffff:127.9.8.7]:5000"), End::Own, dialed("[::1]:80")), sa("[::1]:5000"));
        // a socket srt did not dial keeps its 127.0.0.1
        assert_eq!(shown(&RUN, sa("[::ffff:127.0.0.1]:5000"), End::Own, None), sa("[::ffff:127.0.0.1]:5000"));
    }

    #[test]
    fn accepted_connections_show_the_loopback_address_the_runs_stands_for() {
        assert_eq!(shown(&RUN, sa("127.9.8.7:80"), End::Own, None), sa("127.0.0.1:80"));
        assert_eq!(shown(&RUN, sa("[::ffff:127.9.8.7]:80"), End::Own, None), sa("[::ffff:127.0.0.1]:80"));
        assert_eq!(shown(&RUN, sa("[::ffff:127.9.8.8]:80"), End::Own, None), sa("[::1]:80"));
        assert_eq!(shown(&RUN, sa("127.9.8.7:5000"), End::Peer, None), sa("127.0.0.1:5000"));
    }

    #[test]
    fn only_the_runs_addresses_are_ever_changed() {
        for real in ["127.0.0.1:80", "10.0.0.1:443", "[::1]:80", "127.9.8.6:80", "198.18.0.3:443", "0.0.0.0:0"] {
            for end in [End::Own, End::Peer] {
                for asked in [None, Some(Asked::Bound(sa("0.0.0.0:0"))), Some(Asked::Dialed(sa("127.0.0.1:1")))] {
                    assert_eq!(shown(&RUN, sa(real), end, asked), sa(real), "{real} {end:?} {asked:?}");
                }
            }
        }
        let open = Local { as_asked: true, ..RUN };
        assert_eq!(shown(&open, sa("127.9.8.7:80"), End::Own, None), sa("127.9.8.7:80"), "allowLocalBinding");
    }

    #[test]
    fn clients_come_from_the_loopback_address() {
        assert_eq!(client_source(false), sa("127.0.0.1:0"));
        assert_eq!(client_source(true), sa("[::ffff:127.0.0.1]:0"));
    }

    #[test]
    fn srt_holds_its_ports_at_both_run_addresses() {
        assert_eq!(
            reserved(&RUN, &[4000, 4000, 53]),
            [sa("127.9.8.7:4000"), sa("127.9.8.8:4000"), sa("127.9.8.7:53"), sa("127.9.8.8:53")]
        );
        assert!(reserved(&RUN, &[0]).is_empty());
        assert!(reserved(&Local { as_asked: true, ..RUN }, &[4000]).is_empty());
    }
}

//! Where a command's `connect()` may go, decided from the address it passed: to the proxy,
//! to its own loopback listeners, or nowhere. Pure decisions; the supervisor acts on them.

use std::net::{Ipv4Addr, Ipv6Addr, SocketAddr};

use settings_schema::Settings;

/// What the supervisor needs to route connects.
#[derive(Debug, Clone, Copy)]
pub struct Route {
    pub port: u16,
    pub socks_port: u16,
    pub unix: UnixRule,
    /// Landlock mode: where the command's local servers are placed.
    pub local: crate::net::local_addr::Local,
    /// Transparent mode's preamble key.
    pub transparent: Option<[u8; srt_proxy::transparent::KEY_LEN]>,
    /// Namespace mode: the command's loopback is its own, other addresses have no route.
    pub namespaced: bool,
    /// Landlock mode: Landlock refuses the command's own TCP connects and binds (ABI 4 and
    /// later; `--allow-weaker` runs without on older kernels).
    pub landlock_tcp: bool,
    /// An existing proxy (`httpProxyPort`, a pod's sidecar) is shared by every run, which
    /// tells runs apart by their source address: connects to it leave from this address of
    /// the run's own, never from `127.0.0.1` (the pod's processes) or one the command chose.
    pub shared_proxy_from: Option<Ipv4Addr>,
}

/// Where a `connect()` may go, decided from the address the command passed.
#[derive(Debug, PartialEq, Eq)]
pub enum Verdict {
    /// To the proxy: connect the command's socket to our own copy of the proxy address.
    Proxy {
        v6: bool,
        port: u16,
    },
    /// Transparent mode: to the proxy, which is told `dest`.
    Transparent {
        v6: bool,
        dest: SocketAddr,
    },
    /// Landlock mode: a loopback or wildcard address, reachable only where a listener the
    /// command made is ([`crate::net::local_addr::candidates`]).
    Local {
        v6: bool,
        dest: SocketAddr,
    },
    /// An `AF_UNIX` address with `allowUnixSockets`: judged by the object its path names.
    Unix,
    /// Harmless (AF_UNSPEC disconnect, AF_UNIX with allowAllUnixSockets, the namespace's own
    /// loopback): let the kernel do it.
    Kernel,
    Refuse(i32),
}

/// Which `AF_UNIX` sockets the command may reach.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UnixRule {
    /// None: `socket(AF_UNIX)` is refused (stream socketpairs stay, they address nothing).
    None,
    /// `allowUnixSockets`: stream and seqpacket sockets, connected only to the listed paths.
    Listed,
    /// `allowAllUnixSockets`: any.
    All,
}

impl UnixRule {
    pub fn from_settings(s: &Settings) -> UnixRule {
        if s.network.allow_all_unix_sockets.unwrap_or(false) {
            UnixRule::All
        } else if s.network.allow_unix_sockets.as_ref().is_some_and(|l| !l.is_empty()) {
            UnixRule::Listed
        } else {
            UnixRule::None
        }
    }
}

/// The address in a raw `sockaddr_in` or `sockaddr_in6`; `None` for other families or a
/// truncated one.
pub fn inet_addr(sa: &[u8]) -> Option<SocketAddr> {
    let family = i32::from(u16::from_ne_bytes([*sa.first()?, *sa.get(1)?]));
    let port = u16::from_be_bytes([*sa.get(2)?, *sa.get(3)?]);
    match family {
        libc::AF_INET if sa.len() >= 8 => Some(SocketAddr::new(Ipv4Addr::new(sa[4], sa[5], sa[6], sa[7]).into(), port)),
        libc::AF_INET6 if sa.len() >= 24 => {
            let mut b = [0u8; 16];
            b.copy_from_slice(&sa[8..24]);
            Some(SocketAddr::new(Ipv6Addr::from(b).into(), port))
        }
        _ => None,
    }
}

/// Whether a connect judged [`Verdict::Kernel`] may be left to the kernel (`CONTINUE`),
/// which reads the address again from the command's memory, changed or not by another
/// thread: only where no address it could read there reaches more than the judged one.
/// That needs both:
/// - no path-named Unix socket to judge: with `allowUnixSockets` listing paths the command
///   holds Unix sockets whose connects srt judges by path, beyond Landlock's reach on the
///   kernels srt supports (otherwise they exist only as connected pairs, or under
///   `allowAllUnixSockets`, where any is allowed);
/// - no TCP address to judge: namespace mode's kernel routes reach only the sandbox's own
///   loopback, and in landlock mode Landlock must refuse the command's TCP connects itself
///   (not so under `--allow-weaker` on a kernel before 6.7). UDP sockets exist only in
///   namespace mode.
pub fn kernel_holds_any_address(route: &Route) -> bool {
    route.unix != UnixRule::Listed && (route.namespaced || route.landlock_tcp)
}

/// How a socket the command wants connected to a shared proxy gets to leave from the run's
/// address ([`Route::shared_proxy_from`]).
#[derive(Debug, PartialEq, Eq)]
pub enum Leave {
    /// Not bound yet: bind it here first (any port).
    Bind(SocketAddr),
    /// Bound at the run's address already (the command bound it and srt placed it there).
    AsIs,
    /// Bound elsewhere (`allowLocalBinding` binds as asked; a bind to `::1` lands on the
    /// run's second address): a socket of srt's own, bound at the run's address, takes its
    /// place, so that the command cannot pick the identity the proxy counts it under.
    Replace,
}

/// Where a socket of family `v6`, bound at `bound` (port 0: not bound; `None`: unknown),
/// must leave from to reach a shared proxy as the run at `from`.
pub fn leave_for_proxy(from: Ipv4Addr, v6: bool, bound: Option<SocketAddr>) -> Leave {
    match bound {
        Some(b) if b.port() == 0 && b.ip().is_unspecified() => {
            let ip = if v6 { std::net::IpAddr::V6(from.to_ipv6_mapped()) } else { from.into() };
            Leave::Bind(SocketAddr::new(ip, 0))
        }
        Some(b) if crate::net::local_addr::folded(b.ip()) == from => Leave::AsIs,
        _ => Leave::Replace,
    }
}

/// Pure decision on a raw sockaddr (tested without a kernel).
pub fn judge(route: &Route, sa: &[u8]) -> Verdict {
    if sa.len() < 2 {
        return Verdict::Refuse(libc::EINVAL);
    }
    let family = i32::from(u16::from_ne_bytes([sa[0], sa[1]]));
    let dest = match (family, inet_addr(sa)) {
        (libc::AF_UNSPEC, _) => return Verdict::Kernel,
        (libc::AF_UNIX, _) if route.unix == UnixRule::All => return Verdict::Kernel,
        (libc::AF_UNIX, _) if route.unix == UnixRule::Listed => return Verdict::Unix,
        (_, Some(dest)) => dest,
        _ if route.namespaced => return Verdict::Kernel,
        _ => return Verdict::Refuse(libc::EACCES),
    };
    let v6 = family == libc::AF_INET6;
    // v4-mapped addresses are the IPv4 address they carry
    let ip = crate::net::local_addr::folded(dest.ip());
    let local = crate::net::local_addr::is_local(ip);
    let transparent = route.transparent.is_some();
    if route.namespaced {
        // nothing but the namespace's own lo is reachable by the kernel's routes
        return if local || !transparent { Verdict::Kernel } else { Verdict::Transparent { v6, dest } };
    }
    let proxy_port = dest.port() == route.port || dest.port() == route.socks_port;
    if proxy_port && (ip == std::net::IpAddr::V4(Ipv4Addr::LOCALHOST) || ip == Ipv6Addr::LOCALHOST) {
        return Verdict::Proxy { v6, port: dest.port() };
    }
    match (transparent, local, dest.port()) {
        // DNS to any server, the host's own stub resolver included, is srt's
        (true, _, 53) | (true, false, _) => Verdict::Transparent { v6, dest },
        // the host's loopback: only the command's own listeners there
        (_, true, _) => Verdict::Local { v6, dest },
        _ => Verdict::Refuse(libc::EACCES),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v4(ip: [u8; 4], port: u16) -> Vec<u8> {
        let mut v = (libc::AF_INET as u16).to_ne_bytes().to_vec();
        v.extend(port.to_be_bytes());
        v.extend(ip);
        v.extend([0u8; 8]);
        v
    }

    fn v6(ip: Ipv6Addr, port: u16) -> Vec<u8> {
        let mut v = (libc::AF_INET6 as u16).to_ne_bytes().to_vec();
        v.extend(port.to_be_bytes());
        v.extend([0u8; 4]);
        v.extend(ip.octets());
        v.extend([0u8; 4]);
        v
    }

    const LOCAL: crate::net::local_addr::Local =
        crate::net::local_addr::Local { addr: Ipv4Addr::new(127, 9, 8, 7), as_asked: false };

    fn route(port: u16, socks_port: u16, transparent: Option<[u8; 16]>, namespaced: bool) -> Route {
        Route {
            port,
            socks_port,
            unix: UnixRule::None,
            local: LOCAL,
            transparent,
            namespaced,
            landlock_tcp: !namespaced,
            shared_proxy_from: None,
        }
    }

    #[test]
    fn connects_to_a_shared_proxy_leave_from_the_runs_address_only() {
        let from = Ipv4Addr::new(127, 9, 8, 7);
        assert_eq!(leave_for_proxy(from, false, Some(dest("0.0.0.0:0"))), Leave::Bind(dest("127.9.8.7:0")));
        assert_eq!(leave_for_proxy(from, true, Some(dest("[::]:0"))), Leave::Bind(dest("[::ffff:127.9.8.7]:0")));
        assert_eq!(leave_for_proxy(from, false, Some(dest("127.9.8.7:4321"))), Leave::AsIs);
        assert_eq!(leave_for_proxy(from, true, Some(dest("[::ffff:127.9.8.7]:4321"))), Leave::AsIs);
        assert_eq!(leave_for_proxy(from, false, Some(dest("127.9.8.7:0"))), Leave::AsIs, "IP_BIND_ADDRESS_NO_PORT");
        // bound by the command elsewhere: the pod's own 127.0.0.1, an address it made up,
        // the run's second address, the wildcard address on a port of its choice
        for bound in ["127.0.0.1:4321", "127.0.0.2:4321", "127.9.8.8:4321", "[::ffff:127.9.8.8]:1", "0.0.0.0:4321"] {
            assert_eq!(leave_for_proxy(from, false, Some(dest(bound))), Leave::Replace, "{bound}");
        }
        assert_eq!(leave_for_proxy(from, false, None), Leave::Replace, "unknown");
    }

    #[test]
    fn the_kernel_rereads_an_address_only_where_no_unix_path_is_judged() {
        for namespaced in [false, true] {
            let r = route(4000, 4000, None, namespaced);
            assert!(kernel_holds_any_address(&r), "no unix sockets: nothing a reread could reach");
            assert!(kernel_holds_any_address(&Route { unix: UnixRule::All, ..r }));
            assert!(!kernel_holds_any_address(&Route { unix: UnixRule::Listed, ..r }), "a reread could name any path");
        }
        // --allow-weaker without Landlock's TCP rules: a reread could name any TCP address
        let weaker = Route { landlock_tcp: false, ..route(4000, 4000, None, false) };
        assert!(!kernel_holds_any_address(&weaker));
        assert!(!kernel_holds_any_address(&Route { unix: UnixRule::All, ..weaker }));
        assert!(kernel_holds_any_address(&Route { landlock_tcp: false, ..route(4000, 4000, None, true) }));
    }

    #[test]
    fn only_the_proxy_and_the_commands_own_loopback_listeners_are_reachable() {
        let r = route(4000, 4000, None, false);
        assert_eq!(judge(&r, &v4([127, 0, 0, 1], 4000)), Verdict::Proxy { v6: false, port: 4000 });
        assert_eq!(judge(&r, &v6(Ipv6Addr::LOCALHOST, 4000)), Verdict::Proxy { v6: true, port: 4000 });
        assert_eq!(judge(&r, &v6(Ipv4Addr::LOCALHOST.to_ipv6_mapped(), 4000)), Verdict::Proxy { v6: true, port: 4000 });
        let two = Route { socks_port: 4001, ..r };
        assert_eq!(judge(&two, &v4([127, 0, 0, 1], 4001)), Verdict::Proxy { v6: false, port: 4001 });
        // any other loopback or wildcard address: only where the command's own listeners are
        let local = |d: &str| Verdict::Local { v6: false, dest: dest(d) };
        assert_eq!(judge(&two, &v4([127, 0, 0, 1], 4002)), local("127.0.0.1:4002"));
        assert_eq!(judge(&r, &v4([127, 0, 0, 1], 4001)), local("127.0.0.1:4001"), "other port");
        assert_eq!(judge(&r, &v4([127, 0, 0, 2], 4000)), local("127.0.0.2:4000"), "other address, proxy port");
        assert_eq!(judge(&r, &v4([0, 0, 0, 0], 4000)), local("0.0.0.0:4000"));
        assert_eq!(
            judge(&r, &v6(Ipv4Addr::new(127, 0, 0, 2).to_ipv6_mapped(), 80)),
            Verdict::Local { v6: true, dest: dest("[::ffff:127.0.0.2]:80") }
        );
        assert_eq!(judge(&r, &v4([10, 0, 0, 1], 4000)), Verdict::Refuse(libc::EACCES), "other host on the proxy port");
        assert_eq!(judge(&r, &[1, 0]), Verdict::Refuse(libc::EACCES), "AF_UNIX unless allowed");
        let unix = (libc::AF_UNIX as u16).to_ne_bytes();
        assert_eq!(judge(&Route { unix: UnixRule::All, ..r }, &unix), Verdict::Kernel);
        assert_eq!(judge(&Route { unix: UnixRule::Listed, ..r }, &unix), Verdict::Unix);
        assert_eq!(judge(&Route { unix: UnixRule::Listed, namespaced: true, ..r }, &unix), Verdict::Unix);
        assert_eq!(judge(&r, &(libc::AF_UNSPEC as u16).to_ne_bytes()), Verdict::Kernel);
        assert_eq!(judge(&r, &[2]), Verdict::Refuse(libc::EINVAL));
        assert_eq!(judge(&r, &v4([127, 0, 0, 1], 4000)[..6]), Verdict::Refuse(libc::EACCES), "truncated");
        assert_eq!(judge(&r, &v4([1, 2, 3, 4], 53)), Verdict::Refuse(libc::EACCES), "no DNS without transparent mode");
    }

    fn dest(s: &str) -> SocketAddr {
        s.parse().unwrap()
    }

    #[test]
    fn transparent_mode_takes_other_addresses_to_the_proxy_but_never_host_loopback() {
        let r = route(4000, 4000, Some([1; 16]), false);
        assert_eq!(judge(&r, &v4([127, 0, 0, 1], 4000)), Verdict::Proxy { v6: false, port: 4000 });
        assert_eq!(
            judge(&r, &v4([198, 18, 0, 2], 443)),
            Verdict::Transparent { v6: false, dest: dest("198.18.0.2:443") }
        );
        assert_eq!(
            judge(&r, &v6("2001:db8::1".parse().unwrap(), 80)),
            Verdict::Transparent { v6: true, dest: dest("[2001:db8::1]:80") }
        );
        // DNS to any server, the host's loopback stub included, goes to srt's own
        assert_eq!(
            judge(&r, &v4([127, 0, 0, 53], 53)),
            Verdict::Transparent { v6: false, dest: dest("127.0.0.53:53") }
        );
        assert_eq!(judge(&r, &v4([8, 8, 8, 8], 53)), Verdict::Transparent { v6: false, dest: dest("8.8.8.8:53") });
        // the host's loopback is judged as a local address (the command's own listeners
        // only), whatever the spelling
        for sa in [
            v4([127, 0, 0, 1], 8080),
            v4([127, 9, 9, 9], 443),
            v4([0, 0, 0, 0], 443),
            v6(Ipv6Addr::LOCALHOST, 8080),
            v6(Ipv6Addr::UNSPECIFIED, 443),
            v6(Ipv4Addr::LOCALHOST.to_ipv6_mapped(), 8080),
        ] {
            assert!(matches!(judge(&r, &sa), Verdict::Local { .. }), "{sa:?}");
        }
        assert_eq!(judge(&r, &[1, 0]), Verdict::Refuse(libc::EACCES), "AF_UNIX");
        assert_eq!(judge(&r, &[16, 0, 0, 0]), Verdict::Refuse(libc::EACCES), "netlink");
    }

    #[test]
    fn namespace_mode_leaves_its_own_loopback_to_the_kernel() {
        let r = route(3128, 1080, Some([1; 16]), true);
        assert_eq!(judge(&r, &v4([127, 0, 0, 1], 8080)), Verdict::Kernel);
        assert_eq!(judge(&r, &v6(Ipv6Addr::LOCALHOST, 53)), Verdict::Kernel);
        assert_eq!(judge(&r, &v4([10, 1, 2, 3], 443)), Verdict::Transparent { v6: false, dest: dest("10.1.2.3:443") });
        assert_eq!(judge(&Route { transparent: None, ..r }, &v4([10, 1, 2, 3], 443)), Verdict::Kernel);
    }
}

//! Landlock-mode networking: the command's only way out is the embedded proxy. srt binds
//! the proxy on a fresh loopback port with a fresh token before starting the command,
//! the seccomp filter allows only TCP stream sockets and sends every `connect()` to the
//! supervisor, and the supervisor connects the command's own socket (taken with
//! `pidfd_getfd`) to the proxy's address, never to an address read from the command's
//! memory. Every other destination is refused.

pub mod local_addr;
pub mod sock_diag;

/// The proxy's ports inside namespace mode's network namespace.
pub mod inside {
    pub const HTTP_PORT: u16 = 3128;
    pub const SOCKS_PORT: u16 = 1080;
    /// Transparent mode's DNS, UDP and TCP, on 127.0.0.1 inside.
    pub const DNS_PORT: u16 = 53;
}

use std::net::{Ipv4Addr, Ipv6Addr, SocketAddr, TcpListener};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

use settings_schema::Settings;
use srt_proxy::{log::Log, resolve::Resolver, Limits, Listener, Policy, Shared};

use crate::error::LaunchError;

/// The embedded proxy, bound before the command starts.
pub struct Net {
    /// Our own loopback listener (landlock mode with no existing proxy), else `None`.
    pub listener: Option<TcpListener>,
    /// Where the command finds the proxy (the same port for both in landlock mode).
    pub port: u16,
    pub socks_port: u16,
    pub token: String,
    pub policy: Policy,
    pub unix: UnixRule,
    /// Landlock mode's local servers: the run's own loopback address.
    pub local: crate::net::local_addr::Local,
    pub resolver: Resolver,
    /// `network.httpProxyPort`/`socksProxyPort`: an existing proxy (a pod sidecar) on
    /// these loopback ports takes the traffic; srt starts none of its own.
    pub external: Option<(u16, u16)>,
    /// Transparent mode: the key of the supervisor's preambles (never in the command's
    /// environment), `None` when off.
    pub transparent: Option<[u8; srt_proxy::transparent::KEY_LEN]>,
    /// The namespace's own proxy ports take requests without the token.
    pub namespaced: bool,
}

/// Transparent mode is on unless the settings turn it off; it needs srt's own proxy (an
/// existing proxy on the settings' ports cannot map srt's synthetic addresses).
pub fn transparent_wanted(s: &Settings) -> bool {
    s.network.transparent.unwrap_or(true) && s.network.http_proxy_port.is_none() && s.network.socks_proxy_port.is_none()
}

impl Net {
    pub fn prepare(s: &Settings, overrides: &[String], own_port: bool) -> Result<Net, LaunchError> {
        let policy = Policy::from_settings(s).map_err(LaunchError::Proxy)?;
        let mut resolver = Resolver::new(std::time::Duration::from_secs(5));
        for r in overrides {
            resolver.add_override(r).map_err(LaunchError::Proxy)?;
        }
        let listener = if own_port {
            let l = TcpListener::bind((Ipv4Addr::LOCALHOST, 0))
                .map_err(|e| LaunchError::Proxy(format!("binding the proxy: {e}")))?;
            l.set_nonblocking(true)?;
            Some(l)
        } else {
            None
        };
        // namespace mode and an existing proxy set the ports the command uses
        let port = listener.as_ref().map(|l| l.local_addr()).transpose()?.map_or(0, |a| a.port());
        Ok(Net {
            listener,
            port,
            socks_port: port,
            token: token()?,
            policy,
            unix: UnixRule::from_settings(s),
            local: crate::net::local_addr::Local::for_run(
                random("local address")?,
                s.network.allow_local_binding.unwrap_or(false),
            ),
            resolver,
            external: match (s.network.http_proxy_port, s.network.socks_proxy_port) {
                (Some(h), Some(x)) => Some((h, x)),
                (Some(h), None) => Some((h, h)),
                (None, Some(x)) => Some((x, x)),
                (None, None) => None,
            },
            transparent: if transparent_wanted(s) { Some(key()?) } else { None },
            namespaced: false,
        })
    }

    /// Variables srt sets so clients find the proxy (reference/srt.md §2.5).
    pub fn env(&self) -> Vec<(String, String)> {
        let (t, p) = (&self.token, self.port);
        // an existing proxy does not know our token (srt drops it too)
        let cred = if self.external.is_some() { String::new() } else { format!("srt:{t}@") };
        let http = format!("http://{cred}127.0.0.1:{p}");
        let socks = format!("socks5h://{cred}127.0.0.1:{}", self.socks_port);
        let mut no_proxy = "localhost,127.0.0.1,::1,169.254.0.0/16,10.0.0.0/8,172.16.0.0/12,192.168.0.0/16".to_string();
        if !self.namespaced {
            // where landlock mode puts the command's own servers: clients that build URLs
            // from a listener's address must not send those to the proxy
            no_proxy.push_str(&format!(",{},{}", self.local.addr, self.local.v6only_addr()));
        }
        let mut v: Vec<(String, String)> = [
            "HTTP_PROXY",
            "HTTPS_PROXY",
            "http_proxy",
            "https_proxy",
            "ALL_PROXY",
            "all_proxy",
            "GRPC_PROXY",
            "grpc_proxy",
            "DOCKER_HTTP_PROXY",
            "DOCKER_HTTPS_PROXY",
        ]
        .iter()
        .map(|k| (k.to_string(), http.clone()))
        .collect();
        v.extend([
            ("FTP_PROXY".into(), socks.clone()),
            ("ftp_proxy".into(), socks),
            ("RSYNC_PROXY".into(), format!("127.0.0.1:{}", self.socks_port)),
            ("NO_PROXY".into(), no_proxy.clone()),
            ("no_proxy".into(), no_proxy),
            ("GIT_CONFIG_PARAMETERS".into(), "'http.proxyAuthMethod=basic'".into()),
            (
                "GIT_SSH_COMMAND".into(),
                format!("ssh -o ControlMaster=no -o ControlPath=none -o ProxyCommand='socat - PROXY:127.0.0.1:%h:%p,proxyport={p},proxyauth=srt:{t}'"),
            ),
            ("CLOUDSDK_PROXY_TYPE".into(), "http".into()),
            ("CLOUDSDK_PROXY_ADDRESS".into(), "127.0.0.1".into()),
            ("CLOUDSDK_PROXY_PORT".into(), p.to_string()),
            ("CLOUDSDK_PROXY_USERNAME".into(), "srt".into()),
            ("CLOUDSDK_PROXY_PASSWORD".into(), t.clone()),
        ]);
        if self.transparent.is_some() && !self.namespaced {
            // landlock mode cannot give the command UDP sockets that reach only srt: glibc's
            // resolver asks over TCP instead, which the supervisor takes to srt's DNS
            v.push(("RES_OPTIONS".into(), "use-vc".into()));
        }
        v
    }

    pub fn route(&self) -> Route {
        Route {
            port: self.port,
            socks_port: self.socks_port,
            unix: self.unix,
            local: self.local,
            transparent: self.transparent,
            namespaced: self.namespaced,
        }
    }

    /// Serves the proxy on its own thread (the command already runs; srt stays its parent),
    /// on our own loopback listener or, in namespace mode, on the listeners made inside
    /// the command's network namespace.
    /// Returns the proxy's state, to ask at exit which hosts it refused (`None` with an
    /// existing proxy).
    pub fn start(
        self,
        inside: Vec<OwnedFd>,
        debug: bool,
        control_fd: Option<i32>,
    ) -> Result<Option<std::sync::Arc<Shared>>, LaunchError> {
        let inside = Inside::sort(inside);
        if let Some(ports) = self.external {
            if control_fd.is_some() {
                crate::warn!("--control-fd has no effect: the existing proxy on the settings' ports decides");
            }
            relay_to_external(inside.proxy, ports)?;
            return Ok(None);
        }
        let log = if debug { Log::stderr() } else { Log::off() };
        // inside the namespace only the command reaches the ports: Java's and others'
        // clients that cannot send proxy credentials work there without the token
        let token = if self.namespaced { None } else { Some(self.token) };
        let mut shared = Shared::build(self.policy, token, self.resolver, Limits::default(), log);
        shared.transparent_key = self.transparent;
        shared.quiet_suffixes = search_domains(&std::fs::read_to_string("/etc/resolv.conf").unwrap_or_default());
        let shared = std::sync::Arc::new(shared);
        if let Some(fd) = control_fd {
            srt_proxy::reload::watch_control_fd(fd, shared.clone())
                .map_err(|e| LaunchError::Proxy(format!("--control-fd {fd} is not usable: {e}")))?;
        }
        let listeners: Vec<TcpListener> =
            if inside.proxy.is_empty() { self.listener.into_iter().collect() } else { inside.proxy };
        let (dns_tcp, dns_udp) = (inside.dns_tcp, inside.dns_udp);
        let state = shared.clone();
        std::thread::Builder::new()
            .name("proxy".into())
            .spawn(move || {
                let Ok(rt) = tokio::runtime::Builder::new_current_thread().enable_all().build() else {
                    crate::warn!("the proxy could not start; the command has no network");
                    return;
                };
                rt.block_on(async move {
                    let mut tasks = Vec::new();
                    for l in listeners {
                        let _ = l.set_nonblocking(true);
                        match tokio::net::TcpListener::from_std(l) {
                            Ok(l) => tasks.push(tokio::spawn(srt_proxy::serve(Listener::Tcp(l), shared.clone()))),
                            Err(e) => crate::warn!("the proxy could not start ({e}); the command has no network"),
                        }
                    }
                    let dns_failed = |e: std::io::Error| {
                        crate::warn!("srt's DNS could not start ({e}); names will not resolve for the command")
                    };
                    for l in dns_tcp {
                        let _ = l.set_nonblocking(true);
                        match tokio::net::TcpListener::from_std(l) {
                            Ok(l) => {
                                let task = srt_proxy::transparent::serve_dns_listener(l, shared.clone());
                                tasks.push(tokio::spawn(async move {
                                    task.await;
                                    Ok(())
                                }));
                            }
                            Err(e) => dns_failed(e),
                        }
                    }
                    for u in dns_udp {
                        let _ = u.set_nonblocking(true);
                        match tokio::net::UdpSocket::from_std(u) {
                            Ok(u) => {
                                let task = srt_proxy::transparent::serve_udp(u, shared.clone());
                                tasks.push(tokio::spawn(async move {
                                    task.await;
                                    Ok(())
                                }));
                            }
                            Err(e) => dns_failed(e),
                        }
                    }
                    for t in tasks {
                        let _ = t.await;
                    }
                });
            })
            .map_err(|e| LaunchError::Proxy(format!("starting the proxy thread: {e}")))?;
        Ok(Some(state))
    }
}

/// The sockets namespace mode's init made inside the command's network namespace.
#[derive(Default)]
struct Inside {
    proxy: Vec<TcpListener>,
    dns_tcp: Vec<TcpListener>,
    dns_udp: Vec<std::net::UdpSocket>,
}

impl Inside {
    fn sort(fds: Vec<OwnedFd>) -> Inside {
        let mut out = Inside::default();
        for fd in fds {
            if socket_option(&fd, libc::SO_TYPE) == libc::SOCK_DGRAM {
                out.dns_udp.push(std::net::UdpSocket::from(fd));
                continue;
            }
            let l = TcpListener::from(fd);
            if l.local_addr().is_ok_and(|a| a.port() == crate::net::inside::DNS_PORT) {
                out.dns_tcp.push(l);
            } else {
                out.proxy.push(l);
            }
        }
        out
    }
}

/// The `search` (or `domain`) suffixes of a resolv.conf.
fn search_domains(text: &str) -> Vec<String> {
    text.lines()
        .filter_map(|l| l.strip_prefix("search").or_else(|| l.strip_prefix("domain")))
        .filter(|rest| rest.starts_with([' ', '\t']))
        .flat_map(|rest| rest.split_whitespace())
        .map(|d| d.trim_end_matches('.').to_ascii_lowercase())
        .filter(|d| !d.is_empty())
        .collect()
}

/// What namespace mode's `/etc/resolv.conf` says: srt's own DNS on the sandbox's `lo`.
pub const RESOLV_CONF: &str = "# srt: DNS answered by srt's stub on the sandbox's loopback (transparent mode)\nnameserver 127.0.0.1\noptions timeout:2 attempts:2\n";

/// At exit, when namespace mode refused direct connections for want of `pidfd_getfd`.
pub const NO_GETFD_HINT: &str = "srt: network: direct connections (transparent mode) were refused: namespace mode \
    needs pidfd_getfd for them, which this environment's seccomp profile refuses; use the proxy variables srt sets \
    (HTTPS_PROXY, ...) or --network-mode landlock";

/// One line per host the proxy refused during the run, for the user at exit: a tool that
/// reports only "403" or a DNS error then still says why.
pub fn hints(refused: &[srt_proxy::Refused]) -> Vec<String> {
    refused
        .iter()
        // reverse lookups of loopback addresses (a local server naming its own address, as
        // Python's http.server does) leak nothing and are no refusal worth reading
        .filter(|r| !(r.reason == "dns-not-allowed" && is_loopback_ptr(&r.host)))
        .map(|r| {
            let why = match r.reason {
                "blocked-by-allowlist" => "not in allowedDomains",
                "blocked-by-denylist" => "in deniedDomains",
                "blocked-by-resolved-address" => "it resolves to an address srt never dials",
                "sni-mismatch" => "the TLS server name or HTTP Host asked for another host",
                "sni-missing" => "TLS without a server name; network.allowTlsWithoutSni allows it",
                "ech" => "Encrypted Client Hello hides the server name; network.allowTlsWithoutSni allows it",
                "malformed-first-flight" => {
                    "the first bytes were TLS or HTTP spelled so that servers could read another host in them \
                     (a record before the ClientHello, a malformed or over-long request)"
                }
                "other-protocol" => {
                    "neither TLS nor HTTP (SSH, a database, git://): these name no host srt can check; \
                     network.allowOtherProtocols allows them to the hosts it lists"
                }
                "first-flight-incomplete" => "the first bytes stopped before a whole TLS hello or HTTP request head",
                "first-flight-timeout" => "the client sent nothing within the first-flight timeout",
                "too-many-tunnels" | "too-many-tunnels-per-client" | "too-many-pending-tunnels" => {
                    "too many tunnels open at once"
                }
                "dns-not-allowed" => return format!("srt: network: refused name {} (not in allowedDomains)", r.host),
                "unknown-synthetic-address" => "an address srt's DNS never handed out",
                other => other,
            };
            format!("srt: network: refused {}:{} ({why})", r.host, r.port)
        })
        .collect()
}

/// A reverse-lookup name for a loopback address (`*.127.in-addr.arpa`, `::1`'s `ip6.arpa`).
fn is_loopback_ptr(name: &str) -> bool {
    let n = name.trim_end_matches('.').to_ascii_lowercase();
    n.ends_with(".127.in-addr.arpa") || n == format!("1{}.ip6.arpa", ".0".repeat(31))
}

/// Namespace mode with an existing proxy: each port inside is relayed to the proxy's port
/// on the host's loopback (3128 -> HTTP port, 1080 -> SOCKS port). Landlock mode needs no
/// relay: the supervisor connects straight to those ports.
fn relay_to_external(inside: Vec<TcpListener>, (http, socks): (u16, u16)) -> Result<(), LaunchError> {
    if inside.is_empty() {
        return Ok(());
    }
    std::thread::Builder::new()
        .name("proxy-relay".into())
        .spawn(move || {
            let Ok(rt) = tokio::runtime::Builder::new_current_thread().enable_all().build() else { return };
            rt.block_on(async move {
                let mut tasks = Vec::new();
                for l in inside {
                    let inner_port = l.local_addr().map(|a| a.port()).unwrap_or(0);
                    let to = if inner_port == crate::net::inside::SOCKS_PORT { socks } else { http };
                    let _ = l.set_nonblocking(true);
                    let Ok(l) = tokio::net::TcpListener::from_std(l) else { continue };
                    tasks.push(tokio::spawn(async move {
                        while let Ok((client, _)) = l.accept().await {
                            tokio::spawn(async move {
                                if let Ok(up) = tokio::net::TcpStream::connect((Ipv4Addr::LOCALHOST, to)).await {
                                    let _ =
                                        srt_proxy::tunnel::relay(&client, &up, std::time::Duration::from_secs(3600))
                                            .await;
                                }
                            });
                        }
                    }));
                }
                for t in tasks {
                    let _ = t.await;
                }
            });
        })
        .map_err(|e| LaunchError::Proxy(format!("starting the relay thread: {e}")))?;
    Ok(())
}

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

/// A copy of socket `fd` of process `pid` (same open file description).
pub fn take_socket(pid: u32, fd: i32) -> Result<OwnedFd, i32> {
    let tgid = std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|s| s.lines().find_map(|l| l.strip_prefix("Tgid:")).and_then(|v| v.trim().parse::<i32>().ok()))
        .ok_or(libc::ESRCH)?;
    // SAFETY: pidfd_open and pidfd_getfd return fresh descriptors we own.
    unsafe {
        let pidfd = libc::syscall(libc::SYS_pidfd_open, tgid, 0);
        if pidfd < 0 {
            return Err(last_errno());
        }
        let pidfd = OwnedFd::from_raw_fd(pidfd as i32);
        let sock = libc::syscall(libc::SYS_pidfd_getfd, pidfd.as_raw_fd(), fd, 0);
        if sock < 0 {
            return Err(last_errno());
        }
        Ok(OwnedFd::from_raw_fd(sock as i32))
    }
}

/// Connects `sock` to the proxy; returns 0 or the errno the command should see.
pub fn connect_to_proxy(sock: &OwnedFd, port: u16, v6: bool) -> i32 {
    let addr = if v6 {
        SocketAddr::new(Ipv4Addr::LOCALHOST.to_ipv6_mapped().into(), port)
    } else {
        SocketAddr::new(Ipv4Addr::LOCALHOST.into(), port)
    };
    connect_to(sock, &addr)
}

/// Connects `sock` to `addr`, an address of srt's own; returns 0 or the errno.
pub fn connect_to(sock: &impl AsRawFd, addr: &SocketAddr) -> i32 {
    let (storage, len) = sockaddr(addr);
    // SAFETY: connect with a sockaddr we built, on a descriptor we own.
    let r = unsafe { libc::connect(sock.as_raw_fd(), (&storage as *const libc::sockaddr_storage).cast(), len) };
    if r < 0 {
        last_errno()
    } else {
        0
    }
}

pub fn sockaddr(a: &SocketAddr) -> (libc::sockaddr_storage, libc::socklen_t) {
    // SAFETY: an all-zero sockaddr_storage is valid; we fill one variant below.
    let mut st: libc::sockaddr_storage = unsafe { std::mem::zeroed() };
    match a {
        SocketAddr::V4(v4) => {
            let sin = libc::sockaddr_in {
                sin_family: libc::AF_INET as libc::sa_family_t,
                sin_port: v4.port().to_be(),
                sin_addr: libc::in_addr { s_addr: u32::from(*v4.ip()).to_be() },
                sin_zero: [0; 8],
            };
            // SAFETY: sockaddr_in fits in sockaddr_storage.
            unsafe { std::ptr::write((&mut st as *mut libc::sockaddr_storage).cast(), sin) };
            (st, std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t)
        }
        SocketAddr::V6(v6) => {
            let sin6 = libc::sockaddr_in6 {
                sin6_family: libc::AF_INET6 as libc::sa_family_t,
                sin6_port: v6.port().to_be(),
                sin6_flowinfo: 0,
                sin6_addr: libc::in6_addr { s6_addr: v6.ip().octets() },
                sin6_scope_id: 0,
            };
            // SAFETY: sockaddr_in6 fits in sockaddr_storage.
            unsafe { std::ptr::write((&mut st as *mut libc::sockaddr_storage).cast(), sin6) };
            (st, std::mem::size_of::<libc::sockaddr_in6>() as libc::socklen_t)
        }
    }
}

fn last_errno() -> i32 {
    std::io::Error::last_os_error().raw_os_error().unwrap_or(libc::EIO)
}

/// An integer SOL_SOCKET option (SO_TYPE, SO_ERROR); 0 if it cannot be read.
pub fn socket_option(sock: &impl AsRawFd, name: libc::c_int) -> libc::c_int {
    let mut v: libc::c_int = 0;
    let mut len = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
    // SAFETY: getsockopt into a local int of the given length.
    unsafe {
        libc::getsockopt(sock.as_raw_fd(), libc::SOL_SOCKET, name, (&mut v as *mut libc::c_int).cast(), &mut len)
    };
    v
}

/// N bytes from the kernel's random source, for the secrets of a run.
fn random<const N: usize>(what: &str) -> Result<[u8; N], LaunchError> {
    let mut b = [0u8; N];
    // SAFETY: getrandom fills the local buffer.
    let n = unsafe { libc::getrandom(b.as_mut_ptr().cast(), b.len(), 0) };
    if n != b.len() as isize {
        return Err(LaunchError::Proxy(format!("no randomness for the {what}")));
    }
    Ok(b)
}

/// The transparent-mode preamble key.
fn key() -> Result<[u8; srt_proxy::transparent::KEY_LEN], LaunchError> {
    random("transparent-mode key")
}

/// Connects `sock` to the proxy and writes the preamble naming `dest` before the command
/// gets the socket back; returns 0 or the errno the command should see.
pub fn connect_transparent(sock: &OwnedFd, port: u16, v6: bool, preamble: &[u8]) -> i32 {
    match connect_to_proxy(sock, port, v6) {
        0 => {}
        libc::EINPROGRESS => {
            // the command's socket is non-blocking: loopback completes at once
            let mut p = libc::pollfd { fd: sock.as_raw_fd(), events: libc::POLLOUT, revents: 0 };
            // SAFETY: poll on one live descriptor.
            if unsafe { libc::poll(&mut p, 1, 2000) } != 1 {
                return libc::ETIMEDOUT;
            }
            let err = socket_option(sock, libc::SO_ERROR);
            if err != 0 {
                return err;
            }
        }
        e => return e,
    }
    // SAFETY: send from a live buffer on a connected socket with an empty send buffer.
    let n = unsafe { libc::send(sock.as_raw_fd(), preamble.as_ptr().cast(), preamble.len(), libc::MSG_NOSIGNAL) };
    if n == preamble.len() as isize {
        0
    } else {
        libc::EIO
    }
}

/// 16 random bytes, hex: the per-run proxy token.
fn token() -> Result<String, LaunchError> {
    Ok(random::<16>("proxy token")?.iter().map(|x| format!("{x:02x}")).collect())
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
        Route { port, socks_port, unix: UnixRule::None, local: LOCAL, transparent, namespaced }
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

    #[test]
    fn every_variable_srt_sets_is_one_the_settings_cannot_set() {
        // settings-schema refuses `environment.set` of these names; a variable srt sets
        // that is missing there would be silently overridden instead
        let s = Settings::embedded_default();
        let mut net = Net::prepare(&s, &[], false).unwrap();
        for namespaced in [false, true] {
            net.namespaced = namespaced;
            for (k, _) in net.env() {
                assert!(settings_schema::environment::SRT_OWN.contains(&k.as_str()), "{k} is missing from SRT_OWN");
            }
        }
    }

    #[test]
    fn loopback_reverse_lookups_are_not_reported() {
        let r = |host: &str, reason| srt_proxy::Refused { host: host.into(), port: 53, reason };
        let hints = hints(&[
            r("79.55.114.127.in-addr.arpa", "dns-not-allowed"),
            r(&format!("1{}.ip6.arpa", ".0".repeat(31)), "dns-not-allowed"),
            r("4.3.2.1.in-addr.arpa", "dns-not-allowed"),
            r("evil.test", "dns-not-allowed"),
        ]);
        assert_eq!(
            hints,
            [
                "srt: network: refused name 4.3.2.1.in-addr.arpa (not in allowedDomains)",
                "srt: network: refused name evil.test (not in allowedDomains)"
            ]
        );
    }

    #[test]
    fn search_domains_are_read_from_resolv_conf() {
        let text = "nameserver 10.96.0.10\nsearch default.svc.cluster.local svc.cluster.local\ndomain Example.COM.\nsearchx no\n";
        assert_eq!(search_domains(text), ["default.svc.cluster.local", "svc.cluster.local", "example.com"]);
    }
}

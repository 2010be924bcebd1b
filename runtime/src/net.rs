//! Landlock-mode networking: the command's only way out is the embedded proxy. srt binds
//! the proxy on a fresh loopback port with a fresh token before starting the command,
//! the seccomp filter allows only TCP stream sockets and sends every `connect()` to the
//! supervisor, and the supervisor connects the command's own socket (taken with
//! `pidfd_getfd`) to the proxy's address, never to an address read from the command's
//! memory. Every other destination is refused.

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
    pub allow_unix: bool,
    pub resolver: Resolver,
    /// `network.httpProxyPort`/`socksProxyPort`: an existing proxy (a pod sidecar) on
    /// these loopback ports takes the traffic; srt starts none of its own.
    pub external: Option<(u16, u16)>,
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
            allow_unix: s.network.allow_all_unix_sockets.unwrap_or(false),
            resolver,
            external: match (s.network.http_proxy_port, s.network.socks_proxy_port) {
                (Some(h), Some(x)) => Some((h, x)),
                (Some(h), None) => Some((h, h)),
                (None, Some(x)) => Some((x, x)),
                (None, None) => None,
            },
        })
    }

    /// Variables srt sets so clients find the proxy (reference/srt.md §2.5).
    pub fn env(&self) -> Vec<(String, String)> {
        let (t, p) = (&self.token, self.port);
        // an existing proxy does not know our token (srt drops it too)
        let cred = if self.external.is_some() { String::new() } else { format!("srt:{t}@") };
        let http = format!("http://{cred}127.0.0.1:{p}");
        let socks = format!("socks5h://{cred}127.0.0.1:{}", self.socks_port);
        let no_proxy = "localhost,127.0.0.1,::1,169.254.0.0/16,10.0.0.0/8,172.16.0.0/12,192.168.0.0/16";
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
            ("NO_PROXY".into(), no_proxy.into()),
            ("no_proxy".into(), no_proxy.into()),
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
        v
    }

    pub fn route(&self) -> Route {
        Route { port: self.port, socks_port: self.socks_port, allow_unix: self.allow_unix }
    }

    /// Serves the proxy on its own thread (the command already runs; srt stays its parent),
    /// on our own loopback listener or, in namespace mode, on the listeners made inside
    /// the command's network namespace.
    /// Returns the proxy's state, to ask at exit which hosts it refused (`None` with an
    /// existing proxy).
    pub fn start(
        self,
        inside: Vec<TcpListener>,
        debug: bool,
        control_fd: Option<i32>,
    ) -> Result<Option<std::sync::Arc<Shared>>, LaunchError> {
        if let Some(ports) = self.external {
            if control_fd.is_some() {
                crate::warn!("--control-fd has no effect: the existing proxy on the settings' ports decides");
            }
            relay_to_external(inside, ports)?;
            return Ok(None);
        }
        let log = if debug { Log::stderr() } else { Log::off() };
        let shared = Shared::new(self.policy, Some(self.token), self.resolver, Limits::default(), log);
        if let Some(fd) = control_fd {
            srt_proxy::reload::watch_control_fd(fd, shared.clone())
                .map_err(|e| LaunchError::Proxy(format!("--control-fd {fd} is not usable: {e}")))?;
        }
        let listeners: Vec<TcpListener> = if inside.is_empty() { self.listener.into_iter().collect() } else { inside };
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
                    for t in tasks {
                        let _ = t.await;
                    }
                });
            })
            .map_err(|e| LaunchError::Proxy(format!("starting the proxy thread: {e}")))?;
        Ok(Some(state))
    }
}

/// One line per host the proxy refused during the run, for the user at exit: a tool that
/// reports only "403" or a DNS error then still says why.
pub fn hints(refused: &[srt_proxy::Refused]) -> Vec<String> {
    refused
        .iter()
        .map(|r| {
            let why = match r.reason {
                "blocked-by-allowlist" => "not in allowedDomains",
                "blocked-by-denylist" => "in deniedDomains",
                "blocked-by-resolved-address" => "it resolves to an address srt never dials",
                "sni-mismatch" => "the TLS server name or HTTP Host asked for another host",
                "sni-missing" => "TLS without a server name; network.allowTlsWithoutSni allows it",
                "ech" => "Encrypted Client Hello hides the server name; network.allowTlsWithoutSni allows it",
                "malformed-first-flight" => "the first bytes were neither clear TLS nor HTTP",
                other => other,
            };
            format!("srt: network: refused {}:{} ({why})", r.host, r.port)
        })
        .collect()
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
                    let to = if inner_port == crate::namespace::SOCKS_PORT { socks } else { http };
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
    pub allow_unix: bool,
}

/// Where a `connect()` may go, decided from the address the command passed.
#[derive(Debug, PartialEq, Eq)]
pub enum Verdict {
    /// To the proxy: connect the command's socket to our own copy of the proxy address.
    Proxy {
        v6: bool,
        port: u16,
    },
    /// Harmless (AF_UNSPEC disconnect, allowed AF_UNIX): let the kernel do it.
    Kernel,
    Refuse(i32),
}

/// Pure decision on a raw sockaddr (tested without a kernel).
pub fn judge(route: &Route, sa: &[u8]) -> Verdict {
    if sa.len() < 2 {
        return Verdict::Refuse(libc::EINVAL);
    }
    let family = i32::from(u16::from_ne_bytes([sa[0], sa[1]]));
    let loopback_proxy = |ip: std::net::IpAddr, port: u16| {
        (port == route.port || port == route.socks_port)
            && match ip {
                std::net::IpAddr::V4(a) => a == Ipv4Addr::LOCALHOST,
                std::net::IpAddr::V6(a) => a == Ipv6Addr::LOCALHOST || a.to_ipv4_mapped() == Some(Ipv4Addr::LOCALHOST),
            }
    };
    match family {
        libc::AF_UNSPEC => Verdict::Kernel,
        libc::AF_UNIX if route.allow_unix => Verdict::Kernel,
        libc::AF_INET if sa.len() >= 8 => {
            let port = u16::from_be_bytes([sa[2], sa[3]]);
            let ip = Ipv4Addr::new(sa[4], sa[5], sa[6], sa[7]);
            if loopback_proxy(ip.into(), port) {
                Verdict::Proxy { v6: false, port }
            } else {
                Verdict::Refuse(libc::EACCES)
            }
        }
        libc::AF_INET6 if sa.len() >= 24 => {
            let port = u16::from_be_bytes([sa[2], sa[3]]);
            let mut b = [0u8; 16];
            b.copy_from_slice(&sa[8..24]);
            if loopback_proxy(Ipv6Addr::from(b).into(), port) {
                Verdict::Proxy { v6: true, port }
            } else {
                Verdict::Refuse(libc::EACCES)
            }
        }
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
    let (storage, len) = sockaddr(&addr);
    // SAFETY: connect with a sockaddr we built, on a descriptor we own.
    let r = unsafe { libc::connect(sock.as_raw_fd(), (&storage as *const libc::sockaddr_storage).cast(), len) };
    if r < 0 {
        last_errno()
    } else {
        0
    }
}

fn sockaddr(a: &SocketAddr) -> (libc::sockaddr_storage, libc::socklen_t) {
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

/// 16 random bytes, hex: the per-run proxy token.
fn token() -> Result<String, LaunchError> {
    let mut b = [0u8; 16];
    // SAFETY: getrandom fills the local buffer.
    let n = unsafe { libc::getrandom(b.as_mut_ptr().cast(), b.len(), 0) };
    if n != b.len() as isize {
        return Err(LaunchError::Proxy("no randomness for the proxy token".into()));
    }
    Ok(b.iter().map(|x| format!("{x:02x}")).collect())
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

    #[test]
    fn only_the_proxy_is_reachable() {
        let r = Route { port: 4000, socks_port: 4000, allow_unix: false };
        assert_eq!(judge(&r, &v4([127, 0, 0, 1], 4000)), Verdict::Proxy { v6: false, port: 4000 });
        assert_eq!(judge(&r, &v6(Ipv6Addr::LOCALHOST, 4000)), Verdict::Proxy { v6: true, port: 4000 });
        assert_eq!(judge(&r, &v6(Ipv4Addr::LOCALHOST.to_ipv6_mapped(), 4000)), Verdict::Proxy { v6: true, port: 4000 });
        let two = Route { port: 4000, socks_port: 4001, allow_unix: false };
        assert_eq!(judge(&two, &v4([127, 0, 0, 1], 4001)), Verdict::Proxy { v6: false, port: 4001 });
        assert_eq!(judge(&two, &v4([127, 0, 0, 1], 4002)), Verdict::Refuse(libc::EACCES));
        assert_eq!(judge(&r, &v4([127, 0, 0, 1], 4001)), Verdict::Refuse(libc::EACCES), "other port");
        assert_eq!(judge(&r, &v4([10, 0, 0, 1], 4000)), Verdict::Refuse(libc::EACCES), "other host on the proxy port");
        assert_eq!(judge(&r, &v4([127, 0, 0, 2], 4000)), Verdict::Refuse(libc::EACCES));
        assert_eq!(judge(&r, &v4([0, 0, 0, 0], 4000)), Verdict::Refuse(libc::EACCES));
        assert_eq!(judge(&r, &[1, 0]), Verdict::Refuse(libc::EACCES), "AF_UNIX unless allowed");
        assert_eq!(judge(&Route { allow_unix: true, ..r }, &(libc::AF_UNIX as u16).to_ne_bytes()), Verdict::Kernel);
        assert_eq!(judge(&r, &(libc::AF_UNSPEC as u16).to_ne_bytes()), Verdict::Kernel);
        assert_eq!(judge(&r, &[2]), Verdict::Refuse(libc::EINVAL));
        assert_eq!(judge(&r, &v4([127, 0, 0, 1], 4000)[..6]), Verdict::Refuse(libc::EACCES), "truncated");
    }
}

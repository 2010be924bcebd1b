//! The embedded proxy of a run: bound before the command starts, with a fresh port and
//! token, the proxy variables the command gets, namespace mode's listeners inside and their
//! relay to an external proxy, and the hints srt prints about refused hosts.

use std::net::{Ipv4Addr, TcpListener};
use std::os::fd::{AsRawFd, OwnedFd, RawFd};

use settings_schema::Settings;
use srt_proxy::{log::Log, resolve::Resolver, Limits, Listener, Policy, Shared};

use crate::error::LaunchError;

use super::route::{Route, UnixRule};
use super::socket::socket_option;

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
            landlock_tcp: false,
            shared_proxy_from: self.external.map(|_| self.local.addr),
        }
    }

    /// Readies the proxy (the command already runs; srt stays its parent) on our own
    /// loopback listener or, in namespace mode, on the listeners made inside the command's
    /// network namespace. Its thread starts when a client first reaches one of them
    /// ([`Proxy::wake_fds`], [`Proxy::serve`]): most commands never use the network, and a
    /// thread costs every run its start and, at srt's exit, a wake-up to end it. Until then
    /// connections wait in the listeners' backlogs.
    /// Returns `None` with an existing proxy.
    pub fn start(
        self,
        inside: Vec<OwnedFd>,
        debug: bool,
        control_fd: Option<i32>,
    ) -> Result<Option<Proxy>, LaunchError> {
        let inside = Inside::sort(inside);
        if let Some(ports) = self.external {
            if control_fd.is_some() {
                crate::warn!("--control-fd has no effect: the existing proxy on the settings' ports decides");
            }
            super::external::relay_to_external(inside.proxy, ports, self.local.addr)?;
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
        let pending = Pending { listeners, dns_tcp: inside.dns_tcp, dns_udp: inside.dns_udp, shared: shared.clone() };
        Ok(Some(Proxy { shared, pending: Some(pending) }))
    }
}

/// srt's own proxy for the run: its state (which hosts it refused) and, until a client
/// first reaches it, its listeners.
pub struct Proxy {
    shared: std::sync::Arc<Shared>,
    pending: Option<Pending>,
}

impl Proxy {
    /// The descriptors whose readiness means a client is waiting; none once serving.
    pub fn wake_fds(&self) -> Vec<RawFd> {
        let Some(p) = &self.pending else { return Vec::new() };
        let tcp = p.listeners.iter().chain(&p.dns_tcp).map(|l| l.as_raw_fd());
        tcp.chain(p.dns_udp.iter().map(|u| u.as_raw_fd())).collect()
    }

    /// Starts the proxy's thread, once. Should the system be out of threads, the listeners
    /// are closed: the command's clients are refused at once rather than left waiting.
    pub fn serve(&mut self) {
        if let Some(p) = self.pending.take() {
            if let Err(e) = p.spawn() {
                crate::warn!(
                    "the proxy's thread could not start ({e}: the uid is out of processes or threads, see `ulimit -u`); \
                     the command's connections are refused"
                );
            }
        }
    }

    /// The hosts refused during the run.
    pub fn refused(&self) -> Vec<srt_proxy::Refused> {
        self.shared.refused()
    }
}

/// Listeners ready, thread not started.
struct Pending {
    listeners: Vec<TcpListener>,
    dns_tcp: Vec<TcpListener>,
    dns_udp: Vec<std::net::UdpSocket>,
    shared: std::sync::Arc<Shared>,
}

impl Pending {
    fn spawn(self) -> std::io::Result<()> {
        let Pending { listeners, dns_tcp, dns_udp, shared } = self;
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
            .map(drop)
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

/// 16 random bytes, hex: the per-run proxy token.
fn token() -> Result<String, LaunchError> {
    Ok(random::<16>("proxy token")?.iter().map(|x| format!("{x:02x}")).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_variable_srt_sets_is_one_the_settings_cannot_set() {
        // settings-schema refuses `environment.set` of these names; a variable srt sets
        // that is missing there would be silently overridden instead
        let s = Settings::embedded_default();
        let mut net = Net::prepare(&s, &[], false).unwrap();
        for namespaced in [false, true] {
            net.namespaced = namespaced;
            for (k, v) in net.env() {
                assert!(settings_schema::environment::SRT_OWN.contains(&k.as_str()), "{k} is missing from SRT_OWN");
                // env_policy appends what follows `ssh ` to a user's own command
                assert!(k != "GIT_SSH_COMMAND" || v.starts_with("ssh -o "), "{v}");
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

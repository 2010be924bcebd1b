//! Shared proxy state, the accept loop, and per-connection dispatch: the first byte tells
//! SOCKS5 (0x05) from HTTP; SOCKS4 (0x04) is refused.

use std::io;
use std::net::IpAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use arc_swap::ArcSwap;
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt, Interest};
use tokio::net::{TcpListener, UnixListener};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use crate::log::Log;
use crate::metrics::Metrics;
use crate::policy::Policy;
use crate::resolve::Resolver;
use crate::tunnel::SpliceStream;

#[derive(Debug, Clone)]
pub struct Limits {
    /// Whole request head (or SOCKS handshake) must arrive within this.
    pub header_timeout: Duration,
    pub connect_timeout: Duration,
    pub idle_timeout: Duration,
    pub max_header_bytes: usize,
    pub max_headers: usize,
    pub max_tunnels: usize,
    pub max_connections: usize,
    /// Seconds a tunnel's client has to send bytes the gate can judge.
    pub first_flight_timeout: Duration,
    /// Most tunnels one client (source address) may hold open.
    pub max_tunnels_per_client: usize,
    /// Most tunnels one client may hold that still wait for their first flight.
    pub max_pending_per_client: usize,
    /// Most connections one client may hold, counted before it shows a token.
    pub max_connections_per_client: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            header_timeout: Duration::from_secs(10),
            connect_timeout: Duration::from_secs(10),
            idle_timeout: Duration::from_secs(600),
            max_header_bytes: 64 * 1024,
            max_headers: 100,
            max_tunnels: 4096,
            max_connections: 8192,
            first_flight_timeout: Duration::from_secs(30),
            max_tunnels_per_client: 4096,
            max_pending_per_client: 4096,
            max_connections_per_client: 8192,
        }
    }
}

pub struct Shared {
    pub policy: ArcSwap<Policy>,
    /// The per-run secret clients must present (Basic password / SOCKS5 password).
    pub token: Option<String>,
    pub resolver: Resolver,
    pub limits: Limits,
    pub log: Log,
    pub metrics: Arc<Metrics>,
    /// This host's interface addresses, listed at the first dial that needs them: a
    /// netlink dump costs every launch of srt ~0.1 ms, and most commands never dial.
    own: std::sync::OnceLock<Vec<IpAddr>>,
    pub tunnels: Arc<Semaphore>,
    pub clients: Arc<crate::clients::Clients>,
    pub dialer: crate::dial::Dialer,
    conns: Arc<Semaphore>,
    next: AtomicU64,
    /// Hosts refused so far (`srt` names them at exit), each once, at most [`MAX_REFUSED`].
    refused: std::sync::Mutex<Vec<Refused>>,
    /// Transparent mode: the key of the supervisor's preambles (`None`: no transparent
    /// connections are accepted).
    pub transparent_key: Option<[u8; crate::transparent::KEY_LEN]>,
    /// The synthetic addresses handed out by the DNS stub.
    pub names: crate::synthetic::Names,
    /// Search domains of the host's resolver: names ending in them that the stub refuses
    /// are a resolver trying its search list, not worth naming at exit.
    pub quiet_suffixes: Vec<String>,
}

/// A host the policy refused: what `srt` tells the user at exit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refused {
    pub host: String,
    pub port: u16,
    /// The `X-Proxy-Error` value (`blocked-by-allowlist`, ...).
    pub reason: &'static str,
}

const MAX_REFUSED: usize = 64;

impl Shared {
    pub fn new(policy: Policy, token: Option<String>, resolver: Resolver, limits: Limits, log: Log) -> Arc<Shared> {
        Arc::new(Self::build(policy, token, resolver, limits, log))
    }

    /// Like `new`, for callers that replace parts (the dialer) before sharing it.
    pub fn build(policy: Policy, token: Option<String>, resolver: Resolver, limits: Limits, log: Log) -> Shared {
        Shared {
            policy: ArcSwap::from_pointee(policy),
            token,
            resolver,
            tunnels: Arc::new(Semaphore::new(limits.max_tunnels)),
            clients: crate::clients::Clients::new(
                limits.max_tunnels_per_client,
                limits.max_pending_per_client,
                limits.max_connections_per_client,
            ),
            conns: Arc::new(Semaphore::new(limits.max_connections)),
            dialer: crate::dial::system_dialer(),
            limits,
            log,
            metrics: Arc::new(Metrics::default()),
            own: std::sync::OnceLock::new(),
            next: AtomicU64::new(1),
            refused: std::sync::Mutex::new(Vec::new()),
            transparent_key: None,
            names: crate::synthetic::Names::default(),
            quiet_suffixes: Vec::new(),
        }
    }

    /// This host's interface addresses (listed once, on first use), or `None` when they
    /// could not be listed. The first dial comes when the command chooses, so it can choose
    /// a moment when srt is out of descriptors: a failure is not kept, and the caller
    /// refuses what it cannot classify ([`crate::dial::dial`]).
    pub fn own(&self) -> Option<&[IpAddr]> {
        self.own_with(crate::addr::own_addresses)
    }

    fn own_with(&self, list: impl FnOnce() -> std::io::Result<Vec<IpAddr>>) -> Option<&[IpAddr]> {
        if let Some(own) = self.own.get() {
            return Some(own);
        }
        match list() {
            Ok(own) => Some(self.own.get_or_init(|| own)),
            Err(e) => {
                let mut f = serde_json::Map::new();
                f.insert("error".into(), serde_json::Value::from(e.to_string()));
                self.log.event("own-addresses-unknown", f);
                None
            }
        }
    }

    /// A refused DNS name that is only a search-list attempt.
    pub fn quiet_name(&self, name: &str) -> bool {
        self.quiet_suffixes.iter().any(|s| name.strip_suffix(s.as_str()).is_some_and(|rest| rest.ends_with('.')))
    }

    /// Remembers a refused host (once per host, port and reason).
    pub fn note_refused(&self, host: &str, port: u16, reason: &'static str) {
        let Ok(mut r) = self.refused.lock() else { return };
        let entry = Refused { host: host.to_string(), port, reason };
        if r.len() < MAX_REFUSED && !r.contains(&entry) {
            r.push(entry);
        }
    }

    /// The hosts refused so far.
    pub fn refused(&self) -> Vec<Refused> {
        self.refused.lock().map(|r| r.clone()).unwrap_or_default()
    }

    /// A slot for a new tunnel of the client at `peer`, or the reason it gets none (the
    /// log's `reason`: `too-many-tunnels`, `too-many-tunnels-per-client`,
    /// `too-many-pending-tunnels`).
    pub fn open_tunnel(&self, peer: &str) -> Result<crate::clients::Slot, &'static str> {
        let refused = |why| {
            self.metrics.limit_rejections.fetch_add(1, Ordering::Relaxed);
            Err(why)
        };
        let Ok(permit) = self.tunnels.clone().try_acquire_owned() else { return refused("too-many-tunnels") };
        match self.clients.open(crate::clients::client_key(peer)) {
            Ok(held) => Ok(crate::clients::Slot::new(permit, held)),
            Err(why) => refused(why),
        }
    }

    pub fn next_id(&self) -> u64 {
        self.next.fetch_add(1, Ordering::Relaxed)
    }

    /// Constant-time check of a presented secret.
    pub fn token_ok(&self, presented: &[u8]) -> bool {
        match &self.token {
            None => true,
            Some(t) => {
                let t = t.as_bytes();
                let mut diff = (t.len() != presented.len()) as u8;
                for (i, b) in t.iter().enumerate() {
                    diff |= b ^ presented.get(i).copied().unwrap_or(0);
                }
                diff == 0
            }
        }
    }
}

/// A client connection the proxy can serve: TCP or a Unix socket.
pub trait ClientStream: AsyncRead + AsyncWrite + SpliceStream + Unpin + Send + Sync + 'static {}
impl ClientStream for tokio::net::TcpStream {}
impl ClientStream for tokio::net::UnixStream {}

pub enum Listener {
    Tcp(TcpListener),
    Unix(UnixListener),
}

impl Listener {
    pub fn describe(&self) -> String {
        match self {
            Listener::Tcp(l) => l.local_addr().map(|a| a.to_string()).unwrap_or_default(),
            Listener::Unix(l) => l
                .local_addr()
                .ok()
                .and_then(|a| a.as_pathname().map(|p| format!("unix:{}", p.display())))
                .unwrap_or_default(),
        }
    }
}

/// Accepts forever. Running out of descriptors backs off instead of spinning.
pub async fn serve(listener: Listener, shared: Arc<Shared>) -> io::Result<()> {
    loop {
        let accepted = match &listener {
            Listener::Tcp(l) => l.accept().await.map(|(s, a)| {
                let _ = s.set_nodelay(true);
                (Conn::Tcp(s), a.to_string())
            }),
            Listener::Unix(l) => l.accept().await.map(|(s, _)| (Conn::Unix(s), "unix".to_string())),
        };
        let (conn, peer) = match accepted {
            Ok(c) => c,
            Err(e)
                if matches!(
                    e.raw_os_error(),
                    Some(libc::EMFILE) | Some(libc::ENFILE) | Some(libc::ENOBUFS) | Some(libc::ENOMEM)
                ) =>
            {
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue;
            }
            Err(_) => continue,
        };
        let Ok(permit) = shared.conns.clone().try_acquire_owned() else {
            shared.metrics.limit_rejections.fetch_add(1, Ordering::Relaxed);
            tokio::spawn(async move { conn.reject_busy().await });
            continue;
        };
        // per client too: one that opens connections and sends nothing (it needs no token
        // for that) would otherwise hold every slot of a shared proxy
        let Ok(held) = shared.clients.connect(crate::clients::client_key(&peer)) else {
            shared.metrics.limit_rejections.fetch_add(1, Ordering::Relaxed);
            tokio::spawn(async move { conn.reject_busy().await });
            continue;
        };
        let permit = (permit, held);
        let shared = shared.clone();
        tokio::spawn(async move {
            match conn {
                Conn::Tcp(s) => handle(s, peer, shared, permit).await,
                Conn::Unix(s) => handle(s, peer, shared, permit).await,
            }
        });
    }
}

enum Conn {
    Tcp(tokio::net::TcpStream),
    Unix(tokio::net::UnixStream),
}

impl Conn {
    async fn reject_busy(self) {
        const BUSY: &[u8] = b"HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain\r\nX-Proxy-Error: too-many-connections\r\nContent-Length: 21\r\nConnection: close\r\n\r\ntoo many connections\n";
        let _ = match self {
            Conn::Tcp(mut s) => s.write_all(BUSY).await,
            Conn::Unix(mut s) => s.write_all(BUSY).await,
        };
    }
}

async fn handle<S: ClientStream>(
    stream: S,
    peer: String,
    shared: Arc<Shared>,
    permit: (OwnedSemaphorePermit, crate::clients::Held),
) {
    shared.metrics.active_connections.fetch_add(1, Ordering::Relaxed);
    let first = tokio::time::timeout(shared.limits.header_timeout, peek(&stream)).await;
    match first {
        Ok(Ok(Some(5))) => crate::socks::handle(stream, peer, shared.clone()).await,
        Ok(Ok(Some(0))) => crate::transparent::handle(stream, peer, shared.clone()).await,
        Ok(Ok(Some(4))) => {
            // SOCKS4 request rejected or failed
            let mut s = stream;
            let _ = s.write_all(&[0, 0x5b, 0, 0, 0, 0, 0, 0]).await;
        }
        Ok(Ok(Some(_))) => crate::http::serve(stream, peer, shared.clone()).await,
        _ => {}
    }
    shared.metrics.active_connections.fetch_sub(1, Ordering::Relaxed);
    drop(permit);
}

async fn peek<S: ClientStream>(s: &S) -> io::Result<Option<u8>> {
    let fd = s.as_raw_fd();
    let mut b = 0u8;
    let n = s
        .io(Interest::READABLE, || {
            // SAFETY: a one-byte peek into a local.
            let n = unsafe { libc::recv(fd, (&mut b as *mut u8).cast(), 1, libc::MSG_PEEK) };
            if n < 0 {
                Err(io::Error::last_os_error())
            } else {
                Ok(n)
            }
        })
        .await?;
    Ok((n == 1).then_some(b))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shared() -> Arc<Shared> {
        let policy = Policy::from_settings(&settings_schema::Settings::default()).unwrap();
        Shared::new(policy, None, crate::resolve::Resolver::new(Duration::from_secs(1)), Limits::default(), Log::off())
    }

    /// The command chooses when the first dial comes (and can fill srt's descriptor table
    /// first): an interface list that could not be read is not taken as "no addresses",
    /// and is read again at the next dial.
    #[test]
    fn a_failed_interface_listing_is_unknown_and_not_kept() {
        let s = shared();
        assert_eq!(s.own_with(|| Err(std::io::Error::from_raw_os_error(libc::EMFILE))), None);
        let own: Vec<IpAddr> = vec!["192.0.2.2".parse().unwrap()];
        assert_eq!(s.own_with(|| Ok(own.clone())), Some(&own[..]));
        assert_eq!(
            s.own_with(|| Err(std::io::Error::from_raw_os_error(libc::EMFILE))),
            Some(&own[..]),
            "kept once read"
        );
    }
}

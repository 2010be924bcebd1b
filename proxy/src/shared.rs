//! The state every connection handler shares: the policy (swapped on reload), the limits
//! and their counters, the resolver and dialer, logs and metrics, and the hosts refused so
//! far. The protocol handlers depend on it; `server` only accepts and dispatches.

use std::net::{IpAddr, SocketAddr};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use arc_swap::ArcSwap;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::TcpStream;
use tokio::sync::Semaphore;

use crate::log::Log;
use crate::metrics::Metrics;
use crate::policy::Policy;
use crate::resolve::Resolver;
use crate::splice::SpliceStream;

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
    pub dialer: Dialer,
    /// Connections open now, at most `limits.max_connections` (taken by the accept loop).
    pub(crate) conns: Arc<Semaphore>,
    next: AtomicU64,
    /// Hosts refused so far (`srt` names them at exit), each once, at most [`MAX_REFUSED`].
    refused: std::sync::Mutex<Vec<Refused>>,
    /// Transparent mode: the key of the supervisor's preambles (`None`: no transparent
    /// connections are accepted).
    pub transparent_key: Option<[u8; crate::preamble::KEY_LEN]>,
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
            dialer: system_dialer(),
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

/// How upstream connections are made (replaceable to record or refuse them in tests).
pub type Dialer = std::sync::Arc<
    dyn Fn(SocketAddr) -> std::pin::Pin<Box<dyn std::future::Future<Output = std::io::Result<TcpStream>> + Send>>
        + Send
        + Sync,
>;

pub fn system_dialer() -> Dialer {
    std::sync::Arc::new(|sa| Box::pin(TcpStream::connect(sa)))
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

//! From an allowed target to a connected upstream socket: resolve once, vet every
//! address, dial only vetted ones (in order, each with the connect timeout).

use std::net::{IpAddr, SocketAddr};
use std::time::Duration;

use tokio::net::TcpStream;

use crate::addr::AddrClass;
use crate::resolve::ResolveError;
use crate::shared::Shared;
use crate::target::Target;

#[derive(Debug)]
pub enum DialError {
    Resolve(ResolveError),
    Refused(AddrClass),
    Timeout,
    Connect(std::io::Error),
}

impl DialError {
    /// HTTP status, `X-Proxy-Error` value, one-line body.
    pub fn response(&self) -> (u16, &'static str, String) {
        match self {
            DialError::Resolve(ResolveError::Timeout) => {
                (504, "upstream-dns-timeout", "name resolution timed out".into())
            }
            DialError::Resolve(_) => (502, "upstream-dns-failure", "could not resolve the host".into()),
            DialError::Refused(c) => {
                (403, "blocked-by-resolved-address", format!("the host resolved to a {} address", c.as_str()))
            }
            DialError::Timeout => (504, "upstream-connect-timeout", "connecting to the host timed out".into()),
            DialError::Connect(e) => (502, "upstream-connect-failed", format!("could not connect to the host: {e}")),
        }
    }
    /// The SOCKS5 reply code (RFC 1928 §6).
    pub fn socks_reply(&self) -> u8 {
        match self {
            DialError::Resolve(_) => 0x04,
            DialError::Refused(_) => 0x02,
            DialError::Timeout => 0x06,
            DialError::Connect(e) if e.kind() == std::io::ErrorKind::ConnectionRefused => 0x05,
            DialError::Connect(_) => 0x01,
        }
    }
}

pub struct Dialed {
    pub stream: TcpStream,
    pub resolved: Vec<IpAddr>,
    pub dialed: SocketAddr,
}

pub async fn dial(shared: &Shared, t: &Target) -> Result<Dialed, (DialError, Vec<IpAddr>)> {
    let (addrs, trusted) =
        shared.resolver.resolve(&t.host, t.port).await.map_err(|e| (DialError::Resolve(e), vec![]))?;
    let policy = shared.policy.load();
    // not knowing this host's addresses, an address that could be one of them is refused
    let own = match shared.own() {
        Some(own) => own,
        None if trusted => &[],
        None => return Err((DialError::Refused(crate::addr::AddrClass::OwnInterface), addrs)),
    };
    let vetted = policy.vet(t, &addrs, trusted, own).map_err(|c| (DialError::Refused(c), addrs.clone()))?;
    let mut last = DialError::Timeout;
    for ip in vetted {
        let sa = SocketAddr::new(ip, t.port);
        match tokio::time::timeout(shared.limits.connect_timeout, (shared.dialer)(sa)).await {
            Ok(Ok(stream)) => {
                let _ = stream.set_nodelay(true);
                return Ok(Dialed { stream, resolved: addrs, dialed: sa });
            }
            Ok(Err(e)) => last = DialError::Connect(e),
            Err(_) => last = DialError::Timeout,
        }
    }
    Err((last, addrs))
}

pub fn ips(v: &[IpAddr]) -> serde_json::Value {
    serde_json::Value::from(v.iter().map(|i| i.to_string()).collect::<Vec<_>>())
}

pub fn ms(d: Duration) -> serde_json::Value {
    serde_json::Value::from(d.as_millis() as u64)
}

//! Tunnel slots: the proxy-wide cap, and per-client caps on connections, on open tunnels
//! and on tunnels still waiting for their first flight, so one client of a shared
//! `srt-proxy` cannot hold every slot (or every descriptor) while others wait. A client is
//! a source address (TCP) or the Unix listener's peer: srt makes each run's connections to
//! a shared proxy leave from a loopback address of the run's own, which the command cannot
//! choose, so a client is a run (and `127.0.0.1` the pod's processes outside srt).
//! Connections count before the client has shown a token, so a peer without one cannot
//! fill the proxy-wide connection cap.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use tokio::sync::OwnedSemaphorePermit;

#[derive(Debug, Default)]
struct Counts {
    tunnels: usize,
    pending: usize,
    connections: usize,
}

/// Open and undecided tunnels per client.
#[derive(Debug)]
pub struct Clients {
    counts: Mutex<HashMap<String, Counts>>,
    max_tunnels: usize,
    max_pending: usize,
    max_connections: usize,
}

/// The client a connection's peer stands for: its address without the port.
pub fn client_key(peer: &str) -> String {
    peer.parse::<std::net::SocketAddr>().map(|a| a.ip().to_string()).unwrap_or_else(|_| peer.to_string())
}

impl Clients {
    pub fn new(max_tunnels: usize, max_pending: usize, max_connections: usize) -> Arc<Clients> {
        Arc::new(Clients { counts: Mutex::new(HashMap::new()), max_tunnels, max_pending, max_connections })
    }

    /// Takes a connection slot for `key`, or says that its cap is full.
    pub fn connect(self: &Arc<Self>, key: String) -> Result<Held, &'static str> {
        let Ok(mut m) = self.counts.lock() else { return Err("too-many-connections") };
        let c = m.entry(key.clone()).or_default();
        if c.connections >= self.max_connections {
            return Err("too-many-connections-per-client");
        }
        c.connections += 1;
        Ok(Held { clients: self.clone(), key: key.into(), kind: Kind::Connection })
    }

    /// Takes a tunnel slot and a pending slot for `key`, or says which cap is full.
    pub fn open(self: &Arc<Self>, key: String) -> Result<(Held, Held), &'static str> {
        let Ok(mut m) = self.counts.lock() else { return Err("too-many-tunnels") };
        let c = m.entry(key.clone()).or_default();
        if c.tunnels >= self.max_tunnels {
            return Err("too-many-tunnels-per-client");
        }
        if c.pending >= self.max_pending {
            return Err("too-many-pending-tunnels");
        }
        c.tunnels += 1;
        c.pending += 1;
        let key: Arc<str> = key.into();
        let held = |kind| Held { clients: self.clone(), key: key.clone(), kind };
        Ok((held(Kind::Tunnel), held(Kind::Pending)))
    }

    /// (open, pending) tunnels of `key`.
    pub fn counts(&self, key: &str) -> (usize, usize) {
        self.counts.lock().ok().and_then(|m| m.get(key).map(|c| (c.tunnels, c.pending))).unwrap_or((0, 0))
    }
}

#[derive(Debug, Clone, Copy)]
enum Kind {
    Tunnel,
    Pending,
    Connection,
}

/// One count (open, pending or connection) of one client, given back on drop.
#[derive(Debug)]
pub struct Held {
    clients: Arc<Clients>,
    key: Arc<str>,
    kind: Kind,
}

impl Drop for Held {
    fn drop(&mut self) {
        let Ok(mut m) = self.clients.counts.lock() else { return };
        let Some(c) = m.get_mut(&*self.key) else { return };
        let n = match self.kind {
            Kind::Tunnel => &mut c.tunnels,
            Kind::Pending => &mut c.pending,
            Kind::Connection => &mut c.connections,
        };
        *n = n.saturating_sub(1);
        if c.tunnels == 0 && c.pending == 0 && c.connections == 0 {
            m.remove(&*self.key);
        }
    }
}

/// A tunnel's slots: the proxy-wide permit, the client's open count, and its pending count
/// (handed to the relay, which drops it once the first flight is judged).
pub struct Slot {
    _permit: OwnedSemaphorePermit,
    _open: Held,
    pending: Option<Held>,
}

impl Slot {
    pub fn new(permit: OwnedSemaphorePermit, (open, pending): (Held, Held)) -> Slot {
        Slot { _permit: permit, _open: open, pending: Some(pending) }
    }

    /// The pending count, for the relay to give back once the gate has decided.
    pub fn pending(&mut self) -> Option<Held> {
        self.pending.take()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn caps_are_per_client_and_given_back() {
        let c = Clients::new(3, 2, 2);
        let a1 = c.open("a".into()).unwrap();
        let a2 = c.open("a".into()).unwrap();
        assert_eq!(c.open("a".into()).unwrap_err(), "too-many-pending-tunnels");
        assert!(c.open("b".into()).is_ok(), "another client is served");
        drop(a1.1); // a1's first flight judged
        let a3 = c.open("a".into()).unwrap();
        drop(a2.1);
        drop(a3.1);
        assert_eq!(c.counts("a"), (3, 0));
        assert_eq!(c.open("a".into()).unwrap_err(), "too-many-tunnels-per-client");
        drop((a1.0, a2.0, a3.0));
        assert_eq!(c.counts("a"), (0, 0));
        assert!(c.counts.lock().unwrap().is_empty(), "no entry left for idle clients");
        let conns = (c.connect("a".into()).unwrap(), c.connect("a".into()).unwrap());
        assert_eq!(c.connect("a".into()).unwrap_err(), "too-many-connections-per-client");
        assert!(c.connect("b".into()).is_ok(), "another client connects");
        drop(conns);
        assert!(c.connect("a".into()).is_ok());
        assert!(c.counts.lock().unwrap().is_empty(), "no entry left for gone connections");
        assert_eq!(client_key("10.0.0.1:5555"), "10.0.0.1");
        assert_eq!(client_key("[::1]:80"), "::1");
        assert_eq!(client_key("unix"), "unix");
    }
}

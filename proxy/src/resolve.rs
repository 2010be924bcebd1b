//! Name resolution with a timeout, and operator overrides (`--resolve host:port:addr`, as
//! curl's) for tests and split-horizon setups. Override results are trusted as written.

use std::collections::HashMap;
use std::net::IpAddr;
use std::time::Duration;

use settings_schema::CanonicalHost;

/// A replacement for the system resolver (tests, embedders): name -> addresses.
/// Its answers are *not* trusted: they are vetted like DNS answers.
pub type Lookup = std::sync::Arc<dyn Fn(&str) -> Vec<IpAddr> + Send + Sync>;

#[derive(Clone, Default)]
pub struct Resolver {
    /// (host, port or 0 for any) -> addresses
    overrides: HashMap<(String, u16), Vec<IpAddr>>,
    pub timeout: Duration,
    pub lookup: Option<Lookup>,
}

impl std::fmt::Debug for Resolver {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Resolver").field("overrides", &self.overrides).field("timeout", &self.timeout).finish()
    }
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ResolveError {
    #[error("could not resolve the host")]
    Failed,
    #[error("name resolution timed out")]
    Timeout,
}

impl Resolver {
    pub fn new(timeout: Duration) -> Self {
        Resolver { overrides: HashMap::new(), timeout, lookup: None }
    }

    /// Parses `HOST:PORT:ADDR[,ADDR...]`; PORT may be `*`.
    pub fn add_override(&mut self, spec: &str) -> Result<(), String> {
        let bad = || format!("--resolve {spec}: expected HOST:PORT:ADDR[,ADDR...] (PORT may be *)");
        let (host, rest) = spec.split_once(':').ok_or_else(bad)?;
        let (port, addrs) = rest.split_once(':').ok_or_else(bad)?;
        let port = if port == "*" { 0 } else { port.parse::<u16>().map_err(|_| bad())? };
        let host = match CanonicalHost::parse(host).map_err(|_| bad())? {
            CanonicalHost::Name(n) => n,
            _ => return Err(bad()),
        };
        let addrs = addrs
            .split(',')
            .map(|a| a.trim_start_matches('[').trim_end_matches(']').parse::<IpAddr>().map_err(|_| bad()))
            .collect::<Result<Vec<_>, _>>()?;
        self.overrides.insert((host, port), addrs);
        Ok(())
    }

    /// Addresses for `host:port`, and whether they are trusted (not classified).
    pub async fn resolve(&self, host: &CanonicalHost, port: u16) -> Result<(Vec<IpAddr>, bool), ResolveError> {
        let name = match host {
            CanonicalHost::Ipv4(a) => return Ok((vec![IpAddr::V4(*a)], true)),
            CanonicalHost::Ipv6(a) => return Ok((vec![IpAddr::V6(*a)], true)),
            CanonicalHost::Name(n) => n,
        };
        for key in [(name.clone(), port), (name.clone(), 0)] {
            if let Some(a) = self.overrides.get(&key) {
                return Ok((a.clone(), true));
            }
        }
        if let Some(f) = &self.lookup {
            let v = f(name);
            return if v.is_empty() { Err(ResolveError::Failed) } else { Ok((v, false)) };
        }
        let lookup = tokio::net::lookup_host((name.as_str(), port));
        match tokio::time::timeout(self.timeout, lookup).await {
            Err(_) => Err(ResolveError::Timeout),
            Ok(Err(_)) => Err(ResolveError::Failed),
            Ok(Ok(it)) => {
                let mut v: Vec<IpAddr> = it.map(|sa| sa.ip()).collect();
                v.dedup();
                if v.is_empty() {
                    Err(ResolveError::Failed)
                } else {
                    Ok((v, false))
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(flavor = "current_thread")]
    async fn overrides_and_literals() {
        let mut r = Resolver::new(Duration::from_secs(1));
        r.add_override("api.example.test:443:127.0.0.1").unwrap();
        r.add_override("any.example.test:*:[::1],127.0.0.2").unwrap();
        assert!(r.add_override("nope").is_err());
        assert!(r.add_override("x.test:99999:1.2.3.4").is_err());
        let name = |s: &str| CanonicalHost::parse(s).unwrap();
        assert_eq!(r.resolve(&name("API.example.test"), 443).await, Ok((vec!["127.0.0.1".parse().unwrap()], true)));
        assert_eq!(r.resolve(&name("any.example.test"), 1).await.unwrap().0.len(), 2);
        assert_eq!(r.resolve(&name("1.2.3.4"), 1).await, Ok((vec!["1.2.3.4".parse().unwrap()], true)));
        assert_eq!(r.resolve(&name("no-such-host.invalid"), 80).await, Err(ResolveError::Failed));
    }
}

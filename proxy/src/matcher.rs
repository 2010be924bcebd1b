//! A compiled domain list: hash lookups of the exact name and of each label-boundary
//! suffix, so a match costs a handful of hashes however long the list is. globset is not
//! used here: its `*` crosses dots (`*example.com` would match `evilexample.com`).

use std::collections::HashMap;
use std::net::IpAddr;

use settings_schema::{CanonicalHost, DomainPattern, HostPattern, ListKind};

/// One entry's port restriction and its text (for `matched_rule`).
#[derive(Debug, Clone)]
struct Entry {
    port: Option<u16>,
    text: String,
}

#[derive(Debug, Default, Clone)]
pub struct DomainSet {
    exact: HashMap<String, Vec<Entry>>,
    subdomains: HashMap<String, Vec<Entry>>,
    ips: HashMap<IpAddr, Vec<Entry>>,
    any: Vec<Entry>,
    len: usize,
}

fn port_hit(entries: &[Entry], port: u16) -> Option<&str> {
    entries.iter().find(|e| e.port.is_none_or(|p| p == port)).map(|e| e.text.as_str())
}

impl DomainSet {
    /// Compiles a validated list; entries that fail to parse are reported, never skipped.
    pub fn compile(list: &[String], kind: ListKind) -> Result<Self, String> {
        let mut set = DomainSet::default();
        for raw in list {
            let p = DomainPattern::parse(raw, kind).map_err(|e| format!("invalid domain pattern \"{raw}\": {e}"))?;
            let entry = Entry { port: p.port, text: raw.clone() };
            match p.host {
                HostPattern::Exact(h) => set.exact.entry(h).or_default().push(entry),
                HostPattern::Subdomains(b) => set.subdomains.entry(b).or_default().push(entry),
                HostPattern::Ipv4(a) => set.ips.entry(IpAddr::V4(a)).or_default().push(entry),
                HostPattern::Ipv6(a) => set.ips.entry(IpAddr::V6(a)).or_default().push(entry),
                HostPattern::Any => set.any.push(entry),
            }
            set.len += 1;
        }
        Ok(set)
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The first entry matching `host:port`, as written in the settings.
    pub fn find(&self, host: &CanonicalHost, port: u16) -> Option<&str> {
        self.find_by(host, |p| p.is_none_or(|p| p == port))
    }

    /// The first entry matching `host` on any port (transparent mode's DNS answers a name
    /// before the port is known).
    pub fn find_any_port(&self, host: &CanonicalHost) -> Option<&str> {
        self.find_by(host, |_| true)
    }

    /// The first entry matching `host` on every port (one written without a port).
    pub fn find_all_ports(&self, host: &CanonicalHost) -> Option<&str> {
        self.find_by(host, |p| p.is_none())
    }

    fn find_by(&self, host: &CanonicalHost, port_ok: impl Fn(Option<u16>) -> bool) -> Option<&str> {
        fn first<'a>(entries: &'a [Entry], port_ok: &impl Fn(Option<u16>) -> bool) -> Option<&'a str> {
            entries.iter().find(|e| port_ok(e.port)).map(|e| e.text.as_str())
        }
        if let Some(t) = first(&self.any, &port_ok) {
            return Some(t);
        }
        match host {
            CanonicalHost::Ipv4(a) => self.ips.get(&IpAddr::V4(*a)).and_then(|e| first(e, &port_ok)),
            CanonicalHost::Ipv6(a) => self.ips.get(&IpAddr::V6(*a)).and_then(|e| first(e, &port_ok)),
            CanonicalHost::Name(n) => {
                if let Some(t) = self.exact.get(n.as_str()).and_then(|e| first(e, &port_ok)) {
                    return Some(t);
                }
                // every strict suffix starting after a dot: a.b.example.com -> b.example.com, example.com, com
                let mut rest = n.as_str();
                while let Some(i) = rest.find('.') {
                    rest = &rest[i + 1..];
                    if let Some(t) = self.subdomains.get(rest).and_then(|e| first(e, &port_ok)) {
                        return Some(t);
                    }
                }
                None
            }
        }
    }

    /// An IP-literal entry matching `ip:port` (used to exempt resolved addresses that
    /// the policy lists explicitly).
    pub fn find_ip(&self, ip: IpAddr, port: u16) -> Option<&str> {
        self.ips.get(&ip).and_then(|e| port_hit(e, port))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(list: &[&str], kind: ListKind) -> DomainSet {
        DomainSet::compile(&list.iter().map(|s| s.to_string()).collect::<Vec<_>>(), kind).unwrap()
    }

    fn hit(s: &DomainSet, host: &str, port: u16) -> Option<String> {
        s.find(&CanonicalHost::parse(host).unwrap(), port).map(str::to_string)
    }

    #[test]
    fn srt_network_filter_table() {
        let s =
            set(&["example.com", "*.allowed.com", "api.github.com:443", "127.0.0.1:8080", "[::1]"], ListKind::Allowed);
        let cases: &[(&str, u16, Option<&str>)] = &[
            ("example.com", 443, Some("example.com")),
            ("EXAMPLE.COM.", 80, Some("example.com")),
            ("sub.example.com", 443, None),
            ("a.allowed.com", 443, Some("*.allowed.com")),
            ("a.b.c.allowed.com", 1, Some("*.allowed.com")),
            ("allowed.com", 443, None),
            ("notallowed.com", 443, None),
            ("allowed.com.evil.net", 443, None),
            ("api.github.com", 443, Some("api.github.com:443")),
            ("api.github.com", 22, None),
            ("127.0.0.1", 8080, Some("127.0.0.1:8080")),
            ("2130706433", 8080, Some("127.0.0.1:8080")),
            ("127.0.0.1", 8081, None),
            ("[::1]", 5, Some("[::1]")),
            ("[::ffff:127.0.0.1]", 8080, Some("127.0.0.1:8080")),
        ];
        for (host, port, want) in cases {
            assert_eq!(hit(&s, host, *port).as_deref(), *want, "{host}:{port}");
        }
    }

    #[test]
    fn wildcards_never_match_ip_literals_and_any_matches_all() {
        assert!(
            DomainSet::compile(&["*.168.1.1".into()], ListKind::Denied).is_err(),
            "numeric wildcard bases are refused"
        );
        let s = set(&["*.example.com", "*.co.uk"], ListKind::Denied);
        assert_eq!(s.len(), 2);
        assert!(hit(&s, "192.168.1.1", 1).is_none());
        assert!(hit(&s, "[::1]", 1).is_none());
        let all = set(&["*:22"], ListKind::Denied);
        assert!(hit(&all, "github.com", 22).is_some());
        assert!(hit(&all, "10.0.0.1", 22).is_some());
        assert!(hit(&all, "github.com", 443).is_none());
    }

    #[test]
    fn invalid_entries_are_errors() {
        assert!(DomainSet::compile(&["*.com".into()], ListKind::Allowed).is_err());
        assert!(DomainSet::compile(&["*".into()], ListKind::Allowed).is_err());
    }
}

//! The compiled network policy and the decision for one target, in the fixed order:
//! any deniedDomains match -> deny; allowedDomains match -> allow (then the resolved
//! addresses are vetted); otherwise deny.

use std::collections::HashMap;
use std::net::IpAddr;

use settings_schema::cidr::Cidr;
use settings_schema::{CanonicalHost, ListKind, Settings};

use crate::addr::{self, AddrClass};
use crate::matcher::DomainSet;
use crate::target::Target;

#[derive(Debug, Default)]
pub struct Policy {
    pub allow: DomainSet,
    pub deny: DomainSet,
    reasons: HashMap<String, String>,
    denied_resolved: Vec<Cidr>,
    /// `allowTlsWithoutSni`: TLS tunnels that name no server (or hide it) pass.
    pub nameless_tls: bool,
    /// `allowOtherProtocols`: targets whose tunnels may carry bytes that are neither TLS
    /// nor HTTP (SSH, databases, git://), which name no host the gate could check.
    other: DomainSet,
    /// `firstFlightTimeout`, when the settings give one (else the proxy's own limit).
    pub first_flight: Option<std::time::Duration>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    Allow { rule: String },
    Deny { by: DenyBy, rule: Option<String>, message: String },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DenyBy {
    Denylist,
    Allowlist,
    ResolvedAddress,
}

impl DenyBy {
    /// The `X-Proxy-Error` value and the log's `reason`.
    pub fn header(self) -> &'static str {
        match self {
            DenyBy::Denylist => "blocked-by-denylist",
            DenyBy::Allowlist => "blocked-by-allowlist",
            DenyBy::ResolvedAddress => "blocked-by-resolved-address",
        }
    }
}

impl Policy {
    pub fn from_settings(s: &Settings) -> Result<Policy, String> {
        let n = &s.network;
        Ok(Policy {
            allow: DomainSet::compile(&n.allowed_domains, ListKind::Allowed)?,
            deny: DomainSet::compile(&n.denied_domains, ListKind::Denied)?,
            reasons: n.denied_domain_reasons.clone().unwrap_or_default().into_iter().collect(),
            denied_resolved: n
                .denied_resolved_addresses
                .iter()
                .flatten()
                .map(|a| Cidr::parse(a).ok_or_else(|| format!("invalid deniedResolvedAddresses entry \"{a}\"")))
                .collect::<Result<_, _>>()?,
            nameless_tls: n.allow_tls_without_sni.unwrap_or(false),
            other: DomainSet::compile(n.allow_other_protocols.as_deref().unwrap_or_default(), ListKind::Denied)?,
            first_flight: n.first_flight_timeout.map(std::time::Duration::from_secs),
        })
    }

    pub fn decide(&self, t: &Target) -> Verdict {
        if let Some(rule) = self.deny.find(&t.host, t.port) {
            let message = self.reasons.get(rule).cloned().unwrap_or_else(|| "host is on the deny list".into());
            return Verdict::Deny { by: DenyBy::Denylist, rule: Some(rule.to_string()), message };
        }
        match self.allow.find(&t.host, t.port) {
            Some(rule) => Verdict::Allow { rule: rule.to_string() },
            None => {
                Verdict::Deny { by: DenyBy::Allowlist, rule: None, message: "host is not on the allow list".into() }
            }
        }
    }

    /// Whether a tunnel to `t` may carry a protocol other than TLS and HTTP.
    pub fn other_protocols(&self, t: &Target) -> bool {
        self.other.find(&t.host, t.port).is_some()
    }

    /// Whether a connection to `host` could be allowed on some port: transparent mode's
    /// DNS answers such names (the port is judged at connect time) and no others.
    pub fn name_may_connect(&self, host: &CanonicalHost) -> bool {
        self.deny.find_all_ports(host).is_none() && self.allow.find_any_port(host).is_some()
    }

    /// Keeps the addresses an allowed target may be dialed at. `trusted` addresses (an IP
    /// literal target, an operator's resolver override) skip the classifier but not the
    /// deny list; `localhost` may only be loopback; an address the allow list names
    /// explicitly (with its port) is kept.
    pub fn vet(&self, t: &Target, addrs: &[IpAddr], trusted: bool, own: &[IpAddr]) -> Result<Vec<IpAddr>, AddrClass> {
        let mut kept = Vec::new();
        let mut why = AddrClass::DeniedByPolicy;
        for &ip in addrs {
            if self.deny.find_ip(ip, t.port).is_some() {
                why = AddrClass::DeniedByPolicy;
                continue;
            }
            let is_localhost =
                matches!(&t.host, CanonicalHost::Name(n) if n == "localhost" || n.ends_with(".localhost"));
            if is_localhost {
                if ip.is_loopback() {
                    kept.push(ip);
                } else {
                    why = AddrClass::DeniedByPolicy;
                }
                continue;
            }
            if trusted || self.allow.find_ip(ip, t.port).is_some() {
                kept.push(ip);
                continue;
            }
            match addr::classify(ip, own, &self.denied_resolved) {
                Some(class) => why = class,
                None => kept.push(ip),
            }
        }
        if kept.is_empty() {
            Err(why)
        } else {
            Ok(kept)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy(allow: &[&str], deny: &[&str]) -> Policy {
        let text = serde_json::json!({
            "network": {"allowedDomains": allow, "deniedDomains": deny,
                        "deniedDomainReasons": {"bad.example.com": "no bad things"},
                        "deniedResolvedAddresses": ["203.0.113.0/24"]},
            "filesystem": {"denyRead": [], "allowWrite": [], "denyWrite": []}
        });
        let mut s: Settings = serde_json::from_value(text).unwrap();
        if !deny.contains(&"bad.example.com") {
            s.network.denied_domain_reasons = None;
        }
        Policy::from_settings(&s).unwrap()
    }

    fn t(s: &str) -> Target {
        crate::target::parse_authority(s, None).unwrap()
    }

    #[test]
    fn decision_order() {
        let p = policy(&["*.example.com", "127.0.0.1:8080"], &["bad.example.com"]);
        assert!(matches!(p.decide(&t("a.example.com:443")), Verdict::Allow { rule } if rule == "*.example.com"));
        assert_eq!(
            p.decide(&t("bad.example.com:443")),
            Verdict::Deny {
                by: DenyBy::Denylist,
                rule: Some("bad.example.com".into()),
                message: "no bad things".into()
            }
        );
        assert!(matches!(p.decide(&t("example.com:443")), Verdict::Deny { by: DenyBy::Allowlist, .. }));
        assert!(matches!(p.decide(&t("2130706433:8080")), Verdict::Allow { .. }));
        let all = policy(&["127.0.0.1:8080"], &["*"]);
        assert!(matches!(all.decide(&t("127.0.0.1:8080")), Verdict::Deny { by: DenyBy::Denylist, .. }));
    }

    #[test]
    fn vetting_resolved_addresses() {
        let p = policy(&["*.example.com", "localhost", "10.9.9.9:443"], &["192.0.2.1"]);
        let own: Vec<IpAddr> = vec!["10.1.1.1".parse().unwrap()];
        let ip = |s: &str| -> IpAddr { s.parse().unwrap() };
        let target = t("a.example.com:443");
        assert_eq!(p.vet(&target, &[ip("127.0.0.1")], false, &own), Err(AddrClass::Loopback));
        assert_eq!(p.vet(&target, &[ip("169.254.169.254")], false, &own), Err(AddrClass::LinkLocal));
        assert_eq!(p.vet(&target, &[ip("10.1.1.1")], false, &own), Err(AddrClass::OwnInterface));
        assert_eq!(p.vet(&target, &[ip("203.0.113.9")], false, &own), Err(AddrClass::DeniedByPolicy));
        assert_eq!(p.vet(&target, &[ip("192.0.2.1")], true, &own), Err(AddrClass::DeniedByPolicy));
        assert_eq!(p.vet(&target, &[ip("127.0.0.1"), ip("93.184.216.34")], false, &own), Ok(vec![ip("93.184.216.34")]));
        assert_eq!(p.vet(&target, &[ip("10.9.9.9")], false, &own), Ok(vec![ip("10.9.9.9")]), "listed IPs are kept");
        assert_eq!(p.vet(&target, &[ip("127.0.0.1")], true, &own), Ok(vec![ip("127.0.0.1")]), "trusted override");
        let lh = t("localhost:80");
        assert_eq!(p.vet(&lh, &[ip("127.0.0.1"), ip("93.184.216.34")], false, &own), Ok(vec![ip("127.0.0.1")]));
    }
}

//! Transparent mode: connections the command made to any address, which srt's supervisor
//! took to the proxy, and the command's DNS queries.
//!
//! The supervisor connects the command's socket to the proxy and writes a preamble before
//! the command gets it back: a magic, a per-run key the command never sees, and the
//! address the command asked for. The proxy then decides by the name behind that address
//! (a synthetic address from [`crate::synthetic`]), or for a real address by the address
//! itself or, failing that, by the TLS SNI or HTTP Host the client sends. Port 53 is
//! srt's own DNS, whatever the address. A refusal resets the connection.

use std::net::{IpAddr, SocketAddr};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Instant;

use serde_json::{Map, Value};
use settings_schema::CanonicalHost;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::dns::{self, Answer};
use crate::first_flight::{self, Seen};
use crate::policy::Verdict;
pub use crate::preamble::{parse_preamble, preamble, KEY_LEN, MAGIC, PREAMBLE_LEN};
use crate::shared::{ClientStream, Shared};
use crate::synthetic;
use crate::target::Target;
use crate::tunnel::Gated;

/// The stub's answer to one question, from the current policy.
pub fn answer(shared: &Shared, q: &dns::Question) -> Answer {
    let allowed = CanonicalHost::parse(&q.name)
        .is_ok_and(|h| matches!(h, CanonicalHost::Name(_)) && shared.policy.load().name_may_connect(&h));
    if !allowed {
        if !shared.quiet_name(&q.name) {
            shared.note_refused(&q.name, 0, "dns-not-allowed");
        }
        let mut f = Map::new();
        f.insert("kind".into(), "dns".into());
        f.insert("host".into(), crate::log::clean(&q.name).into());
        f.insert("qtype".into(), q.qtype.into());
        f.insert("allow".into(), false.into());
        f.insert("reason".into(), "blocked-by-allowlist".into());
        shared.metrics.request("dns", "deny", "blocked-by-allowlist");
        shared.log.event("decision", f);
        return Answer::NxDomain;
    }
    shared.metrics.request("dns", "allow", "allowed");
    match shared.names.assign(&q.name) {
        Some(a) => Answer::A(a),
        None => Answer::ServFail,
    }
}

/// Serves DNS over UDP on `sock` (namespace mode: 127.0.0.1:53 inside the sandbox).
pub async fn serve_udp(sock: tokio::net::UdpSocket, shared: Arc<Shared>) {
    let mut buf = vec![0u8; 4096];
    loop {
        let Ok((n, from)) = sock.recv_from(&mut buf).await else { continue };
        if let Some(r) = dns::reply(&buf[..n], |q| answer(&shared, q)) {
            let _ = sock.send_to(&r, from).await;
        }
    }
}

/// DNS over TCP: two-byte length, message; several per connection.
pub async fn serve_dns_tcp<S: ClientStream>(mut s: S, shared: Arc<Shared>) {
    loop {
        let mut len = [0u8; 2];
        let read = tokio::time::timeout(shared.limits.idle_timeout, s.read_exact(&mut len)).await;
        if !matches!(read, Ok(Ok(_))) {
            return;
        }
        let mut msg = vec![0u8; usize::from(u16::from_be_bytes(len))];
        if !matches!(tokio::time::timeout(shared.limits.header_timeout, s.read_exact(&mut msg)).await, Ok(Ok(_))) {
            return;
        }
        let Some(r) = dns::reply(&msg, |q| answer(&shared, q)) else { return };
        let mut out = (r.len() as u16).to_be_bytes().to_vec();
        out.extend(r);
        if s.write_all(&out).await.is_err() {
            return;
        }
    }
}

/// Serves DNS over TCP on a listener of its own (namespace mode: 127.0.0.1:53).
pub async fn serve_dns_listener(l: tokio::net::TcpListener, shared: Arc<Shared>) {
    loop {
        let Ok((s, _)) = l.accept().await else { continue };
        tokio::spawn(serve_dns_tcp(s, shared.clone()));
    }
}

/// A connection whose first byte was the preamble's.
pub async fn handle<S: ClientStream>(mut s: S, peer: String, shared: Arc<Shared>) {
    let Some(key) = shared.transparent_key else { return };
    let mut p = [0u8; PREAMBLE_LEN];
    if !matches!(tokio::time::timeout(shared.limits.header_timeout, s.read_exact(&mut p)).await, Ok(Ok(_))) {
        return;
    }
    let Some(dest) = parse_preamble(&key, &p) else { return };
    if dest.port() == 53 {
        return serve_dns_tcp(s, shared).await;
    }
    let start = Instant::now();
    let mut f = Map::new();
    f.insert("kind".into(), "transparent".into());
    f.insert("conn".into(), shared.next_id().into());
    f.insert("client".into(), peer.clone().into());
    f.insert("address".into(), dest.to_string().into());
    let refuse = |mut f: Map<String, Value>, s: S, host: String, reason: &'static str| {
        shared.metrics.request("transparent", "deny", reason);
        shared.note_refused(&host, dest.port(), reason);
        f.insert("host".into(), host.into());
        f.insert("port".into(), dest.port().into());
        f.insert("allow".into(), false.into());
        f.insert("reason".into(), reason.into());
        f.insert("duration_ms".into(), crate::dial::ms(start.elapsed()));
        shared.log.event("decision", f);
        reset(s);
    };
    // the name behind the address, or the address itself
    let (target, mut first) = match named_target(&shared, dest) {
        Ok(t) => (t, Vec::new()),
        Err(reason) => return refuse(f, s, dest.ip().to_string(), reason),
    };
    let mut target = target;
    if let Verdict::Deny { .. } = shared.policy.load().decide(&target) {
        // a real address the policy does not name: the client's SNI or Host may
        if synthetic_ip(dest.ip()) {
            return refuse(f, s, target.host.to_string(), "blocked-by-allowlist");
        }
        match read_first_flight(&mut s, &shared).await {
            Some((buf, Some(name))) => match crate::target::parse_authority(&name, Some(dest.port())) {
                Ok(t) => {
                    target = Target { host: t.host, port: dest.port() };
                    first = buf;
                }
                Err(_) => return refuse(f, s, name, "blocked-by-allowlist"),
            },
            _ => return refuse(f, s, target.host.to_string(), "blocked-by-allowlist"),
        }
    }
    f.insert("host".into(), target.host.to_string().into());
    f.insert("port".into(), target.port.into());
    let rule = match shared.policy.load().decide(&target) {
        Verdict::Allow { rule } => rule,
        Verdict::Deny { by, .. } => return refuse(f, s, target.host.to_string(), by.header()),
    };
    f.insert("matched_rule".into(), rule.into());
    let mut slot = match shared.open_tunnel(&peer) {
        Ok(slot) => slot,
        Err(why) => return refuse(f, s, target.host.to_string(), why),
    };
    let up = match crate::dial::dial(&shared, &target).await {
        Ok(d) => d,
        Err((e, resolved)) => {
            f.insert("resolved".into(), crate::dial::ips(&resolved));
            return refuse(f, s, target.host.to_string(), e.response().1);
        }
    };
    f.insert("dialed".into(), up.dialed.to_string().into());
    shared.metrics.active_tunnels.fetch_add(1, Ordering::Relaxed);
    let relayed = crate::checked::relay(&shared, &target, &s, &up.stream, first, slot.pending()).await;
    shared.metrics.active_tunnels.fetch_sub(1, Ordering::Relaxed);
    let (allow, reason, moved) = match relayed {
        Ok(m) => (true, "allowed", m),
        Err(Gated::Refused(reason)) => {
            shared.note_refused(&target.host.to_string(), target.port, reason);
            (false, reason, Default::default())
        }
        Err(Gated::Io(_)) => (true, "allowed", Default::default()),
    };
    shared.metrics.request("transparent", if allow { "allow" } else { "deny" }, reason);
    shared.metrics.bytes_up.fetch_add(moved.up, Ordering::Relaxed);
    shared.metrics.bytes_down.fetch_add(moved.down, Ordering::Relaxed);
    f.insert("allow".into(), allow.into());
    f.insert("reason".into(), reason.into());
    f.insert("bytes_up".into(), moved.up.into());
    f.insert("bytes_down".into(), moved.down.into());
    f.insert("duration_ms".into(), crate::dial::ms(start.elapsed()));
    shared.log.event("decision", f);
}

fn synthetic_ip(ip: IpAddr) -> bool {
    matches!(ip, IpAddr::V4(a) if synthetic::is_synthetic(a))
}

/// The target a destination address stands for: the name a synthetic address was handed
/// out for (one never handed out is refused), or the address itself.
fn named_target(shared: &Shared, dest: SocketAddr) -> Result<Target, &'static str> {
    let host = match dest.ip() {
        IpAddr::V4(a) if synthetic::is_synthetic(a) => {
            CanonicalHost::Name(shared.names.name_of(a).ok_or("unknown-synthetic-address")?)
        }
        IpAddr::V4(a) => CanonicalHost::Ipv4(a),
        IpAddr::V6(a) => CanonicalHost::Ipv6(a),
    };
    Ok(Target { host, port: dest.port() })
}

/// Reads the client's first bytes until they show a name (TLS SNI, HTTP Host) or cannot.
async fn read_first_flight<S: ClientStream>(s: &mut S, shared: &Shared) -> Option<(Vec<u8>, Option<String>)> {
    let mut buf = Vec::new();
    let deadline = tokio::time::Instant::now() + shared.limits.header_timeout;
    loop {
        let mut chunk = [0u8; 4096];
        let n = tokio::time::timeout_at(deadline, s.read(&mut chunk)).await.ok()?.ok()?;
        if n == 0 {
            return None;
        }
        buf.extend_from_slice(&chunk[..n]);
        match first_flight::classify(&buf) {
            Seen::NeedMore if buf.len() < first_flight::MAX_HEAD => continue,
            Seen::Tls(h) => return Some((buf, h.server_name)),
            Seen::Http { names, .. } => return Some((buf, names.last().cloned())),
            _ => return None,
        }
    }
}

/// Closes with a reset, as a refused connection looks to a client.
fn reset<S: ClientStream>(s: S) {
    let fd = s.as_raw_fd();
    let linger = libc::linger { l_onoff: 1, l_linger: 0 };
    // SAFETY: setsockopt on a socket we own, with a live linger struct; the close follows.
    unsafe {
        libc::setsockopt(
            fd,
            libc::SOL_SOCKET,
            libc::SO_LINGER,
            (&linger as *const libc::linger).cast(),
            std::mem::size_of::<libc::linger>() as libc::socklen_t,
        );
    }
    drop(s);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shared(allow: &[&str]) -> Shared {
        let s: settings_schema::Settings = serde_json::from_value(serde_json::json!({
            "network": {"allowedDomains": allow, "deniedDomains": []},
            "filesystem": {"denyRead": [], "allowWrite": [], "denyWrite": []}
        }))
        .unwrap();
        let policy = crate::Policy::from_settings(&s).unwrap();
        let resolver = crate::resolve::Resolver::new(std::time::Duration::from_secs(1));
        Shared::build(policy, None, resolver, crate::Limits::default(), crate::log::Log::off())
    }

    fn ask(shared: &Shared, name: &str) -> Answer {
        answer(shared, &dns::Question { name: name.into(), qtype: dns::TYPE_A })
    }

    #[test]
    fn refused_names_are_reported_except_search_list_attempts() {
        let mut s = shared(&["allowed.test"]);
        s.quiet_suffixes = vec!["default.svc.cluster.local".into(), "example.com".into()];
        assert!(matches!(ask(&s, "allowed.test"), Answer::A(_)));
        for name in [
            "allowed.test.default.svc.cluster.local",
            "evil.test.example.com",
            "example.com",
            "notexample.com",
            "evil.test",
        ] {
            assert_eq!(ask(&s, name), Answer::NxDomain, "{name}");
        }
        let named: Vec<String> = s.refused().into_iter().map(|r| r.host).collect();
        // a search-list expansion is quiet; the search domain itself, a name that only ends
        // in the same letters, and a plain refused name are reported
        assert_eq!(named, ["example.com", "notexample.com", "evil.test"]);
    }
}

//! SOCKS5 CONNECT (RFC 1928) with username/password auth (RFC 1929) carrying the same
//! per-run token as the HTTP side. No BIND, no UDP ASSOCIATE.

use std::net::{Ipv4Addr, Ipv6Addr};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Instant;

use serde_json::{Map, Value};
use settings_schema::CanonicalHost;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::dial;
use crate::policy::Verdict;
use crate::shared::{ClientStream, Shared};
use crate::target::Target;

fn reply(code: u8) -> [u8; 10] {
    [5, code, 0, 1, 0, 0, 0, 0, 0, 0]
}

pub async fn handle<S: ClientStream>(mut s: S, peer: String, shared: Arc<Shared>) {
    let start = Instant::now();
    let head = tokio::time::timeout(shared.limits.header_timeout, handshake(&mut s, &shared)).await;
    let t = match head {
        Ok(Ok(t)) => t,
        Ok(Err(code)) => {
            if let Some(code) = code {
                let _ = s.write_all(&reply(code)).await;
            }
            return;
        }
        Err(_) => return,
    };
    let mut f = Map::new();
    f.insert("kind".into(), "socks".into());
    f.insert("conn".into(), shared.next_id().into());
    f.insert("client".into(), peer.clone().into());
    f.insert("host".into(), t.host.to_string().into());
    f.insert("port".into(), t.port.into());
    let done = |mut f: Map<String, Value>, allow: bool, code: u8, reason: &'static str| {
        f.insert("allow".into(), allow.into());
        f.insert("socks_reply".into(), code.into());
        f.insert("reason".into(), reason.into());
        f.insert("duration_ms".into(), dial::ms(start.elapsed()));
        shared.metrics.request("socks", if allow { "allow" } else { "deny" }, reason);
        if code == 0x02 {
            shared.note_refused(&t.host.to_string(), t.port, reason);
        }
        shared.log.event("decision", f);
    };
    let verdict = shared.policy.load().decide(&t);
    match verdict {
        Verdict::Deny { by, rule, .. } => {
            f.insert("matched_rule".into(), rule.into());
            let _ = s.write_all(&reply(0x02)).await;
            done(f, false, 0x02, by.header());
            return;
        }
        Verdict::Allow { rule } => {
            f.insert("matched_rule".into(), rule.into());
        }
    }
    let mut slot = match shared.open_tunnel(&peer) {
        Ok(slot) => slot,
        Err(why) => {
            let _ = s.write_all(&reply(0x01)).await;
            done(f, false, 0x01, why);
            return;
        }
    };
    let up = match dial::dial(&shared, &t).await {
        Ok(d) => d,
        Err((e, resolved)) => {
            f.insert("resolved".into(), dial::ips(&resolved));
            let code = e.socks_reply();
            let _ = s.write_all(&reply(code)).await;
            done(f, false, code, e.response().1);
            return;
        }
    };
    f.insert("resolved".into(), dial::ips(&up.resolved));
    f.insert("dialed".into(), up.dialed.to_string().into());
    if s.write_all(&reply(0)).await.is_err() {
        return;
    }
    shared.metrics.active_tunnels.fetch_add(1, Ordering::Relaxed);
    let relayed = crate::checked::relay(&shared, &t, &s, &up.stream, Vec::new(), slot.pending()).await;
    shared.metrics.active_tunnels.fetch_sub(1, Ordering::Relaxed);
    let moved = match relayed {
        Ok(m) => m,
        Err(crate::tunnel::Gated::Refused(reason)) => {
            shared.note_refused(&t.host.to_string(), t.port, reason);
            done(f, false, 0, reason);
            return;
        }
        Err(crate::tunnel::Gated::Io(_)) => Default::default(),
    };
    shared.metrics.bytes_up.fetch_add(moved.up, Ordering::Relaxed);
    shared.metrics.bytes_down.fetch_add(moved.down, Ordering::Relaxed);
    f.insert("bytes_up".into(), moved.up.into());
    f.insert("bytes_down".into(), moved.down.into());
    done(f, true, 0, "allowed");
}

/// Greeting, authentication and the CONNECT request. `Err(Some(code))` sends a reply.
async fn handshake<S: ClientStream>(s: &mut S, shared: &Shared) -> Result<Target, Option<u8>> {
    let mut hdr = [0u8; 2];
    s.read_exact(&mut hdr).await.map_err(|_| None)?;
    let mut methods = vec![0u8; hdr[1] as usize];
    s.read_exact(&mut methods).await.map_err(|_| None)?;
    let want = if shared.token.is_some() { 2 } else { 0 };
    if !methods.contains(&want) {
        let _ = s.write_all(&[5, 0xff]).await;
        return Err(None);
    }
    s.write_all(&[5, want]).await.map_err(|_| None)?;
    if want == 2 {
        let mut v = [0u8; 2];
        s.read_exact(&mut v).await.map_err(|_| None)?;
        let mut user = vec![0u8; v[1] as usize];
        s.read_exact(&mut user).await.map_err(|_| None)?;
        let mut plen = [0u8; 1];
        s.read_exact(&mut plen).await.map_err(|_| None)?;
        let mut pass = vec![0u8; plen[0] as usize];
        s.read_exact(&mut pass).await.map_err(|_| None)?;
        let ok = v[0] == 1 && shared.token_ok(&pass);
        s.write_all(&[1, if ok { 0 } else { 1 }]).await.map_err(|_| None)?;
        if !ok {
            return Err(None);
        }
    }
    let mut req = [0u8; 4];
    s.read_exact(&mut req).await.map_err(|_| None)?;
    if req[0] != 5 {
        return Err(None);
    }
    if req[1] != 1 {
        return Err(Some(0x07)); // command not supported
    }
    let host = match req[3] {
        1 => {
            let mut a = [0u8; 4];
            s.read_exact(&mut a).await.map_err(|_| None)?;
            CanonicalHost::Ipv4(Ipv4Addr::from(a))
        }
        4 => {
            let mut a = [0u8; 16];
            s.read_exact(&mut a).await.map_err(|_| None)?;
            let a = Ipv6Addr::from(a);
            a.to_ipv4_mapped().map_or(CanonicalHost::Ipv6(a), CanonicalHost::Ipv4)
        }
        3 => {
            let mut len = [0u8; 1];
            s.read_exact(&mut len).await.map_err(|_| None)?;
            let mut name = vec![0u8; len[0] as usize];
            s.read_exact(&mut name).await.map_err(|_| None)?;
            let name = std::str::from_utf8(&name).map_err(|_| Some(0x01))?;
            if name.bytes().any(|b| b <= b' ' || b >= 0x7f || b == b'%' || b == b':' || b == b'@') {
                return Err(Some(0x01));
            }
            CanonicalHost::parse(name).map_err(|_| Some(0x01))?
        }
        _ => return Err(Some(0x08)), // address type not supported
    };
    let mut port = [0u8; 2];
    s.read_exact(&mut port).await.map_err(|_| None)?;
    let port = u16::from_be_bytes(port);
    if port == 0 {
        return Err(Some(0x01));
    }
    Ok(Target { host, port })
}

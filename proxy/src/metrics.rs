//! Prometheus text metrics, served on a separate loopback listener when asked for.

use std::collections::BTreeMap;
use std::fmt::Write;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::sync::Mutex;

#[derive(Default)]
pub struct Metrics {
    requests: Mutex<BTreeMap<(&'static str, &'static str, &'static str), u64>>,
    pub active_tunnels: AtomicI64,
    pub active_connections: AtomicI64,
    pub bytes_up: AtomicU64,
    pub bytes_down: AtomicU64,
    pub reloads_ok: AtomicU64,
    pub reloads_error: AtomicU64,
    pub limit_rejections: AtomicU64,
}

impl Metrics {
    /// kind: connect|http|socks; decision: allow|deny|error; reason: a fixed vocabulary.
    pub fn request(&self, kind: &'static str, decision: &'static str, reason: &'static str) {
        if let Ok(mut m) = self.requests.lock() {
            *m.entry((kind, decision, reason)).or_default() += 1;
        }
    }

    pub fn render(&self) -> String {
        let mut o = String::new();
        let _ = writeln!(o, "# TYPE proxy_requests_total counter");
        if let Ok(m) = self.requests.lock() {
            for ((k, d, r), n) in m.iter() {
                let _ = writeln!(o, "proxy_requests_total{{kind=\"{k}\",decision=\"{d}\",reason=\"{r}\"}} {n}");
            }
        }
        let g = |o: &mut String, name: &str, kind: &str, v: i128| {
            let _ = writeln!(o, "# TYPE {name} {kind}\n{name} {v}");
        };
        g(&mut o, "proxy_active_tunnels", "gauge", self.active_tunnels.load(Ordering::Relaxed).into());
        g(&mut o, "proxy_active_connections", "gauge", self.active_connections.load(Ordering::Relaxed).into());
        let _ = writeln!(o, "# TYPE proxy_tunnel_bytes_total counter");
        let _ = writeln!(o, "proxy_tunnel_bytes_total{{direction=\"up\"}} {}", self.bytes_up.load(Ordering::Relaxed));
        let _ =
            writeln!(o, "proxy_tunnel_bytes_total{{direction=\"down\"}} {}", self.bytes_down.load(Ordering::Relaxed));
        let _ = writeln!(o, "# TYPE proxy_config_reloads_total counter");
        let _ = writeln!(o, "proxy_config_reloads_total{{result=\"ok\"}} {}", self.reloads_ok.load(Ordering::Relaxed));
        let _ = writeln!(
            o,
            "proxy_config_reloads_total{{result=\"error\"}} {}",
            self.reloads_error.load(Ordering::Relaxed)
        );
        g(&mut o, "proxy_limit_rejections_total", "counter", self.limit_rejections.load(Ordering::Relaxed).into());
        let _ = writeln!(
            o,
            "# TYPE proxy_build_info gauge\nproxy_build_info{{version=\"{}\"}} 1",
            env!("CARGO_PKG_VERSION")
        );
        o
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_counters() {
        let m = Metrics::default();
        m.request("connect", "deny", "blocked-by-allowlist");
        m.request("connect", "deny", "blocked-by-allowlist");
        m.active_tunnels.store(3, Ordering::Relaxed);
        let t = m.render();
        assert!(
            t.contains("proxy_requests_total{kind=\"connect\",decision=\"deny\",reason=\"blocked-by-allowlist\"} 2"),
            "{t}"
        );
        assert!(t.contains("proxy_active_tunnels 3"));
    }
}

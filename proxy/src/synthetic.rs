//! Synthetic addresses for transparent mode: srt's DNS answers an allowed name with an
//! address of its own from 198.18.0.0/15 (RFC 2544's benchmarking range, never routed on
//! the internet), so a direct connection to that address says exactly which name the
//! command meant. Each address is handed out once per run and never reused, so an
//! address cannot come to mean another name; whether the name is still allowed is decided
//! again at every connection.

use std::collections::HashMap;
use std::net::Ipv4Addr;
use std::sync::Mutex;

/// First address of the pool (198.18.0.0 itself and .1 are skipped: some tools treat the
/// network address specially).
const BASE: u32 = u32::from_be_bytes([198, 18, 0, 2]);
/// 198.18.0.0/15 holds 2^17 addresses.
const SIZE: u32 = (1 << 17) - 2;

#[derive(Default)]
pub struct Names {
    inner: Mutex<Table>,
}

#[derive(Default)]
struct Table {
    by_name: HashMap<String, Ipv4Addr>,
    by_addr: HashMap<Ipv4Addr, String>,
    next: u32,
}

/// Whether `a` is in the synthetic range (a connection there is judged by its name, or
/// refused when the address was never handed out).
pub fn is_synthetic(a: Ipv4Addr) -> bool {
    let [x, y, ..] = a.octets();
    x == 198 && (y & 0xfe) == 18
}

impl Names {
    /// The address for `name` (lowercase, no trailing dot), the same one every time it is
    /// asked; `None` once the pool is spent.
    pub fn assign(&self, name: &str) -> Option<Ipv4Addr> {
        let mut t = self.inner.lock().ok()?;
        if let Some(a) = t.by_name.get(name) {
            return Some(*a);
        }
        if t.next >= SIZE {
            return None;
        }
        let a = Ipv4Addr::from(BASE + t.next);
        t.next += 1;
        t.by_name.insert(name.to_string(), a);
        t.by_addr.insert(a, name.to_string());
        Some(a)
    }

    /// The name an address was handed out for.
    pub fn name_of(&self, a: Ipv4Addr) -> Option<String> {
        self.inner.lock().ok()?.by_addr.get(&a).cloned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_address_per_name_never_reused() {
        let n = Names::default();
        let a = n.assign("a.test").unwrap();
        let b = n.assign("b.test").unwrap();
        assert_ne!(a, b);
        assert_eq!(n.assign("a.test"), Some(a));
        assert_eq!(n.name_of(a).as_deref(), Some("a.test"));
        assert_eq!(n.name_of(Ipv4Addr::new(198, 18, 9, 9)), None, "never handed out");
        assert!(is_synthetic(a) && is_synthetic(Ipv4Addr::new(198, 19, 255, 255)));
        assert!(!is_synthetic(Ipv4Addr::new(198, 20, 0, 1)) && !is_synthetic(Ipv4Addr::new(10, 18, 0, 1)));
    }

    #[test]
    fn the_pool_ends_without_wrapping_around() {
        let n = Names::default();
        n.inner.lock().unwrap().next = SIZE - 1;
        let last = n.assign("last.test").unwrap();
        assert_eq!(last, Ipv4Addr::new(198, 19, 255, 255));
        assert_eq!(n.assign("more.test"), None);
        assert_eq!(n.assign("last.test"), Some(last));
    }
}

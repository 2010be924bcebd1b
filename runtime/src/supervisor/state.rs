//! What the supervisor keeps across calls that the handlers share with its core: which
//! directories Landlock lets the kernel write in, the command's socket options and the
//! listeners srt made for it, and whether a transparent connect met a refused
//! `pidfd_getfd`. Below every handler, so that the core and the handlers both import it
//! and neither imports the other.

use std::collections::{HashMap, HashSet, VecDeque};
use std::net::SocketAddr;
use std::os::fd::OwnedFd;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

use crate::net::shown_addr::Asked;

/// What the Landlock rules above a directory let the kernel do there without the
/// supervisor (ordered: each grants what the ones before it do).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Native {
    /// No write rule: the supervisor judges and performs every change.
    No,
    /// A write rule on a directory that existed at launch: files are written, removed and
    /// moved out natively, but made or moved in only by the supervisor.
    Write,
    /// Below a directory srt made for the run (the pool, TMPDIR): files are made natively.
    Files,
}

/// (level, name, value) of one setsockopt call.
pub(super) type SockOpt = (i32, i32, Vec<u8>);

/// Listeners remembered at most before the closed ones are forgotten.
const MAX_LISTENERS: usize = 16_384;

#[derive(Default)]
pub(super) struct Listeners {
    /// Every socket srt made listen for the command: cookie -> (inode, where it listens).
    pub(super) own: HashMap<u64, (u64, SocketAddr)>,
    /// Replacement path: (inode, port, our copy) of sockets bound but not yet listening.
    pub(super) pending: VecDeque<(u64, u16, OwnedFd)>,
}

impl Listeners {
    pub(super) fn is_own(&self, cookie: u64) -> bool {
        self.own.contains_key(&cookie)
    }

    pub(super) fn add(&mut self, cookie: u64, inode: u64, at: SocketAddr) {
        if self.own.len() >= MAX_LISTENERS {
            // forget those no longer listening where they did (cookies are never reused)
            self.own.retain(|c, (_, a)| {
                crate::net::sock_diag::tcp_listener(*a).ok().flatten().is_some_and(|l| l.cookie == *c)
            });
        }
        self.own.insert(cookie, (inode, at));
    }
}

/// Sockets remembered at most by what the command asked of them.
const MAX_ASKED: usize = 16_384;

/// What srt knows of one of the command's sockets: what the command asked, and the real
/// addresses of its two ends as the kernel gave them when srt placed or connected it (a
/// socket's addresses do not change once bound or connected, but for a disconnect, which
/// forgets it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Known {
    pub(super) asked: Asked,
    pub(super) own: Option<SocketAddr>,
    pub(super) peer: Option<SocketAddr>,
}

/// Landlock mode: what the command asked of its sockets (by inode), so that `getsockname`
/// and `getpeername` show it that ([`crate::net::shown_addr`]), answered from here without
/// asking the kernel about the socket again.
#[derive(Default)]
pub(super) struct AskedTable {
    by_ino: HashMap<u64, Known>,
    order: VecDeque<u64>,
}

impl AskedTable {
    /// A disconnect (rare): its place in the order goes too, so that a later note of the
    /// same inode is not evicted early by the stale one.
    pub(super) fn forget(&mut self, ino: u64) {
        if self.by_ino.remove(&ino).is_some() {
            self.order.retain(|&i| i != ino);
        }
    }

    pub(super) fn note(&mut self, ino: u64, known: Known) {
        if self.by_ino.insert(ino, known).is_none() {
            self.order.push_back(ino);
        }
        // the oldest go first: sockets that old are mostly closed (an inode is not reused
        // until the kernel's counter wraps)
        while self.order.len() > MAX_ASKED {
            if let Some(old) = self.order.pop_front() {
                self.by_ino.remove(&old);
            }
        }
    }

    pub(super) fn get(&self, ino: u64) -> Option<Known> {
        self.by_ino.get(&ino).copied()
    }
}

/// How the command's `/dev/shm` is kept apart.
#[derive(Default)]
pub enum SharedMemory {
    /// No filesystem rules (or no `/dev/shm`): nothing to do.
    #[default]
    Untouched,
    /// Namespace mode's own tmpfs: the kernel judges.
    Private,
    /// Landlock mode: the host's `/dev/shm` (device, inode), and what the run made there.
    Host { dir: (u64, u64), own: Mutex<HashSet<(u64, u64)>> },
}

impl SharedMemory {
    /// Landlock mode's: the host's `/dev/shm` as it is now, if it is a directory.
    pub fn host() -> SharedMemory {
        use std::os::unix::fs::MetadataExt;
        match std::fs::symlink_metadata(crate::fs::shm::DIR) {
            Ok(m) if m.is_dir() => SharedMemory::Host { dir: (m.dev(), m.ino()), own: Mutex::default() },
            _ => SharedMemory::Untouched,
        }
    }
}

/// Set when namespace mode refused a transparent connect because this environment refuses
/// `pidfd_getfd`; one srt run per process, so a process-wide flag is the run's.
pub(super) static REFUSED_WITHOUT_GETFD: AtomicBool = AtomicBool::new(false);

/// Whether a transparent connect was refused because `pidfd_getfd` is refused here (srt
/// says so at exit: the command only saw "network unreachable").
pub fn transparent_refused_without_getfd() -> bool {
    REFUSED_WITHOUT_GETFD.load(Ordering::Relaxed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_asked_table_forgets_the_oldest_sockets_first() {
        let mut t = AskedTable::default();
        let a = Known { asked: Asked::Bound("127.0.0.1:0".parse().unwrap()), own: None, peer: None };
        for ino in 0..(MAX_ASKED as u64 + 10) {
            t.note(ino, a);
        }
        assert_eq!(t.get(0), None);
        assert_eq!(t.get(9), None);
        assert_eq!(t.get(10), Some(a));
        t.note(10, Known { asked: Asked::Dialed("127.0.0.1:1".parse().unwrap()), ..a });
        assert_eq!(t.order.len(), MAX_ASKED, "a socket noted again is not counted twice");
        t.forget(10);
        assert_eq!(t.get(10), None);
        assert_eq!(t.order.len(), MAX_ASKED - 1, "a forgotten socket leaves the order too");
    }
}

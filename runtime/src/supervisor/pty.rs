//! Landlock mode's pseudo-terminals. `/dev/pts` is the host's: other sessions' terminals
//! live there and could be read (keystrokes) or written (escape sequences). Landlock grants
//! the command only the terminals on its own stdin/stdout/stderr, and new ptys it allocates
//! are opened here: the supervisor performs the `/dev/ptmx` open, keeps a copy of the
//! master, and opens the peer (`TIOCGPTPEER`, or `/dev/pts/N` by name) only for ptys it
//! allocated this way.

use std::os::fd::{AsFd, AsRawFd, FromRawFd, OwnedFd};

use super::resolve::Target;
use super::sys;
use super::{Call, Outcome};

/// Ptys remembered at most; beyond this the oldest master copy is closed (its peer can
/// then no longer be opened by name, which is all that is lost).
const MAX_PTYS: usize = 256;

impl Call<'_> {
    pub(super) fn open_pty(&self, t: &Target, flags: i32) -> Outcome {
        let path = t.path.as_os_str().as_encoded_bytes();
        if path == b"/dev/ptmx" || path == b"/dev/pts/ptmx" {
            return self.open_ptmx(t, flags);
        }
        let index = path.strip_prefix(b"/dev/pts/").and_then(|n| std::str::from_utf8(n).ok()?.parse::<u32>().ok());
        let ours = index.is_some_and(|i| self.sup.ptys.lock().is_ok_and(|p| p.iter().any(|(j, _)| *j == i)));
        if !ours {
            // the kernel judges: Landlock lets the command reach only its own terminals
            return Outcome::Continue;
        }
        let how = (flags & !(libc::O_CREAT | libc::O_EXCL | libc::O_TRUNC)) | libc::O_NOFOLLOW;
        match sys::open_entry(t.parent.as_fd(), &t.name, how, 0) {
            Ok(fd) => {
                self.note(&t.path, "a pty the command allocated");
                Outcome::Fd { fd, cloexec: flags & libc::O_CLOEXEC != 0 }
            }
            Err(e) => Outcome::Fail(e),
        }
    }

    fn open_ptmx(&self, t: &Target, flags: i32) -> Outcome {
        let how = (flags & !(libc::O_CREAT | libc::O_EXCL | libc::O_TRUNC)) | libc::O_NOFOLLOW;
        let master = match sys::open_entry(t.parent.as_fd(), &t.name, how, 0) {
            Ok(m) => m,
            Err(e) => return Outcome::Fail(e),
        };
        let mut index: libc::c_uint = 0;
        // SAFETY: TIOCGPTN writes one unsigned int.
        if unsafe { libc::ioctl(master.as_raw_fd(), libc::TIOCGPTN, &mut index) } < 0 {
            return Outcome::Fail(sys::last_errno());
        }
        // SAFETY: duplicating a descriptor we own; the copy is owned below.
        let copy = unsafe { libc::fcntl(master.as_raw_fd(), libc::F_DUPFD_CLOEXEC, 3) };
        if copy < 0 {
            return Outcome::Fail(sys::last_errno());
        }
        // SAFETY: a fresh descriptor nobody else owns.
        let copy = unsafe { OwnedFd::from_raw_fd(copy) };
        if let Ok(mut p) = self.sup.ptys.lock() {
            if p.len() >= MAX_PTYS {
                p.remove(0);
            }
            p.push((index, copy));
        }
        self.note(&t.path, "pty allocated");
        Outcome::Fd { fd: master, cloexec: flags & libc::O_CLOEXEC != 0 }
    }

    /// `ioctl(master, TIOCGPTPEER, flags)`: answered from our copy of the master when the
    /// command's descriptor is the master of a pty it allocated through us.
    pub(super) fn pty_peer(&self, fd: i32, flags: i32) -> Outcome {
        let info = std::fs::read_to_string(format!("/proc/{}/fdinfo/{fd}", self.req.pid)).unwrap_or_default();
        if !self.valid() {
            return Outcome::Gone;
        }
        let index = info.lines().find_map(|l| l.strip_prefix("tty-index:")).and_then(|v| v.trim().parse::<u32>().ok());
        let Some(index) = index else {
            // not a pty master: the kernel answers (ENOTTY), under Landlock
            return Outcome::Continue;
        };
        let Ok(ptys) = self.sup.ptys.lock() else { return Outcome::Fail(libc::EIO) };
        let Some((_, master)) = ptys.iter().find(|(i, _)| *i == index) else {
            return Outcome::Continue;
        };
        let allowed = libc::O_ACCMODE | libc::O_NOCTTY | libc::O_NONBLOCK | libc::O_CLOEXEC;
        // SAFETY: TIOCGPTPEER takes open flags by value and returns a new descriptor.
        let peer = unsafe { libc::ioctl(master.as_raw_fd(), TIOCGPTPEER as _, (flags & allowed) | libc::O_CLOEXEC) };
        if peer < 0 {
            return Outcome::Fail(sys::last_errno());
        }
        // SAFETY: a fresh descriptor nobody else owns.
        let peer = unsafe { OwnedFd::from_raw_fd(peer) };
        Outcome::Fd { fd: peer, cloexec: flags & libc::O_CLOEXEC != 0 }
    }
}

const TIOCGPTPEER: libc::c_ulong = crate::seccomp::TIOCGPTPEER as libc::c_ulong;
